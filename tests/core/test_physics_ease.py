"""The physics' planting contacts: anchors eased in and out at each contact span's ends
(:func:`core.physics.planting.eased_anchors`), so a planted foot leaves and reaches its anchor at its path's
velocity instead of stopping dead, except next to a flight (take-off and landing keep their pins)."""

import numpy as np
import pytest

from core.contacts import contact_spans, detect_contacts
from core.io.bvh import read_bvh
from core.limbs import find_feet, standing_height
from core.physics.body import body_model
from core.physics.dynamics import torque_ratios
from core.physics.flights import airborne
from core.physics.metrics import analyse
from core.physics.options import PhysicsOptions
from core.physics.planting import _plant, eased_anchors, planting_anchors, with_toes
from core.physics.units import likely_unit
from tests.conftest import shared_file


def jerk(motion) -> float:
    """Mean |third difference| of every joint's world position (the physics report's jerk, per frame³)."""
    return float(np.linalg.norm(np.diff(motion.world_positions(), 3, axis=0), axis=-1).mean())


@pytest.fixture(scope="module")
def walk():
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, 241)).scaled(1.4)
    return motion, detect_contacts(motion)


def test_anchors_ease_only_at_span_ends_from_the_path_to_the_anchor(walk):
    motion, contacts = walk
    eased = eased_anchors(motion, contacts, 0.1)
    n = round(0.1 * motion.fps)
    pos = motion.world_positions()[:, contacts.joints]
    changed = np.any(eased.anchors != contacts.anchors, axis=-1) & contacts.flags
    eased_ends = 0
    for i in range(len(contacts.joints)):
        for a, b in contact_spans(contacts.flags[:, i]):
            k = min(n, (b - a) // 2)
            assert not changed[a + k : b - k, i].any()  # the middle of a span keeps its anchor
            if b < motion.n_frames and k >= 1:  # a release (the walk has no flight): eased onto the path
                eased_ends += 1
                # distance to the path shrinks towards the span's end, distance to the anchor grows
                to_path = np.linalg.norm(eased.anchors[b - k : b, i] - pos[b - k : b, i], axis=-1)
                gone = np.linalg.norm(eased.anchors[b - k : b, i] - contacts.anchors[b - k : b, i], axis=-1)
                full = np.linalg.norm(pos[b - k : b, i] - contacts.anchors[b - k : b, i], axis=-1)
                np.testing.assert_array_less(to_path, full + 1e-9)
                np.testing.assert_allclose(gone + to_path, full, atol=1e-9)  # on the segment anchor → path
                assert to_path[-1] < 0.2 * full[-1] + 1e-9
    assert eased_ends >= 3
    assert eased_anchors(motion, contacts, 0.0) is contacts


def test_eased_planting_adds_less_jerk_than_pinning(walk):
    motion, contacts = walk
    base = jerk(motion)
    pinned = jerk(_plant(motion, contacts, hinge=True)) / base
    eased = jerk(_plant(motion, eased_anchors(motion, contacts, 0.1), hinge=True)) / base
    assert eased < pinned - 0.01


def test_take_off_and_landing_keep_their_pins():
    """CMU 01_01 (jumps): a contact end next to a frame with no foot in contact is not eased."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 500)).scaled(1.4)
    contacts = detect_contacts(motion)
    eased = eased_anchors(motion, contacts, 0.1)
    supported = contacts.flags.any(axis=1)
    m = round(0.2 * motion.fps)
    flights = 0
    for i in range(len(contacts.joints)):
        for a, b in contact_spans(contacts.flags[:, i]):
            if b < motion.n_frames and not supported[b : b + m].all():
                flights += 1
                last = slice(max(a, b - round(0.1 * motion.fps)), b)
                np.testing.assert_array_equal(eased.anchors[last, i], contacts.anchors[last, i])
    assert flights >= 2


def test_a_heel_raised_on_its_toe_is_eased_not_pinned():
    """CMU 131_01 (3ds Max BVH, clean): the left heel leaves the floor for 0.12 s while its toe stays down. No
    ankle is in contact then, but the body still stands: with the toes' contacts as the support, that release
    is eased, and planting adds far less jerk than with the ankle let go at once."""
    motion = read_bvh(shared_file("cmu_bvh_3dsmax/131_01.bvh")).frames(slice(1, 361)).scaled(1.4)
    contacts = detect_contacts(motion)
    toes = with_toes(motion, contacts)
    ankles_only = contacts.flags.any(axis=1)
    standing = toes.flags.any(axis=1)
    assert (standing & ~ankles_only).sum() >= 10  # the heel raise: no ankle down, a toe down
    eased = eased_anchors(motion, contacts, 0.1, standing)
    before = eased_anchors(motion, contacts, 0.1)
    assert np.any(eased.anchors != before.anchors)  # that release is eased now
    base = jerk(motion)
    assert jerk(_plant(motion, eased, hinge=True)) / base < jerk(_plant(motion, before, hinge=True)) / base - 0.03


def test_the_default_ease_keeps_planting_smooth_on_a_clean_60_fps_walk():
    """The Mixamo rig's own walk (60 fps, clean): eased over 0.1 s (six frames) planting alone took its jerk to
    ×1.29 of the input's, the releases' change of velocity taken in six frames; over the default 0.2 s, ×1.09."""
    motion = read_bvh(shared_file("mixamo/Walk-In-Circle.bvh"))
    contacts = detect_contacts(motion)
    supported = with_toes(motion, contacts).flags.any(axis=1)
    base = jerk(motion)

    def planted(seconds: float) -> float:
        return jerk(_plant(motion, eased_anchors(motion, contacts, seconds, supported), hinge=True)) / base

    default = planted(PhysicsOptions().plant_ease)
    assert default < 1.15
    assert default < planted(0.1) - 0.1


def test_a_frame_lost_between_two_steps_is_no_flight():
    """CMU 131_01 (3ds Max BVH, 1.4× onto 90 kg): on frame 702 no ankle or toe is in contact (both ankles above
    the detector's speed threshold) but the body does not fall. Planting treated it as a flight: the right
    ankle's release before it and the left's touch-down at 703 stayed pinned, the ankle snapped 5.9 cm onto its
    anchor and planting alone took the left hip there to 2.73 of its limit, against the input's 2.10.
    :func:`planting_anchors` eases them (a stretch without support keeps its pins from 3 frames, a flight
    phase's least length): the torques near that touch-down stay within 0.1 of the input's worst ratio there."""
    capture = read_bvh(shared_file("cmu_bvh_3dsmax/131_01.bvh")).frames(slice(1, None))
    motion = capture.scaled(1.4)
    contacts = detect_contacts(motion)
    unit = likely_unit(standing_height(capture.skeleton, contacts.up))[0]  # the capture's unit: a 1.4× taller body
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    toes = with_toes(motion, contacts)
    assert toes.flags[701].any() and not toes.flags[702].any() and toes.flags[703].any()  # one frame lost
    before = analyse(motion, toes, body)
    assert not len(airborne(before))  # no flight in this walk
    feet = planting_anchors(motion, contacts, toes, before, body, PhysicsOptions())
    planted = _plant(motion, feet, hinge=True)
    ankle = contacts.joints[np.flatnonzero(contacts.flags[703])[0]]
    moved = np.linalg.norm(planted.world_positions()[703, ankle] - motion.world_positions()[703, ankle]) * unit
    assert moved < 0.02  # eased in from the path (5.9 cm pinned)
    near = slice(690, 720)
    r_in = torque_ratios(before.torques, body)[near].max()
    after = analyse(planted, toes, body, ground=before.support.ground)
    assert torque_ratios(after.torques, body)[near].max() <= r_in + 0.1  # pinned: 0.63 over


def test_physics_keeps_the_toes_a_planted_retarget_holds():
    """CMU 02_01 retargeted onto its 1.4× copy with its feet planted, toes included (the retargeter's contacts:
    no ankle or toe slides), then Physics (90 kg, 1.99 m; the operator's path): planting eased each ankle off
    its anchor while the heel rose over a toe still down, and once the ankle was let go the plans' shift
    carried the toe: toes slid 0.56 and 0.81 units/s (1.6 and 2.3 % of the stature a second) over the last
    0.1–0.2 s of each step. :func:`held_toes` keeps a toe the input holds still: under 0.5 % of the stature a
    second on each toe (a few frames at the clip's first touch-down remain), the ankles still still."""
    from core.physics.apply import PhysicsSettings, apply_physics
    from core.retarget.metrics import skating_by_joint
    from core.retarget.pipeline import retarget

    source = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh"))
    result = retarget(source, source.scaled(1.4).skeleton)
    contacts = result.contacts
    stature = standing_height(result.motion.skeleton, result.up)

    def sliding(motion):  # (F,) per contact joint, statures per second (relative to the root's shift)
        distance, seconds = skating_by_joint(motion, contacts, motion.world_positions() - result.shift[:, None])
        return distance / seconds / stature

    assert sliding(result.motion).max() < 1e-9  # the retarget holds ankles and toes
    settings = PhysicsSettings(target_mass=90.0, target_height=1.99, source_mass=60.0)
    out = apply_physics(result.motion, settings, up=result.up, source=source).motion
    after = sliding(out)
    toes = np.isin(contacts.joints, [j for _, j in find_feet(out.skeleton, result.up).values() if j is not None])
    assert toes.sum() == 2
    assert after[toes].max() < 0.005  # 0.016 and 0.023 with the toes let go
    assert after[~toes].max() < 1e-6
