"""Analytic two-link IK (hip–knee–ankle, shoulder–elbow–wrist), vectorised over frames.

The solve works on world positions: the mid joint first bends about its current bend-plane
normal (so a hinge such as the knee keeps its own axis; a limb straight within ``STRAIGHT`` borrows
its nearest bent frame's, carried in the upper joint's orientation) until the upper→end distance equals
the (soft-clamped) target distance, then the upper joint turns by the shortest arc that puts
the end on the target, and, when a pole direction is given, twists about the upper→target
axis so the mid joint points towards the pole. The world-space turns are finally converted
into the pose rotations of :class:`~core.motion.Motion` (relative to each joint's rest).

Reach clamping (Nicholas' "soft IK"): with reach L = l1 + l2 and soft zone s = softness·L,
a target distance d > L − s is replaced by L − s·exp(−(d − (L − s))/s), which has slope 1
where it starts and approaches L only asymptotically, so the knee never snaps straight; too
close targets get the mirror image above |l1 − l2|. ``softness=0`` gives a hard clamp.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import quaternion as quat
from ..kinematics import forward_kinematics
from ..motion import Motion
from .common import align_hemisphere, is_ancestor, local_from_world, nearest_valid, parent_world_rotations, unit

DEFAULT_SOFTNESS = 0.01
STRAIGHT = 1e-3  # sine of a bend below which a limb counts as straight: its bend plane is the file's rounding


class TwoLinkResult(NamedTuple):
    """New pose rotations (T, 4) of the three joints, the end position the solve reaches (T, 3)
    and its distance to the target (T,) in scene units (non-zero only where out of reach)."""

    upper: np.ndarray
    mid: np.ndarray
    end: np.ndarray
    reached: np.ndarray
    error: np.ndarray


def soft_clamp(d: np.ndarray, lo: np.ndarray, hi: np.ndarray, soft: np.ndarray) -> np.ndarray:
    """Distances d (T,) squeezed smoothly into (lo, hi); ``soft`` (T,) is the width of each soft zone.

    Inside [lo + soft, hi − soft] d is unchanged; beyond, it approaches the bound exponentially
    with a continuous first derivative. soft = 0 clips hard.
    """
    soft = np.minimum(soft, 0.25 * (hi - lo))
    safe = np.where(soft > 0, soft, 1.0)
    top, bottom = hi - soft, lo + soft
    upper = hi - soft * np.exp(-np.maximum(d - top, 0.0) / safe)
    lower = lo + soft * np.exp(np.minimum(d - bottom, 0.0) / safe)
    out = np.where(d > top, upper, np.where(d < bottom, lower, d))
    return np.where(soft > 0, out, np.clip(d, lo, hi))


def _any_perpendicular(v: np.ndarray) -> np.ndarray:
    """Unit vectors (T, 3) perpendicular to v (T, 3)."""
    basis = np.eye(3)[np.argmin(np.abs(v), axis=-1)]
    return unit(quat.cross(v, basis))[0]


def _bend_normal(
    e1: np.ndarray,
    e2: np.ndarray,
    pole: np.ndarray | None,
    frame: np.ndarray | None = None,
    straight: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Unit normals (T, 3) of the current bend planes, perpendicular to the upper bone e1, and which frames (T,) are
    bent (with none, the pole decides).

    Where the limb is straight (the sine of its bend under ``straight``, default ``STRAIGHT``) the normal of the
    nearest bent frame is borrowed (projected off e1), carried in the upper joint's world orientation ``frame``
    (T, 4) when given, so a leg that turns while it stays straight keeps its knee's side; with no bent frame at all,
    the plane through e1 and the pole, turning the mid joint towards the pole, else any plane. A knee a capture
    locks at 0° is collinear only up to the file's rounding (sine 2·10⁻⁷ on CMU 131_03); taken for its plane,
    planting bent the hop's landing knees sideways (the ankle 4 cm off its target where the IK is faded in) and the
    physics solve ended at ×1.50 of the input's jerk (×1.13 now).
    """
    n, length = unit(quat.cross(e1, e2))
    bent = length > (STRAIGHT if straight is None else straight) * quat.length(e1) * quat.length(e2)
    if bent.all():
        return n, bent
    if bent.any():
        src = nearest_valid(bent)
        n = n[src] if frame is None else quat.rotate(frame, quat.rotate(quat.conjugate(frame[src]), n[src]))
    elif pole is not None:  # e2 turns away from the pole about pole × e1: the mid joint goes towards it
        n = unit(quat.cross(pole, e1))[0]
    u1 = unit(e1)[0]
    n, length = unit(n - quat.inner(n, u1)[..., None] * u1)
    return np.where(length[:, None] > 1e-9, n, _any_perpendicular(e1)), bent


