"""Keyframe extraction on an armature's action: read it, call the core, write the sparse action.

Shared by the operator and the headless script, so both produce the same result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.blas import one_blas_thread
from ...core.keyframes import evaluate
from ...core.keyframes.channel_keys import HYBRID_GRID, ChannelExtraction, extract_channels
from ...core.keyframes.respect import KeyScope
from ...core.keyframes.targets import angle_summary
from ..common import animdata, record, units
from ..common.clip import ArmatureClip, played_motion, read_clip, scaled_bones
from ..common.library import refuse_linked


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
    length: Any = None  # writes an armature-space distance in the scene's units (default: a plain number)
    scope: list[str] = field(default_factory=list)  # what was re-keyed and what kept (see :func:`scope_lines`)

    @property
    def ratio(self) -> float:
        return len(self.keys) / len(self.frames)

    def lines(self) -> list[str]:
        """The report as rows: keys kept, the errors (core and Blender playback), the action written."""
        kept = self.params.get("keys_per_channel")
        n = len(self.frames)
        if not len(self.keys):  # nothing re-keyed: the scope rows say why
            rows = []
        elif kept is None:
            rows = [f"Kept {len(self.keys)} of {n} frames ({self.ratio:.1%})"]
        else:
            mean = " on average" if isinstance(kept, float) else ""  # a bound's search: channels differ
            rows = [
                f"Kept {kept:g} of {n} frames per channel{mean} ({kept / n:.1%}) on a grid of {len(self.keys)} poses"
            ]
        length = self.length or (lambda v: f"{v:.4g}")
        rows.append(f"mean error {length(self.error['position_mean'])}, max {length(self.error['position_max'])}")
        if self.playback_error:
            rows[-1] += (f" (Blender playback: mean {length(self.playback_error['position_mean'])}, "
                         f"max {length(self.playback_error['position_max'])})")  # fmt: skip
        if self.params.get("follow_keys"):
            rows.append(f"{self.params['follow_keys']} more keys on rotation curves that left the slerp between "
                        "keyframes (Blender interpolates each curve on its own)")  # fmt: skip
        worst = self.worst()
        if worst is not None:
            bone, point, frame, value = worst
            rows.append(f"worst: {bone} {point} at frame {frame:g}, {length(value)}")
        angle = self.playback_error if "angle_max" in self.playback_error else self.error
        if "angle_max" in angle:
            frame = float(self.frames[angle["angle_worst_frame"]])
            rows.append(f"worst rotation: {angle['angle_worst_bone']} at frame {frame:g}, {angle['angle_max']:.3g}°")
        rows += self.target_rows(length)
        rows += self.scope
        if self.result_action != self.source_action:
            rows.append(f"new action '{self.result_action}', original '{self.source_action}' kept")
        else:
            rows.append(f"replaced keys in '{self.source_action}'")
        return rows

    def target_rows(self, length: Callable[[float], str]) -> list[str]:
        """A Max Error or Max Angle target: met, or what held it back."""
        for kind, show in (("max_error", length), ("max_angle", lambda v: f"{v:.3g}°")):
            if kind in self.params and "bound_met" in self.params:
                name = "Max Error" if kind == "max_error" else "Max Angle"
                if self.params["bound_met"]:
                    return [f"{name} {show(self.params[kind])} met at every frame"]
                return [f"{name} {show(self.params[kind])} not met: curves held to the keys they had"]
        return []

    def worst(self) -> tuple[str, str, float, float] | None:
        """The worst point of what the user sees (Blender's playback when measured, else the core's
        rebuild): bone, point (head / tip / side), Blender frame, error in armature units."""
        error = self.playback_error if "worst_bone" in self.playback_error else self.error
        if "worst_bone" not in error:
            return None
        frame = float(self.frames[error["worst_frame"]])
        return error["worst_bone"], error["worst_point"], frame, error["position_max"]

    def summary(self) -> str:
        return "; ".join(self.lines())


def scope_lines(scope: KeyScope, params: dict, frames: np.ndarray, bones: set | None) -> list[str]:
    """Report rows on what the user's keys kept: curves left as they were, the bones and frames re-keyed."""
    rows = []
    if scope.kept_sparse:
        rows.append(f"{len(scope.kept_sparse)} already-sparse curves kept as they were (Keep Sparse Keys)")
    if not scope.rekey:
        rows.append("no curve re-keyed")
    if params.get("capped_channels"):
        rows.append(f"{params['capped_channels']} curves held to the number of keys they had")
    bones_part = "" if bones is None else f" {len({k[0] for k in scope.rekey})} selected bones"
    if scope.rekey and scope.n_frames < len(frames):
        span = f"frames {frames[scope.span[0]]}–{frames[scope.span[1]]}"
        rows.append(f"re-keyed{bones_part} on {span}; the errors cover those frames (every bone's position)")
    elif scope.rekey and bones_part:
        rows.append(f"re-keyed{bones_part}; the errors cover every frame (every bone's position)")
    return rows


