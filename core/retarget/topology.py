"""Canonical humanoid labels from the hierarchy and bone lengths alone, when names say nothing.

Everything but the sides is read from rest offsets (a bone's length and direction in its
parent's frame), so a folded rest pose (Bandai Namco's and iClone's BVH: every bone along
one axis) labels the same as a T-pose, and the order of siblings does not matter:

- helpers: a child that sits on the bone from its parent to the parent's main child (a twist
  or share bone: iClone's ``CalfTwist01``/``KneeShareBone``, Unreal's ``lowerarm_twist_01_l``)
  is never followed; a joint at its parent's place (zero offset) stands for its parent;
- *major* branches of a joint: its non-helper children whose longest path down is at least
  a fifth of the body's longest path below the hips (fingers, toes, face, jaw, tongue,
  eyes, breast and ribs are not); a joint at its parent's place with two or more major
  branches (iClone's ``Pelvis`` under ``Hip``) lends them to its parent;
- hips: the shallowest joint with three or more major branches (where two legs and the
  spine meet; an Unreal ``root`` with ``pelvis`` and IK bones has fewer), or the joint at
  its place that has three itself (Biped's ``Bip01 Pelvis`` under ``Bip01``); spine: the branch
  with the most leaves (it carries the arms and the head); legs: of the others, the two most
  alike (a tail is left out);
- each limb is followed down its main children (the longest path, helpers skipped). On that
  run the upper joint, the middle joint (knee, elbow) and the end (ankle, wrist) are the
  triple whose two segments are long, alike (score min − |difference|) and straight (no
  bend of 40° or more inside one: the ankle), so a clavicle, a hip joint or a Rigify twist
  segment (``DEF-thigh.L.001``) is not taken for a limb bone; a run start at the hips' own
  place (CMU's ``LHipJoint``) is not the upper joint, nor one farther from the middle joint
  than the lowest joint at 80 % of that distance;
  the joint above the upper one is the hip joint / collar, the one below the end the toe;
- spine: from the hips down the spine branch to the first joint with two or more major
  branches (the chest); arms: the chest's two most alike major branches; neck and head: the
  other one, followed to where it branches (the face) or ends; a leaf much longer than the
  bone before it (Mixamo's ``HeadTop_End``) is the top of the head, not the head;
- an arm that ends at a leaf (no fingers) ends at the wrist, or at the forearm when its hand was
  deleted: a long End Site is a forearm's length; without one, the reading whose collar, upper arm
  and forearm are nearer a human's proportions (against each other and the thigh) wins
  (:func:`_hand_missing`).

Sides: from the names when they carry one (:func:`core.limbs.split_side`), else from a
standing pose: with up from the feet to the hips and forward from the ankles to the toes,
the character's left is up × forward (without toes, +X is taken as left, as in BVH and
Blender conventions).
"""

from __future__ import annotations

import numpy as np

from ..limbs import LONG_LEAF, split_side
from ..skeleton import Skeleton, rest_positions

MAJOR_FRACTION = 0.2  # of the longest path from the root: a limb, the spine, the neck


