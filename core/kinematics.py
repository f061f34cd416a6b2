"""Forward kinematics: local joint transforms to world positions and orientations."""

from __future__ import annotations

import numpy as np

from . import quaternion as quat
from .skeleton import Skeleton


def _levels(parents: np.ndarray) -> list[np.ndarray]:
    """Joint indices grouped by depth, so each group's parents are already placed."""
    depth = np.zeros(len(parents), dtype=int)
    for j, p in enumerate(parents):
        depth[j] = 0 if p < 0 else depth[p] + 1
    return [np.flatnonzero(depth == d) for d in range(depth.max() + 1)] if len(parents) else []


def forward_kinematics(
    skeleton: Skeleton, translations: np.ndarray, rotations: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World joint positions (..., J, 3) and orientations (..., J, 4).

    translations: (..., J, 3) local offsets in the parent's frame; rotations: (..., J, 4)
    pose rotations, applied after each joint's rest rotation. Vectorised over frames and,
    level by level, over joints.
    """
    translations = np.asarray(translations, dtype=float)
    local = quat.multiply(skeleton.rest_rotations, rotations)
    world_rot = np.empty_like(local)
    world_pos = np.empty_like(translations)
    for idx in _levels(skeleton.parents):
        parents = skeleton.parents[idx]
        if parents[0] < 0:
            world_rot[..., idx, :] = local[..., idx, :]
            world_pos[..., idx, :] = translations[..., idx, :]
            continue
        parent_rot = world_rot[..., parents, :]
        world_rot[..., idx, :] = quat.multiply(parent_rot, local[..., idx, :])
        world_pos[..., idx, :] = world_pos[..., parents, :] + quat.rotate(parent_rot, translations[..., idx, :])
    return world_pos, world_rot


def end_site_positions(skeleton: Skeleton, world_pos: np.ndarray, world_rot: np.ndarray) -> np.ndarray:
    """World positions (..., E, 3) of the End Sites, from the joints' world transforms."""
    p = skeleton.end_site_parents
    return world_pos[..., p, :] + quat.rotate(world_rot[..., p, :], skeleton.end_site_offsets)


def rest_positions(skeleton: Skeleton, include_end_sites: bool = False) -> np.ndarray:
    """World joint positions (J, 3) of the rest pose, End Sites appended when asked."""
    pos, rot = forward_kinematics(skeleton, skeleton.rest_translations, quat.identity((skeleton.n_joints,)))
    if include_end_sites and len(skeleton.end_site_parents):
        pos = np.concatenate((pos, end_site_positions(skeleton, pos, rot)))
    return pos
