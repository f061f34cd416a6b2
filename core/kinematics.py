"""Forward kinematics: local joint transforms to world positions and orientations."""

from __future__ import annotations

import numpy as np

from . import quaternion as quat
from .skeleton import Skeleton


def _mul(a: tuple, b: tuple) -> tuple:
    """Hamilton product on quaternions split into components (w, x, y, z), each an array."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def _rotate(q: tuple, v: tuple) -> tuple:
    """Rotate vector components (x, y, z) by quaternion components (w, x, y, z)."""
    w, qx, qy, qz = q
    vx, vy, vz = v
    tx, ty, tz = 2 * (qy * vz - qz * vy), 2 * (qz * vx - qx * vz), 2 * (qx * vy - qy * vx)
    return (
        vx + w * tx + qy * tz - qz * ty,
        vy + w * ty + qz * tx - qx * tz,
        vz + w * tz + qx * ty - qy * tx,
    )


def _transpose_2d(a: np.ndarray, block: int = 4096) -> np.ndarray:
    """Contiguous a.T, copied in row blocks (about 3× faster than one strided copy)."""
    out = np.empty((a.shape[1], a.shape[0]))
    for start in range(0, a.shape[0], block):
        out[:, start : start + block] = a[start : start + block].T
    return out


def _joint_major(a: np.ndarray) -> np.ndarray:
    """(..., J, C) → contiguous (J, C, N) with N the flattened leading axes."""
    j, c = a.shape[-2:]
    return _transpose_2d(a.reshape(-1, j * c)).reshape(j, c, -1)


def _back(a: np.ndarray, lead: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`_joint_major`: (J, C, N) → (*lead, J, C)."""
    j, c = a.shape[:2]
    return _transpose_2d(a.reshape(j * c, -1)).reshape(*lead, j, c)


CHUNK = 4096  # frames per block: small enough to stay in cache and reuse freed memory


def forward_kinematics(
    skeleton: Skeleton, translations: np.ndarray, rotations: np.ndarray, need_rotations: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """World joint positions (..., J, 3) and orientations (..., J, 4).

    translations: (..., J, 3) local offsets in the parent's frame; rotations: (..., J, 4)
    pose rotations, applied after each joint's rest rotation. need_rotations=False skips
    the orientations of joints without children and returns None for them (faster).
    The work runs joint by joint on contiguous per-component arrays, vectorised over frames,
    in blocks of :data:`CHUNK` frames (3–4× faster on 100k frames than one pass: the
    temporaries stay in cache and no fresh memory is faulted in).
    """
    translations = np.asarray(translations, dtype=float)
    rotations = np.asarray(rotations, dtype=float)
    lead = translations.shape[:-2]
    j = skeleton.n_joints
    flat_t = translations.reshape(-1, j, 3)
    flat_r = np.broadcast_to(rotations, (*lead, j, 4)).reshape(-1, j, 4)
    n = flat_t.shape[0]
    positions = np.empty((n, j, 3))
    orientations = np.empty((n, j, 4)) if need_rotations else None
    for start in range(0, max(n, 1), CHUNK):
        block = slice(start, start + CHUNK)
        pos, rot = _fk_block(skeleton, flat_t[block], flat_r[block], need_rotations)
        positions[block] = pos
        if need_rotations:
            orientations[block] = rot
    positions = positions.reshape(*lead, j, 3)
    return positions, (orientations.reshape(*lead, j, 4) if need_rotations else None)


def _fk_block(skeleton: Skeleton, translations: np.ndarray, rotations: np.ndarray, need_rotations: bool) -> tuple:
    """Forward kinematics of (N, J, ·) arrays: positions (N, J, 3), orientations (N, J, 4) or None."""
    # (J, C, N) views of the (N, J, C) block: strided, but a block stays in cache
    trans = translations.transpose(1, 2, 0)
    rot = rotations.transpose(1, 2, 0)
    rest = skeleton.rest_rotations
    has_children = np.zeros(skeleton.n_joints, dtype=bool)
    has_children[skeleton.parents[skeleton.parents >= 0]] = True
    n = translations.shape[0]
    world_rot = np.empty((skeleton.n_joints, 4, n))
    world_pos = np.empty((skeleton.n_joints, 3, n))
    unturned = np.all(rest == [1.0, 0.0, 0.0, 0.0], axis=1)  # BVH: every joint
    for j, p in enumerate(skeleton.parents):
        if p >= 0:
            for c, offset in enumerate(_rotate(tuple(world_rot[p]), tuple(trans[j]))):
                np.add(world_pos[p, c], offset, out=world_pos[j, c])
        else:
            world_pos[j] = trans[j]
        if not (need_rotations or has_children[j]) and p >= 0:
            continue
        local = tuple(rot[j]) if unturned[j] else _mul(tuple(rest[j, :, None]), tuple(rot[j]))
        for c, value in enumerate(local if p < 0 else _mul(tuple(world_rot[p]), local)):
            world_rot[j, c] = value
    return world_pos.transpose(2, 0, 1), (world_rot.transpose(2, 0, 1) if need_rotations else None)


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