class _Tree:
    """Lengths and helper flags of one skeleton (rest offsets only)."""

    def __init__(self, skeleton: Skeleton, scale: float | None = None) -> None:
        self.sk = skeleton
        n = skeleton.n_joints
        self.kids = [[int(c) for c in skeleton.children(j)] for j in range(n)]
        self.pos = rest_positions(skeleton)
        self.bone = skeleton.bone_lengths()
        order = np.argsort(skeleton.depths(), kind="stable")[::-1]
        self.down = np.zeros(n)  # longest path (bone lengths, End Sites included) below each joint
        ends = np.linalg.norm(skeleton.end_site_offsets, axis=-1) if len(skeleton.end_site_parents) else []
        for parent, length in zip(skeleton.end_site_parents, ends):
            self.down[parent] = max(self.down[parent], float(length))
        for j in order:
            if self.kids[j]:
                self.down[j] = max(self.down[j], *(self.bone[c] + self.down[c] for c in self.kids[j]))
        # the longest path below a branching joint (a static root far away does not count)
        branching = [j for j in range(n) if len(self.kids[j]) >= 2]
        self.scale = max(float(self.down[branching or [0]].max(initial=0.0)) if scale is None else scale, 1e-9)
        self.helper = np.zeros(n, dtype=bool)
        for j in range(n):
            self._mark_helpers(j)

    def _mark_helpers(self, j: int) -> None:
        kids = self.kids[j]
        if len(kids) < 2:
            return
        tiny = 0.02 * self.scale
        main = max(kids, key=lambda c: (self.bone[c] + self.down[c], -c))
        seg = self.pos[main] - self.pos[j]
        length = float(np.linalg.norm(seg))
        for c in kids:
            if c == main:
                continue
            inside = np.flatnonzero(self.sk.subtree(c))
            if length > 0.1 * self.scale and len(inside) <= 3:
                rel = self.pos[inside] - self.pos[j]
                along = rel @ seg / length**2
                off = np.linalg.norm(rel - np.outer(along, seg), axis=1)
                if np.all((along > -0.05) & (along < 1.05) & (off < 0.15 * length + tiny)):
                    self.helper[inside] = True
                    continue
            if self.bone[c] < tiny and self.down[c] < tiny:
                self.helper[inside] = True

    def real_kids(self, j: int) -> list[int]:
        return [c for c in self.kids[j] if not self.helper[c]]

    def weight(self, c: int) -> float:
        return float(self.bone[c] + self.down[c])

    def main_child(self, j: int) -> int | None:
        kids = self.real_kids(j)
        return max(kids, key=lambda c: (self.weight(c), -c)) if kids else None

    def majors(self, j: int, expand: bool = True) -> list[int]:
        """Major branch starts of ``j``; with ``expand``, a child at (nearly) the same place that
        splits into major branches lends them (see the module notes)."""
        out = []
        for c in self.real_kids(j):
            if self.weight(c) < MAJOR_FRACTION * self.scale:
                continue
            inner = self.majors(c, False) if expand and self.bone[c] < 0.03 * self.scale else []
            out.extend(inner if len(inner) >= 2 else [c])
        return out

    def bend(self, pose: np.ndarray, a: int, b: int, c: int) -> float:
        """Angle (degrees) between the bones a→b and b→c: the median over the poses (T, J, 3)."""
        u, v = pose[:, b] - pose[:, a], pose[:, c] - pose[:, b]
        nu, nv = np.linalg.norm(u, axis=-1), np.linalg.norm(v, axis=-1)
        ok = (nu > 1e-9) & (nv > 1e-9)
        if not ok.any():
            return 0.0
        cos = np.einsum("ij,ij->i", u[ok], v[ok]) / (nu[ok] * nv[ok])
        return float(np.degrees(np.median(np.arccos(np.clip(cos, -1.0, 1.0)))))

    def run(self, start: int) -> list[int]:
        """``start`` and its main children down to a leaf."""
        out = [start]
        while (c := self.main_child(out[-1])) is not None:
            out.append(c)
        return out

    def leaves(self, j: int) -> int:
        inside = np.flatnonzero(self.sk.subtree(j))
        return sum(1 for k in inside if not self.kids[k])


def _alike(tree: _Tree, branches: list[int]) -> tuple[int, int]:
    """The two branches most alike in length and size (a mirrored pair), and in the lengths of their first
    :data:`MIRROR_BONES` bones (:func:`_bones_apart`): by length and size alone an arm whose hand was deleted was
    more like the neck than like the other arm (CMU 02_01 without its left hand and names: the neck and head taken
    for an arm), where its collar, upper arm and forearm are the other arm's."""
    best, pair = np.inf, (branches[0], branches[1])
    for i, a in enumerate(branches):
        for b in branches[i + 1 :]:
            wa, wb = tree.weight(a), tree.weight(b)
            na, nb = tree.sk.subtree(a).sum(), tree.sk.subtree(b).sum()
            cost = abs(wa - wb) / max(wa, wb, 1e-9) + abs(int(na) - int(nb)) / max(na, nb)
            cost += MIRROR_WEIGHT * _bones_apart(tree, a, b)
            if cost < best:
                best, pair = cost, (a, b)
    return pair


