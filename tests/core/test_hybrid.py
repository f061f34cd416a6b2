import numpy as np
import pytest

from core.keyframes.bezier import evaluate, fit_handles
from core.keyframes.hybrid import drop_channel_keys


def deviation_by_fit_handles(y: np.ndarray) -> np.ndarray:
    """Largest deviation of the fitted single-segment Bezier over y (n+1, C), via bezier.py."""
    keys = np.array([0, len(y) - 1])
    h1, h2 = fit_handles(y, keys)
    return np.abs(evaluate(y[keys], h1, h2, keys, len(y)) - y).max(axis=0)


def test_budget_met_on_grid_subsets_smooth_channels_drop_first():
    t = np.arange(201)
    smooth = np.sin(t / 60.0)  # a cubic per long segment does
    busy = np.sin(t / 3.0)  # needs every grid key
    values = np.stack((smooth, busy), axis=1)
    keys = np.arange(0, 201, 10)
    budget = 30
    kept = drop_channel_keys(values, keys, np.ones(2), budget, forced=np.array([10]))
    assert sum(len(k) for k in kept) == budget
    for k in kept:
        assert set(k) <= set(keys) and k[0] == 0 and k[-1] == 200 and 100 in k
    assert len(kept[0]) < len(kept[1])


def test_lever_arms_weigh_the_choice():
    t = np.arange(101)
    values = np.stack((np.sin(t / 7.0), np.sin(t / 7.0)), axis=1)
    keys = np.arange(0, 101, 5)
    kept = drop_channel_keys(values, keys, np.array([1.0, 10.0]), 30)
    assert len(kept[1]) > len(kept[0])


def test_batched_fits_match_single_fits():
    from core.keyframes.hybrid import _SegmentFits

    rng = np.random.default_rng(8)
    values = np.cumsum(rng.normal(size=(60, 3)), axis=0)
    fits = _SegmentFits(np.ascontiguousarray(values.T))
    channel, start, stop = np.array([0, 1, 2, 0, 1]), np.array([0, 3, 10, 20, 58]), np.array([1, 5, 50, 45, 59])
    got = fits.errors(channel, start, stop)
    for g, c, a, b in zip(got, channel, start, stop):
        assert np.isclose(g, deviation_by_fit_handles(values[a : b + 1, c : c + 1])[0])


def _thumb_spin(mode):
    """A smooth random motion on a CMU-named rig whose right thumb alone turns 0.9 of a half turn
    between frames 60 and 61 (as CMU 131_03's thumb does), and its channels in ``mode``."""
    from core import quaternion as quat
    from core.channels import ChannelLayout, pose_values
    from tests import rigs

    skeleton = rigs.build("cmu_cgspeed")
    motion = rigs.wiggle(skeleton, n_frames=150, seed=3)
    thumb = skeleton.index("RThumb")
    spin = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 0.9 * np.pi)
    motion.rotations[61:, thumb] = quat.multiply(motion.rotations[61:, thumb], spin)
    layout = ChannelLayout({name: mode for name in skeleton.names})
    return motion, layout, pose_values(motion, layout), thumb


def test_bone_jumps_finds_one_bone_spinning_on_its_own():
    from core.keyframes.hybrid import bone_jumps

    motion, _, _, thumb = _thumb_spin("QUATERNION")
    frames, joints = bone_jumps(motion)
    assert list(frames) == [60] and list(joints) == [thumb]
    motion.rotations[:] = motion.rotations[0]  # a still pose: no step is a jump
    assert len(bone_jumps(motion)[0]) == 0


