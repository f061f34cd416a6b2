"""The physics report judges the result by the contacts its own feet can bear (core.contacts.bearing).

Found by the independent re-measure (tests/physics_reference.py): the report analysed the result with the
input's contacts, so where the solve lifted a foot the ground still pushed on it. On CMU 131_03 (frames
740-879, 1.4x taller, 90 kg) the report counted, on 11 frames, a foot beyond the detector's own thresholds
for leaving a contact, and gave a 32-frame flight with a 0.55 mm CoM error; judged by the feet of the
result, the flight is 42 frames long and 1.43 mm off its parabola (on the whole clip 33 -> 40 frames,
0.86 -> 1.23 mm, angular momentum change 5.8 % -> 37.9 %, worst |tau|/limit 1.47 -> 1.83). Since the final
flight works on the feet's flights too (core.physics.flights._final_flight), this window's is 33 frames long (29
with every foot beyond the thresholds, as in the input).
"""

from __future__ import annotations

import numpy as np
import pytest

from core import synthetic
from core.contacts import bearing, detect_contacts, height_and_speed
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.motion import Motion
from core.physics.body import body_model
from core.physics.options import PhysicsOptions
from core.physics.planting import with_toes
from core.physics.solve import physics_retarget
from core.physics.units import likely_unit
from tests import physics_reference as ref
from tests.conftest import shared_file


def test_bearing_keeps_the_contacts_of_their_own_motion_and_drops_a_lifted_foot():
    motion = synthetic.walk(180, 60.0)
    contacts = detect_contacts(motion)
    kept = bearing(contacts, motion.world_positions())
    assert kept.flags.sum() >= 0.95 * contacts.flags.sum()  # only debounce-filled frames may go
    span = contacts.spans(0)[1]
    lifted = motion.copy()
    frames = slice(int(span[0]), int(span[1]))
    lifted.translations[frames, 0] += 0.2 * contacts.up  # the whole body 20 cm up over one contact of joint 0
    moved = bearing(contacts, lifted.world_positions())
    assert not moved.flags[frames].any()
    outside = np.ones(motion.n_frames, dtype=bool)
    outside[int(span[0]) - 3 : int(span[1]) + 3] = False  # the smoothing reaches a frame or two
    np.testing.assert_array_equal(moved.flags[outside], kept.flags[outside])


def _beyond(motion, contacts) -> np.ndarray:
    """(T, F) joints of ``contacts`` beyond the thresholds at which the detector ends a contact, on ``motion``."""
    h, v = height_and_speed(motion.world_positions()[:, contacts.joints], contacts.up, contacts.fps, 0.05)
    floor = contacts.floor
    return (h > floor + 1.5 * (contacts.height_threshold - floor)) | (v > 1.5 * contacts.speed_threshold)


def test_the_after_figures_count_no_support_under_a_lifted_foot():
    motion = read_bvh(shared_file("cmu_bvh_3dsmax/131_03.bvh")).frames(slice(740, 880)).scaled(1.4)
    contacts = detect_contacts(motion)
    unit = likely_unit(standing_height(motion.skeleton, contacts.up))[0]
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    out, rep = physics_retarget(motion, contacts, body, PhysicsOptions(), series=True)
    toes = with_toes(motion, contacts)
    beyond = _beyond(out, toes)
    active = rep["series"]["after"].support_active  # (T, 4 per box): boxes foot, toe of each leg in turn
    boxes = active.reshape(len(active), -1, 4).any(axis=2)
    names = [motion.skeleton.names[j] for j in toes.joints]
    order = [names.index(n) for n in ("LeftAnkle", "LeftToe", "RightAnkle", "RightToe")]
    assert not (boxes & beyond[:, order]).any()
    aloft = beyond.all(axis=1).sum()  # frames the result's feet are all off the floor (one flight here)
    assert aloft >= _beyond(motion, toes).all(axis=1).sum()  # as long as in the input (29 frames)
    assert rep["after"]["flight_frames"] >= aloft  # the report's flight is at least that long


RATES = (24.0, 30.0, 60.0, 120.0)


