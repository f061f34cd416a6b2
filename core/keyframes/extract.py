"""One entry point for every keyframe method and every kind of target a user thinks in.

Targets: a keyframe ``count``, a ``ratio`` of the frames, a ``max_error`` (largest joint
position error, scene units) or, for the threshold method, the paper's ``threshold`` δ.
Count and ratio are met exactly; the first and last frames are always keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from .activity import activity_for_count
from .baselines import simplify_for_count, uniform_keys
from .distance import PoseMetric
from .error import pose_points, position_errors
from .jumps import jump_frames
from .optimal import optimal_for_count
from .reconstruct import reconstruct
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
    threshold: float | None = None,
    metric: PoseMetric | None = None,
    weights: str = "HIERARCHY",
    weight_overrides: Mapping[str, float] | None = None,
    keep_jumps: bool = True,
) -> KeyframeResult:
    """Choose keyframes of ``motion`` with ``method`` to meet exactly one target.

    keep_jumps: frames on both sides of a jump (see :func:`.jumps.jump_frames`) are always
    keys, so no segment smears a discontinuity; they count towards a count target.
    """
    if method not in METHODS:
        raise ValueError(f"unknown keyframe method {method!r}; choose from {sorted(METHODS)}")
    if sum(x is not None for x in (count, ratio, max_error, threshold)) != 1:
        raise ValueError("give exactly one target: count, ratio, max_error or threshold")
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
    forced = jump_frames(motion, metric) if keep_jumps else np.zeros(0, dtype=int)
    if max_error is not None:
        keys, extra = keys_for_max_error(motion, metric, choose, max_error)
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


def keys_for_max_error(
    motion: Motion, metric: PoseMetric, choose: CountMethod, max_error: float
) -> tuple[np.ndarray, dict]:
    """The fewest keys (binary search on the count) whose largest position error (:mod:`.error`'s
    measure: heads, tips and sides of every bone) is ≤ max_error.

    A final pass inserts the worst frame until the bound holds, so it is guaranteed even
    where a method's error is not monotone in the count.
    """
    if not max_error > 0:
        raise ValueError(f"max_error must be positive, got {max_error}")
    n = motion.n_frames
    original = pose_points(motion)

    def worst(keys: np.ndarray) -> np.ndarray:
        return position_errors(motion, reconstruct(motion, keys), original).max(axis=1)

    lo, hi = 2, n
    best_keys, best_extra = np.arange(n), {}
    while lo <= hi:
        mid = (lo + hi) // 2
        keys, extra = choose(motion, metric, mid)
        keys = fit_count(motion, metric, keys, mid)
        if worst(keys).max() <= max_error:
            best_keys, best_extra, hi = keys, extra, mid - 1
        else:
            lo = mid + 1
    keys = best_keys
    per_frame = worst(keys)
    while per_frame.max() > max_error:
        keys = np.union1d(keys, [int(per_frame.argmax())])
        per_frame = worst(keys)
    best_extra["max_error"] = float(max_error)
    return keys, best_extra
