"""A motion: a skeleton plus per-frame local translations and rotations, as arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quaternion as quat
from .kinematics import forward_kinematics
from .skeleton import POSITION_CHANNELS, Skeleton, rest_world


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
        """A new motion made of the selected frames (slice, index array or boolean mask), with arrays of its own
        (an index array or mask already copies them: only a slice's views are copied)."""
        trans, rot = self.translations[index], self.rotations[index]
        if isinstance(index, slice):
            trans, rot = trans.copy(), rot.copy()
        return Motion(self.skeleton, trans, rot, self.fps)

    def world_positions(self) -> np.ndarray:
        """World joint positions (T, J, 3) by forward kinematics."""
        return forward_kinematics(self.skeleton, self.translations, self.rotations, need_rotations=False)[0]

    def copy(self) -> Motion:
        return Motion(self.skeleton, self.translations.copy(), self.rotations.copy(), self.fps)

    def scaled(self, factor: float) -> Motion:
        """The same movement on a skeleton ``factor`` times larger: offsets and root path scaled, same timing."""
        return Motion(self.skeleton.scaled(factor), self.translations * factor, self.rotations.copy(), self.fps)


def rest_world_rotations(skeleton: Skeleton) -> np.ndarray:
    """(J, 4) world orientation of every joint in the rest pose."""
    return rest_world(skeleton)[1]


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


def transform_world(motion: Motion, rotation: np.ndarray | None = None, scale: float = 1.0) -> Motion:
    """The same motion seen in another world frame: turned by ``rotation`` (w, x, y, z), then scaled.

    Every world position p becomes scale·R·p and every world orientation W becomes R·W, so
    only the roots change orientation (their rest rotation becomes R·rest); all offsets,
    translations, End Sites and position-channel limits are scaled. This is how a Y-up
    capture is stood up in Blender's Z-up world (and laid back down on export).
    """
    sk = motion.skeleton
    r = quat.identity() if rotation is None else quat.normalize(np.asarray(rotation, dtype=float))
    roots = sk.parents < 0
    rest_rotations = sk.rest_rotations.copy()
    rest_rotations[roots] = quat.multiply(r, rest_rotations[roots])
    rest_translations = scale * sk.rest_translations
    rest_translations[roots] = quat.rotate(r, rest_translations[roots])
    translations = scale * motion.translations
    translations[:, roots] = quat.rotate(r, translations[:, roots])
    limits = None
    if sk.limits is not None:
        limits = tuple(
            None
            if pairs is None
            else tuple(
                (lo * scale, hi * scale) if c in POSITION_CHANNELS else (lo, hi) for c, (lo, hi) in zip(ch, pairs)
            )
            for ch, pairs in zip(sk.channels, sk.limits)
        )
    skeleton = Skeleton(
        sk.names,
        sk.parents,
        rest_translations,
        rest_rotations,
        sk.channels,
        sk.end_site_parents,
        scale * sk.end_site_offsets,
        limits,
        sk.meta,
    )
    return Motion(skeleton, translations, motion.rotations.copy(), motion.fps)


def with_rest_orientations(skeleton: Skeleton, world_rotations: np.ndarray) -> Skeleton:
    """The skeleton with other rest frames: joint j's rest world orientation becomes ``world_rotations[j]``.

    Joint and End Site positions stay where they are; only the frames they are expressed in
    change. Channels are kept; limits survive on joints whose own frame and parent's frame
    are unchanged. Move a motion onto the result with :func:`change_rest`.
    """
    world = quat.normalize(np.asarray(world_rotations, dtype=float).reshape(skeleton.n_joints, 4))
    old = rest_world_rotations(skeleton)
    parents = skeleton.parents
    has_parent = (parents >= 0)[:, None]
    parent_old = np.where(has_parent, old[np.maximum(parents, 0)], quat.identity())
    parent_new = np.where(has_parent, world[np.maximum(parents, 0)], quat.identity())
    rest_rotations = quat.multiply(quat.inverse(parent_new), world)
    rest_translations = quat.rotate(quat.multiply(quat.inverse(parent_new), parent_old), skeleton.rest_translations)
    ends = skeleton.end_site_parents
    end_offsets = quat.rotate(quat.multiply(quat.inverse(world[ends]), old[ends]), skeleton.end_site_offsets)
    limits = None
    if skeleton.limits is not None:
        same = (np.abs(quat.dot(old, world)) > 1 - 1e-12) & (np.abs(quat.dot(parent_old, parent_new)) > 1 - 1e-12)
        limits = tuple(lim if keep else None for lim, keep in zip(skeleton.limits, same))
    return Skeleton(
        skeleton.names,
        parents,
        rest_translations,
        rest_rotations,
        skeleton.channels,
        ends,
        end_offsets,
        limits,
        skeleton.meta,
    )