def test_bone_jumps_finds_a_flick_out_and_back():
    """06_14's left thumb flips half a turn and back from frame to frame: both steps are jumps,
    though neither is isolated from the other."""
    from core import quaternion as quat
    from core.keyframes.hybrid import bone_jumps

    motion, _, _, thumb = _thumb_spin("QUATERNION")
    motion.rotations[61:, thumb] = motion.rotations[60, thumb]  # no spin, a still thumb from frame 60 …
    flip = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 0.9 * np.pi)
    for t in (90, 92):  # … flicked away on frames 90 and 92 only
        motion.rotations[t, thumb] = quat.multiply(motion.rotations[t, thumb], flip)
    frames, joints = bone_jumps(motion)
    assert set(frames[joints == thumb].tolist()) == {89, 90, 91, 92}
    motion.rotations[90:93, thumb] = motion.rotations[89, thumb]
    assert len(bone_jumps(motion)[0]) == 0


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ"])
def test_hybrid_keys_a_bone_jump_on_both_sides(mode):
    from core.keyframes import position_errors
    from core.keyframes.channel_keys import extract_channels
    from core.keyframes.error import measured_points, pose_points

    motion, layout, values, thumb = _thumb_spin(mode)
    result = extract_channels(motion, layout, values, "hybrid", {"count": 15})
    assert result.params["bone_jumps"] == 1
    for (bone, _, _), ck in result.plan.items():
        if bone == "RThumb":
            assert {60, 61} <= set(ck.keys.tolist())
    points = measured_points(motion.skeleton)
    own = points.owner == thumb
    tip_jump = np.linalg.norm(np.diff(pose_points(motion)[60:62, own], axis=0), axis=-1).max()
    thumb_error = position_errors(motion, result.played)[:, own]
    # not smeared over the segments around it (without the pins: 0.65 × the jump, its worst frame)
    assert thumb_error[55:67].max() < 0.35 * tip_jump
    assert not 55 <= thumb_error.max(axis=1).argmax() < 67


def test_levers_count_the_measured_points_of_a_zero_length_leaf():
    """A leaf whose End Site has no length (Bandai's hands and toes) still turns its side points."""
    from core.keyframes.channel_keys import channel_levers
    from core.keyframes.error import SHELL_FRACTION, mean_bone_length
    from core.motion import Motion
    from tests import rigs

    skeleton = rigs.build("cmu_cgspeed")
    hand = skeleton.index("RightHand")
    ends = [e for e, p in enumerate(skeleton.end_site_parents) if p == skeleton.index("RThumb")]
    skeleton.end_site_offsets[ends] = 0.0  # the thumb: a leaf with a zero-length End Site
    motion = Motion.rest(skeleton, 3, 30.0)
    names = [("RThumb", "rotation_euler", 0), ("RThumb", "rotation_quaternion", 1), ("RightHand", "rotation_euler", 0),
             ("Hips", "location", 0)]  # fmt: skip
    thumb, thumb_q, hand_lever, loc = channel_levers(motion, names)
    shell = SHELL_FRACTION * mean_bone_length(skeleton)
    assert thumb == pytest.approx(shell, rel=1e-6) and thumb_q == pytest.approx(2 * shell, rel=1e-6)
    assert hand_lever >= skeleton.reach()[hand] and loc == 1.0


def test_many_spans_of_one_length_fit_as_the_spans_end_to_end_and_padded_do():
    """The closed-form fit of many same-length spans (one basis a length), the fit of spans laid end to end and
    the padded rows' fit agree,
    for Bezier and straight segments."""
    from core.keyframes.hybrid import EXACT_ROWS, RESIDUAL_ROWS, _SegmentFits

    rng = np.random.default_rng(3)
    values = np.cumsum(rng.normal(size=(300, 4)), axis=0)
    lengths = [2, 7, 15, RESIDUAL_ROWS + 20]  # the last past the residual matrices: handles, then the residual
    m = len(lengths) * EXACT_ROWS
    channel = rng.integers(0, 4, m)
    start = rng.integers(0, 300 - max(lengths), m)
    stop = start + np.repeat(lengths, EXACT_ROWS)
    for linear in (False, True):
        fits = _SegmentFits(np.ascontiguousarray(values.T), linear=linear)
        exact, ragged = fits.errors(channel, start, stop), fits._ragged_errors(channel, start, stop)
        padded = fits._bucketed_errors(channel, start, stop)
        assert np.allclose(exact, ragged, rtol=1e-7, atol=1e-9)  # rounding apart (values of some units)
        assert np.allclose(exact, padded, rtol=1e-7, atol=1e-9)
        assert exact.max() > 0.1  # real deviations, not all zero


