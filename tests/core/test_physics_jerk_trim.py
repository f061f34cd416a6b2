"""The jerk trim (:mod:`core.physics.jerk_trim`): what the solve added, smoothed as far as every figure allows.

The smoother is checked against scipy's sparse solve of Whittaker's normal equations; the stage on the Mixamo rig's
own walk (the solve left it at ×1.097 of the input's jerk, over issue 16's ×1.05) against the same solve without it,
every figure re-read from the written motion and the feet's sliding measured on both; on the noisy CMU walk 02_01,
where the solve's change also cancels the capture's jitter, it must leave the result as it was."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from core import quaternion as quat
from core.contacts import detect_contacts, foot_skating
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.physics.body import body_model
from core.physics.jerk_trim import TRIM_ROUNDS, TRIM_SPANS, _given_back, _kept, smooth_frames, smoothed_change
from core.physics.options import PhysicsOptions
from core.physics.planting import with_toes
from core.physics.solve import physics_retarget
from core.physics.units import likely_unit
from tests.conftest import shared_file


@pytest.mark.parametrize("t, span", [(5, 1.0), (200, 0.9), (700, 3.6)])
def test_smooth_frames_is_whittakers_smoother(t, span):
    """(I + λ·D₃ᵀD₃) y = x with λ = span⁶, D₃ the third differences: scipy's sparse LU on the same system."""
    rng = np.random.default_rng(t)
    x = np.cumsum(rng.normal(size=(t, 2, 3)), axis=0)
    d = sp.diags([-1.0, 3.0, -3.0, 1.0], [0, 1, 2, 3], shape=(t - 3, t))
    a = (sp.identity(t) + span**6 * (d.T @ d)).tocsc()
    expected = spla.splu(a).solve(x.reshape(t, -1)).reshape(x.shape)
    assert np.allclose(smooth_frames(x, span), expected, rtol=1e-9, atol=1e-9 * np.abs(x).max())


def _changed(motion, step_at: int):
    """``motion`` with a slow turn of one joint, a slow drift of the root and, from ``step_at`` on, a step of that
    joint (a change that switches on within one frame, as planting's lift does)."""
    t = np.linspace(0.0, 1.0, motion.n_frames)
    angle = 0.2 * np.sin(np.pi * t) + 0.05 * (np.arange(motion.n_frames) >= step_at)
    rotations = motion.rotations.copy()
    rotations[:, 3] = quat.multiply(rotations[:, 3], quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), angle))
    translations = motion.translations.copy()
    translations[:, 0, 0] += 2.0 * t**2
    return dataclasses.replace(motion, rotations=rotations, translations=translations)