def _twist_to_pole(delta: np.ndarray, e1: np.ndarray, u: np.ndarray, pole: np.ndarray) -> np.ndarray:
    """Add to the world turn ``delta`` (T, 4) a twist about u (T, 3) that swings the mid joint towards the pole."""
    k = quat.rotate(delta, e1)
    k_perp = k - quat.inner(k, u)[..., None] * u
    p_perp = pole - quat.inner(pole, u)[..., None] * u
    angle = np.arctan2(quat.inner(quat.cross(k_perp, p_perp), u), quat.inner(k_perp, p_perp))
    return quat.multiply(quat.from_axis_angle(u, angle), delta)


class Turns(NamedTuple):
    """A two-link solve before its twist to a pole (:func:`first_turns`): the upper bone e1 (T, 3), the unit
    direction u (T, 3) from the upper joint to the target, the mid joint's turn (T, 4), the end once bent (T, 3),
    the upper joint's shortest-arc turn (T, 4), and whether its bend plane is still the pole's to give (the limb
    straight on every frame and no pole given: :func:`_bend_normal`)."""

    e1: np.ndarray
    u: np.ndarray
    delta_mid: np.ndarray
    c_bent: np.ndarray
    delta_upper: np.ndarray
    awaits_pole: bool


def solve_two_link(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    target: np.ndarray,
    pole: np.ndarray | None = None,
    softness: float = DEFAULT_SOFTNESS,
    turns: Turns | None = None,
    frame: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World-space two-link solve on positions (T, 3) of the upper (a), mid (b) and end (c) joints.

    target: (T, 3) or (3,) end goal; pole: optional bend direction (T, 3) or (3,) (the mid
    joint swings towards it; for a pole *point* P pass P − a); default keeps the current
    bend plane (a limb straight within ``STRAIGHT``: its nearest bent frame's, :func:`_bend_normal`). softness:
    soft-zone width as a fraction of the reach l1 + l2; turns: :func:`first_turns` of the same a, b, c, target and
    softness when already made (planting makes them once for its pole and its solve); frame: the upper joint's world
    orientations (T, 4), which carry a bent frame's plane to the straight ones.
    Returns (delta_upper, delta_mid, reached): world-space turns (T, 4) — delta_mid acts at b
    first, then delta_upper at a on everything below it — and the reached end (T, 3).
    """
    a = np.asarray(a, dtype=float)
    if pole is not None:
        pole = np.broadcast_to(np.asarray(pole, dtype=float), a.shape)
    if turns is None or (turns.awaits_pole and pole is not None):
        turns = first_turns(a, b, c, target, pole, softness, frame)
    delta_upper = turns.delta_upper
    if pole is not None:
        delta_upper = _twist_to_pole(delta_upper, turns.e1, turns.u, pole)
    reached = a + quat.rotate(delta_upper, turns.c_bent - a)
    return delta_upper, turns.delta_mid, reached


def first_turns(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    target: np.ndarray,
    pole: np.ndarray | None = None,
    softness: float = DEFAULT_SOFTNESS,
    frame: np.ndarray | None = None,
    straight: float | None = None,
) -> Turns:
    """:func:`solve_two_link`'s turns before the twist to its pole (the pole bends only a limb straight on every
    frame: :func:`_bend_normal`), same arguments; straight: the sine of a bend under which a frame counts as
    straight (a caller that knows the limb's own plane is noise up to a larger bend gives that)."""
    a, b, c = (np.asarray(x, dtype=float) for x in (a, b, c))
    target = np.broadcast_to(np.asarray(target, dtype=float), a.shape)
    if pole is not None:
        pole = np.broadcast_to(np.asarray(pole, dtype=float), a.shape)
    e1, e2 = b - a, c - b
    l1 = quat.length(e1)
    l2 = quat.length(e2)
    reach = l1 + l2
    u, dist = unit(target - a, eps=1e-9 * np.maximum(reach, 1e-300))
    u = np.where(dist[:, None] > 0, u, unit(c - a)[0])  # a target on the upper joint: keep the direction
    dist = soft_clamp(dist, np.abs(l1 - l2), reach, softness * reach)
    # Bend angle θ between e1 and e2 (0 = straight) from the law of cosines.
    safe = np.maximum(2.0 * l1 * l2, 1e-300)
    theta_new = np.pi - np.arccos(np.clip((l1**2 + l2**2 - dist**2) / safe, -1.0, 1.0))
    theta_cur = np.arctan2(quat.length(quat.cross(e1, e2)), quat.inner(e1, e2))
    normal, bent = _bend_normal(e1, e2, pole, frame, straight)
    delta_mid = quat.from_axis_angle(normal, theta_new - theta_cur)
    # a limb straight but for rounding bends about a borrowed normal, not quite perpendicular to e2: first laid
    # exactly straight (or folded) along e1, so the bend reaches the target distance exactly
    flat = ~bent
    if flat.any():
        snap = np.where(quat.inner(e1, e2) >= 0.0, 0.0, np.pi)[flat]
        laid = quat.between(e2[flat], np.cos(snap)[:, None] * e1[flat])
        delta_mid[flat] = quat.multiply(quat.from_axis_angle(normal[flat], theta_new[flat] - snap), laid)
    c_bent = b + quat.rotate(delta_mid, e2)
    return Turns(e1, u, delta_mid, c_bent, quat.between(c_bent - a, u), pole is None and not bent.any())


def _check_chain(motion: Motion, upper: int, mid: int, end: int) -> None:
    sk = motion.skeleton
    if not (upper != mid != end and is_ancestor(sk, upper, mid) and is_ancestor(sk, mid, end)):
        names = [sk.names[j] for j in (upper, mid, end)]
        raise ValueError(f"{names} is not a chain: mid must lie below upper and end below mid")


def two_link_ik(
    motion: Motion,
    upper: int,
    mid: int,
    end: int,
    targets: np.ndarray,
    pole: np.ndarray | None = None,
    keep_end_orientation: bool = False,
    end_orientation: np.ndarray | None = None,
    softness: float = DEFAULT_SOFTNESS,
    world: tuple[np.ndarray, np.ndarray] | None = None,
    turns: Turns | None = None,
) -> TwoLinkResult:
    """New pose rotations of ``upper`` and ``mid`` so joint ``end`` reaches ``targets`` (T, 3).

    Joints between them (twist segments) are allowed and left unchanged. pole: bend
    direction (T, 3) or (3,), default keeps the current bend plane. keep_end_orientation:
    also change the end joint's rotation so its world orientation stays as in ``motion``
    (the foot stays flat); end_orientation: (T, 4) world orientation to give it instead.
    world: FK of ``motion`` (positions (T, J, 3), orientations (T, J, 4)) if already known; turns: the solve's
    :func:`first_turns` on those positions, if already made.
    """
    _check_chain(motion, upper, mid, end)
    sk = motion.skeleton
    pos, rot = world if world is not None else forward_kinematics(sk, motion.translations, motion.rotations)
    ends = (pos[:, upper], pos[:, mid], pos[:, end])
    d_upper, d_mid, reached = solve_two_link(*ends, targets, pole, softness, turns, rot[:, upper])
    chain = np.array([upper, mid, end])
    parent = parent_world_rotations(sk, rot, chain)
    new_upper = local_from_world(sk, [upper], quat.multiply(d_upper, rot[:, upper])[:, None], parent[:, :1])[:, 0]
    new_mid = local_from_world(sk, [mid], quat.multiply(d_mid, rot[:, mid])[:, None], parent[:, 1:2])[:, 0]
    new_end = motion.rotations[:, end]
    if keep_end_orientation or end_orientation is not None:
        goal = rot[:, end] if end_orientation is None else np.broadcast_to(end_orientation, rot[:, end].shape)
        moved_parent = quat.multiply(d_upper, quat.multiply(d_mid, parent[:, 2]))
        new_end = local_from_world(sk, [end], goal[:, None], moved_parent[:, None])[:, 0]
    old = motion.rotations[:, chain]
    new = align_hemisphere(np.stack((new_upper, new_mid, new_end), axis=1), old)
    error = quat.length(np.broadcast_to(targets, reached.shape) - reached)
    return TwoLinkResult(new[:, 0], new[:, 1], new[:, 2], reached, error)


def apply_two_link(
    motion: Motion,
    upper: int,
    mid: int,
    end: int,
    targets: np.ndarray,
    weight: np.ndarray | float = 1.0,
    in_place: bool = False,
    **options,
) -> Motion:
    """A copy of ``motion`` with the chain solved by :func:`two_link_ik` (same options).

    weight: (T,) or scalar in [0, 1], IK influence per frame: the three rotations are
    slerped from the original (0) to the solution (1). in_place: write the chain's rotations into ``motion``
    itself and return it (a caller's own copy: planting solves its legs one after another on one).
    """
    result = two_link_ik(motion, upper, mid, end, targets, **options)
    out = motion if in_place else motion.copy()
    chain = [upper, mid, end]
    solved = np.stack((result.upper, result.mid, result.end), axis=1)
    w = np.broadcast_to(np.asarray(weight, dtype=float), (motion.n_frames,))[:, None]
    out.rotations[:, chain] = quat.slerp(motion.rotations[:, chain], solved, w)
    return out
