"""Bone mapping: a canonical humanoid joint set, naming conventions, automatic maps and JSON presets.

A *bone map* is a plain ``dict`` target joint name → source joint name; it is what the user
edits and what presets store. Automatic maps go through a canonical joint set: each skeleton
is labelled (canonical joint → its joint index) and the two labellings are joined.

Labelling a skeleton, in order (later steps only fill labels still missing, never reuse a joint):

1. the naming convention that matches the most names, on a tie the largest share of its
   table (:data:`CONVENTIONS`: CMU cgspeed, CMU 3ds Max, CMU ASF, Bandai Namco, Mixamo,
   Rigify (``ORG-``, ``DEF-`` or metarig names; a generated rig's ``ORG-`` bones first, its copy of
   the metarig that the controls are keyed from), Unreal UE4/UE5 mannequin, Character
   Creator / iClone, Xsens MVN, Perception Neuron, Unity humanoid, VRM, Daz Genesis, 3ds Max
   Biped; Blender's BVH importer keeps the file's names). Names compare without case,
   without a namespace (``mixamorig:``, ``mixamorig7_``) and with Biped's ``Bip001`` read as
   ``Bip01``; a table entry may list candidates, the first present wins (Unreal's chest is
   ``spine_05``, ``spine_04`` or ``spine_03``). Conventions disagree on words (3ds Max's
   ``LeftShoulder`` is the upper arm, cgspeed's is the collar), so a whole table is chosen;
2. generic synonyms on the side and base of each name (:func:`core.limbs.split_side`),
   never on Rigify mechanism bones or IK/FK/pole controls (``MCH-``, ``thigh_ik.L``);
3. topology (:func:`core.retarget.topology.topology_labels`, no names needed), group by
   group (a leg, an arm, the trunk, the neck and head), only where it agrees with the joints
   already named in that group.

Joints that both skeletons label are paired; then joints with the same name on both sides
(fingers of one convention) are paired too.

A map, automatic or the user's, is then read by :func:`map_labels`: every later stage (root,
leg ratio, planting) takes the body from the joints the map pairs, and a map that leaves the
core body (:data:`CORE`) unmapped or pairs left with right, or a leg with an arm, is a
:class:`MappingError` (a partial map only when allowed).
"""

from __future__ import annotations

import os
import re

import numpy as np

from ..limbs import split_side
from ..skeleton import Skeleton
from .topology import topology_labels

CENTRE = ("hips", "spine", "spine1", "chest", "neck", "neck1", "head")
SIDED = ("hip_joint", "upper_leg", "lower_leg", "foot", "toe", "shoulder", "upper_arm", "forearm", "hand",
         "finger_base", "index", "thumb")  # fmt: skip
CANONICAL = CENTRE + tuple(f"{base}.{side}" for side in "LR" for base in SIDED)
PRESET_FORMAT = "mocap_workbench.bone_map"

