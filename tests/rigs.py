"""Synthetic humanoid skeletons named after real conventions, for retargeting tests.

Names are written out here as each tool writes them (not taken from core/retarget), so the
tests check the core's tables against an independent list. One layout (Y-up, metres, facing
+Z, character's left at +X) is shared; each convention names the joints it has, and joints
it lacks are skipped (their children hang from the nearest named ancestor). Extras are
convention-specific bones with no canonical meaning (twist segments, root bones, tips).
"""

from __future__ import annotations

import numpy as np

from core import quaternion as quat
from core.anonymise import anonymise  # noqa: F401  (the tests' name for it)
from core.skeleton import Skeleton

# canonical joint, parent, world position (m): the left side; the right side is mirrored.
LAYOUT = [
    ("hips", None, (0.0, 0.95, 0.0)),
    ("hip_joint.L", "hips", (0.04, 0.93, 0.0)),
    ("upper_leg.L", "hip_joint.L", (0.1, 0.9, 0.0)),
    ("lower_leg.L", "upper_leg.L", (0.1, 0.5, 0.015)),
    ("foot.L", "lower_leg.L", (0.1, 0.08, 0.0)),
    ("toe.L", "foot.L", (0.1, 0.02, 0.13)),
    ("spine", "hips", (0.0, 1.05, 0.0)),
    ("spine1", "spine", (0.0, 1.16, 0.0)),
    ("chest", "spine1", (0.0, 1.28, 0.0)),
    ("neck", "chest", (0.0, 1.46, 0.0)),
    ("neck1", "neck", (0.0, 1.52, 0.0)),
    ("head", "neck1", (0.0, 1.58, 0.0)),
    ("shoulder.L", "chest", (0.03, 1.42, 0.0)),
    ("upper_arm.L", "shoulder.L", (0.17, 1.42, 0.0)),
    ("forearm.L", "upper_arm.L", (0.45, 1.42, -0.01)),
    ("hand.L", "forearm.L", (0.7, 1.42, 0.0)),
    ("finger_base.L", "hand.L", (0.74, 1.42, 0.0)),
    ("index.L", "finger_base.L", (0.8, 1.42, 0.0)),
    ("thumb.L", "hand.L", (0.73, 1.41, 0.03)),
]
TIPS = {"head": (0.0, 0.18, 0.0), "index.L": (0.05, 0.0, 0.0), "thumb.L": (0.03, 0.0, 0.03), "toe.L": (0.0, 0.0, 0.06)}

SIDE_SWAPS = (("Left", "Right"), ("_L", "_R"), (".L", ".R"), ("_l", "_r"), ("LHip", "RHip"), ("LTh", "RTh"),
              ("LFi", "RFi"), (" L ", " R "))  # fmt: skip

