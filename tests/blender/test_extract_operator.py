"""Extract Keyframes run the way a user runs it, on generated and real armatures."""

from importlib import import_module

import addon_utils
import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.conftest import shared_file

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
clips = import_module(PACKAGE + ".addon.common.clip")
synthetic = import_module(PACKAGE + ".core.synthetic")
keyframes = import_module(PACKAGE + ".core.keyframes")
bvh = import_module(PACKAGE + ".core.io.bvh")
blender_bvh = import_module(PACKAGE + ".core.io.blender_bvh")
core_channels = import_module(PACKAGE + ".core.channels")


def make_rig(mode="QUATERNION", motion=None):
    motion = motion or synthetic.demo_clip()
    obj = armature.create_animated_armature(motion, "Mocap", bpy.context.scene.collection, rotation_mode=mode)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj, motion


def bone_curves(obj):
    channels = animdata.object_channels(obj)
    return channels, armature.BoneCurves.of(channels.fcurves, {b.name for b in obj.data.bones})


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ", "ZXY", "YZX", "AXIS_ANGLE"])
def test_armature_round_trips_the_motion(mode):
    obj, motion = make_rig(mode)
    clip = clips.read_clip(obj)
    assert clip.frames[0] == 1 and len(clip.frames) == motion.n_frames
    assert np.abs(clip.motion.world_positions() - motion.world_positions()).max() < 1e-5


def test_operator_keys_every_channel_on_exactly_the_extracted_frames():
    obj, motion = make_rig("QUATERNION")
    source = obj.animation_data.action
    _, dense = bone_curves(obj)
    n_curves = len(dense.by_channel)
    assert bpy.ops.mocap.extract_keyframes(method="THRESHOLD", target="COUNT", count=25, interpolation="LINEAR") == {
        "FINISHED"
    }
    result = obj.animation_data.action
    assert result != source and source.name in bpy.data.actions and source.use_fake_user
    channels, sparse = bone_curves(obj)
    assert len(sparse.by_channel) == n_curves
    expected = clips.read_clip  # noqa: F841 (documenting the path used)
    core_keys = keyframes.extract_keyframes(motion, "threshold", count=25).keys
    frames = None
    for fcurve in sparse.by_channel.values():
        keys = animdata.read_keys(fcurve)
        frames = keys[:, 0] if frames is None else frames
        assert np.array_equal(keys[:, 0], frames)
        assert {k.interpolation for k in fcurve.keyframe_points} == {"LINEAR"}
        assert {k.type for k in fcurve.keyframe_points} == {"KEYFRAME"}
    assert len(frames) == 25 and frames[0] == 1 and frames[-1] == motion.n_frames
    assert np.array_equal(frames - 1, core_keys)
    # quaternion keys stay in one hemisphere, bone by bone
    for bone in obj.pose.bones:
        q = np.stack(
            [animdata.read_keys(sparse.by_channel[(bone.name, "rotation_quaternion", i)])[:, 1] for i in range(4)], -1
        )
        assert np.all(np.sum(q[1:] * q[:-1], axis=-1) >= 0)
    info = result["mocap_workbench"]["keyframes"]
    assert info["keyframes"] == 25 and info["source_action"] == source.name
    summary = bpy.context.scene.mocap_workbench.last_report
    assert "Kept 25 of 390 frames" in summary and "Blender playback" in summary


def test_playback_error_is_what_blender_evaluates():
    obj, motion = make_rig("QUATERNION")
    report = extract.extract_on_armature(obj, "threshold", {"ratio": 0.08})
    # Independent evaluation: let Blender pose the armature frame by frame and read bone heads.
    scene = bpy.context.scene
    heads = []
    for frame in report.frames:
        scene.frame_set(int(frame))
        heads.append([np.array(b.head) for b in obj.pose.bones])
    heads = np.array(heads)
    names = [b.name for b in obj.pose.bones]
    original = motion.world_positions()[:, [motion.skeleton.index(n) for n in names]]
    err = np.linalg.norm(heads - original, axis=-1)
    # the heads are part of the measured points (the whole measure: tests/blender/test_worst_frame.py)
    per_bone = report.playback_error["per_bone_max"]
    assert np.all(np.array([per_bone[n] for n in names]) >= err.max(axis=0) * (1 - 1e-3))
    assert report.playback_error["position_max"] > err.max()  # tips and sides add to the heads
    # LINEAR quaternion keys play back close to the core's slerp rebuild
    assert report.playback_error["position_mean"] == pytest.approx(report.error["position_mean"], rel=0.05)