# Templates: {Left} → Left/Right, {L} → L/R, {l} → l/r. A tuple lists candidates, first present wins.
CONVENTIONS: dict[str, dict[str, str | tuple[str, ...]]] = {
    "cmu_cgspeed": {
        "hips": "Hips", "spine": "LowerBack", "spine1": "Spine", "chest": "Spine1", "neck": "Neck",
        "neck1": "Neck1", "head": "Head", "hip_joint": "{L}HipJoint", "upper_leg": "{Left}UpLeg",
        "lower_leg": "{Left}Leg", "foot": "{Left}Foot", "toe": "{Left}ToeBase", "shoulder": "{Left}Shoulder",
        "upper_arm": "{Left}Arm", "forearm": "{Left}ForeArm", "hand": "{Left}Hand",
        "finger_base": "{Left}FingerBase", "index": ("{Left}HandIndex1", "{L}Fingers"), "thumb": "{L}Thumb",
    },
    "cmu_3dsmax": {
        "hips": "Hips", "spine": "lowerback", "spine1": "Chest", "chest": "Chest2", "neck": "lowerneck",
        "neck1": "Neck", "head": "Head", "hip_joint": "{L}HipJoint", "upper_leg": "{Left}Hip",
        "lower_leg": "{Left}Knee", "foot": "{Left}Ankle", "toe": "{Left}Toe", "shoulder": "{Left}Collar",
        "upper_arm": "{Left}Shoulder", "forearm": "{Left}Elbow", "hand": "{Left}Wrist",
        "finger_base": "{l}hand", "index": "{L}Fingers", "thumb": "{L}Thumb",
    },
    "cmu_asf": {
        "hips": "root", "spine": "lowerback", "spine1": "upperback", "chest": "thorax", "neck": "lowerneck",
        "neck1": "upperneck", "head": "head", "hip_joint": "{l}hipjoint", "upper_leg": "{l}femur",
        "lower_leg": "{l}tibia", "foot": "{l}foot", "toe": "{l}toes", "shoulder": "{l}clavicle",
        "upper_arm": "{l}humerus", "forearm": "{l}radius", "hand": "{l}wrist", "finger_base": "{l}hand",
        "index": "{l}fingers", "thumb": "{l}thumb",
    },
    "bandai_namco": {
        "hips": "Hips", "spine": "Spine", "chest": "Chest", "neck": "Neck", "head": "Head",
        "shoulder": "Shoulder_{L}", "upper_arm": "UpperArm_{L}", "forearm": "LowerArm_{L}", "hand": "Hand_{L}",
        "upper_leg": "UpperLeg_{L}", "lower_leg": "LowerLeg_{L}", "foot": "Foot_{L}", "toe": "Toes_{L}",
    },
    "mixamo": {
        "hips": "Hips", "spine": "Spine", "spine1": "Spine1", "chest": "Spine2", "neck": "Neck", "head": "Head",
        "shoulder": "{Left}Shoulder", "upper_arm": "{Left}Arm", "forearm": "{Left}ForeArm", "hand": "{Left}Hand",
        "upper_leg": "{Left}UpLeg", "lower_leg": "{Left}Leg", "foot": "{Left}Foot", "toe": "{Left}ToeBase",
        "index": "{Left}HandIndex1", "thumb": "{Left}HandThumb1",
    },
    "rigify": {
        "hips": ("ORG-spine", "DEF-spine", "spine"), "spine": ("ORG-spine.001", "DEF-spine.001", "spine.001"),
        "spine1": ("ORG-spine.002", "DEF-spine.002", "spine.002"),
        "chest": ("ORG-spine.003", "DEF-spine.003", "spine.003"),
        "neck": ("ORG-spine.004", "DEF-spine.004", "spine.004"),
        "neck1": ("ORG-spine.005", "DEF-spine.005", "spine.005"),
        "head": ("ORG-spine.006", "DEF-spine.006", "spine.006"),
        "shoulder": ("ORG-shoulder.{L}", "DEF-shoulder.{L}", "shoulder.{L}"),
        "upper_arm": ("ORG-upper_arm.{L}", "DEF-upper_arm.{L}", "upper_arm.{L}"),
        "forearm": ("ORG-forearm.{L}", "DEF-forearm.{L}", "forearm.{L}"),
        "hand": ("ORG-hand.{L}", "DEF-hand.{L}", "hand.{L}"), "upper_leg": ("ORG-thigh.{L}", "DEF-thigh.{L}", "thigh.{L}"),
        "lower_leg": ("ORG-shin.{L}", "DEF-shin.{L}", "shin.{L}"), "foot": ("ORG-foot.{L}", "DEF-foot.{L}", "foot.{L}"),
        "toe": ("ORG-toe.{L}", "DEF-toe.{L}", "toe.{L}"),
        "index": ("ORG-f_index.01.{L}", "DEF-f_index.01.{L}", "f_index.01.{L}"),
        "thumb": ("ORG-thumb.01.{L}", "DEF-thumb.01.{L}", "thumb.01.{L}"),
    },
    "unreal": {
        "hips": "pelvis", "spine": "spine_01", "spine1": "spine_02", "chest": ("spine_05", "spine_04", "spine_03"),
        "neck": "neck_01", "neck1": "neck_02", "head": "head", "shoulder": "clavicle_{l}",
        "upper_arm": "upperarm_{l}", "forearm": "lowerarm_{l}", "hand": "hand_{l}", "upper_leg": "thigh_{l}",
        "lower_leg": "calf_{l}", "foot": "foot_{l}", "toe": "ball_{l}", "index": "index_01_{l}",
        "thumb": "thumb_01_{l}",
    },
    "character_creator": {
        "hips": "CC_Base_Hip", "spine": "CC_Base_Waist", "spine1": "CC_Base_Spine01", "chest": "CC_Base_Spine02",
        "neck": "CC_Base_NeckTwist01", "neck1": "CC_Base_NeckTwist02", "head": "CC_Base_Head",
        "shoulder": "CC_Base_{L}_Clavicle", "upper_arm": "CC_Base_{L}_Upperarm", "forearm": "CC_Base_{L}_Forearm",
        "hand": "CC_Base_{L}_Hand", "upper_leg": "CC_Base_{L}_Thigh", "lower_leg": "CC_Base_{L}_Calf",
        "foot": "CC_Base_{L}_Foot", "toe": "CC_Base_{L}_ToeBase", "index": "CC_Base_{L}_Index1",
        "thumb": "CC_Base_{L}_Thumb1",
    },
    "xsens_mvn": {
        "hips": "Pelvis", "spine": "L5", "spine1": "L3", "chest": ("T8", "T12"), "neck": "Neck", "head": "Head",
        "shoulder": "{Left}Shoulder", "upper_arm": "{Left}UpperArm", "forearm": "{Left}ForeArm",
        "hand": "{Left}Hand", "upper_leg": "{Left}UpperLeg", "lower_leg": "{Left}LowerLeg", "foot": "{Left}Foot",
        "toe": "{Left}Toe",
    },
    "perception_neuron": {
        "hips": "Hips", "spine": "Spine", "spine1": "Spine1", "chest": ("Spine3", "Spine2"), "neck": "Neck",
        "neck1": "Neck1", "head": "Head", "shoulder": "{Left}Shoulder", "upper_arm": "{Left}Arm",
        "forearm": "{Left}ForeArm", "hand": "{Left}Hand", "upper_leg": "{Left}UpLeg", "lower_leg": "{Left}Leg",
        "foot": "{Left}Foot", "index": "{Left}HandIndex1", "thumb": "{Left}HandThumb1",
    },
    "unity_humanoid": {
        "hips": "Hips", "spine": "Spine", "chest": ("UpperChest", "Chest"), "neck": "Neck", "head": "Head",
        "shoulder": "{Left}Shoulder", "upper_arm": "{Left}UpperArm", "forearm": "{Left}LowerArm",
        "hand": "{Left}Hand", "upper_leg": "{Left}UpperLeg", "lower_leg": "{Left}LowerLeg", "foot": "{Left}Foot",
        "toe": "{Left}Toes", "index": "{Left}IndexProximal", "thumb": "{Left}ThumbProximal",
    },
    "vrm": {
        "hips": "J_Bip_C_Hips", "spine": "J_Bip_C_Spine", "chest": ("J_Bip_C_UpperChest", "J_Bip_C_Chest"),
        "neck": "J_Bip_C_Neck", "head": "J_Bip_C_Head", "shoulder": "J_Bip_{L}_Shoulder",
        "upper_arm": "J_Bip_{L}_UpperArm", "forearm": "J_Bip_{L}_LowerArm", "hand": "J_Bip_{L}_Hand",
        "upper_leg": "J_Bip_{L}_UpperLeg", "lower_leg": "J_Bip_{L}_LowerLeg", "foot": "J_Bip_{L}_Foot",
        "toe": "J_Bip_{L}_ToeBase", "index": "J_Bip_{L}_Index1", "thumb": "J_Bip_{L}_Thumb1",
    },
    "daz_genesis": {
        "hips": "hip", "spine": ("abdomenLower", "abdomen"), "spine1": ("abdomenUpper", "abdomen2"),
        "chest": ("chestUpper", "chestLower", "chest"), "neck": ("neckLower", "neck"), "neck1": "neckUpper",
        "head": "head", "shoulder": "{l}Collar", "upper_arm": ("{l}ShldrBend", "{l}Shldr"),
        "forearm": ("{l}ForearmBend", "{l}ForeArm"), "hand": "{l}Hand", "upper_leg": ("{l}ThighBend", "{l}Thigh"),
        "lower_leg": "{l}Shin", "foot": "{l}Foot", "toe": "{l}Toe", "index": "{l}Index1", "thumb": "{l}Thumb1",
    },
    "3dsmax_biped": {
        "hips": "Bip01 Pelvis", "spine": "Bip01 Spine", "spine1": "Bip01 Spine1",
        "chest": ("Bip01 Spine3", "Bip01 Spine2"), "neck": "Bip01 Neck", "head": "Bip01 Head",
        "shoulder": "Bip01 {L} Clavicle", "upper_arm": "Bip01 {L} UpperArm", "forearm": "Bip01 {L} Forearm",
        "hand": "Bip01 {L} Hand", "upper_leg": "Bip01 {L} Thigh", "lower_leg": "Bip01 {L} Calf",
        "foot": "Bip01 {L} Foot", "toe": "Bip01 {L} Toe0", "index": "Bip01 {L} Finger1", "thumb": "Bip01 {L} Finger0",
    },
}  # fmt: skip

