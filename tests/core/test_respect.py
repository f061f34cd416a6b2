"""The user's own keys respected (core.keyframes.respect, the caps of hybrid.drop_channel_keys and
channel_keys.extract_channels): no channel gains keys, sparse channels are kept, bones and frames chosen.

References: the key counts given; the original values for every kept channel and frame.
"""

import numpy as np
import pytest

from core import synthetic
from core.channels import ChannelLayout, pose_values
from core.keyframes.channel_keys import extract_channels
from core.keyframes.hybrid import drop_channel_keys
from core.keyframes.respect import key_scope


def _clip(mode="QUATERNION"):
    motion = synthetic.demo_clip()
    layout = ChannelLayout({name: mode for name in motion.skeleton.names})
    return motion, layout, pose_values(motion, layout)


def test_caps_bound_each_channel_and_free_budget_goes_to_the_others():
    t = np.arange(201)
    values = np.stack((np.sin(t / 3.0), np.sin(t / 3.0), np.sin(t / 50.0)), axis=1)
    keys = np.arange(0, 201, 10)  # 21 grid keys
    caps = np.array([5, 21, 21])
    kept = drop_channel_keys(values, keys, np.ones(3), 36, caps=caps)
    assert len(kept[0]) <= 5 and sum(len(k) for k in kept) == 36
    assert len(kept[1]) > 36 / 3  # the busy uncapped channel takes the capped one's share
    for k in kept:
        assert k[0] == 0 and k[-1] == 200
    # caps alone (a whole-pose method): no budget beyond the grid
    alone = drop_channel_keys(values, keys, np.ones(3), 3 * 21, caps=np.array([4, 3, 21]))
    assert [len(k) for k in alone] == [4, 3, 21]
    # a cap below the two end keys keeps the ends
    assert [len(k) for k in drop_channel_keys(values, keys, np.ones(3), 63, caps=np.array([1, 21, 21]))][0] == 2


def test_scope_keeps_sparse_channels_and_rotations_as_a_whole():
    channels = [("a", "rotation_quaternion", i) for i in range(4)] + [("a", "location", i) for i in range(3)]
    channels += [("b", "rotation_euler", i) for i in range(3)]
    dense = np.arange(100.0)
    key_frames = {k: dense for k in channels}
    key_frames[("a", "rotation_quaternion", 2)] = np.array([0.0, 50.0, 99.0])  # one component hand-keyed
    key_frames[("a", "location", 1)] = np.array([0.0, 99.0])
    key_frames[("b", "rotation_euler", 0)] = np.array([7.0])  # a single key: nothing to thin
    scope = key_scope(key_frames, channels, 100)
    assert set(scope.rekey) == {("a", "location", 0), ("a", "location", 2)}
    assert set(scope.kept_sparse) == {("a", "rotation_quaternion", i) for i in range(4)} | {("a", "location", 1)}
    assert set(scope.kept_other) == {("b", "rotation_euler", i) for i in range(3)}
    assert scope.caps == {("a", "location", 0): 100, ("a", "location", 2): 100}
    # asked to re-key sparse channels: capped at their own key count
    again = key_scope(key_frames, channels, 100, keep_sparse=False)
    assert again.caps[("a", "rotation_quaternion", 2)] == 3 and again.caps[("a", "location", 1)] == 2
    assert set(again.kept) == {("b", "rotation_euler", i) for i in range(3)}
    # bones and span
    part = key_scope(None, channels, 100, span=(10, 39), bones={"b"})
    assert set(part.rekey) == {("b", "rotation_euler", i) for i in range(3)} and part.n_frames == 30
    assert set(part.caps.values()) == {30}
    with pytest.raises(ValueError, match="empty frame range"):
        key_scope(None, channels, 100, span=(50, 40))


def test_sparse_channels_are_kept_and_never_gain_keys():
    motion, layout, values = _clip("QUATERNION")
    n = motion.n_frames
    posed = np.linspace(0, n - 1, 15).round()
    key_frames = {k: posed for k in values}
    kept = extract_channels(motion, layout, values, "hybrid", {"ratio": 0.05}, key_frames=key_frames)
    assert kept.plan == {} and kept.params["kept_sparse"] == len(values) and kept.error["position_max"] == 0
    for method in ("hybrid", "simplify", "uniform"):
        again = extract_channels(motion, layout, values, method, {"ratio": 0.1}, key_frames=key_frames,
                                 keep_sparse=False)  # fmt: skip
        assert len(again.plan) == len(values) and all(len(ck.keys) <= 15 for ck in again.plan.values())
        assert again.params["stored_keys"] <= 15 * len(values)


def test_bones_and_span_rekey_only_those_channels_and_frames():
    motion, layout, values = _clip("XYZ")
    bones = set(motion.skeleton.names[1:3])
    result = extract_channels(motion, layout, values, "hybrid", {"count": 8}, bones=bones, span=(100, 199))
    assert {k[0] for k in result.plan} == bones
    assert len(result.scope.kept) == len([k for k in values if k[0] not in bones])
    for k, ck in result.plan.items():
        assert ck.keys[0] == 100 and ck.keys[-1] == 199
        assert np.allclose(ck.values[[0, -1]], values[k][[100, 199]])  # the ends join the curve outside
    assert result.params["stored_keys"] == 8 * len(result.plan)  # the hybrid's budget: keys per channel on average
    assert result.played.n_frames == 100 and result.per_frame_error.shape == (100,)
