"""A motion: a skeleton plus per-frame local translations and rotations, as arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quaternion as quat
from .kinematics import forward_kinematics
from .skeleton import Skeleton


@dataclass(eq=False)
class Motion:
    """Animation of a :class:`Skeleton`.

    translations: (T, J, 3) local joint offsets in the parent's frame (scene units); equal
    to the rest offset on joints without position channels. rotations: (T, J, 4) unit
    quaternions w, x, y, z relative to each joint's rest rotation. fps: frames per second.
    """

    skeleton: Skeleton
    translations: np.ndarray
    rotations: np.ndarray
    fps: float = 30.0

    def __post_init__(self) -> None:
        j = self.skeleton.n_joints
        self.translations = np.asarray(self.translations, dtype=float)
        self.rotations = np.asarray(self.rotations, dtype=float)
        if self.translations.ndim != 3 or self.translations.shape[1:] != (j, 3):
            raise ValueError(f"translations must have shape (T, {j}, 3), got {self.translations.shape}")
        if self.rotations.shape != (*self.translations.shape[:2], 4):
            raise ValueError(
                f"rotations must have shape {(*self.translations.shape[:2], 4)}, got {self.rotations.shape}"
            )
        if not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")

    @property
    def n_frames(self) -> int:
        return self.translations.shape[0]

    @classmethod
    def rest(cls, skeleton: Skeleton, n_frames: int, fps: float = 30.0) -> Motion:
        """A motion holding the rest pose for ``n_frames`` frames."""
        translations = np.broadcast_to(skeleton.rest_translations, (n_frames, skeleton.n_joints, 3)).copy()
        return cls(skeleton, translations, quat.identity((n_frames, skeleton.n_joints)), fps)

    def frames(self, index: np.ndarray | slice) -> Motion:
        """A new motion made of the selected frames (slice, index array or boolean mask)."""
        return Motion(self.skeleton, self.translations[index].copy(), self.rotations[index].copy(), self.fps)

    def world_positions(self) -> np.ndarray:
        """World joint positions (T, J, 3) by forward kinematics."""
        return forward_kinematics(self.skeleton, self.translations, self.rotations, need_rotations=False)[0]

    def copy(self) -> Motion:
        return Motion(self.skeleton, self.translations.copy(), self.rotations.copy(), self.fps)


def rest_world_rotations(skeleton: Skeleton) -> np.ndarray:
    """(J, 4) world orientation of every joint in the rest pose."""
    return forward_kinematics(skeleton, skeleton.rest_translations, quat.identity((skeleton.n_joints,)))[1]


def change_rest(motion: Motion, skeleton: Skeleton) -> Motion:
    """The same movement expressed on ``skeleton``: same joints and rest positions, other rest rotations.

    With C_j = W_j⁻¹·W'_j (old and new rest world orientations), the new pose rotation is
    q'_j = C_j⁻¹·q_j·C_j and the new local translation t'_j = C_parent⁻¹·t_j, so every
    joint's world position is unchanged and its world orientation is turned by C_j.
    """
    if skeleton.names != motion.skeleton.names:
        raise ValueError("change_rest needs the same joints in the same order")
    c = quat.multiply(quat.inverse(rest_world_rotations(motion.skeleton)), rest_world_rotations(skeleton))
    rotations = quat.multiply(quat.inverse(c), quat.multiply(motion.rotations, c))
    parents = skeleton.parents
    c_parent = np.where((parents >= 0)[:, None], c[np.maximum(parents, 0)], quat.identity((skeleton.n_joints,)))
    translations = quat.rotate(quat.inverse(c_parent), motion.translations)
    return Motion(skeleton, translations, rotations, motion.fps)