@pytest.mark.parametrize("target", [{"count": 15}, {"max_error": 0.5}])
def test_a_caller_measuring_the_curves_itself_gets_the_same_keys(target):
    """measure=False (Extract Keyframes measures the curves it wrote): the same plan, no figures for a
    count; a bound is measured anyway (its search runs on it)."""
    from core.keyframes.channel_keys import extract_channels

    motion, layout, values, _ = _thumb_spin("XYZ")
    measured = extract_channels(motion, layout, values, "hybrid", target)
    bare = extract_channels(motion, layout, values, "hybrid", target, measure=False)
    assert measured.plan.keys() == bare.plan.keys()
    for k, ck in measured.plan.items():
        assert np.array_equal(ck.keys, bare.plan[k].keys) and np.array_equal(ck.values, bare.plan[k].values)
    if "count" in target:
        assert bare.error == {} and bare.played is None and measured.error["position_mean"] > 0
    else:
        assert bare.error["position_max"] == measured.error["position_max"] <= 0.5


def test_known_points_are_returned_for_that_motion_only():
    from core.keyframes.error import known_points, pose_points

    motion, _, _, _ = _thumb_spin("XYZ")
    other = motion.frames(slice(0, 50))
    points = pose_points(motion)
    marker = np.zeros_like(points)
    with known_points(motion, marker):
        assert pose_points(motion) is marker
        assert np.allclose(pose_points(other), points[:50])
    assert np.allclose(pose_points(motion), points)


def test_pairwise_order_is_the_sorted_order():
    """The channel pass decides which of two neighbours goes first pair by pair (_before); it is the
    order of sorting by cost, equal costs in the scrambled order (_cheapest_first)."""
    from core.keyframes.hybrid import _before, _cheapest_first

    rng = np.random.default_rng(5)
    flat = rng.permutation(5000)[:400]
    cost = np.zeros(5000)
    cost[flat] = rng.integers(0, 20, 400) / 4.0  # many ties
    order = flat[_cheapest_first(flat, cost[flat])]
    position = np.empty(5000, dtype=int)
    position[order] = np.arange(len(order))
    x, y = rng.choice(flat, 2000), rng.choice(flat, 2000)
    distinct = x != y
    assert np.array_equal(_before(x, y, cost)[distinct], (position[x] < position[y])[distinct])


def test_a_still_channel_keeps_only_its_locked_keys():
    """A curve that does not move (an unanimated finger) drops its free keys at once when the budget
    drops that many; the budget is met exactly either way, and its keys go to the moving curves."""
    t = np.arange(121)
    values = np.stack((np.full(121, 0.3), np.sin(t / 9.0), np.cos(t / 5.0)), axis=1)
    keys = np.arange(0, 121, 4)
    for budget in (40, 3 * len(keys) - 5):  # far below the still curve's 31 keys, and just under the total
        kept = drop_channel_keys(values, keys, np.ones(3), budget, forced=np.array([15]))
        assert sum(len(k) for k in kept) == budget
        assert all(k[0] == 0 and k[-1] == 120 and 60 in k for k in kept)
    kept = drop_channel_keys(values, keys, np.ones(3), 40, forced=np.array([15]))
    assert kept[0].tolist() == [0, 60, 120]


def _span_error(y: np.ndarray, linear: bool) -> float:
    """Largest deviation of a span's values y (n + 1,) from its best segment, fitted here directly: the ends on
    y's ends, the Bezier handles by least squares (no ridge), or a straight line."""
    n = len(y) - 1
    s = np.arange(n + 1) / n
    t = 1.0 - s
    ends = y[0] * t**3 + y[-1] * s**3 if not linear else y[0] * t + y[-1] * s
    if linear:
        return float(np.abs(y - ends).max())
    basis = np.stack((3 * t * t * s, 3 * t * s * s), axis=1)
    handles = np.linalg.lstsq(basis, y - ends, rcond=None)[0]
    return float(np.abs(y - ends - basis @ handles).max())


