"""Keyframe methods beyond the paper: the exact optimum, the patent's activity method, curve
simplification, and the local search they share."""

import importlib.util
import itertools

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.io.bvh import read_bvh
from core.keyframes import METHODS, PoseMetric, evaluate, extract_keyframes, position_errors, reconstruct
from core.keyframes.activity import (
    ActivityParams,
    activity_keys,
    activity_metric,
    activity_signal,
    find_peaks,
    initial_keys,
    split_wide,
    vote,
)
from core.keyframes.baselines import simplify_keys
from core.keyframes.error import pose_points
from core.keyframes.local_search import (
    CachedCost,
    exchange_search,
    greedy_insert,
    greedy_remove,
    local_search,
    total_cost,
)
from core.keyframes.optimal import optimal_curve, optimal_keys, segment_table, solve
from core.keyframes.segments import SegmentErrors
from core.motion import Motion
from core.skeleton import Skeleton
from tests.conftest import ROOT, shared_file


def cmu(name: str) -> Motion:
    return read_bvh(shared_file(f"cmu_bvh_cgspeed/{name}.bvh"))


def frame_errors(motion: Motion, keys: np.ndarray) -> np.ndarray:
    """Independent reference: (T,) the reports' per-frame error (mean over the measured points of every
    bone: heads, leaf tips, sides) of reconstruct() by plain FK."""
    return position_errors(motion, reconstruct(motion, keys)).mean(axis=1)


@pytest.fixture(scope="module")
def clip() -> Motion:
    return synthetic.demo_clip().frames(slice(None, None, 3))  # 130 frames, walk + turn + jump


@pytest.fixture(scope="module")
def odd_clip() -> Motion:
    """The demo clip on a skeleton with rest rotations, a joint at its parent's place and an unmoving joint."""
    m = synthetic.demo_clip().frames(slice(0, 120))
    sk = m.skeleton
    rng = np.random.default_rng(7)
    offsets = sk.rest_translations.copy()
    offsets[sk.index("LeftShoulder")] = 0.0
    skeleton = Skeleton(sk.names, sk.parents, offsets, quat.normalize(rng.normal(size=(sk.n_joints, 4))), sk.channels)
    rot = m.rotations.copy()
    rot[:, sk.index("Neck")] = quat.normalize(np.array([0.9, 0.1, 0.2, 0.0]))
    rot[5:9, sk.index("Spine")] *= -1.0  # sign flips must not matter
    return Motion(skeleton, m.translations, rot, m.fps)


# ---- the segment-error kernel -------------------------------------------------------------
@pytest.mark.parametrize("kind", ["position", "pose"])
def test_segment_errors_match_reconstruct(odd_clip, kind):
    m = odd_clip
    metric = PoseMetric.for_motion(m)
    errors = SegmentErrors(m, kind)
    rng = np.random.default_rng(1)
    keys = np.unique(np.r_[0, rng.choice(m.n_frames, 15, replace=False), m.n_frames - 1])
    rebuilt = reconstruct(m, keys)
    if kind == "position":
        expected = frame_errors(m, keys)
    else:
        expected = metric(m.rotations, m.translations, rebuilt.rotations, rebuilt.translations)
    tol = 1e-12 if kind == "position" else 1e-7  # arccos near 1 amplifies rounding to ~1e-8
    assert np.allclose(errors.frame_errors(keys), expected, rtol=0, atol=tol)
    # one gap, many segments (table layout) against mixed gaps (flat layout)
    starts = np.arange(m.n_frames - 40)
    assert np.allclose(errors.gap_errors(starts, 40).ravel(), errors.flat_errors(starts, starts + 40), atol=tol)
    a = rng.integers(0, m.n_frames - 30, 50)
    b = a + rng.integers(1, 30, 50)
    ref = np.array([expected_cost(m, x, y, kind, metric) for x, y in zip(a, b)])
    assert np.allclose(errors.costs(a, b), ref, rtol=0, atol=tol * 30)


def leafy(motion: Motion) -> Motion:
    """``motion`` on its skeleton without End Sites: every leaf bone gets a virtual tip."""
    sk = motion.skeleton
    bare = Skeleton(sk.names, sk.parents, sk.rest_translations, sk.rest_rotations, sk.channels)
    return Motion(bare, motion.translations, motion.rotations, motion.fps)


