"""A procedural humanoid and motions (walk, turn, jump) for demos and tests on any machine.

Y is up, units are metres, the character faces +Z. The motions are smooth analytic
curves, so every frame is known exactly and tests need no capture files.
"""

from __future__ import annotations

import numpy as np

from . import quaternion as quat
from .motion import Motion
from .skeleton import Skeleton

_BONES = [
    # name, parent, offset (m)
    ("Hips", None, (0.0, 0.95, 0.0)),
    ("Spine", "Hips", (0.0, 0.12, 0.0)),
    ("Chest", "Spine", (0.0, 0.15, 0.0)),
    ("Neck", "Chest", (0.0, 0.2, 0.0)),
    ("Head", "Neck", (0.0, 0.1, 0.0)),
    ("LeftShoulder", "Chest", (0.05, 0.17, 0.0)),
    ("LeftArm", "LeftShoulder", (0.13, 0.0, 0.0)),
    ("LeftForeArm", "LeftArm", (0.28, 0.0, 0.0)),
    ("LeftHand", "LeftForeArm", (0.25, 0.0, 0.0)),
    ("RightShoulder", "Chest", (-0.05, 0.17, 0.0)),
    ("RightArm", "RightShoulder", (-0.13, 0.0, 0.0)),
    ("RightForeArm", "RightArm", (-0.28, 0.0, 0.0)),
    ("RightHand", "RightForeArm", (-0.25, 0.0, 0.0)),
    ("LeftUpLeg", "Hips", (0.1, -0.05, 0.0)),
    ("LeftLeg", "LeftUpLeg", (0.0, -0.42, 0.0)),
    ("LeftFoot", "LeftLeg", (0.0, -0.42, 0.0)),
    ("LeftToeBase", "LeftFoot", (0.0, -0.06, 0.12)),
    ("RightUpLeg", "Hips", (-0.1, -0.05, 0.0)),
    ("RightLeg", "RightUpLeg", (0.0, -0.42, 0.0)),
    ("RightFoot", "RightLeg", (0.0, -0.42, 0.0)),
    ("RightToeBase", "RightFoot", (0.0, -0.06, 0.12)),
]
_END_SITES = [
    ("Head", (0.0, 0.18, 0.0)),
    ("LeftHand", (0.18, 0.0, 0.0)),
    ("RightHand", (-0.18, 0.0, 0.0)),
    ("LeftToeBase", (0.0, 0.0, 0.06)),
    ("RightToeBase", (0.0, 0.0, 0.06)),
]


def humanoid(scale: float = 1.0) -> Skeleton:
    """A 21-joint humanoid in T-pose, 1.7 m tall at scale 1, with BVH-style channels (root 6, others ZXY)."""
    names = [b[0] for b in _BONES]
    parents = [-1 if p is None else names.index(p) for _, p, _ in _BONES]
    offsets = np.array([o for _, _, o in _BONES]) * scale
    return Skeleton(
        names,
        parents,
        offsets,
        end_site_parents=[names.index(n) for n, _ in _END_SITES],
        end_site_offsets=np.array([o for _, o in _END_SITES]) * scale,
    )


def _set(motion: Motion, name: str, euler_xyz: np.ndarray) -> None:
    """Set a joint's rotation from Euler angles (T, 3) in radians, Blender order XYZ."""
    motion.rotations[:, motion.skeleton.index(name)] = quat.from_euler(euler_xyz, "XYZ")


def _angles(x=0.0, y=0.0, z=0.0, n: int = 1) -> np.ndarray:
    return np.stack(np.broadcast_arrays(np.asarray(x, float) * np.ones(n), y, z), axis=-1)


def walk(
    n_frames: int = 240, fps: float = 60.0, speed: float = 1.2, stride_hz: float = 0.9, skeleton: Skeleton | None = None
) -> Motion:
    """A straight walk along +Z: legs, knees, arms and spine swing with the stride."""
    skeleton = skeleton or humanoid()
    m = Motion.rest(skeleton, n_frames, fps)
    t = np.arange(n_frames) / fps
    phase = 2 * np.pi * stride_hz * t
    hips = m.skeleton.index("Hips")
    m.translations[:, hips, 2] = speed * t
    m.translations[:, hips, 1] += 0.03 * np.cos(2 * phase)
    _set(m, "Hips", _angles(0.05 * np.sin(2 * phase), 0.12 * np.sin(phase), 0.04 * np.sin(phase), n_frames))
    _set(m, "Spine", _angles(0.04, -0.08 * np.sin(phase), 0.0, n_frames))
    _set(m, "Chest", _angles(0.03, -0.06 * np.sin(phase), 0.0, n_frames))
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        swing = sign * np.sin(phase)
        _set(m, f"{side}UpLeg", _angles(-0.45 * swing, 0.0, 0.0, n_frames))
        knee = 0.6 * np.clip(np.sin(phase * 1.0 + (0 if sign > 0 else np.pi) - 0.8), 0, None) + 0.1
        _set(m, f"{side}Leg", _angles(knee, 0.0, 0.0, n_frames))
        _set(m, f"{side}Foot", _angles(-0.2 * swing, 0.0, 0.0, n_frames))
        _set(m, f"{side}Arm", _angles(0.4 * swing, 0.0, -sign * 1.25, n_frames))
        _set(m, f"{side}ForeArm", _angles(0.0, sign * (0.3 + 0.2 * np.sin(phase)), 0.0, n_frames))
    return m


