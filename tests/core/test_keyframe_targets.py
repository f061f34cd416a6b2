"""Targets (core/keyframes/targets.py): any bound with any method, the hybrid included, guaranteed on
what the planned curves play; the angle measured against scipy's rotations."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import quaternion as quat
from core import synthetic
from core.channels import ChannelLayout, motion_from_values, pose_values
from core.keyframes.channel_keys import extract_channels, planned_values
from core.keyframes.error import position_errors
from core.keyframes.targets import check_target, fewest, frames_to_key, rotation_angles
from core.motion import Motion


@pytest.fixture(scope="module")
def rig():
    motion = synthetic.demo_clip().frames(slice(None, None, 2))  # 195 frames
    layout = ChannelLayout({name: "XYZ" for name in motion.skeleton.names[::2]})  # Euler and quaternion bones
    values = pose_values(motion, layout)
    return motion_from_values(motion.skeleton, layout, values, motion.n_frames, motion.fps), layout, values


def scipy_angles(a, b):
    """(T, J) degrees between the rotations, by scipy (x, y, z, w order)."""
    ra = Rotation.from_quat(np.roll(a.reshape(-1, 4), -1, axis=1))
    rb = Rotation.from_quat(np.roll(b.reshape(-1, 4), -1, axis=1))
    return np.degrees((ra.inv() * rb).magnitude()).reshape(a.shape[:-1])


def played(motion, layout, values, result):
    """The motion the result's curves play, evaluated from the plan (kept channels as they were)."""
    curves = {k: v for k, v in values.items() if k not in result.plan}
    curves.update(planned_values(result.plan, motion.n_frames))
    return motion_from_values(motion.skeleton, layout, curves, motion.n_frames, motion.fps)


def test_rotation_angles_match_scipy():
    motion = synthetic.demo_clip().frames(slice(0, 50))
    rng = np.random.default_rng(3)
    rot_a, rot_b = (quat.normalize(rng.normal(size=motion.rotations.shape)) for _ in range(2))
    rot_b[::2] *= -1.0  # the sign of a quaternion is no rotation
    m_a = Motion(motion.skeleton, motion.translations, rot_a, motion.fps)
    m_b = Motion(motion.skeleton, motion.translations, rot_b, motion.fps)
    assert rotation_angles(m_a, m_b) == pytest.approx(scipy_angles(rot_a, rot_b), abs=1e-7)


def test_check_target_refuses_what_cannot_be_met():
    assert check_target({"max_angle": 2}) == ("max_angle", 2.0)
    for bad in ({}, {"count": 3, "ratio": 0.1}, {"max_error": 0}, {"max_angle": 180}, {"max_error": float("nan")},
                {"speed": 1}):  # fmt: skip
        with pytest.raises(ValueError):
            check_target(bad)


def test_frames_to_key_takes_the_worst_frame_of_each_run_over_the_bound():
    per_frame = np.array([0, 3, 5, 4, 0, 0, 2, 0, 9, 9.5])
    assert list(frames_to_key(per_frame, 1.0, np.array([0, 2]))) == [3, 6, 9]  # 2 is a key already
    assert not len(frames_to_key(per_frame, 10.0, np.array([0])))


@pytest.mark.parametrize("interpolate", [False, True])
def test_fewest_finds_the_smallest_passing_count(interpolate):
    probes = []

    def measure(n):
        probes.append(n)
        return 1000.0 / n**1.5

    assert fewest(measure, 1.0, 2, 5000, interpolate=interpolate) == 100  # 1000 / 100^1.5 = 1
    found = fewest(measure, 1.0, 2, 5000, tolerance=0.05, interpolate=interpolate)
    assert 100 <= found <= 105


@pytest.mark.parametrize("method", ["hybrid", "simplify", "uniform", "optimal"])
@pytest.mark.parametrize("target", [{"max_error": 0.03}, {"max_angle": 3.0}])
def test_every_method_meets_a_bound_on_what_its_curves_play(rig, method, target):
    motion, layout, values = rig
    result = extract_channels(motion, layout, values, method, target)
    rebuilt = played(motion, layout, values, result)
    if "max_error" in target:
        worst = position_errors(motion, rebuilt).max()
        assert worst <= target["max_error"] and result.error["position_max"] == pytest.approx(worst)
    else:
        worst = scipy_angles(motion.rotations, rebuilt.rotations).max()
        assert worst <= target["max_angle"] + 1e-9 and result.error["angle_max"] == pytest.approx(worst, abs=1e-6)
    bound = next(iter(target.values()))
    assert worst > 0.3 * bound  # not met by keeping everything
    dense = len(values) * motion.n_frames
    assert result.params["bound_met"] and result.params["stored_keys"] < (0.95 if method == "uniform" else 0.5) * dense


def test_the_hybrid_meets_a_max_error_with_fewer_stored_keys_than_whole_poses(rig):
    motion, layout, values = rig
    hybrid = extract_channels(motion, layout, values, "hybrid", {"max_error": 0.02})
    poses = extract_channels(motion, layout, values, "simplify", {"max_error": 0.02})
    assert hybrid.params["stored_keys"] < 0.7 * poses.params["stored_keys"]
    # and a count target near what it found keeps the keys per channel it is given
    counted = extract_channels(motion, layout, values, "hybrid", {"count": 10})
    assert counted.params["keys_per_channel"] == 10 and counted.params["stored_keys"] == 10 * len(values)


def test_a_threshold_target_is_refused_by_other_methods_before_any_work(rig):
    motion, layout, values = rig
    with pytest.raises(ValueError, match="threshold method only"):
        extract_channels(motion, layout, values, "hybrid", {"threshold": 0.1})


@pytest.mark.parametrize("method", ["hybrid", "simplify"])
def test_a_bound_never_gives_a_hand_keyed_curve_more_keys_than_it_had(rig, method):
    motion, layout, values = rig
    posed = np.linspace(0, motion.n_frames - 1, 15).round()
    key_frames = {k: posed for k in values}
    result = extract_channels(motion, layout, values, method, {"max_angle": 0.01}, key_frames=key_frames,
                              keep_sparse=False)  # fmt: skip
    assert all(len(ck.keys) <= 15 for ck in result.plan.values())
    assert not result.params["bound_met"]  # 0.01° is out of reach with 15 keys a curve: said, not hidden