MIRROR_BONES = 3  # a limb's first bones compared by :func:`_alike` (collar, upper arm, forearm; thigh, shin, foot)
MIRROR_WEIGHT = 2.0  # … against the branches' whole length and size


def _bones_apart(tree: _Tree, a: int, b: int) -> float:
    """Mean relative difference of the lengths of the first :data:`MIRROR_BONES` bones down the runs from ``a`` and
    ``b`` (as many as the shorter has): 0 for mirrored limbs, however either ends."""
    ra, rb = tree.run(a), tree.run(b)
    k = min(MIRROR_BONES, len(ra), len(rb))
    la, lb = tree.bone[ra[:k]], tree.bone[rb[:k]]
    return float(np.mean(np.abs(la - lb) / np.maximum(np.maximum(la, lb), 1e-9 * tree.scale)))


def _straight(tree: _Tree, pose: np.ndarray, run: list[int], i: int, k: int) -> bool:
    """Whether the run bends less than 40° at every joint strictly between run[i] and run[k]
    (``pose``: (T, J, 3))."""
    return all(tree.bend(pose, run[j - 1], run[j], run[j + 1]) < 40.0 for j in range(i + 1, k))


def _limb(tree: _Tree, pose: np.ndarray, run: list[int], names: tuple[str, ...], end: int | None) -> dict[str, int]:
    """Labels (upper, middle, end, above, below) of a limb run by the rule of the module notes;
    ``end``: the run index of the end when structure tells it (a hand), else found."""
    pos = tree.pos
    best, triple = -np.inf, None
    ends = range(2, len(run)) if end is None else (end,)
    for e in ends:
        for m in range(1, e):
            if not _straight(tree, pose, run, m, e):
                continue
            b = float(np.linalg.norm(pos[run[e]] - pos[run[m]]))
            for u in range(m):
                if u == 0 and tree.bone[run[0]] < 0.03 * tree.scale:
                    continue  # starts at the hips' (chest's) own place: a pelvis (collar) bone
                if not _straight(tree, pose, run, u, m):
                    continue
                a = float(np.linalg.norm(pos[run[m]] - pos[run[u]]))
                score = min(a, b) - abs(a - b)
                if score > best + 1e-9 * tree.scale:
                    best, triple = score, (u, m, e)
    if triple is None:
        return {}
    u, m, e = triple
    # the upper joint: the lowest one nearly as far from the middle (a hip joint or collar just
    # inside it is not the limb's top)
    reach = float(np.linalg.norm(pos[run[m]] - pos[run[u]]))
    u = max(i for i in range(u, m) if np.linalg.norm(pos[run[m]] - pos[run[i]]) >= 0.8 * reach)
    upper, middle, last, above, below = names
    out = {upper: run[u], middle: run[m], last: run[e]}
    if u > 0:
        out[above] = run[u - 1]
    if e + 1 < len(run):
        out[below] = run[e + 1]
    return out


ARM_NAMES = ("upper_arm", "forearm", "hand", "shoulder", "finger_base")
# A human arm's proportions (:func:`_hand_missing`): forearm / upper arm and upper arm / thigh from de Leva (1996,
# joint centres: 0.2689 / 0.2817, 0.2817 / 0.4222), the path from the chest joint to the shoulder joint about one
# upper arm (0.64–1.38 on the CMU, Bandai, Mixamo and Character Creator captures).
ARM_PROPORTIONS = {"forearm/upper_arm": 0.2689 / 0.2817, "upper_arm/thigh": 0.2817 / 0.4222, "collar/upper_arm": 1.0}