def test_replace_in_place_keeps_other_channels():
    obj, motion = make_rig("XYZ")
    obj["Intensity"] = 0.0
    source = obj.animation_data.action
    channels = animdata.object_channels(obj)
    custom = animdata.new_fcurve(channels, '["Intensity"]', 0, "Custom")
    animdata.write_keys(custom, np.arange(1, 391, 7), np.linspace(0, 1, len(range(1, 391, 7))), "BEZIER")
    before = animdata.read_keys(custom).copy()
    assert bpy.ops.mocap.extract_keyframes(method="THRESHOLD", target="RATIO", ratio=5.0, replace=True) == {"FINISHED"}
    assert obj.animation_data.action == source and len(bpy.data.actions) == 1
    _, curves = bone_curves(obj)
    # every curve keys the 20 keyframes; Euler curves also where they left the slerp between them
    info = source["mocap_workbench"]["keyframes"]
    assert min(len(fc.keyframe_points) for fc in curves.by_channel.values()) == 20
    assert sum(len(fc.keyframe_points) for fc in curves.by_channel.values()) == info["stored_keys"]
    assert len(curves.other) == 1 and np.array_equal(animdata.read_keys(curves.other[0]), before)


def test_new_action_copies_unused_channels_unchanged():
    obj, _ = make_rig("QUATERNION")
    obj["Intensity"] = 0.0
    channels = animdata.object_channels(obj)
    custom = animdata.new_fcurve(channels, '["Intensity"]', 0)
    animdata.write_keys(custom, np.array([1, 50, 200]), np.array([0.0, 2.0, 1.0]), "BEZIER")
    bpy.ops.mocap.extract_keyframes(target="COUNT", count=10)
    _, curves = bone_curves(obj)
    assert len(curves.other) == 1
    copy = curves.other[0]
    assert np.array_equal(animdata.read_keys(copy), [[1, 0], [50, 2], [200, 1]])
    assert [k.interpolation for k in copy.keyframe_points] == ["BEZIER"] * 3


def test_max_error_target_holds_in_blender_units():
    obj, motion = make_rig("QUATERNION")
    bpy.ops.mocap.extract_keyframes(target="MAX_ERROR", max_error=0.05, method="UNIFORM")
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    assert info["position_max"] <= 0.05 and info["keyframes"] < motion.n_frames / 2


def test_armature_without_bone_animation_is_refused_cleanly():
    obj, _ = make_rig("QUATERNION")
    channels = animdata.object_channels(obj)
    for fc in list(channels.fcurves):
        animdata.remove_fcurve(channels, fc)
    obj["Intensity"] = 0.0
    animdata.write_keys(animdata.new_fcurve(channels, '["Intensity"]', 0), np.array([1, 2]), np.array([0.0, 1.0]))
    n_actions = len(bpy.data.actions)
    with pytest.raises(RuntimeError, match="animates no bone"):
        bpy.ops.mocap.extract_keyframes(target="COUNT", count=5)
    assert len(bpy.data.actions) == n_actions


@pytest.mark.parametrize("rotate_mode", ["NATIVE", "QUATERNION"])
def test_real_capture_through_blenders_bvh_importer(rotate_mode):
    path = shared_file("cmu_bvh_cgspeed/05_02.bvh")
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode=rotate_mode, update_scene_fps=True)
    obj = bpy.context.active_object
    count = round(0.05 * 1124)
    assert bpy.ops.mocap.extract_keyframes(method="THRESHOLD", target="COUNT", count=count) == {"FINISHED"}
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    assert info["keyframes"] == count
    _, curves = bone_curves(obj)
    frames = {k: set(animdata.read_keys(fc)[:, 0]) for k, fc in curves.by_channel.items()}
    pose_frames = set.intersection(*frames.values())  # every curve keys them; Euler curves may add keys
    assert all(s == pose_frames for (_, prop, _), s in frames.items() if prop == "location")
    keys = np.array(sorted(pose_frames), dtype=int) - 1  # the importer starts at frame 1
    assert keys[0] == 0 and keys[-1] == 1123 and len(keys) == count
    # independent evaluation of those keys on the file read by the core
    motion = bvh.read_bvh(path)
    rebuilt = keyframes.reconstruct(motion, keys)
    err = np.linalg.norm(motion.world_positions() - rebuilt.world_positions(), axis=-1)
    # the measure's points sit on Blender's bones (tails, rolls): take the core's model of the importer
    skeleton, modes, values = blender_bvh.blender_bvh_import(motion, rotate_mode, blender=bpy.app.version[:2])
    model = core_channels.motion_from_values(
        skeleton, core_channels.ChannelLayout(modes), values, motion.n_frames, motion.fps
    )
    measured = keyframes.position_errors(model, keyframes.reconstruct(model, keys))
    assert measured[:, : skeleton.n_joints] == pytest.approx(err, rel=1e-3, abs=1e-4 * skeleton.size())  # heads
    assert info["position_mean"] == pytest.approx(measured.mean(), rel=0.01)
    assert info["position_max"] == pytest.approx(measured.max(), rel=0.01)


