"""Find feet, toes, hands, the head and limb chains in a skeleton, by name across conventions or
by topology; the skeleton's standing height (:func:`standing_height`, used by retargeting and
the physics body model alike).

(A module of its own rather than part of ``contacts.py``: IK planting, retargeting and
editing need the same joint finding without contact detection.)

Names are split into a side and a base: a namespace (``mixamorig:``, ``mixamorig7_``), a
Rigify prefix (``DEF-``, ``ORG-``, ``MCH-``), a 3ds Max Biped prefix (``Bip01``), Character
Creator's ``CC_Base_``, VRM's ``J_Bip_`` and a Blender number suffix (``.001``) are dropped;
the side comes from ``Left``/``Right`` prefixes (CMU, Mixamo, Xsens), ``_L``/``.L``/``_l``
suffixes (Bandai, Rigify, Unreal), ``L_``/``l_`` prefixes (Character Creator's ``CC_Base_L_``,
VRM's ``J_Bip_L_``) or a bare ``l``/``r`` before a known base (CMU ASF ``lfoot``, Daz
``lShin``). Bases, in order of preference:

- foot: ``ankle``, ``foot`` (CMU cgspeed LeftFoot, 3dsMax LeftAnkle, ASF lfoot, Bandai
  Foot_L, Mixamo LeftFoot, Rigify DEF-foot.L, Unreal foot_l, :mod:`core.synthetic`)
- toe: ``toebase``, ``toe``, ``toes``, ``ball`` (LeftToeBase, LeftToe, ltoes, Toes_L, ball_l)
- hand: ``wrist``, ``hand`` (CMU 3dsMax has LeftWrist *and* a finger-base ``lhand``; the
  wrist is the joint that matches cgspeed's LeftHand and ASF's lwrist)
- forearm: ``forearm``, ``lowerarm``, ``elbow``, ``radius``, ``forearmbend`` (Mixamo and CC, Unreal and
  Bandai, CMU 3dsMax, ASF, Daz): an arm whose hand was deleted (:func:`find_arms`)

Topology fallback for feet (no names match): the legs of :mod:`core.retarget.topology`, else
the two lowest leaf chains — unbranched runs of
at least three joints ending in a leaf, ranked by the rest-pose height of the leaf along the
up axis (detected like :func:`detect_up`). The leaf is the toe and its parent the foot when
the run has four joints or more, otherwise the leaf is the foot.
"""

from __future__ import annotations

import re

import numpy as np

from .skeleton import Skeleton, rest_positions

FOOT_BASES = ("ankle", "foot")
TOE_BASES = ("toebase", "toe", "toes", "ball", "toe0")
HAND_BASES = ("wrist", "hand")
FOREARM_BASES = ("forearm", "lowerarm", "elbow", "radius", "forearmbend")
# A leaf whose End Site is at least this share of the mean of the two bones above it is a long bone (a forearm):
# forearm / mean(upper arm, collar) is 0.79–1.5 on the CMU, Mixamo, CC and Bandai rigs, a hand to its fingertips
# / mean(forearm, upper arm) about 0.7, to its knuckles 0.35.
LONG_LEAF = 0.75
_KNOWN = set(FOOT_BASES + TOE_BASES + HAND_BASES) | {
    "upleg", "leg", "thigh", "calf", "shin", "knee", "hip", "femur", "tibia", "upperleg", "lowerleg",
    "arm", "forearm", "upperarm", "lowerarm", "elbow", "shoulder", "humerus", "radius", "clavicle", "collar",
    "thighbend", "thightwist", "shldrbend", "shldrtwist", "shldr", "forearmbend", "forearmtwist", "eye", "ear",
}  # fmt: skip
_SIDE_WORDS = {"left": "L", "right": "R", "l": "L", "r": "R"}


