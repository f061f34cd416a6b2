"""Hybrid keys: whole-pose keyframes as the edit grid, minus the channel keys nobody needs.

After whole-pose keys are chosen, each channel (one F-curve) drops the keys its fitted
Bezier curve can do without. A global greedy pass removes, one at a time, the channel key
whose removal adds the least joint-space error (curve deviation × the channel's lever
arm), until the stored-key budget is met. First and last keys always stay, so every
channel still starts and ends on the grid and no segment crosses a forced key.
"""

from __future__ import annotations

import heapq

import numpy as np


def fit_segment(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least-squares Bezier handles for one segment and its largest deviation.

    y: (n+1, C) values from the first to the last key of the segment (endpoints fixed),
    handle times at the thirds. Returns h1, h2 and max |curve − y|, each (C,).
    """
    n = y.shape[0] - 1
    s = np.arange(n + 1) / n
    b1, b2 = 3 * (1 - s) ** 2 * s, 3 * (1 - s) * s**2
    ya, yb = y[0], y[-1]
    base = np.outer((1 - s) ** 3, ya) + np.outer(s**3, yb)
    line1, line2 = ya + (yb - ya) / 3, ya + 2 * (yb - ya) / 3
    ridge = 1e-6
    m11, m12, m22 = b1 @ b1 + ridge, b1 @ b2, b2 @ b2 + ridge
    r1 = b1 @ (y - base) + ridge * line1
    r2 = b2 @ (y - base) + ridge * line2
    det = m11 * m22 - m12 * m12
    h1 = (m22 * r1 - m12 * r2) / det
    h2 = (m11 * r2 - m12 * r1) / det
    curve = base + np.outer(b1, h1) + np.outer(b2, h2)
    return h1, h2, np.abs(curve - y).max(axis=0)


class _SegmentFitter:
    """Single-channel segment fits with the Bernstein basis and its solve cached per length."""

    def __init__(self, ridge: float = 1e-6) -> None:
        self.ridge = ridge
        self.cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}

    def _basis(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if n not in self.cache:
            s = np.arange(n + 1) / n
            b12 = np.stack((3 * (1 - s) ** 2 * s, 3 * (1 - s) * s**2), axis=1)
            solve = np.linalg.inv(b12.T @ b12 + self.ridge * np.eye(2))
            self.cache[n] = ((1 - s) ** 3, s**3, b12, solve)
        return self.cache[n]

    def error(self, y: np.ndarray) -> float:
        """Largest deviation of the best Bezier segment from y (n+1,), as :func:`fit_segment`."""
        b0, b3, b12, solve = self._basis(len(y) - 1)
        ya, yb = y[0], y[-1]
        base = ya * b0 + yb * b3
        line = np.array((ya + (yb - ya) / 3, ya + 2 * (yb - ya) / 3))
        h = solve @ (b12.T @ (y - base) + self.ridge * line)
        return float(np.abs(base + b12 @ h - y).max())


def drop_channel_keys(
    values: np.ndarray, keys: np.ndarray, levers: np.ndarray, budget: int, forced: np.ndarray | None = None
) -> list[np.ndarray]:
    """Per channel, the subset of ``keys`` to keep so that about ``budget`` keys remain in all.

    values: (T, C) dense target curves (the rebuild in each channel's own units); keys:
    sorted pose keyframes (K,); levers: (C,) scene units of joint motion per unit of the
    channel (e.g. a bone's reach for a rotation in radians, 1 for a location); forced:
    key positions (indices into ``keys``) no channel may drop. Returns C index arrays into
    the frame axis.
    """
    values = np.asarray(values, dtype=float)
    columns = np.ascontiguousarray(values.T)  # one contiguous row per channel
    keys = np.asarray(keys, dtype=int)
    n_keys, n_channels = len(keys), values.shape[1]
    keep = np.ones((n_channels, n_keys), dtype=bool)
    locked = np.zeros(n_keys, dtype=bool)
    locked[[0, -1]] = True
    if forced is not None:
        locked[np.asarray(forced, dtype=int)] = True
    prev = np.tile(np.arange(-1, n_keys - 1), (n_channels, 1))
    nxt = np.tile(np.arange(1, n_keys + 1), (n_channels, 1))
    version = np.zeros((n_channels, n_keys), dtype=int)
    heap: list[tuple[float, int, int, int]] = []
    for i in range(1, n_keys - 1):
        if not locked[i]:
            _, _, err = fit_segment(values[keys[i - 1] : keys[i + 1] + 1])
            for c in np.flatnonzero(np.isfinite(err)):
                heap.append((err[c] * levers[c], c, i, 0))
    heapq.heapify(heap)
    total = n_channels * n_keys
    fitter = _SegmentFitter()
    while total > budget and heap:
        cost, c, i, v = heapq.heappop(heap)
        if v != version[c, i] or not keep[c, i]:
            continue
        keep[c, i] = False
        total -= 1
        p, q = prev[c, i], nxt[c, i]
        nxt[c, p], prev[c, q] = q, p
        for k in (p, q):
            if locked[k] or not keep[c, k]:
                continue
            version[c, k] += 1
            a, b = keys[prev[c, k]], keys[nxt[c, k]]
            heapq.heappush(heap, (fitter.error(columns[c, a : b + 1]) * levers[c], c, k, version[c, k]))
    return [keys[keep[c]] for c in range(n_channels)]
