"""Small helpers shared by the IK solvers: world ↔ local rotations, ancestry, smoothstep."""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..skeleton import Skeleton


def parent_world_rotations(skeleton: Skeleton, world_rot: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """World orientations (..., n, 4) of the parents of ``joints``; identity for roots."""
    joints = np.atleast_1d(np.asarray(joints, dtype=int))
    parents = skeleton.parents[joints]
    out = world_rot[..., np.maximum(parents, 0), :].copy()
    out[..., parents < 0, :] = quat.identity()
    return out


def local_from_world(skeleton: Skeleton, joints: np.ndarray, world: np.ndarray, parent_world: np.ndarray) -> np.ndarray:
    """Pose rotations (..., n, 4) giving ``joints`` the world orientations ``world`` (..., n, 4).

    parent_world: (..., n, 4) world orientations of their parents. Inverts
    world = parent_world · rest_rotation · rotation.
    """
    frame = quat.multiply(parent_world, skeleton.rest_rotations[np.asarray(joints, dtype=int)])
    return quat.normalize(quat.multiply(quat.conjugate(frame), world))


def is_ancestor(skeleton: Skeleton, ancestor: int, joint: int) -> bool:
    """True if ``ancestor`` lies on the path from ``joint`` to its root (a joint is its own ancestor)."""
    return ancestor in skeleton.path_to_root(joint)


def ancestry(skeleton: Skeleton, effectors: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """(k, n) bool: effector i lies in the subtree of joint j (so rotating j moves it)."""
    return np.array([[is_ancestor(skeleton, int(j), int(e)) for j in joints] for e in effectors], dtype=bool)


def smoothstep(x: np.ndarray) -> np.ndarray:
    """3x² − 2x³ on x clipped to [0, 1]: 0 → 0, 1 → 1, zero slope at both ends."""
    x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def unit(v: np.ndarray, eps: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors (..., 3) and lengths (...); vectors shorter than eps become zero."""
    n = quat.length(v)
    keep = n > eps
    out = np.divide(v, n[..., None], out=np.zeros(np.shape(v)), where=keep[..., None])
    return out, n


def nearest_valid(valid: np.ndarray) -> np.ndarray:
    """(T,) index of the nearest frame where ``valid`` (T,) holds (ties go to the earlier frame).

    Every index points at a valid frame if any exists; with none, the result is ``arange(T)``.
    """
    valid = np.asarray(valid, dtype=bool)
    n = valid.size
    frames = np.arange(n)
    if not valid.any():
        return frames
    before = np.maximum.accumulate(np.where(valid, frames, -1))
    after = np.minimum.accumulate(np.where(valid, frames, n)[::-1])[::-1]
    use_after = (before < 0) | ((after < n) & (after - frames < frames - before))
    return np.where(use_after, after, before)


def align_hemisphere(q: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Flip q (..., 4) where its dot product with ``reference`` is negative (same rotations)."""
    return np.where(quat.dot(q, reference)[..., None] < 0.0, -q, q)
