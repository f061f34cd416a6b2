"""The solve and its report judge a result's flights on the input's flights too: a flight the solve slowed until most
of its frames ask for more than the free-fall threshold is still the performance's flight, and its distance from the
parabola is reported, not dropped with the phase (:func:`core.physics.metrics.flights`' ``flown``)."""

import numpy as np

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.physics.body import body_model
from core.physics.metrics import flights
from core.physics.options import PhysicsOptions
from core.physics.solve import physics_retarget
from core.physics.units import likely_unit
from tests.conftest import shared_file
from tests.physics_reference import flight_phase, world_pose


def test_unsupported_stretches_over_an_input_flight_count_and_the_others_by_their_own_frames():
    t = 80
    flown = np.zeros(t, bool)
    flown[10:20] = True  # the input's one flight
    support, free = np.ones(t, bool), np.zeros(t, bool)
    support[9:21] = False  # the result's stretch over it: 3 of 12 frames in free fall (slowed)
    free[12:15] = True
    support[40:45] = False  # no foot down, carrying weight, no flight in the input: a lost contact
    support[60:70] = False  # the result's own flight
    free[60:70] = True
    assert flights(support, free, flown=flown).tolist() == [[9, 21], [60, 70]]
    assert flights(support, free).tolist() == [[60, 70]]  # by their own frames alone


def test_a_flight_the_solve_leaves_off_its_parabola_is_reported_as_measured():
    """CMU 05_06 at 1.4× onto 90 kg: the input's flight on frames 442–496 is 38 mm RMS from its parabola; the
    result's frames there carry weight on most frames, so counted by their own frames the report read no flight
    at all (0 flight frames, 0.00 mm). Now the phase is reported, with the distance an independent fit measures on
    the written motion's CoM."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/05_06.bvh")).frames(slice(1, None)).scaled(1.4)
    contacts = detect_contacts(motion)
    unit = likely_unit(standing_height(motion.skeleton, contacts.up))[0]
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    out, rep = physics_retarget(motion, contacts, body, PhysicsOptions())
    before, after = rep["before"]["flights"], rep["after"]["flights"]
    assert before, "the capture's flight is found in the input"
    pos, rot = world_pose(out)
    for flight in before:
        over = [f for f in after if f["start"] < flight["stop"] and f["stop"] > flight["start"]]
        assert over, f"the input's flight {flight['start']}–{flight['stop']} is judged in the result"
        for f in over:
            a, b = f["start"], f["stop"]
            measured = flight_phase(pos[a:b], rot[a:b], body, motion.fps, 0.2)["rms_mm"] / 1000
            assert abs(f["error_m"] - measured) <= max(1e-4, 0.05 * measured)
    worst = max(f["error_m"] for f in after)
    assert rep["after"]["flight_error_worst_m"] == worst and rep["after"]["flight_frames"] > 0
