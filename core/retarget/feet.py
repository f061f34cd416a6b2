"""Feet that stand: which joints touch the floor, where the floor is, and how a foot stands flat.

A foot is its ankle (the joint labelled ``foot``), its toe (the ``toe`` the map or the labels
give, else the first joint of the ankle's longest child chain) and every joint and End Site
below the ankle (its *points*: what can touch or go through the floor).

- **Floor** (:func:`source_floor`): the height along up at which the source's feet stand: the
  median, over the frames where a foot is flat (its ankle and toe both in contact), of that
  foot's lowest point; without such frames, the 5th percentile over the clip of the lowest
  foot point (:func:`.pipeline.ground_height`). The target's floor is the source's floor mapped
  (× the root scale, plus the root shift along up), or the requested floor level with
  *Keep on Floor*.
- **Stance** (:func:`stance_heights`): each point's height above the foot's lowest point when
  the foot stands flat: in the rest pose when it is a standing pose, else the median over the
  source's flat frames of the motion given (the feet there point where the source's point).
- **Heel contact** (:func:`heel_contacts`): an ankle's contact ends where the heel leaves the
  floor: the trailing frames of each ankle contact span in which ankle → toe points down more
  than ``HEEL_OFF`` (5°) beyond its median over the flat frames (the toe stays in contact and
  the foot rolls over it), and the frames at either end of a span where the ankle stands more
  than ``HEEL_HEIGHT`` (2 % of the source's stature) above its flat-stance height. The contact
  detector's height band (4 % of the body) keeps a rising heel in contact for a few frames
  more, where an ankle planted at its stance height would pull the leg straight.
- **Pitch** (:func:`pitch_correction`): the transfer makes every bone point where its source
  bone points, so a foot whose ankle sits higher above its toe than the source's (Mixamo's
  ankle is 4.8 % of the height above its toe, CMU's 2.2 %) would stand on its heel with the toes
  in the air. Where the target's rest pose stands, the foot is turned about its own lateral axis
  by the difference between its rest elevation of ankle → toe and the source's median over its
  flat frames (its rest's without them: a rest or an FBX bind pose need not stand on flat feet);
  its toe keeps its world orientation. A rest pose whose two feet differ by more than
  ``SAME_STANCE`` (5°) is not taken for a flat stance (a bind pose exported mid-step): the
  feet then keep the source's pitch and their stance comes from the source's flat frames.
- **Drift** (:func:`split_drifting`): the contact detector takes a slow shuffle for one long
  contact (a dancer's toe down for seconds while it wanders over a tenth of the body); one median
  anchor is then far from where the foot is at the span's ends, out of the target leg's reach,
  and the foot floats. A span whose joint strays more than ``DRIFT`` (5 % of the source's
  stature; a walking step's heel strike and toe roll stay within about 4.5 %) horizontally from
  its median is cut into pieces, each ending where the joint has moved ``DRIFT`` / 2 from where
  it began, one frame of flight between pieces (the planting blends across it), each anchored at
  its own median; pieces shorter than ``SHORTEST`` (0.1 s) are the joint sweeping along (a spin,
  a slide), not standing, and are dropped. For planting the flight between two pieces is then
  widened to ``MOVE`` (0.1 s, :func:`widen_splits`), over which the foot passes from one anchor to
  the next: across one frame the planted toe jumped between them (CMU 131_03 on a 1.4× copy of its
  skeleton: 2.6 % of the stature in two frames, 23 frames with a joint stepping over 1 % beyond
  the source's step; now none, the worst 0.85 %). The frames are taken half from either piece,
  none where the foot's other joint has just landed or is about to lift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quaternion as quat
from ..contacts import contact_spans, span_anchors
from ..ik.common import local_from_world, parent_world_rotations
from ..kinematics import end_site_positions, forward_kinematics
from ..motion import Motion
from ..skeleton import Skeleton, rest_positions

HEEL_OFF = np.radians(5.0)
HEEL_HEIGHT = 0.02
SAME_STANCE = np.radians(5.0)  # the two feet of a rest pose that stands on flat feet agree within this
DRIFT = 0.05  # a contact span's horizontal wander from its median, in statures, before it is split
SHORTEST = 0.1  # seconds: a shorter piece of a split span is a sweep, not a contact
MOVE = 0.1  # seconds of flight between two pieces of a split span, over which the foot moves to the next anchor


@dataclass(frozen=True)
class Foot:
    """One foot of a skeleton: ``ankle`` and ``toe`` joints (toe None without one), ``joints``
    (n,) and ``ends`` (e,) the joints and End Sites of the ankle's subtree (ankle included)."""

    ankle: int
    toe: int | None
    joints: np.ndarray
    ends: np.ndarray