def test_spans_shared_by_every_curve_fit_as_each_span_alone_does():
    """The first fit of a channel pass (each grid key's span on every curve at once) gives each span's own
    best-fit deviation, for short and long spans, Bezier and straight."""
    from core.keyframes.hybrid import RESIDUAL_ROWS, _SegmentFits

    rng = np.random.default_rng(5)
    values = np.cumsum(rng.normal(size=(400, 5)), axis=0)
    start = np.array([0, 3, 10, 40, 100, 150])
    stop = start + np.array([2, 2, 9, 30, RESIDUAL_ROWS + 30, 6])
    channels = np.array([0, 2, 4])
    for linear in (False, True):
        shared = _SegmentFits(np.ascontiguousarray(values.T), linear=linear).shared_errors(start, stop, channels)
        direct = [[_span_error(values[a : b + 1, c], linear) for c in channels] for a, b in zip(start, stop)]
        assert np.allclose(shared, direct, rtol=1e-4, atol=1e-5)  # the fit's tiny ridge apart (values of some units)
        assert shared.max() > 0.1


def test_cheapest_keys_are_the_take_lowest_costs():
    """A round's cheapest keys (_cheapest: a partition of the keys under a sampled cost, or of all) are
    the ``take`` lowest costs, whether the sample's cost leaves enough keys under it or not."""
    from core.keyframes.hybrid import _cheapest

    rng = np.random.default_rng(8)
    for n, take in ((40, 3), (600, 600), (5000, 1), (5000, 7), (30000, 12000), (30000, 29999)):
        flat = rng.permutation(3 * n)[:n]
        cost = rng.random(n)
        got = _cheapest(flat, cost, take)
        assert len(got) == take and set(got.tolist()) == set(flat[np.argsort(cost)[:take]].tolist())
    # every 8th key free, the others dear: the sampled cost (0) leaves 1,000 keys under it, too few for 3,000
    cost = np.ones(8000)
    cost[::8] = 0.0
    flat = np.arange(8000)
    got = _cheapest(flat, cost, 3000)
    assert len(got) == len(set(got.tolist())) == 3000 and set(flat[::8].tolist()) <= set(got.tolist())


def test_present_is_unique_with_its_inverse():
    from core.keyframes.hybrid import _present

    rng = np.random.default_rng(3)
    for size in (1, 7, 500):
        values = rng.integers(0, size, rng.integers(1, 300))
        present, rank = _present(values, size)
        want, inverse = np.unique(values, return_inverse=True)
        assert np.array_equal(present, want) and np.array_equal(rank, inverse)


def test_fit_tables_kept_for_the_session_give_the_keys_of_fresh_ones(monkeypatch):
    """The span fit tables depend on the span length only: a second pass (and a LINEAR one between, whose
    tables differ) keeps what fresh tables keep, and the kept tables cannot be changed by a caller."""
    from core.keyframes import hybrid

    rng = np.random.default_rng(5)
    values = np.cumsum(rng.normal(size=(400, 6)), axis=0)
    keys = np.unique(np.r_[0, rng.choice(400, 300, replace=False), 399])
    run = lambda linear=False: drop_channel_keys(values, keys, np.ones(6), 200, linear=linear)  # noqa: E731
    monkeypatch.setattr(hybrid, "_BASES", {})
    monkeypatch.setattr(hybrid, "_RESIDUALS", {})
    fresh = run()
    assert hybrid._RESIDUALS and hybrid._BASES  # kept
    run(linear=True)
    again = run()
    assert all(np.array_equal(a, b) for a, b in zip(fresh, again))
    table = next(iter(hybrid._RESIDUALS[(1e-6, False)].values()))
    with pytest.raises(ValueError):
        table[0, 0] = 1.0
