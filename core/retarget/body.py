"""Body measures that do not depend on the rest pose being a standing pose.

Every length is a distance between two rest joint positions that one rigid bone (or a run of
bones between labelled joints) keeps in any pose, so a BVH whose rest pose is folded
(Bandai Namco's: every bone along +X) measures the same as a T-pose.
"""

from __future__ import annotations

import numpy as np

from ..kinematics import rest_positions
from ..skeleton import Skeleton

_TRUNK = ("hips", "spine", "spine1", "chest", "neck", "neck1", "head")


def _dist(pos: np.ndarray, a: int, b: int) -> float:
    return float(np.linalg.norm(pos[a] - pos[b]))


def leg_length(skeleton: Skeleton, labels: dict[str, int]) -> float | None:
    """Mean over the labelled legs of upper-leg→knee + knee→ankle (scene units), None without legs."""
    pos = rest_positions(skeleton)
    lengths = [
        _dist(pos, labels[f"upper_leg.{s}"], labels[f"lower_leg.{s}"])
        + _dist(pos, labels[f"lower_leg.{s}"], labels[f"foot.{s}"])
        for s in "LR"
        if all(f"{b}.{s}" in labels for b in ("upper_leg", "lower_leg", "foot"))
    ]
    return float(np.mean(lengths)) if lengths else None


def standing_height(skeleton: Skeleton, labels: dict[str, int]) -> float:
    """Approximate standing height (scene units): leg length, plus hip joint → hips, plus the
    distances along the labelled trunk joints hips → … → head, plus the head's tip (its End
    Site or child). Falls back to :meth:`Skeleton.size` without legs or trunk labels."""
    legs = leg_length(skeleton, labels)
    trunk = [labels[n] for n in _TRUNK if n in labels]
    if legs is None or len(trunk) < 2:
        return skeleton.size()
    pos = rest_positions(skeleton, include_end_sites=True)
    hips = [_dist(pos, labels[f"upper_leg.{s}"], labels["hips"]) for s in "LR" if f"upper_leg.{s}" in labels]
    total = legs + float(np.mean(hips)) + sum(_dist(pos, a, b) for a, b in zip(trunk, trunk[1:]))
    head = trunk[-1]
    tips = [skeleton.n_joints + i for i, p in enumerate(skeleton.end_site_parents) if p == head]
    tips += [int(c) for c in skeleton.children(head)]
    if tips:
        total += max(_dist(pos, head, t) for t in tips)
    return total


def foot_points(skeleton: Skeleton, labels: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Joints (F,) and End Site indices (E,) of the feet's subtrees (what touches the ground);
    every joint and End Site when no foot is labelled."""
    feet = [labels[f"foot.{s}"] for s in "LR" if f"foot.{s}" in labels]
    if not feet:
        return np.arange(skeleton.n_joints), np.arange(len(skeleton.end_site_parents))
    mask = np.zeros(skeleton.n_joints, dtype=bool)
    for f in feet:
        mask |= skeleton.subtree(f)
    return np.flatnonzero(mask), np.flatnonzero(mask[skeleton.end_site_parents])