def split_side(name: str) -> tuple[str | None, str]:
    """Side ("L", "R" or None) and lower-case base name without separators, e.g. ``DEF-foot.L`` → ("L", "foot")."""
    n = name.rsplit(":", 1)[-1]
    n = re.sub(r"^(mixamorig\d*_|cc_base_|j_bip_(c_)?|j_sec_|def[-_.]|org[-_.]|mch[-_.])", "", n, flags=re.IGNORECASE)
    n = re.sub(r"\.\d+$", "", n).lower()
    n = re.sub(r"^bip\d*[-_ ]", "", n)  # 3ds Max Biped: "Bip01 L Foot"
    side = None
    if m := re.match(r"^(left|right)[-_. ]?(.+)$", n):
        side, n = _SIDE_WORDS[m[1]], m[2]
    elif m := re.match(r"^(.+?)[-_. ](l|r|left|right)$", n):
        side, n = _SIDE_WORDS[m[2]], m[1]
    elif m := re.match(r"^(l|r)[-_. ](.+)$", n):
        side, n = _SIDE_WORDS[m[1]], m[2]
    elif n[:1] in "lr" and n[1:] in _KNOWN:
        side, n = _SIDE_WORDS[n[0]], n[1:]
    return side, re.sub(r"[-_. ]", "", n)


def find_by_base(skeleton: Skeleton, bases: tuple[str, ...]) -> dict[str, int]:
    """Joint index per side ("L", "R") whose base is the first of ``bases`` found on that side."""
    parsed = [split_side(n) for n in skeleton.names]
    found: dict[str, int] = {}
    for side in ("L", "R"):
        for base in bases:
            hits = [j for j, (s, b) in enumerate(parsed) if s == side and b == base]
            if hits:
                found[side] = hits[0]
                break
    return found


def _leaf_runs(skeleton: Skeleton) -> list[list[int]]:
    """Unbranched runs ending at each leaf, listed leaf first, stopping below the first branching joint."""
    n_children = np.bincount(skeleton.parents[skeleton.parents >= 0], minlength=skeleton.n_joints)
    runs = []
    for leaf in np.flatnonzero(n_children == 0):
        run = [int(leaf)]
        while skeleton.parents[run[-1]] >= 0 and n_children[skeleton.parents[run[-1]]] == 1:
            run.append(int(skeleton.parents[run[-1]]))
        runs.append(run)
    return runs


def body_root(skeleton: Skeleton) -> int:
    """The shallowest joint with two or more children (the pelvis of a humanoid), else joint 0."""
    n_children = np.bincount(skeleton.parents[skeleton.parents >= 0], minlength=skeleton.n_joints)
    branching = np.flatnonzero(n_children >= 2)
    return int(branching[np.argmin(skeleton.depths()[branching])]) if len(branching) else 0


def _hanging_leaves(skeleton: Skeleton, root: int) -> list[int]:
    """Leaves of the unbranched chains of ≥ 3 joints hanging directly from ``root`` (the legs)."""
    n_children = np.bincount(skeleton.parents[skeleton.parents >= 0], minlength=skeleton.n_joints)
    leaves = []
    for child in skeleton.children(root):
        below = np.flatnonzero(skeleton.subtree(int(child)))
        if len(below) >= 3 and np.all(n_children[below] <= 1):
            leaves.append(int(below[n_children[below] == 0][0]))
    return leaves


def detect_up(skeleton: Skeleton, positions: np.ndarray | None = None) -> np.ndarray:
    """The world up axis (3,) as a signed unit basis vector, from a pose or a whole motion.

    positions: (J, 3) or (T, J, 3) world joint positions (default: the rest pose). Rule: from
    the pelvis (the feet's common ancestor, else :func:`body_root`) the feet point down. The feet are the
    joints named as feet; failing that, the feet of :mod:`core.retarget.topology`; failing
    that, the leaves of the unbranched chains of three or more
    joints hanging from the body root (the legs); failing that, every leaf. The unit vectors
    from the root to them are averaged over feet and frames, and up is the opposite of the
    largest component's axis.
    """
    pos = rest_positions(skeleton) if positions is None else np.asarray(positions, dtype=float)
    pos = pos.reshape(-1, skeleton.n_joints, 3)
    root = body_root(skeleton)
    feet = list(find_by_base(skeleton, FOOT_BASES).values())
    if len(feet) < 2:
        from .retarget.topology import topology_labels  # the body's structure (it imports this module)

        try:
            labels = topology_labels(skeleton)
            feet = [labels[f"foot.{s}"] for s in "LR" if f"foot.{s}" in labels]
        except ValueError:
            feet = []
    if len(feet) >= 2:
        # the legs meet at the feet's common ancestor (the pelvis), which need not be the shallowest
        # branching joint: an Unreal mannequin's `root` sits on the floor above its pelvis
        meet = skeleton.common_ancestor(int(feet[0]), int(feet[1]))
        root = meet if meet >= 0 else root  # legs in separate trees: the body root stands for the pelvis
    if len(feet) < 2:
        feet = _hanging_leaves(skeleton, root)
    if len(feet) < 2:
        n_children = np.bincount(skeleton.parents[skeleton.parents >= 0], minlength=skeleton.n_joints)
        feet = list(np.flatnonzero(n_children == 0))
    v = pos[:, feet] - pos[:, root : root + 1]
    v = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-300)
    mean = v.reshape(-1, 3).mean(axis=0)
    axis = int(np.argmax(np.abs(mean)))
    up = np.zeros(3)
    up[axis] = -np.sign(mean[axis]) or 1.0
    return up


