"""A flight the clip ends in (CMU 01_01 cut at frame 800, mid-jump) is turned to hold its angular momentum too:
there is no landing to bring the turn back to zero at, so it runs on from take-off; and a flight the clip starts
in, from its landing back."""

import numpy as np

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.physics.body import body_model
from core.physics.flights import _flight_spin, _turn_about_com, airborne
from core.physics.metrics import analyse, flight_momentum_change
from core.physics.planting import with_toes
from tests.conftest import shared_file


def test_a_flight_the_clip_ends_in_keeps_its_angular_momentum():
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(600, 800)).scaled(1.4)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45, up=contacts.up)
    contacts = with_toes(motion, contacts)
    an = analyse(motion, contacts, body, smooth=0.2)
    start, stop = airborne(an)[-1]
    assert stop == motion.n_frames and start > 0  # the clip ends in the air

    def change(a) -> float:
        return float(np.sqrt(np.mean(flight_momentum_change(a, body, start, stop)[1] ** 2)))

    spin = _flight_spin(an, body, motion.fps, 0.1)
    landed = airborne(an)[-2][1]  # the flight before (this clip starts in one too) and its tail
    assert not spin[landed + 12 : start - 1 - 12].any() and spin[start:].any()  # from take-off (and its tail) on
    turned = _turn_about_com(motion, an.com / body.unit, spin)
    after = analyse(turned, contacts, body, smooth=0.2)
    assert change(after) < 0.5 * change(an)


def test_a_flight_the_clip_starts_in_keeps_its_angular_momentum():
    """The mirror case (the benchmark's rest of 01_01, from frame 800, starts mid-jump: that phase's change 28.8 % → 2.6 % after
    the whole solve): no take-off to start the turn from, so it is zero at landing and runs back from there."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(800, 1000)).scaled(1.4)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45, up=contacts.up)
    contacts = with_toes(motion, contacts)
    an = analyse(motion, contacts, body, smooth=0.2)
    start, stop = airborne(an)[0]
    assert start == 0 and stop < motion.n_frames  # the clip starts in the air

    def change(a) -> float:
        return float(np.sqrt(np.mean(flight_momentum_change(a, body, start, stop)[1] ** 2)))

    spin = _flight_spin(an, body, motion.fps, 0.1)
    assert spin[: stop - 1].any() and not spin[stop + 12 :].any()  # up to landing (and its tail)
    assert np.allclose(spin[stop], 0.0, atol=1e-3)  # back to the capture's heading by landing
    turned = _turn_about_com(motion, an.com / body.unit, spin)
    after = analyse(turned, contacts, body, smooth=0.2)
    assert change(after) < 0.5 * change(an)
