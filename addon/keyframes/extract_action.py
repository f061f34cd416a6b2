"""Keyframe extraction on an armature's action: read it, call the core, write the sparse action.

Shared by the operator and the headless script, so both produce the same result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core import quaternion as quat
from ...core.keyframes import PoseMetric, evaluate, extract_keyframes, reconstruct, target_count
from ...core.keyframes.bezier import evaluate as bezier_evaluate
from ...core.keyframes.bezier import fit_handles
from ...core.keyframes.hybrid import drop_channel_keys
from ...core.motion import Motion
from ..common import animdata, record
from ..common.armature import (
    motion_from_values,
    rebuilt_channel_values,
)
from ..common.clip import ArmatureClip, played_motion, read_clip


@dataclass
class ExtractionReport:
    """What Extract Keyframes did, with the figures the user sees."""

    keys: np.ndarray
    frames: np.ndarray
    method: str
    params: dict
    source_action: str
    result_action: str
    error: dict = field(default_factory=dict)
    playback_error: dict = field(default_factory=dict)
    per_frame_error: np.ndarray | None = None
    per_frame_playback_error: np.ndarray | None = None
    seconds: float = 0.0

    @property
    def ratio(self) -> float:
        return len(self.keys) / len(self.frames)

    def lines(self) -> list[str]:
        """The report as rows: keys kept, the errors (core and Blender playback), the action written."""
        kept = self.params.get("keys_per_channel")
        n = len(self.frames)
        if kept is None:
            rows = [f"Kept {len(self.keys)} of {n} frames ({self.ratio:.1%})"]
        else:
            rows = [f"Kept {kept} of {n} frames per channel ({kept / n:.1%}) on a grid of {len(self.keys)} poses"]
        rows.append(f"mean error {self.error['position_mean']:.4g}, max {self.error['position_max']:.4g}")
        if self.playback_error:
            rows[-1] += (f" (Blender playback: mean {self.playback_error['position_mean']:.4g}, "
                         f"max {self.playback_error['position_max']:.4g})")  # fmt: skip
        if self.result_action != self.source_action:
            rows.append(f"new action '{self.result_action}', original '{self.source_action}' kept")
        else:
            rows.append(f"replaced keys in '{self.source_action}'")
        return rows

    def summary(self) -> str:
        return "; ".join(self.lines())


def _continuous_quaternions(values: dict, keys: np.ndarray) -> dict:
    """Values at the keys, with each bone's quaternion keys flipped into one hemisphere."""
    out = {k: v[keys] for k, v in values.items()}
    bones = {bone for bone, prop, _ in values if prop == "rotation_quaternion"}
    for bone in bones:
        parts = [out.get((bone, "rotation_quaternion", i)) for i in range(4)]
        if any(p is None for p in parts):
            continue
        q = quat.make_continuous(np.stack(parts, axis=-1))
        for i in range(4):
            out[(bone, "rotation_quaternion", i)] = q[:, i]
    return out


@dataclass
class ChannelKeys:
    """What to write on one F-curve: key positions (indices into the clip's frames), values, handles."""

    keys: np.ndarray
    values: np.ndarray
    handles: tuple[np.ndarray, np.ndarray] | None = None


def channel_levers(clip: ArmatureClip, names: list) -> np.ndarray:
    """(C,) joint motion in scene units per unit of each channel: its bone's reach for rotations
    (twice that for quaternion components, which move at half the angle), 1 for locations."""
    skeleton = clip.motion.skeleton
    reach = np.maximum(skeleton.reach(), 1e-3 * skeleton.size())
    factor = {
        "location": None,
        "rotation_quaternion": 2.0,
        "rotation_euler": 1.0,
        "rotation_axis_angle": 1.0,
        "scale": 1.0,
    }
    return np.array(
        [1.0 if factor[prop] is None else factor[prop] * reach[skeleton.index(bone)] for bone, prop, _ in names]
    )


def plan_channels(clip: ArmatureClip, keys: np.ndarray, rebuilt: Motion | None, budget: int | None = None) -> dict:
    """Per bone channel, the keys to write.

    Without ``rebuilt``: LINEAR keys on every pose key. With it: Bezier handles fitted so
    Blender's per-curve playback follows the rebuild. With a ``budget`` of stored keys,
    channels also drop the pose keys they need least (hybrid, see core.keyframes.hybrid).
    """
    sparse = _continuous_quaternions(clip.values, keys)
    names = list(sparse)
    if rebuilt is None:
        return {k: ChannelKeys(keys, sparse[k]) for k in names}
    targets = rebuilt_channel_values(clip.obj, rebuilt, sparse, keys)
    dense = np.stack([targets[k] for k in names], axis=1)
    if budget is None:
        h1, h2 = fit_handles(dense, keys)
        return {k: ChannelKeys(keys, sparse[k], (h1[:, i], h2[:, i])) for i, k in enumerate(names)}
    kept = drop_channel_keys(dense, keys, channel_levers(clip, names), budget)
    plan = {}
    for i, k in enumerate(names):
        h1, h2 = fit_handles(dense[:, i], kept[i])
        plan[k] = ChannelKeys(kept[i], dense[kept[i], i], (h1[:, 0], h2[:, 0]))
    return plan


def planned_motion(clip: ArmatureClip, plan: dict) -> Motion:
    """The motion the planned curves describe, evaluated by the core (what Blender should play)."""
    values = {}
    n = len(clip.frames)
    for key, ck in plan.items():
        if ck.handles is None:
            values[key] = np.interp(np.arange(n), ck.keys, ck.values)
        else:
            values[key] = bezier_evaluate(
                ck.values[:, None], ck.handles[0][:, None], ck.handles[1][:, None], ck.keys, n
            )[:, 0]
    return motion_from_values(clip.obj, clip.motion.skeleton, values, n, clip.motion.fps)