def find_feet(skeleton: Skeleton, up: np.ndarray | None = None) -> dict[str, tuple[int, int | None]]:
    """Foot and toe joint (toe may be None) per side, by name, else by topology (sides "A", "B").

    The topology is :func:`core.retarget.topology.topology_labels` (the legs hanging from where
    they meet the spine; twist, toe and finger bones are not taken for feet); failing that,
    the two lowest leaf chains. up: (3,) world up axis for that last fallback (default
    :func:`detect_up`).
    """
    feet, toes = find_by_base(skeleton, FOOT_BASES), find_by_base(skeleton, TOE_BASES)
    if len(feet) == 2:
        return {side: (feet[side], toes.get(side)) for side in ("L", "R")}
    from .retarget.topology import topology_labels  # the body's structure (it imports this module)

    try:
        labels = topology_labels(skeleton)
    except ValueError:
        labels = {}
    if all(f"foot.{s}" in labels for s in "LR"):
        return {a: (labels[f"foot.{s}"], labels.get(f"toe.{s}")) for a, s in zip("AB", "LR")}
    runs = [r for r in _leaf_runs(skeleton) if len(r) >= 3]
    if len(runs) < 2:
        raise ValueError("no feet found: no foot/ankle names and fewer than two unbranched leaf chains")
    up = detect_up(skeleton) if up is None else np.asarray(up, dtype=float)
    height = rest_positions(skeleton) @ up
    runs = sorted(sorted(runs, key=lambda r: height[r[0]])[:2])
    out = {}
    for side, run in zip(("A", "B"), runs):
        out[side] = (run[1], run[0]) if len(run) >= 4 else (run[0], None)
    return out


def find_hands(skeleton: Skeleton) -> dict[str, int]:
    """Hand (wrist) joint per side: the hands of :func:`find_arms` (by name, else by the body's structure), a side
    whose arm ends at the forearm (its hand deleted) left out; sides as :func:`find_arms` gives them.

    One search for the arms and their hands, so that hand contacts and the physics' body model see the same
    hands (a rig whose names say nothing had its hands found by the topology's labels alone before, and none
    where only the chest's branches tell the arms)."""
    try:
        arms = find_arms(skeleton)
    except ValueError:  # a named hand without two bones above it: no arm, but still a hand
        return find_by_base(skeleton, HAND_BASES)
    return {side: arm[2] for side, arm in arms.items() if arm[2] is not None}


def find_arms(skeleton: Skeleton) -> dict[str, tuple[int, int, int | None]]:
    """(upper arm, forearm, hand) joints per side, however the arm ends; the hand is None where the rig has none.

    In order: the hands by name (:func:`limb_chain` above them); else the forearms by name (a rig whose
    hands were deleted: the forearm's own bone is the last); else the arms of
    :func:`core.retarget.topology.topology_labels` (which tell a leaf that ends a forearm from a wrist by its End
    Site or the arm's proportions); else the chest's two side branches (:func:`core.retarget.topology.arm_runs`),
    whose leaf is a forearm when its End Site is a long bone (:data:`LONG_LEAF`), else the hand. Sides "A", "B" when
    the names do not tell (as :func:`find_feet`). Before, arms were found only through their hands: a rig whose
    arms end at the forearm lost both arms' mass (9.9 %) to the trunk and legs in the physics' body model.
    """
    hands, fores = find_by_base(skeleton, HAND_BASES), find_by_base(skeleton, FOREARM_BASES)
    arms = {s: limb_chain(skeleton, hands[s]) for s in hands}
    arms |= {
        s: (bone_above(skeleton, fores[s]), fores[s], bone_below(skeleton, fores[s])) for s in fores if s not in hands
    }
    if len(arms) == 2:
        return arms
    from .retarget.topology import arm_runs, topology_labels  # the body's structure (it imports this module)

    try:  # one side named, the other not (a renamed or custom bone): both from the structure
        labels = topology_labels(skeleton)
        runs = arm_runs(skeleton)
    except ValueError:
        return arms
    if all(f"forearm.{s}" in labels for s in "LR"):  # the hand None where the topology found it deleted
        return {
            a: (labels[f"upper_arm.{s}"], labels[f"forearm.{s}"], labels.get(f"hand.{s}")) for a, s in zip("AB", "LR")
        }
    chains = [_leaf_checked(skeleton, *(run[-3:] if len(run) >= 3 else (None, *run))) for run in runs]
    return dict(zip("AB", chains)) if len(runs) == 2 and all(chains) else arms


