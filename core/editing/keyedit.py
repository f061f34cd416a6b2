"""Key edit with falloff (MotionPro): change one pose and spread the change over nearby frames.

For each edited joint the change at frame t is the displacement d = log(q(t)⁻¹·q_new) (local,
half-angle rotation vector); every frame s gets q(s)·exp(f(s)·d) with a falloff f that is 1 at
t and 0 from |s − t| ≥ width on (motion warping: the displacement is added in the joint's own
frame, so the original detail rides on top). Translations (e.g. the root) get p(s) + f(s)·Δp.

Falloff shapes of x = 1 − |s − t|/width: ``"smootherstep"`` 6x⁵ − 15x⁴ + 10x³ (default; zero
first and second derivatives at both ends: no velocity or acceleration jump), ``"smoothstep"``
3x² − 2x³ (zero first derivative), ``"linear"`` (a velocity kink, for comparison).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import quaternion as quat
from ..motion import Motion

SHAPES = {
    "smootherstep": lambda x: x * x * x * (x * (6.0 * x - 15.0) + 10.0),
    "smoothstep": lambda x: x * x * (3.0 - 2.0 * x),
    "linear": lambda x: x,
}


def falloff(n_frames: int, frame: int, width: float, shape: str = "smootherstep") -> np.ndarray:
    """(T,) weights: 1 at ``frame``, 0 at distance ≥ ``width`` frames (module notes)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown falloff shape {shape!r}; choose from {sorted(SHAPES)}")
    if width <= 0:
        return (np.arange(n_frames) == frame).astype(float)
    x = np.clip(1.0 - np.abs(np.arange(n_frames) - frame) / width, 0.0, 1.0)
    return SHAPES[shape](x)


def _joint(motion: Motion, key: int | str) -> int:
    return motion.skeleton.index(key) if isinstance(key, str) else int(key)


def key_edit(
    motion: Motion,
    frame: int,
    rotations: Mapping[int | str, np.ndarray] | None = None,
    translations: Mapping[int | str, np.ndarray] | None = None,
    width: float = 10.0,
    shape: str = "smootherstep",
) -> Motion:
    """A copy where ``frame`` has the new local ``rotations`` (joint → (4,) w, x, y, z) and
    ``translations`` (joint → (3,) scene units), blended into the frames around it.

    width: frames on each side over which the change fades out (frames at distance ≥ width are
    untouched); 0 changes only ``frame``. shape: see the module notes.
    """
    if not 0 <= frame < motion.n_frames:
        raise ValueError(f"frame must be in [0, {motion.n_frames}), got {frame}")
    out = motion.copy()
    f = falloff(motion.n_frames, frame, width, shape)
    near = np.flatnonzero(f > 0.0)
    if rotations:
        joints = np.array([_joint(motion, k) for k in rotations])
        new = quat.normalize(np.array([np.asarray(q, dtype=float) for q in rotations.values()]))
        d = quat.log(quat.multiply(quat.conjugate(motion.rotations[frame, joints]), new))  # (n, 3)
        change = quat.exp(f[near, None, None] * d[None])
        out.rotations[np.ix_(near, joints)] = quat.multiply(motion.rotations[np.ix_(near, joints)], change)
        out.rotations[frame, joints] = new
    if translations:
        joints = np.array([_joint(motion, k) for k in translations])
        new = np.array([np.asarray(p, dtype=float) for p in translations.values()])
        d = new - motion.translations[frame, joints]
        out.translations[np.ix_(near, joints)] += f[near, None, None] * d[None]
        out.translations[frame, joints] = new
    return out