def _arm(tree: _Tree, pose: np.ndarray, run: list[int], chest: int, thigh: float | None) -> dict[str, int]:
    """Labels of an arm run from the chest: :func:`_limb`'s with the hand where :func:`_hand_index` puts it; or, when
    the run's leaf ends a forearm whose hand was deleted (:func:`_hand_missing`), the upper arm at that reading's
    elbow, the forearm at the leaf and no hand (before, the collar was taken for the upper arm and the forearm for
    the hand). ``pose``: (T, J, 3); ``thigh``: the legs' thigh length (None without legs)."""
    end = _hand_index(tree, run)
    wrist = _limb(tree, pose, run, ARM_NAMES, end)
    if end != len(run) - 1 or tree.kids[run[-1]]:
        return wrist
    m = run.index(wrist["forearm"]) if wrist else len(run) - 2
    if not _hand_missing(tree, run, m, run.index(wrist["upper_arm"]) if wrist else None, chest, thigh):
        return wrist
    return {"upper_arm": run[m], "forearm": run[-1]} | ({"shoulder": run[m - 1]} if m > 0 else {})


def _hand_missing(tree: _Tree, run: list[int], m: int, u: int | None, chest: int, thigh: float | None) -> bool:
    """Whether the leaf ending an arm run is a forearm's end (its hand deleted) rather than the wrist; the wrist
    reading has its elbow at run index ``m``, its shoulder at ``u`` (None: no such reading). An End Site as long as
    a forearm (:data:`core.limbs.LONG_LEAF` of the reading's forearm and upper arm) ends a forearm. Else the reading
    nearer a human arm's proportions (:data:`ARM_PROPORTIONS`; pose-free: bone lengths only) wins: the leaf as the
    wrist (upper arm run[u..m], forearm run[m..]) or as the elbow (upper arm run[m..], forearm the End Site if any).
    A reading whose upper arm starts at the chest's own place (CMU's collar) has no shoulder: it loses."""
    sk = tree.sk
    ends = np.linalg.norm(sk.end_site_offsets[sk.end_site_parents == run[-1]], axis=-1)
    past = float(ends.max()) if len(ends) else None  # the leaf's length past it: a hand or a forearm
    if past is not None:  # against the wrist reading's forearm and upper arm, twist segments (Rigify's .001) summed
        upper = tree.bone[run[m]] if u is None else _path(tree, run[u], run[m])
        if past >= LONG_LEAF * float(np.mean([_path(tree, run[m], run[-1]), upper])):
            return True
    as_elbow = _arm_misfit(tree, chest, run[m], run[-1], past, thigh)
    as_wrist = np.inf if u is None else _arm_misfit(tree, chest, run[u], run[m], _path(tree, run[m], run[-1]), thigh)
    return as_elbow < as_wrist


def _arm_misfit(
    tree: _Tree, chest: int, shoulder: int, elbow: int, forearm: float | None, thigh: float | None
) -> float:
    """Mean |log| of an arm reading's proportions against :data:`ARM_PROPORTIONS` (those it has: no forearm
    length without a wrist or an End Site, no thigh without legs); inf when its shoulder is at the chest's place."""
    collar, upper = _path(tree, chest, shoulder), _path(tree, shoulder, elbow)
    if collar < 0.03 * tree.scale or upper <= 0.0:
        return float("inf")
    ratios = {"collar/upper_arm": collar / upper}
    if forearm is not None:
        ratios["forearm/upper_arm"] = forearm / upper
    if thigh:
        ratios["upper_arm/thigh"] = upper / thigh
    return float(np.mean([abs(np.log(max(r, 1e-9) / ARM_PROPORTIONS[k])) for k, r in ratios.items()]))


