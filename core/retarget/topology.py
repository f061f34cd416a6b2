"""Canonical humanoid labels from the hierarchy and a standing pose, when names say nothing.

Rule (chains from the root):

- hips: the shallowest joint with three or more children (two legs and a spine; an Unreal
  ``root`` with ``pelvis`` and ``ik_foot_root`` below it has two), else
  :func:`core.limbs.body_root`;
- legs: the two child branches of the hips that reach lowest along up; each is followed down
  its unbranched run. The leaf is the toe when its bone is mostly horizontal (then its parent
  is the foot), else the foot; above the foot come the lower leg, the upper leg and, when the
  run is longer, the hip joint;
- spine: the child branch of the hips that reaches highest, followed up to the first joint
  with two or more children (the chest); the joints below it are spine, spine1;
- neck and head: the chest's child branch that reaches highest, followed to its leaf (the
  head); neck, neck1 below it;
- arms: the chest's other branches; each run ends at the hand (where it branches into fingers,
  or its leaf); forearm, upper arm and shoulder (collar) are the three joints above it.

Sides: from the names when they carry one (:func:`core.limbs.split_side`), else from
geometry: with the toes pointing forward f and up u, the character's left is u × f (for a
skeleton without toes, +X is taken as left, as in BVH and Blender conventions).

Limits: twist segments (Rigify's ``DEF-thigh.L.001``) and tip bones (Mixamo's
``HeadTop_End``) lengthen the runs and shift the labels; such rigs are labelled by name.
"""

from __future__ import annotations

import numpy as np

from ..limbs import body_root, detect_up, split_side
from ..skeleton import Skeleton, rest_positions


def _run_down(skeleton: Skeleton, start: int) -> list[int]:
    """The unbranched run from ``start`` down to the first joint with ≠ 1 children (inclusive)."""
    run = [start]
    while len(children := skeleton.children(run[-1])) == 1:
        run.append(int(children[0]))
    return run


def _reach(skeleton: Skeleton, joint: int, height: np.ndarray) -> tuple[float, float]:
    """(lowest, highest) height of the joints in the subtree of ``joint``."""
    h = height[skeleton.subtree(joint)]
    return float(h.min()), float(h.max())


def _leg(run: list[int], pos: np.ndarray, up: np.ndarray) -> dict[str, int]:
    leaf_bone = pos[run[-1]] - pos[run[-2]] if len(run) >= 2 else np.zeros(3)
    horizontal = abs(leaf_bone @ up) < 0.5 * np.linalg.norm(leaf_bone)
    foot = len(run) - 2 if horizontal and len(run) >= 4 else len(run) - 1
    if foot < 2:
        return {}
    out = {"foot": run[foot], "lower_leg": run[foot - 1], "upper_leg": run[foot - 2]}
    if foot + 1 < len(run):
        out["toe"] = run[foot + 1]
    if foot >= 3:
        out["hip_joint"] = run[foot - 3]
    return out


def _arm(run: list[int]) -> dict[str, int]:
    if len(run) < 3:
        return {}
    hand = len(run) - 1
    out = {"hand": run[hand], "forearm": run[hand - 1], "upper_arm": run[hand - 2]}
    if hand >= 3:
        out["shoulder"] = run[hand - 3]
    return out


def _left_axis(legs: list[dict[str, int]], pos: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The character's left (3,): up × forward, forward from the feet to the toes (default +X)."""
    toes = [pos[leg["toe"]] - pos[leg["foot"]] for leg in legs if "toe" in leg]
    if toes:
        forward = np.mean(toes, axis=0)
        left = np.cross(up, forward - (forward @ up) * up)
        if np.linalg.norm(left) > 1e-9:
            return left / np.linalg.norm(left)
    return np.array([1.0, 0.0, 0.0])


def _sides(skeleton: Skeleton, limbs: list[dict[str, int]], pos: np.ndarray, left: np.ndarray) -> list[str]:
    """ "L"/"R" for two limbs: by name when the names carry opposite sides, else by geometry."""
    ends = [next(iter(limb.values())) for limb in limbs]
    named = [split_side(skeleton.names[j])[0] for j in ends]
    if sorted(s or "" for s in named) == ["L", "R"]:
        return named
    return ["L", "R"] if (pos[ends[0]] - pos[ends[1]]) @ left >= 0 else ["R", "L"]


def _hips(skeleton: Skeleton) -> int:
    n_children = np.bincount(skeleton.parents[skeleton.parents >= 0], minlength=skeleton.n_joints)
    wide = np.flatnonzero(n_children >= 3)
    return int(wide[np.argmin(skeleton.depths()[wide])]) if len(wide) else body_root(skeleton)


def topology_labels(
    skeleton: Skeleton, positions: np.ndarray | None = None, up: np.ndarray | None = None
) -> dict[str, int]:
    """Canonical joint → joint index by the module's rule.

    positions: (J, 3) a standing pose (default the rest pose); up: (3,) unit up axis (default
    :func:`core.limbs.detect_up`). Raises ValueError when no humanoid structure is found.
    """
    pos = rest_positions(skeleton) if positions is None else np.asarray(positions, dtype=float)
    up = detect_up(skeleton, pos) if up is None else np.asarray(up, dtype=float)
    height = pos @ up
    hips = _hips(skeleton)
    branches = [int(c) for c in skeleton.children(hips)]
    if len(branches) < 3:
        raise ValueError("no humanoid structure: the hips need two legs and a spine")
    reach = {c: _reach(skeleton, c, height) for c in branches}
    legs_start = sorted(branches, key=lambda c: reach[c][0])[:2]
    spine_start = max((c for c in branches if c not in legs_start), key=lambda c: reach[c][1])
    labels = {"hips": hips}
    legs = [_leg(_run_down(skeleton, c), pos, up) for c in legs_start]
    left = _left_axis([leg for leg in legs if leg], pos, up)
    if all(legs):
        for side, leg in zip(_sides(skeleton, legs, pos, left), legs):
            labels.update({f"{k}.{side}": v for k, v in leg.items()})
    spine = _run_down(skeleton, spine_start)
    chest = spine[-1]
    labels["chest"] = chest
    labels.update(dict(zip(("spine", "spine1"), spine[:-1][:2])))
    upper = [int(c) for c in skeleton.children(chest)]
    if not upper:
        return labels
    neck_start = max(upper, key=lambda c: _reach(skeleton, c, height)[1])
    neck = _run_down(skeleton, neck_start)
    labels["head"] = neck[-1]
    labels.update(dict(zip(("neck", "neck1"), neck[:-1][:2])))
    arms = [_arm(_run_down(skeleton, c)) for c in upper if c != neck_start]
    arms = [a for a in arms if a]
    if len(arms) == 2:
        for side, arm in zip(_sides(skeleton, arms, pos, left), arms):
            labels.update({f"{k}.{side}": v for k, v in arm.items()})
    return labels
