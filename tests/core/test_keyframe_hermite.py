"""The Hermite lower bound of a segment's rebuild error (core/keyframes/hermite.py): the key velocities
are the rebuild's own, the bounds never exceed the exact costs, and they are tight near the mean gap."""

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.io.bvh import read_bvh
from core.keyframes.error import pose_points
from core.keyframes.hermite import HermiteBounds
from core.keyframes.segments import SegmentErrors
from core.motion import Motion
from tests.conftest import shared_file
from tests.core.test_keyframe_exact import CLIPS


def large_turns() -> Motion:
    """Every joint turning by up to about 3 rad between frames (keys on both sides of the quaternion double
    cover, the shorter arc flipping), and two translated joints besides the root (as Bandai's Hips)."""
    m = synthetic.demo_clip().frames(slice(0, 60))
    rng = np.random.default_rng(11)
    n, j = m.rotations.shape[:2]
    turn = quat.from_axis_angle(rng.normal(size=(n, j, 3)), rng.uniform(0.0, 3.0, size=(n, j)))
    rotations = quat.multiply(m.rotations, turn) * rng.choice([-1.0, 1.0], size=(n, j, 1))
    translations = m.translations.copy()
    translations[:, 1:3] += rng.normal(scale=1.0, size=(n, 2, 3))  # far, fast, under turning parents
    return Motion(m.skeleton, translations, rotations, m.fps)


def rebuilt_points(motion: Motion, a: int, b: int, u: np.ndarray) -> np.ndarray:
    """(len(u), P, 3) the measured points of the slerp/lerp rebuild of segment (a, b) at fractions u,
    by quaternion.slerp and forward kinematics (independent of hermite.py)."""
    rotations = quat.slerp(motion.rotations[a][None], motion.rotations[b][None], u[:, None])
    translations = (1.0 - u)[:, None, None] * motion.translations[a] + u[:, None, None] * motion.translations[b]
    return pose_points(Motion(motion.skeleton, translations, rotations, motion.fps))


@pytest.mark.parametrize("name", ["05_02", "bandai", "large_turns"])
def test_key_velocities_are_the_derivative_of_the_rebuild(name):
    m = large_turns() if name == "large_turns" else CLIPS[name]()
    hermite = HermiteBounds(m)
    h = 1e-5
    for a, b in ((3, 9), (10, 40), (0, m.n_frames - 1)):
        va, vb, _ = hermite.velocities(np.array([a]), np.array([b]))
        p = rebuilt_points(m, a, b, np.array([0.0, h, 1.0 - h, 1.0]))  # per unit u: divide by the gap
        at_a, at_b = (p[1] - p[0]) / (h * (b - a)), (p[3] - p[2]) / (h * (b - a))
        scale = np.abs(va).max() + np.abs(vb).max()
        assert np.abs(va[0].T - at_a).max() < 1e-3 * scale, (a, b)
        assert np.abs(vb[0].T - at_b).max() < 1e-3 * scale, (a, b)


@pytest.mark.parametrize("name", [*CLIPS, "large_turns"])
def test_hermite_bounds_never_exceed_the_exact_costs(name):
    m = large_turns() if name == "large_turns" else CLIPS[name]()
    errors, hermite, n = SegmentErrors(m), HermiteBounds(m), m.n_frames
    for gap in (2, 3, 7, 20, 45, n - 1):
        starts = np.arange(n - gap)
        per_frame = errors.gap_errors(starts, gap)
        cost = per_frame.sum(axis=1)
        frames = hermite.gap_bounds(starts, gap, per_frame=True)
        assert np.all(frames <= per_frame * (1 + 1e-9) + 1e-12), gap  # frame by frame
        for pieces in (1, 4, 9):
            bound = hermite.moment_bounds(starts, starts + gap, pieces)
            assert np.all(bound <= cost * (1 + 1e-9) + 1e-12), (gap, pieces)
            assert np.all(bound >= 0.0)