@pytest.mark.parametrize("source", ["cmu", "leaf tips"])
def test_position_kernel_is_the_reports_measure(source):
    # per-frame errors of the kernel = position_errors(motion, reconstruct(motion, keys)) per frame
    m = cmu("05_02").frames(slice(0, 400)) if source == "cmu" else leafy(synthetic.demo_clip())
    errors = SegmentErrors(m)
    rng = np.random.default_rng(3)
    keys = np.unique(np.r_[0, rng.choice(m.n_frames, m.n_frames // 12, replace=False), m.n_frames - 1])
    expected = frame_errors(m, keys)
    assert np.allclose(errors.frame_errors(keys), expected, rtol=1e-9, atol=1e-12 * expected.max())
    starts = np.arange(0, m.n_frames - 30, 5)
    table = errors.gap_errors(starts, 30)
    for row, a in zip(table[::9], starts[::9]):
        ref = frame_errors(m, np.unique([0, a, a + 30, m.n_frames - 1]))[a + 1 : a + 30]
        assert np.allclose(row, ref, rtol=1e-9, atol=1e-12 * ref.max())


def test_a_leaf_bone_turning_alone_is_seen_by_every_choice():
    # the body still, only the left toe (a leaf) turns: up to 70° at frame 30 at an even pace, back
    # by frame 99; no joint moves. Keys 0, 30, 99 rebuild it exactly (a slerp about one axis).
    n = 100
    sk = synthetic.humanoid()
    rot = np.zeros((n, sk.n_joints, 4))
    rot[..., 0] = 1.0
    t = np.arange(n)
    angle = np.radians(70.0) * np.where(t <= 30, t / 30, (n - 1 - t) / (n - 31))
    rot[:, sk.index("LeftToeBase")] = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), angle)
    trans = np.broadcast_to(sk.rest_translations, (n, sk.n_joints, 3)).copy()
    m = Motion(sk, trans, rot, 30.0)
    assert np.allclose(m.world_positions(), m.world_positions()[:1])  # invisible to a joint measure
    totals = np.array([frame_errors(m, [0, k, n - 1]).sum() for k in range(1, n - 1)])
    best = 1 + int(np.argmin(totals))
    assert best == 30 and totals[best - 1] < 1e-9 < 0.05 * np.sort(totals)[1]  # the one right place
    for method in ("optimal", "activity"):  # both minimise the summed error: the best middle key
        assert extract_keyframes(m, method, count=3).keys.tolist() == [0, best, n - 1], method
    assert local_search(m, np.array([0, 80, n - 1])).tolist() == [0, best, n - 1]
    assert simplify_keys(m, 3).tolist() == [0, 30, n - 1]  # the toe tip is farthest from its chord at 30


def expected_cost(m: Motion, a: int, b: int, kind: str, metric: PoseMetric) -> float:
    keys = np.unique([0, a, b, m.n_frames - 1])
    if kind == "position":
        return float(frame_errors(m, keys)[a + 1 : b].sum())
    r = reconstruct(m, keys)
    return float(metric(m.rotations, m.translations, r.rotations, r.translations)[a + 1 : b].sum())


# ---- the exact optimum ----------------------------------------------------------------------
def brute_force(motion: Motion, max_gap: int) -> dict[int, float]:
    """Least total error per key count over every key set with gaps ≤ max_gap: slerp/lerp + FK of all sets at once."""
    n = motion.n_frames
    masks = np.array(list(itertools.product((False, True), repeat=n - 2)), dtype=bool).reshape(-1, n - 2)
    masks = np.column_stack([np.ones(len(masks), bool), masks, np.ones(len(masks), bool)])
    t = np.arange(n)
    prev = np.maximum.accumulate(np.where(masks, t, -1), axis=1)  # key at or before each frame
    nxt = np.minimum.accumulate(np.where(masks, t, n)[:, ::-1], axis=1)[:, ::-1]  # key at or after
    gaps_ok = np.array([np.diff(np.flatnonzero(m)).max() <= max_gap for m in masks])
    prev, nxt, masks = prev[gaps_ok], nxt[gaps_ok], masks[gaps_ok]
    u = np.where(nxt > prev, (t - prev) / np.maximum(nxt - prev, 1), 0.0)
    rot = quat.slerp(motion.rotations[prev], motion.rotations[nxt], u[..., None])
    trans = motion.translations[prev] + u[..., None, None] * (motion.translations[nxt] - motion.translations[prev])
    rebuilt = Motion(motion.skeleton, trans.reshape(-1, *trans.shape[2:]), rot.reshape(-1, *rot.shape[2:]))
    pos = pose_points(rebuilt).reshape(len(masks), n, -1, 3)
    totals = np.linalg.norm(pos - pose_points(motion), axis=-1).mean(axis=-1).sum(axis=-1)
    counts = masks.sum(axis=1)
    return {int(c): float(totals[counts == c].min()) for c in np.unique(counts)}


@pytest.mark.parametrize("source", ["synthetic", "cmu"])
@pytest.mark.parametrize("max_gap", [13, 4])
def test_optimum_equals_brute_force(source, max_gap):
    if source == "cmu":
        m = cmu("05_02").frames(slice(200, 312, 8))
    else:
        m = synthetic.demo_clip().frames(slice(150, 290, 10))
    assert m.n_frames == 14
    table = segment_table(m, max_gap).table[:, : max_gap + 1]
    best = brute_force(m, max_gap)
    counts = np.array(sorted(best))
    curve = optimal_curve(m, counts, max_gap=max_gap, screen=False)
    for count, total, from_curve in zip(counts, [best[c] for c in counts], curve):
        keys, dp_total = solve(table, count)
        assert len(keys) == count and np.diff(keys).max() <= max_gap
        assert dp_total == pytest.approx(total, abs=1e-9)
        assert from_curve == pytest.approx(total, abs=1e-9)
        assert frame_errors(m, keys).sum() == pytest.approx(total, abs=1e-9)


@pytest.mark.parametrize("source", ["synthetic", "cmu"])
def test_default_optimum_equals_brute_force_within_its_reach(source):
    # the default path: exact table up to G, screened up to the reach, two keys without a table
    if source == "cmu":
        m = cmu("05_02").frames(slice(200, 312, 8))
    else:
        m = synthetic.demo_clip().frames(slice(150, 290, 10))
    from core.keyframes import optimal

    every = brute_force(m, m.n_frames - 1)
    for count in range(2, m.n_frames + 1):
        optimal.clear_cache()
        keys, info = optimal_keys(m, count, max_gap=3)
        assert len(keys) == count and np.diff(keys).max() <= info["reach"]
        assert frame_errors(m, keys).sum() == pytest.approx(info["total_error"], abs=1e-9)
        within = brute_force(m, info["reach"]) if info["reach"] < m.n_frames - 1 else every
        assert info["total_error"] == pytest.approx(within[count], abs=1e-9), count
        assert info["total_error"] >= every[count] - 1e-9


def test_optimum_reaches_past_its_exact_gap_bound(clip):
    # a held pose: one 20-frame segment rebuilds it exactly, a gap the exact table (G = 12) lacks
    m = clip.frames(np.r_[np.zeros(20, dtype=int), np.arange(0, 100)])
    bounded, fixed = optimal_keys(m, 12, max_gap=12, screen=False)
    assert fixed["reach"] == 12 and np.diff(bounded).max() <= 12
    keys, info = optimal_keys(m, 12, max_gap=12)  # screened up to 2·12
    assert info["max_gap"] == 12 and info["reach"] == 24 and np.diff(keys).max() == 20
    assert info["total_error"] < fixed["total_error"]
    assert frame_errors(m, keys).sum() == pytest.approx(info["total_error"], rel=1e-9)
    exact = solve(segment_table(m, m.n_frames - 1).table, 12)  # every gap exact (after: tables are cached)
    assert info["total_error"] == pytest.approx(exact[1], abs=1e-9) and keys.tolist() == exact[0].tolist()
    assert optimal_curve(m, [12], max_gap=119)[0] == pytest.approx(exact[1], abs=1e-9)


def test_optimum_is_below_every_method_on_a_real_capture():
    m = cmu("05_02").frames(slice(0, 1124, 4))  # 281 frames at 30 fps
    metric = PoseMetric.for_motion(m)
    for ratio in (0.05, 0.1):
        count = round(ratio * m.n_frames)
        others = {name: extract_keyframes(m, name, count=count, metric=metric).keys for name in METHODS}
        widest = max(int(np.diff(k).max()) for k in others.values())
        keys, info = optimal_keys(m, count, max_gap=max(widest, 4 * m.n_frames // count))
        assert frame_errors(m, keys).sum() == pytest.approx(info["total_error"], rel=1e-9)
        for name, other in others.items():
            assert len(other) == count
            assert info["total_error"] <= frame_errors(m, other).sum() + 1e-9, name


def test_optimum_reference_figure_on_05_02():
    m = cmu("05_02")
    result = extract_keyframes(m, "optimal", ratio=0.05)
    summary, _ = evaluate(m, reconstruct(m, result.keys), PoseMetric.for_motion(m))
    assert len(result.keys) == 56 and result.params["path"] == "coarse_to_fine"
    # the optimum minimises the reports' measure (every bone's head, tips and sides)
    assert summary["position_mean"] == pytest.approx(result.params["position_mean"], rel=1e-9)
    # the full table's answer (optimal_keys(m, 56, exact=True), 18 s) is 0.093164; before tips and
    # sides counted, the joint-only optimum measured 0.0934 on this measure
    assert 0.093164 - 1e-6 <= summary["position_mean"] <= 1.005 * 0.093164


def test_optimum_refuses_non_finite_motion_naming_the_frame(clip):
    m = clip.frames(slice(0, 40))
    for bad in (np.nan, np.inf):
        rot = m.rotations.copy()
        rot[17, 3, 1] = bad
        broken = Motion(m.skeleton, m.translations, rot, m.fps)
        with pytest.raises(ValueError, match="frame 17"):
            optimal_keys(broken, 5)
        with pytest.raises(ValueError, match="frame 17"):
            optimal_curve(broken, [5])
    trans = m.translations.copy()
    trans[31, 0, 2] = np.nan
    with pytest.raises(ValueError, match="frame 31"):
        optimal_keys(Motion(m.skeleton, trans, m.rotations, m.fps), 5)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_optimum_on_tiny_clips(clip, n):
    m = clip.frames(slice(0, n))
    for count in (1, 2, 3, 10):
        keys, info = optimal_keys(m, count)
        want = min(max(count, 2 if n > 1 else 1), n)
        assert len(keys) == want and keys[0] == 0 and keys[-1] == n - 1
        assert info["total_error"] == pytest.approx(frame_errors(m, keys).sum(), abs=1e-12)
    assert extract_keyframes(m, "optimal", count=2).keys.tolist() == ([0] if n == 1 else [0, n - 1])
    assert np.all(np.isfinite(optimal_curve(m, [2, 3])))


def test_dense_counts_drop_the_frames_rebuilt_best(clip):
    """T−1 and T−2 keys (the DP's layers then have one or two frames of room each): the optimum leaves out
    the frame, or the pair of frames, whose rebuild costs least, by brute force over every choice."""
    from core.keyframes import optimal

    m = clip.frames(slice(0, 24))
    n = m.n_frames
    every = np.arange(n)
    for dropped in (1, 2):
        optimal.clear_cache()
        keys, info = optimal_keys(m, n - dropped)
        totals = {
            out: frame_errors(m, np.setdiff1d(every, out)).sum()
            for out in itertools.combinations(range(1, n - 1), dropped)
        }
        best = min(totals, key=totals.get)
        assert info["total_error"] == pytest.approx(totals[best], rel=1e-9)
        assert tuple(np.setdiff1d(every, keys)) == best


def test_two_keys_need_no_table(clip):
    from core.keyframes import optimal

    optimal.clear_cache()
    keys, info = optimal_keys(clip, 2)
    assert keys.tolist() == [0, clip.n_frames - 1] and not optimal._cache
    assert info["total_error"] == pytest.approx(frame_errors(clip, keys).sum(), rel=1e-12)


def test_optimum_reports_progress_and_can_be_cancelled(clip):
    from core.keyframes import optimal

    class Cancelled(Exception):
        pass

    optimal.clear_cache()
    seen = []

    def stop_half_way(fraction):
        seen.append(fraction)
        if fraction > 0.5:
            raise Cancelled

    with pytest.raises(Cancelled):
        optimal_keys(clip, 12, progress=stop_half_way, exact=True)
    assert seen == sorted(seen) and 0 < seen[-1] < 1
    assert not optimal._cache  # a cancelled build leaves the cache as it was
    seen.clear()
    keys, info = optimal_keys(clip, 12, progress=seen.append, exact=True)
    assert seen and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)
    optimal.clear_cache()
    again, fresh = optimal_keys(clip, 12, exact=True)
    assert again.tolist() == keys.tolist() and fresh["total_error"] == pytest.approx(info["total_error"], rel=1e-12)


@pytest.mark.parametrize("exact", [True, False])
def test_optimum_reports_progress_often(exact, monkeypatch):
    # never more than about PROGRESS_FRAMES rebuilt frames (a fraction of a second) without a call
    from core.keyframes import optimal

    m = cmu("05_02").frames(slice(0, 300))
    rebuilt, since, worst = [0], [0], [0]
    kernel = SegmentErrors._errors

    def counting(self, batch, wa, wb):
        since[0] += int(np.prod(batch.shape))
        return kernel(self, batch, wa, wb)

    def progress(fraction):
        worst[0], since[0] = max(worst[0], since[0]), 0

    monkeypatch.setattr(SegmentErrors, "_errors", counting)
    optimal.clear_cache()
    count = 30 if exact else 15
    keys, info = optimal_keys(m, count, progress=progress, exact=exact)
    assert info["path"] == ("full" if exact else "coarse_to_fine") and len(keys) == count
    assert max(worst[0], since[0]) <= 2 * optimal.PROGRESS_FRAMES + optimal.CHUNK, (worst, since, rebuilt)


def test_coarse_to_fine_is_optimal_within_its_corridor():
    # every key set whose i-th key is within ±WINDOW frames of the answer's, costed independently
    from core.keyframes import optimal

    m = cmu("05_02").frames(slice(300, 420, 2))  # 60 frames
    keys, info = optimal_keys(m, 5, exact=False)
    assert info["path"] == "coarse_to_fine" and info["window"] == optimal.WINDOW
    assert frame_errors(m, keys).sum() == pytest.approx(info["total_error"], rel=1e-9)
    w = optimal.WINDOW
    totals = []
    for shift in itertools.product(range(-w, w + 1), repeat=len(keys) - 2):
        other = np.r_[0, keys[1:-1] + np.array(shift), m.n_frames - 1]
        if np.all(np.diff(other) > 0):
            totals.append(frame_errors(m, other).sum())
    assert len(totals) > 100 and info["total_error"] <= min(totals) + 1e-9
    exact, full = optimal_keys(m, 5, exact=True, max_gap=m.n_frames - 1, screen=False)
    assert full["total_error"] <= info["total_error"] + 1e-9  # the global optimum is never worse


def test_dense_keys_never_go_coarse(clip):
    # over a sixth of the frames as keys: no coarser sampling holds them, the full table answers
    keys, info = optimal_keys(clip.frames(slice(0, 60)), 25, exact=False)
    assert info["path"] == "full" and len(keys) == 25


def test_coarse_to_fine_against_the_full_table():
    # mid-size: 300 frames at 10 % keys; the full-resolution table (exact up to 4× the mean gap) as reference
    m = cmu("05_02").frames(slice(0, 300))
    keys, info = optimal_keys(m, 30, exact=False)
    assert info["path"] == "coarse_to_fine"
    full_keys, full = optimal_keys(m, 30, exact=True)
    assert frame_errors(m, keys).sum() == pytest.approx(info["total_error"], rel=1e-9)
    assert full["total_error"] - 1e-9 <= info["total_error"] <= 1.02 * full["total_error"]


# ---- local search and greedy fitting --------------------------------------------------------
def test_local_search_reaches_a_local_optimum(clip):
    cost = SegmentErrors(clip).costs
    start = extract_keyframes(clip, "uniform", count=12).keys
    keys = local_search(clip, start, cost)
    assert len(keys) == 12 and keys[0] == 0 and keys[-1] == clip.n_frames - 1
    assert total_cost(keys, cost) < total_cost(start, cost)
    assert frame_errors(clip, keys).sum() == pytest.approx(total_cost(keys, cost), rel=1e-9)
    for i in range(1, len(keys) - 1):  # no single key can move to a better frame in its span
        p, n = keys[i - 1], keys[i + 1]
        c = np.arange(p + 1, n)
        span = cost(np.full(len(c), p), c) + cost(c, np.full(len(c), n))
        assert span.min() >= cost(p, keys[i]) + cost(keys[i], n) - 1e-9


def test_exchanges_move_keys_where_they_are_needed(clip):
    # held first half, motion after it: uniform keys waste half the budget on the hold
    m = clip.frames(np.r_[np.zeros(60, dtype=int), np.arange(0, 70)])
    cost = CachedCost(SegmentErrors(m).costs, m.n_frames)
    start = extract_keyframes(m, "uniform", count=10).keys
    moved = local_search(m, start, cost)
    keys = exchange_search(m, start, cost)
    assert len(keys) == 10 and keys[0] == 0 and keys[-1] == m.n_frames - 1
    assert total_cost(keys, cost) < 0.9 * total_cost(moved, cost)
    assert np.sum(keys < 60) < np.sum(moved < 60)
    # no single exchange improves the result (one moved inside its span is a local-search move)
    here = total_cost(keys, cost)
    for i in range(1, len(keys) - 1):
        for c in np.setdiff1d(np.arange(m.n_frames), keys):
            assert total_cost(np.sort(np.r_[np.delete(keys, i), c]), cost) >= here - 1e-9 * here


def test_cached_cost_computes_each_segment_once(clip):
    calls = []
    errors = SegmentErrors(clip)

    def counting(a, b):
        calls.append(len(a))
        return errors.costs(a, b)

    cost = CachedCost(counting, clip.n_frames)
    a, b = np.array([0, 5, 0, 7]), np.array([10, 9, 10, 30])
    assert np.allclose(cost(a, b), errors.costs(a, b))
    assert np.allclose(cost(a[::-1], b[::-1]), errors.costs(a[::-1], b[::-1]))
    assert calls == [3]


def test_greedy_insert_and_remove(clip):
    cost = SegmentErrors(clip).costs
    keys = np.array([0, 40, clip.n_frames - 1])
    more = greedy_insert(keys, cost, 10)
    assert len(more) == 10 and set(keys) <= set(more)
    assert total_cost(more, cost) < total_cost(keys, cost)
    fewer = greedy_remove(more, cost, 5)
    assert len(fewer) == 5 and set(fewer) <= set(more) and fewer[0] == 0 and fewer[-1] == clip.n_frames - 1
    # the first removal is the cheapest one
    one_less = greedy_remove(more, cost, 9)
    drops = [total_cost(np.delete(more, i), cost) for i in range(1, len(more) - 1)]
    assert total_cost(one_less, cost) == pytest.approx(min(drops))


# ---- curve simplification -------------------------------------------------------------------
def test_simplify_splits_at_the_farthest_frame(clip):
    x = pose_points(clip).reshape(clip.n_frames, -1)  # every measured point: heads, tips, sides
    n = clip.n_frames
    u = (np.arange(n) / (n - 1))[:, None]
    dev = np.linalg.norm(x - ((1 - u) * x[0] + u * x[-1]), axis=1)
    assert simplify_keys(clip, 3).tolist() == [0, int(np.argmax(dev)), n - 1]
    small, large = simplify_keys(clip, 10), simplify_keys(clip, 11)
    assert set(small) < set(large)  # top-down: each count adds one split


# ---- the patent's activity method -----------------------------------------------------------
def test_find_peaks():
    x = np.array([0, 1, 0, 2, 2, 1, 0, 0, 3, 3, 4, 0, 5, 5])
    assert find_peaks(x).tolist() == [1, 3, 10]  # plateau at 3-4 counts once; 12-13 never falls
    assert find_peaks(np.zeros(5)).tolist() == []


def test_vote_majority_and_ties():
    thresholds = (np.array([1.0, 2.0, 3.0]),) * 3
    measures = (
        np.array([0.5, 1.5, 3.5, 2.0, 3.0]),  # votes 0 1 3 2 3
        np.array([0.5, 1.5, 2.5, 2.5, 0.1]),  # votes 0 1 2 2 0
        np.array([9.0, 0.0, 1.0, 0.0, 2.0]),  # votes 3 0 1 0 2
    )
    assert vote(measures, thresholds).tolist() == [0, 1, 1, 2, 0]


def test_initial_keys_and_splitting():
    peaks = np.array([10, 20, 30, 40, 50, 60, 70, 80])
    values = np.array([1.0, 5.0, 2.0, 6.0, 1.5, 1.2, 7.0, 3.0])
    keys = initial_keys(100, peaks, values)
    assert keys.tolist() == [0, 40, 70, 99]  # ≥ upper quartile (5.25) of the peak values
    # segments wider than 25 frames are split at the upper quartile of their unused peaks
    split = split_wide(keys, peaks, values, width_limit=25.0)
    assert split.tolist() == [0, 20, 40, 50, 70, 80, 99]
    assert split_wide(keys, peaks, values, width_limit=35.0).tolist() == [0, 20, 40, 70, 99]
    assert split_wide(keys, peaks, values, width_limit=1e9).tolist() == keys.tolist()


def test_activity_signal_ignores_hands_by_default():
    m = synthetic.walk(90)
    still = Motion.rest(m.skeleton, 90, m.fps)
    hand = m.skeleton.index("LeftHand")
    still.rotations[:, hand] = quat.from_axis_angle(np.array([0, 0, 1.0]), 1.5 * np.sin(np.linspace(0, 6, 90)))
    metric = PoseMetric.for_motion(still)
    params = ActivityParams()
    assert np.all(activity_signal(still, activity_metric(still, metric, params), params) == 0)
    everyone = ActivityParams(joints="UNIFORM")
    assert activity_signal(still, activity_metric(still, metric, everyone), everyone).max() > 0
    assert activity_signal(m, activity_metric(m, metric, params), params).max() > 0


def test_activity_natural_run_reports_its_steps(clip):
    keys, info = activity_keys(clip, PoseMetric.for_motion(clip))
    assert keys[0] == 0 and keys[-1] == clip.n_frames - 1 and info["peaks"] > 0
    assert info["natural_count"] == len(keys)


@pytest.mark.parametrize("name", ["05_02", "01_01"])
def test_activity_beats_uniform_and_threshold_on_cmu(name):
    m = cmu(name)
    metric = PoseMetric.for_motion(m)
    err = {}
    for method in ("activity", "uniform", "threshold"):
        keys = extract_keyframes(m, method, ratio=0.05, metric=metric).keys
        assert len(keys) == round(0.05 * m.n_frames)
        err[method] = evaluate(m, reconstruct(m, keys), metric)[0]["position_mean"]
    assert err["activity"] < err["uniform"] and err["activity"] < err["threshold"], err


# ---- every method, every target -------------------------------------------------------------
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("count", [2, 3, 10, 40])
def test_every_method_meets_counts_exactly(clip, method, count):
    keys = extract_keyframes(clip, method, count=count).keys
    assert len(keys) == count and keys[0] == 0 and keys[-1] == clip.n_frames - 1
    assert np.all(np.diff(keys) > 0)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_meets_a_max_error_target(clip, method):
    bound = 0.1  # metres
    result = extract_keyframes(clip, method, max_error=bound)
    rebuilt = reconstruct(clip, result.keys)
    worst = position_errors(clip, rebuilt).max()  # every bone's head, tips and sides
    assert worst <= bound
    assert len(result.keys) < clip.n_frames / 2


def test_compare_script_prints_a_row_per_method(capsys):
    shared_file("cmu_bvh_cgspeed/02_01.bvh")
    spec = importlib.util.spec_from_file_location("compare", ROOT / "scripts" / "compare_keyframe_methods.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(["--clips", "02_01", "--ratios", "0.1", "--methods", "uniform,simplify"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and "simplify" in lines[2] and lines[1].split()[2] == "34"
