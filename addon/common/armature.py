"""Armature ↔ core: bones to a ``Skeleton``, pose-bone F-curves to a ``Motion`` and back.

A pose bone's rotation is relative to its rest orientation and its location is expressed
in its rest frame, so with the skeleton read from the armature itself (rest rotations
included) a core rotation *is* the pose-bone quaternion, and the core translation is
rest offset + rest rotation · location.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ...core import quaternion as quat
from ...core.motion import Motion
from ...core.skeleton import POSITION_CHANNELS, Skeleton
from . import animdata
from .spaces import matrix_array

PROPERTIES = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")
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


def _channel(values: dict, pose_bone: Any, prop: str, width: int, n: int) -> np.ndarray:
    """(n, width) values of one bone property: its curves where present, else its current value."""
    current = np.array(getattr(pose_bone, prop), dtype=float).reshape(width)
    out = np.tile(current, (n, 1))
    for i in range(width):
        v = values.get((pose_bone.name, prop, i))
        if v is not None:
            out[:, i] = v
    return out


def rotation_to_quaternion(mode: str, values: np.ndarray) -> np.ndarray:
    """Quaternions (T, 4) from a rotation mode's property values (T, 3 or 4)."""
    if mode == "QUATERNION":
        return quat.normalize(values)
    if mode == "AXIS_ANGLE":
        return quat.from_axis_angle(values[:, 1:], values[:, 0])
    return quat.from_euler(values[:, ["XYZ".index(a) for a in mode]], mode)


def quaternion_to_rotation(mode: str, q: np.ndarray) -> np.ndarray:
    """A rotation mode's property values (T, 3 or 4) from quaternions (T, 4), kept continuous."""
    if mode == "QUATERNION":
        return quat.make_continuous(q)
    if mode == "AXIS_ANGLE":
        axis, angle = quat.to_axis_angle(quat.make_continuous(q))
        return np.concatenate((angle[:, None], axis), axis=1)
    euler = np.unwrap(quat.to_euler(q, mode), axis=0)
    out = np.empty_like(euler)
    out[:, ["XYZ".index(a) for a in mode]] = euler
    return out


def rotation_property(mode: str) -> tuple[str, int]:
    if mode == "QUATERNION":
        return "rotation_quaternion", 4
    if mode == "AXIS_ANGLE":
        return "rotation_axis_angle", 4
    return "rotation_euler", 3


def motion_from_values(obj: Any, skeleton: Skeleton, values: dict, n_frames: int, fps: float) -> Motion:
    """Build a Motion of ``skeleton`` (read from ``obj``) from dense bone channel values."""
    motion = Motion.rest(skeleton, n_frames, fps)
    for j, name in enumerate(skeleton.names):
        pose_bone = obj.pose.bones[name]
        loc = _channel(values, pose_bone, "location", 3, n_frames)
        motion.translations[:, j] = skeleton.rest_translations[j] + quat.rotate(skeleton.rest_rotations[j], loc)
        mode = pose_bone.rotation_mode
        prop, width = rotation_property(mode)
        motion.rotations[:, j] = rotation_to_quaternion(mode, _channel(values, pose_bone, prop, width, n_frames))
    return motion


def pose_values(obj: Any, motion: Motion) -> dict[tuple[str, str, int], np.ndarray]:
    """Bone channel values (T,) that make the armature play ``motion`` (on the armature's skeleton),
    in each pose bone's rotation mode."""
    sk = motion.skeleton
    loc = quat.rotate(quat.inverse(sk.rest_rotations), motion.translations - sk.rest_translations)
    values = {}
    for j, name in enumerate(sk.names):
        mode = obj.pose.bones[name].rotation_mode
        if sk.has_position_channels[j]:
            for i in range(3):
                values[(name, "location", i)] = loc[:, j, i]
        prop, width = rotation_property(mode)
        rot = quaternion_to_rotation(mode, motion.rotations[:, j])
        for i in range(width):
            values[(name, prop, i)] = rot[:, i]
    return values


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


def _nearest_turn(angles: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Angles shifted by whole turns to lie closest to ``reference``."""
    return angles + 2 * np.pi * np.round((reference - angles) / (2 * np.pi))


def euler_near(q: np.ndarray, mode: str, reference: np.ndarray) -> np.ndarray:
    """Euler values (T, 3) in x, y, z slots for quaternions q (T, 4), on the branch nearest ``reference``.

    A rotation has two Euler solutions, (a, b, c) and (a+π, π−b, c+π) in the mode's axis
    order, each defined up to whole turns; keyed curves may sit on either.
    """
    slots = ["XYZ".index(a) for a in mode]
    ref = reference[:, slots]
    first = quat.to_euler(q, mode)
    second = first + np.array([np.pi, 0.0, np.pi])
    second[:, 1] = np.pi - first[:, 1]
    candidates = [_nearest_turn(c, ref) for c in (first, second)]
    cost = [np.sum((c - ref) ** 2, axis=1) for c in candidates]
    chosen = np.where((cost[0] <= cost[1])[:, None], candidates[0], candidates[1])
    out = np.empty_like(chosen)
    out[:, slots] = chosen
    return out


def axis_angle_near(q: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Axis-angle values (T, 4: angle, x, y, z) for q (T, 4), on the representation nearest ``reference``."""
    q = np.where((quat.dot(q, rotation_to_quaternion("AXIS_ANGLE", reference)) < 0)[:, None], -q, q)
    v = q[:, 1:]
    norm = np.linalg.norm(v, axis=1)
    angle = 2 * np.arctan2(norm, q[:, 0])
    axis = np.where(norm[:, None] > 1e-12, v / np.where(norm > 1e-12, norm, 1.0)[:, None], reference[:, 1:])
    first = np.concatenate((angle[:, None], axis), axis=1)
    second = -first
    candidates = []
    for c in (first, second):
        c = c.copy()
        c[:, 0] = _nearest_turn(c[:, 0], reference[:, 0])
        candidates.append(c)
    cost = [np.sum((c - reference) ** 2, axis=1) for c in candidates]
    return np.where((cost[0] <= cost[1])[:, None], candidates[0], candidates[1])


def rebuilt_channel_values(obj: Any, rebuilt: Motion, keyed: dict, keys: np.ndarray) -> dict:
    """Dense values (T,) per keyed bone channel that replay ``rebuilt`` (the slerp/lerp rebuild).

    keyed: (bone, property, index) → values at the keys (K,). Channels interpolated
    linearly by the rebuild (locations, scales, rotations in an inactive mode) follow the
    straight line between keys; the active rotation channels follow the slerp, expressed on
    the branch the keys are on.
    """
    frames = np.arange(rebuilt.n_frames)
    reference = {k: np.interp(frames, keys, v) for k, v in keyed.items()}
    targets = dict(reference)
    for j, name in enumerate(rebuilt.skeleton.names):
        pose_bone = obj.pose.bones[name]
        mode = pose_bone.rotation_mode
        prop, width = rotation_property(mode)
        if not any((name, prop, i) in keyed for i in range(width)):
            continue
        ref = _channel(reference, pose_bone, prop, width, rebuilt.n_frames)
        q = rebuilt.rotations[:, j]
        if mode == "QUATERNION":
            values = np.where((quat.dot(q, ref) < 0)[:, None], -q, q)
        elif mode == "AXIS_ANGLE":
            values = axis_angle_near(q, ref)
        else:
            values = euler_near(q, mode, ref)
        for i in range(width):
            if (name, prop, i) in keyed:
                targets[(name, prop, i)] = values[:, i]
    return targets