NAMES = {
    "cmu_cgspeed": {
        "hips": "Hips", "hip_joint.L": "LHipJoint", "upper_leg.L": "LeftUpLeg", "lower_leg.L": "LeftLeg",
        "foot.L": "LeftFoot", "toe.L": "LeftToeBase", "spine": "LowerBack", "spine1": "Spine", "chest": "Spine1",
        "neck": "Neck", "neck1": "Neck1", "head": "Head", "shoulder.L": "LeftShoulder", "upper_arm.L": "LeftArm",
        "forearm.L": "LeftForeArm", "hand.L": "LeftHand", "finger_base.L": "LeftFingerBase",
        "index.L": "LeftHandIndex1", "thumb.L": "LThumb",
    },
    "cmu_3dsmax": {
        "hips": "Hips", "hip_joint.L": "LHipJoint", "upper_leg.L": "LeftHip", "lower_leg.L": "LeftKnee",
        "foot.L": "LeftAnkle", "toe.L": "LeftToe", "spine": "lowerback", "spine1": "Chest", "chest": "Chest2",
        "neck": "lowerneck", "neck1": "Neck", "head": "Head", "shoulder.L": "LeftCollar",
        "upper_arm.L": "LeftShoulder", "forearm.L": "LeftElbow", "hand.L": "LeftWrist", "finger_base.L": "lhand",
        "index.L": "LFingers", "thumb.L": "LThumb",
    },
    "cmu_asf": {
        "hips": "root", "hip_joint.L": "lhipjoint", "upper_leg.L": "lfemur", "lower_leg.L": "ltibia",
        "foot.L": "lfoot", "toe.L": "ltoes", "spine": "lowerback", "spine1": "upperback", "chest": "thorax",
        "neck": "lowerneck", "neck1": "upperneck", "head": "head", "shoulder.L": "lclavicle",
        "upper_arm.L": "lhumerus", "forearm.L": "lradius", "hand.L": "lwrist", "finger_base.L": "lhand",
        "index.L": "lfingers", "thumb.L": "lthumb",
    },
    "bandai_namco": {
        "hips": "Hips", "upper_leg.L": "UpperLeg_L", "lower_leg.L": "LowerLeg_L", "foot.L": "Foot_L",
        "toe.L": "Toes_L", "spine": "Spine", "chest": "Chest", "neck": "Neck", "head": "Head",
        "shoulder.L": "Shoulder_L", "upper_arm.L": "UpperArm_L", "forearm.L": "LowerArm_L", "hand.L": "Hand_L",
    },
    "mixamo": {
        "hips": "mixamorig:Hips", "upper_leg.L": "mixamorig:LeftUpLeg", "lower_leg.L": "mixamorig:LeftLeg",
        "foot.L": "mixamorig:LeftFoot", "toe.L": "mixamorig:LeftToeBase", "spine": "mixamorig:Spine",
        "spine1": "mixamorig:Spine1", "chest": "mixamorig:Spine2", "neck": "mixamorig:Neck",
        "head": "mixamorig:Head", "shoulder.L": "mixamorig:LeftShoulder", "upper_arm.L": "mixamorig:LeftArm",
        "forearm.L": "mixamorig:LeftForeArm", "hand.L": "mixamorig:LeftHand",
        "index.L": "mixamorig:LeftHandIndex1", "thumb.L": "mixamorig:LeftHandThumb1",
    },
    "rigify": {
        "hips": "DEF-spine", "upper_leg.L": "DEF-thigh.L", "lower_leg.L": "DEF-shin.L", "foot.L": "DEF-foot.L",
        "toe.L": "DEF-toe.L", "spine": "DEF-spine.001", "spine1": "DEF-spine.002", "chest": "DEF-spine.003",
        "neck": "DEF-spine.004", "neck1": "DEF-spine.005", "head": "DEF-spine.006", "shoulder.L": "DEF-shoulder.L",
        "upper_arm.L": "DEF-upper_arm.L", "forearm.L": "DEF-forearm.L", "hand.L": "DEF-hand.L",
        "index.L": "DEF-f_index.01.L", "thumb.L": "DEF-thumb.01.L",
    },
    "unreal": {
        "hips": "pelvis", "upper_leg.L": "thigh_l", "lower_leg.L": "calf_l", "foot.L": "foot_l", "toe.L": "ball_l",
        "spine": "spine_01", "spine1": "spine_02", "chest": "spine_05", "neck": "neck_01", "neck1": "neck_02",
        "head": "head", "shoulder.L": "clavicle_l", "upper_arm.L": "upperarm_l", "forearm.L": "lowerarm_l",
        "hand.L": "hand_l", "index.L": "index_01_l", "thumb.L": "thumb_01_l",
    },
    "character_creator": {
        "hips": "CC_Base_Hip", "upper_leg.L": "CC_Base_L_Thigh", "lower_leg.L": "CC_Base_L_Calf",
        "foot.L": "CC_Base_L_Foot", "toe.L": "CC_Base_L_ToeBase", "spine": "CC_Base_Waist", "spine1": "CC_Base_Spine01",
        "chest": "CC_Base_Spine02", "neck": "CC_Base_NeckTwist01", "neck1": "CC_Base_NeckTwist02",
        "head": "CC_Base_Head", "shoulder.L": "CC_Base_L_Clavicle", "upper_arm.L": "CC_Base_L_Upperarm",
        "forearm.L": "CC_Base_L_Forearm", "hand.L": "CC_Base_L_Hand", "index.L": "CC_Base_L_Index1",
        "thumb.L": "CC_Base_L_Thumb1",
    },
    "xsens_mvn": {
        "hips": "Pelvis", "upper_leg.L": "LeftUpperLeg", "lower_leg.L": "LeftLowerLeg", "foot.L": "LeftFoot",
        "toe.L": "LeftToe", "spine": "L5", "spine1": "L3", "chest": "T8", "neck": "Neck", "head": "Head",
        "shoulder.L": "LeftShoulder", "upper_arm.L": "LeftUpperArm", "forearm.L": "LeftForeArm", "hand.L": "LeftHand",
    },
    "perception_neuron": {
        "hips": "Hips", "upper_leg.L": "LeftUpLeg", "lower_leg.L": "LeftLeg", "foot.L": "LeftFoot",
        "spine": "Spine", "spine1": "Spine1", "chest": "Spine3", "neck": "Neck", "neck1": "Neck1", "head": "Head",
        "shoulder.L": "LeftShoulder", "upper_arm.L": "LeftArm", "forearm.L": "LeftForeArm", "hand.L": "LeftHand",
        "index.L": "LeftHandIndex1", "thumb.L": "LeftHandThumb1",
    },
    "unity_humanoid": {
        "hips": "Hips", "upper_leg.L": "LeftUpperLeg", "lower_leg.L": "LeftLowerLeg", "foot.L": "LeftFoot",
        "toe.L": "LeftToes", "spine": "Spine", "chest": "UpperChest", "neck": "Neck", "head": "Head",
        "shoulder.L": "LeftShoulder", "upper_arm.L": "LeftUpperArm", "forearm.L": "LeftLowerArm", "hand.L": "LeftHand",
        "index.L": "LeftIndexProximal", "thumb.L": "LeftThumbProximal",
    },
    "vrm": {
        "hips": "J_Bip_C_Hips", "upper_leg.L": "J_Bip_L_UpperLeg", "lower_leg.L": "J_Bip_L_LowerLeg",
        "foot.L": "J_Bip_L_Foot", "toe.L": "J_Bip_L_ToeBase", "spine": "J_Bip_C_Spine", "chest": "J_Bip_C_UpperChest",
        "neck": "J_Bip_C_Neck", "head": "J_Bip_C_Head", "shoulder.L": "J_Bip_L_Shoulder",
        "upper_arm.L": "J_Bip_L_UpperArm", "forearm.L": "J_Bip_L_LowerArm", "hand.L": "J_Bip_L_Hand",
        "index.L": "J_Bip_L_Index1", "thumb.L": "J_Bip_L_Thumb1",
    },
    "daz_genesis": {
        "hips": "hip", "upper_leg.L": "lThighBend", "lower_leg.L": "lShin", "foot.L": "lFoot", "toe.L": "lToe",
        "spine": "abdomenLower", "spine1": "abdomenUpper", "chest": "chestUpper", "neck": "neckLower",
        "neck1": "neckUpper", "head": "head", "shoulder.L": "lCollar", "upper_arm.L": "lShldrBend",
        "forearm.L": "lForearmBend", "hand.L": "lHand", "index.L": "lIndex1", "thumb.L": "lThumb1",
    },
    "3dsmax_biped": {
        "hips": "Bip01 Pelvis", "upper_leg.L": "Bip01 L Thigh", "lower_leg.L": "Bip01 L Calf",
        "foot.L": "Bip01 L Foot", "toe.L": "Bip01 L Toe0", "spine": "Bip01 Spine", "spine1": "Bip01 Spine1",
        "chest": "Bip01 Spine2", "neck": "Bip01 Neck", "head": "Bip01 Head", "shoulder.L": "Bip01 L Clavicle",
        "upper_arm.L": "Bip01 L UpperArm", "forearm.L": "Bip01 L Forearm", "hand.L": "Bip01 L Hand",
        "index.L": "Bip01 L Finger1", "thumb.L": "Bip01 L Finger0",
    },
}  # fmt: skip

