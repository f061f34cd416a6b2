"""Issue 16 on the jumps (CMU 01_01, frames 1–799, 1.4× onto 90 kg, as the benchmark's row): the torque
constraint must not hinge on the exact weight of the plans' unseen-acceleration term. At 0.003 and 0.005 instead
of the default 0.004, 8 frames stayed over a limit at the landing at 643–656 (the repair's first local plan left
some over, or one worse than the input, and was refused) and, once that was searched on, 2 after a landing at
289–290 (refused for moving a flight); each of the three now ends with none, and the deviation and flight bars
hold."""

import pytest

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.physics.body import body_model
from core.physics.options import PhysicsOptions
from core.physics.solve import physics_retarget
from core.physics.units import likely_unit
from tests.conftest import shared_file


@pytest.mark.parametrize("unseen", [0.003, 0.005])
def test_the_jumps_torque_constraint_holds_either_side_of_the_unseen_weight(unseen):
    source = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 800))
    unit = likely_unit(standing_height(source.skeleton, detect_contacts(source).up))[0]
    motion = source.scaled(1.4)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    _, rep = physics_retarget(motion, contacts, body, PhysicsOptions(plan_unseen=unseen))
    after = rep["after"]
    assert rep["before"]["torque_violation_frames"] > 50
    assert after["torque_violation_frames"] == 0
    assert after["deviation"] < 0.015
    assert after["flight_error_m"] < 0.001 and after["flight_momentum_change"] < 0.05
