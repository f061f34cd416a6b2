"""Rigid-body dynamics of a mocap clip: segment kinematics, centre of mass, momentum, ZMP, inverse dynamics.

Units: the motion's positions are in scene units and are converted to metres with
``body.unit``; every dynamic quantity here is SI (m/s, m/s², rad/s, N, N·m, kg·m/s,
kg·m²/s). Points returned for drawing next to the motion (CoM, ZMP) are in scene units.

Velocities and accelerations are Savitzky–Golay derivatives (:mod:`.derivatives`) of
forward-kinematics positions and of hemisphere-continuous world quaternions at the clip's
fps: ω = vec(2 q̇ q*), α = vec(2 q̈ q*).

ZMP on flat ground (height h0 along the unit up axis u, gravity −g u): with the net force the
ground must supply F = Σ mᵢ(aᵢ + g u) and its moment about the origin
M = Σ [cᵢ × mᵢ(aᵢ + g u) + Ḣᵢ] (Ḣᵢ = Iᵢαᵢ + ωᵢ × Iᵢωᵢ), the point p on the ground where the
moment has no horizontal part is p = (u × M + h0 F_h) / F_n + h0 u, with F_n = F·u and F_h
its horizontal part. When F_n < ``free_fall`` · m g (flight, free fall; or a motion that
would need the ground to pull) the ZMP is undefined: NaN, and the frame is flagged.

Inverse dynamics: recursive Newton–Euler, backward pass over the tree (children before
parents), vectorised over frames, with the forward pass replaced by the finite-difference
kinematics above. Body j needs Fⱼ = mⱼ(aⱼ + g u) and Nⱼ = Ḣⱼ; the joint force and moment
exerted on it by its parent are
fⱼ = Fⱼ + Σ_c f_c − Gⱼ and nⱼ = Nⱼ + (cⱼ − pⱼ) × Fⱼ + Σ_c [n_c + (p_c − pⱼ) × f_c] − (rⱼ − pⱼ) × Gⱼ,
Gⱼ the ground force on a contact foot applied at rⱼ. The root's f, n are the residual force
and moment no joint can produce (zero for a physically consistent motion and ground force).
The ground force of double support is indeterminate: the split used is the valid one (each leg's
force at a centre of pressure inside its boxes, the two summing to the net force at the ZMP,
friction μ = 0.8) whose worst |τ|/limit is least (:mod:`.split`), because the torque constraint
holds when *some* split keeps every joint within its limit: the torque of a double-support frame is
the least any valid split needs. (Before, the force was split by proximity to the ZMP — foot k got
wₖ F at its box point nearest the ZMP, w inversely proportional to that distance plus a small ε —
a heuristic that neither gave the horizontal moment the motion needs nor the least torques: on the
1.4× CMU walk 02_01 it put 5 frames over a limit where a valid split puts none.) Single support is
determined: the whole force at the ZMP. Where the ZMP is outside the polygon the point of the
polygon nearest to it stands in for it; where it is undefined (in contact but under the free-fall
threshold) the proximity split stays (equal shares at the box centres). The vertical free moment
is not modelled.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts
from ..kinematics import end_site_positions, forward_kinematics
from ..limbs import find_feet
from ..motion import Motion
from .body import FOOT_PER_SHANK, BodyModel, G, leg_chain
from .derivatives import by_clip, derivatives, from_clips
from .errors import PhysicsError
from .split import SCALE, hull_constraints, least_worst_split, leg_of_boxes, torque_map
from .support import Support, foot_boxes, ground_basis, polygon_query, to_ground

FREE_FALL = 0.1  # fraction of body weight below which the vertical ground force counts as zero


class Kinematics(NamedTuple):
    """Per-frame state of every joint's rigid body, SI units.

    joint_pos (T, J, 3) m; joint_rot (T, J, 4) world orientation; com (T, J, 3) m; vel, acc
    (T, J, 3) m/s, m/s² of each CoM; omega, alpha (T, J, 3) rad/s, rad/s² (world frame);
    inertia_local (J, 3, 3) kg·m² about each CoM in the joint's frame (:attr:`inertia`: the world
    tensors, :meth:`inertia_times`: their products with vectors without forming them); fps.
    """

    joint_pos: np.ndarray
    joint_rot: np.ndarray
    com: np.ndarray
    vel: np.ndarray
    acc: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray
    inertia_local: np.ndarray
    fps: float
    spin: np.ndarray | None = None  # Ḣ (T, J, 3) N·m when computed (:func:`body_torques`)
    smooth: float = 0.1  # the derivatives' Savitzky–Golay span, seconds (0: central differences)

    @property
    def inertia(self) -> np.ndarray:
        """(T, J, 3, 3) kg·m² world-frame inertia tensors about each CoM."""
        r = quat.to_matrix(self.joint_rot)
        return r @ self.inertia_local @ np.swapaxes(r, -1, -2)

    def inertia_times(self, v: np.ndarray, local: bool = False) -> np.ndarray:
        """I·v (T, J, 3) for world vectors v (T, J, 3) (local=True: v already in the joint frames, result too)."""
        vl = v if local else quat.rotate(quat.conjugate(self.joint_rot), v)
        i = self.inertia_local
        out = np.stack(
            [i[:, a, 0] * vl[..., 0] + i[:, a, 1] * vl[..., 1] + i[:, a, 2] * vl[..., 2] for a in range(3)], -1
        )
        return out if local else quat.rotate(self.joint_rot, out)


def segment_kinematics(
    motion: Motion,
    body: BodyModel,
    smooth: float = 0.1,
    world: tuple[np.ndarray, np.ndarray] | None = None,
    clips: int = 1,
    turned: tuple[Kinematics, np.ndarray] | None = None,
) -> Kinematics:
    """:class:`Kinematics` of every body of ``motion``; smooth: derivative span in seconds (0: central differences).

    world: (positions (T, J, 3), rotations (T, J, 4)) from forward kinematics, if already computed;
    clips: the motion is that many equal clips one after another (a batch), differentiated each on its own;
    turned: (kinematics of one clip, same (J,) bool): every clip of ``motion`` has that clip's world orientations
    at the joints ``same`` (the others may differ), so their angular velocities, accelerations and spins are
    taken from it (the same smoothing) and only the others' computed (a balance plan's evaluations: a shift of
    the body and planting turn the legs alone).
    """
    pos, rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations) if world is None else world
    pos = pos * body.unit
    q = _parts(rot)
    com = pos + _stacked(quat.rotate_parts(q, tuple(body.com_local[:, c] * body.unit for c in range(3))))
    vel, acc = derivatives(com, motion.fps, smooth, clips=clips)
    if turned is None:
        omega, alpha = angular_velocity(rot, motion.fps, smooth, clips)
        spin = _spin(q, omega, alpha, body.inertia_local)
    else:
        known, same = turned
        redo = ~np.asarray(same, dtype=bool)
        omega, alpha, spin = (np.tile(a, (clips, 1, 1)) for a in (known.omega, known.alpha, known.spin))
        if redo.any():
            w, a = angular_velocity(rot[:, redo], motion.fps, smooth, clips)
            omega[:, redo], alpha[:, redo] = w, a
            spin[:, redo] = _spin(_parts(rot[:, redo]), w, a, body.inertia_local[redo])
    kin = Kinematics(pos, rot, com, vel, acc, omega, alpha, body.inertia_local, motion.fps, smooth=smooth)
    return kin._replace(spin=spin)


def _parts(a: np.ndarray) -> tuple:
    """The components of a (..., C) as C contiguous arrays (...): what the hot loops multiply."""
    return tuple(np.ascontiguousarray(a[..., i]) for i in range(a.shape[-1]))


def _stacked(parts: tuple) -> np.ndarray:
    """Inverse of :func:`_parts`: (..., C) from C arrays (...)."""
    return np.stack(parts, axis=-1)


def _vector_of_product(a: tuple, b: tuple) -> tuple:
    """Vector part (x, y, z) of the Hamilton product a·b of quaternion components (w, x, y, z)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def _spin(q: tuple, omega: np.ndarray, alpha: np.ndarray, inertia_local: np.ndarray) -> np.ndarray:
    """Ḣ = Iα + ω × Iω (T, J, 3) N·m (:func:`body_torques`) from the orientations' components q (:func:`_parts`),
    worked in the joint frames on contiguous components."""
    inverse = (q[0], -q[1], -q[2], -q[3])
    w = quat.rotate_parts(inverse, _parts(omega))
    a = quat.rotate_parts(inverse, _parts(alpha))
    i = inertia_local
    iw = tuple(i[:, r, 0] * w[0] + i[:, r, 1] * w[1] + i[:, r, 2] * w[2] for r in range(3))
    local = tuple(i[:, r, 0] * a[0] + i[:, r, 1] * a[1] + i[:, r, 2] * a[2] for r in range(3))
    local = (
        local[0] + w[1] * iw[2] - w[2] * iw[1],
        local[1] + w[2] * iw[0] - w[0] * iw[2],
        local[2] + w[0] * iw[1] - w[1] * iw[0],
    )
    return _stacked(quat.rotate_parts(q, local))


