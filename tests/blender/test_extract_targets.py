"""Every target with every method, met on what Blender plays back (issue 12, item 3).

Max Error is checked on the world-space heads and leaf tails of the pose bones as Blender evaluates
them frame by frame, Max Angle on the pose bones' rotations as mathutils reads them
(``matrix_basis`` quaternions, ``rotation_difference``): neither goes through the core's measure.
Blender plays float32 curves, so the bounds hold to a relative 1e-4.
"""

import json
import math
import subprocess
import sys
from importlib import import_module

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.conftest import ROOT

animdata = import_module(PACKAGE + ".addon.common.animdata")
armature = import_module(PACKAGE + ".addon.common.armature")
operators = import_module(PACKAGE + ".addon.keyframes.operators")
synthetic = import_module(PACKAGE + ".core.synthetic")

SLACK = 1.0 + 1e-4  # float32 playback


def make_rig(mode="QUATERNION", scale=1.0):
    motion = synthetic.demo_clip().frames(slice(None, None, 2))  # 195 frames: walk, turn, jump
    obj = armature.create_animated_armature(motion, "Mocap", bpy.context.scene.collection, rotation_mode=mode)
    obj.scale = (scale, scale, scale)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.context.view_layer.update()
    return obj, motion


def played(obj):
    """World-space heads and leaf tails (F, P, 3), and the bones' pose rotations (F, B) as mathutils
    quaternions, frame by frame as Blender plays the active action."""
    scene = bpy.context.scene
    start, end = (int(round(f)) for f in obj.animation_data.action.frame_range)
    leaves = [i for i, pb in enumerate(obj.pose.bones) if not pb.children]
    world = np.array(obj.matrix_world)
    points, rotations = [], []
    for frame in range(start, end + 1):
        scene.frame_set(frame)
        heads = np.array([pb.head for pb in obj.pose.bones])
        tails = np.array([obj.pose.bones[i].tail for i in leaves])
        local = np.concatenate((heads, tails))
        points.append(local @ world[:3, :3].T + world[:3, 3])
        rotations.append([pb.matrix_basis.to_quaternion() for pb in obj.pose.bones])
    return np.array(points), rotations


def worst_angle(before, after) -> float:
    """Largest angle in degrees between the bones' rotations, over frames and bones (mathutils)."""
    return max(math.degrees(a.rotation_difference(b).angle) for fa, fb in zip(before, after) for a, b in zip(fa, fb))


@pytest.mark.parametrize("method", ["HYBRID", "SIMPLIFY", "UNIFORM"])
def test_max_error_holds_in_the_scene_on_an_armature_scaled_a_hundredth(method):
    obj, _ = make_rig(scale=0.01)  # a centimetre FBX import: the armature in cm, the object scaled 0.01
    before, _ = played(obj)
    bound = 0.0004  # Blender units: 4 cm of the capture's metres, scaled 0.01
    assert bpy.ops.mocap.extract_keyframes(method=method, target="MAX_ERROR", max_error=bound) == {"FINISHED"}
    after, _ = played(obj)
    worst = np.linalg.norm(after - before, axis=-1).max()
    assert 0.3 * bound < worst <= bound * SLACK  # met, and not by keeping everything
    curves = animdata.object_channels(obj).fcurves
    assert sum(len(fc.keyframe_points) for fc in curves) < 0.5 * len(curves) * len(before)
    report = bpy.context.scene.mocap_workbench.last_report
    assert "met at every frame" in report


def test_max_error_is_read_in_the_scene_unit_scale():
    """Unit Scale 0.01: Blender shows 1 BU as 1 cm; a Max Error of 0.04 BU (shown as 0.4 mm) holds on the
    played positions in Blender units, and the report writes it in the scene's unit."""
    obj, _ = make_rig()
    scene = bpy.context.scene
    scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", 0.01
    before, _ = played(obj)
    assert bpy.ops.mocap.extract_keyframes(method="HYBRID", target="MAX_ERROR", max_error=0.04) == {"FINISHED"}
    after, _ = played(obj)
    assert np.linalg.norm(after - before, axis=-1).max() <= 0.04 * SLACK
    assert "Max Error 0.4 mm met" in scene.mocap_workbench.last_report


@pytest.mark.parametrize(("method", "mode"), [("HYBRID", "QUATERNION"), ("HYBRID", "XYZ"), ("SIMPLIFY", "XYZ"),
                                              ("OPTIMAL", "QUATERNION")])  # fmt: skip
