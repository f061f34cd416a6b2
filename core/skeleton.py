"""The skeleton: joint names, hierarchy, rest transforms and the channel layout of a capture,
and the rest pose in world space (:func:`rest_world`, :func:`rest_positions`), which needs no
motion: :mod:`.kinematics` builds on this module, never the other way round."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

import numpy as np

from . import quaternion as quat

POSITION_CHANNELS = ("Xposition", "Yposition", "Zposition")
ROTATION_CHANNELS = ("Xrotation", "Yrotation", "Zrotation")


_SIZES: dict[tuple, float] = {}  # the rest geometry's arrays → Skeleton.size(), the last few


@dataclass(eq=False)
class Skeleton:
    """A joint hierarchy in rest pose.

    names: J joint names. parents: (J,) int, parent index or -1, every parent before its
    children. rest_translations: (J, 3) offset of each joint in its parent's frame.
    rest_rotations: (J, 4) w, x, y, z rest orientation in the parent's frame (identity for
    BVH; Blender bones have their own). channels: per joint, the animated channels in
    BVH naming and order (e.g. ``("Xposition", ..., "Zrotation", "Xrotation", "Yrotation")``).
    end_sites: (E,) parent joint index and (E, 3) offsets of End Sites (leaf markers that
    carry no motion).
    limits: optional joint limits, per joint ``None`` (unlimited) or one ``(min, max)`` pair
    per channel in that joint's channel order: degrees for rotation channels (the value of
    the channel as BVH/AMC write it), scene units for position channels, ±inf for an open
    end. Only meaningful together with the rest rotations they were defined for.
    meta: optional format details kept for faithful round trips (e.g. ``"asf_units"``);
    never needed to interpret the motion.
    """

    names: tuple[str, ...]
    parents: np.ndarray
    rest_translations: np.ndarray
    rest_rotations: np.ndarray | None = None
    channels: tuple[tuple[str, ...], ...] | None = None
    end_site_parents: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    end_site_offsets: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    limits: tuple[tuple[tuple[float, float], ...] | None, ...] | None = None
    meta: dict | None = None

    def __post_init__(self) -> None:
        self.names = tuple(self.names)
        j = len(self.names)
        self.parents = np.asarray(self.parents, dtype=int).reshape(j)
        self.rest_translations = np.asarray(self.rest_translations, dtype=float).reshape(j, 3)
        if self.rest_rotations is None:
            self.rest_rotations = np.tile([1.0, 0.0, 0.0, 0.0], (j, 1))
        self.rest_rotations = np.asarray(self.rest_rotations, dtype=float).reshape(j, 4)
        if self.channels is None:
            self.channels = tuple(
                (*POSITION_CHANNELS, "Zrotation", "Xrotation", "Yrotation")
                if p < 0
                else ("Zrotation", "Xrotation", "Yrotation")
                for p in self.parents
            )
        self.channels = tuple(tuple(c) for c in self.channels)
        self.end_site_parents = np.asarray(self.end_site_parents, dtype=int).reshape(-1)
        self.end_site_offsets = np.asarray(self.end_site_offsets, dtype=float).reshape(-1, 3)
        if len(set(self.names)) != j:
            raise ValueError("joint names must be unique")
        if np.any(self.parents >= np.arange(j)):
            raise ValueError("every joint's parent must come before it")
        if len(self.channels) != j:
            raise ValueError("one channel tuple per joint is required")
        self.limits = self._checked_limits(self.limits)
        self.meta = copy.deepcopy(dict(self.meta or {}))

    def _checked_limits(self, limits) -> tuple | None:
        """Normalise ``limits`` to tuples of float pairs, one pair per channel, or None."""
        if limits is None:
            return None
        limits = tuple(limits)
        if len(limits) != self.n_joints:
            raise ValueError("limits need one entry (None or pairs) per joint")
        out = []
        for channels, pairs in zip(self.channels, limits):
            if pairs is None:
                out.append(None)
                continue
            pairs = tuple((float(lo), float(hi)) for lo, hi in pairs)
            if len(pairs) != len(channels):
                raise ValueError("limits need one (min, max) pair per channel")
            out.append(pairs)
        return tuple(out)

    @property
    def n_joints(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Index of the joint called ``name`` (KeyError if absent)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(name) from None

    @property
    def has_position_channels(self) -> np.ndarray:
        """(J,) bool: joints whose translation is animated (the root and any joint with position channels)."""
        return np.array([any(c in POSITION_CHANNELS for c in ch) for ch in self.channels])

    def children(self, joint: int) -> np.ndarray:
        """Indices of the direct children of ``joint``."""
        return np.flatnonzero(self.parents == joint)

    def subtree(self, joint: int) -> np.ndarray:
        """(J,) bool mask of ``joint`` and all its descendants."""
        mask = np.zeros(self.n_joints, dtype=bool)
        mask[joint] = True
        for j in range(joint + 1, self.n_joints):
            if self.parents[j] >= 0 and mask[self.parents[j]]:
                mask[j] = True
        return mask

    def path_to_root(self, joint: int) -> list[int]:
        """``joint`` and its ancestors up to the root, nearest first."""
        out = [int(joint)]
        while self.parents[out[-1]] >= 0:
            out.append(int(self.parents[out[-1]]))
        return out

    def common_ancestor(self, a: int, b: int) -> int:
        """The nearest joint that is an ancestor of both (a joint is its own ancestor); -1 when
        they hang from different roots (a skeleton of several trees)."""
        above_b = set(self.path_to_root(b))
        return next((j for j in self.path_to_root(a) if j in above_b), -1)

    def depths(self) -> np.ndarray:
        """(J,) number of ancestors of each joint (the root has depth 0)."""
        depth = np.zeros(self.n_joints, dtype=int)
        for j, p in enumerate(self.parents):
            depth[j] = 0 if p < 0 else depth[p] + 1
        return depth

    def bone_lengths(self) -> np.ndarray:
        """(J,) length of the bone that ends at each joint (0 for roots)."""
        lengths = np.linalg.norm(self.rest_translations, axis=1)
        return np.where(self.parents < 0, 0.0, lengths)

    def subtree_lengths(self) -> np.ndarray:
        """(J,) total bone length moved when the joint rotates: bones and End Sites below it."""
        total = np.zeros(self.n_joints)
        np.add.at(total, self.end_site_parents, np.linalg.norm(self.end_site_offsets, axis=1))
        lengths = self.bone_lengths()
        for j in range(self.n_joints - 1, -1, -1):
            p = self.parents[j]
            if p >= 0:
                total[p] += total[j] + lengths[j]
        return total

    def scaled(self, factor: float) -> Skeleton:
        """The same skeleton ``factor`` times larger (rest offsets and End Sites; limits kept as they are)."""
        return replace(
            self, rest_translations=self.rest_translations * factor, end_site_offsets=self.end_site_offsets * factor
        )

    def reach(self) -> np.ndarray:
        """(J,) largest rest distance from each joint to a joint or End Site below it (scene units).

        How far a unit rotation of the joint can move the body: the lever arm of its channels.
        """
        pos = rest_positions(self, include_end_sites=True)
        owner = np.concatenate((np.arange(self.n_joints), self.end_site_parents))
        reach = np.zeros(self.n_joints)
        for j in range(self.n_joints):
            below = self.subtree(j)[owner]
            reach[j] = np.linalg.norm(pos[below] - pos[j], axis=1).max()
        return reach

    def size(self) -> float:
        """A characteristic length of the body (scene units): the largest extent of the rest pose.

        Offsets that only place the body in the world are ignored: the root's, and those of
        joints with position channels on a chain of single children down from the root
        (Bandai Namco's ``Hips`` under a static ``joint_Root`` sits 4.5 m away in one file). Kept for
        the last few rest geometries (an extraction asks several times).
        """
        arrays = (self.parents, self.rest_translations, self.rest_rotations, self.end_site_parents,
                  self.end_site_offsets)  # fmt: skip
        key = (tuple(map(tuple, self.channels)), *(np.ascontiguousarray(a).tobytes() for a in arrays))
        if key not in _SIZES:
            if len(_SIZES) >= 8:
                _SIZES.pop(next(iter(_SIZES)))
            _SIZES[key] = self._size()
        return _SIZES[key]

    def _size(self) -> float:
        placement = np.zeros(self.n_joints, dtype=bool)
        n_children = np.bincount(self.parents[self.parents >= 0], minlength=self.n_joints)
        moving = self.has_position_channels
        for j, p in enumerate(self.parents):
            placement[j] = p < 0 or (placement[p] and n_children[p] == 1 and moving[j])
        body = Skeleton(
            self.names,
            self.parents,
            np.where(placement[:, None], 0.0, self.rest_translations),
            self.rest_rotations,
            self.channels,
            self.end_site_parents,
            self.end_site_offsets,
        )
        pos = rest_positions(body, include_end_sites=True)
        extent = float(np.max(pos.max(axis=0) - pos.min(axis=0)))
        return extent if extent > 0 else 1.0


def rest_world(skeleton: Skeleton, include_end_sites: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """World positions (J, 3) — End Sites appended, (J + E, 3), when asked — and orientations
    (J, 4) of the rest pose: each joint's rest offset and rest rotation composed down the tree.
    The same arithmetic as :func:`core.kinematics.forward_kinematics` at the identity pose."""
    n = skeleton.n_joints
    pos, rot = np.empty((n, 3)), np.empty((n, 4))
    for j, p in enumerate(skeleton.parents):
        if p < 0:
            pos[j], rot[j] = skeleton.rest_translations[j], skeleton.rest_rotations[j]
        else:
            pos[j] = pos[p] + quat.rotate_parts(tuple(rot[p]), tuple(skeleton.rest_translations[j]))
            rot[j] = quat.multiply_parts(tuple(rot[p]), tuple(skeleton.rest_rotations[j]))
    if include_end_sites and len(skeleton.end_site_parents):
        e = skeleton.end_site_parents
        pos = np.concatenate((pos, pos[e] + quat.rotate(rot[e], skeleton.end_site_offsets)))
    return pos, rot


def rest_positions(skeleton: Skeleton, include_end_sites: bool = False) -> np.ndarray:
    """World joint positions (J, 3) of the rest pose, End Sites appended when asked (J + E, 3)."""
    return rest_world(skeleton, include_end_sites)[0]
