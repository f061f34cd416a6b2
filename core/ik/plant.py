"""Foot planting: pin feet to their contact anchors with two-link IK, blended in and out.

During a contact span the foot joint is moved onto the span's anchor. Around it the offset
fades out like a displacement map: at a flight frame t the offset is
w_prev·d(last contact frame) + w_next·d(next contact frame), with
w = smoothstep(1 − gap/(blend + 1)) of the distance in frames to that contact (weights
renormalised to sum ≤ 1 when two contacts are close), and the IK result is slerped in with
the same weight, so nothing pops at contact edges. Legs are solved one after another, each
on the forward kinematics of the motion already changed by the previous one.

Across a short gap (at most ``blend`` frames between two contacts) the offset passes from the one
contact's to the next's instead, min(1, w_prev + w_next)·((1 − m)·d(prev) + m·d(next)), m the
smoothstep of the share of the gap behind: renormalised weights jumped at the gap's edges (a
7-frame gap with the 0.2 s blend at 120 fps: 45 % of the difference between the two offsets in one
frame, a foot popping between two anchors). :func:`stand_feet` (the retarget's) blends so;
:func:`plant_feet` (the physics' and the clean-up's) still renormalises: with the other blend the
physics on CMU 131_03 (the hop, 1.4× copy) ended with 26 frames over a torque limit instead of 22,
the ZMP inside on 98.0 % of contact frames instead of 98.2 %.

A fixed anchor is often out of reach at the ends of a real stance: the leg is nearly
straight at heel strike, and the ankle rolls forward and up before toe-off while the hip
keeps moving. ``out_of_reach`` chooses what gives, for targets farther than
r = (1 − 1.5·softness)·reach from the hip (i.e. in or beyond the soft-clamp zone):

- ``"lift"`` (default): the target rises along up by the least amount that puts it at
  distance r, as a heel lifts before toe-off; it keeps its horizontal place, so nothing
  slides. On CMU walks the ankle rises by about 1 % of the body size on average over the
  contact frames, at most 7 % in the last frames before toe-off.
- ``"drop"``: the pelvis is lowered along −up instead by the least amount that brings
  every planted target within r, capped at ``max_drop`` body sizes and passed through a
  smooth upper envelope (running maximum, then moving average, over the blend window);
  feet not in contact are held at their original world positions by the same IK. The
  body keeps its foot heights but walks lower (about 4 % of the body size on CMU walks).
- ``None``: nothing; the soft clamp stops the foot short of its anchor along the
  hip→anchor line, so some sliding remains.

Where a leg is nearly straight its own bend plane is noise, and IK that keeps it swings the knee
sideways from one frame to the next (CMU 05_01 scaled 1.4×: planting added 5.6 % to the clip's
jerk, nearly all at the knees). The IK's pole (:func:`hinge_pole`) follows the leg's own plane
where it is bent and a hinge fixed in the thigh where it is straight (planting then takes 3 % off
that clip's jerk).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts, contact_spans, moving_average
from ..kinematics import end_site_positions, forward_kinematics
from ..limbs import limb_chain
from ..motion import Motion
from ..skeleton import Skeleton, rest_positions
from .common import (
    align_hemisphere,
    is_ancestor,
    local_from_world,
    nearest_valid,
    parent_world_rotations,
    smoothstep,
    unit,
)
from .two_link import DEFAULT_SOFTNESS, Turns, apply_two_link, first_turns, solve_two_link

BLEND = 0.2  # seconds of fade on each side of a contact (how far planting spreads a change)
HINGE_BENT = 0.02  # sin of the bend below which a leg's knee follows its thigh's hinge more than its own plane
FEW_BENT = 0.05  # share of frames a leg may bend past HINGE_BENT on and still have no plane to read (an outlier frame)
STEADY = 0.05  # seconds either side over which a jittering foot planted on its toe alone has its turn averaged
JITTER = 1000.0  # rad/s²: a foot's angular acceleration above which its turn counts as a capture's jitter


def blended_offsets(
    positions: np.ndarray, flags: np.ndarray, anchors: np.ndarray, blend: int, through: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (T, 3) that move a joint onto its anchors, and IK weights (T,) in [0, 1].

    positions: (T, 3) the joint's world positions; flags: (T,) contact; anchors: (T, 3),
    read only in contact frames; blend: fade length in frames on each side of a contact;
    through: across a gap of at most ``blend`` frames the offset passes from one contact's to
    the next's (module notes), else the two weights are renormalised there.
    """
    n = len(flags)
    frames = np.arange(n)
    d = np.where(flags[:, None], anchors - positions, 0.0)
    prev = np.maximum.accumulate(np.where(flags, frames, -1))
    nxt = np.minimum.accumulate(np.where(flags, frames, n)[::-1])[::-1]
    w_prev = np.where(prev >= 0, smoothstep(1.0 - (frames - prev) / (blend + 1.0)), 0.0)
    w_next = np.where(nxt < n, smoothstep(1.0 - (nxt - frames) / (blend + 1.0)), 0.0)
    total = w_prev + w_next
    scale = np.where(total > 1.0, 1.0 / np.maximum(total, 1e-300), 1.0)
    w_prev, w_next = w_prev * scale, w_next * scale
    # a short gap (at most ``blend`` frames): the offset passes from one contact's to the next's along the gap
    short = through & (prev >= 0) & (nxt < n) & (nxt - prev - 1 <= blend)
    mix = smoothstep((frames - prev) / np.maximum(nxt - prev, 1))
    amount = np.minimum(total, 1.0)
    w_prev = np.where(short, amount * (1.0 - mix), w_prev)
    w_next = np.where(short, amount * mix, w_next)
    offset = w_prev[:, None] * d[np.maximum(prev, 0)] + w_next[:, None] * d[np.minimum(nxt, n - 1)]
    weight = np.where(flags, 1.0, np.minimum(total, 1.0))
    return np.where(flags[:, None], d, offset), weight


