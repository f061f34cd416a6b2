"""The flight's turn holds the angular momentum at the frame rates users bring (30, 60, 120 fps).

The turn θ that holds a flight's angular momentum is the running integral of θ̇ = I⁻¹(L̄ − L); the momentum is
measured with centred derivatives, and a running sum to each frame's end lags them by half a frame. CMU 01_01's
first jump (frames 1-399, 1.4x, 90 kg) turned once: 6.2 % RMS momentum change → 2.6 % at 30 fps with the running
sum, 1.3 % at 60, 0.9 % at 120; summed to each frame's middle, 0.8 %, 0.7 %, 0.7 %. Through the whole solve the
jumps (frames 1-799) resampled to 30 fps went from 8.4 % (worst flight 16.1 %) and 10 frames over a limit to
4.4 % (6.6 %) and none.
"""

import numpy as np
import pytest

from core.contacts import detect_contacts
from core.editing.timing import resample
from core.io.bvh import read_bvh
from core.physics.body import body_model
from core.physics.flights import _flight_spin, _turn_about_com, airborne
from core.physics.metrics import analyse, flight_momentum_change
from core.physics.planting import with_toes
from tests.conftest import shared_file


@pytest.mark.parametrize("fps", [30.0, 60.0, 120.0])
def test_one_turn_takes_out_most_of_a_flights_momentum_change(fps):
    motion = resample(read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 400)).scaled(1.4), fps)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45, up=contacts.up)
    contacts = with_toes(motion, contacts)
    an = analyse(motion, contacts, body, smooth=0.2)
    inside = [(a, b) for a, b in airborne(an) if 0 < a and b < motion.n_frames]
    assert len(inside) == 1  # the first jump, take-off and landing in the clip
    start, stop = inside[0]

    def change(a) -> float:
        return float(np.sqrt(np.mean(flight_momentum_change(a, body, start, stop)[1] ** 2)))

    turned = _turn_about_com(motion, an.com / body.unit, _flight_spin(an, body, motion.fps, 0.1))
    after = analyse(turned, contacts, body, smooth=0.2)
    assert change(an) > 0.05
    assert change(after) < 0.25 * change(an)