def _leaf_checked(skeleton: Skeleton, upper: int | None, fore: int, hand: int) -> tuple[int, int, int | None] | None:
    """(upper, forearm, hand) of an arm found without names: a last joint that is a leaf with a long End Site
    (:data:`LONG_LEAF`) is the forearm, its hand missing; None for two joints that are not such an arm."""
    ends = np.linalg.norm(skeleton.end_site_offsets[skeleton.end_site_parents == hand], axis=-1)
    leaf = not np.any(skeleton.parents == hand)
    bones = float(np.mean(np.linalg.norm(skeleton.rest_translations[[hand, fore]], axis=-1)))
    if leaf and len(ends) and ends.max() >= LONG_LEAF * bones:
        return fore, hand, None
    return None if upper is None else (upper, fore, hand)


def bone_below(skeleton: Skeleton, joint: int) -> int | None:
    """The joint that starts the bone below ``joint``'s: walking down through the segments of ``joint``'s own
    bone (children with its name base, twist or roll joints; each time the one with most descendants), the
    first other child (most descendants) that lies away from its parent (a quarter of ``joint``'s own offset or
    more: iClone's ``ElbowShareBone`` sits on the elbow); None when ``joint``'s bone ends its chain (a forearm
    without hand)."""
    bases = [split_side(n) for n in skeleton.names]
    near = 0.25 * float(np.linalg.norm(skeleton.rest_translations[joint]))
    j = joint
    while True:
        kids = [int(c) for c in skeleton.children(j)]
        own = [c for c in kids if bases[c] == bases[joint] or _is_twist(bases[c][1])]
        other = [c for c in kids if c not in own and np.linalg.norm(skeleton.rest_translations[c]) >= near]
        if other or not own:
            return max(other, key=lambda c: (int(skeleton.subtree(c).sum()), -c)) if other else None
        j = max(own, key=lambda c: (int(skeleton.subtree(c).sum()), -c))


def limb_chain(skeleton: Skeleton, end: int) -> tuple[int, int, int]:
    """(upper, mid, end) joints of the two-link limb ending at ``end`` (thigh, knee, foot).

    Walks up the parents; consecutive joints with the same name base (Rigify's
    ``DEF-shin.L`` / ``DEF-shin.L.001`` twist segments) count as one bone whose top joint is used, and so
    does a twist or roll joint in the chain with the bone above it (Daz Genesis' ``lThighBend`` →
    ``lThighTwist`` → ``lShin``: the thigh is ``lThighBend``; taking the twist joint for the hip, physics
    refused such a rig, its body model's hips not the bone map's).
    """
    bases = [split_side(n) for n in skeleton.names]
    mid = bone_above(skeleton, end, bases=bases)
    return bone_above(skeleton, mid, end, bases), mid, end


def bone_above(skeleton: Skeleton, joint: int, end: int | None = None, bases: list | None = None) -> int:
    """The top joint of the bone above ``joint``'s (its parent, twist and same-name segments merged as
    :func:`limb_chain` says); ValueError naming ``end`` (default ``joint``) when there is none. bases: the
    joints' :func:`split_side` when the caller has them."""
    bases = [split_side(n) for n in skeleton.names] if bases is None else bases
    j = int(skeleton.parents[joint])
    if j < 0:
        raise ValueError(f"joint {skeleton.names[joint if end is None else end]!r} has fewer than two ancestors")
    while skeleton.parents[j] >= 0 and (bases[skeleton.parents[j]] == bases[j] or _is_twist(bases[j][1])):
        j = int(skeleton.parents[j])
    return j


