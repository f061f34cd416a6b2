"""An armature's animation channels as numpy: each bone's rotation in its rotation mode, and
motions ↔ channel values.

A channel is ``(bone, property, index)``, as an F-curve is: property ``"location"``,
``"rotation_quaternion"``, ``"rotation_euler"``, ``"rotation_axis_angle"`` or ``"scale"``, index
its component. Values are arrays (T,) over frames. A pose bone's rotation is relative to its rest
orientation and its location is expressed in its rest frame, so on a skeleton whose rest
rotations are the bones' own, a core rotation *is* the pose-bone quaternion, and the core
translation is rest offset + rest rotation · location. Rotation modes are Blender's:
``"QUATERNION"``, ``"AXIS_ANGLE"`` or an Euler order (``"XYZ"`` applies X first).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import quaternion as quat
from .motion import Motion
from .skeleton import Skeleton

Channel = tuple[str, str, int]
PROPERTIES = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")
WIDTHS = {"location": 3, "rotation_quaternion": 4, "rotation_euler": 3, "rotation_axis_angle": 4, "scale": 3}


def rest_value(prop: str, index: int) -> float:
    """A channel's value at rest: 1 for scales, the quaternion's w and the axis-angle's y axis, else 0."""
    if (
        prop == "scale"
        or (prop == "rotation_quaternion" and index == 0)
        or (prop == "rotation_axis_angle" and index == 2)
    ):
        return 1.0
    return 0.0


@dataclass
class ChannelLayout:
    """How an armature's bones are animated: each bone's rotation mode, and the value each
    property holds where no curve drives it (``held``: (bone, property) → (width,); default rest)."""

    modes: dict[str, str]
    held: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)

    def mode(self, bone: str) -> str:
        return self.modes.get(bone, "QUATERNION")

    def value(self, bone: str, prop: str) -> np.ndarray:
        """(width,) the value a property holds where no curve drives it."""
        held = self.held.get((bone, prop))
        if held is not None:
            return np.asarray(held, dtype=float)
        return np.array([rest_value(prop, i) for i in range(WIDTHS[prop])])


def rotation_property(mode: str) -> tuple[str, int]:
    """The property (and its width) that holds a bone's rotation in ``mode``."""
    if mode == "QUATERNION":
        return "rotation_quaternion", 4
    if mode == "AXIS_ANGLE":
        return "rotation_axis_angle", 4
    return "rotation_euler", 3


def rotation_to_quaternion(mode: str, values: np.ndarray) -> np.ndarray:
    """Quaternions (..., 4) from a rotation mode's property values (..., 3 or 4)."""
    if mode == "QUATERNION":
        return quat.normalize(values)
    if mode == "AXIS_ANGLE":
        return quat.from_axis_angle(values[..., 1:], values[..., 0])
    return quat.from_euler(values[..., ["XYZ".index(a) for a in mode]], mode)


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


def bone_property(values: dict, layout: ChannelLayout, bone: str, prop: str, n: int) -> np.ndarray:
    """(n, width) values of one bone property: its channels where present, else the value it holds."""
    width = WIDTHS[prop]
    out = np.tile(layout.value(bone, prop), (n, 1))
    for i in range(width):
        v = values.get((bone, prop, i))
        if v is not None:
            out[:, i] = v
    return out


