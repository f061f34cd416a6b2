"""Body model: segment masses, centres of mass and inertia from de Leva (1996), mapped onto any humanoid.

de Leva P. (1996) "Adjustments to Zatsiorsky-Seluyanov's segment inertia parameters",
J. Biomech. 29(9):1223-1230, Table 4. Per segment and sex: mass as a fraction of body
mass, centre of mass (CoM) as a fraction of the segment length from its proximal endpoint,
and radii of gyration as fractions of the segment length about the sagittal, transverse and
longitudinal axes. The segment endpoints (de Leva's landmarks) are replaced by joints:

============== ========================= ======================================== ==================
segment         de Leva endpoints          skeleton endpoints                       carried by joint
============== ========================= ======================================== ==================
head + neck     vertex → C7 (cervicale)    neck base → head top (see below)         head
upper trunk     suprasternale → xiphoid    } the spine polyline mid-hip → pelvis →   the spine joint
middle trunk    xiphoid → omphalion        } spine joints → neck base, cut by de     whose bone holds
lower trunk     omphalion → mid-hip        } Leva's sub-segment lengths              the sub-segment CoM
upper arm       shoulder → elbow           upper joint → mid joint of the arm       upper arm joint
forearm         elbow → wrist              mid joint → hand joint (or wrist)        forearm joint
hand            wrist → 3rd metacarpale    hand joint → finger base direction       hand (else forearm) joint
thigh           hip → knee                 upper joint → mid joint of the leg       thigh joint
shank           knee → lateral malleolus   mid joint → foot joint                   shank joint
foot            heel → toe tip             foot joint → toe tip (end site or toe)   foot joint
============== ========================= ======================================== ==================

Joints are found with :mod:`core.limbs` (feet, arms however they end, limb chains, body root)
across naming conventions; the head is the joint whose name base is ``head`` (else the highest
leaf in the rest pose), the chest is the nearest common ancestor of the two upper arms and the
neck base its child towards the head. Where the skeleton has no landmark the length comes from
de Leva's mean lengths relative to stature: the head top lies along neck base → head at
0.2429/1.741 of the height from the neck base when the head has no End Site above it; the hand's
metacarpale lies along the hand's first finger child (or End Site, or the forearm direction)
at the de Leva hand/forearm length ratio. An arm without a hand joint (a game rig, a capture whose
hands were deleted: :func:`core.limbs.find_arms`) ends at the wrist: the farthest point of the
forearm's own bone (End Site, twist segments) when it lies 0.6 of the upper arm away or more,
else the elbow + the upper arm × de Leva's forearm/upper-arm length ratio (a straight arm); its hand
segment lies beyond the wrist along the forearm and its mass goes on the forearm joint. On CMU
02_01 (1.4×, 90 kg) with ``LeftHand``/``RightHand`` and below deleted, the arms carried 0 kg
before (their 9.9 kg spread over the trunk and legs, the chest taken at ``Neck1``: 15.9 kg on the
neck, the rest-pose CoM 26 mm higher); now 4.45 kg each as on the whole rig, the CoM within
0.01 mm of it (0.12 mm without an End Site at the wrist), and the solve's figures before physics those of
the whole rig (ZMP inside 75.8 % of contact frames, worst |τ|/limit 1.046; they read 77.0 % and 1.029).
Every other joint (clavicles, CMU's LHipJoint and Neck joints, toes, fingers, a
static placement root) carries zero mass. A segment whose joints cannot be found is left out
and the others are scaled so the masses still sum to the total (:attr:`BodyModel.missing` names
them) — up to :data:`MAX_MISSING_SHARE` (15 %) of de Leva's mass: a rig without hands, toes,
a neck, a head (6.9 %) or both arms (9.9 %) runs with a note; beyond it (a rig of pelvis and legs
only, no trunk or head: 60 %) the model is refused (:func:`check_whole`), because every joint load
is then computed on segments 1/(1 − share) too heavy (+18 % at 15 %) and the stature is not a
body's (a legs-only rig read 0.92 m). A trunk is missing when the head found lies on a leg.

Inertia: each segment's principal axes are its longitudinal axis (proximal → distal) and two
transverse axes, one lateral (the body's left-right axis from the hips, or the forward axis
when the segment itself is lateral, like arms in a T-pose) and their cross product. The
sagittal radius goes with the axis normal to the frontal plane, the transverse one with the
lateral axis (the reading of Gurchiek's table notes; the two differ by a few per cent).
Segments sharing a joint are combined with the parallel-axis theorem.

Torque limits (:data:`TORQUE_LIMITS`, N·m per kg of body mass, applied to the norm of the
3-D joint moment): order-of-magnitude maximal voluntary joint moments of healthy adults
(hip and knee ~3, ankle plantar flexion ~2.5, lumbar ~3.5, shoulder ~1, elbow ~0.8, wrist
~0.25, neck ~0.6 N·m/kg). Joint moments scale with muscle cross-section times lever arm,
i.e. with body mass under geometric similarity, hence per kg. Joints without a role (and the
root, whose "torque" is the residual that no muscle produces) get no limit (inf).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import quaternion as quat
from ..limbs import body_root, detect_up, find_arms, find_feet, find_head, limb_chain, standing_height
from ..skeleton import Skeleton, rest_world
from .errors import PhysicsError

G = 9.81  # m/s², standard gravity

# name: (mass fraction, CoM from proximal, r_sagittal, r_transverse, r_longitudinal) — de Leva 1996, Table 4.
DE_LEVA: dict[str, dict[str, tuple[float, float, float, float, float]]] = {
    "male": {
        "head": (0.0694, 0.5002, 0.303, 0.315, 0.261),  # vertex → C7 (alternative head definition)
        "upper_trunk": (0.1596, 0.2999, 0.716, 0.454, 0.659),
        "middle_trunk": (0.1633, 0.4502, 0.482, 0.383, 0.468),
        "lower_trunk": (0.1117, 0.6115, 0.615, 0.551, 0.587),
        "upper_arm": (0.0271, 0.5772, 0.285, 0.269, 0.158),
        "forearm": (0.0162, 0.4574, 0.276, 0.265, 0.121),
        "hand": (0.0061, 0.7900, 0.628, 0.513, 0.401),
        "thigh": (0.1416, 0.4095, 0.329, 0.329, 0.149),
        "shank": (0.0433, 0.4459, 0.255, 0.249, 0.103),
        "foot": (0.0137, 0.4415, 0.257, 0.245, 0.124),
    },
    "female": {
        "head": (0.0668, 0.4841, 0.271, 0.295, 0.261),
        "upper_trunk": (0.1545, 0.2077, 0.746, 0.502, 0.718),
        "middle_trunk": (0.1465, 0.4512, 0.433, 0.354, 0.415),
        "lower_trunk": (0.1247, 0.4920, 0.433, 0.402, 0.444),
        "upper_arm": (0.0255, 0.5754, 0.278, 0.260, 0.148),
        "forearm": (0.0138, 0.4559, 0.261, 0.257, 0.094),
        "hand": (0.0056, 0.7474, 0.531, 0.454, 0.335),
        "thigh": (0.1478, 0.3612, 0.369, 0.364, 0.162),
        "shank": (0.0481, 0.4416, 0.271, 0.267, 0.093),
        "foot": (0.0129, 0.4014, 0.299, 0.279, 0.139),
    },
}
# Mean segment lengths / stature (de Leva 1996: males 1.741 m, females 1.735 m).
DE_LEVA_LENGTHS = {
    "male": {
        "head": 0.2429 / 1.741,
        "trunk": (0.1707, 0.2155, 0.1457),
        "hand_forearm": 0.0862 / 0.2689,
        "forearm_upper_arm": 0.2689 / 0.2817,
    },
    "female": {
        "head": 0.2437 / 1.735,
        "trunk": (0.1425, 0.2053, 0.1815),
        "hand_forearm": 0.0780 / 0.2643,
        "forearm_upper_arm": 0.2643 / 0.2751,
    },
}
FOOT_PER_SHANK = 258.1 / 434.0  # de Leva (1996) male mean foot length / shank length (heel → toe tip, knee → malleolus)
# The most of de Leva's body mass the segments a rig lacks may carry (module notes): both arms (9.9 %) pass, so do
# hands, feet or a head; a trunk (43.5 %), a leg (19.9 %) or the head and both arms (16.8 %) do not.
MAX_MISSING_SHARE = 0.15
# Default torque limits in N·m per kg of body mass, by joint role (see the module notes).
TORQUE_LIMITS = {
    "hip": 3.0,
    "knee": 3.0,
    "ankle": 2.5,
    "spine": 3.5,
    "neck": 0.6,
    "shoulder": 1.0,
    "elbow": 0.8,
    "wrist": 0.25,
}


@dataclass(eq=False)
class BodyModel:
    """Mass properties of a skeleton's rigid bodies (the body of joint j moves with j's world transform).

    mass: total kg; height: stature in metres; unit: metres per scene unit; up: (3,) world up.
    masses: (J,) kg; com_local: (J, 3) CoM of each joint's body in that joint's frame, scene
    units; inertia_local: (J, 3, 3) kg·m² about that CoM in the joint's frame; torque_limits:
    (J,) N·m (inf: not limited); segments: de Leva segment name (with side suffix) → joint;
    roles: joint role ("hip", "knee", ...) → joints; missing: segments not found.
    """

    skeleton: Skeleton
    mass: float
    height: float
    unit: float
    up: np.ndarray
    masses: np.ndarray
    com_local: np.ndarray
    inertia_local: np.ndarray
    torque_limits: np.ndarray
    segments: dict[str, int] = field(default_factory=dict)
    roles: dict[str, list[int]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    sex: str = "male"


def _end_sites(skeleton: Skeleton, joint: int, rest: np.ndarray, rest_rot: np.ndarray) -> np.ndarray:
    """(E, 3) rest world positions of ``joint``'s End Sites."""
    sel = skeleton.end_site_parents == joint
    return rest[joint] + quat.rotate(rest_rot[joint], skeleton.end_site_offsets[sel])


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 1e-12 else v


