"""Algorithm 1 of Shen, Sun and Pan: a frame becomes a key when it drifts δ from the last key.

The paper leaves choosing δ to future work; :func:`threshold_for_count` finds it for a
requested number of keys (interpolation search on log δ, then an exact fix-up).
"""

from __future__ import annotations

import numpy as np

from ..motion import Motion
from .distance import PoseMetric


def threshold_keys(motion: Motion, metric: PoseMetric, delta: float) -> np.ndarray:
    """Keyframe indices from a walk over the clip: t is a key when D(t, last key) > delta.

    The first and last frames are always keys. Distances are computed a growing window at
    a time, so the Python loop runs about once per key, not once per frame.
    """
    rot, trans = motion.rotations, motion.translations
    n = motion.n_frames
    keys = [0]
    last, scan, window = 0, 1, 16
    while scan < n:
        end = min(n, scan + window)
        d = metric(rot[scan:end], trans[scan:end], rot[last], trans[last])
        hit = np.flatnonzero(d > delta)
        if hit.size:
            last = scan + int(hit[0])
            keys.append(last)
            window = max(16, 2 * (last - keys[-2]))
            scan = last + 1
        else:
            scan = end
            window *= 2
    if keys[-1] != n - 1:
        keys.append(n - 1)
    return np.array(keys, dtype=int)


def threshold_for_count(
    motion: Motion, metric: PoseMetric, count: int, iterations: int = 40
) -> tuple[float, np.ndarray]:
    """The largest δ found whose keys number at least ``count`` (when any does), and those keys.

    Geometric bisection: key counts fall roughly as a power of δ. It stops early on an
    exact hit; callers trim the few extra keys (Algorithm 1 is not strictly monotone in δ).
    """
    hi = float(metric.weights.sum() * np.pi / 2 + metric.translation_weight * _travel_bound(motion, metric)) + 1e-9
    lo = hi * 1e-9
    best = (lo, threshold_keys(motion, metric, lo))
    if len(best[1]) <= count:
        return best
    for _ in range(iterations):
        mid = float(np.sqrt(lo * hi))
        keys = threshold_keys(motion, metric, mid)
        if len(keys) >= count:
            lo, best = mid, (mid, keys)
            if len(keys) == count:
                break
        else:
            hi = mid
        if hi / lo < 1.0 + 1e-7:
            break
    return best


def _travel_bound(motion: Motion, metric: PoseMetric) -> float:
    """Upper bound of the translation term's raw travel, in units of half the body size."""
    if not metric.moving.any():
        return 0.0
    t = motion.translations[:, metric.moving]
    extent = np.linalg.norm(t.max(axis=0) - t.min(axis=0), axis=-1).sum()
    return float(extent / (0.5 * metric.size))
