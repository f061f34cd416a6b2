"""Channel maths (core.channels) and per-channel keys (core.keyframes.channel_keys), without Blender.

References: scipy's Rotation for the rotation modes; the motion itself for round trips; the keys
the pose method picks for LINEAR plans; hand-built branches for Euler and axis-angle.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import quaternion as quat
from core import synthetic
from core.channels import (
    ChannelLayout,
    axis_angle_near,
    euler_near,
    motion_from_values,
    pose_values,
    rebuilt_channel_values,
    rest_value,
    rotation_to_quaternion,
    values_near,
)
from core.keyframes import position_errors, reconstruct
from core.keyframes.channel_keys import extract_channels, planned_values

MODES = ("QUATERNION", "AXIS_ANGLE", "XYZ", "ZXY", "YZX", "ZYX")


def _layout(motion, mode):
    return ChannelLayout({name: mode for name in motion.skeleton.names})


def _scipy_wxyz(r: Rotation) -> np.ndarray:
    xyzw = r.as_quat()
    return np.concatenate((xyzw[:, 3:], xyzw[:, :3]), axis=1)


@pytest.mark.parametrize("mode", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_euler_mode_matches_scipy_extrinsic(mode):
    """Blender's Euler mode 'XYZ' applies X first: scipy's extrinsic 'xyz' with angles in x, y, z slots."""
    rng = np.random.default_rng(1)
    xyz = rng.uniform(-3, 3, size=(40, 3))
    angles = xyz[:, ["XYZ".index(a) for a in mode]]
    expected = _scipy_wxyz(Rotation.from_euler(mode.lower(), angles))
    got = rotation_to_quaternion(mode, xyz)
    assert np.allclose(np.abs(np.sum(got * expected, axis=1)), 1.0, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_pose_values_round_trip_the_motion(mode):
    motion = synthetic.demo_clip()
    layout = _layout(motion, mode)
    values = pose_values(motion, layout)
    back = motion_from_values(motion.skeleton, layout, values, motion.n_frames, motion.fps)
    assert np.allclose(np.abs(quat.dot(back.rotations, motion.rotations)), 1.0, atol=1e-9)
    assert np.allclose(back.translations, motion.translations, atol=1e-9)
    if mode not in ("QUATERNION", "AXIS_ANGLE"):  # no whole-turn wraps between frames
        euler = np.stack([v for (_, p, _), v in values.items() if p == "rotation_euler"], axis=1)
        assert np.abs(np.diff(euler, axis=0)).max() < 4.0


def test_channels_without_curves_hold_their_value():
    motion = synthetic.walk(20)
    name = motion.skeleton.names[3]
    layout = ChannelLayout({}, {(name, "rotation_quaternion"): np.array([0.0, 1.0, 0.0, 0.0])})
    played = motion_from_values(motion.skeleton, layout, {}, 5, motion.fps)
    assert np.allclose(np.abs(played.rotations[:, 3, 1]), 1.0)
    assert np.allclose(played.rotations[:, 2], [1, 0, 0, 0])
    assert rest_value("scale", 2) == 1.0 and rest_value("rotation_axis_angle", 2) == 1.0
    assert rest_value("rotation_axis_angle", 0) == 0.0 and rest_value("location", 0) == 0.0


def test_euler_branch_follows_the_keys():
    rng = np.random.default_rng(4)
    for mode in ("XYZ", "ZXY", "YZX"):
        q = quat.normalize(rng.normal(size=(50, 4)))
        slots = ["XYZ".index(a) for a in mode]
        principal = quat.to_euler(q, mode)
        other = principal + [np.pi, 0, np.pi]
        other[:, 1] = np.pi - principal[:, 1]
        other += 2 * np.pi * rng.integers(-2, 3, size=(50, 3))
        reference = np.empty_like(other)
        reference[:, slots] = other + rng.normal(scale=0.05, size=(50, 3))
        got = euler_near(q, mode, reference)
        expected = np.empty_like(other)
        expected[:, slots] = other
        assert np.allclose(got, expected)
        assert np.allclose(np.abs(quat.dot(rotation_to_quaternion(mode, got), q)), 1)


def test_axis_angle_follows_the_reference_representation():
    rng = np.random.default_rng(5)
    q = quat.normalize(rng.normal(size=(30, 4)))
    axis, angle = quat.to_axis_angle(q)
    flipped = np.concatenate(((-angle + 2 * np.pi)[:, None], -axis), axis=1)  # same rotation, other way round
    got = axis_angle_near(q, flipped + rng.normal(scale=0.01, size=flipped.shape))
    assert np.allclose(got, flipped, atol=1e-9)
    assert np.allclose(np.abs(quat.dot(rotation_to_quaternion("AXIS_ANGLE", got), q)), 1)


def test_rebuilt_values_replay_the_rebuild_on_the_keys_branch():
    motion = synthetic.demo_clip()
    layout = _layout(motion, "ZXY")
    values = pose_values(motion, layout)
    keys = np.arange(0, motion.n_frames, 15)
    if keys[-1] != motion.n_frames - 1:
        keys = np.append(keys, motion.n_frames - 1)
    rebuilt = reconstruct(motion, keys)
    targets = rebuilt_channel_values(rebuilt, layout, {k: v[keys] for k, v in values.items()}, keys)
    played = motion_from_values(motion.skeleton, layout, targets, motion.n_frames, motion.fps)
    assert np.allclose(np.abs(quat.dot(played.rotations, rebuilt.rotations)), 1.0, atol=1e-9)
    for k, v in targets.items():  # on the keys, the values are the keys themselves (the same branch)
        assert np.allclose(v[keys], values[k][keys], atol=1e-9)


def test_values_near_moves_whole_turns_and_signs_only():
    motion = synthetic.walk(30)
    for mode in ("QUATERNION", "XYZ"):
        layout = _layout(motion, mode)
        values = pose_values(motion, layout)
        shift = -1.0 if mode == "QUATERNION" else 2 * np.pi
        reference = {k: v[4] * (shift if mode == "QUATERNION" else 1) + (0 if mode == "QUATERNION" else shift)
                     for k, v in values.items() if "rotation" in k[1]}  # fmt: skip
        near = values_near(motion, layout, reference, 4)
        for k in reference:
            assert np.allclose(near[k][4], reference[k], atol=1e-9)
        back = motion_from_values(motion.skeleton, layout, near, motion.n_frames, motion.fps)
        assert np.allclose(np.abs(quat.dot(back.rotations, motion.rotations)), 1.0, atol=1e-9)


@pytest.mark.parametrize("mode", ["QUATERNION", "ZXY"])
def test_hybrid_keeps_the_budget_and_measures_what_the_curves_play(mode):
    motion = synthetic.demo_clip()
    layout = _layout(motion, mode)
    values = pose_values(motion, layout)
    result = extract_channels(motion, layout, values, "hybrid", {"count": 20}, grid=3.0)
    assert result.params["keys_per_channel"] == 20 and result.params["pose_keys"] == 60
    assert result.params["stored_keys"] == 20 * len(values)
    for ck in result.plan.values():  # each channel keeps a subset of the pose grid, ends included
        assert set(ck.keys) <= set(result.keys) and ck.keys[0] == 0 and ck.keys[-1] == motion.n_frames - 1
    played = motion_from_values(motion.skeleton, layout, planned_values(result.plan, motion.n_frames),
                                motion.n_frames, motion.fps)  # fmt: skip
    err = position_errors(motion, played).mean()  # heads, tips and sides (core/keyframes/error.py)
    assert err == pytest.approx(result.error["position_mean"], rel=1e-9)
    grid_only = extract_channels(motion, layout, values, "simplify", {"count": 20})
    assert result.error["position_mean"] < grid_only.error["position_mean"]


def test_linear_plan_keys_every_channel_on_the_pose_keys():
    motion = synthetic.demo_clip()
    layout = _layout(motion, "XYZ")
    values = pose_values(motion, layout)
    result = extract_channels(motion, layout, values, "uniform", {"count": 12}, fitted=False)
    for k, ck in result.plan.items():  # rotation curves may hold more (tests/core/test_follow_slerp.py)
        assert set(result.keys) <= set(ck.keys) and ck.handles is None
        assert np.array_equal(ck.keys, result.keys) or k[1] == "rotation_euler"
        assert np.allclose(ck.values[np.isin(ck.keys, result.keys)], values[k][result.keys])


def test_linear_hybrid_drops_keys_measured_as_straight_segments():
    motion = synthetic.demo_clip()
    layout = _layout(motion, "XYZ")
    values = pose_values(motion, layout)
    linear = extract_channels(motion, layout, values, "hybrid", {"count": 25}, fitted=False, grid=3.0)
    assert all(ck.handles is None for ck in linear.plan.values())
    assert linear.params["stored_keys"] == 25 * len(values)
    played = motion_from_values(motion.skeleton, layout, planned_values(linear.plan, motion.n_frames),
                                motion.n_frames, motion.fps)  # fmt: skip
    err = position_errors(motion, played).mean()
    assert err == pytest.approx(linear.error["position_mean"], rel=1e-9)
    # straight segments judged as straight lines do no worse than the same budget judged as Bezier fits
    judged_as_bezier = extract_channels(motion, layout, values, "hybrid", {"count": 25}, fitted=True, grid=3.0)
    for ck in judged_as_bezier.plan.values():
        ck.handles = None
    played_b = motion_from_values(motion.skeleton, layout, planned_values(judged_as_bezier.plan, motion.n_frames),
                                  motion.n_frames, motion.fps)  # fmt: skip
    err_b = position_errors(motion, played_b).mean()
    assert err <= err_b * (1 + 1e-9)
    assert any(not np.array_equal(ck.keys, judged_as_bezier.plan[k].keys) for k, ck in linear.plan.items())


class _Cancelled(Exception):
    pass


@pytest.mark.parametrize("method", ["hybrid", "optimal"])
def test_long_extractions_report_progress_often_and_stop_when_it_raises(method):
    """The progress callback hears from the hybrid's channel pass (every round) and the optimum's table,
    not only between stages, with fractions that never go back; raising from it stops the extraction
    (what Esc does in Blender)."""
    motion = synthetic.demo_clip()
    layout = _layout(motion, "ZXY")
    values = pose_values(motion, layout)
    heard = []
    extract_channels(motion, layout, values, method, {"count": 20}, progress=heard.append)
    assert len(heard) >= 8 and heard == sorted(heard) and heard[-1] <= 1.0

    def cancel_midway(fraction):
        if len(heard) >= 4:
            raise _Cancelled
        heard.append(fraction)

    heard.clear()
    with pytest.raises(_Cancelled):
        extract_channels(motion, layout, values, method, {"count": 20}, progress=cancel_midway)
