"""Armature ↔ core: bones to a ``Skeleton``, pose bones to a channel layout, F-curves to channel
values, and new armatures from a skeleton. The channel maths (rotation modes, Euler branches,
motions ↔ channel values) is the core's (:mod:`core.channels`); this module only reads and writes
Blender data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ...core import channels as core_channels
from ...core import quaternion as quat
from ...core.channels import PROPERTIES, ChannelLayout
from ...core.motion import Motion
from ...core.skeleton import POSITION_CHANNELS, Skeleton
from . import animdata
from .spaces import matrix_array

_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(' + "|".join(PROPERTIES) + r")$")


def bone_order(armature: Any) -> list[Any]:
    """Bones of an armature datablock, every parent before its children (depth-first)."""
    ordered: list[Any] = []

    def visit(bone: Any) -> None:
        ordered.append(bone)
        for child in bone.children:
            visit(child)

    for bone in armature.bones:
        if bone.parent is None:
            visit(bone)
    return ordered


def skeleton_from_armature(obj: Any, moving: set[str] | None = None) -> Skeleton:
    """The armature's rest pose as a Skeleton (armature space, scene units).

    moving: names of bones whose location is animated; they get position channels.
    """
    bones = bone_order(obj.data)
    if not bones:
        raise ValueError(f"'{obj.name}' has no bones")
    names = [b.name for b in bones]
    index = {n: i for i, n in enumerate(names)}
    parents = [index[b.parent.name] if b.parent else -1 for b in bones]
    world = np.array([matrix_array(b.matrix_local) for b in bones])
    local = world.copy()
    for j, p in enumerate(parents):
        if p >= 0:
            local[j] = np.linalg.inv(world[p]) @ world[j]
    moving = moving or set()
    channels = [
        (*POSITION_CHANNELS, "Zrotation", "Xrotation", "Yrotation")
        if n in moving
        else ("Zrotation", "Xrotation", "Yrotation")
        for n in names
    ]
    # A leaf bone's tail is its End Site: (0, length, 0) in the bone's own frame.
    tails = [(j, np.array([0.0, b.length, 0.0])) for j, b in enumerate(bones) if not b.children]
    return Skeleton(
        names,
        parents,
        local[:, :3, 3],
        quat.from_matrix(local[:, :3, :3]),
        channels,
        end_site_parents=np.array([j for j, _ in tails], dtype=int),
        end_site_offsets=np.array([t for _, t in tails]).reshape(-1, 3),
    )


@dataclass
class BoneCurves:
    """Which F-curves of an action drive which pose-bone channels."""

    by_channel: dict[tuple[str, str, int], Any] = field(default_factory=dict)  # (bone, property, index) → fcurve
    other: list[Any] = field(default_factory=list)  # curves we leave alone

    @classmethod
    def of(cls, fcurves: Any, bone_names: set[str]) -> BoneCurves:
        curves = cls()
        for fc in fcurves:
            m = _PATH.match(fc.data_path)
            name = bpy.utils.unescape_identifier(m.group(1)) if m else None
            if m and name in bone_names:
                curves.by_channel[(name, m.group(2), fc.array_index)] = fc
            else:
                curves.other.append(fc)
        return curves

    def moving_bones(self) -> set[str]:
        return {bone for bone, prop, _ in self.by_channel if prop == "location"}


def frame_range(action: Any) -> np.ndarray:
    """Integer frames covered by an action (its manual range when set, else its keys)."""
    start, end = action.frame_range
    return np.arange(int(np.floor(start + 1e-6)), int(np.ceil(end - 1e-6)) + 1)


def sample_curves(curves: BoneCurves, frames: np.ndarray) -> dict[tuple[str, str, int], np.ndarray]:
    """Dense values (T,) of every bone channel curve at ``frames``."""
    return {key: animdata.sample(fc, frames) for key, fc in curves.by_channel.items()}


def channel_layout(obj: Any) -> ChannelLayout:
    """Each pose bone's rotation mode and current values (what channels without a curve hold)."""
    pose_bones = obj.pose.bones
    held = {(pb.name, prop): np.array(getattr(pb, prop), dtype=float) for pb in pose_bones for prop in PROPERTIES}
    return ChannelLayout({pb.name: pb.rotation_mode for pb in pose_bones}, held)


def motion_from_values(obj: Any, skeleton: Skeleton, values: dict, n_frames: int, fps: float) -> Motion:
    """The Motion that bone channel values play on ``obj`` (see :func:`core.channels.motion_from_values`)."""
    return core_channels.motion_from_values(skeleton, channel_layout(obj), values, n_frames, fps)


def pose_values(obj: Any, motion: Motion) -> dict[tuple[str, str, int], np.ndarray]:
    """Bone channel values (T,) that make ``obj`` play ``motion``, in each pose bone's rotation mode."""
    return core_channels.pose_values(motion, channel_layout(obj))


def scene_fps(scene: Any) -> float:
    return scene.render.fps / scene.render.fps_base


def set_scene_fps(scene: Any, fps: float) -> None:
    """Make the scene play at ``fps`` the way Blender's BVH importer does (integer rate and base)."""
    scene.render.fps = max(1, round(fps))
    scene.render.fps_base = scene.render.fps / fps