@pytest.mark.parametrize("mode", ["QUATERNION", "ZXY", "AXIS_ANGLE"])
def test_fitted_bezier_playback_matches_the_slerp_rebuild(mode):
    obj, _ = make_rig(mode)
    linear = extract.extract_on_armature(obj, "uniform", {"ratio": 0.06}, fitted=False)
    bpy.ops.wm.read_homefile(use_empty=True)
    obj, _ = make_rig(mode)
    fitted = extract.extract_on_armature(obj, "uniform", {"ratio": 0.06})
    core = fitted.error["position_mean"]
    # axis-angle is ill-conditioned near the identity (the axis is undefined), where many
    # joints of the generated walk sit: looser there
    assert fitted.playback_error["position_mean"] == pytest.approx(core, rel=0.02 if mode != "AXIS_ANGLE" else 0.06)
    assert (
        abs(fitted.playback_error["position_mean"] - core) <= abs(linear.playback_error["position_mean"] - core) + 1e-9
    )
    _, curves = bone_curves(obj)
    for fc in curves.by_channel.values():
        assert {k.interpolation for k in fc.keyframe_points} == {"BEZIER"}
        assert {k.handle_left_type for k in fc.keyframe_points} == {"FREE"}


@pytest.mark.parametrize("rotate_mode", ["NATIVE", "QUATERNION"])
def test_fitted_playback_on_a_real_capture_within_two_percent(rotate_mode):
    path = shared_file("cmu_bvh_cgspeed/05_02.bvh")
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode=rotate_mode)
    obj = bpy.context.active_object
    for method in ("uniform", "threshold"):
        report = extract.extract_on_armature(obj, method, {"ratio": 0.05}, replace=False)
        assert report.playback_error["position_mean"] == pytest.approx(report.error["position_mean"], rel=0.02)
        obj.animation_data.action = bpy.data.actions[report.source_action]


def test_hybrid_keeps_the_budget_and_the_grid():
    obj, motion = make_rig("QUATERNION")
    assert bpy.ops.mocap.extract_keyframes(method="HYBRID", target="COUNT", count=20, grid=3.0) == {"FINISHED"}
    _, curves = bone_curves(obj)
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    n_channels = len(curves.by_channel)
    assert info["stored_keys"] == 20 * n_channels and info["keyframes"] == 60
    all_frames = set()
    for fc in curves.by_channel.values():
        frames = animdata.read_keys(fc)[:, 0]
        assert frames[0] == 1 and frames[-1] == motion.n_frames  # every channel starts and ends on the grid
        all_frames |= set(frames.tolist())
    assert len(all_frames) <= 60  # channel keys only ever sit on the pose grid
    # hybrid beats plain whole-pose keys at the same stored keys, on Blender's playback
    bpy.ops.wm.read_homefile(use_empty=True)
    obj, _ = make_rig("QUATERNION")
    plain = extract.extract_on_armature(obj, "threshold", {"count": 20})
    bpy.ops.wm.read_homefile(use_empty=True)
    obj, _ = make_rig("QUATERNION")
    mixed = extract.extract_on_armature(obj, "hybrid", {"count": 20}, grid=3.0)
    assert mixed.playback_error["position_mean"] < plain.playback_error["position_mean"]
    assert mixed.playback_error["position_mean"] == pytest.approx(mixed.error["position_mean"], rel=0.02)


def test_pose_grid_default_is_the_cores():
    """The panel's Pose Grid default is written out (registering imports no core) and must be the core's."""
    channel_keys = import_module(PACKAGE + ".core.keyframes.channel_keys")
    props = bpy.context.scene.mocap_workbench.bl_rna.properties
    assert props["grid"].default == channel_keys.HYBRID_GRID
    assert bpy.ops.mocap.extract_keyframes.get_rna_type().properties["grid"].default == channel_keys.HYBRID_GRID