def _is_twist(base: str) -> bool:
    """Whether a name base (:func:`split_side`) names a twist or roll joint: part of the bone above it."""
    return "twist" in base or base.endswith("roll")


def find_head(skeleton: Skeleton, rest: np.ndarray | None = None, up: np.ndarray | None = None) -> int:
    """The joint whose name base is "head", else the head of :mod:`core.retarget.topology`, else
    the highest leaf of the rest pose ``rest`` (J, 3) along ``up`` (defaults: the rest pose,
    :func:`detect_up`)."""
    for j, name in enumerate(skeleton.names):
        if split_side(name)[1] == "head":
            return j
    from .retarget.topology import topology_labels  # the body's structure (it imports this module)

    try:
        return topology_labels(skeleton)["head"]
    except (ValueError, KeyError):
        pass
    rest = rest_positions(skeleton) if rest is None else rest
    up = detect_up(skeleton) if up is None else up
    leaves = np.setdiff1d(np.arange(skeleton.n_joints), skeleton.parents)
    return int(leaves[np.argmax(rest[leaves] @ up)])


def standing_height(skeleton: Skeleton, up: np.ndarray | None = None) -> float:
    """Stature (scene units) of the skeleton standing straight: floor to the top of the head.

    When the rest pose is upright (the thigh → foot line within 25° of −up) this is the rest
    pose's extent along ``up`` over the joints and End Sites of the body root's subtree (a
    placement root far away is ignored). Otherwise (Bandai's rest pose lies along X) it is the
    length of the chain foot → knee → hip → spine → head (+ its End Site), divided by
    1 − 0.039 for the ankle height (de Leva: the lateral malleolus is 3.9 % of the stature up).
    up: (3,) world up (default :func:`detect_up`).
    """
    up = detect_up(skeleton) if up is None else up
    n = skeleton.n_joints
    both = rest_positions(skeleton, include_end_sites=True)
    pos, ends = both[:n], both[n:]
    try:
        feet = [chain[0] for chain in find_feet(skeleton, up).values()]
    except ValueError:
        feet = []
    foot = feet[0] if feet else None
    lying = foot is not None and not _upright(pos, skeleton, foot, up)
    head = find_head(skeleton, pos, up) if lying else None
    length = _path_length(skeleton, foot, head, pos) if lying else np.inf
    if not np.isfinite(length):  # upright, or no foot-to-head path (legs in another tree): measure the pose
        trees = {body_root(skeleton)} | {skeleton.path_to_root(f)[-1] for f in feet}
        inside = np.any([skeleton.subtree(r) for r in sorted(trees)], axis=0)  # legs may hang from their own root
        heights = np.concatenate((pos[inside] @ up, ends[inside[skeleton.end_site_parents]] @ up))
        return float(np.ptp(heights))
    head_ends = ends[skeleton.end_site_parents == head]
    if len(head_ends):
        length += float(np.linalg.norm(head_ends[0] - pos[head]))
    return length / (1.0 - 0.039)


def _upright(pos: np.ndarray, skeleton: Skeleton, foot: int, up: np.ndarray) -> bool:
    """Whether the leg of ``foot`` hangs within 25° of −up in the given pose (a foot with no leg above it: the
    pose is measured as it stands)."""
    try:
        hip = limb_chain(skeleton, foot)[0]
    except ValueError:
        return True
    leg = pos[foot] - pos[hip]
    return bool(-(leg @ up) >= np.cos(np.radians(25.0)) * np.linalg.norm(leg))


def _path_length(skeleton: Skeleton, a: int, b: int, pos: np.ndarray) -> float:
    """Sum of bone lengths on the tree path between joints ``a`` and ``b``."""
    top = skeleton.common_ancestor(a, b)
    if top < 0:  # different trees: no path
        return float("inf")
    total = 0.0
    for j in (a, b):
        while j != top:
            p = int(skeleton.parents[j])
            total += float(np.linalg.norm(pos[j] - pos[p]))
            j = p
    return total