def write_sparse_action(
    clip: ArmatureClip, plan: dict, replace: bool, name: str | None = None, whole: bool = True
) -> tuple[animdata.Channels, dict]:
    """Write the planned keys on the bone channels in ``plan`` (see :func:`core.keyframes.channel_keys.plan_channels`).

    whole: the plan covers the clip's every frame (else only its keys' span is replaced, keys outside
    kept). Curves not in the plan — kept by the user's choice, or driving anything else (custom
    properties, constraints) — are copied unchanged into the new action, or left alone when replacing.
    Returns the channels written and, for each channel written whole with Bezier keys, its keys as
    Blender stores them (:func:`.animdata.write_curves`: its playback measure needs not read them back).
    """
    targets = []  # (channel, F-curve) written whole: Bezier ones together, in one batch

    def write(key: Any, fcurve: Any) -> None:
        ck = plan[key]
        if not whole:
            animdata.replace_span_keys(fcurve, clip.frames[ck.keys], ck.values, handles=ck.handles)
        elif ck.handles is None:
            animdata.write_keys(fcurve, clip.frames[ck.keys], ck.values)
        else:
            targets.append((key, fcurve))

    def flush() -> dict:
        if not targets:
            return {}
        cks = [plan[key] for key, _ in targets]
        written = animdata.write_curves([fc for _, fc in targets], [clip.frames[ck.keys] for ck in cks],
                                        [ck.values for ck in cks], [ck.handles for ck in cks])  # fmt: skip
        return {key: keys for (key, _), keys in zip(targets, written) if keys is not None}

    if replace:
        for key, fcurve in clip.curves.by_channel.items():
            if key in plan:
                write(key, fcurve)
        return clip.channels, flush()
    source = clip.channels.action
    target = animdata.new_action_for(clip.obj, name or f"{source.name}_keys")
    record.inherit(target.action, source)
    channel_of = {(fc.data_path, fc.array_index): key for key, fc in clip.curves.by_channel.items()}
    for fcurve in clip.channels.fcurves:
        key = channel_of.get((fcurve.data_path, fcurve.array_index))
        if key not in plan:
            animdata.copy_fcurve(fcurve, target)
        elif not whole:
            write(key, animdata.copy_fcurve(fcurve, target))
        else:
            group = fcurve.group.name if fcurve.group else ""
            write(key, animdata.new_fcurve(target, fcurve.data_path, fcurve.array_index, group))
    written = flush()
    if source.use_frame_range:
        target.action.use_frame_range = True
        target.action.frame_start, target.action.frame_end = source.frame_start, source.frame_end
    animdata.keep(source)  # the original must survive being unassigned
    animdata.assign(clip.obj, target)
    return target, written


@dataclass
class PreparedExtraction:
    """An extraction after its reads (:func:`prepare_extraction`): :meth:`work` is the core's part
    (no Blender data touched: it may run in a worker thread), :meth:`write` writes its result."""

    obj: Any
    clip: ArmatureClip
    core_args: dict  # extract_channels' arguments
    replace: bool
    measure_playback: bool
    bones: set | None
    start: float

    def work(self, progress: Callable[[float], None] | None = None) -> ChannelExtraction:
        """The keys (:func:`core.keyframes.channel_keys.extract_channels`); progress: share done, 0–1.
        On one BLAS thread (:mod:`core.blas`: its many small products win nothing from more)."""
        with one_blas_thread():
            return extract_channels(**self.core_args, progress=progress)

    def write(self, result: ChannelExtraction, progress: Callable[[float], None] | None = None) -> ExtractionReport:
        """Write the keys ``result`` planned, measure Blender's playback, record the figures."""
        with one_blas_thread():
            return self._write(result, progress)

    def _write(self, result: ChannelExtraction, progress: Callable[[float], None] | None) -> ExtractionReport:
        step = progress or (lambda _x: None)
        obj, clip = self.obj, self.clip
        source_name = clip.channels.action.name
        a, b = result.scope.span
        whole = b - a + 1 == len(clip.frames)
        channels, written = write_sparse_action(clip, result.plan, self.replace, whole=whole)
        step(0.3)
        report = ExtractionReport(result.keys, clip.frames[a : b + 1], self.core_args["method"], result.params,
                                  source_name, channels.action.name, result.error,
                                  per_frame_error=result.per_frame_error,
                                  length=lambda v: units.armature_length(obj, v, precision=4),
                                  scope=scope_lines(result.scope, result.params, clip.frames, self.bones))  # fmt: skip
        if self.measure_playback:  # the curves as written, played as Blender plays them
            played = played_motion(clip, channels, blender=False, written=written)
            if not whole:
                played = played.frames(slice(a, b + 1))
            original = clip.motion if whole else clip.motion.frames(slice(a, b + 1))
            report.playback_error, report.per_frame_playback_error = evaluate(original, played, result.metric,
                                                                              result.original_points)  # fmt: skip
            report.playback_error.update(angle_summary(original, played))
            if not result.error:  # the core left the measure to the playback: the same curves (prepare_extraction)
                result.error.update(report.playback_error)
                report.per_frame_error = report.per_frame_playback_error
        worst = report.worst()
        record.write(channels.action, "keyframes", {
            "source_action": source_name,
            "method": report.method,
            "keyframes": len(result.keys),
            "stored_keys": result.params["stored_keys"],
            "frames": len(report.frames),
            "position_mean": result.error["position_mean"],
            "position_max": result.error["position_max"],
            "angle_max": result.error["angle_max"],
            **({} if worst is None else {"worst_bone": worst[0], "worst_point": worst[1], "worst_frame": worst[2],
                                         "worst_error": worst[3]}),
        })  # fmt: skip
        step(1.0)
        report.seconds = time.perf_counter() - self.start
        return report