# Step 2: bases (from split_side) per canonical joint, in order of preference.
SYNONYMS = {
    "hips": ("hips", "pelvis"), "spine": ("spine", "abdomen"), "chest": ("chest", "thorax", "upperchest"),
    "neck": ("neck",), "head": ("head",), "upper_leg": ("upleg", "thigh", "upperleg", "femur", "thighbend"),
    "lower_leg": ("calf", "shin", "lowerleg", "tibia", "knee", "leg"), "foot": ("foot", "ankle"),
    "toe": ("toebase", "toe", "toes", "ball", "toe0"), "shoulder": ("clavicle", "collar"),
    "upper_arm": ("upperarm", "humerus", "arm", "shldrbend", "shldr"),
    "forearm": ("forearm", "lowerarm", "elbow", "radius", "forearmbend"),
    "hand": ("wrist", "hand"),
}  # fmt: skip

GROUPS = {
    "trunk": ("hips", "spine", "spine1", "chest"), "head": ("neck", "neck1", "head"),
    "leg": ("hip_joint", "upper_leg", "lower_leg", "foot", "toe"), "arm": ("shoulder", "upper_arm", "forearm", "hand"),
    "fingers": ("finger_base", "index", "thumb"),
}  # fmt: skip
_SIDE_WORDS = {"Left": ("Left", "Right"), "L": ("L", "R"), "l": ("l", "r")}