def _standing_then_rising(fps: float, unit: float, rise: float) -> tuple:
    """The procedural humanoid standing still for 0.5 s (its contacts detected on that), then the same body
    rising at ``rise`` body sizes per second (a foot leaving the floor), in ``unit`` (1: metres, 100: cm).
    Returns the contacts of the still motion, the rising motion and the frame the rise starts."""
    still = Motion.rest(synthetic.humanoid(), int(round(0.8 * fps)), fps).scaled(unit)
    contacts = detect_contacts(still)
    start = int(round(0.5 * fps))
    rising = still.copy()
    t = np.maximum(np.arange(still.n_frames) - start, 0) / fps
    rising.translations[:, 0] += (rise * still.skeleton.size() * t)[:, None] * contacts.up
    return contacts, rising, start


@pytest.mark.parametrize("unit", (1.0, 100.0))
@pytest.mark.parametrize("fps", RATES)
def test_a_foot_rising_within_the_hysteresis_band_bears_no_weight(fps, unit):
    """A foot 0-6 % of the body size above its floor (inside the detector's hysteresis band, 1.5 x 4 %) and
    rising at 0.6 body sizes per second (under the band's 0.75, over the 0.5 at which a contact may begin)
    is leaving the floor: from 0.03 s after it starts to rise until it leaves the band (0.1 s) it bears
    nothing, at every frame rate and in metres or centimetres. Before core.contacts.bearing's vertical test
    it bore the body on every one of those frames (CMU 05_02 after physics, frames 829-834). Standing still,
    every frame bears."""
    contacts, rising, start = _standing_then_rising(fps, unit, 0.6)
    assert contacts.flags.all()
    kept = bearing(contacts, rising.world_positions())
    assert kept.flags[:start].all()
    leaving = slice(start + int(np.ceil(0.03 * fps)), start + int(0.09 * fps) + 1)
    assert leaving.stop - leaving.start >= 2
    assert not kept.flags[leaving].any()


@pytest.mark.parametrize("unit", (1.0, 100.0))
@pytest.mark.parametrize("fps", RATES)
def test_a_foot_bears_on_the_frame_it_takes_off(fps, unit):
    """A foot on the floor on the last frame before it rises at 1.2 body sizes per second (a jump's take-off, the
    push's strongest frame) bears it, at every rate and unit; so do the frames before. A central difference over
    1/30 s either side saw it rising there (0.6 body sizes/s) and dropped it: the benchmark's jumps 01_01 then
    read a frame over a limit at take-off (778, 1.25) where every bar had held."""
    contacts, rising, start = _standing_then_rising(fps, unit, 1.2)
    kept = bearing(contacts, rising.world_positions())
    assert kept.flags[: start + 1].all()


@pytest.mark.parametrize("unit", (1.0, 100.0))
@pytest.mark.parametrize("fps", RATES)
def test_a_walk_keeps_its_own_contacts_at_every_rate(fps, unit):
    """The procedural walk judged by its own contacts loses none of a stance but the debounce-filled frames
    (at most 5 %), and no stance loses a frame while its foot is still on the floor: at 24, 30, 60 and
    120 fps, in metres and centimetres (the vertical test's velocity spans 1/30 s either side at every
    rate, so a toe-off is seen as early at 30 fps as at 120)."""
    motion = synthetic.walk(int(3 * fps), fps).scaled(unit)
    contacts = detect_contacts(motion)
    kept = bearing(contacts, motion.world_positions())
    assert kept.flags.sum() >= 0.95 * contacts.flags.sum()
    height = motion.world_positions()[:, contacts.joints] @ contacts.up
    flat = contacts.flags & (height <= contacts.floor + 0.005 * motion.skeleton.size())  # on the floor, 5 mm
    assert kept.flags[flat].all()


def _standing_then_sliding(fps: float, unit: float, speed: float) -> tuple:
    """The procedural humanoid standing still for 0.5 s (its contacts detected on that), then sliding along the
    floor at ``speed`` body sizes per second, in ``unit``. Returns the still motion's contacts, the sliding
    motion and the frame the slide starts."""
    still = Motion.rest(synthetic.humanoid(), int(round(0.8 * fps)), fps).scaled(unit)
    contacts = detect_contacts(still)
    start = int(round(0.5 * fps))
    sliding = still.copy()
    t = np.maximum(np.arange(still.n_frames) - start, 0) / fps
    ahead = np.cross(contacts.up, np.eye(3)[np.argmin(np.abs(contacts.up))])
    sliding.translations[:, 0] += (speed * still.skeleton.size() * t)[:, None] * ahead / np.linalg.norm(ahead)
    return contacts, sliding, start