def foot_of(skeleton: Skeleton, ankle: int, toe: int | None = None) -> Foot:
    """The :class:`Foot` of ``ankle``; ``toe`` is used when it lies below the ankle, else the
    first joint of the ankle's longest child chain (ties: the child farthest from the ankle)."""
    below = skeleton.subtree(ankle)
    if toe is None or toe == ankle or not below[toe]:
        toe = _longest_child(skeleton, ankle)
    return Foot(int(ankle), toe, np.flatnonzero(below), np.flatnonzero(below[skeleton.end_site_parents]))


def _longest_child(skeleton: Skeleton, joint: int) -> int | None:
    children = [int(c) for c in skeleton.children(joint)]
    if not children:
        return None
    depth = skeleton.depths()
    reach = [int(depth[skeleton.subtree(c)].max()) for c in children]
    length = [float(np.linalg.norm(skeleton.rest_translations[c])) for c in children]
    return max(zip(reach, length, children))[2]


def point_heights(motion: Motion, foot: Foot, up: np.ndarray, world=None) -> np.ndarray:
    """(T, n + e) heights along ``up`` of a foot's joints then End Sites; world: FK if known."""
    pos, rot = world if world is not None else forward_kinematics(motion.skeleton, motion.translations,
                                                                    motion.rotations)  # fmt: skip
    heights = pos[:, foot.joints] @ up
    if len(foot.ends):
        heights = np.concatenate((heights, end_site_positions(motion.skeleton, pos, rot)[:, foot.ends] @ up), axis=1)
    return heights


def flat_frames(flags: np.ndarray, columns: tuple[int, int | None]) -> np.ndarray:
    """(T,) frames where the ankle (column 0) and the toe (column 1, if any) are both in contact."""
    ankle, toe = columns
    return flags[:, ankle] & (flags[:, toe] if toe is not None else True)


def source_floor(heights: list[np.ndarray], flat: list[np.ndarray], fallback: float) -> float:
    """The floor (module notes): median lowest point of the flat feet, else ``fallback``.

    heights: per foot (T, k) point heights; flat: per foot (T,) bool.
    """
    lowest = [h.min(axis=1)[f] for h, f in zip(heights, flat)]
    lowest = np.concatenate(lowest) if lowest else np.zeros(0)
    return float(np.median(lowest)) if len(lowest) else float(fallback)


