"""An armature's action read into the core once: its curves, frames and dense motion.

Every feature starts here (Extract Keyframes, Retarget, the Edit operators, Acclaim export),
and measures what Blender plays back with :func:`played_motion`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np

from ...core.channels import ChannelLayout, motion_from_values
from ...core.motion import Motion
from ...core.skeleton import Skeleton
from . import animdata
from .armature import BoneCurves, channel_layout, frame_range, sample_curves, scene_fps, skeleton_from_armature


@dataclass
class ArmatureClip:
    """An armature's active action read into the core: curves, frames and the dense motion."""

    obj: Any
    channels: animdata.Channels
    curves: BoneCurves
    frames: np.ndarray
    values: dict
    motion: Motion
    layout: ChannelLayout
    key_frames: dict | None = None  # channel → its keys' frames (n,), as read with the values


def read_clip(obj: Any, channels: animdata.Channels | None = None, skeleton: Skeleton | None = None) -> ArmatureClip:
    """Dense motion of an action of an armature (every integer frame of its range).

    channels: the action's curves for ``obj`` (default its active action, see
    :func:`.animdata.action_channels` for another one); skeleton: the armature's skeleton to read
    it on (default one whose position channels are the bones this action moves).
    """
    channels = animdata.object_channels(obj) if channels is None else channels
    if channels is None:
        raise ValueError(f"'{obj.name}' has no action to read")
    curves = BoneCurves.of(channels.fcurves, {b.name for b in obj.data.bones})
    if not curves.by_channel:
        raise ValueError(f"action '{channels.action.name}' animates no bone of '{obj.name}'")
    if not np.all(np.isfinite(channels.action.frame_range)):
        raise ValueError(f"action '{channels.action.name}' has keys on frames that are not numbers (NaN or inf)")
    frames = frame_range(channels.action)
    skeleton = skeleton or skeleton_from_armature(obj, curves.moving_bones())
    keys = {key: animdata.read_keys(fc) for key, fc in curves.by_channel.items()}  # each curve read once
    values = {key: animdata.sample(fc, frames, keys[key]) for key, fc in curves.by_channel.items()}
    refuse_non_finite(channels.action, values, frames)
    layout = channel_layout(obj)
    motion = motion_from_values(skeleton, layout, values, len(frames), scene_fps(bpy.context.scene))
    key_frames = {key: k[:, 0] for key, k in keys.items()}
    return ArmatureClip(obj, channels, curves, frames, values, motion, layout, key_frames)


HUGE = 1e30  # Blender stores an infinite key value typed in as FLT_MAX (3.4e38)


def refuse_non_finite(action: Any, values: dict, frames: np.ndarray) -> None:
    """Raise ValueError naming the bones and first frames where sampled ``values`` are NaN or infinite."""
    if not values or np.abs(np.stack(list(values.values()))).max() < HUGE:  # NaN fails the comparison
        return
    bad = {}
    for (bone, prop, index), v in values.items():
        wrong = np.flatnonzero(~(np.abs(v) < HUGE))  # NaN, inf, or inf clamped by Blender to FLT_MAX
        if len(wrong) and (bone not in bad or frames[wrong[0]] < bad[bone][0]):
            bad[bone] = (int(frames[wrong[0]]), f"{prop}[{index}]", float(v[wrong[0]]))
    if bad:
        shown = [
            f"bone '{b}' ({where}) at frame {f}" for b, (f, where, _) in sorted(bad.items(), key=lambda x: x[1][0])
        ]
        more = f" and {len(shown) - 3} more bones" if len(shown) > 3 else ""
        raise ValueError(f"action '{action.name}' has keys that are not numbers (NaN or inf): "
                         f"{'; '.join(shown[:3])}{more}; fix or delete those keys")  # fmt: skip


def scaled_bones(clip: ArmatureClip, tolerance: float = 1e-4) -> list[str]:
    """Bones whose scale curves leave 1 somewhere in the clip (the core's motion has no scale)."""
    return sorted({bone for (bone, prop, _), v in clip.values.items()
                   if prop == "scale" and np.any(np.abs(v - 1.0) > tolerance)})  # fmt: skip


def played_motion(
    clip: ArmatureClip, channels: animdata.Channels, blender: bool = True, written: dict | None = None
) -> Motion:
    """The motion Blender plays back from ``channels``: every curve evaluated at every frame, by
    Blender (``fcurve.evaluate``), or with ``blender=False`` by the core from the keys as Blender
    would (:func:`.animdata.play`: the same values to float rounding, many times faster); written:
    channel → its keys as just written (:func:`.animdata.write_curves`), not read again."""
    curves = BoneCurves.of(channels.fcurves, set(clip.motion.skeleton.names))
    if blender:
        values = sample_curves(curves, clip.frames)
    else:
        known = None if not written else [written.get(key) for key in curves.by_channel]
        played = animdata.play(list(curves.by_channel.values()), clip.frames, known)
        values = dict(zip(curves.by_channel, played.T))
    return motion_from_values(clip.motion.skeleton, clip.layout, values, len(clip.frames), clip.motion.fps)
