"""Pose mixing of two motions frame by frame: the primitive under transitions, body-part blending
and interpolation."""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from .root import chain_world, pelvis_joint, set_pelvis_world


def ancestors(motion: Motion, joint: int) -> np.ndarray:
    """(J,) bool: the strict ancestors of ``joint``."""
    mask = np.zeros(motion.skeleton.n_joints, dtype=bool)
    mask[motion.skeleton.path_to_root(joint)[1:]] = True
    return mask


def _weights(weights: np.ndarray | float, n_frames: int, n_joints: int) -> np.ndarray:
    """Weights broadcast to (T, J) from a scalar, (T,), (J,) or (T, J)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim == 1 and w.shape[0] == n_frames and n_frames != n_joints:
        w = w[:, None]
    elif w.ndim == 1 and w.shape[0] == n_frames == n_joints:
        raise ValueError("ambiguous weights: T equals J; pass a (T, J) array")
    return np.broadcast_to(w, (n_frames, n_joints))


def mix(
    a: Motion,
    b: Motion,
    weights: np.ndarray | float,
    pelvis_position_weight: np.ndarray | float | None = None,
    blend_ancestors: bool = False,
) -> Motion:
    """Frames of ``a`` moved towards ``b`` by ``weights`` (0 → a, 1 → b; values outside [0, 1] extrapolate).

    a, b: the same skeleton and frame count. weights: scalar, (T,), (J,) or (T, J). Joints
    below and beside the pelvis: slerp of local rotations, lerp of local translations. The pelvis
    is mixed in world space (slerp of orientation, lerp of position with
    ``pelvis_position_weight``, default its rotation weight), so skeletons whose pelvis hangs
    under a moving root (Bandai's ``joint_Root``) mix correctly; the pelvis's ancestors are
    ``a``'s, or with ``blend_ancestors`` their local channels mixed too (two solves of one clip joined: a root above
    the pelvis that one of them moved would otherwise jump where the weights reach 1). Both motions should be in
    the same place (e.g. both :func:`.root.normalize_frames`).
    """
    if a.skeleton is not b.skeleton and a.skeleton.names != b.skeleton.names:
        raise ValueError("mix needs two motions on the same skeleton (see conform)")
    if a.n_frames != b.n_frames:
        raise ValueError(f"mix needs equal frame counts, got {a.n_frames} and {b.n_frames}")
    w = _weights(weights, a.n_frames, a.skeleton.n_joints)
    pelvis = pelvis_joint(a)
    keep = ancestors(a, pelvis)
    active = np.flatnonzero(np.any(w != 0.0, axis=0) & ~keep)  # only joints that move towards b
    rot, trans = a.rotations.copy(), a.translations.copy()
    wa = w[:, active]
    rot[:, active] = quat.normalize(quat.slerp(a.rotations[:, active], b.rotations[:, active], wa))
    trans[:, active] += wa[..., None] * (b.translations[:, active] - a.translations[:, active])
    out = Motion(a.skeleton, trans, rot, a.fps)
    pos_a, rot_a = chain_world(a, pelvis)
    pos_b, rot_b = chain_world(b, pelvis)
    wp = w[:, pelvis]
    wt = wp if pelvis_position_weight is None else np.broadcast_to(pelvis_position_weight, wp.shape)
    pelvis_rot = quat.normalize(quat.slerp(rot_a, rot_b, wp))
    if blend_ancestors and keep.any():
        up = w[:, keep]
        out.rotations[:, keep] = quat.normalize(quat.slerp(a.rotations[:, keep], b.rotations[:, keep], up))
        out.translations[:, keep] += up[..., None] * (b.translations[:, keep] - a.translations[:, keep])
    return set_pelvis_world(out, pos_a + wt[:, None] * (pos_b - pos_a), pelvis_rot, copy=False)
