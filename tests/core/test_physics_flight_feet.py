"""The final flight works on the flights the result's own feet make (:func:`core.contacts.bearing`), as the report
judges them: CMU 131_03's hop, 1.4× onto 90 kg, whose planted push-off foot leaves the floor frames before the
input's contacts say it does. On the input's phase the solve held the wrong frames (frames 700–900: the flight's
angular momentum changed 47 % and its CoM ran 1.3 mm off the parabola); on the feet's it meets issue 16's bars."""

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.physics.body import body_model
from core.physics.flights import FLIGHT_BAR, MOMENTUM_BAR
from core.physics.options import PhysicsOptions
from core.physics.solve import physics_retarget
from core.physics.units import likely_unit
from tests.conftest import shared_file


def test_a_hop_lands_on_its_parabola_as_its_feet_fly():
    motion = read_bvh(shared_file("cmu_bvh_3dsmax/131_03.bvh")).frames(slice(700, 900))
    contacts = detect_contacts(motion)
    unit = likely_unit(standing_height(motion.skeleton, contacts.up))[0]  # the 3ds Max file's unit, m
    motion = motion.scaled(1.4)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    _, rep = physics_retarget(motion, contacts, body, PhysicsOptions())
    before, after = rep["before"], rep["after"]
    assert before["flight_phases"] >= 1 and after["flight_phases"] >= 1
    assert before["flight_momentum_change"] > 2 * MOMENTUM_BAR and before["flight_error_m"] > 2 * FLIGHT_BAR
    assert after["flight_momentum_change"] < MOMENTUM_BAR and after["flight_error_m"] < FLIGHT_BAR
