"""Extract Keyframes respects the user's own keys: hand-set keys kept, no curve gains keys, only the
selected bones and a frame range re-keyed (issue #12 item 5), through the operator.

References: every curve's keys read with ``keyframe_points.foreach_get('co')`` before the run.
"""

from importlib import import_module

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
synthetic = import_module(PACKAGE + ".core.synthetic")

POSES = 15


def make_rig(mode="QUATERNION"):
    motion = synthetic.demo_clip()  # 390 frames, keyed on every frame
    obj = armature.create_animated_armature(motion, "Mocap", bpy.context.scene.collection, rotation_mode=mode)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def hand_keyed_rig(mode="QUATERNION"):
    """The capture thinned to 15 poses per curve, Bezier keys as an animator sets them."""
    obj = make_rig(mode)
    frames = np.linspace(1, 390, POSES).round()
    for fcurve in animdata.object_channels(obj).fcurves:
        values = np.array([fcurve.evaluate(f) for f in frames])
        animdata.write_keys(fcurve, frames, values, "BEZIER")
    return obj


def keys_of(obj) -> dict:
    """(data_path, index) → every key's frame and value as stored (float32 pairs)."""
    out = {}
    for fcurve in animdata.object_channels(obj).fcurves:
        co = np.empty(2 * len(fcurve.keyframe_points), dtype=np.float32)
        fcurve.keyframe_points.foreach_get("co", co)
        out[(fcurve.data_path, fcurve.array_index)] = co.reshape(-1, 2)
    return out


def bone_of(path: str) -> str:
    return path.split('"')[1]


def test_hand_keyed_action_keeps_every_key_at_the_defaults():
    obj = hand_keyed_rig()
    before = keys_of(obj)
    assert sum(len(k) for k in before.values()) == POSES * len(before)
    assert bpy.ops.mocap.extract_keyframes() == {"FINISHED"}
    after = keys_of(obj)
    assert after.keys() == before.keys()
    for channel, co in before.items():
        assert np.array_equal(after[channel], co), channel  # frames and values, byte for byte
    report = bpy.context.scene.mocap_workbench.last_report
    assert f"{len(before)} already-sparse curves kept" in report and "no curve re-keyed" in report
    assert "Kept 0" not in report


def test_rekeyed_hand_keys_never_gain_keys():
    options_list = ({}, {"method": "UNIFORM", "target": "COUNT", "count": 40}, {"method": "SIMPLIFY", "ratio": 20.0},
                    {"method": "UNIFORM", "target": "COUNT", "count": 8})  # fmt: skip
    for options in options_list:
        obj = hand_keyed_rig("XYZ")
        before = keys_of(obj)
        assert bpy.ops.mocap.extract_keyframes(keep_sparse=False, **options) == {"FINISHED"}
        after = keys_of(obj)
        assert after.keys() == before.keys()
        assert all(len(after[c]) <= len(before[c]) for c in before), options
        if not options:  # 5 % of 390 frames is 20 keys per channel: every curve held to its 15
            assert (
                f"{len(before)} curves held to the number of keys they had"
                in bpy.context.scene.mocap_workbench.last_report
            )
        if options.get("count") == 8:  # Euler curves may add keys where they leave the slerp, up to their own
            assert min(len(k) for k in after.values()) == 8
        bpy.data.objects.remove(obj)


def select_bones(obj, names):
    for pb in obj.pose.bones:
        if hasattr(pb, "select"):
            pb.select = pb.name in names
        else:
            pb.bone.select = pb.name in names


def test_only_selected_bones_leaves_the_others_identical():
    obj = make_rig()
    chosen = {b.name for b in obj.pose.bones[1:3]}
    select_bones(obj, chosen)
    before = keys_of(obj)
    assert bpy.ops.mocap.extract_keyframes(only_selected=True) == {"FINISHED"}
    after = keys_of(obj)
    assert after.keys() == before.keys()
    for channel, co in before.items():
        if bone_of(channel[0]) in chosen:
            assert len(after[channel]) < len(co)
        else:
            assert np.array_equal(after[channel], co), channel
    assert "re-keyed 2 selected bones" in bpy.context.scene.mocap_workbench.last_report
    select_bones(obj, set())
    with pytest.raises(RuntimeError, match="no bone is selected"):
        bpy.ops.mocap.extract_keyframes(only_selected=True)


def test_frame_range_keeps_the_keys_outside_it():
    obj = make_rig("XYZ")
    before = keys_of(obj)
    assert bpy.ops.mocap.extract_keyframes(use_frame_range=True, frame_start=100, frame_end=250) == {"FINISHED"}
    after = keys_of(obj)
    for channel, co in before.items():
        new = after[channel]
        outside = (co[:, 0] < 100) | (co[:, 0] > 250)
        assert np.array_equal(new[(new[:, 0] < 100) | (new[:, 0] > 250)], co[outside]), channel
        inside = new[(new[:, 0] >= 100) & (new[:, 0] <= 250)]
        assert len(inside) < 151
        # the ends are kept, so the curve joins
        assert np.array_equal(inside[[0, -1]], co[(co[:, 0] == 100) | (co[:, 0] == 250)])
    report = bpy.context.scene.mocap_workbench.last_report
    assert "frames 100–250" in report and "Kept 8 of 151 frames per channel" in report
    # the error is measured on those frames: what Blender plays there
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    assert info["frames"] == 151 and info["position_max"] > 0


def test_frame_range_defaults_to_the_preview_range():
    obj = make_rig()
    scene = bpy.context.scene
    scene.use_preview_range = True
    scene.frame_preview_start, scene.frame_preview_end = 50, 149
    before = keys_of(obj)
    assert bpy.ops.mocap.extract_keyframes("INVOKE_DEFAULT", use_frame_range=True) == {"FINISHED"}
    after = keys_of(obj)
    channel = next(iter(before))
    assert np.array_equal(after[channel][after[channel][:, 0] < 50], before[channel][:49])
    assert "frames 50–149" in scene.mocap_workbench.last_report


def test_replacing_a_range_in_place_plays_what_the_report_says():
    obj = make_rig("QUATERNION")
    source = obj.animation_data.action
    before = keys_of(obj)
    assert bpy.ops.mocap.extract_keyframes(replace=True, use_frame_range=True, frame_start=200, frame_end=300,
                                           only_selected=False) == {"FINISHED"}  # fmt: skip
    assert obj.animation_data.action == source
    after = keys_of(obj)
    for channel, co in before.items():
        new = after[channel]
        assert np.array_equal(new[new[:, 0] < 200], co[co[:, 0] < 200])
        assert np.array_equal(new[new[:, 0] > 300], co[co[:, 0] > 300])
    info = source["mocap_workbench"]["keyframes"]
    report = bpy.context.scene.mocap_workbench.last_report
    assert info["frames"] == 101 and "frames 200–300" in report
    # Blender plays the joined curves as the core planned them (same figure twice in the report)
    playback = report.split("Blender playback: mean ")[1].split(",")[0]
    assert report.split("mean error ")[1].split(",")[0] == playback
