"""Poses that compare across rigs: the directions of the body's main segments in the body's own frame.

Local joint rotations cannot be compared between two rigs: rest poses (T or A), bone rolls and joint
counts differ. What does compare is where the limbs point. A pose is described by the unit
directions (S, 3) of :data:`SEGMENTS` — thighs, shins, upper arms, forearms, the trunk and the neck —
between joints found by the retargeting map's canonical labels
(:func:`core.retarget.mapping.label_skeleton`), expressed in the body frame of that frame: x from
the right hip to the left, y up, z = x × y (so turning or walking elsewhere changes nothing).

The distance between two poses is the keyframe paper's pose distance (a weighted sum of per-joint
angles, :class:`core.keyframes.distance.PoseMetric`) on these segments: D = Σ_s w_s·∠(d_s, d'_s),
radians, weights summing to 1 (so D is a mean angle).
"""

from __future__ import annotations

import numpy as np

from ..limbs import detect_up
from ..motion import Motion

# (name, from, to): each end is a canonical label, or a tuple of candidates (the first labelled wins).
SEGMENTS = (
    ("thigh.L", "upper_leg.L", "lower_leg.L"),
    ("shin.L", "lower_leg.L", "foot.L"),
    ("thigh.R", "upper_leg.R", "lower_leg.R"),
    ("shin.R", "lower_leg.R", "foot.R"),
    ("upper_arm.L", "upper_arm.L", "forearm.L"),
    ("forearm.L", "forearm.L", "hand.L"),
    ("upper_arm.R", "upper_arm.R", "forearm.R"),
    ("forearm.R", "forearm.R", "hand.R"),
    ("trunk", "hips", ("neck", "neck1", "chest", "spine1")),
    ("neck", ("neck", "neck1", "chest"), "head"),
)
SEGMENT_NAMES = tuple(s[0] for s in SEGMENTS)


def _first(labels: dict[str, int], candidates: str | tuple[str, ...]) -> int | None:
    for c in (candidates,) if isinstance(candidates, str) else candidates:
        if c in labels:
            return labels[c]
    return None


def segment_joints(labels: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(S,) start and end joint index of every segment; raises ValueError naming the missing labels."""
    starts = [_first(labels, a) for _, a, _ in SEGMENTS]
    ends = [_first(labels, b) for _, _, b in SEGMENTS]
    missing = [n for n, a, b in zip(SEGMENT_NAMES, starts, ends, strict=True) if a is None or b is None or a == b]
    if missing or "upper_leg.L" not in labels or "upper_leg.R" not in labels:
        raise ValueError(f"the body is not labelled: no {', '.join(missing) or 'hips'}")
    return np.array(starts), np.array(ends)


def pose_directions(motion: Motion, labels: dict[str, int], frames: np.ndarray | None = None) -> np.ndarray:
    """(F, S, 3) unit segment directions in each frame's body frame (see the module docstring).

    labels: canonical label → joint index (``label_skeleton``); frames: (F,) frame indices (default all).
    """
    starts, ends = segment_joints(labels)
    m = motion if frames is None else motion.frames(np.asarray(frames, dtype=int))
    pos = m.world_positions()
    up = detect_up(motion.skeleton, pos)  # from the poses themselves: a rest pose need not stand
    lateral = pos[:, labels["upper_leg.L"]] - pos[:, labels["upper_leg.R"]]
    lateral -= np.outer(lateral @ up, up)
    norm = np.linalg.norm(lateral, axis=1, keepdims=True)
    fallback = np.cross(up, np.roll(up, 1))
    lateral = np.where(norm > 1e-12, lateral / np.maximum(norm, 1e-300), fallback)
    forward = np.cross(lateral, up)
    basis = np.stack((lateral, np.broadcast_to(up, lateral.shape), forward), axis=1)  # (F, 3 axes, 3)
    d = pos[:, ends] - pos[:, starts]
    d /= np.maximum(np.linalg.norm(d, axis=2, keepdims=True), 1e-300)
    return np.einsum("fsc,fac->fsa", d, basis)


def pose_distances(a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """(A, B) pose distance D = Σ_s w_s·∠(a_s, b_s) in radians between poses a (A, S, 3) and b (B, S, 3).

    weights: (S,) summing to 1 (default uniform). Angles from the dot product, clipped to [−1, 1].
    """
    b = np.asarray(b)
    return segment_distances(np.asarray(a, dtype=b.dtype), b.transpose(1, 2, 0), weights)


def segment_distances(
    a: np.ndarray, columns: np.ndarray, weights: np.ndarray | None = None, chord: bool = False
) -> np.ndarray:
    """(A, N) pose distances (:func:`pose_distances`) from poses a (A, S, 3) to poses laid out segment by
    segment, ``columns`` (S, 3, N), in ``columns``' dtype: S small matrix products, in place.

    chord: Σ w·‖a_s − b_s‖ instead (no arccos): a lower bound of the distance (a chord is never longer
    than its arc) and within π/2 of it.
    """
    n_seg = a.shape[1]
    w = np.full(n_seg, 1.0 / n_seg) if weights is None else np.asarray(weights, dtype=float)
    out = np.zeros((len(a), columns.shape[2]), dtype=columns.dtype)
    for s in range(n_seg):
        dots = a[:, s, :] @ columns[s]
        if chord:
            np.sqrt(np.maximum(2.0 - 2.0 * dots, 0.0, out=dots), out=dots)
        else:
            np.arccos(np.clip(dots, -1.0, 1.0, out=dots), out=dots)
        out += w[s] * dots
    return out
