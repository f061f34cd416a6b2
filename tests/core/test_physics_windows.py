"""A long stretch solved in overlapping windows (:mod:`core.physics.windows`): memory bounded by the window, the
joined motion continuous across each cut, its figures measured as the whole clip's would be."""

from functools import cache

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from core import synthetic
from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.physics.apply import PhysicsSettings, apply_physics
from core.physics.windows import BLEND_SECONDS, join_windows, window_cuts, window_spans
from tests.conftest import shared_file

CGSPEED_UNIT = 0.056444  # metres per unit of CMU's cgspeed BVH conversions


def _walking(t: int, rng) -> np.ndarray:
    """(T, 2) contact flags of a walk: single support runs of 20–40 frames between double support runs of 4–12."""
    flags = np.zeros((t, 2), dtype=bool)
    frame, foot = 0, 0
    while frame < t:
        single, double = rng.integers(20, 41), rng.integers(4, 13)
        flags[frame : frame + single, foot] = True
        flags[frame + single : frame + single + double] = True
        frame, foot = frame + single + double, 1 - foot
    return flags


@pytest.mark.parametrize("seed", range(8))
def test_cuts_keep_every_piece_within_the_window_and_fall_mid_double_support(seed):
    """Every piece at most the window long, and each cut on a frame with both feet down, at the middle of its run
    (the frame farthest from single support, within a frame), unless a piece would be longer than the window."""
    rng = np.random.default_rng(seed)
    fps, window = 120.0, 10.0
    t = int(rng.integers(3000, 9000))
    flags = _walking(t, rng)
    cuts = window_cuts(flags, fps, window)
    bounds = np.concatenate(([0], cuts, [t]))
    assert len(cuts) == int(np.ceil(t / (window * fps))) - 1
    assert np.diff(bounds).max() <= window * fps and np.diff(bounds).min() > 0
    both = flags.all(axis=1)
    longest = int(window * fps)
    for k, cut in enumerate(cuts):
        if cut - bounds[k] == longest or t - cut == (len(cuts) - k) * longest:
            continue  # held there so that no piece is longer than the window
        assert both[cut]
        run_start = cut - np.argmin(both[cut::-1]) + 1
        run_stop = cut + np.argmin(both[cut:])
        assert abs(cut - (run_start + run_stop - 1) / 2) <= 1.0


def test_cuts_avoid_flights_when_the_feet_are_never_both_down():
    """A run (one foot at a time, flights between) is cut on a frame with a foot down, not in the air."""
    t, fps = 4000, 100.0
    flags = np.zeros((t, 2), dtype=bool)
    for k, start in enumerate(range(0, t, 50)):
        flags[start : start + 30, k % 2] = True  # 30 frames on one foot, 20 in the air
    cuts = window_cuts(flags, fps, 12.0)
    assert len(cuts) == 3
    assert flags[cuts].any(axis=1).all()
    assert np.diff(np.concatenate(([0], cuts, [t]))).max() <= 1200


def test_a_clip_within_the_window_is_not_cut():
    flags = np.ones((3600, 2), dtype=bool)
    assert not len(window_cuts(flags, 120.0, 30.0))
    assert len(window_cuts(np.ones((3601, 2), dtype=bool), 120.0, 30.0)) == 1


def test_join_takes_each_piece_from_its_window_and_slerps_across_the_cut():
    """Outside the crossfade each frame is its own window's; inside, each joint's local rotation (below the pelvis)
    is the slerp of the two windows' by the smoothstep weight (scipy's Slerp as the reference)."""
    fps = 60.0
    left = synthetic.walk(400, fps=fps)
    right = left.copy()
    rng = np.random.default_rng(1)
    turn = Rotation.from_rotvec(rng.normal(scale=0.3, size=(left.skeleton.n_joints, 3)))
    right.rotations[:] = (turn * Rotation.from_quat(left.rotations[0][:, [1, 2, 3, 0]])).as_quat()[:, [3, 0, 1, 2]]
    spans = window_spans(400, [200], fps, margin_seconds=1.0)
    assert spans == [(0, 200, 0, 260), (200, 400, 140, 400)]
    joined = join_windows([left.frames(slice(0, 260)), right.frames(slice(140, 400))], spans, fps)
    half = int(round(BLEND_SECONDS * fps / 2))
    np.testing.assert_array_equal(joined.rotations[: 200 - half], left.rotations[: 200 - half])
    np.testing.assert_array_equal(joined.rotations[200 + half :], right.rotations[200 + half :])
    frames = np.arange(200 - half, 200 + half)
    x = (frames - frames[0] + 0.5) / len(frames)
    weights = x * x * (3 - 2 * x)
    joint = left.skeleton.index("LeftLeg")
    for k, frame in enumerate(frames):
        a, b = (Rotation.from_quat(m.rotations[frame, joint][[1, 2, 3, 0]]) for m in (left, right))
        expected = Slerp([0.0, 1.0], Rotation.concatenate([a, b]))(weights[k]).as_quat()[[3, 0, 1, 2]]
        got = joined.rotations[frame, joint]
        assert min(np.abs(got - expected).max(), np.abs(got + expected).max()) < 1e-9
    steps = np.abs(np.diff(joined.rotations[frames[0] - 1 : frames[-1] + 2, joint], axis=0)).max(axis=1)
    assert steps.max() < 2.5 * np.abs(left.rotations[199, joint] - right.rotations[199, joint]).max() / len(frames)


