"""Flight by flight: the report gives each flight's figures and the worst (:func:`core.physics.metrics.report`),
and the retry judges the flight bars on the worst flight (:func:`core.physics.guard._bar_score`), where the
clip's RMS over all flights could hide one far off."""

import numpy as np

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.physics.body import body_model
from core.physics.flights import FLIGHT_BAR, MOMENTUM_BAR, _flight_kept, _flights_kept
from core.physics.guard import _bar_score
from core.physics.metrics import analyse, report
from tests.conftest import shared_file


def test_the_report_gives_every_flight_and_the_worst():
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(150, 700))  # three jumps
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 60.0, unit=0.0254 / 0.45, up=contacts.up)
    rep = report(analyse(motion, contacts, body), body, motion)
    flights = rep["flights"]
    assert len(flights) == rep["flight_phases"] >= 2
    frames = np.array([f["stop"] - f["start"] for f in flights])
    assert frames.sum() == rep["flight_frames"]
    errors = np.array([f["error_m"] for f in flights])
    changes = np.array([f["momentum_change"] for f in flights])
    # the clip's figures are the frame-weighted RMS of the flights'
    assert np.isclose(np.sqrt((frames * errors**2).sum() / frames.sum()), rep["flight_error_m"], rtol=1e-9)
    assert np.isclose(np.sqrt((frames * changes**2).sum() / frames.sum()), rep["flight_momentum_change"], rtol=1e-9)
    assert rep["flight_error_worst_m"] == errors.max() >= rep["flight_error_m"] - 1e-15
    assert rep["flight_momentum_change_worst"] == changes.max()


def test_the_retry_judges_the_flight_bars_flight_by_flight():
    """Of two results the retry keeps the one that misses fewer bars (:func:`core.physics.guard._bar_score`): one
    flight 1.5 mm off its parabola misses the bar though the clip's RMS over three flights is under 1 mm."""
    before = {"zmp_inside_share": 0.9, "torque_violation_frames": 3, "torque_worst_ratio": 1.2, "jerk_m_s3": 100.0,
              "deviation": 0.0, "flight_error_m": 3e-3, "flight_momentum_change": 0.2,
              "flight_error_worst_m": 5e-3, "flight_momentum_change_worst": 0.3}  # fmt: skip
    fine = before | {"zmp_inside_share": 1.0, "torque_violation_frames": 0, "torque_worst_ratio": 0.9,
                     "deviation": 0.01, "flight_error_m": 0.2e-3, "flight_momentum_change": 0.01,
                     "flight_error_worst_m": 0.3e-3, "flight_momentum_change_worst": 0.02}  # fmt: skip
    errors = np.array([0.1e-3, 0.1e-3, 1.5e-3])
    hidden = fine | {"flight_error_m": float(np.sqrt(np.mean(errors**2))), "flight_error_worst_m": float(errors.max())}
    assert hidden["flight_error_m"] < FLIGHT_BAR < hidden["flight_error_worst_m"]
    assert _bar_score(fine, before)[0] == 0 and _bar_score(hidden, before)[0] == 1
    spun = fine | {"flight_momentum_change_worst": 1.5 * MOMENTUM_BAR}
    assert _bar_score(spun, before)[0] == 1


def test_the_summary_names_the_worst_flight_when_there_are_several():
    """The report line a user reads: the clip's RMS, and the worst flight's when the clip has more than one."""
    from core.physics.apply import summary_lines

    after = {"zmp_inside_share": 1.0, "torque_violation_frames": 0, "flight_frames": 90, "flight_phases": 2,
             "flight_error_m": 0.8e-3, "flight_error_worst_m": 2.2e-3, "deviation": 0.01}  # fmt: skip
    before = after | {"flight_error_m": 20e-3, "flight_error_worst_m": 30e-3}
    figures = {"before": before, "after": after, "target_mass_kg": 90.0, "target_height_m": 1.99,
               "target_height_measured": True}  # fmt: skip
    line = next(p for p in summary_lines(figures, metres=lambda m: f"{1000 * m:.2g} mm") if "flight" in p)
    assert line == "flight CoM error 20 mm → 0.8 mm (worst flight 2.2 mm)"
    one = figures | {"after": after | {"flight_phases": 1}}
    assert "worst" not in next(p for p in summary_lines(one) if "flight" in p)


def test_a_trial_that_loses_a_flight_does_not_keep_the_flights():
    """A trial with the first of three jumps held on the floor (the pose before take-off repeated through it) has
    the other flights as they were, each within what they were: judged only by the flights it still has, it kept
    them. A flight of the motion that no flight of the trial overlaps is lost (:func:`_flights_kept`)."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(150, 700))
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 60.0, unit=0.0254 / 0.45, up=contacts.up)
    was = report(analyse(motion, contacts, body), body, motion)
    a, b = was["flights"][0]["start"], was["flights"][0]["stop"]
    held = motion.copy()
    held.translations[a - 5 : b + 5] = held.translations[a - 6]
    held.rotations[a - 5 : b + 5] = held.rotations[a - 6]
    now = report(analyse(held, detect_contacts(held), body), body, held)
    assert len(now["flights"]) == len(was["flights"]) - 1
    assert all(_flight_kept(f, was["flights"]) for f in now["flights"])  # what the flights it has say
    assert not _flights_kept(now, was)
    assert _flights_kept(was, was)