def motion_from_values(skeleton: Skeleton, layout: ChannelLayout, values: dict, n_frames: int, fps: float) -> Motion:
    """The Motion (T = ``n_frames``) that channel ``values`` play on ``skeleton`` (the bones' own rest).

    The bones of one rotation mode are converted together (one call for all, not one a bone); Euler
    angles are laid out a row per axis and bone (each angle's frames a contiguous run for the
    trigonometry; the same numbers as from (T, bones, 3) arrays)."""
    names = skeleton.names
    by_mode = _bones_by_mode(names, layout)
    translations = np.broadcast_to(skeleton.rest_translations, (n_frames, skeleton.n_joints, 3)).copy()
    # every bone has a rotation mode: each rotation is written below (no identity fill first)
    motion = Motion(skeleton, translations, np.empty((n_frames, skeleton.n_joints, 4)), fps)
    # a bone whose location is neither keyed nor held off zero stays at its rest offset (most bones)
    moved = [j for j, name in enumerate(names)
             if any((name, "location", i) in values for i in range(3)) or np.any(layout.value(name, "location"))]  # fmt: skip
    if moved:
        loc = np.stack([bone_property(values, layout, names[j], "location", n_frames) for j in moved], axis=1)
        motion.translations[:, moved] = skeleton.rest_translations[moved] + quat.rotate(
            skeleton.rest_rotations[moved], loc
        )
    for mode, joints in by_mode.items():
        prop, width = rotation_property(mode)
        if prop != "rotation_euler":
            rotation = np.stack([bone_property(values, layout, names[j], prop, n_frames) for j in joints], axis=1)
            motion.rotations[:, joints] = rotation_to_quaternion(mode, rotation)
            continue
        rows = np.empty((width, len(joints), n_frames))  # (axis in the mode's order, bone, frame)
        for b, j in enumerate(joints):
            held = layout.value(names[j], prop)
            for row, i in enumerate("XYZ".index(a) for a in mode):
                v = values.get((names[j], prop, i))
                rows[row, b] = held[i] if v is None else v
        q = quat.from_euler(rows.transpose(1, 2, 0), mode)  # (bones, T, 4)
        motion.rotations[:, joints] = q.transpose(1, 0, 2)
    return motion


def _bones_by_mode(names: list[str], layout: ChannelLayout) -> dict[str, list[int]]:
    """Rotation mode → the indices of the bones in it."""
    by_mode: dict[str, list[int]] = {}
    for j, name in enumerate(names):
        by_mode.setdefault(layout.mode(name), []).append(j)
    return by_mode


def pose_values(motion: Motion, layout: ChannelLayout) -> dict[Channel, np.ndarray]:
    """Channel values (T,) that play ``motion`` (on the bones' own rest), in each bone's rotation mode;
    locations only on joints with position channels."""
    sk = motion.skeleton
    loc = quat.rotate(quat.inverse(sk.rest_rotations), motion.translations - sk.rest_translations)
    values = {}
    for j, name in enumerate(sk.names):
        mode = layout.mode(name)
        if sk.has_position_channels[j]:
            for i in range(3):
                values[(name, "location", i)] = loc[:, j, i]
        prop, width = rotation_property(mode)
        rot = quaternion_to_rotation(mode, motion.rotations[:, j])
        for i in range(width):
            values[(name, prop, i)] = rot[:, i]
    return values


