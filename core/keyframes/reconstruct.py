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


class Rebuild:
    """Algorithm 2 prepared once for a key set, evaluated for any frames.

    The slerp's angle, sign and 1/sin θ depend only on the segment, so they are computed
    once per segment and joint; each frame then costs two sines (same result as
    :func:`quaternion.slerp`).
    """

    def __init__(self, motion: Motion, keys: np.ndarray) -> None:
        self.motion = motion
        self.keys = check_keys(keys, motion.n_frames)
        ends = self.keys if len(self.keys) > 1 else np.repeat(self.keys, 2)
        qa, qb = motion.rotations[ends[:-1]], motion.rotations[ends[1:]]
        d = quat.dot(qa, qb)
        self.qa, self.qb = qa, np.where((d < 0.0)[..., None], -qb, qb)
        self.theta = np.arccos(np.minimum(np.abs(d), 1.0))
        sin_theta = np.sin(self.theta)
        self.near = sin_theta < 1e-6  # nearly equal keys: linear weights (unit to within θ²/8)
        self.inv_sin = 1.0 / np.where(self.near, 1.0, sin_theta)
        self.ta, self.tb = motion.translations[ends[:-1]], motion.translations[ends[1:]]

    def __call__(self, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rebuilt translations (F, J, 3) and rotations (F, J, 4) of ``frames``."""
        _, _, u = interpolation_weights(self.keys, frames)
        seg = np.clip(np.searchsorted(self.keys, frames, side="right") - 1, 0, len(self.qa) - 1)
        u = u[:, None]
        th, inv, near = self.theta[seg], self.inv_sin[seg], self.near[seg]
        wa = np.where(near, 1.0 - u, np.sin((1.0 - u) * th) * inv)
        wb = np.where(near, u, np.sin(u * th) * inv)
        rotations = wa[..., None] * self.qa[seg] + wb[..., None] * self.qb[seg]
        uu = u[..., None]
        return (1.0 - uu) * self.ta[seg] + uu * self.tb[seg], rotations


def reconstruct(motion: Motion, keys: np.ndarray, frames: np.ndarray | None = None) -> Motion:
    """The motion rebuilt from ``keys``: slerp of every joint rotation, lerp of every translation.

    keys: sorted frame indices including 0 and T-1. frames: the frames to rebuild (default all).
    """
    rebuild = Rebuild(motion, keys)
    frames = np.arange(motion.n_frames) if frames is None else np.asarray(frames, dtype=int)
    if len(frames) <= CHUNK:  # one block: as rebuilt
        translations, rotations = rebuild(frames)
        return Motion(motion.skeleton, translations, rotations, motion.fps)
    rotations = np.empty((len(frames), *motion.rotations.shape[1:]))
    translations = np.empty((len(frames), *motion.translations.shape[1:]))
    for start in range(0, len(frames), CHUNK):  # blocks stay in cache (see kinematics.CHUNK)
        block = slice(start, start + CHUNK)
        translations[block], rotations[block] = rebuild(frames[block])
    return Motion(motion.skeleton, translations, rotations, motion.fps)
