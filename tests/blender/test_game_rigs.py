"""Retarget onto a game rig (Unreal-named, root → pelvis → …) built in Blender: root motion, and
bones the map leaves out keep their own animation."""

from importlib import import_module

import bpy
import numpy as np
import pytest

from tests import rigs
from tests.blender.conftest import PACKAGE

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
retarget_addon = import_module(PACKAGE + ".addon.retarget.retarget_action")
synthetic = import_module(PACKAGE + ".core.synthetic")
core_retarget = import_module(PACKAGE + ".core.retarget")
apply_mod = import_module(PACKAGE + ".core.physics.apply")
operators = import_module(PACKAGE + ".addon.retarget.operators")


def world_heads(obj, names, frames):
    """(F, len(names), 3) world-space heads of pose bones as Blender evaluates them."""
    m = np.array(obj.matrix_world)
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(int(frame))
        heads = np.array([obj.pose.bones[n].head for n in names])
        out.append(heads @ m[:3, :3].T + m[:3, 3])
    return np.array(out)


def keys_of(obj, bone):
    channels = animdata.object_channels(obj)
    prefix = f'pose.bones["{bone}"].'
    return {(fc.data_path, fc.array_index): animdata.read_keys(fc).copy()
            for fc in channels.fcurves if fc.data_path.startswith(prefix)}  # fmt: skip


@pytest.fixture
def scene_pair():
    scene = bpy.context.scene
    motion = synthetic.turn(synthetic.walk(150), 30, 120, 90.0)
    source = armature.create_animated_armature(motion, "Walk", scene.collection)
    target = armature.build_armature(rigs.build("unreal", z_up=True, scale=1.2), "UE", scene.collection)
    channels = animdata.new_action_for(target, "UE_idle")
    frames = np.arange(1, 151, 5, dtype=float)
    wave = np.sin(frames / 10.0)
    armature.write_values(channels, {
        ("index_01_l", "rotation_quaternion", 0): np.cos(0.3 * wave), ("index_01_l", "rotation_quaternion", 3):
        np.sin(0.3 * wave), ("ik_foot_l", "location", 1): 0.1 * wave, ("pelvis", "location", 2): 0.2 * wave, ("root", "location", 0): 0.3 * wave,
    }, frames)  # fmt: skip
    animdata.assign(target, channels)
    bpy.context.view_layer.update()
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in (source, target))
    bpy.context.view_layer.objects.active = target
    return source, target


def test_root_motion_on_an_unreal_rig(scene_pair):
    source, target = scene_pair
    own = {bone: keys_of(target, bone) for bone in ("index_01_l", "ik_foot_l")}
    plain = retarget_addon.retarget_armatures(source, target, options=core_retarget.RetargetOptions())
    frames = plain.frames[::7]
    plain_heads = world_heads(target, ["pelvis", "root"], frames)
    # without root motion the root is held at rest (its own keys would move the placed pelvis)
    assert np.ptp(plain_heads[:, 1], axis=0).max() < 1e-6
    result = bpy.ops.mocap.retarget(root_motion=True)
    assert result == {"FINISHED"}
    heads = world_heads(target, ["pelvis", "root", "foot_l"], frames)
    # the pelvis's world path is the one without root motion
    assert np.abs(heads[:, 0] - plain_heads[:, 0]).max() < 1e-4
    # the root travels under it on the floor, as far as the source's hips times the leg-length ratio
    assert np.abs(heads[:, 1, 2]).max() < 1e-4
    assert np.abs(heads[:, 1, :2] - heads[:, 0, :2]).max() < 1e-4
    hips = world_heads(source, ["Hips"], frames)[:, 0]
    travel = np.linalg.norm(hips[-1, :2] - hips[0, :2])
    root_travel = np.linalg.norm(heads[-1, 1, :2] - heads[0, 1, :2])
    assert travel > 1.0 and root_travel == pytest.approx(plain.scale * travel, rel=0.03)
    # and turns with the source: the root's heading changes by the 90° turn (± the pelvis's sway)
    turns = []
    for frame in (frames[0], frames[-1]):
        bpy.context.scene.frame_set(int(frame))
        turns.append(np.array(target.pose.bones["root"].matrix)[:3, :3])
    turn = turns[1] @ turns[0].T  # armature space is world space here (the target object is not turned)
    assert np.allclose(turn[:, 2], [0, 0, 1], atol=1e-4)  # a turn about the vertical only
    assert np.degrees(np.arctan2(turn[1, 0], turn[0, 0])) == pytest.approx(90.0, abs=10.0)
    # bones the map leaves out keep their own animation, key for key; mapped ones are re-keyed
    for bone, keys in own.items():
        now = keys_of(target, bone)
        assert now.keys() == keys.keys() and all(np.array_equal(now[k], keys[k]) for k in keys), bone
    assert len(keys_of(target, "pelvis")[('pose.bones["pelvis"].location', 0)]) == len(plain.frames)
    for bone in ("upperarm_twist_01_l", "ik_foot_r", "ik_foot_root"):
        assert not keys_of(target, bone), bone