def lift_to_reach(hip: np.ndarray, target: np.ndarray, reach: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Targets (T, 3) raised along ``up`` by the least amount that puts them within ``reach`` of the hip.

    hip, target: (T, 3); reach: (T,); up: (3,) unit vector. Targets already within reach are
    unchanged; a target more than ``reach`` away horizontally goes up to the hip's height
    (the closest it can get without sliding; the soft clamp then stops it short).
    """
    v = target - hip
    below = -(v @ up)
    horizontal_sq = quat.inner(v, v) - below**2
    allowed = np.sqrt(np.maximum(reach**2 - horizontal_sq, 0.0))  # vertical distance at full reach
    lift = np.where(quat.inner(v, v) > reach**2, np.maximum(below - allowed, 0.0), 0.0)
    return target + lift[:, None] * up


def required_drop(hip: np.ndarray, target: np.ndarray, reach: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Least δ ≥ 0 (T,) with |target − (hip − δ·up)| ≤ reach; 0 where lowering cannot help.

    hip, target: (T, 3); reach: (T,) allowed distance; up: (3,) unit vector.
    """
    v = target - hip
    a = v @ up
    excess = quat.inner(v, v) - reach**2
    disc = a * a - excess
    drop = -a - np.sqrt(np.maximum(disc, 0.0))
    return np.where((excess > 0) & (disc >= 0), np.maximum(drop, 0.0), 0.0)


def upper_envelope(x: np.ndarray, window: int) -> np.ndarray:
    """A smooth curve (T,) never below x (T,): running maximum, then moving average, over 2·window + 1 frames."""
    if window < 1 or len(x) < 2:
        return x
    padded = np.pad(x, window, mode="edge")
    view = np.lib.stride_tricks.sliding_window_view(padded, 2 * window + 1)
    return moving_average(view.max(axis=-1), 2 * window + 1)


def placement_joint(skeleton: Skeleton, legs: list[tuple[int, int, int]]) -> int:
    """The joint that places the body: the nearest common ancestor of the legs' upper joints
    that has animated position channels (the root in CMU files, ``Hips`` in Bandai's)."""
    j = legs[0][0]
    while j >= 0 and not all(is_ancestor(skeleton, j, leg[0]) for leg in legs):
        j = int(skeleton.parents[j])
    moving = skeleton.has_position_channels
    while j >= 0 and not moving[j]:
        j = int(skeleton.parents[j])
    return max(j, 0)


def _lower_root(motion: Motion, legs, targets, weights, up: np.ndarray, softness: float, frames: int, cap: float):
    """Lower the placement joint (by at most ``cap``) so the planted targets come within reach;
    returns (motion, drop (T,))."""
    pos, rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    drops = [
        weight * required_drop(pos[:, leg[0]], target, _limb_reach(pos, leg, softness), up)
        for leg, target, weight in zip(legs, targets, weights)
    ]
    drop = upper_envelope(np.minimum(np.max(drops, axis=0), cap), frames)
    out = motion.copy()
    root = placement_joint(motion.skeleton, legs)
    parent = motion.skeleton.parents[root]
    shift = -drop[:, None] * up
    if parent >= 0:
        shift = quat.rotate(quat.conjugate(rot[:, parent]), shift)
    out.translations[:, root] += shift
    return out, drop


def hinge_pole(
    pos: np.ndarray,
    rot: np.ndarray,
    leg: tuple[int, int, int],
    target: np.ndarray | None = None,
    softness: float = DEFAULT_SOFTNESS,
    bent: float = HINGE_BENT,
    turns: Turns | None = None,
) -> np.ndarray | None:
    """Bend directions (T, 3) for two-link IK: the plane the IK would keep where the leg is clearly
    bent, the plane of a hinge fixed in the thigh where it is nearly straight, blended smoothly.

    Where a leg is nearly straight its own bend plane is noise (a CMU leg scaled up often is), and
    IK that keeps it swings the knee sideways from one frame to the next. The hinge axis is the mean
    of the bend normals e1 × e2 in the upper joint's frame (weighted by how bent each frame is); the
    pole is sin θ (the bend of the leg as it is) times the unit (e1 + e2) × (e1 × e2) of the leg
    solved without a pole (towards its knee; with ``target`` (T, 3) None, of the leg as it is) plus
    ``bent`` times the hinge's: where the leg is bent the IK's result is what it was without a
    pole. None: no frame is bent.
    pos, rot: world positions (T, J, 3) and orientations (T, J, 4); leg: (upper, mid, end); turns: the
    :func:`~core.ik.two_link.first_turns` of the leg to ``target``, if already made.
    """
    upper, mid, end = leg
    a, e1, e2 = pos[:, upper], pos[:, mid] - pos[:, upper], pos[:, end] - pos[:, mid]
    local = quat.rotate(quat.conjugate(rot[:, upper]), quat.cross(e1, e2)).sum(axis=0)
    size = np.linalg.norm(local)
    lengths = quat.length(e1) * quat.length(e2)
    if not size > 1e-9 * np.sum(lengths):
        return None
    axis = quat.rotate(rot[:, upper], np.broadcast_to(local / size, e1.shape))
    sine = quat.length(quat.cross(e1, e2)) / np.maximum(lengths, 1e-300)  # of the leg as it is
    if target is not None:  # the pose two-link IK gives without a pole, the hinge carried along
        d_upper, _, reached = solve_two_link(a, pos[:, mid], pos[:, end], target, None, softness, turns, rot[:, upper])
        e1 = quat.rotate(d_upper, e1)
        e2 = reached - a - e1
        axis = quat.rotate(d_upper, axis)
    own = unit(quat.cross(e1 + e2, quat.cross(e1, e2)))[0]
    hinge = unit(quat.cross(e1 + e2, axis))[0]
    return sine[:, None] * own + bent * hinge


def foot_direction(
    skeleton: Skeleton, pos: np.ndarray, rot: np.ndarray, ankle: int, toe: int | None = None
) -> np.ndarray | None:
    """(T, 3) from the ankle to the point of its foot farthest from it in the rest pose (joint or End Site: the toe's
    tip, not a heel helper), below ``toe`` when the toe is known: the way the foot points. None with nothing below
    the ankle. pos, rot: world positions (T, J, 3) and orientations (T, J, 4)."""
    below = skeleton.subtree(ankle if toe is None else toe)
    below[ankle] = False
    rest = rest_positions(skeleton, include_end_sites=True)
    ends = np.flatnonzero(below[skeleton.end_site_parents])
    joints = np.flatnonzero(below)
    reach = np.linalg.norm(rest[np.concatenate((joints, skeleton.n_joints + ends))] - rest[ankle], axis=1)
    if not len(reach):
        return None
    far = int(np.argmax(reach))
    if far < len(joints):
        return pos[:, joints[far]] - pos[:, ankle]
    e = ends[far - len(joints)]
    offset = np.broadcast_to(skeleton.end_site_offsets[e], pos[:, ankle].shape)
    parent = skeleton.end_site_parents[e]
    return pos[:, parent] + quat.rotate(rot[:, parent], offset) - pos[:, ankle]


def straight_leg_pole(
    pos: np.ndarray, leg: tuple[int, int, int], forward: Callable[[], np.ndarray | None], bent: float = HINGE_BENT
) -> np.ndarray | None:
    """Where a leg bends under ``bent`` on all but a few frames (:data:`FEW_BENT`: a capture that locks the knee
    straight, an idle clip, a rig whose rest pose hyperextends it), its knee's side (T, 3): the way its foot points
    (``forward()``, :func:`foot_direction`, called only then), a frame whose foot runs along the leg (pointed) taking
    the nearest frame's; None for a leg with a bend to read (:func:`hinge_pole`) or no foot across it."""
    upper, mid, end = leg
    e1, e2 = pos[:, mid] - pos[:, upper], pos[:, end] - pos[:, mid]
    sine = quat.length(quat.cross(e1, e2)) / np.maximum(quat.length(e1) * quat.length(e2), 1e-300)
    ahead = forward() if np.mean(sine > bent) < FEW_BENT else None
    if ahead is None:
        return None
    line = unit(e1 + e2)[0]
    across = quat.length(ahead - quat.inner(ahead, line)[..., None] * line) > 0.25 * quat.length(ahead)
    return ahead[nearest_valid(across)] if across.any() else None


def _knee_turns(
    world: tuple[np.ndarray, np.ndarray],
    leg: tuple[int, int, int],
    target: np.ndarray,
    softness: float,
    forward: Callable[[], np.ndarray | None],
) -> tuple[np.ndarray | None, Turns]:
    """Planting's pole and first turns for one leg (T, 3), :class:`~core.ik.two_link.Turns`: a leg with no bend to
    read bends every frame in the plane towards its foot (:func:`straight_leg_pole`; its own plane is noise or a
    hyperextension, and a few frames' bends do not make a plane: bent in their own and twisted to the foot, a frame
    hyperextended 1.4° rolled its thigh over); any other its own plane, the thigh's hinge where nearly straight
    (:func:`hinge_pole`)."""
    pos, rot = world
    ends = tuple(pos[:, j] for j in leg)
    pole = straight_leg_pole(pos, leg, forward)
    if pole is not None:
        return pole, first_turns(*ends, target, pole, softness, rot[:, leg[0]], straight=np.inf)  # every frame
    turns = first_turns(*ends, target, None, softness, rot[:, leg[0]])
    return hinge_pole(pos, rot, leg, target, softness, turns=turns), turns


def _limb_reach(pos: np.ndarray, leg: tuple[int, int, int], softness: float) -> np.ndarray:
    """(T,) distance from the upper joint the end can reach exactly (outside the soft zone)."""
    upper, mid, end = leg
    reach = quat.length(pos[:, mid] - pos[:, upper]) + quat.length(pos[:, end] - pos[:, mid])
    return (1.0 - 1.5 * softness) * reach


def plant_feet(
    motion: Motion,
    contacts: Contacts,
    legs: list[tuple[int, int, int]] | None = None,
    blend: float = BLEND,
    keep_foot_orientation: bool = True,
    out_of_reach: str | None = "lift",
    max_drop: float = 0.05,
    softness: float = DEFAULT_SOFTNESS,
    hinge: bool = True,
    world: tuple[np.ndarray, np.ndarray] | None = None,
    with_world: bool = False,
    in_place: bool = False,
) -> Motion | tuple[Motion, tuple[np.ndarray, np.ndarray]]:
    """A copy of ``motion`` whose contact joints stay on their anchors while in contact.

    contacts: from :func:`core.contacts.detect_contacts` (flags, anchors, up axis per joint).
    legs: (upper, mid, end) per contact joint, default :func:`core.limbs.limb_chain` of
    each (hip, knee, ankle). blend: fade time in seconds on each side of a contact.
    keep_foot_orientation: keep each foot's world orientation as in ``motion``.
    out_of_reach: "lift", "drop" or None, what gives where an anchor is out of reach (see
    the module notes); max_drop: the cap of "drop", in body sizes (:meth:`Skeleton.size`).
    hinge: bend nearly straight legs in their thigh's hinge plane (:func:`hinge_pole`), not their own.
    world: FK of ``motion`` (positions (T, J, 3), orientations (T, J, 4)) if already known; with_world: also
    return the FK of the result, (motion, (positions, orientations)) (only the legs' joints computed anew).
    in_place: turn the legs of ``motion`` itself and return it (a caller's own temporary, e.g. a batch of copies).
    """
    if out_of_reach not in ("lift", "drop", None):
        raise ValueError(f"out_of_reach must be 'lift', 'drop' or None, got {out_of_reach!r}")
    legs = [limb_chain(motion.skeleton, int(j)) for j in contacts.joints] if legs is None else legs
    frames = max(1, round(blend * motion.fps))
    if world is None:
        world = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    pos = world[0]
    plans = [
        blended_offsets(pos[:, leg[2]], contacts.flags[:, i], contacts.anchors[:, i], frames, through=False)
        for i, leg in enumerate(legs)
    ]
    targets = [pos[:, leg[2]] + offset for leg, (offset, _) in zip(legs, plans)]
    weights = [weight for _, weight in plans]
    out = motion if in_place else motion.copy()
    if out_of_reach == "lift":
        targets = [
            lift_to_reach(pos[:, leg[0]], target, _limb_reach(pos, leg, softness), contacts.up)
            for leg, target in zip(legs, targets)
        ]
    elif out_of_reach == "drop":
        cap = max_drop * motion.skeleton.size()
        out, drop = _lower_root(motion, legs, targets, weights, contacts.up, softness, frames, cap)
        # Where the pelvis moved, the other frames hold the feet where they were (weight → 1 as drop grows).
        scale = 0.01 * motion.skeleton.size()
        weights = [np.maximum(w, smoothstep(drop / scale)) for w in weights]
    # The chains read world transforms of their joints and ancestors only: one leg's FK serves the next
    # unless a joint solved before (its subtree) is among them (same values as a fresh FK of ``out``).
    stale = None if out_of_reach == "drop" else np.zeros(motion.skeleton.n_joints, dtype=bool)  # "drop" moved the root
    for (upper, mid, end), target, weight in zip(legs, targets, weights):
        if stale is None or stale[end]:
            world = forward_kinematics(out.skeleton, out.translations, out.rotations)
            stale = np.zeros(motion.skeleton.n_joints, dtype=bool)
        stale |= motion.skeleton.subtree(upper)
        pole, turns = None, None
        if hinge:
            ahead = partial(foot_direction, out.skeleton, *world, end)
            pole, turns = _knee_turns(world, (upper, mid, end), target, softness, ahead)
        # the solve's first turns are the pole's (the pole decides only a straight leg)
        options = {"keep_end_orientation": keep_foot_orientation, "softness": softness, "world": world, "pole": pole,
                   "turns": turns}  # fmt: skip
        out = apply_two_link(out, upper, mid, end, target, weight, in_place=True, **options)  # ``out``: its own copy
    if not with_world:
        return out
    if stale is None:
        return out, forward_kinematics(out.skeleton, out.translations, out.rotations)
    return out, forward_kinematics(out.skeleton, out.translations, out.rotations, known=(*world, stale))


class FootPlant(NamedTuple):
    """One foot to stand with :func:`stand_feet`.

    leg: (upper, mid, ankle) joints; toe: the toe joint below the ankle (None without one);
    ankle_flags, toe_flags: (T,) contact (toe_flags None without a toe); ankle_anchors,
    toe_anchors: (T, 3) world positions each should keep while in contact (read only there);
    joints, ends: (n,), (e,) the joints and End Sites below the ankle that must stay above
    the floor (the ankle and toe included).
    """

    leg: tuple[int, int, int]
    toe: int | None
    ankle_flags: np.ndarray
    ankle_anchors: np.ndarray
    toe_flags: np.ndarray | None
    toe_anchors: np.ndarray | None
    joints: np.ndarray
    ends: np.ndarray


def stand_feet(
    motion: Motion,
    feet: list[FootPlant],
    floor: float,
    up: np.ndarray,
    blend: float = BLEND,
    softness: float = DEFAULT_SOFTNESS,
    max_drop: float = 0.1,
) -> Motion:
    """A copy of ``motion`` whose ankles and toes stay on their anchors while in contact and
    whose feet never go through the floor (height ``floor`` along the unit ``up``).

    Per foot, vectorised over frames (the legs one after another):

    1. (the anchors are given so the foot can hold ankle and toe: :func:`foot_anchors`)
    2. while both are in contact the foot turns (shortest arc about the ankle) so the toe
       points at its anchor; the turn fades out over ``blend`` seconds as a displacement;
    3. ankle goal: its anchor while in contact, else, while only the toe is, the point that
       puts the toe on its anchor with the foot so turned, the foot's turn averaged over ``STEADY``
       either side (:func:`steady_rotations`: the ankle hangs from the planted toe, so a capture's
       jittering foot shook the whole leg: CMU 05_02's left foot turns up to 25° a frame while its ankle
       holds still, and the 1.4× copy's knee moved 4.5 % of the body size a frame, the source's 0.3 %;
       averaged where it jitters, 0.5 %); blended in and out like
       :func:`plant_feet`, raised where out of reach (:func:`lift_to_reach`);
    4. floor clamp: while the ankle alone is planted the foot rolls up about it (heel down) by
       the least angle that keeps its points above the floor; the ankle goal then rises by the
       least amount that keeps the toe and every other joint of the foot above it; while the
       toe alone is planted the foot turns about the toe instead (the heel rises) by the least
       angle that keeps the ankle and the rest of the foot above the floor; a toe in contact
       lies flat, straight ahead of the foot (faded in and out like the rest); then the toe
       bends about the foot's lateral axis by the least angle that lifts the joints and End
       Sites below it to the floor; where a planted heel's toes are still under it the whole
       foot rolls up about the ankle, and the ankle rises for what remains;
    5. where a goal is out of the leg's reach the pelvis is lowered as in :func:`plant_feet`'s
       ``"drop"`` (at most ``max_drop`` body sizes, smooth envelope); while the toe alone is
       planted the foot then turns about the toe by the least angle about its lateral axis that
       brings the ankle within reach (the heel rises, the toe stays; faded out over ``blend``
       seconds), and where even that cannot reach, the foot slides horizontally towards the
       hip by the least amount that does (a toe pushing off sliding a little rather than
       floating; faded the same way); what is still out of reach rises (:func:`lift_to_reach`); two-link IK to
       the goal with the foot's new orientation, the knee in the thigh's hinge plane where the leg is nearly
       straight (:func:`hinge_pole`: a source leg locked straight has no bend plane of its own, and CMU 05_02's
       left knee swung 90° sideways in one frame); the toe keeps its world orientation (plus the bend).
    """
    frames = max(1, round(blend * motion.fps))
    up = np.asarray(up, dtype=float)
    world = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    goals = [_foot_goal(motion, world, foot, float(floor), up, frames) for foot in feet]
    toes = [_toe_offset(world, foot, up) for foot in feet]  # (toe in the foot's frame, lateral axis) or None
    out, drop = motion, np.zeros(motion.n_frames)
    if goals and max_drop > 0:
        legs = [foot.leg for foot in feet]
        cap = max_drop * motion.skeleton.size()
        out, drop = _lower_root(motion, legs, [g[0] for g in goals], [g[3] for g in goals], up, softness, frames, cap)
        world = forward_kinematics(out.skeleton, out.translations, out.rotations)
    pos, _ = world
    sk = motion.skeleton
    for foot, (target, foot_rot, toe_world, _), toe in zip(feet, goals, toes):  # one leg's IK leaves the other's FK
        upper, mid, ankle = foot.leg
        reach = _limb_reach(pos, foot.leg, softness)
        if toe is not None:  # a planted toe out of reach: the heel rises about it, as at toe-off
            target, foot_rot = _tip_toe(pos[:, upper], target, foot_rot, reach, foot, toe, frames)
            target = _slide_to_reach(pos[:, upper], target, reach, up, foot.toe_flags & ~foot.ankle_flags, frames)
        target = lift_to_reach(pos[:, upper], target, reach, up)
        # a straight source leg's own plane is noise; the pole's first turns are the solve's, as in plant_feet
        pole, turns = _knee_turns(
            world, foot.leg, target, softness, partial(foot_direction, sk, *world, ankle, foot.toe)
        )
        out = apply_two_link(out, upper, mid, ankle, target, 1.0, end_orientation=foot_rot, softness=softness,
                             world=world, pole=pole, turns=turns)  # fmt: skip
        if toe_world is not None:
            if sk.parents[foot.toe] == ankle:  # the foot's world orientation is now foot_rot
                parent = foot_rot[:, None]
            else:
                parent = parent_world_rotations(
                    sk, forward_kinematics(sk, out.translations, out.rotations)[1], [foot.toe]
                )
            new = local_from_world(out.skeleton, [foot.toe], toe_world[:, None], parent)[:, 0]
            out.rotations[:, foot.toe] = align_hemisphere(new[:, None], motion.rotations[:, [foot.toe]])[:, 0]
    return out


def foot_anchors(
    ankle_flags: np.ndarray,
    ankle_anchors: np.ndarray,
    toe_flags: np.ndarray,
    toe_anchors: np.ndarray,
    length: float,
    up: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(ankle anchors, toe anchors) (T, 3) a foot can hold together; NaN outside contact.

    A toe contact span overlapping ankle spans gets its anchor at ``length`` (the foot's ankle →
    toe distance) from the first of them's ankle anchor, at its own height and towards its given
    anchor (the heading of the source's foot); a later ankle span under the same toe contact (the
    foot turning on its toes) gets its anchor at ``length`` from that toe anchor, towards its
    given one. So ankle and toe can both hold still whatever the proportions of the two feet;
    other spans keep their anchors. flags: (T,) bool; anchors: (T, 3), read in contact frames;
    up: (3,) unit vector.
    """
    ankle = np.where(ankle_flags[:, None], ankle_anchors, np.nan)
    toe = np.where(toe_flags[:, None], toe_anchors, np.nan)
    ankle_spans = contact_spans(ankle_flags)
    defined: set[int] = set()  # ankle spans a toe anchor was placed from: they keep their anchor
    for start, stop in contact_spans(toe_flags) if len(ankle_spans) else ():
        overlap = np.minimum(ankle_spans[:, 1], stop) - np.maximum(ankle_spans[:, 0], start)
        under = np.flatnonzero(overlap > 0)
        if not len(under):
            continue
        first = int(under[0])
        defined.add(first)
        toe[start:stop] = _at_length(ankle[ankle_spans[first, 0]], toe_anchors[start], length, up)
        for k in under[1:]:
            if int(k) not in defined:
                a, b = ankle_spans[k]
                ankle[a:b] = _at_length(toe[start], ankle_anchors[a], length, up)
    return ankle, toe


def _at_length(origin: np.ndarray, given: np.ndarray, length: float, up: np.ndarray) -> np.ndarray:
    """(3,) the point at ``length`` from ``origin`` at ``given``'s height, towards ``given`` horizontally."""
    rise = (given - origin) @ up
    flat = (given - origin) - rise * up
    n = np.linalg.norm(flat)
    if n <= 1e-12 * max(length, 1e-300):
        return given
    return origin + np.sqrt(max(length**2 - rise**2, 0.0)) * flat / n + rise * up


def steady_rotations(rotations: np.ndarray, where: np.ndarray, half: int, fps: float) -> np.ndarray:
    """Rotations (T, 4) whose jittering frames among ``where`` (T,) are the normalised mean of the rotations within
    ``half`` frames (each turned into the frame's own hemisphere first). Jittering: the rotation's angular
    acceleration (second difference of the frame-to-frame turns, rad/s²) above ``JITTER`` there or on a neighbour
    (a capture's foot flicking back and forth: CMU 05_02's left foot, 20° a frame at 120 fps, 10³-10⁴ rad/s²; CMU
    02_01's feet walking, median 64-79, 99th percentile about 420): a smooth turn is left as it is."""
    out = rotations.copy()
    q = quat.multiply(rotations[1:], quat.conjugate(rotations[:-1]))  # (T - 1, 4) frame-to-frame turns, world
    step = quat.log(np.where(q[:, :1] < 0.0, -q, q)) * 2.0  # rotation vectors, radians a frame
    accel = np.zeros(len(rotations))
    accel[1:-1] = quat.length(np.diff(step, axis=0)) * fps**2
    shaking = accel > JITTER
    shaking[1:] |= shaking[:-1]
    shaking[:-1] |= shaking[1:]
    frames = np.flatnonzero(where & shaking)
    if not len(frames):
        return out
    window = np.clip(frames[:, None] + np.arange(-half, half + 1)[None], 0, len(rotations) - 1)  # (F, W)
    near = rotations[window]  # (F, W, 4)
    near = np.where((np.sum(near * rotations[frames][:, None], axis=-1) < 0.0)[..., None], -near, near)
    out[frames] = unit(near.sum(axis=1))[0]
    return out


def _foot_goal(motion: Motion, world, foot: FootPlant, floor: float, up: np.ndarray, frames: int):
    """(ankle goal (T, 3), foot orientation (T, 4), toe orientation (T, 4) or None, contact weight (T,))
    of one foot (steps 1–4 of :func:`stand_feet`); world: FK of ``motion``."""
    sk = motion.skeleton
    pos, rot = world
    upper, mid, ankle = foot.leg
    toe = foot.toe if foot.toe_flags is not None else None
    turn = np.broadcast_to(quat.identity(), (motion.n_frames, 4))
    goal, contact = np.where(foot.ankle_flags[:, None], foot.ankle_anchors, 0.0), foot.ankle_flags
    steady = rot[:, ankle]  # the foot's turn; where the toe alone is planted, without the capture's jitter
    if toe is not None:
        toe_only = foot.toe_flags & ~foot.ankle_flags
        steady = steady_rotations(steady, toe_only, max(1, round(STEADY * motion.fps)), motion.fps)
        v_local = quat.rotate(quat.conjugate(rot[:, ankle]), pos[:, toe] - pos[:, ankle])
        toe_goal = foot.toe_anchors
        flat = foot.ankle_flags & foot.toe_flags
        v_world = pos[:, toe] - pos[:, ankle]
        wanted = np.where(flat[:, None], toe_goal - foot.ankle_anchors, v_world)
        logs = np.where(flat[:, None], quat.log(quat.between(v_world, wanted)), 0.0)
        turn = quat.exp(blended_offsets(np.zeros_like(logs), flat, logs, frames)[0])
        foot_rot = quat.multiply(turn, steady)
        goal = np.where(toe_only[:, None], toe_goal - quat.rotate(foot_rot, v_local), goal)
        contact = foot.ankle_flags | foot.toe_flags
    offset, weight = blended_offsets(pos[:, ankle], contact, goal, frames)
    target = pos[:, ankle] + offset
    foot_rot = quat.multiply(turn, steady)
    # floor clamp (step 4): the foot's points where the ankle goes, the toe's subtree riding on the toe
    below_toe = sk.subtree(toe) if toe is not None else np.zeros(sk.n_joints, bool)
    rigid = [j for j in foot.joints if not below_toe[j] and j != ankle] + ([toe] if toe is not None else [])
    rel = quat.rotate(quat.conjugate(rot[:, ankle])[:, None], pos[:, rigid] - pos[:, ankle][:, None])
    axis = _lateral_axis(pos, rot, foot, up)
    # an ankle planted alone: the foot rolls up about it (a heel on the floor, the toes up)
    heel = foot.ankle_flags & ~(foot.toe_flags if foot.toe_flags is not None else False)
    if len(rigid):
        k = unit(quat.rotate(foot_rot, np.broadcast_to(axis, (len(pos), 3))))[0]
        angle = _turn_to_floor(quat.rotate(foot_rot[:, None], rel), target @ up, k, floor, up, frames, heel)
        if foot.toe_flags is not None:  # a planted toe holds the foot's turn
            angle = np.where(foot.toe_flags, 0.0, angle)
        if angle.any():
            foot_rot = quat.multiply(quat.from_axis_angle(k, angle), foot_rot)
        heights = quat.rotate(foot_rot[:, None], rel) @ up + (target @ up)[:, None]
        target = target + np.maximum(floor - heights.min(axis=1), 0.0)[:, None] * up
    toe_world = None
    if toe is not None and (foot.toe_flags & ~foot.ankle_flags).any():
        # a toe planted alone: the heel rises about it by the least angle that keeps the ankle and
        # the rest of the foot above the floor (the toe stays where it is)
        ahead = quat.rotate(foot_rot, rel[:, -1])
        points = np.concatenate((-ahead[:, None], quat.rotate(foot_rot[:, None], rel[:, :-1]) - ahead[:, None]), 1)
        k = unit(quat.rotate(foot_rot, np.broadcast_to(axis, (len(pos), 3))))[0]
        toe_pos = target + ahead
        angle = _turn_to_floor(points, toe_pos @ up, k, floor, up, frames, foot.toe_flags & ~foot.ankle_flags)
        if angle.any():
            turn = quat.from_axis_angle(k, angle)
            foot_rot, target = quat.multiply(turn, foot_rot), toe_pos - quat.rotate(turn, ahead)
    if toe is not None:
        toe_pos = target + quat.rotate(foot_rot, rel[:, -1])
        toe_world = rot[:, toe]
        tips = _toe_points(sk, pos, rot, foot, toe)
        if tips.shape[1] and foot.toe_flags.any():  # a toe in contact lies flat, straight ahead of the foot
            k = unit(quat.rotate(foot_rot, np.broadcast_to(axis, (len(pos), 3))))[0]
            ahead = unit(np.cross(up, k))[0]  # the foot's heading (steady even when the foot stands on its toes)
            lay = quat.log(quat.between(unit(tips.mean(axis=1))[0], ahead))
            lay = blended_offsets(
                np.zeros_like(lay), foot.toe_flags, np.where(foot.toe_flags[:, None], lay, 0.0), frames
            )[0]
            lay = quat.exp(lay)
            toe_world, tips = quat.multiply(lay, toe_world), quat.rotate(lay[:, None], tips)
        if tips.shape[1]:
            k = unit(quat.rotate(foot_rot, np.broadcast_to(axis, (len(pos), 3))))[0]
            angle = _turn_to_floor(tips, toe_pos @ up, k, floor, up, frames)
            if angle.any():
                bend = quat.from_axis_angle(k, angle)
                toe_world, tips = quat.multiply(bend, toe_world), quat.rotate(bend[:, None], tips)
            dip = floor - (toe_pos @ up + (tips @ up).min(axis=1))
            stuck = heel & (dip > 0)
            if stuck.any():  # a planted heel whose toes the bend could not lift: the whole foot rolls up about it
                k = unit(quat.rotate(foot_rot, np.broadcast_to(axis, (len(pos), 3))))[0]
                ahead = toe_pos - target
                points = np.concatenate((quat.rotate(foot_rot[:, None], rel), ahead[:, None] + tips), axis=1)
                angle = np.where(foot.toe_flags, 0.0, _turn_to_floor(points, target @ up, k, floor, up, frames, stuck))
                roll = quat.from_axis_angle(k, angle)
                foot_rot, toe_world = quat.multiply(roll, foot_rot), quat.multiply(roll, toe_world)
                tips, toe_pos = quat.rotate(roll[:, None], tips), target + quat.rotate(roll, ahead)
                heights = quat.rotate(foot_rot[:, None], rel) @ up + (target @ up)[:, None]
                dip = np.maximum(floor - heights.min(axis=1), floor - (toe_pos @ up + (tips @ up).min(axis=1)))
            target = (
                target + np.maximum(dip, 0.0)[:, None] * up
            )  # what the bend and roll could not lift, the ankle does
    return target, foot_rot, toe_world, weight


def _lateral_axis(pos: np.ndarray, rot: np.ndarray, foot: FootPlant, up: np.ndarray) -> np.ndarray:
    """(3,) the foot's lateral axis in its own frame: the mean over its flat frames (else its toe's
    contact frames, else all) of forward × up, forward the ankle → toe line (without a toe: to the
    mean of the other points of the foot; with none, the foot's own X axis)."""
    ankle = foot.leg[2]
    ahead = foot.toe if foot.toe is not None else next((int(j) for j in foot.joints if j != ankle), None)
    if ahead is None:
        return np.array([1.0, 0.0, 0.0])
    local = unit(quat.rotate(quat.conjugate(rot[:, ankle]), np.cross(pos[:, ahead] - pos[:, ankle], up)))[0]
    rows = np.ones(len(pos), bool)
    if foot.toe_flags is not None and (foot.ankle_flags & foot.toe_flags).any():
        rows = foot.ankle_flags & foot.toe_flags
    elif foot.toe_flags is not None and foot.toe_flags.any():
        rows = foot.toe_flags
    return unit(local[rows].mean(axis=0))[0]


def _toe_points(sk: Skeleton, pos: np.ndarray, rot: np.ndarray, foot: FootPlant, toe: int) -> np.ndarray:
    """(T, m, 3) world offsets from the toe joint of the joints and End Sites below it."""
    below = sk.subtree(toe)
    tips = [pos[:, j] - pos[:, toe] for j in foot.joints if below[j] and j != toe]
    ends = [e for e in foot.ends if below[sk.end_site_parents[e]]]
    if ends:
        site = end_site_positions(sk, pos, rot)
        tips += [site[:, e] - pos[:, toe] for e in ends]
    return np.stack(tips, axis=1) if tips else np.zeros((len(pos), 0, 3))


def _turn_to_floor(w, pivot: np.ndarray, k: np.ndarray, floor: float, up: np.ndarray, frames: int,
                   where: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """(T,) angle (radians) to turn points about an axis so none stays under the floor.

    w: (T, m, 3) the points' offsets from the pivot, whose heights along the unit ``up`` are
    ``pivot`` (T,); k: (T, 3) unit axes (a positive turn lifts what lies ahead of them: k is
    forward × up); where: (T,) bool, the frames that may turn (default all). Up (positive, as
    toes bend and as a foot rolls onto its heel) or down (a toe pointing back), whichever is less
    over each run of frames that need a turn (one direction a run, so a hanging toe does not flip),
    by the least angle up to 90° that keeps every point at or above the floor (the largest its
    points need; what stays under the floor, or needs more, is left to the ankle's lift); then,
    so nothing pops, the smooth upper envelopes of the two directions' angles over ``frames`` // 2
    frames on each side, wherever they leave no point lower than the least turn does (a difference of
    the two envelopes where the directions meet can lift less: there the least turn stays).
    """
    k = k[:, None]
    # height of a point turned by φ about k: (a − c)·cos φ + b·sin φ + c
    a, b = w @ up, np.cross(k, w) @ up
    c = np.sum(k * w, axis=-1) * (k @ up)
    amplitude, phase = np.hypot(a - c, b), np.arctan2(b, a - c)
    need = (floor - pivot)[:, None] - c
    m = np.divide(need, amplitude, out=np.full_like(need, -2.0), where=amplitude > 0)
    half = np.arccos(np.clip(m, -1.0, 1.0))  # feasible turns: |φ − phase| ≤ half
    dips = a < need + c
    if where is not None:
        dips &= where[:, None]
    rise = np.where(dips, np.mod(phase - half, 2 * np.pi), 0.0).max(axis=1)
    sink = np.where(dips, np.mod(-phase - half, 2 * np.pi), 0.0).max(axis=1)
    lesser = rise <= sink
    for start, stop in contact_spans(dips.any(axis=1)):  # one direction over each run of frames (no flips)
        lesser[start:stop] = np.minimum(rise[start:stop], np.pi).sum() <= np.minimum(sink[start:stop], np.pi).sum()
    angle = np.where(lesser, rise, -sink)
    angle = np.where(np.abs(angle) <= np.pi / 2, angle, 0.0)
    window = max(1, frames // 2)
    smooth = upper_envelope(np.maximum(angle, 0.0), window) - upper_envelope(np.maximum(-angle, 0.0), window)

    def heights(phi):
        return pivot[:, None] + (a - c) * np.cos(phi)[:, None] + b * np.sin(phi)[:, None] + c

    # the smooth angle where it lifts every point as far as the least turn does (to the floor, or higher)
    return np.where(np.all(heights(smooth) >= np.minimum(floor, heights(angle)) - 1e-9, axis=1), smooth, angle)


def _toe_offset(world, foot: FootPlant, up: np.ndarray):
    """(toe offset from the ankle in the ankle's frame (T, 3), lateral axis in that frame (3,)) of a
    foot with a planted toe, else None; world: FK of the motion the goals were made from."""
    if foot.toe is None or foot.toe_flags is None or not (foot.toe_flags & ~foot.ankle_flags).any():
        return None
    pos, rot = world
    ankle = foot.leg[2]
    local = quat.rotate(quat.conjugate(rot[:, ankle]), pos[:, foot.toe] - pos[:, ankle])
    return local, _lateral_axis(pos, rot, foot, up)


def _tip_toe(hip, target, foot_rot, reach, foot: FootPlant, toe, frames: int):
    """(ankle goal (T, 3), foot orientation (T, 4)) turned about the toe, on the frames the toe alone
    is planted, by the least angle about the foot's lateral axis that brings the ankle within
    ``reach`` (T,) of the ``hip`` (T, 3) (the closest it can get where none does); the angle fades
    out over ``frames`` on each side like a displacement."""
    local, axis = toe
    w = -quat.rotate(foot_rot, local)  # toe → ankle
    toe_pos = target - w
    k = unit(quat.rotate(foot_rot, np.broadcast_to(axis, w.shape)))[0]
    d = hip - toe_pos
    # |toe + R(φ)w − hip|² = |w|² + |d|² − 2·R(φ)w·d, R(φ)w·d = A·cos φ + B·sin φ + C
    c = np.sum(w * k, axis=-1) * np.sum(d * k, axis=-1)
    a, b = np.sum(w * d, axis=-1) - c, np.sum(np.cross(k, w) * d, axis=-1)
    need = 0.5 * (np.sum(w * w, axis=-1) + np.sum(d * d, axis=-1) - reach**2) - c
    amplitude, phase = np.hypot(a, b), np.arctan2(b, a)
    half = np.arccos(np.clip(np.divide(need, amplitude, out=np.ones_like(need), where=amplitude > 0), -1.0, 1.0))
    low, high = np.angle(np.exp(1j * (phase - half))), np.angle(np.exp(1j * (phase + half)))
    angle = np.where(np.abs(low) <= np.abs(high), low, high)
    alone = foot.toe_flags & ~foot.ankle_flags & (a < need)  # out of reach as it is
    angle = np.where(alone & (np.abs(angle) <= np.pi / 2), angle, 0.0)
    if not angle.any():
        return target, foot_rot
    angle = blended_offsets(np.zeros((len(angle), 1)), angle != 0, angle[:, None], frames)[0][:, 0]
    turn = quat.from_axis_angle(k, angle)
    return toe_pos + quat.rotate(turn, w), quat.multiply(turn, foot_rot)


def _slide_to_reach(hip, target, reach, up: np.ndarray, where: np.ndarray, frames: int) -> np.ndarray:
    """Targets (T, 3) moved horizontally towards the ``hip`` (T, 3) by the least amount that puts
    them within ``reach`` (T,), on the ``where`` (T,) frames (as far as the hip's vertical line
    where the height alone is too much); the move fades out over ``frames`` on each side."""
    v = target - hip
    rise = v @ up
    flat = v - rise[:, None] * up
    length = quat.length(flat)
    allowed = np.sqrt(np.maximum(reach**2 - rise**2, 0.0))
    move = np.where(where & (length > allowed), length - allowed, 0.0)
    if not move.any():
        return target
    shift = -move[:, None] * flat / np.maximum(length, 1e-300)[:, None]
    return target + blended_offsets(np.zeros_like(shift), move > 0, shift, frames)[0]
