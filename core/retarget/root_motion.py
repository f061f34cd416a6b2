"""Root motion for game rigs: the travel and heading on a root bone at the floor, the pelvis under it.

Unreal and Unity characters carry their locomotion on a bone above the pelvis (the ``root`` bone
of a UE mannequin, the armature's top bone): the engine moves the character's capsule with it.
:func:`carry_root_motion` takes a retargeted motion whose pelvis travels and moves that travel
onto the root bone:

- the root bone's position: the pelvis's world position projected along ``up`` onto the root
  bone's rest height (its floor), so it travels horizontally with the pelvis and never leaves
  the floor;
- its orientation: the heading of the pelvis, the twist about ``up`` of the pelvis's world
  rotation relative to its rest (swing–twist decomposition), applied to the root's rest
  orientation;
- the joints between the root bone and the pelvis keep their pose relative to their parents,
  and the pelvis gets the local translation and rotation that keep its world path and
  orientation exactly: everything below it is unchanged.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..ik.common import local_from_world
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..skeleton import POSITION_CHANNELS, Skeleton, rest_world


def root_bone(skeleton: Skeleton, pelvis: int) -> int | None:
    """The top bone above ``pelvis`` (the root of its chain), or None when the pelvis is itself a top bone."""
    chain = skeleton.path_to_root(pelvis)
    top = int(chain[-1]) if len(chain) else pelvis
    return None if top == pelvis else top


def heading(rotations: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Twist (..., 4) about the unit vector ``up`` (3,) of rotations (..., 4): the heading part of a
    swing–twist decomposition (identity where the rotation is a half turn about a horizontal axis)."""
    q = np.asarray(rotations, dtype=float)
    along = q[..., 1:] @ up
    twist = np.concatenate((q[..., :1], along[..., None] * up), axis=-1)
    norm = np.linalg.norm(twist, axis=-1, keepdims=True)
    out = np.where(norm > 1e-9, twist / np.maximum(norm, 1e-300), quat.identity(q.shape[:-1]))
    return quat.make_continuous(out, axis=0) if out.ndim == 2 else out


def carry_root_motion(motion: Motion, pelvis: int, root: int, up: np.ndarray, floor: float | None = None) -> Motion:
    """``motion`` with the pelvis's horizontal travel and heading on the ``root`` bone (an ancestor of
    ``pelvis``), at height ``floor`` along ``up`` (3,) (default the root's rest height); the pelvis
    keeps its world path and orientation (module notes). Both get position channels."""
    sk = motion.skeleton
    up = np.asarray(up, dtype=float) / np.linalg.norm(up)
    if root not in sk.path_to_root(pelvis) or root == pelvis:
        raise ValueError(f"'{sk.names[root]}' is not above '{sk.names[pelvis]}'")
    pos, rot = forward_kinematics(sk, motion.translations, motion.rotations)
    rest_pos, rest_rot = rest_world(sk)
    floor = rest_pos[root] @ up if floor is None else float(floor)
    p = pos[:, pelvis]
    ground, turn = root_path(p, quat.multiply(rot[:, pelvis], quat.inverse(rest_rot[pelvis])), up, floor)
    skeleton = with_position_channels(sk, [root, pelvis])
    out = Motion(skeleton, motion.translations.copy(), motion.rotations.copy(), motion.fps)
    parent = sk.parents[root]
    if parent >= 0:
        parent_pos, parent_rot = pos[:, parent], rot[:, parent]
    else:
        parent_pos, parent_rot = np.zeros_like(ground), quat.identity((len(ground),))
    world_root = quat.multiply(turn, rest_rot[root])
    out.translations[:, root] = quat.rotate(quat.inverse(parent_rot), ground - parent_pos)
    out.rotations[:, root] = local_from_world(sk, np.array([root]), world_root[:, None], parent_rot[:, None])[:, 0]
    new_pos, new_rot = forward_kinematics(skeleton, out.translations, out.rotations)
    above = sk.parents[pelvis]
    out.translations[:, pelvis] = quat.rotate(quat.inverse(new_rot[:, above]), p - new_pos[:, above])
    local = local_from_world(sk, np.array([pelvis]), rot[:, pelvis][:, None], new_rot[:, above][:, None])[:, 0]
    out.rotations[:, pelvis] = quat.make_continuous(local, axis=0)
    out.rotations[:, root] = quat.make_continuous(out.rotations[:, root], axis=0)
    return out


def root_path(pelvis: np.ndarray, turned: np.ndarray, up: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the root bone goes (module notes): its position (T, 3), the pelvis's world position ``pelvis`` (T, 3)
    projected along the unit ``up`` (3,) onto the height ``floor``, and its turn from rest (T, 4), the heading
    about ``up`` of the pelvis's world rotation from its rest, ``turned`` (T, 4)."""
    return pelvis - np.outer(pelvis @ up - floor, up), heading(turned, up)


def with_position_channels(skeleton: Skeleton, joints) -> Skeleton:
    """The skeleton with position channels on ``joints`` (added in front where missing; limits, which
    are per channel, are dropped when a channel is added)."""
    channels = list(skeleton.channels)
    for j in joints:
        if not any(c in POSITION_CHANNELS for c in channels[j]):
            channels[j] = (*POSITION_CHANNELS, *(channels[j] or ("Zrotation", "Xrotation", "Yrotation")))
    if tuple(channels) == skeleton.channels:
        return skeleton
    return Skeleton(skeleton.names, skeleton.parents, skeleton.rest_translations, skeleton.rest_rotations,
                    tuple(channels), skeleton.end_site_parents, skeleton.end_site_offsets, None,
                    skeleton.meta)  # fmt: skip