def name_key(name: str) -> str:
    """Name as compared across conventions: without namespace (``mixamorig:``, ``mixamorig7_``),
    lower case, a 3ds Max Biped prefix numbered as ``bip01`` (``Bip001 L Foot``)."""
    key = re.sub(r"^mixamorig\d*_", "", name.rsplit(":", 1)[-1].strip().lower())
    return re.sub(r"^bip\d+([ _])", r"bip01\1", key)


def _expand(table: dict) -> list[tuple[str, tuple[str, ...]]]:
    """(canonical joint, candidate names) for both sides of a convention table."""
    out = []
    for base, templates in table.items():
        templates = (templates,) if isinstance(templates, str) else templates
        if base in CENTRE:
            out.append((base, templates))
            continue
        for i, side in enumerate("LR"):
            words = {key: pair[i] for key, pair in _SIDE_WORDS.items()}
            out.append((f"{base}.{side}", tuple(t.format(**words) for t in templates)))
    return out


def _by_key(skeleton: Skeleton) -> dict[str, int]:
    keys: dict[str, int] = {}
    for j, name in enumerate(skeleton.names):
        keys.setdefault(name_key(name), j)
    return keys


def convention_labels(skeleton: Skeleton, convention: str) -> dict[str, int]:
    """Canonical joint → joint index for the names of one convention table that the skeleton has."""
    keys, labels, used = _by_key(skeleton), {}, set()
    for canonical, candidates in _expand(CONVENTIONS[convention]):
        for candidate in candidates:
            j = keys.get(name_key(candidate))
            if j is not None and j not in used:
                labels[canonical] = j
                used.add(j)
                break
    return labels


def _is_control(name: str) -> bool:
    """Rigify mechanism and widget bones, and IK/pole helpers: never a deform limb."""
    key = name_key(name)
    return bool(re.match(r"^(mch|wgt|vis)[-_.]", key) or re.search(r"(^|[-_.])(ik|fk|pole|target)([-_.]|$)", key))


def _synonym_labels(skeleton: Skeleton, labels: dict[str, int]) -> dict[str, int]:
    """Fill missing canonical joints from generic synonyms of the name bases."""
    parsed = [(None, "") if _is_control(n) else split_side(n) for n in skeleton.names]
    out, used = dict(labels), set(labels.values())
    for base, words in SYNONYMS.items():
        for side in (None,) if base in CENTRE else ("L", "R"):
            canonical = base if side is None else f"{base}.{side}"
            if canonical in out:
                continue
            hits = [j for w in words for j, (s, b) in enumerate(parsed) if b == w and s == side and j not in used]
            if hits:
                out[canonical] = hits[0]
                used.add(hits[0])
    return out