@cache
def _jumps() -> tuple:
    """CMU 01_01's jumps (frames 1–799, flights and landings) 1.4× onto 90 kg, solved whole and in 2.5 s windows."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 800)).scaled(1.4)
    settings = PhysicsSettings(target_mass=90.0, source_mass=60.0)
    whole = apply_physics(motion, settings, unit=CGSPEED_UNIT)
    windows = apply_physics(motion, settings, unit=CGSPEED_UNIT, window_seconds=2.5)
    return motion, whole, windows


def test_a_long_stretch_is_solved_in_windows_and_says_so():
    motion, whole, windows = _jumps()
    assert whole.figures["windows"] == [] and not any("windows" in n for n in whole.notes)
    (a, b, k), = windows.figures["windows"]  # fmt: skip
    assert (a, b) == tuple(windows.figures["stretches"][0]) and k == 3
    assert any("in windows of at most 2.5 s" in n for n in windows.notes)


def test_windows_join_without_a_jump_and_keep_the_planted_feet_still():
    """Across each cut the joined motion moves no faster than the solve moves anywhere, and a foot down there stays
    within a millimetre (the motion's unit from its stature)."""
    motion, whole, windows = _jumps()
    contacts = detect_contacts(motion)
    flags = contacts.flags
    cuts = window_cuts(flags, motion.fps, 2.5)
    assert flags[cuts].all()  # both feet down at every cut (the jumps have double support near each even place)
    positions = windows.motion.world_positions()
    speed = np.linalg.norm(np.diff(positions, axis=0), axis=-1).max(axis=1)  # (T − 1,) fastest joint, units/frame
    half = int(round(BLEND_SECONDS * motion.fps / 2))
    near = np.zeros(len(speed), dtype=bool)
    for cut in cuts:
        near[cut - half - 1 : cut + half] = True
    assert speed[near].max() <= speed[~near].max()
    millimetre = 1e-3 / windows.figures["unit_m"]
    for cut in cuts:
        run = slice(cut - half, cut + half)
        if flags[run].all():
            for joint in contacts.joints:
                path = positions[run, joint]
                assert np.linalg.norm(path - path[0], axis=-1).max() < millimetre


def test_windowed_figures_are_the_joined_motion_measured_whole():
    """The pieces' figures, measured each with its context, combine into what a measure of the whole joined motion
    reads (the report of a solve elsewhere, :func:`core.physics.solve.judge`): not clips of their own, whose edges
    would be differentiated one-sided (each cut read as a frame over a limit on a synthetic walk)."""
    from core.physics.body import body_model
    from core.physics.solve import judge

    motion, whole, windows = _jumps()
    body = body_model(motion.skeleton, 90.0, unit=windows.figures["unit_m"], up=detect_contacts(motion).up)
    reference = judge(motion, windows.motion, detect_contacts(motion), body)
    assert windows.figures["contact_frames"] == reference["before"]["contact_frames"]
    for when in ("before", "after"):
        got, want = windows.figures[when], reference[when]
        assert got["torque_violation_frames"] == want["torque_violation_frames"]
        # the double-support split's twelve interior-point steps leave a frame's torques depending on the batch it
        # is solved in by up to ~0.01 of its limit (docs/physics_notes.md); one-sided edges read ~0.1 more
        assert got["torque_worst_ratio"] == pytest.approx(want["torque_worst_ratio"], abs=0.012)
        assert got["zmp_inside_share"] == pytest.approx(
            want["zmp_inside_share"], abs=1.5 / reference["before"]["contact_frames"]
        )
        assert got["jerk_m_s3"] == pytest.approx(want["jerk_m_s3"], rel=0.01)
    assert windows.figures["after"]["deviation"] == pytest.approx(reference["after"]["deviation"], rel=1e-9)


def test_windows_hold_the_figures_of_the_whole_solve():
    """Solved in three windows, the jumps keep what the whole solve reaches: ZMP inside within a point, no more frames
    over a limit than the input, flights on their parabolas within the bar, deviation within the bar."""
    motion, whole, windows = _jumps()
    w, o = whole.figures["after"], windows.figures["after"]
    assert o["zmp_inside_share"] >= w["zmp_inside_share"] - 0.01
    assert o["torque_violation_frames"] < windows.figures["before"]["torque_violation_frames"] / 10
    assert o["flight_error_worst_m"] <= 1e-3
    assert o["deviation"] <= 0.015