def _distal_direction(skeleton: Skeleton, joint: int, rest: np.ndarray, rest_rot: np.ndarray, fallback: np.ndarray):
    """Unit direction from ``joint`` to its main child (most descendants), else its End Site, else ``fallback``."""
    children = skeleton.children(joint)
    if len(children):
        sizes = [skeleton.subtree(int(c)).sum() + np.linalg.norm(skeleton.rest_translations[c]) for c in children]
        d = rest[children[int(np.argmax(sizes))]] - rest[joint]
        if np.linalg.norm(d) > 1e-9:
            return _unit(d)
    ends = _end_sites(skeleton, joint, rest, rest_rot)
    if len(ends) and np.linalg.norm(ends[0] - rest[joint]) > 1e-9:
        return _unit(ends[0] - rest[joint])
    return _unit(fallback)


@dataclass
class _Segment:
    name: str
    joint: int
    proximal: np.ndarray  # (3,) rest world, scene units
    distal: np.ndarray
    com: np.ndarray  # (3,) rest world CoM
    params: tuple[float, float, float, float, float]


def _segment(name, joint, proximal, distal, params, com=None) -> _Segment:
    com = proximal + params[1] * (distal - proximal) if com is None else com
    return _Segment(name, int(joint), proximal, distal, com, params)


