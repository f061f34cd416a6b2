"""Body measures that do not depend on the rest pose being a standing pose.

Every length is a distance between two rest joint positions that one rigid bone (or a run of
bones between labelled joints) keeps in any pose, so a BVH whose rest pose is folded
(Bandai Namco's: every bone along +X) measures the same as a T-pose.
"""

from __future__ import annotations

import numpy as np

from ..skeleton import Skeleton, rest_positions


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
