"""Retarget a motion onto another skeleton: rotations, scaled root motion, planted feet.

Pipeline (:func:`retarget`):

1. bone map (:func:`.mapping.auto_map` unless given) and alignment A of the two spaces: the
   shortest arc from the source's up axis (detected on the motion) to the target's (detected
   on its rest pose, or given), e.g. BVH Y-up → Blender Z-up like Blender's BVH importer; a
   target whose rest pose is not a standing pose (:func:`standing_up`) is taken to share the
   source's axes unless ``target_up`` or ``alignment`` says otherwise;
2. rotations by :class:`.transfer.Transfer` (world space, per-bone rest corrections);
3. root: the target joint mapped to the source's hips (else the shallowest mapped one)
   follows its source joint's world position mapped by p ↦ s·A·p + shift(t), s the leg-length ratio (target / source: upper
   leg → knee → ankle, :func:`.body.leg_length`) unless a ratio is given. ``in_place``
   subtracts the low-pass of the horizontal path (moving average over ``in_place_window``
   seconds, ends extended by point reflection), keeping the sway, and puts the root over its rest place; ``on_floor`` shifts it along
   up so the lowest foot points (foot and toe joints and End Sites) stand on ``floor_level``
   (their per-frame minimum, 5th percentile over the clip). All other target joints keep
   their rest offsets (bone lengths are the target's);
4. feet that stand (:mod:`.feet`, :func:`core.ik.plant.stand_feet`): contacts of the source's ankles
   and toes (:func:`core.contacts.detect_contacts`; an ankle's ends where its heel leaves the
   floor) go to the target joints the map pairs with them (a target toe the map does not give is
   the label's, else the ankle's longest child chain). The floor is the source's floor (where its
   flat feet stand) mapped, or ``floor_level`` with ``on_floor``; a contact that wanders far from
   its median is cut into pieces, each anchored where it is (:func:`.feet.split_drifting`), with
   0.1 s of flight between two pieces over which the foot moves to the next anchor
   (:func:`.feet.widen_splits`). Where the target's rest pose stands, each target foot is turned to
   its own flat stance (the transfer points it like the source's); the body is then raised or lowered by one constant so the target's flat feet stand on the floor
   (its hip joints and ankles sit elsewhere than the source's). Anchors: horizontally the scaled
   source's (p ↦ s·A·p + shift(t)), the toe's at the target foot's own length from the ankle's;
   vertically each joint's flat-stance height above the floor. Then the legs are solved with
   IK (displacement blend in and out, the pelvis lowered where a foot is out of reach) and a
   floor clamp keeps every joint and End Site of the feet above the floor (foot roll, toe bend,
   ankle lift).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts, detect_contacts, moving_average, parse_up
from ..ik.plant import FootPlant, foot_anchors, stand_feet
from ..kinematics import end_site_positions, forward_kinematics
from ..limbs import detect_up, limb_chain, standing_height
from ..motion import Motion
from ..skeleton import Skeleton, rest_world
from .body import foot_points, leg_length
from .feet import (
    DRIFT,
    HEEL_HEIGHT,
    MOVE,
    SAME_STANCE,
    SHORTEST,
    Foot,
    flat_frames,
    foot_of,
    heel_contacts,
    pitch_correction,
    point_heights,
    rest_elevation,
    source_floor,
    split_drifting,
    stance_heights,
    widen_splits,
)
from .mapping import CORE, MappingError, auto_map, describe, map_labels, mapping_pairs
from .root_motion import carry_root_motion, root_bone
from .root_motion import with_position_channels as _with_position_channels
from .transfer import Transfer, mapped_ancestors


@dataclass
class RetargetOptions:
    """How to retarget.

    scale: root-motion scale, None for the leg-length ratio; in_place: remove the horizontal
    root travel; on_floor: keep the feet on ``floor_level`` (target units, along up);
    plant_feet: pin the source's foot contacts with IK, fading in and out over ``blend``
    seconds; distribute_twist: spread the twist of mapped joints over unmapped joints above
    them (else those stay rigid); in_place_window: seconds of the path low-pass; root_motion:
    carry the horizontal travel and heading on the bone above the pelvis, at the floor, the
    pelvis relative to it (game rigs, :mod:`.root_motion`); allow_partial: retarget even when
    the map leaves part of the core body unmapped (:data:`.mapping.CORE`; otherwise an error).
    """

    scale: float | None = None
    in_place: bool = False
    on_floor: bool = False
    floor_level: float = 0.0
    plant_feet: bool = True
    blend: float = 0.2
    distribute_twist: bool = True
    in_place_window: float = 1.0
    root_motion: bool = False
    allow_partial: bool = False


@dataclass(eq=False)
class RetargetResult:
    """A retargeted motion and how it was made.

    motion: the result on the target (the target skeleton with position channels on the root);
    unplanted: the same before foot planting; mapping: target → source names used; pairs:
    (target joints, source joints); scale: s; alignment: (4,) A; up: (3,) the target's up;
    root: the target joint that carries the translation; shift: (T, 3) the translation added
    after scaling; contacts: of the source (source_contacts) and as given to the target feet
    (contacts), None when feet were not planted; notes: what was skipped and why; root_bone:
    the bone carrying the root motion (None without it); keyed: (n,) the target joints the
    result animates (:func:`keyed_joints`; the others keep whatever animation they have);
    floor: the height along ``up`` the planted feet stand on (None when not planted, see
    :mod:`.feet`); stance: contact joint → its height above the floor when its foot stands flat.
    """

    motion: Motion
    unplanted: Motion
    mapping: dict[str, str]
    pairs: tuple[np.ndarray, np.ndarray]
    scale: float
    alignment: np.ndarray
    up: np.ndarray
    root: int
    shift: np.ndarray
    source_contacts: Contacts | None = None
    contacts: Contacts | None = None
    target_labels: dict[str, int] = field(default_factory=dict)
    source_labels: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    root_bone: int | None = None
    keyed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    floor: float | None = None
    stance: dict[int, float] = field(default_factory=dict)

    def map_points(self, points: np.ndarray) -> np.ndarray:
        """Source-space points (T, ..., 3) mapped into target space: s·A·p + shift(t)."""
        points = np.asarray(points, dtype=float)
        shift = self.shift.reshape(len(self.shift), *([1] * (points.ndim - 2)), 3)
        return self.scale * quat.rotate(self.alignment, points) + shift


def retarget(
    source: Motion,
    target: Skeleton,
    mapping: dict[str, str] | None = None,
    options: RetargetOptions | None = None,
    alignment: np.ndarray | None = None,
    source_up: str | np.ndarray | None = None,
    target_up: str | np.ndarray | None = None,
) -> RetargetResult:
    """``source`` played by ``target`` (see the module notes).

    mapping: target joint name → source joint name (default automatic); alignment: (4,) the
    rotation from source space to target space (default from the up axes, which may be
    given as "y", "-z" or vectors). Every stage reads the body through the map
    (:func:`.mapping.map_labels`). Raises ValueError when the target has no joints or the map
    pairs none, :class:`.mapping.MappingError` when the map crosses sides or limbs or (unless
    ``options.allow_partial``) leaves the core body unmapped.
    """
    options = options or RetargetOptions()
    if not target.n_joints:
        raise ValueError("the target has no bones")
    s_pos, s_rot = forward_kinematics(source.skeleton, source.translations, source.rotations)
    mapping = auto_map(source.skeleton, target, s_pos[0]) if mapping is None else dict(mapping)
    tk, sj = mapping_pairs(mapping, source.skeleton, target)
    if not len(tk):
        raise MappingError("the bone map pairs no bones of these armatures (the core body unmapped: "
                           + ", ".join(map(describe, CORE)) + ")")  # fmt: skip
    source_labels, target_labels, missing = map_labels(
        mapping, source.skeleton, target, s_pos[0], options.allow_partial
    )
    up_s = _source_up(source.skeleton, s_pos, source_labels) if source_up is None else parse_up(source_up)
    a = _alignment(target, target_labels, up_s, alignment, target_up)
    up_t = quat.rotate(a, up_s)
    scale = (
        float(options.scale)
        if options.scale
        else _leg_ratio(source.skeleton, target, source_labels, target_labels, up_s, up_t)
    )
    transfer = Transfer.build(source.skeleton, target, tk, sj, a)
    rotations = transfer.local_rotations(transfer.world_rotations(s_rot, options.distribute_twist))
    root = _root_joint(target, tk, sj, source_labels.get("hips"))
    mapped_world = scale * quat.rotate(a, s_pos)
    motion, shift = _root_motion(transfer, rotations, root, mapped_world, up_t, target_labels, options, source.fps)
    result = RetargetResult(motion, motion, mapping, (tk, sj), scale, a, up_t, root, shift, target_labels=target_labels)
    result.source_labels = source_labels
    if missing:
        result.notes.append("partial map, not mapped: " + ", ".join(map(describe, missing)))
    if source_up is None and (note := _lying_note(source.skeleton, source_labels, up_s)):
        result.notes.append(note)
    if options.plant_feet:
        _plant(result, source, (s_pos, s_rot), up_s, options)
    if options.root_motion:
        _carry_root_motion(result, options)
    result.keyed = keyed_joints(transfer, root)
    return result


def keyed_joints(transfer: Transfer, root: int) -> np.ndarray:
    """(n,) target joints a retarget animates, in order: the mapped ones, the unmapped ones between
    mapped ones (they hold the chain together and take a share of the twist) and the joints above
    ``root``, the joint carrying the translation (at rest, or the root-motion bone: the root is
    placed in the armature's space through them). Other unmapped joints (fingers, twist leaves,
    IK helpers) are not animated: they keep whatever animation they have."""
    mapped = transfer.source_of >= 0
    above = mapped_ancestors(transfer.target.parents, mapped) >= 0
    keep = mapped | (above & np.array([len(b) > 0 for b in transfer.below]))
    keep[transfer.target.path_to_root(root)] = True
    return np.flatnonzero(keep)


def _carry_root_motion(result: RetargetResult, options: RetargetOptions) -> None:
    """Move the pelvis's travel and heading onto the bone above it (:mod:`.root_motion`)."""
    sk = result.motion.skeleton
    top = root_bone(sk, result.root)
    if top is None:
        result.notes.append(f"root motion: no bone above '{sk.names[result.root]}' to carry it; the travel "
                            "stays on that bone")  # fmt: skip
        return
    floor = options.floor_level if options.on_floor else None
    planted = result.motion is not result.unplanted
    result.motion = carry_root_motion(result.motion, result.root, top, result.up, floor)
    result.unplanted = (
        carry_root_motion(result.unplanted, result.root, top, result.up, floor) if planted else result.motion
    )
    result.root_bone = top