def leg_chain(skeleton: Skeleton, foot: int) -> tuple[int, int, int]:
    """(hip, knee, ankle) joints of the leg ending at ``foot`` (:func:`core.limbs.limb_chain`); a PhysicsError
    naming the foot when no thigh and shank lie above it (a foot hanging from the root, a leg of one bone)."""
    try:
        return limb_chain(skeleton, foot)
    except ValueError as exc:
        raise PhysicsError(f"foot {skeleton.names[foot]!r} has no leg above it: physics needs a thigh and a shank "
                           "between the pelvis and each foot") from exc  # fmt: skip


def _limb_segments(skeleton, rest, rest_rot, table, sex, up) -> tuple[list[_Segment], list[str], dict]:
    """Thigh, shank, foot, upper arm, forearm and hand segments of both sides."""
    segs, missing, roles = [], [], {r: [] for r in ("hip", "knee", "ankle", "shoulder", "elbow", "wrist")}
    try:
        feet = find_feet(skeleton, up)
    except ValueError:
        feet = {}
    for side, (foot, toe) in feet.items():
        hip, knee, _ = leg_chain(skeleton, foot)
        tip = rest[toe] if toe is not None else rest[foot]
        if toe is not None and len(ends := _end_sites(skeleton, toe, rest, rest_rot)):
            tip = ends[0]
        segs += [
            _segment(f"thigh_{side}", hip, rest[hip], rest[knee], table["thigh"]),
            _segment(f"shank_{side}", knee, rest[knee], rest[foot], table["shank"]),
            _segment(f"foot_{side}", foot, rest[foot], tip, table["foot"]),
        ]
        roles["hip"].append(hip), roles["knee"].append(knee), roles["ankle"].append(foot)
    arms = find_arms(skeleton)
    for side, (shoulder, elbow, hand) in arms.items():
        segs += _arm(skeleton, rest, rest_rot, table, sex, side, shoulder, elbow, hand)
        roles["shoulder"].append(shoulder), roles["elbow"].append(elbow)
        roles["wrist"] += [hand] if hand is not None else []
    for side in ("L", "R"):
        if not feet:
            missing += [f"thigh_{side}", f"shank_{side}", f"foot_{side}"]
        if side not in arms and len(arms) < 2:  # found by topology: sides "A", "B"
            missing += [f"upper_arm_{side}", f"forearm_{side}", f"hand_{side}"]
    return segs, missing, roles


