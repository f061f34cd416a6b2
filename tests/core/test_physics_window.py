"""The windowed re-analysis (:func:`core.physics.metrics.analyse_changed`) against the whole-clip one."""

import numpy as np
import pytest

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.physics.body import body_model
from core.physics.dynamics import torque_ratios
from core.physics.metrics import analyse, analyse_changed, changed_frames, flight_figures, flight_series, report
from core.physics.plan import _shift_root, state_joints
from core.physics.planting import _plant, with_toes  # planted as the solver plants
from tests.conftest import shared_file


@pytest.fixture(scope="module")
def jumps():
    """CMU 01_01 (jumps, flight phases and double support) 1.4× onto 90 kg, feet planted, analysed."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 420)).scaled(1.4)
    feet = detect_contacts(motion)
    contacts = with_toes(motion, feet)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45, up=feet.up)
    planted = _plant(motion, feet)
    measure = {"smooth": 0.2, "free_fall": 0.1, "heel": 0.25, "width": 0.5}
    measure["ground"] = analyse(motion, contacts, body, **measure).support.ground
    return planted, feet, contacts, body, measure, analyse(planted, contacts, body, **measure)


@pytest.mark.parametrize("span", [(150, 230), (0, 60), (360, 419), (40, 100)])  # inside, at either end, near one
def test_windowed_analysis_equals_the_whole_clip_one(jumps, span):
    """The body moved in 3-D on frames ``span`` (a smooth bump), the feet planted again: the
    re-analysis of the changed frames gives the whole-clip analysis's kinematics, support polygons,
    ZMP, worst torque ratio per frame (the least split's value; which of several tied joints carries
    it may differ within the solver's tolerance) and report figures, and leaves the frames the
    derivatives do not reach as they were."""
    planted, feet, contacts, body, measure, previous = jumps
    t = planted.n_frames
    lo, hi = span
    shift = np.zeros((t, 3))
    shift[lo:hi] = np.sin(np.linspace(0, np.pi, hi - lo))[:, None] * np.array([0.6, 0.4, -0.5])
    trial = _plant(_shift_root(planted, state_joints(body)[0], shift), feet)
    changed = changed_frames(trial, planted)
    assert changed.any() and changed.sum() < t / 2
    whole = analyse(trial, contacts, body, **measure)
    window = analyse_changed(trial, contacts, body, previous, changed, **measure)
    for name in ("joint_pos", "joint_rot", "vel", "acc", "omega", "alpha", "spin"):
        np.testing.assert_allclose(getattr(window.kin, name), getattr(whole.kin, name), atol=1e-8, err_msg=name)
    for name in ("points", "active", "end", "valid"):
        np.testing.assert_allclose(getattr(window.support, name), getattr(whole.support, name), atol=1e-9)
    np.testing.assert_allclose(window.zmp, whole.zmp, atol=1e-8)
    np.testing.assert_array_equal(window.free_fall, whole.free_fall)
    np.testing.assert_allclose(window.angular_momentum, whole.angular_momentum, atol=1e-8)
    worst_window = torque_ratios(window.torques, body).max(axis=1)
    worst_whole = torque_ratios(whole.torques, body).max(axis=1)
    np.testing.assert_allclose(worst_window, worst_whole, atol=1e-4)
    a, b = report(window, body, trial, source=planted), report(whole, body, trial, source=planted)
    for key in ("zmp_inside_share", "torque_violation_frames", "flight_error_m", "flight_momentum_change",
                "jerk_m_s3", "deviation"):  # fmt: skip
        assert a[key] == pytest.approx(b[key], rel=1e-6, abs=1e-9), key
    # what the derivatives do not reach is the previous analysis, untouched
    idx = np.flatnonzero(changed)
    far = np.ones(t, dtype=bool)
    far[max(idx[0] - 12, 0) : idx[-1] + 13] = False
    np.testing.assert_array_equal(window.torques[far], previous.torques[far])


def _bumped(planted, body, feet, spans):
    """``planted`` with the body moved in 3-D by a smooth bump on each of ``spans``, the feet planted again."""
    shift = np.zeros((planted.n_frames, 3))
    for lo, hi in spans:
        shift[lo:hi] = np.sin(np.linspace(0, np.pi, hi - lo))[:, None] * np.array([0.6, 0.4, -0.5])
    return _plant(_shift_root(planted, state_joints(body)[0], shift), feet)


def test_changed_runs_far_apart_are_analysed_run_by_run(jumps):
    """Two bumps near either end of the clip (one span of changed frames would cover most of it): the
    re-analysis measures each run of changed frames on its own stretch and equals the whole-clip analysis there
    (same tolerances as above), while the frames between the runs stay the previous analysis's, bit for bit
    (a whole-clip analysis would measure them again: planting moves them by rounding)."""
    planted, feet, contacts, body, measure, previous = jumps
    t = planted.n_frames
    trial = _bumped(planted, body, feet, [(20, 70), (350, 400)])
    changed = changed_frames(trial, planted)
    idx = np.flatnonzero(changed)
    assert idx[-1] - idx[0] > 0.6 * t and not changed[120:300].any()
    whole = analyse(trial, contacts, body, **measure)
    window = analyse_changed(trial, contacts, body, previous, changed, **measure)
    for name in ("joint_pos", "vel", "acc", "omega", "alpha"):
        np.testing.assert_allclose(getattr(window.kin, name), getattr(whole.kin, name), atol=1e-8, err_msg=name)
    np.testing.assert_allclose(window.zmp, whole.zmp, atol=1e-8)
    np.testing.assert_array_equal(window.free_fall, whole.free_fall)
    worst = [torque_ratios(a.torques, body).max(axis=1) for a in (window, whole)]
    np.testing.assert_allclose(worst[0], worst[1], atol=1e-4)
    middle = slice(idx[idx < t // 2][-1] + 13, idx[idx > t // 2][0] - 12)  # beyond every run's derivative reach
    assert middle.stop - middle.start > 100
    np.testing.assert_array_equal(window.torques[middle], previous.torques[middle])
    np.testing.assert_array_equal(window.kin.acc[middle], previous.kin.acc[middle])


def test_flight_series_reuses_the_flights_a_change_leaves_alone(jumps):
    """A trial changed on one stretch: its flights (:func:`flight_series`) with an earlier analysis's known are
    the ones measured anew, figure for figure, and the flights away from the change are that analysis's own."""
    planted, feet, contacts, body, measure, previous = jumps
    known = flight_series(previous, body, planted.fps)
    assert len(known) >= 1
    first = known[0]
    lo = first.stop + 40  # a change after the first flight, far beyond its derivative reach
    trial = _bumped(planted, body, feet, [(lo, lo + 60)])
    trial_an = analyse_changed(trial, contacts, body, previous, changed_frames(trial, planted), **measure)
    reused = flight_series(trial_an, body, trial.fps, known=(previous, known))
    fresh = flight_series(trial_an, body, trial.fps)
    assert [(f.start, f.stop) for f in reused] == [(f.start, f.stop) for f in fresh]
    for a, b in zip(reused, fresh):
        for name in ("error", "drift", "change"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert reused[0] is first  # taken, not measured again
    assert flight_figures(reused, body) == flight_figures(fresh, body)
    assert report(trial_an, body, trial, flight=reused) == report(trial_an, body, trial)
