"""Discontinuities a keyframe segment must never smear across.

A capture can jump between two frames: the synthetic T-pose that the CMU BVH conversions
add as frame 0, a teleport, a glitch. Interpolating across such a step smears it over the
whole segment, so both frames around it become keys.
"""

from __future__ import annotations

import numpy as np

from ..motion import Motion
from .distance import PoseMetric

JUMP_RATE = 120.0  # frames/s of the captures ``jump_steps``' factor was measured on (CMU's)


def jump_steps(motion: Motion, metric: PoseMetric, factor: float = 15.0, isolation: float = 4.0) -> np.ndarray:
    """Frames t (0-based, sorted) where the step t → t+1 is a jump.

    A step is a jump when its pose distance exceeds ``factor`` × the clip's median step and
    ``isolation`` × the largest of the two steps before and after it (fast but smooth motion
    has neighbours of similar size). On the CMU captures (120 fps) the added T-pose is 19–70× the
    median and ≥ 10× its neighbours; the fastest real moves reach 26× the median but no more than
    2.5× their neighbours, except isolated single-frame glitches.

    Below :data:`JUMP_RATE` the factor shrinks with the frame rate: a smooth step grows as 1/fps
    while a jump keeps its size, so the T-pose of the same captures resampled to 24 fps is only
    4.5–19× the median (8 of 9 under 15×) while still ≥ 5.8× its neighbours. With the factor at
    15 × fps/120 the T-pose is found at 24, 30, 50 and 120 fps on the nine CMU walks and dances, and
    nothing else on Bandai Namco's seven 30 fps captures, Mixamo's and Character Creator's
    (60 fps) at their own rates and resampled to 24, 30 and 50 fps.
    """
    if motion.n_frames < 3:
        return np.zeros(0, dtype=int)
    rot, trans = motion.rotations, motion.translations
    step = metric(rot[1:], trans[1:], rot[:-1], trans[:-1])
    return np.flatnonzero(isolated_steps(step, factor * min(1.0, motion.fps / JUMP_RATE), isolation))


def isolated_steps(
    step: np.ndarray, factor: float = 15.0, isolation: float = 4.0, window: int = 2, median: np.ndarray | None = None
) -> np.ndarray:
    """Bool mask of the jumps among frame-to-frame steps (T−1,) or (T−1, N) (each column on its own):
    a step over ``factor`` × its column's median step and ``isolation`` × the largest of the
    ``window`` steps before and after it (the rule of :func:`jump_steps`). median: the columns'
    median steps, when the caller has them."""
    n = len(step)
    padded = np.pad(step, [(window, window)] + [(0, 0)] * (step.ndim - 1), constant_values=0.0)
    others = [padded[k : k + n] for k in range(2 * window + 1) if k != window]
    neighbours = np.max(np.stack(others), axis=0)
    median = np.median(step, axis=0) if median is None else median
    return (step > factor * median) & (step > isolation * neighbours) & (step > 0)


def jump_frames(motion: Motion, metric: PoseMetric, factor: float = 15.0, isolation: float = 4.0) -> np.ndarray:
    """Frames on both sides of every jump (:func:`jump_steps`), sorted (0-based)."""
    jumps = jump_steps(motion, metric, factor, isolation)
    return np.unique(np.concatenate((jumps, jumps + 1)))