# name, parent name, position: a point, or ("between", a, b, t) on the segment between two named joints.
EXTRAS = {
    "bandai_namco": [("joint_Root", None, (0.0, 0.0, 0.0))],
    "character_creator": [("CC_Base_Pelvis", "CC_Base_Hip", (0.0, 0.95, 0.0)),
                          ("CC_Base_L_ThighTwist01", "CC_Base_L_Thigh", ("between", "CC_Base_L_Thigh", "CC_Base_L_Calf", 0.0)),
                          ("CC_Base_L_ThighTwist02", "CC_Base_L_ThighTwist01", ("between", "CC_Base_L_Thigh", "CC_Base_L_Calf", 0.5)),
                          ("CC_Base_L_KneeShareBone", "CC_Base_L_Calf", ("between", "CC_Base_L_Calf", "CC_Base_L_Foot", 0.0)),
                          ("CC_Base_L_ForearmTwist01", "CC_Base_L_Forearm", ("between", "CC_Base_L_Forearm", "CC_Base_L_Hand", 0.0)),
                          ("CC_Base_L_ForearmTwist02", "CC_Base_L_ForearmTwist01", ("between", "CC_Base_L_Forearm", "CC_Base_L_Hand", 0.5))],
    "daz_genesis": [("pelvis", "hip", (0.0, 0.94, 0.0)),
                    ("lThighTwist", "lThighBend", ("between", "lThighBend", "lShin", 0.4))],
    "3dsmax_biped": [("Bip01", None, (0.0, 0.95, 0.0)), ("Bip01 Footsteps", "Bip01", (0.0, 0.0, 0.0))],
    "mixamo": [("mixamorig:HeadTop_End", "mixamorig:Head", (0.0, 1.76, 0.0)),
               ("mixamorig:LeftToe_End", "mixamorig:LeftToeBase", (0.1, 0.02, 0.19))],
    "rigify": [("DEF-thigh.L.001", "DEF-thigh.L", ("between", "DEF-thigh.L", "DEF-shin.L", 0.5)),
               ("DEF-shin.L.001", "DEF-shin.L", ("between", "DEF-shin.L", "DEF-foot.L", 0.5)),
               ("DEF-upper_arm.L.001", "DEF-upper_arm.L", ("between", "DEF-upper_arm.L", "DEF-forearm.L", 0.5)),
               ("DEF-forearm.L.001", "DEF-forearm.L", ("between", "DEF-forearm.L", "DEF-hand.L", 0.5)),
               ("DEF-pelvis.L", "DEF-spine", (0.08, 0.97, 0.05)), ("DEF-breast.L", "DEF-spine.003", (0.1, 1.3, 0.08))],
    "unreal": [("root", None, (0.0, 0.0, 0.0)),
               ("spine_03", "spine_02", ("between", "spine_02", "spine_05", 1 / 3)),
               ("spine_04", "spine_03", ("between", "spine_02", "spine_05", 2 / 3)),
               ("upperarm_twist_01_l", "upperarm_l", ("between", "upperarm_l", "lowerarm_l", 0.5)),
               ("thigh_twist_01_l", "thigh_l", ("between", "thigh_l", "calf_l", 0.5)),
               ("ik_foot_root", "root", (0.0, 0.0, 0.0)), ("ik_foot_l", "ik_foot_root", (0.1, 0.08, 0.0))],
}  # fmt: skip
# Where extras are inserted in a chain, the named child is re-parented below them.
REPARENT = {
    "rigify": {"DEF-shin.L": "DEF-thigh.L.001", "DEF-foot.L": "DEF-shin.L.001", "DEF-forearm.L": "DEF-upper_arm.L.001",
               "DEF-hand.L": "DEF-forearm.L.001"},
    "unreal": {"spine_05": "spine_04", "pelvis": "root"},
    "bandai_namco": {"Hips": "joint_Root"},
    "character_creator": {"CC_Base_L_Thigh": "CC_Base_Pelvis"},
    "daz_genesis": {"lThighBend": "pelvis", "lShin": "lThighBend"},
    "3dsmax_biped": {"Bip01 Pelvis": "Bip01"},
}  # fmt: skip


