"""Keyframe extraction on an armature's action: read it, call the core, write the sparse action.

Shared by the operator and the headless script, so both produce the same result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ..core import quaternion as quat
from ..core.keyframes import PoseMetric, evaluate, extract_keyframes, reconstruct
from ..core.keyframes.bezier import fit_handles
from ..core.motion import Motion
from . import animdata
from .armature import (
    BoneCurves,
    frame_range,
    motion_from_values,
    rebuilt_channel_values,
    sample_curves,
    scene_fps,
    skeleton_from_armature,
)


@dataclass
class ArmatureClip:
    """An armature's active action read into the core: curves, frames and the dense motion."""

    obj: Any
    channels: animdata.Channels
    curves: BoneCurves
    frames: np.ndarray
    values: dict
    motion: Motion


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

    def summary(self) -> str:
        text = (
            f"Kept {len(self.keys)} of {len(self.frames)} frames ({self.ratio:.1%}); "
            f"mean error {self.error['position_mean']:.4g}, max {self.error['position_max']:.4g}"
        )
        if self.playback_error:
            text += f" (Blender playback: mean {self.playback_error['position_mean']:.4g}, max {self.playback_error['position_max']:.4g})"
        if self.result_action != self.source_action:
            return text + f"; new action '{self.result_action}', original '{self.source_action}' kept"
        return text + f"; replaced keys in '{self.source_action}'"


def read_clip(obj: Any) -> ArmatureClip:
    """Dense motion of an armature's active action (every integer frame of its range)."""
    channels = animdata.object_channels(obj)
    if channels is None:
        raise ValueError(f"'{obj.name}' has no action to read")
    curves = BoneCurves.of(channels.fcurves, {b.name for b in obj.data.bones})
    if not curves.by_channel:
        raise ValueError(f"action '{channels.action.name}' animates no bone of '{obj.name}'")
    frames = frame_range(channels.action)
    skeleton = skeleton_from_armature(obj, curves.moving_bones())
    values = sample_curves(curves, frames)
    motion = motion_from_values(obj, skeleton, values, len(frames), scene_fps(bpy.context.scene))
    return ArmatureClip(obj, channels, curves, frames, values, motion)


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


def sparse_curves(clip: ArmatureClip, keys: np.ndarray, rebuilt: Motion | None) -> dict:
    """Per bone channel: (values at the keys, Bezier handles or None).

    With ``rebuilt`` (the core's slerp/lerp rebuild) the handles are fitted so Blender's
    per-curve playback follows it; without, keys are LINEAR.
    """
    sparse = _continuous_quaternions(clip.values, keys)
    if rebuilt is None:
        return {key: (v, None) for key, v in sparse.items()}
    targets = rebuilt_channel_values(clip.obj, rebuilt, sparse, keys)
    names = list(sparse)
    h1, h2 = fit_handles(np.stack([targets[k] for k in names], axis=1), keys)
    return {k: (sparse[k], (h1[:, i], h2[:, i])) for i, k in enumerate(names)}


def write_sparse_action(
    clip: ArmatureClip, keys: np.ndarray, replace: bool, rebuilt: Motion | None = None, name: str | None = None
) -> animdata.Channels:
    """Key every animated bone channel on exactly ``keys`` (indices into clip.frames).

    With ``rebuilt``, keys are Bezier with fitted handles (see :func:`sparse_curves`), else LINEAR.
    Curves that drive anything else (custom properties, constraints) are copied unchanged
    into the new action, or left alone when replacing in place.
    """
    frames = clip.frames[keys]
    curves = sparse_curves(clip, keys, rebuilt)
    if replace:
        target = clip.channels
        for key, fcurve in clip.curves.by_channel.items():
            animdata.write_keys(fcurve, frames, curves[key][0], handles=curves[key][1])
        return target
    source = clip.channels.action
    target = animdata.new_action_for(clip.obj, name or f"{source.name}_keys")
    channel_of = {(fc.data_path, fc.array_index): key for key, fc in clip.curves.by_channel.items()}
    for fcurve in clip.channels.fcurves:
        key = channel_of.get((fcurve.data_path, fcurve.array_index))
        if key is None:
            animdata.copy_fcurve(fcurve, target)
            continue
        group = fcurve.group.name if fcurve.group else ""
        new = animdata.new_fcurve(target, fcurve.data_path, fcurve.array_index, group)
        animdata.write_keys(new, frames, curves[key][0], handles=curves[key][1])
    if source.use_frame_range:
        target.action.use_frame_range = True
        target.action.frame_start, target.action.frame_end = source.frame_start, source.frame_end
    source.use_fake_user = True  # the original must survive being unassigned
    animdata.assign(clip.obj, target)
    return target


def played_motion(clip: ArmatureClip, channels: animdata.Channels) -> Motion:
    """The motion Blender plays back from ``channels``: every curve evaluated at every frame."""
    curves = BoneCurves.of(channels.fcurves, set(clip.motion.skeleton.names))
    values = sample_curves(curves, clip.frames)
    return motion_from_values(clip.obj, clip.motion.skeleton, values, len(clip.frames), clip.motion.fps)


def extract_on_armature(
    obj: Any,
    method: str = "threshold",
    target: dict | None = None,
    weights: str = "HIERARCHY",
    replace: bool = False,
    measure_playback: bool = True,
    progress: Callable[[float], None] | None = None,
    fitted: bool = True,
) -> ExtractionReport:
    """Extract keyframes from ``obj``'s active action and write the sparse result.

    target: one of {"count": N}, {"ratio": R}, {"max_error": E}, {"threshold": D}.
    fitted: Bezier handles fitted to the slerp rebuild (default) instead of LINEAR keys.
    """
    start = time.perf_counter()
    step = progress or (lambda _x: None)
    clip = read_clip(obj)
    source_name = clip.channels.action.name
    step(0.2)
    motion = clip.motion
    metric = PoseMetric.for_motion(motion, weights)
    result = extract_keyframes(motion, method, metric=metric, weights=weights, **(target or {"ratio": 0.05}))
    step(0.5)
    rebuilt = reconstruct(motion, result.keys)
    error, per_frame = evaluate(motion, rebuilt, metric)
    step(0.6)
    channels = write_sparse_action(clip, result.keys, replace, rebuilt if fitted else None)
    step(0.8)
    report = ExtractionReport(
        result.keys,
        clip.frames,
        method,
        result.params,
        source_name,
        channels.action.name,
        error,
        per_frame_error=per_frame,
    )
    if measure_playback:
        report.playback_error, report.per_frame_playback_error = evaluate(motion, played_motion(clip, channels), metric)
    channels.action["mocap_workbench"] = {
        "source_action": source_name,
        "method": method,
        "keyframes": len(result.keys),
        "frames": len(clip.frames),
        "position_mean": error["position_mean"],
        "position_max": error["position_max"],
    }
    step(1.0)
    report.seconds = time.perf_counter() - start
    return report
