"""Body-part blending (MotionPro): a joint and its subtree taken from motion B, the rest from A.

Weights per joint (0 = A, 1 = B): ``weight`` on the chosen joint and everything below it;
``weight·soft_edge`` on its parent, so the seam turns partly with the part (a soft edge); the
pelvis follows the **root option**: ``root_rotation=True`` gives it ``weight`` towards B's
pelvis orientation turned to A's heading frame by frame (B's lean and sway without B's
direction), ``False`` keeps A's (and the soft edge then stops below the pelvis). The root
position is always A's. Joints are mixed by slerp of local rotations (:func:`.mix.mix`).

Time alignment: B's frames from ``offset`` (``length`` frames, default the rest of B) are
stretched onto A's frame count (slerp resampling), or, with ``stretch=False``, B's frame
offset + t is used for A's frame t (B's last frame is held past its end).
"""

from __future__ import annotations

import numpy as np

from ..motion import Motion
from .conform import conform
from .mix import ancestors, mix
from .root import normalize_frames, pelvis_joint, place_frames, resolve_up, track
from .timing import sample


def part_weights(
    motion: Motion, joint: int, weight: float = 1.0, soft_edge: float = 0.5, root_rotation: bool = False
) -> np.ndarray:
    """(J,) blend weights for the part rooted at ``joint`` (module notes)."""
    sk = motion.skeleton
    pelvis = pelvis_joint(motion)
    body = ancestors(motion, pelvis)
    body[pelvis] = True  # the pelvis and everything above it: governed by the root option
    w = np.where(sk.subtree(joint), weight, 0.0)
    parent = int(sk.parents[joint])
    if parent >= 0 and not body[parent]:
        w[parent] = weight * soft_edge
    w[body] = 0.0
    if root_rotation:
        w[pelvis] = weight
    return w


def align_b(a: Motion, b: Motion, offset: int = 0, length: int | None = None, stretch: bool = True) -> Motion:
    """B's frames matched to A's frame count (module notes); B on A's skeleton and rate already."""
    if not 0 <= offset < b.n_frames:
        raise ValueError(f"offset must be a frame of B (0..{b.n_frames - 1}), got {offset}")
    if stretch:
        length = b.n_frames - offset if length is None else length
        if length < 1 or offset + length > b.n_frames:
            raise ValueError(f"B has no frames [{offset}, {offset + length})")
        return sample(b, np.linspace(offset, offset + length - 1, a.n_frames))
    return sample(b, offset + np.arange(a.n_frames, dtype=float))


def blend_parts(
    a: Motion,
    b: Motion,
    joint: int | str,
    weight: float = 1.0,
    offset: int = 0,
    length: int | None = None,
    stretch: bool = True,
    soft_edge: float = 0.5,
    root_rotation: bool = False,
    up: str | np.ndarray | None = None,
) -> Motion:
    """A with the part of the body at ``joint`` (name or index) taken from B (module notes).

    weight: 0..1 how much of B; offset, length: B's frames to use; stretch: resample them to
    A's length; soft_edge: fraction of ``weight`` given to the joint's parent; root_rotation:
    take B's pelvis orientation (heading-aligned to A) with ``weight``.
    """
    b = conform(b, a.skeleton, a.fps)
    joint = a.skeleton.index(joint) if isinstance(joint, str) else int(joint)
    b = align_b(a, b, offset, length, stretch)
    weights = part_weights(a, joint, weight, soft_edge, root_rotation)
    if root_rotation:
        up = resolve_up(a, up)
        path = track(a, up)
        b = place_frames(normalize_frames(b, up), path.positions, path.headings, up)
    return mix(a, b, weights, pelvis_position_weight=0.0)