def write_sparse_action(clip: ArmatureClip, plan: dict, replace: bool, name: str | None = None) -> animdata.Channels:
    """Write the planned keys on every animated bone channel (see :func:`plan_channels`).

    Curves that drive anything else (custom properties, constraints) are copied unchanged
    into the new action, or left alone when replacing in place.
    """

    def write(fcurve: Any, ck: ChannelKeys) -> None:
        animdata.write_keys(fcurve, clip.frames[ck.keys], ck.values, handles=ck.handles)

    if replace:
        for key, fcurve in clip.curves.by_channel.items():
            write(fcurve, plan[key])
        return clip.channels
    source = clip.channels.action
    target = animdata.new_action_for(clip.obj, name or f"{source.name}_keys")
    record.inherit(target.action, source)
    channel_of = {(fc.data_path, fc.array_index): key for key, fc in clip.curves.by_channel.items()}
    for fcurve in clip.channels.fcurves:
        key = channel_of.get((fcurve.data_path, fcurve.array_index))
        if key is None:
            animdata.copy_fcurve(fcurve, target)
            continue
        group = fcurve.group.name if fcurve.group else ""
        write(animdata.new_fcurve(target, fcurve.data_path, fcurve.array_index, group), plan[key])
    if source.use_frame_range:
        target.action.use_frame_range = True
        target.action.frame_start, target.action.frame_end = source.frame_start, source.frame_end
    source.use_fake_user = True  # the original must survive being unassigned
    animdata.assign(clip.obj, target)
    return target


# The hybrid's pose grid holds this many times the keys of the target. On CMU 05_02 and 01_01
# at 5 % stored keys, factors 1.5/2/3/4/6 gave Blender-playback mean errors 0.111/0.057/0.034/
# 0.028/0.024 and 0.180/0.112/0.050/0.030/0.020: 4 is most of the gain at half the time of 6.
HYBRID_GRID = 4.0


# The pose grid under the hybrid. Measured in Blender at 5 % stored keys (grid 4), mean / max
# joint error: CMU 05_02 simplify 0.027 / 0.42, optimal 0.021 / 0.78; 01_01 simplify 0.022 /
# 0.26, optimal 0.019 / 0.29. Curve simplification has the better worst frame and is faster.
HYBRID_BASE = "simplify"


def choose_keys(
    motion: Motion, method: str, target: dict, metric: PoseMetric, weights: str, grid: float = HYBRID_GRID
) -> tuple:
    """Pose keys, method params and the stored-key budget per channel (None unless hybrid)."""
    if method != "hybrid":
        result = extract_keyframes(motion, method, metric=metric, weights=weights, **target)
        return result.keys, result.params, None
    if not ({"count", "ratio"} & set(target)):
        raise ValueError("Hybrid keys take a Count or Ratio target")
    wanted = target_count(motion.n_frames, target.get("count"), target.get("ratio"))
    base = HYBRID_BASE
    poses = min(motion.n_frames, int(round(grid * wanted)))
    result = extract_keyframes(motion, base, metric=metric, weights=weights, count=poses)
    return result.keys, {**result.params, "pose_method": base, "pose_keys": poses, "keys_per_channel": wanted}, wanted


def extract_on_armature(
    obj: Any,
    method: str = "threshold",
    target: dict | None = None,
    weights: str = "HIERARCHY",
    replace: bool = False,
    measure_playback: bool = True,
    progress: Callable[[float], None] | None = None,
    fitted: bool = True,
    grid: float = HYBRID_GRID,
) -> ExtractionReport:
    """Extract keyframes from ``obj``'s active action and write the sparse result.

    target: one of {"count": N}, {"ratio": R}, {"max_error": E}, {"threshold": D}.
    fitted: Bezier handles fitted to the slerp rebuild (default) instead of LINEAR keys.
    grid: for the hybrid method, pose keys per stored key of each channel.
    """
    start = time.perf_counter()
    step = progress or (lambda _x: None)
    clip = read_clip(obj)
    source_name = clip.channels.action.name
    step(0.2)
    motion = clip.motion
    metric = PoseMetric.for_motion(motion, weights)
    keys, params, per_channel = choose_keys(motion, method, target or {"ratio": 0.05}, metric, weights, grid)
    step(0.5)
    rebuilt = reconstruct(motion, keys)
    budget = None if per_channel is None else per_channel * len(clip.curves.by_channel)
    plan = plan_channels(clip, keys, rebuilt if fitted or budget else None, budget)
    if budget is not None:  # the curves, not the pose grid, are the result: measure them
        rebuilt = planned_motion(clip, plan)
    error, per_frame = evaluate(motion, rebuilt, metric)
    step(0.6)
    channels = write_sparse_action(clip, plan, replace)
    step(0.8)
    params["stored_keys"] = int(sum(len(ck.keys) for ck in plan.values()))
    report = ExtractionReport(
        keys, clip.frames, method, params, source_name, channels.action.name, error, per_frame_error=per_frame
    )
    if measure_playback:
        report.playback_error, report.per_frame_playback_error = evaluate(motion, played_motion(clip, channels), metric)
    record.write(channels.action, "keyframes", {
        "source_action": source_name,
        "method": method,
        "keyframes": len(keys),
        "stored_keys": params["stored_keys"],
        "frames": len(clip.frames),
        "position_mean": error["position_mean"],
        "position_max": error["position_max"],
    })  # fmt: skip
    step(1.0)
    report.seconds = time.perf_counter() - start
    return report
