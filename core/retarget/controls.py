"""Control rigs: the poses of an animator's controls that put the deform skeleton where a retarget wants it.

A generated control rig (Rigify's) moves its deform bones through constraints: keys on a deform
bone move nothing, the controls (``torso``, ``hips``, ``thigh_fk.L``…) do. Each keyed control is
paired with the bone whose pose it sets (``thigh_fk.L`` → ``ORG-thigh.L``), or given its pose
outright (``torso``: the pelvis's position and heading, :func:`torso_targets`). The controls'
local poses are then found by a fixed point over what the rig evaluates (:func:`control_step`):
each step moves every control by the rigid correction that would put its bone on target, its
parent assumed to follow the nearest corrected ancestor. Rigid relations (a control → its ORG
bone, an FK chain) settle in one step; blended ones (a spine bone copying half of ``hips``)
converge geometrically.

All matrices are armature space, (..., 4, 4), translations in the last column, in the armature's
units; frames lead (T, n, 4, 4).
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..skeleton import Skeleton
from .root_motion import heading, root_path


def body_skeleton(
    names: list[str], rest: np.ndarray, lengths: np.ndarray, ancestors: list[list[int]], direct: np.ndarray
) -> Skeleton:
    """The skeleton of a control rig's copy of its body (Rigify's ``ORG-`` bones), with the body's
    hierarchy: a bone's parent is its parent in the rig when that is among ``names``, else (a bone
    the rig hangs under its controls: Rigify's ``ORG-spine.001``, ``ORG-palm.01.L``) the bone whose
    tail meets its head, else the bone its head lies on, else its nearest ancestor among ``names``.

    rest: (J, 4, 4) armature-space rest transforms (bone axes, Y along the bone); lengths: (J,);
    ancestors: per bone, the indices (into ``names``) of its ancestors in the rig, nearest first;
    direct: (J,) bool, whether the bone's parent in the rig is among ``names``.
    Joints come out with parents first; leaf bones get an End Site at their tail.
    """
    j = len(names)
    heads, tails = rest[:, :3, 3], rest[:, :3, 3] + rest[:, :3, 1] * lengths[:, None]
    tolerance = 1e-4 * max(float(np.ptp(heads, axis=0).max()), 1e-9)
    parents = np.full(j, -1)
    along = tails - heads
    for b in range(j):
        if direct[b] and ancestors[b]:
            parents[b] = ancestors[b][0]
            continue
        # hung under the rig's controls: the bone its head lies on (a chain's tail first), as in the metarig
        share = np.clip(np.sum((heads[b] - heads) * along, -1) / np.maximum(np.sum(along * along, -1), 1e-18), 0, 1)
        gap = np.linalg.norm(heads + share[:, None] * along - heads[b], axis=-1)
        gap[np.linalg.norm(tails - heads[b], axis=-1) < tolerance] = -1.0
        gap[[k for k in range(j) if b in ancestors[k] or k == b]] = np.inf
        k = int(np.argmin(gap))
        parents[b] = k if gap[k] < 0.25 * max(lengths[k], tolerance) else (ancestors[b] or [-1])[0]
    order: list[int] = []
    state = np.zeros(j, dtype=int)  # 0 new, 1 visiting, 2 placed

    def place(b: int) -> None:
        state[b] = 1
        p = parents[b]
        if p >= 0 and state[p] == 1:  # a loop through meeting ends: keep the rig's own ancestor
            parents[b] = ancestors[b][0] if ancestors[b] else -1
            p = parents[b]
        if p >= 0 and state[p] == 0:
            place(p)
        state[b] = 2
        order.append(b)

    for b in range(j):
        if state[b] == 0:
            place(b)
    where = np.empty(j, dtype=int)
    where[order] = np.arange(j)
    new_parents = np.array([where[parents[b]] if parents[b] >= 0 else -1 for b in order])
    world = rest[order]
    local = world.copy()
    for i, p in enumerate(new_parents):
        if p >= 0:
            local[i] = np.linalg.inv(world[p]) @ world[i]
    leaves = [i for i in range(j) if not np.any(new_parents == i)]
    return Skeleton(
        [names[b] for b in order],
        new_parents,
        local[:, :3, 3],
        quat.from_matrix(local[:, :3, :3]),
        tuple(("Zrotation", "Xrotation", "Yrotation") for _ in order),
        end_site_parents=np.array(leaves, dtype=int),
        end_site_offsets=np.array([[0.0, lengths[order[i]], 0.0] for i in leaves]).reshape(-1, 3),
    )


def matrices(positions: np.ndarray, orientations: np.ndarray) -> np.ndarray:
    """(..., 4, 4) transforms from positions (..., 3) and unit quaternions (..., 4)."""
    out = np.zeros((*positions.shape[:-1], 4, 4))
    out[..., :3, :3] = quat.to_matrix(orientations)
    out[..., :3, 3] = positions
    out[..., 3, 3] = 1.0
    return out


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of rigid transforms (..., 4, 4) (rotation and translation; no scale)."""
    out = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -(rt @ m[..., :3, 3, None])[..., 0]
    out[..., 3, 3] = 1.0
    return out