def _arm(skeleton, rest, rest_rot, table, sex, side, shoulder, elbow, hand) -> list[_Segment]:
    """Upper arm, forearm and hand segments of one arm; without a hand joint (None) the hand's mass goes on
    the forearm joint, at the wrist + de Leva's hand length along the forearm (module notes)."""
    wrist = rest[hand] if hand is not None else _wrist(skeleton, rest, rest_rot, shoulder, elbow, sex)
    forearm = wrist - rest[elbow]
    direction = _distal_direction(skeleton, hand, rest, rest_rot, forearm) if hand is not None else _unit(forearm)
    knuckle = wrist + direction * DE_LEVA_LENGTHS[sex]["hand_forearm"] * np.linalg.norm(forearm)
    return [
        _segment(f"upper_arm_{side}", shoulder, rest[shoulder], rest[elbow], table["upper_arm"]),
        _segment(f"forearm_{side}", elbow, rest[elbow], wrist, table["forearm"]),
        _segment(f"hand_{side}", elbow if hand is None else hand, wrist, knuckle, table["hand"]),
    ]


def _wrist(skeleton, rest, rest_rot, shoulder: int, elbow: int, sex: str) -> np.ndarray:
    """(3,) rest world wrist of an arm without a hand joint: the point of the forearm's subtree (joints, End
    Sites) farthest from the elbow when it lies at least 0.6 of the upper arm away (an End Site at the wrist, the
    last twist segment's end: CMU's forearm is 0.69 of its upper arm; not iClone's mid-forearm twist joint, 0.51);
    else the elbow + de Leva's forearm length along the upper arm (a straight arm)."""
    inside = np.flatnonzero(skeleton.subtree(elbow))
    points = np.concatenate([rest[inside], *(_end_sites(skeleton, int(j), rest, rest_rot) for j in inside)])
    reach = np.linalg.norm(points - rest[elbow], axis=1)
    upper = rest[elbow] - rest[shoulder]
    if reach.max() >= 0.6 * np.linalg.norm(upper):
        return points[int(np.argmax(reach))]
    return rest[elbow] + upper * DE_LEVA_LENGTHS[sex]["forearm_upper_arm"]


def _trunk_and_head(
    skeleton, rest, rest_rot, table, sex, up, height_units, hips, shoulders
) -> tuple[list[_Segment], dict]:
    """Head + neck and the three trunk sub-segments on the spine joints. None when the head found lies on a leg
    (or is the pelvis): a rig of pelvis and legs only has no trunk or head; no head segment when it lies on an
    arm (a headless rig's highest leaf is a hand). hips, shoulders: the legs' and arms' upper joints."""
    head = find_head(skeleton, rest, up)
    pelvis = _pelvis(skeleton, hips, shoulders or [head])
    if head == pelvis or any(skeleton.subtree(hip)[head] for hip in hips):
        return [], {}
    headless = any(skeleton.subtree(upper)[head] for upper in shoulders)
    chest = skeleton.common_ancestor(*shoulders) if len(shoulders) == 2 else -1
    chest = chest if chest >= 0 else int(skeleton.parents[shoulders[0] if headless else head])  # arms apart
    path = skeleton.path_to_root(head)
    neck_base = path[path.index(chest) - 1] if chest in path and path.index(chest) > 0 else head
    neck_base = chest if headless else neck_base
    spine = skeleton.path_to_root(chest)
    spine = spine[: spine.index(pelvis) + 1][::-1] if pelvis in spine else [chest]
    mid_hip = rest[hips].mean(axis=0) if len(hips) == 2 else rest[pelvis]
    segs = _trunk(np.array([mid_hip, *rest[spine], rest[neck_base]]), [spine[0], *spine], table, sex)
    if not headless:
        segs.append(_head(skeleton, rest, rest_rot, table, sex, up, height_units, head, neck_base))
    roles = {"spine": [j for j in spine if j != pelvis] or [], "neck": [] if headless else [head], "pelvis": [pelvis]}
    return segs, roles


