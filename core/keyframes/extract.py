"""One entry point for every keyframe method and every kind of target a user thinks in.

Targets (:mod:`.targets`): a keyframe ``count``, a ``ratio`` of the frames, a ``max_error`` (largest
position error of any bone's measured point, the motion's units), a ``max_angle`` (largest bone
rotation error, degrees) or, for the threshold method, the paper's ``threshold`` δ. Count and ratio
are met exactly, the two bounds are guaranteed; the first and last frames are always keys.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from .activity import activity_for_count
from .baselines import simplify_for_count, uniform_keys
from .distance import PoseMetric
from .error import pose_points
from .jumps import jump_frames
from .optimal import optimal_for_count
from .reconstruct import reconstruct
from .targets import check_target, fewest, frame_worst, frames_to_key
from .threshold import threshold_for_count, threshold_keys

CountMethod = Callable[[Motion, PoseMetric, int], tuple[np.ndarray, dict]]


def _threshold_for_count(motion: Motion, metric: PoseMetric, count: int) -> tuple[np.ndarray, dict]:
    delta, keys = threshold_for_count(motion, metric, count)
    return keys, {"threshold": delta}


def _uniform_for_count(motion: Motion, metric: PoseMetric, count: int) -> tuple[np.ndarray, dict]:
    return uniform_keys(motion.n_frames, count), {}


METHODS: dict[str, CountMethod] = {
    "threshold": _threshold_for_count,
    "uniform": _uniform_for_count,
    "simplify": simplify_for_count,
    "activity": activity_for_count,
    "optimal": optimal_for_count,
}


@dataclass
class KeyframeResult:
    """Selected keyframes (0-based ascending frame indices) and how they were chosen."""

    keys: np.ndarray
    method: str
    params: dict = field(default_factory=dict)


def target_count(n_frames: int, count: int | None = None, ratio: float | None = None) -> int:
    """The exact number of keys a count or ratio target asks for, within [2, n_frames]."""
    if count is None:
        if ratio is None or not 0 < ratio <= 1:
            raise ValueError(f"ratio must be in (0, 1], got {ratio}")
        count = int(round(ratio * n_frames))
    if count < 1:
        raise ValueError(f"keyframe count must be at least 1, got {count}")
    return int(min(max(count, 2 if n_frames > 1 else 1), n_frames))


def extract_keyframes(
    motion: Motion,
    method: str = "threshold",
    *,
    count: int | None = None,
    ratio: float | None = None,
    max_error: float | None = None,
    max_angle: float | None = None,
    threshold: float | None = None,
    metric: PoseMetric | None = None,
    weights: str = "HIERARCHY",
    weight_overrides: Mapping[str, float] | None = None,
    keep_jumps: bool = True,
    progress: Callable[[float], None] | None = None,
) -> KeyframeResult:
    """Choose keyframes of ``motion`` with ``method`` to meet exactly one target.

    keep_jumps: frames on both sides of a jump (see :func:`.jumps.jump_frames`) are always
    keys, so no segment smears a discontinuity; they count towards a count target. progress: called
    with fractions by the long methods (the optimum); an exception it raises cancels the extraction.
    """
    if method not in METHODS:
        raise ValueError(f"unknown keyframe method {method!r}; choose from {sorted(METHODS)}")
    kind, _ = check_target({"count": count, "ratio": ratio, "max_error": max_error, "max_angle": max_angle,
                            "threshold": threshold})  # fmt: skip
    metric = metric or PoseMetric.for_motion(motion, weights, weight_overrides)
    n = motion.n_frames
    params: dict = {"weights": weights, "translation_weight": metric.translation_weight}
    if n == 1:
        return KeyframeResult(np.array([0]), method, params)
    if threshold is not None:
        if method != "threshold":
            raise ValueError("a threshold target applies to the threshold method only")
        if threshold < 0:
            raise ValueError(f"threshold must be non-negative, got {threshold}")
        params["threshold"] = float(threshold)
        forced = jump_frames(motion, metric) if keep_jumps else np.zeros(0, dtype=int)
        return KeyframeResult(np.union1d(threshold_keys(motion, metric, threshold), forced), method, params)
    choose = METHODS[method]
    if progress is not None and method == "optimal":  # its table build reports (and can be cancelled)
        choose = functools.partial(choose, progress=progress)
    forced = jump_frames(motion, metric) if keep_jumps else np.zeros(0, dtype=int)
    if kind in ("max_error", "max_angle"):
        keys, extra = keys_for_bound(motion, metric, choose, kind, max_error if max_error is not None else max_angle)
        keys = np.union1d(keys, forced)
    else:
        wanted = target_count(n, count, ratio)
        keys, extra = choose(motion, metric, wanted)
        keys = fit_count(motion, metric, np.union1d(keys, forced), wanted, forced)
    if len(forced):
        params["jump_frames"] = [int(f) for f in forced]
    params.update(extra)
    return KeyframeResult(keys, method, params)


def removal_costs(motion: Motion, metric: PoseMetric, keys: np.ndarray) -> np.ndarray:
    """(len(keys)-2,) pose distance at each inner key between its pose and the slerp of its neighbours."""
    a, k, b = keys[:-2], keys[1:-1], keys[2:]
    u = ((k - a) / (b - a))[:, None]
    rot = quat.slerp(motion.rotations[a], motion.rotations[b], u)
    trans = (1 - u[..., None]) * motion.translations[a] + u[..., None] * motion.translations[b]
    return metric(motion.rotations[k], motion.translations[k], rot, trans)


def fit_count(
    motion: Motion, metric: PoseMetric, keys: np.ndarray, count: int, protected: np.ndarray | None = None
) -> np.ndarray:
    """Make ``keys`` exactly ``count`` long: drop the inner keys their neighbours rebuild best
    (never a ``protected`` frame), or add the worst-rebuilt frame of the worst segments."""
    keys = np.unique(keys)
    protected = np.zeros(0, dtype=int) if protected is None else np.asarray(protected, dtype=int)
    while len(keys) > count:
        costs = removal_costs(motion, metric, keys)
        costs[np.isin(keys[1:-1], protected)] = np.inf
        if not np.isfinite(costs).any():
            break
        drop = np.argsort(costs, kind="stable")[: max(1, (len(keys) - count) // 4)]
        keys = np.delete(keys, 1 + drop)
    while len(keys) < count:
        rebuilt = reconstruct(motion, keys)
        err = metric(motion.rotations, motion.translations, rebuilt.rotations, rebuilt.translations)
        err[keys] = -1.0
        seg = np.searchsorted(keys, np.arange(motion.n_frames), side="right") - 1
        # best frame per segment, then the segments with the largest such error
        order = np.lexsort((-err, seg))
        first = order[np.r_[True, seg[order][1:] != seg[order][:-1]]]
        first = first[err[first] >= 0]
        take = first[np.argsort(-err[first], kind="stable")][: count - len(keys)]
        keys = np.union1d(keys, take)
    return keys


def keys_for_bound(
    motion: Motion, metric: PoseMetric, choose: CountMethod, kind: str, bound: float
) -> tuple[np.ndarray, dict]:
    """The fewest keys (bisection on the count, :func:`.targets.fewest`) whose slerp rebuild stays
    within ``bound`` at every frame: kind ``"max_error"`` (largest position error of :mod:`.error`'s
    points: heads, tips and sides of every bone, motion units) or ``"max_angle"`` (largest bone
    rotation error, degrees; :func:`.targets.rotation_angles`).

    A final pass keys the worst frame of every stretch still over the bound, so it is guaranteed
    even where a method's error is not monotone in the count; the same pass on the largest count
    tried below the one found is kept when it needs fewer keys.
    """
    kind, bound = check_target({kind: bound})
    n = motion.n_frames
    original = pose_points(motion) if kind == "max_error" else None
    tried: dict[int, tuple] = {}

    def worst(keys: np.ndarray) -> np.ndarray:
        return frame_worst(motion, reconstruct(motion, keys), kind, original)

    def measure(count: int) -> float:
        keys, extra = choose(motion, metric, count)
        keys = fit_count(motion, metric, keys, count)
        tried[count] = keys, extra
        return float(worst(keys).max())

    best = fewest(measure, bound, 2, n)

    def repaired(keys: np.ndarray) -> np.ndarray:
        per_frame = worst(keys)
        while per_frame.max() > bound:
            keys = np.union1d(keys, frames_to_key(per_frame, bound, keys))
            per_frame = worst(keys)
        return keys

    # the count found, and the largest count tried below it with its worst frames keyed: fewer, at times
    below = max((c for c in tried if c < best), default=None)
    found = [tried.get(best, (np.arange(n), {}))] + ([tried[below]] if below is not None else [])
    keys, extra = min(((repaired(k), e) for k, e in found), key=lambda c: len(c[0]))
    extra[kind] = float(bound)
    return keys, extra