def turn(motion: Motion, start: int, end: int, degrees: float = 90.0) -> Motion:
    """Turn the character about the vertical axis between two frames (heading and path together)."""
    m = motion.copy()
    hips = m.skeleton.index("Hips")
    frames = np.arange(m.n_frames)
    u = np.clip((frames - start) / max(end - start, 1), 0.0, 1.0)
    yaw = np.radians(degrees) * (3 * u**2 - 2 * u**3)
    q_yaw = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), yaw)
    step = np.diff(m.translations[:, hips], axis=0, prepend=m.translations[:1, hips])
    step[:, 1] = 0.0
    path = np.cumsum(quat.rotate(q_yaw, step), axis=0)
    m.translations[:, hips, 0] = m.translations[0, hips, 0] + path[:, 0]
    m.translations[:, hips, 2] = m.translations[0, hips, 2] + path[:, 2]
    m.rotations[:, hips] = quat.multiply(q_yaw, m.rotations[:, hips])
    return m


def with_sliding(motion: Motion, amplitude: float) -> Motion:
    """A copy of ``motion`` whose ``Hips`` drift sideways (0.7 Hz) and back and forth (1.1 Hz) by ``amplitude``
    (the motion's length unit), so planted feet slide: the one foot-skating case the IK test and benchmark share."""
    out = motion.copy()
    t = np.arange(motion.n_frames) / motion.fps
    hips = motion.skeleton.index("Hips")
    out.translations[:, hips, 0] += amplitude * np.sin(2 * np.pi * 0.7 * t)
    out.translations[:, hips, 2] += amplitude * np.sin(2 * np.pi * 1.1 * t + 1.0)
    return out


def jump(n_frames: int = 120, fps: float = 60.0, height: float = 0.4, skeleton: Skeleton | None = None) -> Motion:
    """A standing jump: crouch, take-off, ballistic flight, landing, recovery."""
    skeleton = skeleton or humanoid()
    m = Motion.rest(skeleton, n_frames, fps)
    u = np.linspace(0.0, 1.0, n_frames)
    crouch = np.exp(-(((u - 0.25) / 0.08) ** 2)) + np.exp(-(((u - 0.75) / 0.08) ** 2))
    flight = np.clip(np.sin(np.pi * (u - 0.35) / 0.3), 0.0, None) * ((u > 0.35) & (u < 0.65))
    hips = m.skeleton.index("Hips")
    m.translations[:, hips, 1] += height * flight - 0.25 * crouch
    _set(m, "Hips", _angles(0.3 * crouch, 0.0, 0.0, n_frames))
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        _set(m, f"{side}UpLeg", _angles(-0.9 * crouch - 0.2 * flight, 0.0, 0.0, n_frames))
        _set(m, f"{side}Leg", _angles(1.4 * crouch + 0.3 * flight, 0.0, 0.0, n_frames))
        _set(m, f"{side}Foot", _angles(-0.5 * crouch + 0.3 * flight, 0.0, 0.0, n_frames))
        _set(m, f"{side}Arm", _angles(-1.2 * flight + 0.6 * crouch, 0.0, -sign * (1.25 - 0.8 * flight), n_frames))
    return m


def demo_clip(fps: float = 60.0) -> Motion:
    """The default demo: 4 s walk with a 90° turn in the middle, then a jump (6.5 s, 390 frames at 60 fps)."""
    w = turn(walk(240, fps), 100, 160, 90.0)
    j = jump(180, fps)
    hips = w.skeleton.index("Hips")
    j.translations[:, hips, [0, 2]] += w.translations[-1, hips, [0, 2]]
    j.rotations[:, hips] = quat.multiply(
        quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), np.radians(90.0)), j.rotations[:, hips]
    )
    blend = 30
    a, b = w.frames(slice(-blend, None)), j.frames(slice(0, blend))
    u = (np.arange(blend) / (blend - 1))[:, None]
    joined_rot = quat.slerp(a.rotations, b.rotations, u)
    joined_trans = (1 - u[..., None]) * a.translations + u[..., None] * b.translations
    rot = np.concatenate((w.rotations[:-blend], joined_rot, j.rotations[blend:]))
    trans = np.concatenate((w.translations[:-blend], joined_trans, j.translations[blend:]))
    return Motion(w.skeleton, trans, quat.make_continuous(rot), fps)
