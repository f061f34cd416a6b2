"""A hostile .blend for the scripts' tests: an animated armature carrying Python that must never run.

Run as ``python hostile.py OUT.blend MARKER_FOLDER``: it writes OUT.blend holding the procedural walk
on an armature ``Walk`` with
- a registered Text block (``use_module = True``) that writes ``MARKER_FOLDER/text_ran`` when run;
- a Python driver on the armature's custom property ``["evil"]`` whose expression writes
  ``MARKER_FOLDER/driver_ran`` when evaluated (``open(...).write(...)``);
- a second Python driver calling ``mark()``, a function that writes ``MARKER_FOLDER/namespace_ran``,
  registered in ``bpy.app.driver_namespace`` only in this making process;
- a simple-expression driver (``frame * 2``), which needs no Python and is not reported.
The making process itself evaluates the drivers (the markers appear here); the test removes them.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import _package  # noqa: E402
import bpy  # noqa: E402

_package.load()
from mocap_workbench.addon.common.armature import create_animated_armature  # noqa: E402
from mocap_workbench.core import synthetic  # noqa: E402

out, markers = Path(sys.argv[1]), Path(sys.argv[2])
bpy.ops.wm.read_homefile(use_empty=True)
motion = synthetic.walk(int(sys.argv[3]) if len(sys.argv) > 3 else 40)
scene = bpy.context.scene
scene.render.fps, scene.render.fps_base = int(round(motion.fps)), 1.0
scene.frame_start, scene.frame_end = 1, motion.n_frames
bpy.context.view_layer.update()
obj = create_animated_armature(motion, "Walk", scene.collection)
bpy.context.view_layer.objects.active = obj

text = bpy.data.texts.new("evil.py")
text.write(f"open({str(markers / 'text_ran')!r}, 'w').write('ran')\n")
text.use_module = True


def mark():
    open(os.path.join(markers, "namespace_ran"), "w").write("ran")
    return 0.0


bpy.app.driver_namespace["mark"] = mark
for name, expression in (
    ("evil", f"open({str(markers / 'driver_ran')!r}, 'w').write('ran') * 0"),
    ("marked", "mark()"),
    ("simple", "frame * 2"),
):
    obj[name] = 0.0
    driver = obj.driver_add(f'["{name}"]').driver
    driver.type = "SCRIPTED"
    driver.expression = expression
bpy.context.view_layer.update()
scene.frame_set(2)
bpy.ops.wm.save_as_mainfile(filepath=str(out))
print("made", out)