def _source_up(skeleton: Skeleton, s_pos: np.ndarray, labels: dict[str, int]) -> np.ndarray:
    """The source's up axis (3,) on its motion: from the mapped feet to the mapped hips when
    both are labelled (the signed world axis nearest to it), else :func:`core.limbs.detect_up`."""
    sample = s_pos[:: max(1, len(s_pos) // 200)]
    feet = [labels[f"foot.{s}"] for s in "LR" if f"foot.{s}" in labels]
    if "hips" not in labels or not feet:
        return detect_up(skeleton, sample)
    rise = (sample[:, labels["hips"]] - sample[:, feet].mean(axis=1)).mean(axis=0)
    axis = int(np.argmax(np.abs(rise)))
    up = np.zeros(3)
    up[axis] = np.sign(rise[axis]) or 1.0
    return up


def _lying_note(skeleton: Skeleton, labels: dict[str, int], up: np.ndarray) -> str | None:
    """A note when the source's poses stand along another axis than its standing rest pose (:func:`standing_up`):
    a capture lying down throughout (its feet beside the hips on every frame) is read as standing along the axis
    from its feet to its hips, and is stood up on the target, its physics solved in that gravity. Nothing in a
    file tells it from a capture standing in a world turned against its rest pose, so it is named, not changed
    (a CMU walk laid on the floor: rest pose +Y, poses +Z; none of the shared captures differs)."""
    rest = standing_up(skeleton, labels)
    if rest is None or abs(float(rest @ up)) > 0.5:
        return None
    return (f"the source's poses stand along {_axis(up)} but its rest pose along {_axis(rest)}: read as standing "
            f"along {_axis(up)} (a capture lying down throughout is stood up)")  # fmt: skip


def _axis(v: np.ndarray) -> str:
    """'+Y', '-Z', ... of a signed basis vector."""
    k = int(np.argmax(np.abs(v)))
    return ("+" if v[k] > 0 else "-") + "XYZ"[k]


def _root_motion(
    transfer: Transfer,
    rotations: np.ndarray,
    root: int,
    mapped_world: np.ndarray,
    up: np.ndarray,
    labels: dict[str, int],
    options: RetargetOptions,
    fps: float,
) -> tuple[Motion, np.ndarray]:
    """The target motion with ``rotations`` (T, K, 4) and its root (and mapped joints above it)
    at the mapped source positions ``mapped_world`` (T, J, 3) = s·A·p plus the shift (T, 3)
    of the in-place and floor options; returns (motion, shift)."""
    target = transfer.target
    placed = _placed_joints(target, transfer.source_of, root)
    paths = mapped_world[:, transfer.source_of[placed]]
    shift = np.zeros_like(paths[:, 0])
    if options.in_place:
        shift += _in_place_shift(paths[:, -1], up, rest_world(target)[0][root], round(options.in_place_window * fps))
    motion = Motion(_with_position_channels(target, placed), _rest_translations(target, len(paths)), rotations, fps)
    motion = _place(motion, placed, paths + shift[:, None])
    if options.on_floor:
        shift += (options.floor_level - ground_height(motion, labels, up)) * up
        motion = _place(motion, placed, paths + shift[:, None])
    return motion, shift


def _alignment(target: Skeleton, labels: dict[str, int], up_s: np.ndarray, alignment, target_up) -> np.ndarray:
    if alignment is not None:
        return quat.normalize(np.asarray(alignment, dtype=float))
    up_t = standing_up(target, labels) if target_up is None else parse_up(target_up)
    return quat.between(up_s, up_s if up_t is None else up_t)


def standing_up(skeleton: Skeleton, labels: dict[str, int]) -> np.ndarray | None:
    """Up axis (3,) of a skeleton's rest pose (:func:`core.limbs.detect_up`), or None when the
    rest pose is not a standing pose: the head (else the chest) not clearly above the hips
    (Bandai Namco's BVH rest pose has every bone along +X)."""
    up = detect_up(skeleton)
    top = labels.get("head", labels.get("chest"))
    if top is None or "hips" not in labels:
        return up
    rise = rest_world(skeleton)[0][top] - rest_world(skeleton)[0][labels["hips"]]
    return up if rise @ up > 0.5 * np.linalg.norm(rise) else None


def _leg_ratio(source: Skeleton, target: Skeleton, source_labels: dict, target_labels: dict, up_s, up_t) -> float:
    """Target / source leg length, else standing-height ratio (ups: (3,) each rest pose's up)."""
    ls, lt = leg_length(source, source_labels), leg_length(target, target_labels)
    if ls and lt:
        return lt / ls
    return standing_height(target, up_t) / standing_height(source, up_s)


def _root_joint(target: Skeleton, tk: np.ndarray, sj: np.ndarray, source_hips: int | None) -> int:
    """The target joint that carries the translation: the one mapped to the source's hips, else
    the shallowest mapped joint (ties: the one moving the most of the body). A static root above
    the hips (Bandai Namco's ``joint_Root``) is mapped too when both rigs have it, but never moves."""
    hits = tk[sj == source_hips] if source_hips is not None else tk[:0]
    if len(hits):
        return int(hits[0])
    depth = target.depths()[tk]
    candidates = tk[depth == depth.min()]
    return int(max(candidates, key=lambda k: target.subtree(int(k)).sum()))


def _placed_joints(target: Skeleton, source_of: np.ndarray, root: int) -> np.ndarray:
    """The root and its mapped ancestors, top down: the joints placed at their mapped source positions."""
    chain = [root]
    while (p := target.parents[chain[-1]]) >= 0:
        chain.append(int(p))
    return np.array([j for j in chain[::-1] if source_of[j] >= 0])


def _rest_translations(skeleton: Skeleton, n: int) -> np.ndarray:
    return np.broadcast_to(skeleton.rest_translations, (n, skeleton.n_joints, 3)).copy()


def low_pass(x: np.ndarray, window: int) -> np.ndarray:
    """Centred moving average (T, ...) over ``window`` frames (made odd), the ends extended by
    point reflection so a straight-line travel passes unchanged."""
    half = min(max(int(window), 1) // 2, len(x) - 1)
    if half < 1:
        return np.asarray(x, dtype=float)
    start = 2 * x[0] - x[1 : half + 1][::-1]
    end = 2 * x[-1] - x[-half - 1 : -1][::-1]
    return moving_average(np.concatenate((start, x, end)), 2 * half + 1)[half:-half]


def _in_place_shift(path: np.ndarray, up: np.ndarray, rest: np.ndarray, window: int) -> np.ndarray:
    """(T, 3) horizontal shift removing the low-passed travel of ``path`` (T, 3), centred on ``rest`` (3,)."""
    travel = low_pass(path, window)
    horizontal = travel - np.outer(travel @ up, up)
    return (rest - (rest @ up) * up) - horizontal


def _place(motion: Motion, joints: np.ndarray, world: np.ndarray) -> Motion:
    """A copy of ``motion`` whose ``joints`` (top down) sit at ``world`` (T, n, 3) positions."""
    out = motion.copy()
    for i, j in enumerate(joints):
        parent = motion.skeleton.parents[j]
        if parent < 0:
            out.translations[:, j] = world[:, i]
            continue
        pos, rot = forward_kinematics(out.skeleton, out.translations, out.rotations)
        out.translations[:, j] = quat.rotate(quat.inverse(rot[:, parent]), world[:, i] - pos[:, parent])
    return out


def ground_height(motion: Motion, labels: dict[str, int], up: np.ndarray) -> float:
    """Where the feet stand along ``up``: per frame the lowest foot point (foot and toe joints
    and their End Sites), 5th percentile over the clip."""
    sk = motion.skeleton
    pos, rot = forward_kinematics(sk, motion.translations, motion.rotations)
    joints, ends = foot_points(sk, labels)
    heights = pos[:, joints] @ up
    if len(ends):
        heights = np.concatenate((heights, end_site_positions(sk, pos, rot)[:, ends] @ up), axis=1)
    return float(np.percentile(heights.min(axis=1), 5.0))


def _plant(result: RetargetResult, source: Motion, s_world: tuple, up_s: np.ndarray, options: RetargetOptions) -> None:
    """Feet that stand (module notes, step 4): contacts of the source's ankles and toes given to the
    mapped target feet, the target's feet turned to its own flat stance and its body lowered or
    raised so they stand on the floor, then :func:`core.ik.plant.stand_feet`. s_world: the
    source's FK (positions (T, J, 3), orientations (T, J, 4))."""
    s_pos = s_world[0]
    s_sk, t_sk = source.skeleton, result.unplanted.skeleton
    tk, sj = result.pairs
    pairs = dict(zip(sj.tolist(), tk.tolist()))
    s_feet, t_feet = [], []
    for side in "LR":
        ankle = result.source_labels.get(f"foot.{side}")
        if ankle is None:
            continue
        if ankle not in pairs:
            result.notes.append(f"source foot '{s_sk.names[ankle]}' is not mapped: not planted")
            continue
        s_foot = foot_of(s_sk, ankle, result.source_labels.get(f"toe.{side}"))
        t_toe = pairs.get(s_foot.toe) if s_foot.toe is not None else None
        t_foot = foot_of(t_sk, pairs[ankle], t_toe if t_toe is not None else result.target_labels.get(f"toe.{side}"))
        if s_foot.toe is None or t_foot.toe is None:
            s_foot, t_foot = Foot(s_foot.ankle, None, s_foot.joints, s_foot.ends), Foot(t_foot.ankle, None,
                                                                                         t_foot.joints, t_foot.ends)  # fmt: skip
        s_feet.append(s_foot)
        t_feet.append(t_foot)
    joints = [f.ankle for f in s_feet] + [f.toe for f in s_feet if f.toe is not None]
    try:
        contacts = detect_contacts(source, joints=joints or None, up=up_s, positions=s_pos)
    except ValueError as exc:
        result.notes.append(f"feet not planted: {exc}")
        return
    result.source_contacts = contacts
    if not s_feet:
        return
    column = {int(j): i for i, j in enumerate(contacts.joints)}
    cols = [(column[f.ankle], column.get(f.toe)) for f in s_feet]
    for foot, (ca, ct) in zip(s_feet, cols):
        if ct is not None:
            flat = flat_frames(contacts.flags, (ca, ct))
            contacts.flags[:, ca] = heel_contacts(s_pos, foot, up_s, contacts.flags[:, ca], flat)
    flat = [flat_frames(contacts.flags, c) for c in cols]
    s_heights = [point_heights(source, f, up_s, s_world) for f in s_feet]
    s_floor = source_floor(s_heights, flat, ground_height(source, result.source_labels, up_s))
    s_standing = standing_up(s_sk, result.source_labels) is not None
    tolerance = HEEL_HEIGHT * standing_height(s_sk, up_s)
    for foot, (ca, _), h, f in zip(s_feet, cols, s_heights, flat):
        stance = stance_heights(s_sk, foot, up_s, False, h, f)[0]  # the source's own stance: its motion's
        contacts.flags[:, ca] = heel_contacts(s_pos, foot, up_s, contacts.flags[:, ca], f, s_floor, stance, tolerance)
    drift, shortest = DRIFT * standing_height(s_sk, up_s), max(2, round(SHORTEST * source.fps))
    spans = contacts.flags.copy()
    for i, j in enumerate(contacts.joints):  # a long contact that wanders: pieces, each anchored where it is
        contacts.flags[:, i], contacts.anchors[:, i] = split_drifting(
            s_pos[:, j], contacts.flags[:, i], up_s, drift, shortest
        )
    flat = [flat_frames(contacts.flags, c) for c in cols]
    s_floor = source_floor(s_heights, flat, s_floor)  # on the flat frames the heels really are down
    move = max(1, round(MOVE * source.fps))
    partner = {a: t for pair in cols if pair[1] is not None for a, t in (pair, pair[::-1])}
    pieces = contacts.flags.copy()
    for i, j in enumerate(contacts.joints):  # the foot moves between pieces over a flight of MOVE seconds
        other = pieces[:, partner[i]] if i in partner else None
        contacts.flags[:, i], contacts.anchors[:, i] = widen_splits(
            s_pos[:, j], spans[:, i], pieces[:, i], move, max(1, shortest // 2), other
        )
    up = result.up
    floor = (
        float(options.floor_level) if options.on_floor else result.scale * s_floor + float(np.median(result.shift @ up))
    )
    motion = result.unplanted
    world = forward_kinematics(t_sk, motion.translations, motion.rotations)
    t_standing = standing_up(t_sk, result.target_labels) is not None
    t_pitches = [rest_elevation(t_sk, f, up) if t_standing else None for f in t_feet]
    known = [p for p in t_pitches if p is not None]
    if len(known) == 2 and abs(known[0] - known[1]) > SAME_STANCE:
        result.notes.append(f"the target's rest pose does not stand on flat feet (its feet differ by "
                            f"{np.degrees(abs(known[0] - known[1])):.0f}°): its feet keep the source's pitch")  # fmt: skip
        t_standing, t_pitches = False, [None, None]
    for s_foot, t_foot, f, t_pitch in zip(s_feet, t_feet, flat, t_pitches):
        if t_pitch is None:
            continue
        # the source's flat foot from its motion (a rest or bind pose need not stand on flat feet), else its rest
        s_pitch = _flat_elevation(s_pos, s_foot, up_s, f)
        if s_pitch is None and s_standing:
            s_pitch = rest_elevation(s_sk, s_foot, up_s)
        if s_pitch is not None:
            motion = pitch_correction(motion, t_foot, up, t_pitch - s_pitch, f, world)
            world = forward_kinematics(t_sk, motion.translations, motion.rotations)
    t_heights = [point_heights(motion, f, up, world) for f in t_feet]
    stance = [stance_heights(t_sk, f, up, t_standing, h, fl) for f, h, fl in zip(t_feet, t_heights, flat)]
    lowest = np.concatenate([h.min(axis=1)[fl] for h, fl in zip(t_heights, flat)])
    if len(lowest):
        motion = _raise_root(motion, result.root, (floor - float(np.median(lowest))) * up)
    mapped = result.map_points(contacts.anchors)
    anchors = mapped - (mapped @ up)[..., None] * up
    plants, t_joints = [], []
    t_rest = rest_world(t_sk)[0]
    for t_foot, (ca, ct), st in zip(t_feet, cols, stance):
        height = {int(j): float(h) for j, h in zip(t_foot.joints, st)}
        a_anchor = anchors[:, ca] + (floor + height[t_foot.ankle]) * up
        t_anchor = None
        if ct is not None:
            length = float(np.linalg.norm(t_rest[t_foot.toe] - t_rest[t_foot.ankle]))
            a_anchor, t_anchor = foot_anchors(contacts.flags[:, ca], a_anchor, contacts.flags[:, ct],
                                             anchors[:, ct] + (floor + height[t_foot.toe]) * up, length, up)  # fmt: skip
        leg = _leg_of(t_sk, result.target_labels, t_foot.ankle)
        plants.append(FootPlant(leg, t_foot.toe, contacts.flags[:, ca], a_anchor,
                                None if ct is None else contacts.flags[:, ct], t_anchor, t_foot.joints, t_foot.ends))  # fmt: skip
        t_joints += [(ca, t_foot.ankle, a_anchor, height[t_foot.ankle])]
        if ct is not None:
            t_joints += [(ct, t_foot.toe, t_anchor, height[t_foot.toe])]
    t_joints.sort()
    columns = [c for c, *_ in t_joints]
    result.contacts = Contacts(np.array([j for _, j, *_ in t_joints]), contacts.flags[:, columns],
                               np.stack([np.where(contacts.flags[:, c, None], a, np.nan) for c, _, a, _ in t_joints], 1),
                               up, np.array([floor + h for *_, h in t_joints]),
                               result.scale * contacts.height_threshold[columns],
                               result.scale * contacts.speed_threshold, contacts.fps)  # fmt: skip
    result.floor = floor
    result.stance = {j: h for _, j, _, h in t_joints}
    result.motion = stand_feet(motion, plants, floor, up, blend=options.blend)


def _flat_elevation(pos: np.ndarray, foot: Foot, up: np.ndarray, flat: np.ndarray) -> float | None:
    """Median angle (radians) of ankle → toe below the horizontal over the ``flat`` frames of positions (T, J, 3)."""
    if foot.toe is None or not flat.any():
        return None
    v = pos[flat, foot.toe] - pos[flat, foot.ankle]
    return float(np.median(np.arcsin(np.clip(-(v @ up) / np.linalg.norm(v, axis=-1), -1.0, 1.0))))


def _raise_root(motion: Motion, root: int, lift: np.ndarray) -> Motion:
    """A copy of ``motion`` whose ``root`` joint is moved by the world vector ``lift`` (3,) on every frame."""
    out = motion.copy()
    parent = motion.skeleton.parents[root]
    if parent < 0:
        out.translations[:, root] += lift
    else:
        _, rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
        out.translations[:, root] += quat.rotate(quat.conjugate(rot[:, parent]), lift)
    return out


def _leg_of(skeleton: Skeleton, labels: dict[str, int], foot: int) -> tuple[int, int, int]:
    """(upper leg, knee, foot) of a target foot: from its labels, else by walking up the names."""
    for s in "LR":
        names = (f"upper_leg.{s}", f"lower_leg.{s}")
        if labels.get(f"foot.{s}") == foot and all(n in labels for n in names):
            return labels[names[0]], labels[names[1]], foot
    return limb_chain(skeleton, foot)
