"""Whole-pose keys on Euler and axis-angle bones play what the pose method chose: where one curve
per channel leaves the slerp between two keyframes, the bone's rotation curves get more keys.

References: scipy's Rotation (Euler modes, Slerp) for the slerp between the pose keys and for what
the written Euler curves play; the same extraction without the extra keys.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from core import synthetic
from core.channels import ChannelLayout, motion_from_values, pose_values
from core.keyframes import channel_keys, evaluate, position_errors, reconstruct
from core.keyframes.channel_keys import extract_channels, follow_slerp, planned_values


def _clip(mode):
    motion = synthetic.demo_clip()
    layout = ChannelLayout({name: mode for name in motion.skeleton.names})
    return motion, layout, pose_values(motion, layout)


def _xyzw(q):
    return np.concatenate((q[:, 1:], q[:, :1]), axis=1)


@pytest.mark.parametrize("fitted", [True, False], ids=["BEZIER", "LINEAR"])
def test_extra_keys_bring_euler_playback_to_the_slerp(fitted, monkeypatch):
    motion, layout, values = _clip("XYZ")
    result = extract_channels(motion, layout, values, "uniform", {"count": 12}, fitted=fitted)
    slerp, _ = evaluate(motion, reconstruct(motion, result.keys), result.metric)
    # the report is what the written curves play (heads, tips and sides of every bone)
    played = motion_from_values(motion.skeleton, layout, planned_values(result.plan, motion.n_frames),
                                motion.n_frames, motion.fps)  # fmt: skip
    err = position_errors(motion, played)
    assert err.mean() == pytest.approx(result.error["position_mean"], rel=1e-9)
    assert err.max() == pytest.approx(result.error["position_max"], rel=1e-9)
    # ... and that is the slerp the method chose, within a few percent
    assert result.error["position_mean"] < 1.02 * slerp["position_mean"]
    assert result.error["position_max"] < 1.02 * slerp["position_max"]
    # extra keys on rotation curves only, counted in the stored keys; LINEAR stays LINEAR
    extra = result.params["follow_keys"]
    assert 0 < extra < 0.05 * len(values) * len(result.keys)
    assert result.params["stored_keys"] == len(values) * len(result.keys) + extra
    for (_, prop, _), ck in result.plan.items():
        assert set(result.keys) <= set(ck.keys) and (ck.handles is None) == (not fitted)
        assert prop == "rotation_euler" or len(ck.keys) == len(result.keys)
    # without them, one Euler curve per channel leaves the slerp by far
    monkeypatch.setattr(channel_keys, "FOLLOW_SLERP", np.inf)
    bare = extract_channels(motion, layout, values, "uniform", {"count": 12}, fitted=fitted)
    assert bare.params["follow_keys"] == 0
    assert bare.error["position_max"] > 3 * slerp["position_max"]


def test_each_bone_stays_within_the_tolerance_of_scipys_slerp():
    motion, layout, values = _clip("XYZ")
    keys = np.arange(0, motion.n_frames, 40)
    keys = np.append(keys, motion.n_frames - 1) if keys[-1] != motion.n_frames - 1 else keys
    rebuilt = reconstruct(motion, keys)
    sparse = {k: v[keys] for k, v in values.items()}
    targets = channel_keys.rebuilt_channel_values(rebuilt, layout, sparse, keys)
    tolerance = 0.002 * motion.skeleton.size()
    extra = follow_slerp(motion, layout, targets, keys, rebuilt, True, tolerance)
    assert extra  # the demo clip turns far enough between keys 40 frames apart
    plan = channel_keys.pose_key_plan(motion, layout, sparse, targets, keys, rebuilt, True, tolerance)
    curves = planned_values(plan, motion.n_frames)
    reach = motion.skeleton.reach()
    frames = np.arange(motion.n_frames)
    for j, bone in enumerate(motion.skeleton.names):
        if reach[j] == 0:
            continue
        xyz = np.stack([curves[(bone, "rotation_euler", i)] for i in range(3)], axis=1)
        played = Rotation.from_euler("xyz", xyz)
        slerp = Slerp(keys, Rotation.from_quat(_xyzw(motion.rotations[keys, j])))(frames)
        departure = (played * slerp.inv()).magnitude() * reach[j]
        assert departure.max() <= tolerance * 1.001, bone


def test_extra_keys_respect_each_channels_own_key_count():
    motion, layout, values = _clip("XYZ")
    keys = np.linspace(0, motion.n_frames - 1, 8).astype(int)
    rebuilt = reconstruct(motion, keys)
    targets = channel_keys.rebuilt_channel_values(rebuilt, layout, {k: v[keys] for k, v in values.items()}, keys)
    free = follow_slerp(motion, layout, targets, keys, rebuilt, False, 1e-4)
    assert max(len(k) for k in free.values()) > 10
    capped = follow_slerp(motion, layout, targets, keys, rebuilt, False, 1e-4, caps=dict.fromkeys(values, 10))
    assert capped and max(len(k) for k in capped.values()) == 10


def test_quaternion_bezier_keys_need_no_extra_keys():
    motion, layout, values = _clip("QUATERNION")
    result = extract_channels(motion, layout, values, "simplify", {"count": 15})
    assert result.params["follow_keys"] == 0
