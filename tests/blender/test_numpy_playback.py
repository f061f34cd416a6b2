"""The core plays F-curves as Blender does: its values equal ``FCurve.evaluate`` and Blender's pose.

Extract Keyframes measures what Blender plays back from the curves it wrote, computed in numpy from
the keys (``animdata.play`` → ``core.keyframes.bezier.play_curves``) instead of one
``fcurve.evaluate`` call a frame and curve. Blender is the truth here: real captures in every
rotation mode, fitted Bezier and LINEAR keys, and hand-made curves with the cases the written keys
never have (handles Blender clamps, extrapolation, constant and easing interpolation, modifiers).
"""

from importlib import import_module

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_euler_playback import CC, CMU, MODES, convert, import_short
from tests.conftest import shared_file

animdata = import_module(PACKAGE + ".addon.common.animdata")
clips = import_module(PACKAGE + ".addon.common.clip")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
keyframes = import_module(PACKAGE + ".core.keyframes")
bezier = import_module(PACKAGE + ".core.keyframes.bezier")
bvh = import_module(PACKAGE + ".core.io.bvh")

TOLERANCE = 1e-5


def blender_values(fcurves, frames):
    """(T, C) every curve evaluated by Blender at every frame."""
    return np.array([[fc.evaluate(f) for fc in fcurves] for f in frames.tolist()])


def assert_plays_as_blender(fcurves, frames):
    ours, theirs = animdata.play(fcurves, frames), blender_values(fcurves, frames)
    scale = np.maximum(1.0, np.abs(theirs))
    worst = np.unravel_index(np.argmax(np.abs(ours - theirs) / scale), ours.shape)
    assert np.abs(ours - theirs).max() / scale[worst] <= TOLERANCE, (
        f"{fcurves[worst[1]].data_path}[{fcurves[worst[1]].array_index}] at frame {frames[worst[0]]}: "
        f"{ours[worst]} vs Blender's {theirs[worst]}"
    )


@pytest.fixture(scope="module")
def short_cmu(tmp_path_factory):
    path = tmp_path_factory.mktemp("short") / "short.bvh"
    bvh.write_bvh(bvh.read_bvh(shared_file(CMU)).frames(slice(0, 240)), path)
    return path


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fitted", [True, False], ids=["BEZIER", "LINEAR"])
def test_written_curves_play_as_blender_plays_them(short_cmu, mode, fitted):
    """The hybrid's keys (each curve its own keys) in every rotation mode: every curve's values at every
    frame, between frames and past both ends, and the motion they play, against Blender's."""
    obj = import_short(short_cmu)
    motion = convert(obj, mode)
    report = extract.extract_on_armature(obj, "hybrid", {"ratio": 0.1}, fitted=fitted)
    clip = clips.read_clip(obj)
    fcurves = list(clip.curves.by_channel.values())
    frames = np.concatenate((clip.frames, clip.frames[:-1] + 0.37, [clip.frames[0] - 7.5, clip.frames[-1] + 3.25]))
    assert_plays_as_blender(fcurves, frames)
    assert_plays_as_blender(fcurves, clip.frames)  # whole frames only: the roots shared between segments
    ours = clips.played_motion(clip, clip.channels, blender=False)
    theirs = clips.played_motion(clip, clip.channels)
    size = motion.skeleton.size()
    assert np.abs(ours.world_positions() - theirs.world_positions()).max() <= TOLERANCE * size
    # the report measured Blender's playback: the same figures from Blender's own evaluation
    error = keyframes.position_errors(motion, theirs)
    assert error.mean() == pytest.approx(report.playback_error["position_mean"], rel=1e-4)
    assert error.max() == pytest.approx(report.playback_error["position_max"], rel=1e-4)
    # and the played motion is Blender's pose: bone heads where Blender's depsgraph puts them
    bpy.context.scene.frame_set(int(clip.frames[77]))
    heads = np.array([obj.pose.bones[n].head for n in motion.skeleton.names])
    assert np.abs(heads - ours.world_positions()[77]).max() <= 1e-4 * size


def test_character_creator_euler_import_plays_as_blender(tmp_path):
    """Blender's default (Euler) import of the 100-bone Character Creator rig, whole-pose keys with the
    extra keys on curves that left the slerp."""
    path = tmp_path / "cc.bvh"
    bvh.write_bvh(bvh.read_bvh(shared_file(CC)).frames(slice(0, 150)), path)
    obj = import_short(path)
    extract.extract_on_armature(obj, "uniform", {"count": 8})
    clip = clips.read_clip(obj)
    assert_plays_as_blender(list(clip.curves.by_channel.values()), np.arange(clip.frames[0] - 3, clip.frames[-1] + 3))