def _path(tree: _Tree, top: int, joint: int) -> float:
    """Sum of the bone lengths from ``top`` down to ``joint`` (its descendant): pose-free."""
    total = 0.0
    while joint != top and joint >= 0:
        total += float(tree.bone[joint])
        joint = int(tree.sk.parents[joint])
    return total


def _hand_index(tree: _Tree, run: list[int]) -> int | None:
    """Run index of the hand: the first joint below the top two that splits into fingers, else the leaf."""
    for i in range(2, len(run)):
        if len(tree.real_kids(run[i])) >= 2:
            return i
    return len(run) - 1 if len(run) >= 3 else None


def _head_run(tree: _Tree, start: int) -> list[int]:
    """The neck branch from ``start`` to the head (module notes)."""
    out = [start]
    while True:
        kids = tree.real_kids(out[-1])
        if len(kids) != 1:
            break
        c = kids[0]
        if tree.bone[c] < 0.02 * tree.scale:  # at its parent's place: stands for it
            if len([k for k in tree.real_kids(c)]) != 1:
                break
            c = tree.real_kids(c)[0]
        out.append(c)
    if len(out) >= 2 and not tree.kids[out[-1]] and tree.bone[out[-1]] > 1.3 * tree.bone[out[-2]]:
        out.pop()
    return out


def _sides(skeleton: Skeleton, limbs: list[dict[str, int]], key: str, pos: np.ndarray, left: np.ndarray) -> list[str]:
    """ "L"/"R" for two limbs: by name when the names carry opposite sides, else by geometry."""
    ends = [limb[key] for limb in limbs]
    named = [split_side(skeleton.names[j])[0] for j in ends]
    if sorted(s or "" for s in named) == ["L", "R"]:
        return named
    return ["L", "R"] if (pos[ends[0]] - pos[ends[1]]) @ left >= 0 else ["R", "L"]


def _left_axis(legs: list[dict[str, int]], hips: int, pos: np.ndarray) -> np.ndarray:
    """The character's left (3,) in a standing pose ``pos``: up × forward (default +X)."""
    up = pos[hips] - np.mean([pos[leg["foot"]] for leg in legs], axis=0)
    toes = [pos[leg["toe"]] - pos[leg["foot"]] for leg in legs if "toe" in leg]
    if toes and np.linalg.norm(up) > 0:
        up = up / np.linalg.norm(up)
        forward = np.mean(toes, axis=0)
        left = np.cross(up, forward - (forward @ up) * up)
        if np.linalg.norm(left) > 0.3 * np.linalg.norm(forward):  # the toes point forward, not along the leg
            return left / np.linalg.norm(left)
    return np.array([1.0, 0.0, 0.0])


def _find_hips(tree: _Tree) -> int:
    for j in np.argsort(tree.sk.depths(), kind="stable"):
        if len(tree.majors(int(j))) >= 3:
            j = int(j)  # a placement root at the pelvis' own place (Biped's Bip01) hands over
            while nxt := [
                c for c in tree.real_kids(j) if tree.bone[c] < 0.03 * tree.scale and len(tree.majors(c)) >= 3
            ]:
                j = nxt[0]
            return j
    raise ValueError("no humanoid structure: no joint where two legs and a spine meet")


def _body_tree(skeleton: Skeleton) -> tuple[_Tree, int]:
    """The tree measured on the body (its scale: the longest path below the hips, so a root
    bone at the floor does not count) and the hips."""
    first = _Tree(skeleton)
    hips = _find_hips(first)
    tree = _Tree(skeleton, float(first.down[hips]))
    return tree, hips


def find_hips(skeleton: Skeleton) -> tuple[int, list[int]]:
    """(hips, its major branch starts) by the module's rule; ValueError when there is none."""
    tree, hips = _body_tree(skeleton)
    return hips, tree.majors(hips)


