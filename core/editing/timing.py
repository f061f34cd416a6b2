"""Time: sample a motion at fractional frames (slerp/lerp), resample, time-scale, piecewise-linear warps."""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..motion import Motion


def sample(motion: Motion, times: np.ndarray, fps: float | None = None) -> Motion:
    """Frames at fractional frame positions ``times`` (K,), clamped to [0, T-1].

    Rotations by slerp along the shorter arc between the two neighbouring frames, translations
    by lerp; integer positions return the stored frames exactly. fps: rate of the result
    (default the motion's).
    """
    t = np.clip(np.asarray(times, dtype=float), 0.0, motion.n_frames - 1)
    if motion.n_frames == 1:
        return Motion(
            motion.skeleton, motion.translations[[0] * len(t)], motion.rotations[[0] * len(t)], fps or motion.fps
        )
    i0 = np.minimum(np.floor(t).astype(int), motion.n_frames - 2)
    u = t - i0
    q0, q1 = motion.rotations[i0], motion.rotations[i0 + 1]
    rot = quat.slerp(q0, q1, u[:, None])
    at0, at1 = u == 0.0, u == 1.0
    rot[at0], rot[at1] = q0[at0], q1[at1]
    p0, p1 = motion.translations[i0], motion.translations[i0 + 1]
    trans = p0 + u[:, None, None] * (p1 - p0)
    trans[at1] = p1[at1]
    return Motion(motion.skeleton, trans, rot, motion.fps if fps is None else fps)


def time_scale(motion: Motion, factor: float) -> Motion:
    """The motion played ``factor`` times as long at the same frame rate (factor 2: half speed).

    The first and last frames are kept; the result has round((T-1)·factor) + 1 frames spread
    evenly over the original, so the exact factor is (new T − 1)/(T − 1). Root paths keep
    their shape, velocities scale by 1/factor.
    """
    if not factor > 0:
        raise ValueError(f"time-scale factor must be positive, got {factor}")
    n = max(1, round((motion.n_frames - 1) * factor) + 1)
    return sample(motion, np.linspace(0.0, motion.n_frames - 1, n))


def resample(motion: Motion, fps: float) -> Motion:
    """The same movement at another frame rate (same duration, first frame kept; the last frame
    is kept when the duration is a whole number of new frames)."""
    if not fps > 0:
        raise ValueError(f"fps must be positive, got {fps}")
    step = motion.fps / fps
    n = int(np.floor((motion.n_frames - 1) / step + 1e-9)) + 1
    return sample(motion, np.arange(n) * step, fps)


def stretch(motion: Motion, n_frames: int, start: float = 0.0, stop: float | None = None) -> Motion:
    """Frames ``start``..``stop`` (fractional, default the whole motion) resampled to ``n_frames``
    evenly spaced frames, ends included."""
    stop = motion.n_frames - 1 if stop is None else stop
    return sample(motion, np.linspace(start, stop, n_frames))


def warp(times: np.ndarray, knots_from: np.ndarray, knots_to: np.ndarray) -> np.ndarray:
    """Piecewise-linear time warp: maps ``times`` through increasing knots (K,) → (K,), extending
    the first and last segments linearly beyond the ends."""
    t = np.atleast_1d(np.asarray(times, dtype=float))
    kf, kt = np.asarray(knots_from, dtype=float), np.asarray(knots_to, dtype=float)
    out = np.interp(t, kf, kt)
    if len(kf) >= 2:
        lo, hi = t < kf[0], t > kf[-1]
        out[lo] = kt[0] + (t[lo] - kf[0]) * (kt[1] - kt[0]) / (kf[1] - kf[0])
        out[hi] = kt[-1] + (t[hi] - kf[-1]) * (kt[-1] - kt[-2]) / (kf[-1] - kf[-2])
    return out