def prepare_extraction(
    obj: Any,
    method: str = "hybrid",
    target: dict | None = None,
    weights: str = "HIERARCHY",
    replace: bool = False,
    measure_playback: bool = True,
    fitted: bool = True,
    grid: float = HYBRID_GRID,
    clip: ArmatureClip | None = None,
    keep_sparse: bool = True,
    bones: set | None = None,
    frame_range: tuple[int, int] | None = None,
) -> PreparedExtraction:
    """Check ``obj`` and read its action (or take ``clip``, already read) for an extraction; writes
    nothing. Arguments as :func:`extract_on_armature`'s."""
    start = time.perf_counter()
    refuse_linked(obj)  # its new action would be lost on reload
    with one_blas_thread():
        clip = clip or read_clip(obj)
    if replace:
        refuse_linked(clip.channels.action, keys=True)
    scaled = scaled_bones(clip)
    if scaled:
        listed = ", ".join(f"'{b}'" for b in scaled[:4]) + (", …" if len(scaled) > 4 else "")
        raise ValueError(f"scale keys on bones {listed}: not supported (the error could not be measured); "
                         "set those scales to 1 or remove their curves")  # fmt: skip
    first = clip.frames[0]
    if clip.key_frames is None:
        clip.key_frames = {k: animdata.read_keys(fc)[:, 0] for k, fc in clip.curves.by_channel.items()}
    key_frames = {k: frames - first for k, frames in clip.key_frames.items()}
    span = None if frame_range is None else (int(frame_range[0]) - first, int(frame_range[1]) - first)
    # with the playback measured, the core does not measure the same curves first (float rounding apart)
    core_args = {"motion": clip.motion, "layout": clip.layout, "values": clip.values, "method": method,
                 "target": target, "weights": weights, "fitted": fitted, "grid": grid, "key_frames": key_frames,
                 "keep_sparse": keep_sparse, "bones": bones, "span": span,
                 "measure": not measure_playback}  # fmt: skip
    return PreparedExtraction(obj, clip, core_args, replace, measure_playback, bones, start)


def extract_on_armature(
    obj: Any,
    method: str = "hybrid",
    target: dict | None = None,
    weights: str = "HIERARCHY",
    replace: bool = False,
    measure_playback: bool = True,
    progress: Callable[[float], None] | None = None,
    fitted: bool = True,
    grid: float = HYBRID_GRID,
    clip: ArmatureClip | None = None,
    keep_sparse: bool = True,
    bones: set | None = None,
    frame_range: tuple[int, int] | None = None,
) -> ExtractionReport:
    """Extract keyframes from ``obj``'s active action (or ``clip``, already read) and write the sparse result.

    target: one of {"count": N}, {"ratio": R}, {"max_error": E} (armature units), {"max_angle": degrees},
    {"threshold": D} (see :mod:`core.keyframes.targets`).
    fitted: Bezier handles fitted to the slerp rebuild (default) instead of LINEAR keys.
    grid: for the hybrid method, pose keys per stored key of each channel. The keys are the core's
    (:func:`core.keyframes.channel_keys.extract_channels`), the same the plain-Python script gets.
    The user's keys are respected: no curve gets more keys than it had; keep_sparse: curves with
    fewer keys than frames stay exactly as they are; bones: re-key only these bones' curves;
    frame_range: (first, last) frame re-keyed, keys outside kept, the error measured on those frames.
    The three steps (read, core, write) are :func:`prepare_extraction`, :meth:`PreparedExtraction.work`
    and :meth:`PreparedExtraction.write`, which the operator runs apart (:mod:`..common.jobs`).
    """
    step = progress or (lambda _x: None)
    prepared = prepare_extraction(obj, method, target, weights, replace, measure_playback, fitted, grid, clip,
                                  keep_sparse, bones, frame_range)  # fmt: skip
    step(0.2)
    result = prepared.work(lambda x: step(0.2 + 0.4 * x))
    step(0.6)
    return prepared.write(result, lambda x: step(0.6 + 0.4 * x))