def label_skeleton(
    skeleton: Skeleton, positions: np.ndarray | None = None, up: np.ndarray | None = None
) -> tuple[dict[str, int], str | None]:
    """Canonical joint → joint index, and the name of the convention used (None if no table fits).

    positions: (J, 3) a pose for the topology step when the rest pose is not a standing pose
    (default: the rest pose); up: (3,) its up axis (default detected).
    """
    scores = {name: convention_labels(skeleton, name) for name in CONVENTIONS}
    # Most names found; on a tie, the table with the larger share of its names found.
    best = max(scores, key=lambda n: (len(scores[n]), len(scores[n]) / len(_expand(CONVENTIONS[n]))))
    labels, convention = (scores[best], best) if len(scores[best]) >= 4 else ({}, None)
    labels = _synonym_labels(skeleton, labels)
    try:
        found = topology_labels(skeleton, positions, up)
    except ValueError:
        found = {}
    return _fill_by_groups(labels, found), convention


def _group(canonical: str) -> str:
    base, _, side = canonical.partition(".")
    for name, members in GROUPS.items():
        if base in members:
            return f"{name}.{side}" if side else name
    return canonical


def _fill_by_groups(labels: dict[str, int], found: dict[str, int]) -> dict[str, int]:
    """Add topology labels group by group (a leg, an arm, the trunk...), only for groups whose
    named joints the topology agrees with, and never reusing a joint."""
    out, used = dict(labels), set(labels.values())
    groups: dict[str, list[str]] = {}
    for canonical in found:
        groups.setdefault(_group(canonical), []).append(canonical)
    for members in groups.values():
        if any(c in labels and labels[c] != found[c] for c in members):
            continue
        for c in members:
            if c not in out and found[c] not in used:
                out[c] = found[c]
                used.add(found[c])
    return out


def auto_map(
    source: Skeleton,
    target: Skeleton,
    source_positions: np.ndarray | None = None,
    target_positions: np.ndarray | None = None,
) -> dict[str, str]:
    """Bone map target name → source name found automatically (see the module notes).

    source_positions, target_positions: (J, 3) standing poses for the topology step (default
    the rest poses).
    """
    src, _ = label_skeleton(source, source_positions)
    tgt, _ = label_skeleton(target, target_positions)
    mapping = {target.names[k]: source.names[src[c]] for c, k in tgt.items() if c in src}
    used = set(mapping.values())
    source_keys = _by_key(source)
    for name in target.names:
        j = source_keys.get(name_key(name))
        if name not in mapping and j is not None and source.names[j] not in used:
            mapping[name] = source.names[j]
            used.add(source.names[j])
    return {n: mapping[n] for n in target.names if n in mapping}


def mapping_pairs(mapping: dict[str, str], source: Skeleton, target: Skeleton) -> tuple[np.ndarray, np.ndarray]:
    """(target indices, source indices) of a bone map, in target order; empty sources are skipped.

    Raises ValueError naming the bones that neither skeleton has.
    """
    missing_t = [t for t in mapping if t not in target.names]
    missing_s = [s for s in mapping.values() if s and s not in source.names]
    if missing_t or missing_s:
        parts = []
        if missing_t:
            parts.append(f"target has no bone {', '.join(map(repr, missing_t[:5]))}")
        if missing_s:
            parts.append(f"source has no bone {', '.join(map(repr, missing_s[:5]))}")
        raise ValueError("bone map does not fit these armatures: " + "; ".join(parts))
    pairs = [(target.index(t), source.index(s)) for t, s in mapping.items() if s]
    pairs.sort()
    tk = np.array([p[0] for p in pairs], dtype=int)
    sj = np.array([p[1] for p in pairs], dtype=int)
    return tk, sj


def save_preset(path: str | os.PathLike, mapping: dict[str, str], source: str = "", target: str = "") -> None:
    """Write a bone map as a preset (:mod:`.presets`: a Python preset for ``.py``, else JSON), with
    optional armature names."""
    from .presets import preset_document, write_preset

    write_preset(path, preset_document(mapping, source=source, target=target))


def load_preset(path: str | os.PathLike) -> dict[str, str]:
    """The bone map target → source of a preset written by :func:`save_preset` (or a plain JSON object
    target → source), as written (:func:`.presets.resolve_preset` matches it to two skeletons).

    Raises ValueError naming the file when it is not such a map.
    """
    from .presets import read_preset

    document = read_preset(path)
    if document.get("convention") and not document["map"]:
        raise ValueError(f"{path}: a naming-convention preset ({document['convention']}) holds no bone names; "
                         "apply it to two armatures (Retarget › Bone Map)")  # fmt: skip
    return document["map"]


