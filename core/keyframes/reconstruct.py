"""Algorithm 2 of Shen, Sun and Pan: rebuild every frame from the keyframes."""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..kinematics import CHUNK
from ..motion import Motion


def check_keys(keys: np.ndarray, n_frames: int) -> np.ndarray:
    """Validated sorted unique int keyframe indices that include the first and last frame."""
    keys = np.unique(np.asarray(keys, dtype=int))
    if len(keys) == 0 or keys[0] != 0 or keys[-1] != n_frames - 1:
        raise ValueError(f"keyframes must include the first (0) and last ({n_frames - 1}) frame")
    return keys


def interpolation_weights(keys: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each frame: the keys before and after it and the fraction u (0 at the first key, 1 at the second)."""
    if len(keys) == 1:
        zeros = np.zeros(len(frames), dtype=int)
        return keys[zeros], keys[zeros], np.zeros(len(frames))
    seg = np.clip(np.searchsorted(keys, frames, side="right") - 1, 0, len(keys) - 2)
    a, b = keys[seg], keys[seg + 1]
    return a, b, (frames - a) / (b - a)


def reconstruct(motion: Motion, keys: np.ndarray, frames: np.ndarray | None = None) -> Motion:
    """The motion rebuilt from ``keys``: slerp of every joint rotation, lerp of every translation.

    keys: sorted frame indices including 0 and T-1. frames: the frames to rebuild (default all).
    """
    keys = check_keys(keys, motion.n_frames)
    frames = np.arange(motion.n_frames) if frames is None else np.asarray(frames, dtype=int)
    a, b, u = interpolation_weights(keys, frames)
    rotations = np.empty((len(frames), *motion.rotations.shape[1:]))
    translations = np.empty((len(frames), *motion.translations.shape[1:]))
    for start in range(0, len(frames), CHUNK):  # blocks stay in cache (see kinematics.CHUNK)
        block = slice(start, start + CHUNK)
        ab, bb, ub = a[block], b[block], u[block]
        rotations[block] = quat.slerp(motion.rotations[ab], motion.rotations[bb], ub[:, None])
        uu = ub[:, None, None]
        translations[block] = (1.0 - uu) * motion.translations[ab] + uu * motion.translations[bb]
    return Motion(motion.skeleton, translations, rotations, motion.fps)
