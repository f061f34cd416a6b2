"""Progress of the physics solve: frequent reports whose fractions only grow, and a callback that
raises (the add-on's Esc) stops the solve at once."""

import time

import numpy as np
import pytest

from core.physics.body import body_model
from core.physics.progress import Progress


class Stop(BaseException):
    """What a cancelling callback raises (a BaseException, like the add-on's ``Cancelled``)."""


def test_progress_spans_map_and_never_go_back():
    seen = []
    root = Progress(seen.append)
    a, b = root.span(0.0, 0.5), root.span(0.5, 1.0)
    a(0.5)
    b(0.0)
    a(1.0)  # a stage reporting less than what was reported already: the fraction holds
    b.span(0.5, 1.0)(0.5)
    b.tick()
    np.testing.assert_allclose(seen, [0.25, 0.5, 0.5, 0.875, 0.875])


@pytest.fixture(scope="module")
def short_walk():
    from core.contacts import detect_contacts
    from core.io.bvh import read_bvh
    from tests.conftest import shared_file

    motion = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, 121)).scaled(1.4)
    return motion, detect_contacts(motion), body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45)


def test_physics_reports_progress_often_and_in_order(short_walk):
    """No stretch of the solve's work (CPU time, so other processes do not count) longer than 0.5 s
    between two reports, every stage on: balance plan, torques, filter, planting."""
    from core.physics.solve import physics_retarget

    motion, contacts, body = short_walk
    times, shares = [time.process_time()], [0.0]

    def record(x: float) -> None:
        times.append(time.process_time())
        shares.append(x)

    physics_retarget(motion, contacts, body, progress=record)
    times.append(time.process_time())
    assert len(shares) > 50
    assert np.all(np.diff(shares) >= 0) and shares[-1] == pytest.approx(1.0)
    assert np.diff(times).max() < 0.5


def test_physics_stops_when_progress_raises(short_walk):
    """A callback raising in the middle of the balance plan ends the solve there: the exception
    comes out and the callback is not called again."""
    from core.physics.solve import physics_retarget

    motion, contacts, body = short_walk
    calls = []

    def cancel_midway(x: float) -> None:
        calls.append(x)
        if x > 0.3:
            raise Stop

    with pytest.raises(Stop):
        physics_retarget(motion, contacts, body, progress=cancel_midway)
    assert 0.3 < calls[-1] < 0.5  # raised at the first report past 0.3, deep inside the plan
    assert sum(x > 0.3 for x in calls) == 1