def centimetre_rig(object_scale=1.0):
    """The Unreal-named rig with bones in centimetres (100× a metre rig), the object scaled by ``object_scale``."""
    target = armature.build_armature(
        rigs.build("unreal", z_up=True, scale=100.0), "UE_cm", bpy.context.scene.collection
    )
    target.scale = (object_scale,) * 3
    bpy.context.view_layer.update()
    return target


@pytest.mark.parametrize("object_scale, unit_scale", [(0.01, 1.0), (1.0, 0.01)])
def test_a_centimetre_rig_measures_a_human_height(object_scale, unit_scale):
    bpy.context.scene.unit_settings.scale_length = unit_scale
    height = retarget_addon.measured_height(centimetre_rig(object_scale))
    assert 1.4 < height < 2.0


def test_physics_on_a_centimetre_rig_measures_both_bodies_in_metres(scene_pair):
    source, _ = scene_pair
    target = centimetre_rig(0.01)
    settings = apply_mod.PhysicsSettings(balance=False, torques=False, momentum=False)
    report = retarget_addon.retarget_armatures(source, target, physics=settings)
    f = report.physics
    assert f["target_height_measured"] and 1.4 < f["target_height_m"] < 2.0
    source_height = retarget_addon.measured_height(source)
    assert 1.4 < source_height < 2.0 and f["source_height_m"] == pytest.approx(source_height, rel=0.02)
    assert not [n for n in report.notes if "not human-sized" in n]
    # a height given for the target does not change the source's
    given = apply_mod.PhysicsSettings(target_height=1.9, balance=False, torques=False, momentum=False)
    again = retarget_addon.retarget_armatures(source, target, physics=given).physics
    assert again["target_height_m"] == pytest.approx(1.9) and again["source_height_m"] == pytest.approx(
        f["source_height_m"])  # fmt: skip


def test_a_giant_is_a_warning_in_the_operator_report(scene_pair, capfd):
    source, _ = scene_pair
    target = centimetre_rig(1.0)  # 170 m in a metre scene
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in (source, target))
    bpy.context.view_layer.objects.active = target
    result = bpy.ops.mocap.retarget(use_physics=True, use_balance=False, use_torque_limits=False, use_momentum=False)
    assert result == {"FINISHED"}
    out = capfd.readouterr()
    printed = out.out + out.err  # Blender prints an operator's reports when it runs without a window
    warnings = [line for line in printed.splitlines() if line.startswith("Warning")]
    assert any("target height measured as" in t and "not human-sized" in t for t in warnings), printed[-2000:]


def test_a_centimetre_rig_at_scale_one_is_read_in_centimetres(scene_pair):
    """A rig in centimetres whose object is not scaled (a Mixamo, Character Creator or Unreal BVH imported at
    scale 1: 170 units tall in a metre scene) gets the physics of the same rig scaled 0.01: its units read
    from its size, as the source's are, and noted. Before, the body was taken as 170 m tall: the figures
    (torques thousands of times the limits, CMU 02_01 onto the Mixamo rig ZMP inside 12 % → 12 %, 343 → 343
    frames over a torque limit) said nothing and the solve moved nothing."""
    source, _ = scene_pair
    settings = apply_mod.PhysicsSettings(target_mass=80.0, torques=False, momentum=False)  # balance: the quickest solve
    reports = [retarget_addon.retarget_armatures(source, centimetre_rig(s), physics=settings) for s in (0.01, 1.0)]
    scaled, unscaled = (r.physics for r in reports)
    assert unscaled["unit_m"] == pytest.approx(0.01) and unscaled["target_height_m"] == pytest.approx(
        scaled["target_height_m"])  # fmt: skip
    for when in ("before", "after"):
        for key in ("zmp_inside_share", "torque_violation_frames", "torque_worst_ratio", "deviation", "jerk_m_s3"):
            if key in scaled[when]:
                assert unscaled[when][key] == pytest.approx(scaled[when][key], rel=1e-3, abs=1e-6), (when, key)
    assert scaled["after"]["deviation"] > 0  # the solve moved the body in both
    notes = [n for n in reports[1].notes if n.startswith("target height measured as")]
    assert len(notes) == 1 and "its physics takes its units as centimetres (1." in notes[0], reports[1].notes
    assert not [n for n in reports[0].notes if "not human-sized" in n]