def right_side(name: str) -> str:
    for a, b in SIDE_SWAPS:
        if a in name:
            return name.replace(a, b, 1)  # the side only: VRM J_Bip_L_LowerArm is not J_Bip_R_RowerArm
    return "r" + name[1:]  # CMU ASF / 3ds Max lower case: lfoot → rfoot, lhand → rhand


def _is_left(name: str) -> bool:
    return any(a in name for a, _ in SIDE_SWAPS) or (name[:1] == "l" and name[1:2].isupper())  # Daz: lShin


def _mirror(spec):
    if isinstance(spec, tuple) and spec and spec[0] == "between":
        return ("between", right_side(spec[1]), right_side(spec[2]), spec[3])
    return (-spec[0], spec[1], spec[2])


_LAYOUT_PARENT = {c: p for c, p, _ in LAYOUT}


def _named_joints(convention: str) -> tuple[dict, dict, dict]:
    """(canonical → name, name → parent name, name → position spec) of the layout joints a convention names."""
    named = NAMES[convention]
    canon, parent_of, spec = {}, {}, {}
    for c, parent, pos in LAYOUT:
        if c not in named:
            continue
        p = parent
        while p is not None and p not in named:
            p = _LAYOUT_PARENT[p]
        for side in ("L", "R") if c.endswith(".L") else ("",):
            right = side == "R"
            name = right_side(named[c]) if right else named[c]
            pname = None if p is None else (right_side(named[p]) if right and p.endswith(".L") else named[p])
            canon[c[:-2] + ".R" if right else c] = name
            parent_of[name], spec[name] = pname, (_mirror(pos) if right else pos)
    return canon, parent_of, spec


