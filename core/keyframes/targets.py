"""The targets a user sets, how each bound is measured, and the search for the fewest keys meeting it.

A target is a dict with exactly one entry:

- ``{"count": N}`` keys (whole-pose methods: pose keys; the hybrid: keys per channel), or
  ``{"ratio": R}`` of the frames, R in (0, 1];
- ``{"max_error": E}``: at every frame, every measured point of every bone (:mod:`.error`: heads,
  tips and sides) within E of the original, in the motion's units (armature units; the add-on
  converts the scene's);
- ``{"max_angle": D}``: at every frame, every bone's rotation within D **degrees** of the original:
  the angle of q_orig⁻¹ · q_rebuilt, the bone's local rotation (its pose relative to its parent and
  rest, as Blender's channels store it; the angle does not depend on the rest, since
  (R·a)⁻¹·(R·b) = a⁻¹·b). Locations are not bounded by an angle target;
- ``{"threshold": δ}``: the threshold rule's pose distance (that method only).

The two bounds are guaranteed on what the keys play: a search on the number of keys finds the
fewest that meet the bound (:func:`fewest`), then the worst frame of every stretch still over it
becomes a key on every channel (:func:`frames_to_key`) until none is, which always ends, at worst
with every frame keyed. The hybrid meets a Max Angle channel by channel instead: a bone's local
rotation depends on its own rotation channels only, so each bone's are keyed at their worst frames
until within the bound (:func:`.channel_keys.key_bones_within_angle`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from .error import position_errors

TARGETS = ("count", "ratio", "max_error", "max_angle", "threshold")
BOUNDS = ("max_error", "max_angle")  # targets met as an upper bound on what the keys play


def check_target(target: dict) -> tuple[str, float]:
    """The target's kind and value; ValueError unless it holds exactly one known, valid target."""
    given = [k for k in TARGETS if target.get(k) is not None]
    unknown = set(target) - set(TARGETS)
    if unknown or len(given) != 1:
        raise ValueError(f"give exactly one target of {', '.join(TARGETS)}; got {sorted(target)}")
    kind = given[0]
    value = float(target[kind])
    if not np.isfinite(value):
        raise ValueError(f"{kind} must be a finite number, got {value}")
    if kind in BOUNDS and not value > 0:
        raise ValueError(f"{kind} must be positive, got {value}")
    if kind == "max_angle" and value >= 180:
        raise ValueError(f"max_angle is in degrees and must be below 180, got {value}")
    return kind, value


def quaternion_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(...) angle in degrees of a⁻¹ · b for unit quaternions (..., 4), 0..180."""
    d = quat.multiply(quat.conjugate(a), b)
    return np.degrees(2.0 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0])))


def rotation_angles(original: Motion, rebuilt: Motion) -> np.ndarray:
    """(T, J) angle in degrees of q_orig⁻¹ · q_rebuilt for every frame and bone (0..180)."""
    return quaternion_angles(original.rotations, rebuilt.rotations)


def angle_summary(original: Motion, rebuilt: Motion) -> dict:
    """The worst bone rotation error: ``angle_max`` (degrees), ``angle_worst_bone``, ``angle_worst_frame`` (0-based)."""
    # the angle falls as |⟨q_orig, q_rebuilt⟩| rises: the worst is found on the dot products, its angle measured alone
    dot = np.abs(np.einsum("tjc,tjc->tj", original.rotations, rebuilt.rotations))
    frame, bone = np.unravel_index(int(np.argmin(dot)), dot.shape)
    return {
        "angle_max": float(quaternion_angles(original.rotations[frame, bone], rebuilt.rotations[frame, bone])),
        "angle_worst_bone": original.skeleton.names[bone],
        "angle_worst_frame": int(frame),
    }


def frame_worst(original: Motion, rebuilt: Motion, kind: str, original_points: np.ndarray | None = None) -> np.ndarray:
    """(T,) the bound's measure per frame: the largest point error (``max_error``, motion units) or
    the largest bone angle (``max_angle``, degrees). original_points: :func:`.error.pose_points` of ``original``."""
    if kind == "max_angle":
        return rotation_angles(original, rebuilt).max(axis=1)
    if kind == "max_error":
        return position_errors(original, rebuilt, original_points).max(axis=1)
    raise ValueError(f"{kind!r} is not a bound; choose from {BOUNDS}")


def frames_to_key(per_frame: np.ndarray, bound: float, taken: np.ndarray) -> np.ndarray:
    """The worst frame of every run of consecutive frames over ``bound``, among the frames not ``taken``."""
    over = per_frame > bound
    run = np.cumsum(np.r_[True, over[1:] != over[:-1]])  # run label of every frame
    frames = np.setdiff1d(np.flatnonzero(over), taken)
    if not len(frames):
        return np.zeros(0, dtype=int)
    order = np.lexsort((-per_frame[frames], run[frames]))
    return np.sort(frames[order][np.r_[True, run[frames][order][1:] != run[frames][order][:-1]]])


def fewest(
    measure: Callable[[int], float], bound: float, lo: int, hi: int, tolerance: float = 0.0, interpolate: bool = False
) -> int:
    """The smallest n in [lo, hi] with ``measure(n) <= bound`` (the measure taken to fall as n grows,
    and within the bound at ``hi``) by bisection; with a ``tolerance`` the search stops once
    hi ≤ (1 + tolerance)·lo.

    interpolate: for a measure that does fall smoothly (probes are dear): once both ends are measured
    the next n is interpolated on log n against log measure (errors fall about as a power of the key
    count), kept inside the middle 80 % of the bracket; after two moves of the same end (a max error
    falls in steps) it bisects on log n instead. Before any n is within the bound, the power law
    through the last two is extended (never past the log midpoint): the dear probes of large n are
    seldom made. Plain bisection suits the whole-pose methods, whose error is far from monotone in
    the count (the threshold rule's above all).
    """
    low = measure(lo)
    if hi <= lo or low <= bound:
        return lo
    high = None  # not measured: taken to be within the bound
    failed = [(lo, low)]  # counts over the bound and their measures, in probing order
    moved = []  # which end each probe moved
    while hi - lo > 1 and hi > (1.0 + tolerance) * lo:
        mid = (lo + hi) // 2
        if interpolate:
            x_lo, x_hi = np.log(lo), np.log(hi)
            x = 0.5 * (x_lo + x_hi)
            if high is not None and high > 0 and moved[-2:] not in (["lo", "lo"], ["hi", "hi"]):
                share = (np.log(low) - np.log(bound)) / (np.log(low) - np.log(high))
                x = x_lo + float(np.clip(share, 0.1, 0.9)) * (x_hi - x_lo)
            elif high is None and len(failed) > 1 and failed[-2][1] > low > 0:
                # no count within the bound yet: extend the power law through the last two, 10 % past it
                (n0, m0), (n1, m1) = failed[-2:]
                slope = np.log(m0 / m1) / np.log(n1 / n0)
                x = min(np.log(n1) + np.log(m1 / bound) / slope + np.log(1.1), x)
            mid = int(round(np.exp(x)))
        mid = min(max(mid, lo + 1), hi - 1)
        value = measure(mid)
        if value <= bound:
            hi, high = mid, value
            moved.append("hi")
        else:
            lo, low = mid, value
            failed.append((lo, low))
            moved.append("lo")
    return hi