def test_smoothed_change_smooths_a_step_and_keeps_the_rest():
    """The change's step is spread (its third difference on the joint's rotation falls), what is smooth stays (the
    root's drift, the turn away from the step), no change stays none, and ``keep`` 1 keeps the result exactly."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, 121))
    changed = _changed(motion, 60)
    back = smoothed_change(motion, changed, 0.02)
    jolt = [np.abs(np.diff(quat.log(m.rotations[:, 3]), 3, axis=0)).max() for m in (changed, back)]
    assert jolt[1] < 0.5 * jolt[0]
    assert np.allclose(back.translations[:, 0], changed.translations[:, 0], atol=1e-9 * 2.0)  # a quadratic drift
    away = np.r_[0:50, 70:120]
    assert np.abs(quat.distance(back.rotations[away, 3], changed.rotations[away, 3])).max() < 1e-3
    same = smoothed_change(motion, motion, 0.02)
    assert np.abs(same.world_positions() - motion.world_positions()).max() < 1e-9
    keep = np.zeros(motion.n_frames)
    keep[40:80] = 1.0
    kept = smoothed_change(motion, changed, 0.02, keep)
    assert np.allclose(kept.rotations[40:80], changed.rotations[40:80], atol=1e-12)
    assert not np.allclose(kept.rotations[:40], changed.rotations[:40], atol=1e-12)


HELD = {
    "zmp_inside_share": 0.995, "zmp_outside_mean_m": 0.001, "torque_violations": 0, "torque_violation_frames": 0,
    "torque_worst_ratio": 0.9, "jerk_m_s3": 110.0, "deviation": 0.01, "flight_error_worst_m": 0.0005,
    "flight_momentum_change_worst": 0.02,
}  # fmt: skip
INPUT = {"zmp_inside_share": 0.7, "torque_violation_frames": 9, "torque_worst_ratio": 1.3, "jerk_m_s3": 100.0}


def test_kept_refuses_any_figure_worse_than_the_result():
    """A trial may take the result's place only with every figure as good (within float rounding): less jerk buys
    nothing else. Each figure worsened alone, by a little, is refused; the same figures, or better ones, are kept."""
    assert _kept(HELD | {"jerk_m_s3": 100.0}, HELD, INPUT, 0, 0)
    assert _kept(HELD | {"torque_worst_ratio": 0.85, "zmp_inside_share": 1.0}, HELD, INPUT, 0, 0)
    worse = [
        {"zmp_inside_share": 0.994}, {"zmp_outside_mean_m": 0.0011}, {"torque_violations": 1},
        {"torque_violation_frames": 1, "torque_violations": 1}, {"torque_worst_ratio": 0.901},
        {"flight_error_worst_m": 0.00051}, {"flight_momentum_change_worst": 0.021}, {"deviation": 0.0102},
    ]  # fmt: skip
    for change in worse:
        assert not _kept(HELD | {"jerk_m_s3": 100.0} | change, HELD, INPUT, 0, 0), change
    assert not _kept(HELD | {"jerk_m_s3": 100.0}, HELD, INPUT, 1, 0)  # a frame further over than in the input
    # a bar the result met, lost (the jerk's bar is met at ×1.05 of the input's)
    assert not _kept(HELD | {"jerk_m_s3": 106.0}, HELD | {"jerk_m_s3": 104.0}, INPUT, 0, 0)


def test_give_back_all_at_once_or_by_halves_all_of_it_on_the_last_round():
    """All at once: the result's change kept as far as the spread mask reaches. By halves: half of what is left each
    round where the frame is made worse again, the rest of the ramp untouched, all of it on the last round."""
    worse = np.array([0.0, 0.25, 1.0, 1.0, 0.25, 0.0])
    keep = np.zeros(6)
    assert np.array_equal(_given_back(keep, worse, 1.0), worse)
    levels = []
    for _ in range(TRIM_ROUNDS - 1):
        keep = _given_back(keep, worse, 0.5)
        levels.append(keep[2])
    assert levels[:-1] == [1 - 0.5**k for k in range(1, TRIM_ROUNDS - 1)] and levels[-1] == 1.0
    assert keep[0] == keep[5] == 0.0 and 0.0 < keep[1] < 1.0


def _solve(path: str, scale: float, trim: bool):
    motion = read_bvh(shared_file(path))
    motion = motion.frames(slice(1, None)).scaled(scale) if scale != 1.0 else motion
    contacts = detect_contacts(motion)
    unit = likely_unit(standing_height(motion.skeleton, contacts.up))[0]
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    out, rep = physics_retarget(motion, contacts, body, PhysicsOptions(trim_jerk=trim))
    return motion, contacts, out, rep, unit


def test_the_trim_takes_the_mixamo_walks_jerk_under_the_bar_and_nothing_else_moves():
    """Mixamo's own walk on its rig: the solve's result ×1.097 of the input's jerk (README), trimmed ×1.00; every
    other figure as without the trim (within the judge's allowances), and the feet in contact slide no farther."""
    motion, contacts, plain, plain_rep, unit = _solve("mixamo/Walk-In-Circle.bvh", 1.0, False)
    _, _, trimmed, rep, _ = _solve("mixamo/Walk-In-Circle.bvh", 1.0, True)
    assert plain_rep["jerk_trim_s"] == 0.0 and rep["jerk_trim_s"] in TRIM_SPANS
    a, b, was = plain_rep["after"], rep["after"], rep["before"]
    assert a["jerk_m_s3"] > 1.05 * was["jerk_m_s3"] >= b["jerk_m_s3"]  # the bar missed, then met
    # the jerk read independently of the report: world joint positions of the written motions, third differences
    jerks = [np.linalg.norm(np.diff(m.world_positions(), 3, axis=0), axis=-1).mean() for m in (motion, plain, trimmed)]
    assert jerks[2] < jerks[1] and jerks[2] <= 1.05 * jerks[0]
    assert b["torque_violation_frames"] <= a["torque_violation_frames"]
    assert b["torque_worst_ratio"] <= a["torque_worst_ratio"] * (1 + 1e-6)  # smoothed whole it rose 0.757 → 0.763
    assert b["zmp_inside_share"] >= a["zmp_inside_share"] * (1 - 1e-6)
    assert b["deviation"] <= a["deviation"] + 1e-4
    flags = with_toes(motion, contacts)
    slides = [foot_skating(m, flags).total_distance * unit for m in (plain, trimmed)]
    assert slides[1] <= 1.01 * slides[0]


def test_the_trim_leaves_a_noisy_capture_as_it_was():
    """On CMU 02_01 (1.4× onto 90 kg) the solve's change pins feet the capture jitters: smoothed, the jitter comes
    back (jerk ×0.977 → ×1.001, the feet sliding 1.20 → 1.47 m at 0.02 s), so no span is kept."""
    _, _, plain, plain_rep, _ = _solve("cmu_bvh_cgspeed/02_01.bvh", 1.4, False)
    _, _, trimmed, rep, _ = _solve("cmu_bvh_cgspeed/02_01.bvh", 1.4, True)
    assert rep["jerk_trim_s"] == 0.0
    assert np.array_equal(trimmed.rotations, plain.rotations) and np.array_equal(
        trimmed.translations, plain.translations
    )