def _pelvis(skeleton: Skeleton, hips: list[int], upper: list[int]) -> int:
    """Where the legs and the trunk meet: the deepest common ancestor of both ``hips`` and the joints ``upper``
    (the shoulders, else the head), else :func:`core.limbs.body_root` (the shallowest branching joint). Not that
    one alone: an Unreal mannequin's ``root`` lies on the floor above its ``pelvis``, holding the IK bones too, and
    took the pelvis' role (the lower trunk drawn down to the floor and back, the filter turning the body about
    the floor): CMU 01_01's jumps on that rig read ZMP inside 28 % of contact frames and no flight."""
    if len(hips) == 2 and upper:
        meet = hips[0]
        for j in [hips[1], *upper]:
            meet = skeleton.common_ancestor(meet, int(j)) if meet >= 0 else meet
        if meet >= 0 and meet not in upper:
            return int(meet)
    return body_root(skeleton)


def _trunk(points: np.ndarray, owners: list[int], table, sex) -> list[_Segment]:
    """Upper, middle and lower trunk cut from the polyline ``points`` (P, 3) mid-hip → pelvis → … → chest → neck
    base by de Leva's sub-segment lengths; piece k of the polyline belongs to joint ``owners[k]``."""
    lengths = np.linalg.norm(np.diff(points, axis=0), axis=1)
    arc = np.concatenate(([0.0], np.cumsum(lengths)))
    parts = np.array(DE_LEVA_LENGTHS[sex]["trunk"])  # upper, middle, lower (top down)
    bounds = arc[-1] * (1.0 - np.concatenate(([0.0], np.cumsum(parts) / parts.sum())))  # arc from mid-hip
    segs = []
    for k, name in enumerate(("upper_trunk", "middle_trunk", "lower_trunk")):
        params = table[name]
        s = bounds[k] + params[1] * (bounds[k + 1] - bounds[k])  # CoM from the proximal (upper) end
        piece = int(np.clip(np.searchsorted(arc, s, side="right") - 1, 0, len(lengths) - 1))
        w = (s - arc[piece]) / lengths[piece] if lengths[piece] > 0 else 0.0
        com = points[piece] + w * (points[piece + 1] - points[piece])
        top = np.array([np.interp(bounds[k], arc, points[:, c]) for c in range(3)])
        bottom = np.array([np.interp(bounds[k + 1], arc, points[:, c]) for c in range(3)])
        segs.append(_segment(name, owners[piece], top, bottom, params, com))
    return segs


def _head(skeleton, rest, rest_rot, table, sex, up, height_units, head: int, neck_base: int) -> _Segment:
    """Head + neck from the neck base to the head top (module notes)."""
    head_tops = [rest[head], *_end_sites(skeleton, head, rest, rest_rot)]
    top = max(head_tops, key=lambda p: p @ up)
    length = DE_LEVA_LENGTHS[sex]["head"] * height_units
    if np.linalg.norm(top - rest[neck_base]) < length:
        top = rest[neck_base] + _unit(top - rest[neck_base] if head != neck_base else up) * length
    return _segment("head", head, top, rest[neck_base], table["head"])


def check_whole(missing: list[str], table: dict[str, tuple]) -> None:
    """PhysicsError naming the segments not found when they carry more than :data:`MAX_MISSING_SHARE` of de Leva's
    body mass (``table``: :data:`DE_LEVA`'s for the sex; names with a side suffix, as :attr:`BodyModel.missing`)."""
    parts = [name.rsplit("_", 1) if name[-2:] in ("_L", "_R", "_A", "_B") else (name, "") for name in missing]
    share = sum(table[segment][0] for segment, _ in parts)
    if share > MAX_MISSING_SHARE:
        sides = {"L": "left ", "R": "right ", "A": "", "B": ""}
        named = ", ".join(dict.fromkeys(f"{sides.get(side, '')}{segment.replace('_', ' ')}" for segment, side in parts))
        lacks = "no trunk or head" if "head" in missing else "parts missing"
        raise PhysicsError(f"physics needs a whole body and this skeleton has {lacks} ({named} not found: "
                           f"{share:.0%} of the body's mass; at most {MAX_MISSING_SHARE:.0%} may be missing)")  # fmt: skip