def layout(convention: str) -> tuple[list[str], list[str | None], np.ndarray, dict[str, str]]:
    """(names, parent names, world positions (J, 3), canonical → name) of a convention's rig, parents first."""
    canon, parent_of, spec = _named_joints(convention)
    for name, parent, pos in EXTRAS.get(convention, []):
        parent_of[name], spec[name] = parent, pos
        if _is_left(name):
            parent_of[right_side(name)] = right_side(parent) if parent and _is_left(parent) else parent
            spec[right_side(name)] = _mirror(pos)
    for child, parent in REPARENT.get(convention, {}).items():
        parent_of[child] = parent
        if _is_left(child):
            parent_of[right_side(child)] = right_side(parent) if _is_left(parent) else parent
    positions: dict[str, np.ndarray] = {}

    def position(name: str) -> np.ndarray:
        if name not in positions:
            s = spec[name]
            if s[0] == "between":
                positions[name] = (1 - s[3]) * position(s[1]) + s[3] * position(s[2])
            else:
                positions[name] = np.array(s, dtype=float)
        return positions[name]

    order: list[str] = []

    def visit(name: str) -> None:
        if name not in order:
            if parent_of[name] is not None:
                visit(parent_of[name])
            order.append(name)

    for name in parent_of:
        visit(name)
    return order, [parent_of[n] for n in order], np.array([position(n) for n in order]), canon