def _nearest_turn(angles: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Angles shifted by whole turns to lie closest to ``reference``."""
    return angles + 2 * np.pi * np.round((reference - angles) / (2 * np.pi))


def euler_near(q: np.ndarray, mode: str, reference: np.ndarray) -> np.ndarray:
    """Euler values (..., 3) in x, y, z slots for quaternions q (..., 4), on the branch nearest ``reference``.

    A rotation has two Euler solutions, (a, b, c) and (a+π, π−b, c+π) in the mode's axis
    order, each defined up to whole turns; keyed curves may sit on either. Worked an angle at a time
    (contiguous arrays; the same numbers as on (..., 3) ones).
    """
    slots = ["XYZ".index(a) for a in mode]
    ref = [reference[..., s] for s in slots]
    first = quat.euler_parts(q, mode)
    second = (first[0] + np.pi, np.pi - first[1], first[2] + np.pi)
    candidates = [[_nearest_turn(c, r) for c, r in zip(angles, ref)] for angles in (first, second)]
    cost = [_squared_distance(c, ref) for c in candidates]
    nearer = cost[0] <= cost[1]
    out = np.empty((*nearer.shape, 3))
    for s, one, two in zip(slots, *candidates):
        out[..., s] = np.where(nearer, one, two)
    return out


def _squared_distance(a: list, b: list) -> np.ndarray:
    """Σ (a − b)² over three angles given apart (lists of three arrays), as ``np.sum((a - b) ** 2, axis=-1)``
    of them stacked (the same sum in the same order)."""
    x, y, z = (u - v for u, v in zip(a, b))
    return x * x + y * y + z * z


def axis_angle_near(q: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Axis-angle values (..., 4: angle, x, y, z) for q (..., 4), on the representation nearest ``reference``."""
    q = np.where((quat.dot(q, rotation_to_quaternion("AXIS_ANGLE", reference)) < 0)[..., None], -q, q)
    v = q[..., 1:]
    norm = np.linalg.norm(v, axis=-1)
    angle = 2 * np.arctan2(norm, q[..., 0])
    axis = np.where(norm[..., None] > 1e-12, v / np.where(norm > 1e-12, norm, 1.0)[..., None], reference[..., 1:])
    first = np.concatenate((angle[..., None], axis), axis=-1)
    second = -first
    candidates = []
    for c in (first, second):
        c = c.copy()
        c[..., 0] = _nearest_turn(c[..., 0], reference[..., 0])
        candidates.append(c)
    cost = [np.sum((c - reference) ** 2, axis=-1) for c in candidates]
    return np.where((cost[0] <= cost[1])[..., None], candidates[0], candidates[1])


def rotation_values_near(q: np.ndarray, mode: str, reference: np.ndarray) -> np.ndarray:
    """A rotation mode's values (..., width) for q (..., 4) on the representation nearest ``reference`` (..., width)."""
    if mode == "QUATERNION":
        return np.where((quat.dot(q, reference) < 0)[..., None], -q, q)
    if mode == "AXIS_ANGLE":
        return axis_angle_near(q, reference)
    return euler_near(q, mode, reference)


def rebuilt_channel_values(rebuilt: Motion, layout: ChannelLayout, keyed: dict, keys: np.ndarray) -> dict:
    """Dense values (T,) per keyed channel that replay ``rebuilt`` (the slerp/lerp rebuild).

    keyed: channel → values at the keys (K,). Channels interpolated linearly by the rebuild
    (locations, scales, rotations in an inactive mode) follow the straight line between keys;
    the active rotation channels follow the slerp, expressed on the branch the keys are on.
    """
    frames = np.arange(rebuilt.n_frames)
    reference = {k: np.interp(frames, keys, v) for k, v in keyed.items()}
    targets = dict(reference)
    names = rebuilt.skeleton.names
    for mode, joints in _bones_by_mode(names, layout).items():  # the bones of one mode together
        prop, width = rotation_property(mode)
        joints = [j for j in joints if any((names[j], prop, i) in keyed for i in range(width))]
        if not joints:
            continue
        ref = np.stack([bone_property(reference, layout, names[j], prop, rebuilt.n_frames) for j in joints], axis=1)
        every = joints == list(range(len(names)))  # every bone keyed in this mode: no copy of the rotations
        values = rotation_values_near(rebuilt.rotations if every else rebuilt.rotations[:, joints], mode, ref)
        for b, j in enumerate(joints):
            for i in range(width):
                if (names[j], prop, i) in keyed:
                    targets[(names[j], prop, i)] = values[:, b, i]
    return targets


def values_near(motion: Motion, layout: ChannelLayout, reference: dict, index: int) -> dict:
    """Channel values playing ``motion`` with each bone's rotation channels moved, as a whole, to the
    representation nearest ``reference`` (channel → value) at frame ``index``: quaternion sign, whole
    turns of Euler and axis-angle angles. Blender's NLA mixes channels one by one, so two strips must
    agree on the representation where they overlap."""
    values = pose_values(motion, layout)
    for name in motion.skeleton.names:
        prop, width = rotation_property(layout.mode(name))
        keys = [(name, prop, i) for i in range(width)]
        if not all(k in reference for k in keys):
            continue
        if prop == "rotation_quaternion":
            q = np.stack([values[k] for k in keys], axis=-1)
            if np.dot(q[index], [reference[k] for k in keys]) < 0:
                for k in keys:
                    values[k] = -values[k]
            continue
        angles = keys if prop == "rotation_euler" else keys[:1]
        for k in angles:
            values[k] = values[k] + 2 * np.pi * np.round((reference[k] - values[k][index]) / (2 * np.pi))
    return values


def continuous_quaternions(values: dict, keys: np.ndarray) -> dict:
    """Values at the keys, with each bone's quaternion keys flipped into one hemisphere."""
    out = {k: v[keys] for k, v in values.items()}
    for bone in {bone for bone, prop, _ in values if prop == "rotation_quaternion"}:
        parts = [out.get((bone, "rotation_quaternion", i)) for i in range(4)]
        if any(p is None for p in parts):
            continue
        q = quat.make_continuous(np.stack(parts, axis=-1))
        for i in range(4):
            out[(bone, "rotation_quaternion", i)] = q[:, i]
    return out
