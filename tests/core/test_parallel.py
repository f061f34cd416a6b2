"""Two halves of a step at once (core/parallel.py): the same result as one thread, to the bit."""

import numpy as np

from core import parallel
from core.keyframes.error import pose_points
from tests import rigs


def test_halves_in_order_and_whole_when_small_or_nested():
    assert parallel.halves(lambda s: (s.start, s.stop), 10, least=4) == (
        [(0, 5), (5, 10)] if parallel.WORKERS > 1 else [(0, 10)]
    )
    assert parallel.halves(lambda s: (s.start, s.stop), 10, least=11) == [(0, 10)]
    # a half asking for halves again finishes (the worker's own half runs whole: no wait on itself)
    nested = parallel.halves(
        lambda s: parallel.halves(lambda t: (t.start, t.stop), s.stop - s.start, least=1), 8, least=1
    )
    covered = [stop - start for part in nested for start, stop in part]
    assert sum(covered) == 8


def test_pose_points_of_two_halves_are_those_of_one_thread(monkeypatch):
    motion = rigs.wiggle(rigs.build("cmu_cgspeed"), n_frames=3000, seed=6)
    both = pose_points(motion)
    monkeypatch.setattr(parallel, "WORKERS", 1)
    assert np.array_equal(pose_points(motion), both)