def test_hermite_bounds_are_tight_near_the_mean_gap_of_a_capture():
    """On 05_02 (120 fps) at the mean gap of 5 % keys, the summed bound reaches most of the exact cost,
    where exact.py's sampled bound reached 0.22× with four samples and 0.07× with the one it takes."""
    m = read_bvh(shared_file("cmu_bvh_cgspeed/05_02.bvh"))
    errors, hermite = SegmentErrors(m), HermiteBounds(m)
    starts = np.arange(0, m.n_frames - 20, 7)
    cost = errors.costs(starts, starts + 20)
    frames = hermite.gap_bounds(starts, 20)
    moments = hermite.moment_bounds(starts, starts + 20)
    assert np.median(frames / cost) > 0.85
    assert np.median(moments / cost) > 0.75


def test_fourth_derivative_bound_is_reached_by_a_turning_parent_and_a_sliding_child():
    """A root turning at ω about z and a child sliding by d with z × d against its offset t: the child's
    head has p⁗ = ω⁴t + 4ω³(−z × d), of length ω⁴|t| + 4ω³|d| — the bound, every term of it."""
    from core.skeleton import Skeleton

    sk = Skeleton(("root", "arm"), np.array([-1, 0]), np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
    omega, slide = 0.8, 0.3
    rotations = quat.identity((2, 2))
    rotations[1, 0] = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), omega)
    translations = np.tile(sk.rest_translations, (2, 1, 1))
    translations[1, 1] += (0.0, slide, 0.0)
    m = Motion(sk, translations, rotations, 30.0)
    bound = HermiteBounds(m).velocities(np.array([0]), np.array([1]))[2][0, 1]  # the arm's head
    h = 1e-2
    p = rebuilt_points(m, 0, 1, np.array([-2 * h, -h, 0.0, h, 2 * h]))[:, 1]
    fourth = np.linalg.norm((p[0] - 4 * p[1] + 6 * p[2] - 4 * p[3] + p[4]) / h**4)
    assert fourth == pytest.approx(omega**4 + 4 * omega**3 * slide, rel=1e-3)
    assert fourth <= bound <= 1.05 * fourth


def test_exact_keys_prunes_most_long_segments_with_the_hermite_bound():
    """exact_keys' Hermite stage does the pruning (a bound of zero would leave every segment it bounds):
    on the 05_02 window at 10 % keys about a fifth are left (with the sampled bound alone, every one)."""
    from core.keyframes.exact import exact_keys

    m = CLIPS["05_02"]()
    survivors = exact_keys(m, round(0.1 * m.n_frames))[1]["survivors"]
    assert survivors["bounded"] > 0 and survivors["hermite"] < 0.5 * survivors["bounded"]


@pytest.mark.parametrize("name", [*CLIPS, "large_turns"])
def test_run_bounds_never_exceed_the_exact_error_of_their_runs(name):
    """run_bounds: each run's bound (empty runs included) below the exact error summed over that run's frames,
    on random cuts of segments of several gaps; the runs of moment_bounds add up to it."""
    m = large_turns() if name == "large_turns" else CLIPS[name]()
    errors, hermite, n = SegmentErrors(m), HermiteBounds(m), m.n_frames
    rng = np.random.default_rng(3)
    for gap in (2, 5, 20, 45, n - 1):
        starts = np.arange(n - gap)
        per_frame = errors.gap_errors(starts, gap)  # (n, g−1): column o−1 is offset o
        inner = np.sort(rng.integers(1, gap + 1, size=(3, len(starts))), axis=0)  # may repeat: empty runs
        cuts = np.vstack((np.ones(len(starts), dtype=int), inner, np.full(len(starts), gap)))
        runs = hermite.run_bounds(starts, starts + gap, cuts)
        prefix = np.hstack((np.zeros((len(starts), 1)), np.cumsum(per_frame, axis=1)))  # Σ over offsets < o
        rows = np.arange(len(starts))
        for k in range(len(cuts) - 1):
            exact_run = prefix[rows, cuts[k + 1] - 1] - prefix[rows, cuts[k] - 1]
            assert np.all(runs[k] <= exact_run * (1 + 1e-9) + 1e-12), (gap, k)
            assert np.all(runs[k] >= 0.0) and np.all(runs[k][cuts[k] == cuts[k + 1]] == 0.0)
        even = 1 + np.round(np.arange(5)[:, None] * np.full((1, len(starts)), gap - 1) / 4).astype(int)
        assert np.allclose(
            hermite.run_bounds(starts, starts + gap, even).sum(axis=0),
            hermite.moment_bounds(starts, starts + gap),
            rtol=1e-12,
            atol=1e-15,
        )
