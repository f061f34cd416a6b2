"""Reference methods that other keyframe selections are measured against."""

from __future__ import annotations

import heapq

import numpy as np

from ..motion import Motion
from .error import pose_points


def uniform_keys(n_frames: int, count: int) -> np.ndarray:
    """``count`` keys spread evenly over ``n_frames`` frames, first and last included."""
    count = int(np.clip(count, 1 if n_frames == 1 else 2, n_frames))
    keys = np.unique(np.round(np.linspace(0, n_frames - 1, count)).astype(int))
    if len(keys) < count:  # rounding collided: fill the widest gaps
        keys = np.union1d(keys, np.setdiff1d(np.arange(n_frames), keys)[: count - len(keys)])
    return keys


def simplify_keys(motion: Motion, count: int) -> np.ndarray:
    """Top-down curve simplification (Ramer–Douglas–Peucker / Lowe) of the measured points' paths.

    The clip is the curve t ↦ X_t ∈ R^(3P) of the world positions of all P measured points of
    :func:`~.error.measured_points` (heads, leaf tips and side points of every bone: what the
    error measures, so a thumb or toe that turns alone bends the curve too). Starting from the
    first and last frame, the segment whose frame lies farthest from the segment's chord is
    split at that frame, until ``count`` keys exist (a priority queue, so counts are exact).
    Distance: ‖X_t − lerp(X_a, X_b, (t−a)/(b−a))‖, the time-synchronous chord distance, in
    scene units. Work O(T·P) per level of splitting, O(T·P·log T) for balanced splits.
    """
    n = motion.n_frames
    count = int(np.clip(count, 1 if n == 1 else 2, n))
    if n == 1:
        return np.array([0])
    x = pose_points(motion).reshape(n, -1)
    keys = [0, n - 1]
    heap: list[tuple[float, int, int, int]] = []
    steps = np.arange(n)

    def push(a: int, b: int) -> None:
        if b - a < 2:
            return
        # ‖e − u·w‖² = ‖e‖² − u·(2⟨e, w⟩ − u‖w‖²) with e = X_t − X_a, w = X_b − X_a: one pass over the
        # segment's frames and a matrix-vector product, not four passes building the chord (1.1–1.7× faster)
        e = x[a + 1 : b] - x[a]
        w = x[b] - x[a]
        u = steps[1 : b - a] / (b - a)
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


def simplify_for_count(motion: Motion, metric: object, count: int) -> tuple[np.ndarray, dict]:
    """The ``METHODS`` entry of :func:`simplify_keys` (positions only: ``metric`` is unused)."""
    return simplify_keys(motion, count), {}