def roll_targets(frames: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """(J, 3) vectors for ``EditBone.align_roll`` that turn each bone about its own axis
    (``directions``) so its frame comes closest to ``frames`` (J, 4 world orientations).

    A bone's Y axis is its direction, so only one of the frame's other axes can be matched:
    its X axis (the bone's X becomes the frame's X, made perpendicular to the bone), unless
    the bone runs closer to X than to Z, then its Z axis. For Acclaim skeletons, whose bones
    mostly run along ±Y of their axis frame, hinge dofs (``rx`` knees, elbows) then turn
    about the bone's X axis as in Blender rigs.
    """
    d = directions / np.maximum(np.linalg.norm(directions, axis=-1, keepdims=True), 1e-12)
    x = quat.rotate(frames, np.array([1.0, 0.0, 0.0]))
    z = quat.rotate(frames, np.array([0.0, 0.0, 1.0]))
    use_x = np.abs(np.sum(x * d, -1)) <= np.abs(np.sum(z * d, -1))
    return np.where(use_x[:, None], np.cross(x, d), z)  # align_roll aims the bone's Z axis


def build_armature(
    skeleton: Skeleton,
    name: str,
    collection: Any,
    rotation_mode: str = "QUATERNION",
    frames: np.ndarray | None = None,
) -> Any:
    """A new armature object with one bone per joint at the skeleton's rest pose.

    Bones point at their child (or End Site); leaf bones without one continue their parent's
    direction, a root without one points up (+Z). Bone rolls are Blender's defaults, or, with
    ``frames`` (J, 4 world rest orientations, e.g. Acclaim bone axes), chosen by
    :func:`roll_targets`. Either way bone rest rotations differ from the skeleton's: use
    :func:`core.motion.change_rest` to move a motion onto the armature.
    """
    from ...core.skeleton import rest_positions

    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    collection.objects.link(obj)
    heads = rest_positions(skeleton)
    ends = rest_positions(skeleton, include_end_sites=True)[skeleton.n_joints :]
    size = skeleton.size()
    view_layer = bpy.context.view_layer
    view_layer.objects.active = obj
    previous_mode = obj.mode
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = []
    for j, joint in enumerate(skeleton.names):
        bone = data.edit_bones.new(joint)
        bone.head = heads[j]
        targets = [heads[c] for c in skeleton.children(j)] + [
            ends[e] for e in np.flatnonzero(skeleton.end_site_parents == j)
        ]
        direction = np.mean(targets, axis=0) - heads[j] if targets else np.zeros(3)
        if np.linalg.norm(direction) < 1e-4 * size:
            p = skeleton.parents[j]
            direction = heads[j] - heads[p] if p >= 0 else np.array([0.0, 0.0, 0.1 * size])
            if np.linalg.norm(direction) < 1e-4 * size:
                direction = np.array([0.0, 0.05 * size, 0.0])
            direction = direction / np.linalg.norm(direction) * 0.05 * size
        bone.tail = heads[j] + direction
        if frames is not None:
            bone.align_roll(roll_targets(frames[j : j + 1], direction[None])[0])
        if skeleton.parents[j] >= 0:
            bone.parent = edit_bones[skeleton.parents[j]]
        edit_bones.append(bone)
    bpy.ops.object.mode_set(mode=previous_mode if previous_mode != "EDIT" else "OBJECT")
    for pose_bone in obj.pose.bones:
        pose_bone.rotation_mode = rotation_mode
    view_layer.update()
    return obj


def write_values(channels: animdata.Channels, values: dict, frames: np.ndarray, interpolation: str = "LINEAR") -> None:
    """Write dense or sparse channel values (bone, property, index) → (n,) as F-curves grouped by bone."""
    for (bone, prop, index), v in values.items():
        path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"].{prop}'
        fcurve = animdata.new_fcurve(channels, path, index, bone)
        animdata.write_keys(fcurve, frames, v, interpolation)


def create_animated_armature(
    motion: Motion,
    name: str,
    collection: Any,
    rotation_mode: str = "QUATERNION",
    y_up: bool = True,
    first_frame: int = 1,
) -> Any:
    """A new armature playing ``motion`` from ``first_frame``, one LINEAR key per frame and channel.

    y_up: the motion's up axis is Y (BVH, the core's procedural clips); the object is turned
    90° about X so it stands up in Blender's Z-up world, as Blender's BVH importer does.
    """
    from ...core.motion import change_rest

    obj = build_armature(motion.skeleton, name, collection, rotation_mode)
    moving = {n for n, m in zip(motion.skeleton.names, motion.skeleton.has_position_channels) if m}
    on_bones = change_rest(motion, skeleton_from_armature(obj, moving))
    channels = animdata.new_action_for(obj, name)
    frames = np.arange(first_frame, first_frame + motion.n_frames)
    write_values(channels, pose_values(obj, on_bones), frames)
    if y_up:
        obj.rotation_euler = (np.pi / 2, 0.0, 0.0)
    bpy.context.view_layer.update()
    animdata.assign(obj, channels)
    return obj
