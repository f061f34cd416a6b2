"""Features that compose: Retarget with Physics and Extract Keyframes, through the operators and the
script, measured on what Blender holds afterwards (the action's record, its keys, the overlay)."""

import json
import subprocess
import sys
from importlib import import_module

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE, ROOT
from tests.blender.test_extract_operator import make_rig
from tests.blender.test_physics_retarget import WALK, have_matplotlib, import_walk
from tests.blender.test_retarget import select_pair
from tests.conftest import shared_file

animdata = import_module(PACKAGE + ".addon.common.animdata")
overlay = import_module(PACKAGE + ".addon.retarget.physics_overlay")
armature = import_module(PACKAGE + ".addon.common.armature")

PHYSICS = {"use_physics": True, "target_mass": 90.0, "target_height": 1.99, "source_mass": 60.0}


def bone_keys(obj, action=None) -> dict:
    """(data path, index) → (frames, values, interpolation) of every bone curve of the action."""
    channels = animdata.object_channels(obj) if action is None else animdata.action_channels(obj, action)
    curves = armature.BoneCurves.of(channels.fcurves, {b.name for b in obj.data.bones})
    out = {}
    for fc in curves.by_channel.values():
        keys = animdata.read_keys(fc)
        modes = {k.interpolation for k in fc.keyframe_points}
        out[(fc.data_path, fc.array_index)] = (keys[:, 0].copy(), keys[:, 1].copy(), modes)
    return out


def test_retarget_with_physics_and_extraction_keeps_every_record():
    source, target = import_walk(), import_walk(1.4)
    select_pair(source, target)
    settings = bpy.context.scene.mocap_workbench
    settings.target, settings.count, settings.interpolation, settings.grid = "COUNT", 30, "LINEAR", 3.0
    assert bpy.ops.mocap.retarget(extract_keyframes=True, **PHYSICS) == {"FINISHED"}
    action = target.animation_data.action
    record = action["mocap_workbench"].to_dict()
    assert {"retarget", "physics", "physics_overlay", "keyframes"} <= set(record)
    assert record["physics"]["after"]["zmp_inside_share"] > record["physics"]["before"]["zmp_inside_share"]
    assert record["keyframes"]["method"] == "hybrid" and record["keyframes"]["keyframes"] == 90  # a grid of 3 × 30
    assert overlay.overlay_geometry(target, 40) is not None
    if have_matplotlib():
        assert record["physics"]["image"] in bpy.data.images
    # every extraction setting reached the keys: LINEAR, 30 stored keys per channel on the 90-pose grid
    keys = bone_keys(target)
    assert all(modes == {"LINEAR"} for _, _, modes in keys.values())
    assert sum(len(f) for f, _, _ in keys.values()) == 30 * len(keys)
    report = settings.retarget.last_report.splitlines()
    assert any(line.startswith("physics (90 kg") for line in report) and any("per channel" in line for line in report)


def test_extract_keyframes_on_a_physics_result_keeps_the_physics_record():
    source, target = import_walk(), import_walk(1.4)
    select_pair(source, target)
    assert bpy.ops.mocap.retarget(**PHYSICS) == {"FINISHED"}
    physical = target.animation_data.action
    before = physical["mocap_workbench"].to_dict()
    assert bpy.ops.mocap.extract_keyframes() == {"FINISHED"}
    distilled = target.animation_data.action
    assert distilled != physical and physical.use_fake_user
    record = distilled["mocap_workbench"].to_dict()
    for section in ("retarget", "physics", "physics_overlay"):  # NaN-safe comparison (the ZMP path has gaps)
        assert json.dumps(record[section], sort_keys=True) == json.dumps(before[section], sort_keys=True)
    assert record["keyframes"]["source_action"] == physical.name
    assert overlay.overlay_geometry(target, 40) is not None
    # the source's record is left as it was
    assert json.dumps(physical["mocap_workbench"].to_dict(), sort_keys=True) == json.dumps(before, sort_keys=True)


class _Called:
    """The operator instance as invoke sees it: values the caller passed (``is_property_set``), the
    rest at their defaults. Blender calls invoke only with a window event, which background mode
    never has, so the test calls the registered class's invoke itself."""

    def __init__(self, passed: dict, defaults: dict):
        self.__dict__.update(defaults)
        self.__dict__.update(passed)
        self.properties = self
        self._passed = set(passed)

    def is_property_set(self, name):
        return name in self._passed

    def execute(self, context):
        return {"FINISHED"}


def test_invoke_keeps_the_arguments_the_caller_passed():
    make_rig("QUATERNION")
    operator = bpy.types.MOCAP_OT_extract_keyframes
    defaults = {p.identifier: p.default for p in operator.bl_rna.properties if hasattr(p, "default")}
    settings = bpy.context.scene.mocap_workbench
    settings.target, settings.count, settings.ratio, settings.interpolation = "RATIO", 9, 7.5, "FITTED"
    called = _Called({"target": "COUNT", "count": 12, "interpolation": "LINEAR"}, defaults)
    assert operator.invoke(called, bpy.context, None) == {"FINISHED"}
    assert (called.target, called.count, called.interpolation) == ("COUNT", 12, "LINEAR")  # kept
    assert called.ratio == pytest.approx(7.5)  # not passed: the scene's
    called = _Called({}, defaults)
    operator.invoke(called, bpy.context, None)
    assert (called.target, called.count, called.interpolation) == ("RATIO", 9, "FITTED")


def test_retarget_operator_and_script_write_the_same_keys(tmp_path):
    target = import_walk(1.4)
    target.animation_data.action.name = "rest"
    target_file = tmp_path / "tall.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(target_file), copy=True)
    source = import_walk()
    select_pair(source, target)
    settings = bpy.context.scene.mocap_workbench
    settings.target, settings.count, settings.interpolation, settings.grid = "COUNT", 25, "LINEAR", 3.0
    assert bpy.ops.mocap.retarget(extract_keyframes=True) == {"FINISHED"}
    ours, name = bone_keys(target), target.name
    out = tmp_path / "out.blend"
    walk = shared_file(WALK)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "retarget.py"), str(walk), str(target_file), "--target-armature",
         name, "-o", str(out), "--extract-count", "25", "--extract-linear", "--extract-grid", "3"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out))
    theirs = bone_keys(bpy.data.objects[name])
    assert theirs.keys() == ours.keys()
    for key, (frames, values, modes) in ours.items():
        assert np.array_equal(theirs[key][0], frames), key
        assert np.allclose(theirs[key][1], values, atol=1e-5), key
        assert theirs[key][2] == modes


def test_script_with_physics_and_extraction_keeps_every_record(tmp_path):
    target = import_walk(1.4)
    name = target.name
    target_file = tmp_path / "tall.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(target_file), copy=True)
    out = tmp_path / "out.blend"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "retarget.py"), str(shared_file(WALK)), str(target_file),
         "--target-armature", name, "-o", str(out), "--physics", "--target-mass", "90", "--target-height", "1.99",
         "--extract-count", "20"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["extraction"]["params"]["keys_per_channel"] == 20 and "physics" in report
    bpy.ops.wm.open_mainfile(filepath=str(out))
    obj = bpy.data.objects[name]
    record = obj.animation_data.action["mocap_workbench"].to_dict()
    assert {"retarget", "physics", "physics_overlay", "keyframes"} <= set(record)
    assert record["keyframes"]["stored_keys"] == 20 * len(bone_keys(obj))
    assert overlay.overlay_geometry(obj, 40) is not None