@pytest.mark.parametrize("unit", (1.0, 100.0))
@pytest.mark.parametrize("fps", RATES)
def test_a_foot_only_the_hysteresis_holds_bears_but_not_steadily(fps, unit):
    """Feet on the floor sliding at 0.6 body sizes per second (over the 0.5 at which a contact may begin, under the
    hysteresis band's 0.75) still bear the body, but not steadily: a stretch where no foot bears steadily is a
    flight when the body falls freely there (core.physics.metrics.flights). Independent detectors have no
    hysteresis; held by it, the report read CMU 01_01's take-offs as late as its feet slid (below). Standing, and on
    the frame the slide starts (its speed over the last 1/30 s still zero), every foot bears steadily."""
    contacts, sliding, start = _standing_then_sliding(fps, unit, 0.6)
    kept = bearing(contacts, sliding.world_positions())
    assert kept.flags.all()
    assert kept.steady[: start + 1].all()
    late = start + int(np.ceil(0.1 * fps))  # past the smoothing and the 1/30 s reach
    end = sliding.n_frames - int(np.ceil(0.05 * fps)) - 1  # the smoothing pads the clip's end with its last frame
    assert not kept.steady[late:end].any()
    still = bearing(contacts, Motion.rest(synthetic.humanoid(), sliding.n_frames, fps).scaled(unit).world_positions())
    assert still.steady.all()
    assert not kept.frames(slice(late, end)).steady.any()  # cut with its frames


def test_take_offs_the_toes_slide_into_are_measured_as_an_independent_detector_finds_them():
    """The report's flights agree with tests/physics_reference.py's (no hysteresis) on the written motion. CMU 01_01
    frames 2520-2751 (a jump, 1.4x taller, 90 kg): the solve's toes slide at up to 0.7 statures/s at take-off, held
    in contact by the detector's hysteresis (1.5x its 0.5 body sizes/s), so the report's flight began there about
    6 frames late and read 0.27 mm from its parabola where the measure found 0.57-1.28 mm. Now the flight starts
    where no foot bears steadily, the solve puts those frames on the parabola too, and both read it."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(2520, 2752)).scaled(1.4)
    contacts = detect_contacts(motion)
    unit = likely_unit(standing_height(motion.skeleton, contacts.up))[0]
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    out, rep = physics_retarget(motion, contacts, body, PhysicsOptions())
    measured = ref.measure(out, body)
    assert len(measured.flights) == 1 and rep["after"]["flight_frames"] >= 50
    assert [d for d in ref.disagreements(rep["after"], measured) if d.startswith("flight")] == []
    assert max(f["rms_mm_range"][0] for f in measured.flights) <= 1.0  # the bar, as measured from outside


@pytest.mark.parametrize("unit", (1.0, 100.0))
def test_the_entry_thresholds_follow_the_stature_when_given(unit):
    """The detector's thresholds are fractions of the skeleton's largest rest extent (``Contacts.size``), which a rest
    pose with its arms out makes larger than the stature (Bandai Namco's rigs: 1.31x). Given the stature, a foot
    sliding at 0.4 body sizes per second bears steadily on a body whose stature is its size, and not on one whose
    stature is 0.7 of it (0.4 > 0.7 x 0.5); it bears either way (the hysteresis band is the detector's)."""
    contacts, sliding, start = _standing_then_sliding(60.0, unit, 0.4)
    late, end = start + 6, sliding.n_frames - 4
    size = sliding.skeleton.size()
    assert contacts.size == pytest.approx(size)
    tall = bearing(contacts, sliding.world_positions(), stature=size)
    short = bearing(contacts, sliding.world_positions(), stature=0.7 * size)
    assert tall.flags[late:end].all() and short.flags[late:end].all()
    assert tall.steady[late:end].all()
    assert not short.steady[late:end].any()
    np.testing.assert_array_equal(bearing(contacts, sliding.world_positions()).steady, tall.steady)