def build(
    convention: str, scale: float = 1.0, a_pose: float = 0.0, rolls: bool = False, z_up: bool = False, seed: int = 0
) -> Skeleton:
    """A convention's rig as a Skeleton.

    scale: uniform size factor; a_pose: degrees the arms are lowered from the T-pose (about
    the forward axis at the shoulder joint); rolls: Blender-like bone frames (Y along the bone,
    random roll) instead of BVH identity rests; z_up: Blender's axes (Z up, facing −Y).
    """
    names, parents, pos, canon = layout(convention)
    pos = pos * scale
    if a_pose:
        for side, sign in (("L", -1.0), ("R", 1.0)):
            if f"upper_arm.{side}" not in canon:
                continue
            top = names.index(canon[f"upper_arm.{side}"])
            turn = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), sign * np.radians(a_pose))
            below = _below(names, parents, top)
            pos[below] = pos[top] + quat.rotate(turn, pos[below] - pos[top])
    tips = {}
    for c, offset in TIPS.items():
        for cc, o in ((c, offset), (c[:-2] + ".R", _mirror(offset))) if c.endswith(".L") else ((c, offset),):
            if cc in canon:
                tips[names.index(canon[cc])] = np.array(o) * scale
    if z_up:
        swap = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)  # (x, y, z) → (x, −z, y)
        pos = quat.rotate(swap, pos)
        tips = {j: quat.rotate(swap, t) for j, t in tips.items()}
    return _skeleton(names, parents, pos, tips, rolls, np.random.default_rng(seed))


def _below(names, parents, top) -> np.ndarray:
    mask = np.zeros(len(names), dtype=bool)
    mask[top] = True
    for j, p in enumerate(parents):
        if p is not None and mask[names.index(p)]:
            mask[j] = True
    mask[top] = False
    return np.flatnonzero(mask)


def _skeleton(names, parent_names, pos, tips, rolls, rng) -> Skeleton:
    parents = np.array([-1 if p is None else names.index(p) for p in parent_names])
    world = quat.identity((len(names),))
    if rolls:
        for j in range(len(names)):
            kids = np.flatnonzero(parents == j)
            d = pos[kids[0]] - pos[j] if len(kids) else tips.get(j, np.zeros(3))
            if np.linalg.norm(d) < 1e-9:
                d = pos[j] - pos[parents[j]] if parents[j] >= 0 else np.array([0.0, 0.0, 1.0])
            roll = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), rng.uniform(-np.pi, np.pi))
            world[j] = quat.multiply(quat.between(np.array([0.0, 1.0, 0.0]), d), roll)
    parent_world = np.where((parents >= 0)[:, None], world[np.maximum(parents, 0)], quat.identity())
    offsets = np.where((parents >= 0)[:, None], pos - pos[np.maximum(parents, 0)], pos)
    ends = sorted(tips)
    return Skeleton(
        names,
        parents,
        quat.rotate(quat.inverse(parent_world), offsets),
        quat.multiply(quat.inverse(parent_world), world),
        end_site_parents=np.array(ends, dtype=int),
        end_site_offsets=np.array([quat.rotate(quat.inverse(world[j]), tips[j]) for j in ends]).reshape(-1, 3),
    )


def canonical_names(convention: str) -> dict[str, str]:
    """canonical joint → name, both sides, for the joints the convention names."""
    return layout(convention)[3]