def hand_made_curves():
    """An object's curves with what written keys never have, each on its own property."""
    obj = bpy.data.objects.new("keys", None)
    bpy.context.scene.collection.objects.link(obj)
    obj.animation_data_create()
    channels = animdata.new_action_for(obj, "hand_made")
    animdata.assign(obj, channels)

    def curve(index, frames, values, interpolation="BEZIER", handles="AUTO_CLAMPED", extrapolation="CONSTANT"):
        fc = animdata.new_fcurve(channels, "location" if index < 3 else "scale", index % 3)
        for f, v in zip(frames, values):
            key = fc.keyframe_points.insert(f, v)
            key.interpolation = interpolation
            key.handle_left_type = key.handle_right_type = handles
        fc.extrapolation = extrapolation
        fc.update()
        return fc

    rng = np.random.default_rng(5)
    frames = [1.0, 4.0, 4.5, 11.0, 12.0, 30.25, 31.0]
    values = rng.normal(size=len(frames)) * 3
    made = [
        curve(0, frames, values, extrapolation="LINEAR"),  # auto-clamped handles, Bezier ends extrapolated
        curve(1, frames, values, "LINEAR", "VECTOR", "LINEAR"),  # along the neighbouring keys
        curve(2, frames, values, "CONSTANT"),
        curve(3, [5.0], [2.0], extrapolation="LINEAR"),  # one key
        curve(4, [2.0, 9.0, 20.0], [1.0, 1.0, 1.0]),  # flat
    ]
    # FREE handles far longer than their segments, pointing backwards too: Blender clamps them
    long = curve(5, frames, values, handles="FREE", extrapolation="LINEAR")
    co = np.array([k.co for k in long.keyframe_points])
    n = len(co)
    left = co + rng.normal(size=(n, 2)) * [9.0, 4.0]
    right = co + rng.normal(size=(n, 2)) * [9.0, 4.0]
    long.keyframe_points.foreach_set("handle_left", left.astype(np.float32).ravel())
    long.keyframe_points.foreach_set("handle_right", right.astype(np.float32).ravel())
    made.append(long)
    return made, channels


def test_hand_made_curves_play_as_blender():
    made, _ = hand_made_curves()
    assert_plays_as_blender(made, np.arange(-6.0, 40.0, 0.125))


def test_easing_and_modifiers_are_left_to_blender():
    made, _ = hand_made_curves()
    made[0].keyframe_points[2].interpolation = "SINE"
    made[1].modifiers.new("NOISE")
    frames = np.arange(-2.0, 35.0, 0.5)
    assert_plays_as_blender(made[:2], frames)
    assert not bezier.plays(np.array([2, 3]))


def test_curves_written_together_are_stored_as_written_one_by_one():
    """``write_curves`` (handles of many curves computed at once) stores exactly what ``write_keys``
    stores curve by curve, returns the keys Blender holds, and those play as Blender plays the curves."""
    obj = bpy.data.objects.new("written", None)
    bpy.context.scene.collection.objects.link(obj)
    channels = animdata.new_action_for(obj, "written")
    rng = np.random.default_rng(11)
    plans = []
    for n in (5, 1, 2, 17, 3):
        frames = np.sort(rng.choice(np.arange(-4, 60), size=n, replace=False)).astype(float)
        plans.append((frames, rng.normal(size=n) * 4, (rng.normal(size=n - 1), rng.normal(size=n - 1))))
    together = [animdata.new_fcurve(channels, "location", i % 3) if i < 3 else animdata.new_fcurve(channels, "scale", i % 3)
                for i in range(len(plans))]  # fmt: skip
    one_by_one = [animdata.new_fcurve(channels, "rotation_euler", i) for i in range(3)]
    one_by_one += [animdata.new_fcurve(channels, "delta_location", i) for i in range(2)]
    together[3].extrapolation = "LINEAR"
    one_by_one[3].extrapolation = "LINEAR"
    written = animdata.write_curves(together, *(list(x) for x in zip(*plans)))
    for fcurve, (frames, values, handles) in zip(one_by_one, plans):
        animdata.write_keys(fcurve, frames, values, handles=handles)
    for ours, theirs, keys in zip(together, one_by_one, written):
        a = animdata._key_arrays(ours.keyframe_points, animdata._KEY_PROPERTIES)
        b = animdata._key_arrays(theirs.keyframe_points, animdata._KEY_PROPERTIES)
        assert all(np.array_equal(a[name], b[name]) for name in a)
        if len(a["co"]) == 1:
            assert keys is None
            continue
        assert np.array_equal(keys.co, a["co"]) and np.array_equal(keys.left, a["handle_left"])
        assert np.array_equal(keys.right, a["handle_right"]) and np.array_equal(
            keys.interpolation, a["interpolation"][:, 0]
        )
        assert keys.linear == (ours.extrapolation == "LINEAR")
    frames = np.arange(-8.0, 66.0)
    known = animdata.play(together, frames, written)
    assert np.array_equal(known, animdata.play(together, frames))
    assert_plays_as_blender(together, frames)
    assert np.ptp(known[:, 3]) > 1.0  # the curves move: a flat result would pass the comparisons too