def orthonormal(m: np.ndarray) -> np.ndarray:
    """The nearest rigid transforms (..., 4, 4): the rotation part replaced by its polar factor
    (drops the scale and shear a rig's inherited scales leave)."""
    u, _, vt = np.linalg.svd(m[..., :3, :3])
    r = u @ vt
    flip = np.linalg.det(r) < 0
    if np.any(flip):
        u[flip, :, -1] *= -1
        r = u @ vt
    out = np.array(m, dtype=float, copy=True)
    out[..., :3, :3] = r
    out[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    return out


def root_targets(
    pelvis: np.ndarray, pelvis_rest: np.ndarray, root_rest: np.ndarray, up: np.ndarray, floor: float | None = None
) -> np.ndarray:
    """(T, 4, 4) poses of a root control carrying the root motion (:mod:`.root_motion`): at the pelvis's
    position (``pelvis`` (T, 4, 4), rest ``pelvis_rest`` (4, 4)) on the floor — height ``floor`` along ``up``
    (3,), default the root's rest height — turned from its rest ``root_rest`` (4, 4) by the pelvis's heading."""
    up = np.asarray(up, dtype=float) / np.linalg.norm(up)
    turned = quat.make_continuous(quat.from_matrix((pelvis @ rigid_inverse(pelvis_rest))[:, :3, :3]))
    floor = float(root_rest[:3, 3] @ up) if floor is None else float(floor)
    ground, turn = root_path(pelvis[:, :3, 3], turned, up, floor)
    out = np.repeat(root_rest[None], len(pelvis), axis=0)
    out[:, :3, :3] = quat.to_matrix(turn) @ root_rest[:3, :3]
    out[:, :3, 3] = ground
    return out


def torso_targets(pelvis: np.ndarray, pelvis_rest: np.ndarray, torso_rest: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(T, 4, 4) poses of a torso control: its rest pivot carried by the pelvis (``pelvis`` (T, 4, 4),
    ``pelvis_rest`` (4, 4)) and its rest orientation turned by the pelvis's heading about ``up`` (3,)
    (the tilt is left to the hips and chest controls)."""
    up = np.asarray(up, dtype=float) / np.linalg.norm(up)
    delta = pelvis @ rigid_inverse(pelvis_rest)
    turn = heading(quat.make_continuous(quat.from_matrix(delta[:, :3, :3])), up)
    out = np.repeat(torso_rest[None], len(pelvis), axis=0)
    out[:, :3, :3] = quat.to_matrix(turn) @ torso_rest[:3, :3]
    out[:, :3, 3] = (delta @ np.append(torso_rest[:3, 3], 1.0))[:, :3]
    return out


def control_step(
    basis: np.ndarray,
    evaluated: np.ndarray,
    wanted: np.ndarray,
    corrections: np.ndarray,
    ancestor: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One fixed-point step on the controls' local poses (module notes).

    basis: (T, n, 4, 4) the controls' current local poses (pose-bone basis matrices);
    evaluated: (T, n, 4, 4) their poses as the rig evaluates them; wanted: (T, n, 4, 4) the poses
    they should reach (:func:`wanted_poses`); corrections: (T, m, 4, 4) world corrections of other
    bones (wanted · evaluated⁻¹ of the bones controls set); ancestor: (n,) for each control the
    nearest corrected ancestor: ``i < n`` a control (in order: ancestors first), ``n + k`` the k-th
    of ``corrections``, −1 none. Returns (the new local poses, each control's own world correction).
    """
    n = basis.shape[1]
    own = np.empty_like(basis)
    out = np.empty_like(basis)
    for c in range(n):  # ancestors first: a dependency between controls, not a loop over frames
        a = int(ancestor[c])
        moved = evaluated[:, c]
        if a >= 0:
            moved = (own[:, a] if a < n else corrections[:, a - n]) @ moved
        out[:, c] = orthonormal(basis[:, c] @ rigid_inverse(orthonormal(moved)) @ wanted[:, c])
        own[:, c] = wanted[:, c] @ rigid_inverse(orthonormal(evaluated[:, c]))
    return out, own


def wanted_poses(evaluated: np.ndarray, driven: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(T, n, 4, 4) poses of controls that put their driven bones on ``targets``, the relation between
    each control and its driven bone taken from the current evaluation (``evaluated`` controls and
    ``driven`` bones, (T, n, 4, 4)): targets · driven⁻¹ · evaluated."""
    return targets @ rigid_inverse(orthonormal(driven)) @ orthonormal(evaluated)


def aimed_poses(
    evaluated: np.ndarray, base: np.ndarray, tip: np.ndarray, base_target: np.ndarray, tip_target: np.ndarray
) -> np.ndarray:
    """(T, 4, 4) poses of a control that spans a chain it cannot bend (Rigify's ``neck``, whose
    middle bones the rig blends): the chain's base put on ``base_target`` and the line from its base
    to ``tip`` turned by the shortest arc onto the line to ``tip_target``; the twist about it kept.

    evaluated: (T, 4, 4) the control's evaluated pose; base, tip, base_target, tip_target: (T, 3)
    evaluated and wanted positions of the chain's base and of the bone past its end.
    """
    swing = quat.to_matrix(quat.between(tip - base, tip_target - base_target))
    out = np.array(orthonormal(evaluated), copy=True)
    out[:, :3, :3] = swing @ out[:, :3, :3]
    out[:, :3, 3] = base_target + (swing @ (evaluated[:, :3, 3] - base)[..., None])[..., 0]
    return out


def turned_poses(
    evaluated: np.ndarray, pivot: np.ndarray, end: np.ndarray, joint: np.ndarray, joint_target: np.ndarray
) -> np.ndarray:
    """(T, 4, 4) poses of an IK chain's root turned about the line from ``pivot`` to ``end`` (T, 3)
    so that the chain's middle joint (``joint`` (T, 3), as evaluated) comes round to the side of
    ``joint_target`` (T, 3): the IK solver keeps the ends, the turn chooses the chain's plane."""
    axis = end - pivot
    axis = axis / np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-18)

    def across(p: np.ndarray) -> np.ndarray:
        v = p - pivot
        return v - np.sum(v * axis, -1, keepdims=True) * axis

    turn = quat.to_matrix(quat.between(across(joint), across(joint_target)))
    out = np.array(orthonormal(evaluated), copy=True)
    out[:, :3, :3] = turn @ out[:, :3, :3]
    out[:, :3, 3] = pivot + (turn @ (evaluated[:, :3, 3] - pivot)[..., None])[..., 0]
    return out


def pole_targets(
    upper: np.ndarray,
    lower: np.ndarray,
    end: np.ndarray,
    upper_rest: np.ndarray,
    lower_rest: np.ndarray,
    pole_rest: np.ndarray,
) -> np.ndarray:
    """(T, 4, 4) poses of an IK pole control matched to a limb's pose (upper, lower, end: (T, 4, 4)
    the limb's bones): out from the middle joint, away from the line between the limb's ends, at its
    rest distance; where the limb is straight, its rest offset turned with the upper bone. The pole
    keeps its rest orientation."""
    mid, top, tip = lower[:, :3, 3], upper[:, :3, 3], end[:, :3, 3]
    offset = pole_rest[:3, 3] - lower_rest[:3, 3]
    line = tip - top
    share = np.sum((mid - top) * line, -1) / np.maximum(np.sum(line * line, -1), 1e-18)
    out_dir = mid - (top + share[:, None] * line)
    turned = ((upper @ rigid_inverse(upper_rest))[:, :3, :3] @ offset[:, None])[..., 0]
    norm = np.linalg.norm(out_dir, axis=-1, keepdims=True)
    straight = norm < 1e-3 * np.linalg.norm(line, axis=-1, keepdims=True)
    direction = np.where(straight, turned, out_dir / np.maximum(norm, 1e-18) * np.linalg.norm(offset))
    out = np.repeat(pole_rest[None], len(upper), axis=0)
    out[:, :3, 3] = mid + direction
    return out


def basis_channels(basis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(locations (T, 3), quaternions (T, 4) kept in one hemisphere) of local poses (T, 4, 4)."""
    return basis[:, :3, 3].copy(), quat.make_continuous(quat.from_matrix(basis[:, :3, :3]))


def position_errors(evaluated: np.ndarray, targets: np.ndarray, length: np.ndarray) -> np.ndarray:
    """(T, n) distances between evaluated and target bones, at the head and at the tail ``length``
    (n,) along the bone's Y axis, the larger of the two."""
    head = np.linalg.norm(evaluated[..., :3, 3] - targets[..., :3, 3], axis=-1)
    tail = np.linalg.norm((evaluated[..., :3, 1] - targets[..., :3, 1]) * length[:, None] +
                          (evaluated[..., :3, 3] - targets[..., :3, 3]), axis=-1)  # fmt: skip
    return np.maximum(head, tail)