def _principal_axes(long_axis: np.ndarray, lateral: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """(3, 3) rows: frontal-normal axis, lateral axis, longitudinal axis of a segment."""
    e_l = _unit(long_axis)
    ref = lateral if abs(e_l @ lateral) < 0.7 else forward
    e_z = _unit(ref - (ref @ e_l) * e_l)
    return np.stack((np.cross(e_z, e_l), e_z, e_l))


def _segment_inertia(seg: _Segment, mass: float, unit: float, lateral, forward) -> np.ndarray:
    """(3, 3) world-frame inertia about the segment CoM, kg·m²."""
    length = np.linalg.norm(seg.distal - seg.proximal) * unit
    radii = np.array(seg.params[2:]) * length
    axes = _principal_axes(seg.distal - seg.proximal, lateral, forward)
    return axes.T @ np.diag(mass * radii**2) @ axes


def body_model(
    skeleton: Skeleton,
    mass: float,
    height: float | None = None,
    unit: float | None = None,
    sex: str = "male",
    up: np.ndarray | None = None,
    torque_limits: dict[str, float] | None = None,
) -> BodyModel:
    """de Leva body model of a humanoid skeleton scaled to ``mass`` kg (see the module notes).

    height: stature in metres, or unit: metres per scene unit (give one; with height the
    unit is height / rest-pose standing height, with unit the height follows; with neither
    the scene unit is taken as 1 m). up: (3,) world up (default :func:`core.limbs.detect_up`).
    torque_limits: N·m per kg by role, overriding :data:`TORQUE_LIMITS`.
    """
    if sex not in DE_LEVA:
        raise PhysicsError(f"sex must be 'male' or 'female', got {sex!r}")
    up = detect_up(skeleton) if up is None else _unit(np.asarray(up, dtype=float))
    stand = standing_height(skeleton, up)
    if unit is None:
        unit = height / stand if height is not None else 1.0
    height = stand * unit if height is None else float(height)
    table = DE_LEVA[sex]
    rest, rest_rot = rest_world(skeleton)
    segs, missing, roles = _limb_segments(skeleton, rest, rest_rot, table, sex, up)
    hips = roles["hip"]
    trunk, trunk_roles = _trunk_and_head(
        skeleton, rest, rest_rot, table, sex, up, height / unit, hips, roles["shoulder"]
    )
    segs += trunk
    roles |= trunk_roles
    found = {seg.name for seg in trunk}
    missing += [name for name in ("head", "upper_trunk", "middle_trunk", "lower_trunk") if name not in found]
    check_whole(missing, table)
    lateral = _unit(np.cross(up, np.cross(rest[hips[1]] - rest[hips[0]], up))) if len(hips) == 2 else None
    if lateral is None or np.linalg.norm(lateral) < 0.5:
        lateral = np.eye(3)[int(np.argmin(np.abs(up)))]
    forward = np.cross(lateral, up)
    fractions = np.array([s.params[0] for s in segs])
    seg_mass = mass * fractions / fractions.sum()
    j = skeleton.n_joints
    masses, first, second = np.zeros(j), np.zeros((j, 3)), np.zeros((j, 3, 3))
    for seg, m in zip(segs, seg_mass):
        masses[seg.joint] += m
        first[seg.joint] += m * seg.com
        second[seg.joint] += _segment_inertia(seg, m, unit, lateral, forward) + m * _outer_sq(seg.com * unit)
    com_world = np.divide(first, masses[:, None], out=rest.copy(), where=masses[:, None] > 0)
    inertia_world = second - masses[:, None, None] * _outer_sq(com_world * unit)  # parallel-axis back to the CoM
    r = quat.to_matrix(rest_rot)
    com_local = np.einsum("jki,jk->ji", r, com_world - rest)
    inertia_local = np.einsum("jki,jkl,jlm->jim", r, inertia_world, r)
    limits = TORQUE_LIMITS | (torque_limits or {})
    tau = np.full(j, np.inf)
    for role, joints in roles.items():
        if role in limits:
            tau[joints] = limits[role] * mass
    return BodyModel(
        skeleton,
        float(mass),
        float(height),
        float(unit),
        up,
        masses,
        com_local,
        inertia_local,
        tau,
        {s.name: s.joint for s in segs},
        roles,
        missing,
        sex,
    )


def _outer_sq(r: np.ndarray) -> np.ndarray:
    """Point-mass inertia term (|r|² I − r rᵀ) for vectors r (..., 3) → (..., 3, 3)."""
    return np.einsum("...i,...i->...", r, r)[..., None, None] * np.eye(3) - r[..., :, None] * r[..., None, :]
