"""The exact keyframe optimum (core/keyframes/exact.py): sound lower bounds, and the same least total
error as the DP over every segment's exact cost, on real captures and on adversarial motion."""

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.io.bvh import read_bvh
from core.keyframes import optimal
from core.keyframes.exact import Rates, exact_keys, feasible_starts, sampled_bounds
from core.keyframes.segments import SegmentErrors
from core.motion import Motion
from tests.conftest import shared_file
from tests.core.test_keyframe_methods import brute_force, frame_errors


def capture(relative: str, frames: slice) -> Motion:
    return read_bvh(shared_file(relative)).frames(frames)


def adversarial() -> Motion:
    """Segment errors far from monotone: a walk that comes back to where it started (a palindrome, so
    a long segment can rebuild it better than a shorter one), a held pose, and one-frame spikes."""
    m = synthetic.demo_clip().frames(slice(0, 120, 3))
    order = np.r_[np.arange(40), np.arange(39, -1, -1), np.full(8, 20)]
    rotations = m.rotations[order].copy()
    rng = np.random.default_rng(7)
    for t in rng.choice(len(order), 6, replace=False):  # a bone flicks away for one frame
        j = rng.integers(1, m.skeleton.n_joints)
        rotations[t, j] = quat.multiply(rotations[t, j], quat.from_axis_angle(rng.normal(size=3), 1.2))
    return Motion(m.skeleton, m.translations[order], rotations, m.fps)


CLIPS = {
    "05_02": lambda: capture("cmu_bvh_cgspeed/05_02.bvh", slice(300, 540, 3)),
    "02_01": lambda: capture("cmu_bvh_cgspeed/02_01.bvh", slice(0, 240, 3)),
    "131_03": lambda: capture("cmu_bvh_3dsmax/131_03.bvh", slice(900, 1140, 3)),
    "bandai": lambda: capture("bandai_namco_1/dataset-1_dance-short_normal_001.bvh", slice(0, 240, 3)),
    "adversarial": adversarial,
}


def full_table(motion: Motion) -> np.ndarray:
    """Independent reference: the exact cost of every segment (every gap), for the DP of :func:`optimal.solve`."""
    errors, n = SegmentErrors(motion), motion.n_frames
    table = np.full((n, n), np.inf)
    table[: n - 1, 1] = 0.0
    for gap in range(2, n):
        table[: n - gap, gap] = errors.gap_errors(np.arange(n - gap), gap).sum(axis=1)
    return table


@pytest.mark.parametrize("name", ["05_02", "bandai", "adversarial"])
def test_lower_bounds_never_exceed_the_exact_costs(name):
    m = CLIPS[name]()
    errors, rates = SegmentErrors(m), Rates(m)
    n = m.n_frames
    for gap in (2, 5, 17, 40, 60, n - 1):
        starts = np.arange(n - gap)
        bound = sampled_bounds(errors, rates, [gap])[0]
        cost = errors.costs(starts, starts + gap)
        assert np.all(bound <= cost * (1 + 1e-9) + 1e-12), gap
        if gap >= 40:
            assert bound.sum() > 0.1 * cost.sum()  # a bound, not zero


@pytest.mark.parametrize("name", list(CLIPS))
def test_exact_optimum_equals_the_full_table(name):
    m = CLIPS[name]()
    n = m.n_frames
    table = full_table(m)
    for count in (3, 4, round(0.1 * n)):
        reference = optimal.solve(table, count)[1]
        keys, info = exact_keys(m, count)
        assert info["path"] == "exact" and len(keys) == count and keys[0] == 0 and keys[-1] == n - 1
        assert info["total_error"] == pytest.approx(reference, rel=1e-9), count
        assert frame_errors(m, keys).sum() == pytest.approx(info["total_error"], rel=1e-9)
        coarse = optimal.coarse_to_fine(m, count)[1]["total_error"]
        assert info["total_error"] <= coarse * (1 + 1e-12)


def test_exact_optimum_equals_brute_force_over_every_key_set():
    m = read_bvh(shared_file("cmu_bvh_cgspeed/05_02.bvh")).frames(slice(200, 312, 8))
    every = brute_force(m, m.n_frames - 1)
    for count in range(2, m.n_frames + 1):
        keys, info = exact_keys(m, count)
        assert info["total_error"] == pytest.approx(every[count], abs=1e-9), count


def test_exact_optimum_is_never_worse_than_a_given_upper_bound():
    m = CLIPS["adversarial"]()
    count = 7
    uniform = np.round(np.linspace(0, m.n_frames - 1, count)).astype(int)
    total = float(SegmentErrors(m).costs(uniform[:-1], uniform[1:]).sum())
    keys, info = exact_keys(m, count, upper=(uniform, total))
    assert info["total_error"] <= total
    assert info["total_error"] == pytest.approx(optimal.solve(full_table(m), count)[1], rel=1e-9)


def test_exact_optimum_reports_progress_and_can_be_cancelled():
    m = CLIPS["05_02"]()
    seen = []
    keys, info = exact_keys(m, 8, progress=seen.append)
    assert len(seen) > 10 and seen[-1] == 1.0 and all(b >= a for a, b in zip(seen, seen[1:]))

    class Stop(Exception):
        pass

    def stop_half_way(fraction: float) -> None:
        if fraction > 0.5:
            raise Stop

    with pytest.raises(Stop):
        exact_keys(m, 8, progress=stop_half_way)
    again, fresh = exact_keys(m, 8)
    assert again.tolist() == keys.tolist() and fresh["total_error"] == info["total_error"]


