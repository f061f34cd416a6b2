"""Motion editing on armatures: read actions into the core, run one edit, write the result.

Shared by the Edit operators and usable from scripts. Every function takes the armature object
and Blender actions, writes its result as a NEW action (assigned to the armature; the action it
replaces is kept with a fake user) and returns an :class:`EditReport`. Source actions are never
changed; only Smoothed Pose Edit rewrites keys in place, when asked.

Spaces: the core works in armature space (the bones' rest matrices). The vertical is the world's
Z axis expressed in armature space (:func:`vertical`), so an armature made by Blender's BVH
importer (Z-up bones) and one stood up by its object rotation (Y-up data turned 90° about X)
both turn about the world's vertical. Another action of the armature is read through its slot
for this armature (:func:`.animdata.action_channels`), without assigning it; actions combined in
one edit are read on the same skeleton (:func:`read_actions`).

Frames: frame 0 of a motion is its action's first frame; results start on the first frame of the
action they continue. Results are keyed on every frame (LINEAR, quaternions in one hemisphere).
Curves that are not bone transforms (custom properties, constraint influences) and bone scale
curves are copied into results that keep the source's timing (Rotate, Blend Body Part, Smoothed
Pose Edit) and left out of the others.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ...core import editing as ed
from ...core import quaternion as quat
from ...core.channels import rebuilt_channel_values, rest_value, rotation_property, values_near
from ...core.editing.root import chain_world, horizontal, pelvis_joint, place, track
from ...core.motion import Motion
from ..common import animdata, record
from ..common.armature import (
    BoneCurves,
    channel_layout,
    motion_from_values,
    pose_values,
    skeleton_from_armature,
    write_values,
)
from ..common.clip import ArmatureClip, read_clip
from ..common.library import refuse_linked
from ..common.spaces import to_armature, to_world, vertical
from ..common.units import armature_length, armature_speed, length
from ..common.units import figure as _figure

PIVOTS = ("FIRST_FRAME", "ORIGIN", "CURSOR")


@dataclass
class EditReport:
    """What an edit did: the report lines the user sees, the action written and the figures."""

    parts: list[str]
    action: str = ""
    figures: dict = field(default_factory=dict)
    seconds: float = 0.0
    motion: Motion | None = None  # the result as the core made it (for NLA strips: as the NLA plays it)

    def lines(self) -> list[str]:
        """The report as rows: what was done, then each figure."""
        return list(self.parts)

    def summary(self) -> str:
        return "; ".join(self.parts)


# --- Blender ↔ core --------------------------------------------------------------------------


def other_actions(obj: Any) -> list[Any]:
    """Actions that animate bones of ``obj``, other than its active one."""
    active = obj.animation_data.action if obj.animation_data else None
    return [a for a in bpy.data.actions if a != active and animdata.animates_bones(a, obj.data.bones)]


def active_action(obj: Any) -> Any:
    action = obj.animation_data.action if obj.animation_data else None
    if action is None:
        raise ValueError(f"'{obj.name}' has no action to edit")
    return action


def read_actions(obj: Any, actions: list[Any]) -> list[ArmatureClip]:
    """Dense motions of actions of ``obj`` (assigned or not), all on one skeleton whose position
    channels are the bones any of them moves, so the core can combine them."""
    names = {b.name for b in obj.data.bones}
    channels = [animdata.action_channels(obj, a) for a in actions]
    moving: set[str] = set()
    for ch in channels:
        moving |= BoneCurves.of(ch.fcurves, names).moving_bones()
    skeleton = skeleton_from_armature(obj, moving)
    return [read_clip(obj, ch, skeleton) for ch in channels]


def write_action(
    obj: Any, motion: Motion, first_frame: int, name: str, source: ArmatureClip | None = None
) -> animdata.Channels:
    """Key ``motion`` (on the armature's skeleton) on every frame from ``first_frame`` as a new
    action and assign it; the action it replaces keeps a fake user. source: a clip with the same
    timing whose other curves (custom properties, constraints, bone scale) are copied."""
    refuse_linked(obj)  # its new action would be lost on reload
    frames = np.arange(first_frame, first_frame + motion.n_frames)
    channels = animdata.new_action_for(obj, name)
    write_values(channels, pose_values(obj, motion), frames)
    if source is not None:
        scales = [fc for (_, prop, _), fc in source.curves.by_channel.items() if prop == "scale"]
        for fcurve in (*source.curves.other, *scales):
            animdata.copy_fcurve(fcurve, channels)
    previous = animdata.object_channels(obj)
    if previous is not None:
        animdata.keep(previous.action)
    animdata.assign(obj, channels)
    return channels


def _record(action: Any, operation: str, sources: list[str], figures: dict) -> None:
    """Keep what made an action and its figures as a custom property of the action."""
    info = {"operation": operation, "sources": sources}
    for key, value in figures.items():
        if isinstance(value, (bool, int, float, str)):
            info[key] = value
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) for v in value):
            info[key] = [float(v) for v in value]
    record.write(action, "edit", info)


def _name(clip: ArmatureClip) -> str:
    return clip.channels.action.name


def _first(clip: ArmatureClip) -> int:
    return int(clip.frames[0])


def _frames_text(frames: np.ndarray, limit: int = 6) -> str:
    shown = ", ".join(f"{f:g}" for f in np.round(frames, 1)[:limit])
    return shown + (", …" if len(frames) > limit else "")


def _pelvis_speed(motion: Motion, up: np.ndarray) -> float:
    """Horizontal pelvis travel from the first to the last frame per second (armature units)."""
    path = track(motion, up)
    seconds = max(motion.n_frames - 1, 1) / motion.fps
    return float(np.linalg.norm(horizontal(path.positions[-1] - path.positions[0], up)) / seconds)


def _seam_jump(motion: Motion, frame: int, references: list[Motion]) -> float:
    """Pelvis velocity jump across a hard seam before ``frame`` over the clips' own level (95th percentile)."""
    if not 0 < frame < motion.n_frames - 1:
        return 0.0
    return ed.join_continuity(motion, frame, frame, references).ratios()["root_jump"]


def rotation_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle (radians) of the rotation between unit quaternions a and b (...,4), accurate near 0."""
    r = quat.multiply(quat.conjugate(a), b)
    return 2.0 * np.arctan2(np.linalg.norm(r[..., 1:], axis=-1), np.abs(r[..., 0]))


def _timed(start: float, report: EditReport) -> EditReport:
    report.seconds = time.perf_counter() - start
    return report


def _new_action_report(
    start: float, channels: Any, operation: str, sources: list[str], figures: dict, lines: list[str]
) -> EditReport:
    """Record ``operation`` on the edit's new action and report it (``lines``, then the action's name), timed
    from ``start``: how every edit that writes a new action ends."""
    _record(channels.action, operation, sources, figures)
    return _timed(start, EditReport([*lines, f"new action '{channels.action.name}'"], channels.action.name, figures))


# --- Rotate ------------------------------------------------------------------------------------


def rotate_action(obj: Any, angle: float, pivot: str = "FIRST_FRAME", cursor: Any = (0.0, 0.0, 0.0)) -> EditReport:
    """Turn the active action about the world's vertical by ``angle`` radians (counter-clockwise
    seen from above) through the pivot: ``FIRST_FRAME`` (the root at the first frame),
    ``ORIGIN`` (the armature's origin) or ``CURSOR`` (the world point ``cursor``)."""
    start = time.perf_counter()
    if pivot not in PIVOTS:
        raise ValueError(f"pivot must be one of {PIVOTS}, got {pivot!r}")
    clip = read_clip(obj)
    motion, up = clip.motion, vertical(obj)
    if pivot == "FIRST_FRAME":
        point = chain_world(motion.frames(slice(0, 1)), pelvis_joint(motion))[0][0]
    else:
        point = np.zeros(3) if pivot == "ORIGIN" else to_armature(obj, cursor)
    degrees = float(np.degrees(angle))
    out = ed.rotate(motion, degrees, point, up)
    channels = write_action(obj, out, _first(clip), f"{_name(clip)}_rotated", source=clip)
    world = to_world(obj, point)
    world = np.round(world, 6) + 0.0  # no -0 or rounding noise in the report
    figures = {"frames": motion.n_frames, "degrees": degrees, "pivot": world.tolist()}
    lines = [
        f"Rotated {motion.n_frames} frames of '{_name(clip)}' by {degrees:.4g}° about the vertical "
        f"through ({length(bpy.context.scene, world[0])}, {length(bpy.context.scene, world[1])})",
    ]
    return _new_action_report(start, channels, "rotate", [_name(clip)], figures, lines)


# --- Transition --------------------------------------------------------------------------------


def crossfade(a: ArmatureClip, b_values: dict, start: int, length: int, hold: int) -> dict:
    """What Blender's NLA plays from A's strip (frames up to ``hold``, then held) under B's strip
    (``b_values`` from frame ``start`` on) blending in over ``length`` frames: channel by channel,
    (1 − w)·A + w·B with w rising linearly from 0 at ``start`` to 1 at ``start + length``."""
    n = start + len(next(iter(b_values.values())))
    index = np.arange(n)
    w = np.clip((index - start) / length, 0.0, 1.0)
    out = {}
    for key in set(a.values) | set(b_values):
        va = a.values[key][np.minimum(index, hold)] if key in a.values else np.full(n, rest_value(*key[1:]))
        if key in b_values:
            vb = b_values[key][np.maximum(index - start, 0)]
            out[key] = (1.0 - w) * va + w * vb
        else:
            out[key] = va
    return out


@dataclass
class _Strips:
    played: Motion
    aligned: animdata.Channels
    strips: tuple


def transition_strips(obj: Any, a: ArmatureClip, b: ArmatureClip, tr: ed.Transition, up: np.ndarray) -> _Strips:
    """The transition as two NLA strips: A's own action up to the end of the window, and B moved
    rigidly (a new action) on a track above, blending in over the window. B's root is placed on A's
    at the middle of the window (position and heading), so the two roots the NLA mixes stay as
    close as they can across the window. Returns what the NLA plays (computed as Blender mixes the
    channels)."""
    refuse_linked(obj)  # its new tracks would be lost on reload
    i, j, length = tr.frame_a, tr.frame_b, tr.window
    middle = length // 2
    placed = place(b.motion, j + middle, track(a.motion, up).state(i + middle), up)
    tail = placed.frames(slice(j, None))
    reference = {key: v[i] for key, v in a.values.items()}
    values = values_near(tail, channel_layout(obj), reference, 0)
    start = _first(a) + i
    aligned = animdata.new_action_for(obj, f"{_name(b)}_aligned")
    write_values(aligned, values, np.arange(start, start + tail.n_frames))
    source = animdata.action_channels(obj, a.channels.action)
    anim = obj.animation_data
    if anim.action is not None:
        animdata.keep(anim.action)
        anim.action = None
    strip_a = animdata.add_strip(obj, _name(a), _first(a), source)
    strip_a.action_frame_end = float(a.frames[i + length - 1])
    strip_b = animdata.add_strip(obj, _name(b), start, aligned)
    strip_b.use_auto_blend = False
    strip_b.blend_in = float(length)
    strip_b.extrapolation = "HOLD_FORWARD"
    played = crossfade(a, values, i, length, i + length - 1)
    n = i + tail.n_frames
    motion = motion_from_values(obj, a.motion.skeleton, played, n, a.motion.fps)
    return _Strips(motion, aligned, (strip_a, strip_b))


def transition_actions(
    obj: Any,
    action_a: Any,
    action_b: Any,
    window: float = 0.5,
    search: bool = True,
    clean_feet: bool = True,
    output: str = "ACTION",
) -> EditReport:
    """Transition from ``action_a`` into ``action_b`` on ``obj`` (core: :func:`core.editing.transition`).

    window: blend length in seconds; search: look for the best join (else the window is A's last
    frames and B's first); clean_feet: plant the feet near the window (action output only);
    output: ``ACTION`` (a new action) or ``NLA`` (two strips, see :func:`transition_strips`).
    The report gives the join, foot sliding near it and the pose and velocity jumps across it
    against the clips' own and against a hard cut at the same frames.
    """
    start = time.perf_counter()
    if action_a == action_b:
        raise ValueError("choose two different actions")
    a, b = read_actions(obj, [action_a, action_b])
    up = vertical(obj)
    length = ed.transitions.window_frames(window, a.motion.fps)
    for clip in (a, b):
        if clip.motion.n_frames < length:
            raise ValueError(f"'{_name(clip)}' has {clip.motion.n_frames} frames, fewer than the {length}-frame window")
    given = {} if search else {"frame_a": a.motion.n_frames - length, "frame_b": 0}
    nla = output == "NLA"
    tr = ed.transition(a.motion, b.motion, window, up=up, cleanup=clean_feet and not nla, **given)
    hard = ed.transition(a.motion, b.motion, 0.0, tr.frame_a, tr.frame_b, cleanup=False, up=up)
    i, j = tr.frame_a, tr.frame_b
    if nla:
        strips = transition_strips(obj, a, b, tr, up)
        result, channels = strips.played, strips.aligned
        ctx = round(5.0 * a.motion.fps)
        references = [
            a.motion.frames(slice(max(i - ctx, 0), i + tr.window)),
            b.motion.frames(slice(j, min(j + tr.window + ctx, b.motion.n_frames))),
        ]
        continuity = ed.join_continuity(result, i, i + tr.window, references)
        skating = ed.cleanup.skating_in(result, tr.contacts, *tr.region).total_distance
        skating_after = None
    else:
        result = tr.motion
        channels = write_action(obj, result, _first(a), f"{_name(a)}_{_name(b)}")
        continuity, skating = tr.continuity, tr.skating_before.total_distance
        skating_after = None if tr.skating_after is None else tr.skating_after.total_distance
    ratios, hard_ratios = continuity.ratios(), hard.continuity.ratios()
    figures = {
        "frame_a": int(a.frames[i]),
        "frame_b": int(b.frames[j]),
        "window": tr.window,
        "searched": bool(search),
        "frames": result.n_frames,
        "skating_before": float(skating),
        **({} if skating_after is None else {"skating_after": float(skating_after)}),
        **{f"{k}_ratio": float(v) for k, v in ratios.items()},
        **{f"hard_cut_{k}_ratio": float(v) for k, v in hard_ratios.items()},
        "output": output,
    }
    _record(channels.action, "transition", [_name(a), _name(b)], figures)
    sliding = f"feet slide {armature_length(obj, skating)}" + (
        "" if skating_after is None else f" → {armature_length(obj, skating_after)}"
    )
    jumps = ", ".join(f"{_figure(ratios[k])} (hard cut {_figure(hard_ratios[k])})" for k in ratios)
    where = (
        f"strips '{_name(a)}' and '{_name(b)}' on the NLA, B's as new action '{channels.action.name}'"
        if nla
        else f"new action '{channels.action.name}'"
    )
    lines = [
        f"Transition '{_name(a)}' frame {figures['frame_a']} → '{_name(b)}' frame {figures['frame_b']}, "
        f"{tr.window}-frame window{' (best join)' if search else ''}, {result.n_frames} frames",
        f"{sliding} near the join",
        f"jumps over the clips' own (pose, root velocity, joint velocity): {jumps}",
        where,
    ]
    return _timed(start, EditReport(lines, channels.action.name, figures, motion=result))


# --- Blend body part ---------------------------------------------------------------------------


def blend_actions(
    obj: Any,
    action_b: Any,
    bone: str,
    weight: float = 1.0,
    offset: int = 0,
    soft_edge: float = 0.5,
    take_root: bool = False,
    fit_length: bool = False,
) -> EditReport:
    """The active action with ``bone`` and the bones below it taken from ``action_b``
    (core: :func:`core.editing.blend_parts`).

    offset: frames into B where its use starts; fit_length: stretch B's frames from there onto
    the active action's length (else frame by frame, B's last frame held); take_root: the root's
    lean and sway (not its heading or path) from B with ``weight``.
    """
    start = time.perf_counter()
    if bone not in obj.data.bones:
        raise ValueError(f"'{obj.name}' has no bone '{bone}'")
    action_a = active_action(obj)
    if action_b == action_a:
        raise ValueError("choose an action other than the active one to blend from")
    a, b = read_actions(obj, [action_a, action_b])
    motion = a.motion
    out = ed.blend_parts(motion, b.motion, bone, weight, offset, None, fit_length, soft_edge, take_root, vertical(obj))
    joint = motion.skeleton.index(bone)
    part = ed.blend.part_weights(motion, joint, weight, soft_edge, take_root) > 0
    turned = np.degrees(rotation_angle(motion.rotations[:, part], out.rotations[:, part]))
    channels = write_action(obj, out, _first(a), f"{_name(a)}_{bone}", source=a)
    below = int(motion.skeleton.subtree(joint).sum()) - 1
    figures = {
        "bone": bone,
        "bones": int(part.sum()),
        "weight": float(weight),
        "offset": int(offset),
        "mean_degrees": float(turned.mean()) if turned.size else 0.0,
        "max_degrees": float(turned.max()) if turned.size else 0.0,
    }
    lines = [
        f"Blended '{bone}' and {below} bones below it from '{_name(b)}' (weight {weight:.3g}, offset {offset}) "
        f"into {motion.n_frames} frames of '{_name(a)}'",
        f"{figures['bones']} bones turned {figures['mean_degrees']:.3g}° "
        f"on average, at most {figures['max_degrees']:.3g}°",
    ]
    return _new_action_report(start, channels, "blend", [_name(a), _name(b)], figures, lines)


# --- Interpolate -------------------------------------------------------------------------------


def interpolate_actions(obj: Any, action_b: Any, coefficient: float = 0.5, speed: float = 1.0) -> EditReport:
    """Between the active action (coefficient 0) and ``action_b`` (1), time-aligned on their foot
    strikes (core: :func:`core.editing.interpolate`); speed: time-scale factor (2 = twice as fast)."""
    start = time.perf_counter()
    action_a = active_action(obj)
    if action_b == action_a:
        raise ValueError("choose an action other than the active one to interpolate with")
    a, b = read_actions(obj, [action_a, action_b])
    up = vertical(obj)
    res = ed.interpolate(a.motion, b.motion, coefficient, speed=speed, up=up)
    channels = write_action(obj, res.motion, _first(a), f"{_name(a)}_{_name(b)}_{coefficient:.2f}")
    events_a, events_b = res.events_a + _first(a), res.events_b + _first(b)
    speeds = [_pelvis_speed(m, up) for m in (a.motion, res.motion, b.motion)]
    figures = {
        "coefficient": float(coefficient),
        "speed": float(speed),
        "events": len(events_a),
        "events_a": events_a.tolist(),
        "events_b": events_b.tolist(),
        "frames": res.motion.n_frames,
        "pelvis_speeds": speeds,
    }
    lines = [
        f"Interpolated '{_name(a)}' and '{_name(b)}' at {coefficient:.3g}, speed ×{speed:.3g}: "
        f"{len(events_a)} key events matched (foot strikes at frames {_frames_text(events_a)} "
        f"and {_frames_text(events_b)})",
        f"{res.motion.n_frames} frames, pelvis speed "
        f"{' / '.join(armature_speed(obj, s) for s in speeds)} (A / result / B)",
    ]
    return _new_action_report(start, channels, "interpolate", [_name(a), _name(b)], figures, lines)


# --- PCA synthesis -----------------------------------------------------------------------------


def _parameters(actions: list[Any], parameter: str, property_name: str) -> str | list[float]:
    if parameter == "SPEED":
        return "speed"
    values = []
    for action in actions:
        value = action.get(property_name)
        if not isinstance(value, (int, float)):
            raise ValueError(f"action '{action.name}' has no number in its custom property '{property_name}'")
        values.append(float(value))
    return values


def pca_actions(
    obj: Any,
    actions: list[Any],
    parameter: str = "SPEED",
    property_name: str = "parameter",
    position: float | None = 0.5,
    value: float | None = None,
    cycles: int = 4,
    components: int = 0,
) -> EditReport:
    """A new cyclic motion from the gait cycles of ``actions`` (core: :func:`core.editing.fit_cycle_pca`).

    parameter: ``SPEED`` (each cycle's pelvis speed) or ``PROPERTY`` (a number per action in its
    custom property ``property_name``); the new motion's parameter is ``value``, or ``position``
    along the training range (0 = lowest, 1 = highest; −0.5..1.5). cycles: cycles generated;
    components: PCA components used (0 = all).
    """
    start = time.perf_counter()
    if not actions:
        raise ValueError("choose the actions to learn from")
    clips = read_actions(obj, list(actions))
    up = vertical(obj)
    model = ed.fit_cycle_pca([c.motion for c in clips], _parameters(actions, parameter, property_name), up=up)
    lo, hi = float(model.parameters.min()), float(model.parameters.max())
    target = value if value is not None else lo + position * (hi - lo)
    used = min(components, len(model.components)) if components > 0 else len(model.components)
    out = model.generate(target, cycles, used, fps=clips[0].motion.fps)
    out = place(out, 0, track(clips[0].motion, up).state(0), up)
    channels = write_action(obj, out, _first(clips[0]), f"{_name(clips[0])}_pca")
    explained = np.cumsum(model.explained_variance_ratio)
    figures = {
        "cycles_found": len(model.cycles),
        "actions": len(clips),
        "explained_variance": explained.tolist(),
        "components": used,
        "components_for_90_percent": model.n_components_for(0.9),
        "parameter": float(target),
        "parameter_range": [lo, hi],
        "parameter_r2": model.parameter_r2,
        "frames": out.n_frames,
        "generated_speed": _pelvis_speed(out, up),
    }
    shares = ", ".join(f"{100 * s:.0f}" for s in explained[:4]) + (", …" if len(explained) > 4 else "")
    name = "speed" if parameter == "SPEED" else f"'{property_name}'"

    def shown(value: float) -> str:
        return armature_speed(obj, value) if parameter == "SPEED" else f"{value:.3g}"

    lines = [
        f"PCA of {len(model.cycles)} cycles from {len(clips)} actions: {shares} % of the variance with 1, 2, … "
        f"components ({figures['components_for_90_percent']} for 90 %, {used} used)",
        f"{name} {shown(target)} (cycles {shown(lo)}–{shown(hi)}, fit R² {model.parameter_r2:.2f})",
        f"{cycles} cycles, {out.n_frames} frames",
    ]
    return _new_action_report(start, channels, "pca", [_name(c) for c in clips], figures, lines)


# --- Smoothed pose edit ------------------------------------------------------------------------


def posed_changes(obj: Any, clip: ArmatureClip, index: int) -> tuple[dict, dict]:
    """Joints whose current pose-bone values differ from the action at frame ``index``:
    new local rotations {joint: (4,)} and translations {joint: (3,)} (joints with position channels)."""
    motion = clip.motion
    posed = motion_from_values(obj, motion.skeleton, {}, 1, motion.fps)  # the pose bones as they are now
    turned = rotation_angle(posed.rotations[0], motion.rotations[index]) > 1e-4
    moved = np.linalg.norm(posed.translations[0] - motion.translations[index], axis=-1) > 1e-6 * motion.skeleton.size()
    moved &= motion.skeleton.has_position_channels
    rotations = {int(j): posed.rotations[0, j] for j in np.flatnonzero(turned)}
    translations = {int(j): posed.translations[0, j] for j in np.flatnonzero(moved)}
    return rotations, translations


def _splice_edit(obj: Any, clip: ArmatureClip, out: Motion, bones: set[str], span: np.ndarray) -> int:
    """Rewrite the edited bones' curves of the active action on frames ``span`` (indices); rotations
    stay on the representation the keys use. Returns the curves changed."""
    rotations = rebuilt_channel_values(out, clip.layout, clip.values, np.arange(out.n_frames))
    locations = pose_values(obj, out)
    changed = 0
    for key, fcurve in clip.curves.by_channel.items():
        if key[0] not in bones or key[1] not in (
            "location",
            rotation_property(obj.pose.bones[key[0]].rotation_mode)[0],
        ):
            continue
        values = locations[key] if key[1] == "location" else rotations[key]
        animdata.splice_keys(fcurve, clip.frames[span].astype(float), values[span])
        changed += 1
    return changed


def spread_pose(
    obj: Any, frame: int, width: float = 10.0, shape: str = "smootherstep", in_place: bool = False
) -> EditReport:
    """Spread the armature's current pose at ``frame`` (bones posed away from the action) over the
    frames around it with a falloff of ``width`` frames (core: :func:`core.editing.key_edit`).

    The result is a new action, or with ``in_place`` the active action's keys of the posed bones
    are replaced on the affected frames (keys elsewhere are kept as they are).
    """
    start = time.perf_counter()
    clip = read_clip(obj)
    refuse_linked(clip.channels.action if in_place else obj, keys=in_place)
    first, n = _first(clip), clip.motion.n_frames
    index = frame - first
    if not 0 <= index < n:
        raise ValueError(f"frame {frame} is outside '{_name(clip)}' (frames {first}–{first + n - 1})")
    rotations, translations = posed_changes(obj, clip, index)
    if not rotations and not translations:
        raise ValueError(f"no keyed bone is posed away from '{_name(clip)}' at frame {frame}: pose some bones first")
    out = ed.key_edit(clip.motion, index, rotations, translations, width, shape)
    affected = np.flatnonzero(ed.keyedit.falloff(n, index, width, shape) > 0)
    names = clip.motion.skeleton.names
    bones = sorted({names[j] for j in (*rotations, *translations)})
    if in_place:
        span = np.arange(max(affected[0] - 1, 0), min(affected[-1] + 1, n - 1) + 1)
        _splice_edit(obj, clip, out, set(bones), span)
        action, where = clip.channels.action, f"keys replaced in '{_name(clip)}'"
    else:
        action = write_action(obj, out, first, f"{_name(clip)}_posed", source=clip).action
        where = f"new action '{action.name}'"
    figures = {
        "frame": int(frame),
        "bones": bones,
        "affected_frames": [int(first + affected[0]), int(first + affected[-1])],
        "affected": len(affected),
        "width": float(width),
        "in_place": bool(in_place),
    }
    _record(action, "pose_edit", [_name(clip)], {k: v for k, v in figures.items() if k != "bones"})
    listed = ", ".join(bones[:4]) + (", …" if len(bones) > 4 else "")
    lines = [
        f"Spread the pose of {len(bones)} bone{'s' if len(bones) > 1 else ''} ({listed}) at frame {frame} over frames "
        f"{first + affected[0]}–{first + affected[-1]} ({len(affected)} frames)",
        where,
    ]
    return _timed(start, EditReport(lines, action.name, figures))


# --- Clip operations ---------------------------------------------------------------------------


def frame_span(clip: ArmatureClip, start: int | None = None, end: int | None = None) -> tuple[int, int]:
    """[s, e) frame indices of scene frames ``start``..``end`` (inclusive) of a clip; the whole
    clip when they are None."""
    first, last = _first(clip), int(clip.frames[-1])
    if start is None or end is None:
        return 0, clip.motion.n_frames
    if end < start:
        raise ValueError(f"the range ends (frame {end}) before it starts (frame {start})")
    s, e = max(start, first), min(end, last)
    if s > e:
        raise ValueError(f"frames {start}–{end} are outside '{_name(clip)}' (frames {first}–{last})")
    return s - first, e - first + 1


def _range_text(clip: ArmatureClip, s: int, e: int) -> str:
    return f"frames {_first(clip) + s}–{_first(clip) + e - 1}"


def _replace_range(motion: Motion, s: int, e: int, change, up: np.ndarray) -> Motion:
    """The motion with frames [s, e) replaced by change(those frames), pasted back with root continuity."""
    if (s, e) == (0, motion.n_frames):
        return change(motion)
    rest, removed = ed.cut(motion, s, e, up)
    return ed.paste(rest, change(removed.motion), s, up)


def reverse_action(obj: Any, start: int | None = None, end: int | None = None) -> EditReport:
    """The active action played backwards, or only its frames ``start``..``end`` (pasted back with
    root continuity)."""
    t0 = time.perf_counter()
    clip = read_clip(obj)
    up = vertical(obj)
    s, e = frame_span(clip, start, end)
    out = _replace_range(clip.motion, s, e, ed.reverse, up)
    channels = write_action(obj, out, _first(clip), f"{_name(clip)}_reversed")
    figures = {"range": [_first(clip) + s, _first(clip) + e - 1], "frames": out.n_frames}
    return _new_action_report(
        t0, channels, "reverse", [_name(clip)], figures, [f"Reversed {_range_text(clip, s, e)} of '{_name(clip)}'"]
    )


def time_scale_action(
    obj: Any, factor: float | None = None, fps: float | None = None, start: int | None = None, end: int | None = None
) -> EditReport:
    """The active action (or frames ``start``..``end``) played ``factor`` times as long at the same
    frame rate (2 = half speed), or the whole action resampled from the scene's rate to ``fps``
    (same duration at that rate)."""
    t0 = time.perf_counter()
    clip = read_clip(obj)
    up = vertical(obj)
    motion = clip.motion
    if fps is not None:
        out = ed.resample(motion, fps)
        s, e = 0, motion.n_frames
        what = f"Resampled '{_name(clip)}' from {motion.fps:.4g} to {fps:.4g} fps"
    else:
        s, e = frame_span(clip, start, end)
        out = _replace_range(motion, s, e, lambda m: ed.time_scale(m, factor), up)
        exact = (out.n_frames - motion.n_frames + (e - s) - 1) / max(e - s - 1, 1)
        what = f"Time-scaled {_range_text(clip, s, e)} of '{_name(clip)}' ×{exact:.4g}"
    channels = write_action(obj, out, _first(clip), f"{_name(clip)}_scaled")
    figures = {"frames_before": motion.n_frames, "frames": out.n_frames, "fps": float(fps or motion.fps)}
    return _new_action_report(
        t0, channels, "time_scale", [_name(clip)], figures, [f"{what}: {motion.n_frames} → {out.n_frames} frames"]
    )


def cut_range(obj: Any, start: int, end: int) -> EditReport:
    """The active action without frames ``start``..``end``; the frames after the gap continue the
    root path from the frame before it."""
    t0 = time.perf_counter()
    clip = read_clip(obj)
    up = vertical(obj)
    s, e = frame_span(clip, start, end)
    out, removed = ed.cut(clip.motion, s, e, up)
    channels = write_action(obj, out, _first(clip), f"{_name(clip)}_cut")
    jump = _seam_jump(out, s, [clip.motion])
    figures = {"range": [_first(clip) + s, _first(clip) + e - 1], "removed": e - s, "frames": out.n_frames,
               "root_jump_ratio": jump}  # fmt: skip
    lines = [
        f"Cut {_range_text(clip, s, e)} ({e - s} frames) out of '{_name(clip)}': {out.n_frames} frames left, "
        f"root velocity jump at the seam {_figure(jump)}× the clip's own",
    ]
    return _new_action_report(t0, channels, "cut", [_name(clip)], figures, lines)


def paste_range(obj: Any, source: Any, frame: int, start: int | None = None, end: int | None = None) -> EditReport:
    """Frames ``start``..``end`` of the action ``source`` (all of it when None) inserted before
    ``frame`` of the active action, continuing the root path across both seams."""
    t0 = time.perf_counter()
    target_action = active_action(obj)
    target, src = read_actions(obj, [target_action, source])
    up = vertical(obj)
    s, e = frame_span(src, start, end)
    piece = src.motion if (s, e) == (0, src.motion.n_frames) else ed.copy(src.motion, s, e, up)
    at = int(np.clip(frame - _first(target), 0, target.motion.n_frames))
    out = ed.paste(target.motion, piece, at, up)
    channels = write_action(obj, out, _first(target), f"{_name(target)}_pasted")
    references = [target.motion, src.motion.frames(slice(s, e))]
    jumps = [_seam_jump(out, at, references), _seam_jump(out, at + e - s, references)]
    figures = {"range": [_first(src) + s, _first(src) + e - 1], "at": _first(target) + at,
               "frames": out.n_frames, "root_jump_ratios": jumps}  # fmt: skip
    lines = [
        f"Pasted {_range_text(src, s, e)} of '{_name(src)}' ({e - s} frames) before frame {_first(target) + at} "
        f"of '{_name(target)}': {out.n_frames} frames, root velocity jumps at the seams "
        f"{_figure(jumps[0])}× and {_figure(jumps[1])}× the clips' own",
    ]
    return _new_action_report(t0, channels, "paste", [_name(target), _name(src)], figures, lines)
