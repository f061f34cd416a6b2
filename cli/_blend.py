"""Untrusted .blend files: opened and appended with Python disabled, and the Python they hold named.

A .blend can carry Python that Blender runs when scripts are allowed: registered Text blocks
(``text.use_module``, run on load) and driver expressions that need the Python interpreter
(``driver.type == 'SCRIPTED'`` and not ``driver.is_simple_expression``, run on every evaluation).
The scripts turn Blender's *Auto Run Python Scripts* off for their run (whatever the user's
preferences say), open files with ``use_scripts=False`` and append from them with auto-run off,
so none of it runs; what is there is printed as a warning and noted in the JSON report. Output
.blend files get their registered Text blocks unregistered (``use_module = False``: the text is
kept, it no longer runs on load) unless ``--keep-scripts``; Python drivers are kept and named.
"""

from __future__ import annotations

import sys
from pathlib import Path


def disable_scripts() -> None:
    """Auto Run Python Scripts off for this run: Blender then neither runs registered Text blocks of
    the files it opens nor evaluates Python driver expressions (also for appended data)."""
    import bpy

    bpy.context.preferences.filepaths.use_scripts_auto_execute = False


def open_untrusted(path: str | Path) -> None:
    """Open a .blend with its Python disabled (no UI, no scripts)."""
    import bpy

    disable_scripts()
    result = bpy.ops.wm.open_mainfile(filepath=str(Path(path).resolve()), load_ui=False, use_scripts=False)
    if "FINISHED" not in result:
        raise OSError(f"{path}: Blender could not open the file")


def _ids():
    import bpy

    for name in dir(bpy.data):
        collection = getattr(bpy.data, name, None)
        if not isinstance(collection, bpy.types.bpy_prop_collection):
            continue
        for item in collection:
            if not isinstance(item, bpy.types.ID):
                break
            yield item
            tree = getattr(item, "node_tree", None)  # embedded node trees (materials, worlds…)
            if isinstance(tree, bpy.types.ID):
                yield tree


def python_in_file() -> list[str]:
    """What of Python the open file holds: registered Text blocks and Python driver expressions,
    one readable line each (nothing of it is run here)."""
    import bpy

    found = [f"registered Text block '{t.name}'" for t in bpy.data.texts if t.use_module]
    seen = set()
    for item in _ids():
        anim = getattr(item, "animation_data", None)
        if anim is None or item.as_pointer() in seen:
            continue
        seen.add(item.as_pointer())
        for curve in anim.drivers:
            driver = curve.driver
            if driver.type == "SCRIPTED" and not driver.is_simple_expression:
                kind = type(item).__name__
                found.append(
                    f"Python driver on {kind} '{item.name}' {curve.data_path}[{curve.array_index}]: {driver.expression}"
                )
    return found


def warn(found: list[str], where: str) -> None:
    """One warning line on stderr per piece of Python found in ``where`` (not executed)."""
    for item in found:
        print(f"warning: {where}: not executed (Python from .blend files is disabled): {item}", file=sys.stderr)


def unregister_texts() -> list[str]:
    """Unregister the open file's registered Text blocks (before saving an output); their names."""
    import bpy

    names = []
    for text in bpy.data.texts:
        if text.use_module:
            text.use_module = False
            names.append(text.name)
    return names


def import_fbx(path: str | Path, name: str | None = None, animated: bool = True, option: str = "--armature"):
    """Import an .fbx with Blender's FBX importer (bundled with Blender) into the open scene and
    return its armature object: ``name``, else the only (animated, when ``animated``) one. Raises
    ValueError naming the file when the importer fails or finds no such armature (``option``: the
    script's argument that names one)."""
    import addon_utils
    import bpy

    path = Path(path)
    addon_utils.enable("io_scene_fbx", default_set=True)
    before = set(bpy.data.objects)
    try:
        result = bpy.ops.import_scene.fbx(filepath=str(path.resolve()))
    except RuntimeError as exc:  # the importer reports a file it cannot read as an operator error
        raise ValueError(f"{path}: Blender's FBX importer could not read it: {' '.join(str(exc).split())}") from None
    if "FINISHED" not in result:
        raise ValueError(f"{path}: Blender's FBX importer could not read it")
    found = [o for o in bpy.data.objects if o not in before and o.type == "ARMATURE"]
    if name:
        found = [o for o in found if o.name == name]
        if not found:
            raise ValueError(f"no armature called '{name}' in {path}")
    elif animated:
        found = [o for o in found if o.animation_data is not None and o.animation_data.action is not None]
    if len(found) != 1:
        what = "animated armature" if animated else "armature"
        raise ValueError(f"{path}: {len(found)} {what}s found; name one with {option}")
    bpy.context.view_layer.objects.active = found[0]
    return found[0]
