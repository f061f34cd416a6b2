"""What Blender plays back equals what Extract Keyframes reports, in every rotation mode.

Blender interpolates each F-curve on its own: on Euler and axis-angle bones (and for LINEAR keys on
any bone) the curves between two whole-pose keys do not follow the slerp the pose methods rebuild.
Real captures imported with Blender's BVH importer, their bones converted to each rotation mode,
extracted with every whole-pose method; the report is compared with Blender's playback read back
from the written F-curves, and that playback with Blender's own pose.
"""

from importlib import import_module

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.conftest import shared_file

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
clips = import_module(PACKAGE + ".addon.common.clip")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
keyframes = import_module(PACKAGE + ".core.keyframes")
bvh = import_module(PACKAGE + ".core.io.bvh")

MODES = ["QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "AXIS_ANGLE"]
METHODS = ["uniform", "simplify", "activity", "threshold"]
CC = "iclone_cc/005_06.bvh"
CMU = "cmu_bvh_cgspeed/05_02.bvh"


@pytest.fixture(scope="module")
def short_captures(tmp_path_factory):
    """Captures cut to their first frames (read once a module): relative path, frames → BVH file."""
    made = {}

    def cut(relative, n_frames):
        if (relative, n_frames) not in made:
            path = tmp_path_factory.mktemp("short") / "short.bvh"
            bvh.write_bvh(bvh.read_bvh(shared_file(relative)).frames(slice(0, n_frames)), path)
            made[relative, n_frames] = path
        return made[relative, n_frames]

    return cut


def import_short(path, rotate_mode="NATIVE"):
    """A capture imported with Blender's BVH importer."""
    bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode=rotate_mode, update_scene_fps=True)
    return bpy.context.view_layer.objects.active


def convert(obj, mode):
    """Every pose bone in ``mode`` and the action rewritten in it (a key on every frame)."""
    clip = clips.read_clip(obj)
    for pose_bone in obj.pose.bones:
        pose_bone.rotation_mode = mode
    channels = animdata.new_action_for(obj, f"{mode}_dense")
    armature.write_values(channels, armature.pose_values(obj, clip.motion), clip.frames)
    animdata.assign(obj, channels)
    bpy.context.view_layer.update()
    return clip.motion


def assert_report_is_playback(report):
    error, played = report.error, report.playback_error
    assert played["position_mean"] == pytest.approx(error["position_mean"], rel=0.02)
    assert played["position_max"] == pytest.approx(error["position_max"], rel=0.02)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fitted", [True, False], ids=["BEZIER", "LINEAR"])
def test_report_is_playback_in_every_rotation_mode(short_captures, mode, fitted):
    """Keys 30 frames apart on the Character Creator rig (twist and share bones): far from the slerp."""
    check_methods(import_short(short_captures(CC, 120)), mode, fitted, METHODS, 5)


@pytest.mark.parametrize("mode", ["QUATERNION", "YZX", "AXIS_ANGLE"])
@pytest.mark.parametrize("fitted", [True, False], ids=["BEZIER", "LINEAR"])
def test_optimal_reports_what_it_plays(short_captures, mode, fitted):
    check_methods(import_short(short_captures(CMU, 100)), mode, fitted, ["optimal"], 10)


def check_methods(obj, mode, fitted, methods, count):
    """Each method's report equals Blender's playback on ``obj`` converted to ``mode``."""
    motion = convert(obj, mode)
    source = obj.animation_data.action
    for method in methods:
        animdata.assign(obj, animdata.action_channels(obj, source))
        report = extract.extract_on_armature(obj, method, {"count": count}, fitted=fitted)
        assert_report_is_playback(report)
        # the playback measured is Blender's own pose: bone heads where the played motion puts them
        clip = clips.read_clip(obj)
        bpy.context.scene.frame_set(int(clip.frames[45]))
        heads = np.array([obj.pose.bones[n].head for n in motion.skeleton.names])
        assert np.abs(heads - clip.motion.world_positions()[45]).max() < 1e-3 * motion.skeleton.size()
        if not fitted:  # LINEAR asked, LINEAR written
            curves = armature.BoneCurves.of(animdata.object_channels(obj).fcurves, set(motion.skeleton.names))
            fcurve = next(iter(curves.by_channel.values()))
            assert {k.interpolation for k in fcurve.keyframe_points} == {"LINEAR"}


@pytest.mark.parametrize("relative", [CC, CMU])
@pytest.mark.parametrize("method", ["uniform", "simplify", "activity"])
def test_blenders_euler_import_reports_what_it_plays(short_captures, relative, method):
    """The issue's case: Blender's BVH importer in its default (Euler) mode, sparse whole-pose keys."""
    path = short_captures(relative, 150)
    obj = import_short(path)
    assert {b.rotation_mode for b in obj.pose.bones} != {"QUATERNION"}
    report = extract.extract_on_armature(obj, method, {"count": 8})
    assert_report_is_playback(report)
    # independently of the report's path: the written curves evaluated by Blender, frame by frame
    clip = clips.read_clip(obj)
    values = {k: np.array([fc.evaluate(f) for f in clip.frames]) for k, fc in clip.curves.by_channel.items()}
    played = armature.motion_from_values(obj, clip.motion.skeleton, values, len(clip.frames), clip.motion.fps)
    original = import_short(path)  # the dense capture again, on a second armature
    dense = clips.read_clip(original).motion
    error = keyframes.position_errors(dense, played)
    assert error.mean() == pytest.approx(report.error["position_mean"], rel=0.02)
    assert error.max() == pytest.approx(report.error["position_max"], rel=0.02)
    # what plays is the slerp the method chose, thanks to keys added where an Euler curve left it
    slerp = keyframes.position_errors(dense, keyframes.reconstruct(dense, report.keys))
    assert error.mean() < 1.03 * slerp.mean() and error.max() < 1.03 * slerp.max()
    extra = report.params["follow_keys"]
    assert extra < 0.1 * report.params["stored_keys"]
    assert (extra > 0) == ("more keys on rotation curves" in report.summary())
    assert extra > 0 or relative == CMU  # the Character Creator rig's twist and share bones need them
    assert sum(len(fc.keyframe_points) for fc in clip.curves.by_channel.values()) == report.params["stored_keys"]
