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
    motion: Motion, metric: PoseMetric, count: int, slack: float = 0.01, iterations: int = 30
) -> tuple[float, np.ndarray]:
    """A δ whose keys number at least ``count`` (at most ``count·(1 + slack)`` where the
    clip allows), and its keys; callers trim the few extra keys.

    First guess: median frame-to-frame distance × mean gap (a smooth clip drifts about
    linearly between keys). Key counts fall roughly as a power of δ, so later guesses
    interpolate log δ against log(count) inside the bracket (every third guess bisects it,
    so it always shrinks). It stops at a count within the slack or a bracket within 0.1 %.
    """
    n = motion.n_frames
    if count >= n:
        return 0.0, np.arange(n)
    rot, trans = motion.rotations, motion.translations
    step = float(np.median(metric(rot[1:], trans[1:], rot[:-1], trans[:-1])))
    if step <= 0:
        step = float(np.mean(metric(rot[1:], trans[1:], rot[:-1], trans[:-1]))) or 1e-9
    lo = hi = None  # (δ, key count) with count ≥ target, and with count < target
    best = None
    tolerance = max(1, int(count * slack))
    delta = step * (n - 1) / max(count - 1, 1)
    for i in range(iterations):
        keys = threshold_keys(motion, metric, delta)
        if len(keys) >= count:
            lo, best = (delta, len(keys)), (delta, keys)
            if len(keys) <= count + tolerance:
                break
        else:
            hi = (delta, len(keys))
        if lo and hi and hi[0] / lo[0] < 1.001:
            break
        delta = _next_guess(lo, hi, count + 0.5 * tolerance, bisect=i % 3 == 2)
    if best is None:
        best = (0.0, threshold_keys(motion, metric, 0.0))
    return best


def _next_guess(lo: tuple | None, hi: tuple | None, target: float, bisect: bool) -> float:
    """Next δ: count ∝ 1/δ from one side while only one is known, log-log interpolation inside a bracket."""
    if lo is None:
        return hi[0] * max(hi[1], 1) / target * 0.9
    if hi is None:
        return lo[0] * lo[1] / target * 1.1
    a, b = np.log(lo[0]), np.log(hi[0])
    if bisect or lo[1] <= hi[1]:
        return float(np.exp(0.5 * (a + b)))
    u = (np.log(lo[1]) - np.log(target)) / (np.log(lo[1]) - np.log(max(hi[1], 1)))
    return float(np.exp(a + np.clip(u, 0.05, 0.95) * (b - a)))


def _travel_bound(motion: Motion, metric: PoseMetric) -> float:
    """Upper bound of the translation term's raw travel, in units of half the body size."""
    if not metric.moving.any():
        return 0.0
    t = motion.translations[:, metric.moving]
    extent = np.linalg.norm(t.max(axis=0) - t.min(axis=0), axis=-1).sum()
    return float(extent / (0.5 * metric.size))