# The core body a retarget needs (the spine: any of spine, spine1, chest).
CORE = ("hips", "spine", "head") + tuple(
    f"{base}.{side}" for side in "LR" for base in ("upper_leg", "lower_leg", "foot", "upper_arm", "forearm", "hand")
)
_SPINE = ("spine", "spine1", "chest")


class MappingError(ValueError):
    """A bone map that leaves the core body unmapped or pairs a left bone with a right one, or a
    leg with an arm."""


def describe(canonical: str) -> str:
    """Plain words for a canonical joint: ``foot.L`` → "left foot"."""
    base, _, side = canonical.partition(".")
    words = base.replace("_", " ")
    return f"{'left' if side == 'L' else 'right'} {words}" if side else words


def named_labels(skeleton: Skeleton) -> dict[str, int]:
    """Canonical joint → joint index from the names only (steps 1 and 2 of the module notes)."""
    scores = {name: convention_labels(skeleton, name) for name in CONVENTIONS}
    best = max(scores, key=lambda n: (len(scores[n]), len(scores[n]) / len(_expand(CONVENTIONS[n]))))
    return _synonym_labels(skeleton, scores[best] if len(scores[best]) >= 4 else {})


def _crosses(a: str, b: str) -> bool:
    """Whether two canonical joints lie on different sides or limbs (the trunk and head are one,
    fingers are not checked)."""
    ga, gb = _group(a), _group(b)
    if "fingers" in (ga.split(".")[0], gb.split(".")[0]):
        return False
    centre = ("trunk", "head")
    return not (ga in centre and gb in centre) and ga != gb


def map_labels(
    mapping: dict[str, str],
    source: Skeleton,
    target: Skeleton,
    source_positions: np.ndarray | None = None,
    allow_partial: bool = False,
) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """(source labels, target labels, missing core joints) that follow a bone map.

    Each mapped pair gets one canonical label, the same on both sides: the one both skeletons
    give it, else the one only one gives, else (the two disagree within one limb or the trunk)
    the name-based one, the source's first. So planting, the root and the leg ratio use the
    joints the map pairs, whatever the automatic labelling of either side would say. Joints
    outside the map keep their own labels where those are free.

    source_positions: (J, 3) a standing pose of the source (its rest pose when None). Raises
    :class:`MappingError` when the map pairs a left joint with a right one or joints of
    different limbs (by the names of both sides), or — unless ``allow_partial`` — when a core
    joint (:data:`CORE`) is not mapped; the message names them.
    """
    src_all, tgt_all = label_skeleton(source, source_positions)[0], label_skeleton(target)[0]
    src_named, tgt_named = named_labels(source), named_labels(target)
    inv = {kind: {j: c for c, j in labels.items()} for kind, labels in
           (("s", src_all), ("t", tgt_all), ("sn", src_named), ("tn", tgt_named))}  # fmt: skip
    tk, sj = mapping_pairs(mapping, source, target)
    src: dict[str, int] = {}
    tgt: dict[str, int] = {}
    crossings = []
    for t, s in zip(tk.tolist(), sj.tolist()):
        cs, ct = inv["s"].get(s), inv["t"].get(t)
        ns, nt = inv["sn"].get(s), inv["tn"].get(t)
        if ns and nt and _crosses(ns, nt):
            crossings.append(f"'{target.names[t]}' ({describe(nt)}) ← '{source.names[s]}' ({describe(ns)})")
            continue
        if cs and ct and cs != ct:
            c = ns if ns in (cs, ct) else nt if nt in (cs, ct) else cs
        else:
            c = cs or ct
        if c and c not in src:
            src[c], tgt[c] = s, t
    if crossings:
        raise MappingError("the bone map crosses sides or limbs: " + "; ".join(crossings[:4]))
    missing = [c for c in CORE if not (any(k in src for k in _SPINE) if c == "spine" else c in src)]
    if missing and not allow_partial:
        raise MappingError("the bone map leaves the core body unmapped: " + ", ".join(map(describe, missing)))
    for own, out, pairs in ((src_all, src, set(sj.tolist())), (tgt_all, tgt, set(tk.tolist()))):
        for c, j in own.items():
            if c not in out and j not in pairs and j not in out.values():
                out[c] = j
    return src, tgt, missing
