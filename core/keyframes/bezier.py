"""Bezier handles that make a curve editor's per-channel playback follow a rebuilt motion.

Blender (like most animation packages) interpolates each F-curve on its own with cubic
Bezier segments. With the time handles of a segment [a, b] at a + (b−a)/3 and b − (b−a)/3,
time runs linearly along the segment, so the value is the cubic Bernstein polynomial
y(s) = (1−s)³·y_a + 3(1−s)²s·h₁ + 3(1−s)s²·h₂ + s³·y_b with s = (t − a)/(b − a).
Choosing h₁, h₂ by least squares against the rebuilt values on the segment's frames makes
Blender's playback match the slerp rebuild to within a cubic's reach of a sine arc.
"""

from __future__ import annotations

import numpy as np


def fit_handles(values: np.ndarray, keys: np.ndarray, smoothing: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Handle values of every segment, fitted to the dense curve ``values`` (T, C).

    keys: sorted frame indices (K,) including 0 and T−1 (a single key [0] gives empty handles). Returns right handles of keys
    0..K−2 and left handles of keys 1..K−1, each (K−1, C), for handle times at the thirds
    of each segment. A small ridge term pulls short segments (no inner frame) to the
    straight line, where the fit is under-determined.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    keys = np.asarray(keys, dtype=int)
    if len(keys) < 2:  # one key (a 1-frame clip): no segment, no handles
        return np.zeros((0, values.shape[1])), np.zeros((0, values.shape[1]))
    a, b = keys[:-1], keys[1:]
    ya, yb = values[a], values[b]
    frames = np.arange(values.shape[0])
    seg = np.clip(np.searchsorted(keys, frames, side="right") - 1, 0, len(keys) - 2)
    s = (frames - a[seg]) / (b[seg] - a[seg])
    b1, b2 = 3 * (1 - s) ** 2 * s, 3 * (1 - s) * s**2
    residual = values - ((1 - s) ** 3)[:, None] * ya[seg] - (s**3)[:, None] * yb[seg]
    # the straight line's handles, the ridge's anchor
    line1, line2 = ya + (yb - ya) / 3.0, ya + 2.0 * (yb - ya) / 3.0
    n = len(keys) - 1
    m11 = np.bincount(seg, b1 * b1, n) + smoothing
    m12 = np.bincount(seg, b1 * b2, n)
    m22 = np.bincount(seg, b2 * b2, n) + smoothing
    r1 = np.add.reduceat(b1[:, None] * residual, a, axis=0) + smoothing * line1
    r2 = np.add.reduceat(b2[:, None] * residual, a, axis=0) + smoothing * line2
    det = (m11 * m22 - m12 * m12)[:, None]
    h1 = (m22[:, None] * r1 - m12[:, None] * r2) / det
    h2 = (m11[:, None] * r2 - m12[:, None] * r1) / det
    return h1, h2


def evaluate(values_at_keys: np.ndarray, h1: np.ndarray, h2: np.ndarray, keys: np.ndarray, n_frames: int) -> np.ndarray:
    """Values (T, C) of the Bezier curves through the keys with the given handles (the same
    curve Blender evaluates for thirds-placed time handles)."""
    keys = np.asarray(keys, dtype=int)
    values_at_keys = np.asarray(values_at_keys, dtype=float)
    if len(keys) < 2:  # one key: the curve is constant
        return np.repeat(values_at_keys[:1], n_frames, axis=0)
    frames = np.arange(n_frames)
    seg = np.clip(np.searchsorted(keys, frames, side="right") - 1, 0, len(keys) - 2)
    s = ((frames - keys[seg]) / (keys[seg + 1] - keys[seg]))[:, None]
    ya, yb = values_at_keys[seg], values_at_keys[seg + 1]
    return (1 - s) ** 3 * ya + 3 * (1 - s) ** 2 * s * h1[seg] + 3 * (1 - s) * s**2 * h2[seg] + s**3 * yb