def repose(
    skeleton: Skeleton, a_pose: float = 0.0, rolls: bool = False, z_up: bool = False, scale: float = 1.0, seed: int = 0
) -> Skeleton:
    """The same joints and bone lengths (times ``scale``) in another rest pose: arms lowered by
    ``a_pose`` degrees, Blender-like bone frames with random rolls, Z-up axes (see :func:`build`).
    skeleton: a Y-up skeleton facing +Z whose arms are named Left/RightArm or per a known convention."""
    from core.kinematics import end_site_positions, forward_kinematics
    from core.retarget.mapping import label_skeleton

    pos, rot = forward_kinematics(skeleton, skeleton.rest_translations, quat.identity((skeleton.n_joints,)))
    ends = end_site_positions(skeleton, pos, rot)
    pos, ends = pos * scale, ends * scale
    labels = label_skeleton(skeleton)[0]
    names, parents = list(skeleton.names), [None if p < 0 else skeleton.names[p] for p in skeleton.parents]
    for side, sign in (("L", -1.0), ("R", 1.0)):
        if a_pose and f"upper_arm.{side}" in labels:
            top = labels[f"upper_arm.{side}"]
            turn = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), sign * np.radians(a_pose))
            below = _below(names, parents, top)
            pos[below] = pos[top] + quat.rotate(turn, pos[below] - pos[top])
            moved = np.isin(skeleton.end_site_parents, below)
            ends[moved] = pos[top] + quat.rotate(turn, ends[moved] - pos[top])
    tips = {int(j): ends[i] - pos[j] for i, j in enumerate(skeleton.end_site_parents)}
    if z_up:
        swap = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)
        pos = quat.rotate(swap, pos)
        tips = {j: quat.rotate(swap, t) for j, t in tips.items()}
    return _skeleton(names, parents, pos, tips, rolls, np.random.default_rng(seed))


def wiggle(skeleton: Skeleton, n_frames: int = 120, fps: float = 30.0, seed: int = 0, travel: float = 1.0):
    """A smooth random motion: every joint turns by sinusoids (up to ~0.35 rad), the root walks
    ``travel`` scene units along the skeleton's forward axis (+Z) and bobs."""
    from core.motion import Motion

    rng = np.random.default_rng(seed)
    m = Motion.rest(skeleton, n_frames, fps)
    t = np.arange(n_frames)[:, None] / fps
    freq = rng.uniform(0.3, 1.2, (skeleton.n_joints, 3))
    phase = rng.uniform(0, 2 * np.pi, (skeleton.n_joints, 3))
    amp = rng.uniform(0.05, 0.35, (skeleton.n_joints, 3))
    angles = amp * np.sin(2 * np.pi * freq * t[:, :, None] + phase)
    m.rotations = quat.from_euler(angles, "XYZ")
    m.translations[:, 0, 2] += travel * t[:, 0] / t[-1, 0]
    m.translations[:, 0, 1] += 0.02 * np.sin(2 * np.pi * t[:, 0])
    return m


def pruned(skeleton: Skeleton, roots: list[str], tips: bool = False) -> tuple[Skeleton, np.ndarray]:
    """(``skeleton`` without the joints ``roots`` and everything below them, the kept joints' old indices).

    tips: the parent of each removed root ends at an End Site where the root was (what Blender's BVH export
    writes for a bone whose child was deleted: its tail stays); else it is a bare leaf (a BVH edited by hand).
    """
    gone = np.any([skeleton.subtree(skeleton.index(r)) for r in roots], axis=0)
    keep = np.flatnonzero(~gone)
    new = np.full(skeleton.n_joints, -1)
    new[keep] = np.arange(len(keep))
    ends = [(p, o) for p, o in zip(skeleton.end_site_parents, skeleton.end_site_offsets) if not gone[p]]
    if tips:
        ends += [(skeleton.parents[skeleton.index(r)], skeleton.rest_translations[skeleton.index(r)]) for r in roots]
    return Skeleton(
        tuple(skeleton.names[j] for j in keep),
        [new[skeleton.parents[j]] if skeleton.parents[j] >= 0 else -1 for j in keep],
        skeleton.rest_translations[keep],
        skeleton.rest_rotations[keep],
        tuple(skeleton.channels[j] for j in keep),
        end_site_parents=np.array([new[p] for p, _ in ends], dtype=int),
        end_site_offsets=np.array([o for _, o in ends]).reshape(-1, 3),
    ), keep