def angular_velocity(rot: np.ndarray, fps: float, smooth: float, clips: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """World angular velocity ω (T, J, 3) rad/s and acceleration α (T, J, 3) rad/s² of world rotations (T, J, 4)."""
    q = from_clips(quat.make_continuous(by_clip(rot, clips), axis=0))
    dq, ddq = derivatives(q, fps, smooth, clips=clips)
    conj = _parts(q)
    conj = (conj[0], -conj[1], -conj[2], -conj[3])
    omega = _vector_of_product(_parts(dq), conj)
    alpha = _vector_of_product(_parts(ddq), conj)
    return 2.0 * _stacked(omega), 2.0 * _stacked(alpha)


def phase_momentum(kin: Kinematics, body: BodyModel, start: int, stop: int) -> np.ndarray:
    """Angular momentum about the CoM (stop − start, 3) kg·m²/s over frames [start, stop), from
    derivatives of those frames alone (one-sided at both ends): in a flight phase the clip-wide
    derivative windows would mix in the take-off and landing frames, where the ground acts."""
    f = slice(start, stop)
    vel, _ = derivatives(kin.com[f], kin.fps, kin.smooth)
    omega, _ = angular_velocity(kin.joint_rot[f], kin.fps, kin.smooth)
    part = kin._replace(joint_pos=kin.joint_pos[f], joint_rot=kin.joint_rot[f], com=kin.com[f], vel=vel, omega=omega)
    return momentum(part, body)[1]


def body_torques(kin: Kinematics) -> np.ndarray:
    """Ḣ = Iα + ω × Iω (T, J, 3), N·m: rate of change of each body's spin angular momentum."""
    if kin.spin is not None:
        return kin.spin
    return _spin(_parts(kin.joint_rot), kin.omega, kin.alpha, kin.inertia_local)


def center_of_mass(kin: Kinematics, body: BodyModel) -> np.ndarray:
    """Whole-body CoM (T, 3) in metres."""
    return np.einsum("j,tjc->tc", body.masses, kin.com) / body.masses.sum()


def momentum(kin: Kinematics, body: BodyModel) -> tuple[np.ndarray, np.ndarray]:
    """Linear momentum (T, 3) kg·m/s and angular momentum about the CoM (T, 3) kg·m²/s."""
    m = body.masses
    total = m.sum()
    linear = np.einsum("j,tjc->tc", m, kin.vel)
    c = center_of_mass(kin, body)
    v = linear / total
    spin = np.einsum("tjc->tc", kin.inertia_times(kin.omega))  # .sum(axis=1)'s values (:func:`ground_wrench`)
    orbital = np.einsum("j,tjc->tc", m, quat.cross(kin.com - c[:, None], kin.vel - v[:, None]))
    return linear, orbital + spin


class GroundWrench(NamedTuple):
    """Net ground force F (T, 3) N and its moment about the origin M (T, 3) N·m that the motion needs,
    per-body forces mᵢ(aᵢ + g u) (T, J, 3) N, spin torques Ḣ (T, J, 3) N·m and moments about the origin
    cᵢ × mᵢ(aᵢ + g u) + Ḣᵢ (T, J, 3) N·m."""

    force: np.ndarray
    moment: np.ndarray
    body_forces: np.ndarray
    body_spin: np.ndarray
    body_moments: np.ndarray | None = None


def ground_wrench(kin: Kinematics, body: BodyModel) -> GroundWrench:
    """The :class:`GroundWrench` of a clip (Newton–Euler of the whole body)."""
    f = body.masses[:, None] * (kin.acc + G * body.up)
    spin = body_torques(kin)
    moments = quat.cross(kin.com, f) + spin
    # sums over the bodies: einsum adds them in order, the same values as .sum(axis=1) 5× faster (no reduction
    # loop of length 3 per body)
    return GroundWrench(np.einsum("tjc->tc", f), np.einsum("tjc->tc", moments), f, spin, moments)


def zmp_from_wrench(
    force: np.ndarray, moment: np.ndarray, up: np.ndarray, ground: float, weight: float, free_fall: float = FREE_FALL
) -> tuple[np.ndarray, np.ndarray]:
    """ZMP (..., 3) in metres and the free-fall flag (...,) from the ground wrench (module formula).

    ground: plane height along ``up`` in metres; weight: m g in N. Flagged frames are NaN.
    """
    fn = force @ up
    fh = force - fn[..., None] * up
    flag = fn < free_fall * weight
    safe = np.where(flag, 1.0, fn)[..., None]
    p = (quat.cross(up, moment) + ground * fh) / safe + ground * up
    return np.where(flag[..., None], np.nan, p), flag


def zmp(
    kin: Kinematics, body: BodyModel, ground: float, free_fall: float = FREE_FALL, wrench: GroundWrench | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """ZMP (T, 3) in scene units (NaN in free fall) and the free-fall flag (T,); ground in scene units;
    wrench: :func:`ground_wrench` of ``kin`` when already computed."""
    w = ground_wrench(kin, body) if wrench is None else wrench
    p, flag = zmp_from_wrench(w.force, w.moment, body.up, ground * body.unit, body.mass * G, free_fall)
    return p / body.unit, flag


def _toe_tips(skeleton, pos: np.ndarray, rot: np.ndarray, up: np.ndarray) -> dict[int, tuple[int | None, np.ndarray]]:
    """Per foot joint: its toe joint (or None) and the toe tip (T, 3): the toe's End Site, else the
    joint of the toe's subtree farthest ahead of the foot (a rig whose toe ends are bones, as Mixamo's and
    Character Creator's: the end bone's head is the tip), else the foot's own End Site or the foot joint (feet
    from :func:`core.limbs.find_feet`).

    Not the End Sites below such a toe: they are the end bones' tails, which exporters place anywhere. Mixamo's
    BVH repeats each ``Toe_End``'s own offset as its End Site, 7 cm past the toes: measured to it, the feet were
    30 cm from ankle to tip instead of 23 (a 2 m body), the double-support split leaned on that phantom forefoot,
    and the report read CMU 01_01's jumps on the Mixamo rig at 0 frames over a limit (worst 0.95) where the
    independent re-measure (tests/physics_reference.py) found 8 (worst 1.14, the right ankle before each take-off)."""
    try:
        feet = list(find_feet(skeleton, up).values())
    except ValueError:
        return {}
    ends = end_site_positions(skeleton, pos, rot) if len(skeleton.end_site_parents) else None
    out = {}
    for foot, toe in feet:
        tip = pos[:, foot]
        for j in (toe, foot):
            if j is not None and ends is not None and np.any(skeleton.end_site_parents == j):
                tip = ends[:, int(np.flatnonzero(skeleton.end_site_parents == j)[0])]
                break
            if j is not None and j == toe:
                tip = _farthest_below(skeleton, pos, toe, pos[:, foot], up)
                break
        out[int(foot)] = (toe, tip)
    return out


def _farthest_below(skeleton, pos: np.ndarray, joint: int, origin: np.ndarray, up) -> np.ndarray:
    """(T, 3) the joint of ``joint``'s subtree farthest from ``origin`` (T, 3) along the ground on average over
    the frames (one joint for the whole clip)."""
    points = pos[:, skeleton.subtree(joint)]  # (T, P, 3)
    d = points - origin[:, None]
    d -= (d @ up)[..., None] * up
    return points[:, int(np.argmax(quat.length(d).mean(axis=0)))]


def ground_height(motion: Motion, contacts: Contacts, world=None) -> float:
    """Ground height along ``contacts.up`` (scene units): median over contact frames of the lowest
    point among the contact joints and the toe tips."""
    sk = motion.skeleton
    pos, rot = forward_kinematics(sk, motion.translations, motion.rotations) if world is None else world
    tips = _toe_tips(sk, pos, rot, contacts.up)
    heights = [pos[:, contacts.joints] @ contacts.up] + [tip[:, None] @ contacts.up for _, tip in tips.values()]
    low = np.min(np.concatenate(heights, axis=1), axis=1)
    flags = contacts.flags.any(axis=1)
    return float(np.median(low[flags])) if flags.any() else float(np.min(low))


def support_from(
    motion: Motion, contacts: Contacts, ground: float | None = None, heel: float = 0.25, width: float = 0.5, world=None
) -> Support:
    """:class:`Support` polygons of ``motion`` from its contacts (foot and/or toe joints).

    A foot joint in contact gives a box from ``heel`` × L behind the ankle to the toe tip,
    ``width`` × L wide, L the horizontal ankle → toe-tip length (defaults 0.25 and 0.5: a
    26 cm foot has its heel ~5 cm behind the ankle and is ~10 cm wide); a toe joint in contact
    (the heel already up) gives the forefoot box from 0.1 L behind the toe joint to the tip,
    as wide (along the foot where the tip is the toe joint itself: a zero End Site offset, as on the Bandai
    Namco captures). Other contact joints are ignored. ground: scene units (default :func:`ground_height`).
    """
    sk = motion.skeleton
    pos, rot = forward_kinematics(sk, motion.translations, motion.rotations) if world is None else world
    up = contacts.up
    basis = ground_basis(up)
    columns = {int(j): i for i, j in enumerate(contacts.joints)}
    boxes, flags, joints = [], [], []
    steady = contacts.flags if contacts.steady is None else contacts.steady
    used = []
    tips = _toe_tips(sk, pos, rot, up)
    for foot, (toe, tip) in tips.items():
        ankle2, tip2 = to_ground(pos[:, foot], basis), to_ground(tip, basis)
        length = quat.length(tip2 - ankle2)
        if foot in columns and toe is None and _tip_is_ankle(pos, foot, tip):
            boxes.append(_stub_foot_box(sk, pos, foot, list(tips), basis, heel, width))
            flags.append(contacts.flags[:, columns[foot]]), joints.append(foot), used.append(columns[foot])
        elif foot in columns:
            boxes.append(foot_boxes(ankle2, tip2, heel * length, 0.5 * width * length))
            flags.append(contacts.flags[:, columns[foot]]), joints.append(foot), used.append(columns[foot])
        if toe is not None and toe in columns:
            toe2 = to_ground(pos[:, toe], basis)  # a toe tip on the toe joint: the box points along the foot
            boxes.append(foot_boxes(toe2, tip2, 0.1 * length, 0.5 * width * length, axis=tip2 - ankle2))
            flags.append(contacts.flags[:, columns[toe]]), joints.append(toe), used.append(columns[toe])
    if not boxes:
        raise PhysicsError("no foot or toe joint of the skeleton is among the contact joints")
    ground = ground_height(motion, contacts, (pos, rot)) if ground is None else ground
    return Support(
        np.stack(boxes, axis=1), np.stack(flags, axis=1), np.array(joints), basis, up, ground,
        steady[:, used].any(axis=1),
    )  # fmt: skip


def _tip_is_ankle(pos: np.ndarray, foot: int, tip: np.ndarray) -> bool:
    """Whether a foot's tip (T, 3) is the ankle itself on every frame: a foot without toes whose End Site has
    offset 0, or none (the foot's box from ankle to tip would be a point)."""
    return bool(np.all(quat.length(tip - pos[:, foot]) <= 1e-9 * max(float(np.abs(pos).max()), 1.0)))


# foot lengths: a knee whose median bend off the hip–ankle line (on the ground, along the facing) is this far gives
# the toes' side to a foot without toes (:func:`_stub_foot_box`)
STUB_BEND = 0.05


def _stub_foot_box(sk, pos: np.ndarray, foot: int, feet: list[int], basis: np.ndarray, heel: float, width: float):
    """(T, 4, 2) box of a foot whose skeleton ends at the ankle: the part of the foot that lies under the ankle
    whichever way the foot points, ``heel`` × L ahead of and behind the ankle and ``width`` × L wide, along the
    body's facing (normal to the line between the hips on the ground); L the foot length, :data:`.body.FOOT_PER_SHANK`
    × the shank. Without a toe the forward is the side the knees bend to (their median bend off the hip–ankle
    line, over :data:`STUB_BEND` foot lengths): the foot model's box, heel ``heel`` × L behind and the tip L ahead.
    Where the knees never bend, a box reaching only as far forward as back holds whichever side the toes are on
    (it had been the only box: CMU 02_01, 1.4×, without toes read ZMP inside 41.4 % of its contact frames, with the
    knees' side 73.2 %, with its toes 75.8 %; the jumps 30.2 → 87.0 %, 83.7 % with toes). Before, such a box was a
    point: no contact frame had the ZMP inside (a CMU walk without toes read 0 % before and after, its whole clip
    given back as retargeted, the mean ZMP distance outside infinite)."""
    hip, knee, _ = leg_chain(sk, foot)
    hips = {leg_chain(sk, f)[0] for f in feet}
    length = FOOT_PER_SHANK * float(np.median(quat.length(pos[:, foot] - pos[:, knee]))) / (1.0 + heel)  # ankle → tip
    across = to_ground(pos[:, max(hips)] - pos[:, min(hips)], basis)  # zero with one hip: the fallback below
    facing = np.stack((-across[:, 1], across[:, 0]), axis=-1)  # either way round: the box is symmetric
    size = quat.length(facing)[:, None]
    facing = np.where(size > 1e-12, facing / np.maximum(size, 1e-300), [1.0, 0.0])
    ankle2, half = to_ground(pos[:, foot], basis), np.full(len(pos), heel * length)
    bend = to_ground(pos[:, knee] - 0.5 * (pos[:, hip] + pos[:, foot]), basis)  # the knee ahead of the leg's line
    ahead = float(np.median(np.einsum("tc,tc->t", bend, facing)))
    if abs(ahead) > STUB_BEND * length:  # knees bend forward: the toes lie on that side
        front = np.sign(ahead) * facing
        return foot_boxes(ankle2, ankle2 + length * front, half, np.full(len(pos), 0.5 * width * length))
    return foot_boxes(ankle2, ankle2 + half[:, None] * facing, half, np.full(len(pos), 0.5 * width * length))


def split_ground_force(
    force: np.ndarray, zmp_point: np.ndarray, support: Support, softness: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """Ground force per support box (T, B, 3) (units of ``force``) and application points (T, B, 3) scene units.

    force: (T, 3) net ground force; zmp_point: (T, 3) scene units (NaN where undefined). See the
    module notes; the shares are 1 / (d + ε) normalised, ε = ``softness`` × the median box
    diagonal, so they change smoothly as the ZMP moves between boxes.
    """
    t, f = support.flags.shape
    q2 = to_ground(zmp_point, support.basis)  # (T, 2), NaN rows stay NaN
    boxes = support.boxes  # (T, B, 4, 2)
    defined = np.all(np.isfinite(q2), axis=-1)[:, None] & support.flags
    dist, nearest = np.zeros((t, f)), np.zeros((t, f, 2))  # read only where defined: the boxes in contact
    at = np.nonzero(defined)
    size = quat.length(boxes[:, :, 2] - boxes[:, :, 0])  # box diagonals (T, B)
    if len(at[0]):
        box = boxes[at]
        _, signed, nearest[at] = polygon_query(
            box, np.roll(box, -1, axis=-2), np.ones(box.shape[:2], dtype=bool), q2[at[0]]
        )
        point = size[at] <= 1e-12  # a box collapsed to a point (its edges, of no length, would take q as inside)
        nearest[at] = np.where(point[:, None], box[:, 0], nearest[at])
        dist[at] = np.where(point, quat.length(q2[at[0]] - box[:, 0]), np.maximum(signed, 0.0))
    soft = softness * np.median(size[support.flags]) if support.flags.any() else 1e-9
    inv = np.where(defined, 1.0 / (dist + max(soft, 1e-9)), 0.0)
    share = np.where(
        defined.any(axis=1, keepdims=True),
        inv / np.maximum(inv.sum(axis=1, keepdims=True), 1e-300),
        support.flags / np.maximum(support.flags.sum(axis=1, keepdims=True), 1),
    )
    centre = (boxes[:, :, 0] + boxes[:, :, 1] + boxes[:, :, 2] + boxes[:, :, 3]) / 4  # .mean(axis=2)'s sum, 3× faster
    point2 = np.where(defined[..., None], nearest, centre)
    points = point2 @ support.basis + support.ground * support.up
    return share[..., None] * force[:, None, :], points


class InverseDynamics(NamedTuple):
    """Joint moments (T, J, 3) N·m and forces (T, J, 3) N exerted on each body by its parent (world frame);
    at the root these are the residual. Ground forces (T, F, 3) N at points (T, F, 3) scene units."""

    torques: np.ndarray
    forces: np.ndarray
    ground_forces: np.ndarray
    ground_points: np.ndarray
    split: np.ndarray | None = None  # (T, 3) the double-support split x of :mod:`.split` (NaN elsewhere)

    @property
    def residual_force(self) -> np.ndarray:
        return self.forces[:, 0]

    @property
    def residual_moment(self) -> np.ndarray:
        return self.torques[:, 0]


def newton_euler(
    kin: Kinematics,
    body: BodyModel,
    parents: np.ndarray,
    feet: np.ndarray | None = None,
    ground_forces: np.ndarray | None = None,
    ground_points: np.ndarray | None = None,
    wrench: GroundWrench | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Backward Newton–Euler pass: joint moments and forces (T, J, 3) from body kinematics.

    feet: (F,) joints receiving ground forces (T, F, 3) N at points (T, F, 3) metres; wrench:
    :func:`ground_wrench` of ``kin`` when already computed.
    """
    w = ground_wrench(kin, body) if wrench is None or wrench.body_moments is None else wrench
    f_body, m_body = w.body_forces, w.body_moments  # each body's force and its moment about the origin
    if feet is not None and len(feet):
        f_body, m_body = f_body.copy(), m_body.copy()
        np.subtract.at(f_body, (slice(None), feet), ground_forces)
        np.subtract.at(m_body, (slice(None), feet), quat.cross(ground_points, ground_forces))
    # Each joint carries its subtree: f_j = Σ_k f_k and τ_j = Σ_k [n_k + (p_k − p_j) × f_k] over k in
    # j's subtree (n_k body k's moment about its joint p_k), i.e. Σ_k (moment of body k about the
    # origin) − p_j × f_j: two products with the ancestry matrix instead of a loop over the joints.
    below = ancestry(parents).astype(float)  # (J, J): [j, k] when k is in j's subtree
    forces = _per_joint(below, f_body)
    torques = _per_joint(below, m_body) - quat.cross(kin.joint_pos, forces)
    return torques, forces


def inverse_dynamics(
    kin: Kinematics,
    body: BodyModel,
    support: Support | None = None,
    free_fall: float = FREE_FALL,
    least: bool = True,
    split: np.ndarray | None = None,
    wrench: GroundWrench | None = None,
) -> InverseDynamics:
    """Joint torques of a clip with the ground force split between the feet in contact (module notes).

    support: from :func:`support_from` (its boxes' joints take the ground force). Without it
    the motion is treated as unsupported (all external force appears at the root). least: in
    double support the valid split whose worst torque ratio is least (:mod:`.split`), else (and
    where no split is valid: the ZMP outside the polygon or undefined) the proximity split; split: a
    nearby motion's split (:attr:`InverseDynamics.split`) held instead of solved for (the proximity
    split where it is not finite); wrench: :func:`ground_wrench` of ``kin`` when already computed.
    """
    t, j = kin.com.shape[:2]
    parents = body.skeleton.parents
    w = ground_wrench(kin, body) if wrench is None or wrench.body_moments is None else wrench
    if support is None:
        torques, forces = newton_euler(kin, body, parents, wrench=w)
        return InverseDynamics(torques, forces, np.zeros((t, 0, 3)), np.zeros((t, 0, 3)))
    p, flag = zmp_from_wrench(w.force, w.moment, body.up, support.ground * body.unit, body.mass * G, free_fall)
    force = np.where(support.any[:, None], w.force, 0.0)
    grf, points = split_ground_force(force, p / body.unit, support)
    torques, forces = newton_euler(kin, body, parents, wrench=w)  # no ground force yet: Aⱼ of the split's affine map
    below = ancestry(parents)[:, support.joints]  # (J, B): box b's joint in j's subtree
    chosen = np.full((t, 3), np.nan)
    if least:
        grf, points, chosen = least_torque_split(kin, body, support, force, p, flag, torques, below, grf, points, split)
    ground = _per_joint(below.astype(float), grf)  # (J, B) @ (T, B, 3): the ground force under each joint
    moment = _per_joint(below.astype(float), quat.cross(points * body.unit, grf))
    torques = torques - moment + quat.cross(kin.joint_pos, ground)
    return InverseDynamics(torques, forces - ground, grf, points, chosen)


def _per_joint(matrix: np.ndarray, x: np.ndarray) -> np.ndarray:
    """matrix (J, K) @ x (T, K, 3) → (T, J, 3), as one product over all frames (3× faster than T small ones),
    returned as the product lays it out (a (T, 3, J) array's view: the values are what the callers add and
    subtract, and a contiguous copy took a third of the time)."""
    return np.tensordot(x, matrix, axes=([1], [1])).transpose(0, 2, 1)


def ancestry(parents: np.ndarray) -> np.ndarray:
    """(J, J) bool: [j, k] when k is j or one of its descendants (computed once per skeleton)."""
    return _ancestry(tuple(int(p) for p in parents))


@functools.lru_cache(maxsize=32)
def _ancestry(parents: tuple) -> np.ndarray:
    n = len(parents)
    out = np.eye(n, dtype=bool)
    for k in range(n):
        j = parents[k]
        while j >= 0:
            out[j, k] = True
            j = parents[j]
    return out


def least_torque_split(
    kin: Kinematics,
    body: BodyModel,
    support: Support,
    force: np.ndarray,
    zmp_m: np.ndarray,
    free_fall: np.ndarray,
    free_torques: np.ndarray,
    below: np.ndarray,
    grf: np.ndarray,
    points: np.ndarray,
    fixed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ground forces (T, B, 3) N and points (T, B, 3) scene units: on frames whose ZMP is defined and
    inside the support polygon, single support takes the whole force at the ZMP on the leg in
    contact and double support the split of :func:`.split.least_worst_split`; other frames keep
    ``grf``, ``points`` (the proximity split). Also returns the split x (T, 3) of the double-support
    frames (:mod:`.split`; NaN on the others).

    force (T, 3) N net ground force; zmp_m (T, 3) m; free_fall (T,); free_torques (T, J, 3) N·m the
    joint moments without ground force; below (J, B) from :func:`ancestry`; fixed: a split x (T, 3)
    to hold instead of solving for one (a nearby motion's: the balance plan's smooth measures), the
    proximity split where it is not finite.
    """
    legs = leg_of_boxes(ancestry(body.skeleton.parents), support.joints)
    split = np.full((len(force), 3), np.nan)
    if legs.max(initial=-1) != 1:
        return grf, points, split
    unit, basis = body.unit, support.basis
    defined = support.any & ~free_fall
    p2 = to_ground(np.where(defined[:, None], zmp_m / unit, np.nan), basis)
    out = np.flatnonzero(defined & ~support.inside(p2))  # the ZMP outside: the polygon's point nearest to it
    if len(out):  # (project_inside's with no margin), searched on those frames alone
        p2[out] = polygon_query(support.points[out], support.end[out], support.valid[out], p2[out])[2]
        lost = out[~np.isfinite(p2[out]).all(axis=1)]  # no hull edge: the points in contact coincide, that point
        act = support.active[lost][..., None]
        p2[lost] = np.sum(support.points[lost] * act, axis=1) / np.maximum(act.sum(axis=1), 1)
    zmp_m = (p2 @ basis + support.ground * support.up) * unit
    on = np.stack([support.flags[:, legs == k].any(axis=1) for k in (0, 1)], axis=1)  # (T, 2)
    grf, points = grf.copy(), points.copy()
    first = [int(np.flatnonzero(legs == k)[0]) for k in (0, 1)]  # the box of each leg that takes its force
    for k in (0, 1):
        single = defined & on[:, k] & ~on[:, 1 - k]
        if single.any():
            grf[single] = 0.0
            grf[single, first[k]] = force[single]
            points[single, first[k]] = zmp_m[single] / unit
    double = np.flatnonzero(defined & on.all(axis=1))
    limited = np.isfinite(body.torque_limits)
    over = [below[:, legs == k].any(axis=1) for k in (0, 1)]
    joints = np.flatnonzero(limited & (over[0] ^ over[1]))
    if not len(double) or not len(joints):
        return grf, points, split
    if fixed is not None:  # held: frames without a held split keep the proximity split (nothing is solved)
        split[double] = fixed[double]
        double = double[np.isfinite(split[double, 0])]
    else:
        split[double] = _least_split(kin, body, support, force, zmp_m, free_torques, legs, over[0], joints, p2, double)
        double = double[np.isfinite(split[double]).all(axis=1)]  # a solve that broke down: the proximity split
    x = split[double]
    share = np.clip(x[:, 0], 0.0, 1.0)
    offset = x[:, 1:] * SCALE  # w_L (r_L − p), ground coordinates, m
    ground = support.ground * support.up
    grf[double] = 0.0
    f = force[double]
    for k, w, s in ((0, share, offset), (1, 1.0 - share, -offset)):
        r2 = p2[double] + np.divide(s, w[:, None], out=np.zeros_like(s), where=w[:, None] > 1e-9) / unit
        grf[double, first[k]] = w[:, None] * f
        points[double, first[k]] = r2 @ basis + ground
    return grf, points, split


def _least_split(kin, body, support, force, zmp_m, free_torques, legs, left, joints, p2, double) -> np.ndarray:
    """The split x (N, 3) of frames ``double`` (N,) (:func:`least_torque_split`)."""
    unit = body.unit
    z2 = p2[double] * unit
    rows, bounds = [], []
    for k, (normals, offsets, valid) in enumerate(support.leg_lines(legs)):
        c, d = hull_constraints(normals[double], offsets[double] * unit, valid[double], z2, left=k == 0)
        keep = np.argsort(~valid[double], axis=1, kind="stable")[:, : max(int(valid[double].sum(axis=1).max()), 1)]
        rows.append(np.take_along_axis(c, keep[..., None], axis=1)), bounds.append(np.take_along_axis(d, keep, axis=1))
    rows.append(np.broadcast_to(np.array([[-1.0, 0, 0], [1.0, 0, 0]]), (len(double), 2, 3)))
    bounds.append(np.broadcast_to(np.array([0.0, 1.0]), (len(double), 2)))
    a, b = torque_map(
        free_torques[double][:, joints], kin.joint_pos[double][:, joints], force[double], zmp_m[double],
        support.basis, left[joints],
    )  # fmt: skip
    return least_worst_split(a, b, body.torque_limits[joints], np.concatenate(rows, 1), np.concatenate(bounds, 1))


def torque_ratios(torques: np.ndarray, body: BodyModel) -> np.ndarray:
    """|τⱼ| / limitⱼ (T, J); 0 for joints without a limit."""
    limits = body.torque_limits
    ratio = quat.length(torques) / np.where(np.isfinite(limits), limits, np.inf)
    return np.where(np.isfinite(limits), ratio, 0.0)
