"""Curve simplification grows its split tree a level at a time and replays the priority queue on it:
the same keys as splitting one segment at a time."""

import heapq

import numpy as np
import pytest

from core.keyframes import baselines
from core.keyframes.baselines import simplify_keys
from core.keyframes.error import pose_points
from tests import rigs


def one_segment_at_a_time(motion, count: int) -> np.ndarray:
    """The top-down simplification as the queue runs it: each pushed segment measured on its own."""
    n = motion.n_frames
    x = pose_points(motion).reshape(n, -1)
    keys, heap = [0, n - 1], []

    def push(a, b):
        if b - a < 2:
            return
        e, w = x[a + 1 : b] - x[a], x[b] - x[a]
        u = np.arange(1, b - a) / (b - a)
        squared = np.einsum("ij,ij->i", e, e) - u * (2.0 * (e @ w) - u * (w @ w))
        i = int(np.argmax(squared))
        heapq.heappush(heap, (-float(np.sqrt(max(squared[i], 0.0))), a, b, a + 1 + i))

    push(0, n - 1)
    while len(keys) < count and heap:
        _, a, b, t = heapq.heappop(heap)
        keys.append(t)
        push(a, t)
        push(t, b)
    return np.array(sorted(keys))


@pytest.mark.parametrize("gathered", [baselines.GATHERED, 300])  # 300: a group of short segments a few frames
def test_the_same_keys_as_one_segment_at_a_time(monkeypatch, gathered):
    monkeypatch.setattr(baselines, "GATHERED", gathered)
    motion = rigs.wiggle(rigs.build("cmu_cgspeed"), n_frames=400, seed=4)
    motion.rotations[150:230] = motion.rotations[150]  # a still stretch: equal distances (0) to break ties on
    motion.translations[150:230] = motion.translations[150]
    for count in (2, 3, 9, 40, 120, 250, 399, 400):
        assert np.array_equal(simplify_keys(motion, count), one_segment_at_a_time(motion, count)), count