def test_exact_optimum_refuses_non_finite_motion_and_handles_tiny_clips():
    m = CLIPS["adversarial"]()
    broken = m.copy()
    broken.rotations[5, 2] = np.nan
    with pytest.raises(ValueError, match="frame 5"):
        exact_keys(broken, 5)
    for n in (1, 2, 3):
        keys, info = exact_keys(m.frames(slice(0, n)), 3)
        assert keys.tolist() == list(range(n)) or keys.tolist() == [0, n - 1]


def test_gap_rows_are_rows_of_the_gap_layout():
    m = CLIPS["bandai"]()
    errors = SegmentErrors(m)
    for gap, starts in ((2, np.arange(70)), (9, np.arange(60)), (33, np.array([0, 4, 5, 30]))):
        rows = np.array(sorted({1, gap // 2, gap - 1}))
        every = errors.gap_errors(starts, gap)  # (n, gap−1)
        assert np.allclose(errors.gap_rows(starts, gap, rows), every[:, rows - 1].T, rtol=1e-12, atol=1e-12)


def test_the_middle_half_of_a_segment_bounds_its_cost_and_the_outer_half_completes_it():
    """costs(part=(0, 0.5)) sums the centred ⌈(g−1)/2⌉ in-between frames (a lower bound of the cost, which
    the exact optimum prunes with), part=(0.5, 1) the others; many segments of one gap (the gap layout's
    rows) and a few of many gaps (one flat batch) alike, against the per-frame errors of the gap layout."""
    m = capture("cmu_bvh_cgspeed/05_02.bvh", slice(0, 400))
    errors = SegmentErrors(m)
    many = [(np.arange(300), 40), (np.arange(60), 3)]  # 300·20 and 60·1 middle frames: rows, then flat
    few = [(np.array([0, 7]), g) for g in (2, 3, 4, 11, 30)]
    a = np.concatenate([s for s, _ in many + few])
    g = np.concatenate([np.full(len(s), gap) for s, gap in many + few])
    middle, outer = errors.costs(a, a + g, part=(0, 0.5)), errors.costs(a, a + g, part=(0.5, 1))
    at = 0
    for starts, gap in many + few:
        rows = at + np.arange(len(starts))
        at += len(starts)
        every = errors.gap_errors(starts, gap)  # (n, gap−1): column o−1 is offset o
        centre = np.zeros(gap - 1, dtype=bool)
        width = gap // 2  # ⌈(gap−1)/2⌉ frames, centred
        centre[(gap - 1 - width) // 2 : (gap - 1 - width) // 2 + width] = True
        assert np.allclose(middle[rows], every[:, centre].sum(axis=1), rtol=1e-12, atol=1e-12)
        assert np.allclose(outer[rows], every[:, ~centre].sum(axis=1), rtol=1e-12, atol=1e-12)
    whole = errors.costs(a, a + g)
    assert np.allclose(middle + outer, whole, rtol=1e-12) and np.all(middle <= whole + 1e-12)
    assert np.median((middle / whole)[g >= 11]) > 0.5  # where the error concentrates: most of it
    quarter, ring = errors.costs(a, a + g, part=(0, 0.25)), errors.costs(a, a + g, part=(0.25, 0.5))
    assert np.allclose(quarter + ring, middle, rtol=1e-12) and np.all(quarter <= middle + 1e-12)
    with pytest.raises(ValueError, match="part"):
        errors.costs(a, a + g, part=(0.6, 0.2))


@pytest.mark.parametrize("name", ["05_02", "bandai", "adversarial"])
def test_first_step_bound_never_exceeds_the_exact_cost_and_is_tight(name):
    """The rounds' first step: the exact error over the centred share STEPS[0] of the in-between frames plus
    the Hermite bound of the frames outside it (exact._hermite_bounds) stays below the exact cost, and on
    captures reaches most of it (on the 05_02 window 0.82× in the median from gap 12, the centred quarter
    alone 0.37×)."""
    from core.keyframes.exact import STEPS, _hermite_bounds
    from core.keyframes.hermite import HermiteBounds

    m = CLIPS[name]()
    errors, hermite, n = SegmentErrors(m), HermiteBounds(m), m.n_frames
    a = np.concatenate([np.arange(n - gap) for gap in (3, 12, 30, n - 1)])
    g = np.concatenate([np.full(n - gap, gap) for gap in (3, 12, 30, n - 1)])
    whole, outside = _hermite_bounds(hermite, a, g)
    centre = errors.costs(a, a + g, part=(0.0, STEPS[0]))
    cost = errors.costs(a, a + g)
    assert np.all(whole <= cost * (1 + 1e-9) + 1e-12)
    assert np.all(centre + outside <= cost * (1 + 1e-9) + 1e-12)
    if name != "adversarial":
        long = g >= 12
        assert np.median((centre + outside)[long] / cost[long]) > 0.75
        assert np.median((centre + outside)[long] / cost[long]) > np.median(centre[long] / cost[long]) + 0.2


def test_feasible_starts_are_the_segments_of_some_key_set():
    """feasible_starts against every key set of a 9-frame clip (first and last frame keyed): with 3 keys only
    the segments from the first frame or to the last, with more every segment up to the longest gap."""
    from itertools import combinations

    n = 9
    for count in (3, 4, 5, 8):
        used = set()
        for inner in combinations(range(1, n - 1), count - 2):
            keys = (0, *inner, n - 1)
            used |= {(a, b - a) for a, b in zip(keys[:-1], keys[1:])}
        for gap in range(2, n - count + 2):
            assert set(feasible_starts(n, gap, count).tolist()) == {a for a, g in used if g == gap}, (count, gap)