def arm_runs(skeleton: Skeleton) -> list[list[int]]:
    """The chest's two most alike major branches (the arms, as :func:`topology_labels` takes them), each
    followed down its main children to its hand (:func:`_hand_index`: the joint that splits into fingers, else the
    leaf; a run to a fingertip took finger joints for the forearm and hand); [] without a chest. ValueError without
    a humanoid structure."""
    tree, hips = _body_tree(skeleton)
    spine = _spine(tree, _spine_start(tree, tree.majors(hips)))
    runs = [tree.run(c) for c in _alike(tree, tree.majors(spine[-1], False))] if spine else []
    return [run[: (_hand_index(tree, run) or len(run) - 1) + 1] for run in runs]


def _spine_start(tree: _Tree, branches: list[int]) -> int:
    """The hips' branch with the most leaves (module notes); ValueError with fewer than three branches."""
    if len(branches) < 3:
        raise ValueError("no humanoid structure: no joint where two legs and a spine meet")
    return max(branches, key=lambda c: (tree.leaves(c), int(tree.sk.subtree(c).sum()), -c))


def _spine(tree: _Tree, start: int) -> list[int]:
    """The spine from ``start`` down its main children to the chest (the first joint with two or more
    major branches), the chest last; [] when it ends without one."""
    spine = [start]
    while len(tree.majors(spine[-1], False)) < 2:
        nxt = tree.main_child(spine[-1])
        if nxt is None:
            return []
        spine.append(nxt)
    return spine


def topology_labels(
    skeleton: Skeleton, positions: np.ndarray | None = None, up: np.ndarray | None = None
) -> dict[str, int]:
    """Canonical joint → joint index by the module's rule.

    positions: (J, 3) a standing pose or (T, J, 3) a few frames of a motion (default the rest
    pose): where the limbs bend (median over the frames; a folded rest pose does not bend)
    and, from the first frame, left from right when the names do not tell; up: unused, kept
    for callers (the pose gives it). Raises ValueError when no humanoid structure is found.
    """
    del up
    tree, hips = _body_tree(skeleton)
    poses = (tree.pos if positions is None else np.asarray(positions, dtype=float)).reshape(-1, skeleton.n_joints, 3)
    pose = poses[0]
    branches = tree.majors(hips)
    spine_start = _spine_start(tree, branches)
    others = [c for c in branches if c != spine_start]
    labels = {"hips": hips}
    leg_names = ("upper_leg", "lower_leg", "foot", "hip_joint", "toe")
    legs = [_limb(tree, poses, tree.run(c), leg_names, None) for c in _alike(tree, others)]
    left = np.array([1.0, 0.0, 0.0])
    if all(legs):
        left = _left_axis(legs, hips, pose)
        for side, leg in zip(_sides(skeleton, legs, "upper_leg", pose, left), legs):
            labels.update({f"{k}.{side}": v for k, v in leg.items()})
    spine = _spine(tree, spine_start)
    if not spine:
        return labels
    chest = spine[-1]
    labels["chest"] = chest
    labels.update(dict(zip(("spine", "spine1"), spine[:-1][:2])))
    arms_start = _alike(tree, tree.majors(chest, False))
    necks = [c for c in tree.real_kids(chest) if c not in arms_start]
    if necks:
        neck = _head_run(tree, max(necks, key=lambda c: (tree.weight(c), -c)))
        labels["head"] = neck[-1]
        labels.update(dict(zip(("neck", "neck1"), neck[:-1][:2])))
    thigh = [_path(tree, leg["upper_leg"], leg["lower_leg"]) for leg in legs if leg]
    arms = [
        _arm(tree, poses, run, chest, float(np.mean(thigh)) if thigh else None) for run in map(tree.run, arms_start)
    ]
    if all(arms):
        for side, arm in zip(_sides(skeleton, arms, "upper_arm", pose, left), arms):
            labels.update({f"{k}.{side}": v for k, v in arm.items() if k != "finger_base"})
    return labels