def stance_heights(skeleton: Skeleton, foot: Foot, up: np.ndarray, standing: bool,
                   heights: np.ndarray | None = None, flat: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """(n + e,) each foot point's height above the foot's lowest point when it stands flat.

    standing: the rest pose is a standing pose (then it gives the stance); else the median
    over the ``flat`` (T,) frames of ``heights`` (T, n + e) minus their per-frame minimum (all
    frames when none is flat).
    """
    if standing or heights is None:
        both = rest_positions(skeleton, include_end_sites=True)
        h = np.concatenate((both[foot.joints], both[skeleton.n_joints + foot.ends])) @ up
        return h - h.min()
    rows = heights[flat] if flat is not None and flat.any() else heights
    return np.median(rows - rows.min(axis=1, keepdims=True), axis=0)


def rest_elevation(skeleton: Skeleton, foot: Foot, up: np.ndarray) -> float | None:
    """Angle (radians) of ankle → toe below the horizontal in the rest pose; None without a toe."""
    if foot.toe is None:
        return None
    pos = rest_positions(skeleton)
    v = pos[foot.toe] - pos[foot.ankle]
    n = np.linalg.norm(v)
    return float(np.arcsin(np.clip(-(v @ up) / n, -1.0, 1.0))) if n > 0 else None


def pitch_correction(
    motion: Motion, foot: Foot, up: np.ndarray, angle: float, reference: np.ndarray, world=None
) -> Motion:
    """A copy of ``motion`` whose foot is turned by ``angle`` (radians, positive lowers the toe)
    about its lateral axis, the toe keeping its world orientation.

    The axis is fixed in the foot's own frame: the horizontal normal of ankle → toe, averaged
    over the ``reference`` (T,) frames (all frames when none), so the turn is a constant change
    of the foot's pose rotation, like a rest correction. world: FK of ``motion`` if known.
    """
    if foot.toe is None or abs(angle) < 1e-9:
        return motion
    sk = motion.skeleton
    pos, rot = world if world is not None else forward_kinematics(sk, motion.translations, motion.rotations)
    rows = reference if reference is not None and reference.any() else np.ones(motion.n_frames, bool)
    v = pos[rows, foot.toe] - pos[rows, foot.ankle]
    lateral = np.cross(up, v)  # a positive turn about up × v takes v towards −up
    lateral_local = quat.rotate(quat.conjugate(rot[rows, foot.ankle]), lateral).mean(axis=0)
    n = np.linalg.norm(lateral_local)
    if n < 1e-12:
        return motion
    turn = quat.from_axis_angle(lateral_local / n, angle)
    out = motion.copy()
    out.rotations[:, foot.ankle] = quat.multiply(motion.rotations[:, foot.ankle], turn)
    toe_world = rot[:, foot.toe]
    if sk.parents[foot.toe] == foot.ankle:  # the foot's new world orientation is its old one · turn
        parent = quat.multiply(rot[:, foot.ankle], turn)[:, None]
    else:
        parent = parent_world_rotations(sk, forward_kinematics(sk, out.translations, out.rotations)[1], [foot.toe])
    out.rotations[:, foot.toe] = local_from_world(sk, [foot.toe], toe_world[:, None], parent)[:, 0]
    return out


def elevations(pos: np.ndarray, foot: Foot, up: np.ndarray) -> np.ndarray:
    """(T,) angle (radians) of ankle → toe below the horizontal in positions (T, J, 3)."""
    v = pos[:, foot.toe] - pos[:, foot.ankle]
    return np.arcsin(np.clip(-(v @ up) / np.maximum(np.linalg.norm(v, axis=-1), 1e-300), -1.0, 1.0))


def heel_contacts(pos: np.ndarray, foot: Foot, up: np.ndarray, flags: np.ndarray, flat: np.ndarray,
                  floor: float | None = None, stance: float = 0.0, tolerance: float = 0.0) -> np.ndarray:  # fmt: skip
    """(T,) the ankle's contact ``flags`` without the frames at either end of each span where its
    heel is off the floor (module notes): after the last frame with ankle → toe within
    ``HEEL_OFF`` of its median over the ``flat`` (T,) frames, and, when ``floor`` is given, before
    the first and after the last frame with the ankle within ``tolerance`` of its ``stance``
    height above the floor. pos: (T, J, 3) the motion's positions; heights along the unit ``up``."""
    out = flags.copy()
    if foot.toe is not None and flat.any():
        pitch = elevations(pos, foot, up)
        down = pitch - np.median(pitch[flat]) > HEEL_OFF
        for start, stop in contact_spans(out):
            level = np.flatnonzero(~down[start:stop])
            out[start + (level[-1] + 1 if len(level) else 0) : stop] = False
    if floor is not None:
        high = pos[:, foot.ankle] @ up - floor - stance > tolerance
        for start, stop in contact_spans(out):
            low = np.flatnonzero(~high[start:stop])
            out[start:stop] = False
            if len(low):
                out[start + low[0] : start + low[-1] + 1] = True
    return out


def split_drifting(
    positions: np.ndarray, flags: np.ndarray, up: np.ndarray, radius: float, shortest: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """(flags (T,), anchors (T, 3)) of a joint's contacts, each span that wanders more than
    ``radius`` (scene units) horizontally from its median cut into pieces (module notes): a piece
    ends where the joint has moved more than ``radius`` / 2 from where it began, one frame of
    flight before the next; each span or piece is anchored at its median
    (:func:`core.contacts.span_anchors`, NaN outside contact); pieces shorter than ``shortest``
    frames (the joint sweeping along, not standing) are dropped.

    positions: (T, 3) the joint's world positions; flags: (T,) bool; up: (3,) unit vector.
    """
    flat = positions - np.outer(positions @ up, up)
    out = flags.copy()
    for start, stop in contact_spans(flags):
        if np.linalg.norm(flat[start:stop] - np.median(flat[start:stop], axis=0), axis=-1).max() <= radius:
            continue
        origin = start
        for t in range(start + 1, stop):
            if np.linalg.norm(flat[t] - flat[origin]) > radius / 2:
                out[t] = False  # one frame of flight, the next piece begins after it
                origin = t + 1
        for a, b in contact_spans(out[start:stop]) + start:
            if b - a < shortest:  # a piece too short: the joint sweeping along, not standing
                out[a:b] = False
    return out, span_anchors(positions, out)


def widen_splits(
    positions: np.ndarray,
    spans: np.ndarray,
    pieces: np.ndarray,
    gap: int,
    keep: int,
    partner: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(flags (T,), anchors (T, 3)) of a joint's contacts whose :func:`split_drifting` ``pieces`` (T,) bool, cut
    from the contact ``spans`` (T,) bool, are ``gap`` frames apart: the flight between two pieces of one span is
    widened to ``gap``, half taken from either piece (more from one where the other cannot give), as far as each
    keeps ``keep`` frames and none of the first or last ``gap`` / 4 frames of a contact of the foot's other
    joint (``partner`` (T,) bool, its pieces) that lands or lifts from a real flight; each piece anchored at its
    median (:func:`core.contacts.span_anchors`, NaN outside contact). positions: (T, 3) the joint's.

    Pieces are not dropped: that left a long flight where the foot flew off its contact (CMU 06_14 onto the
    3ds Max skeleton: float 0 -> 0.90 % of the height); pieces cut to 4 frames made the knee jump (131_03 on a
    1.4x copy: 4.4 % of the stature at frame 1013), pieces kept whole left a one-frame gap where the toe jumped
    (2.6 % at 600). A toe lifted two frames before its heel landed made the heel come down in three frames
    (131_01 onto the CMU skeleton: 4.2 % of the height in a frame at 362; with the landing's first frames held,
    no frame over 1 %); holding every frame within ``gap`` of the other joint's edges, split ones included, left
    one-frame gaps where both joints drift together (131_03: 2.7 % at 1002)."""
    out = pieces.copy()
    held = _landings(partner, max(1, gap // 4)) if partner is not None else np.zeros(len(pieces), bool)
    for start, stop in contact_spans(spans):
        within = contact_spans(pieces[start:stop]) + start
        for k in range(len(within) - 1):
            (a, b), (c, d) = within[k], within[k + 1]
            short = max(gap - (c - b), 0)
            left_held, right_held = np.flatnonzero(held[a:b]), np.flatnonzero(held[c:d])
            left = b - max(min(a + keep, b), a + left_held[-1] + 1 if len(left_held) else a)
            right = min(max(d - keep, c), c + right_held[0] if len(right_held) else d) - c
            take_right = min(short - min(short // 2, left), right)
            take_left = min(short - take_right, left)
            out[b - take_left : b] = out[c : c + take_right] = False
            within[k + 1, 0] = c + take_right
    return out, span_anchors(positions, out)


def _landings(flags: np.ndarray, frames: int) -> np.ndarray:
    """(T,) bool: the first and last ``frames`` of each contact of ``flags`` (T,) that begins or ends at a real
    flight, not at the one-frame flight between two pieces of :func:`split_drifting`."""
    near = np.zeros(len(flags), bool)
    spans = contact_spans(flags)
    for k, (start, stop) in enumerate(spans):
        if start > 0 and (k == 0 or start - spans[k - 1, 1] > 1):  # a contact at the clip's start did not land
            near[start : start + frames] = True
        if stop < len(flags) and (k == len(spans) - 1 or spans[k + 1, 0] - stop > 1):  # nor one at its end lift
            near[max(stop - frames, start) : stop] = True
    return near
