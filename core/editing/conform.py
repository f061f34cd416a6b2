"""Bring a second motion onto the first one's skeleton and frame rate before combining them."""

from __future__ import annotations

import numpy as np

from ..motion import Motion
from ..skeleton import Skeleton
from .timing import resample


def conform(motion: Motion, skeleton: Skeleton, fps: float | None = None) -> Motion:
    """``motion`` expressed on ``skeleton``: joints matched by name, rates matched.

    Both skeletons need the same joint names with the same parents (another capture of the
    same rig, e.g. two CMU subjects). Joints are reordered to ``skeleton``'s order; joints
    without position channels in ``skeleton`` take its rest offsets (its bone lengths), animated
    translations (the root path) are kept as they are. Rest rotations must agree (BVH: identity).
    fps: resample to this rate first (slerp), when it differs.
    """
    if fps is not None and not np.isclose(motion.fps, fps, rtol=1e-6):
        motion = resample(motion, fps)
    source = motion.skeleton
    if source is skeleton:
        return motion
    if sorted(source.names) != sorted(skeleton.names):
        missing = sorted(set(skeleton.names) ^ set(source.names))
        raise ValueError(f"the two motions need the same joints; these appear in only one: {missing[:8]}")
    order = np.array([source.index(n) for n in skeleton.names])
    parent_names = [None if p < 0 else skeleton.names[p] for p in skeleton.parents]
    source_parents = [None if p < 0 else source.names[p] for p in source.parents[order]]
    if parent_names != source_parents:
        raise ValueError("the two skeletons name the same joints but connect them differently")
    if not np.allclose(source.rest_rotations[order], skeleton.rest_rotations, atol=1e-9):
        raise ValueError("the two skeletons have different rest rotations; convert one first (change_rest)")
    translations = motion.translations[:, order].copy()
    fixed = ~skeleton.has_position_channels
    translations[:, fixed] = skeleton.rest_translations[fixed]
    return Motion(skeleton, translations, motion.rotations[:, order].copy(), motion.fps)