def test_max_angle_holds_on_every_bone_as_mathutils_reads_the_playback(method, mode):
    obj, _ = make_rig(mode)
    _, before = played(obj)
    bound = 2.0
    result = bpy.ops.mocap.extract_keyframes(method=method, target="MAX_ANGLE", max_angle=math.radians(bound))
    assert result == {"FINISHED"}
    _, after = played(obj)
    worst = worst_angle(before, after)
    assert 0.3 * bound < worst <= bound * SLACK
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    assert info["angle_max"] == pytest.approx(worst, rel=1e-3, abs=1e-3)  # the report's figure is the played one
    report = bpy.context.scene.mocap_workbench.last_report
    assert "worst rotation:" in report and "Max Angle 2° met at every frame" in report


def test_max_angle_is_a_degree_property_and_the_hybrid_count_says_per_channel():
    properties = bpy.ops.mocap.extract_keyframes.get_rna_type().properties
    assert properties["max_angle"].subtype == "ANGLE" and properties["max_angle"].unit == "ROTATION"
    assert "MAX_ANGLE" in [item.identifier for item in properties["target"].enum_items]
    assert "on each channel" in properties["count"].description
    assert operators.target_label("HYBRID", "count") == "Keys per Channel"
    assert operators.target_label("UNIFORM", "count") is None
    settings = bpy.context.scene.mocap_workbench
    settings.target, settings.max_angle = "MAX_ANGLE", math.radians(3.0)
    assert operators.target_of(settings) == {"max_angle": pytest.approx(3.0)}
    obj, _ = make_rig()
    assert bpy.ops.mocap.extract_keyframes(method="HYBRID", target="COUNT", count=12) == {"FINISHED"}
    assert "Kept 12 of 195 frames per channel" in settings.last_report


SCRIPT = ROOT / "scripts" / "extract_keyframes.py"


def test_script_max_error_in_scene_units_and_max_angle(tmp_path):
    """The script's --max-error is a length as the scene shows it: with Unit Scale 0.5, 0.0002 (m) is
    0.0004 Blender units, on an armature scaled 0.01 (0.04 of its own units); its default method is the
    hybrid, as --help says; --max-angle is in degrees."""
    obj, _ = make_rig(scale=0.01)
    scene = bpy.context.scene
    scene.unit_settings.system, scene.unit_settings.scale_length = "METRIC", 0.5
    before, rotations = played(obj)
    source = tmp_path / "rig.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source))
    help_text = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True).stdout
    assert "default hybrid" in " ".join(help_text.split())
    runs = {"error": ["--max-error", "0.0002"], "angle": ["--max-angle", "2.5"]}  # 0.0002 m shown = 0.0004 BU
    for name, args in runs.items():
        out = tmp_path / f"{name}.blend"
        proc = subprocess.run([sys.executable, str(SCRIPT), str(source), "-o", str(out), *args],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        report = json.loads(out.with_suffix(".json").read_text())
        assert report["method"] == "hybrid" and report["count_means"] == "keys per channel"
        assert report["params"]["bound_met"]
        bpy.ops.wm.open_mainfile(filepath=str(out))
        obj = bpy.data.objects["Mocap"]
        after, after_rotations = played(obj)
        if name == "error":
            assert report["target"] == {"max_error": 0.0002}
            assert np.linalg.norm(after - before, axis=-1).max() <= 0.0004 * SLACK
        else:
            worst = worst_angle(rotations, after_rotations)
            assert worst <= 2.5 * SLACK
            assert report["error"]["playback"]["angle_max"] == pytest.approx(worst, rel=1e-3, abs=1e-3)


class Recorder:
    """A stand-in layout that records what draw_settings asks it to draw."""

    def __init__(self, calls):
        self.calls, self.active = calls, True

    def row(self):
        return Recorder(self.calls)

    def prop(self, data, name, text=None):
        self.calls.append((name, text))


@pytest.mark.parametrize(("method", "label"), [("HYBRID", "Keys per Channel"), ("OPTIMAL", None)])
def test_the_panel_labels_the_hybrid_count_per_channel(method, label):
    settings = bpy.context.scene.mocap_workbench
    settings.method, settings.target = method, "COUNT"
    calls = []
    operators.draw_settings(Recorder(calls), settings)
    assert ("count", label) in calls
    settings.target = "MAX_ANGLE"
    calls.clear()
    operators.draw_settings(Recorder(calls), settings)
    assert ("max_angle", None) in calls
