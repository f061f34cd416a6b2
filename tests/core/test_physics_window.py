"""The windowed re-analysis (:func:`core.physics.metrics.analyse_changed`) against the whole-clip one."""

import numpy as np
import pytest

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.physics.body import body_model
from core.physics.dynamics import torque_ratios
from core.physics.metrics import analyse, analyse_changed, changed_frames, report
from core.physics.solve import _plant, _shift_root, state_joints, with_toes  # planted as the solver plants
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


@pytest.mark.parametrize("span", [(150, 230), (0, 60), (360, 419)])  # inside, at the clip's start, at its end
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
