"""Root placement: the up axis, the pelvis, heading (yaw about up) and rigid horizontal transforms.

Conventions shared by every editing operation:

- **up**: a unit vector (3,), given (``"y"``, ``"-z"``, a vector) or found by
  :func:`core.limbs.detect_up` (CMU/Bandai BVH: +Y; Blender data: +Z).
- **the pelvis**: :func:`core.limbs.body_root`, the shallowest joint with two or more children
  (CMU ``Hips`` is the root; Bandai's ``Hips`` hangs under a ``joint_Root``). Its world position
  is "the root position" of the papers.
- **heading** ψ: the direction, about up, of the pelvis's lateral axis (the line from the right
  to the left hip joint in the rest pose, carried along by the pelvis orientation), projected on
  the horizontal plane; radians, counter-clockwise about up, 0 in the rest pose, unwrapped along
  time. Turning the whole body by θ about up adds exactly θ; bending forward or sideways does
  not change it, whatever the rest pose's own up axis is. Without recognisable legs the twist
  about up of W·W_rest⁻¹ is used (W the pelvis world orientation, W_rest the same at rest).
- a **whole-body rigid transform** G (rotation Q, translation d) is applied to the joints that
  carry the body (:func:`carriers`): the root joints (parents −1), t' = Q·t + d,
  q' = rest⁻¹·Q·rest·q; or, when the pelvis hangs under placement joints and has position
  channels itself (Bandai's ``Hips`` under a static ``joint_Root``), the pelvis and any sibling
  branches of its ancestors, re-expressed under the unchanged ancestors. Every body joint's world
  pose moves by G exactly; placement joints keep their channels, so pieces of such captures join
  without jumps in any channel.
- a **step** from frame i to frame j: the horizontal displacement of the pelvis expressed in the
  heading frame of i (rotated by −ψ_i), and the heading change ψ_j − ψ_i. Replaying a step from
  another start state continues a path with the same local velocity and turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import quaternion as quat
from ..contacts import parse_up
from ..limbs import body_root, detect_up, find_feet, limb_chain
from ..motion import Motion, rest_world_rotations
from ..skeleton import rest_positions


def resolve_up(motion: Motion, up: str | np.ndarray | None = None) -> np.ndarray:
    """Up axis (3,): ``up`` parsed, else detected from about 200 frames of the motion."""
    if up is not None:
        return parse_up(up)
    sample = motion.frames(slice(None, None, max(1, motion.n_frames // 200)))
    return detect_up(motion.skeleton, sample.world_positions())


def pelvis_joint(motion: Motion) -> int:
    """Index of the pelvis (:func:`core.limbs.body_root`)."""
    return body_root(motion.skeleton)


def chain_world(motion: Motion, joint: int) -> tuple[np.ndarray, np.ndarray]:
    """World position (T, 3) and orientation (T, 4) of one joint, by FK along its ancestors only."""
    sk = motion.skeleton
    chain = []
    while joint >= 0:
        chain.append(joint)
        joint = int(sk.parents[joint])
    pos = np.zeros((motion.n_frames, 3))
    rot = quat.identity((motion.n_frames,))
    for j in reversed(chain):
        pos = pos + quat.rotate(rot, motion.translations[:, j])
        rot = quat.multiply(rot, quat.multiply(sk.rest_rotations[j], motion.rotations[:, j]))
    return pos, rot


def yaw(angle: np.ndarray | float, up: np.ndarray) -> np.ndarray:
    """Rotations (..., 4) by ``angle`` (...) radians about ``up`` (right-handed)."""
    return quat.from_axis_angle(np.asarray(up, dtype=float), np.asarray(angle, dtype=float))


def wrap(angle: np.ndarray | float) -> np.ndarray:
    """Angles wrapped to [-π, π)."""
    return np.mod(np.asarray(angle, dtype=float) + np.pi, 2.0 * np.pi) - np.pi


def horizontal(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The part of vectors (..., 3) perpendicular to ``up``."""
    v = np.asarray(v, dtype=float)
    return v - (v @ up)[..., None] * up


def twist_angle(rotations: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Twist about ``up`` (radians, (-π, π]) of rotations (..., 4) (swing-twist decomposition)."""
    r = np.asarray(rotations, dtype=float)
    return wrap(2.0 * np.arctan2(r[..., 1:] @ up, r[..., 0]))


class State(NamedTuple):
    """Where the body is: pelvis world position (3,) and heading (radians)."""

    position: np.ndarray
    heading: float


class Step(NamedTuple):
    """Pelvis displacement (3,) in the heading frame of the first frame (horizontal, scene units)
    and heading change (radians) between two frames."""

    offset: np.ndarray
    turn: float


@dataclass(eq=False)
class Track:
    """The pelvis path of a motion: positions (T, 3) in world space, headings (T,) unwrapped
    radians, up (3,)."""

    positions: np.ndarray
    headings: np.ndarray
    up: np.ndarray

    def state(self, frame: int) -> State:
        return State(self.positions[frame].copy(), float(self.headings[frame]))

    def sub(self, start: int, stop: int | None = None) -> Track:
        """The path of frames [start, stop)."""
        return Track(self.positions[start:stop], self.headings[start:stop], self.up)

    def step(self, i: int, j: int) -> Step:
        """The step from frame i to frame j of this track."""
        return step_between(self.state(i), self.state(j), self.up)

    def steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Offsets (T-1, 3) and turns (T-1,) between consecutive frames (see :class:`Step`)."""
        d = horizontal(np.diff(self.positions, axis=0), self.up)
        return quat.rotate(yaw(-self.headings[:-1], self.up), d), wrap(np.diff(self.headings))


def lateral_axis(motion: Motion) -> np.ndarray | None:
    """(3,) the hip-to-hip direction in the pelvis's local frame (rest pose), None without two legs."""
    sk = motion.skeleton
    try:
        feet = find_feet(sk)
        upper = [limb_chain(sk, foot)[0] for foot, _ in feet.values()]
    except ValueError:
        return None
    rest = rest_positions(sk)
    lateral = rest[upper[0]] - rest[upper[1]]
    if np.linalg.norm(lateral) < 1e-9 * sk.size():
        return None
    pelvis_rest = rest_world_rotations(sk)[pelvis_joint(motion)]
    return quat.rotate(quat.conjugate(pelvis_rest), lateral)


def direction_angle(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Angle (...) of vectors (..., 3) about ``up`` in the horizontal plane (radians, counter-clockwise)."""
    e1 = np.eye(3)[int(np.argmin(np.abs(up)))]
    e1 = horizontal(e1, up) / np.linalg.norm(horizontal(e1, up))
    e2 = np.cross(up, e1)
    return np.arctan2(v @ e2, v @ e1)


def headings(motion: Motion, rotations: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(T,) unwrapped heading of pelvis world orientations (T, 4) (see the module notes)."""
    joint = pelvis_joint(motion)
    rest = rest_world_rotations(motion.skeleton)[joint]
    lateral = lateral_axis(motion)
    if lateral is None:
        return np.unwrap(twist_angle(quat.multiply(rotations, quat.conjugate(rest)), up))
    angle = direction_angle(quat.rotate(rotations, lateral), up)
    return np.unwrap(wrap(angle - direction_angle(quat.rotate(rest, lateral), up)))


def track(motion: Motion, up: str | np.ndarray | None = None) -> Track:
    """The pelvis path and heading of ``motion`` (see the module notes)."""
    up = resolve_up(motion, up)
    pos, rot = chain_world(motion, pelvis_joint(motion))
    return Track(pos, headings(motion, rot, up), up)


def step_between(a: State, b: State, up: np.ndarray) -> Step:
    """The step taking state a to state b."""
    d = horizontal(b.position - a.position, up)
    return Step(quat.rotate(yaw(-a.heading, up), d), float(wrap(b.heading - a.heading)))


def advance(state: State, step: Step, up: np.ndarray) -> State:
    """The state reached from ``state`` by ``step`` (horizontal position; height kept)."""
    return State(state.position + quat.rotate(yaw(state.heading, up), step.offset), state.heading + step.turn)


def retreat(state: State, step: Step, up: np.ndarray) -> State:
    """The state from which ``step`` reaches ``state`` (inverse of :func:`advance`)."""
    heading = state.heading - step.turn
    return State(state.position - quat.rotate(yaw(heading, up), step.offset), heading)


def mean_step(a: Step | None, b: Step | None) -> Step:
    """Average of two steps (either may be None); a zero step if both are None."""
    steps = [s for s in (a, b) if s is not None]
    if not steps:
        return Step(np.zeros(3), 0.0)
    return Step(np.mean([s.offset for s in steps], axis=0), float(np.mean([s.turn for s in steps])))


def carriers(motion: Motion) -> np.ndarray | None:
    """Joints below placement joints that carry the body: the pelvis and every other child of its
    ancestors, when the pelvis is not a root and all of them have position channels; else None
    (the root joints carry it)."""
    sk = motion.skeleton
    pelvis = pelvis_joint(motion)
    above = np.zeros(sk.n_joints, dtype=bool)
    j = int(sk.parents[pelvis])
    while j >= 0:
        above[j] = True
        j = int(sk.parents[j])
    if not above.any():
        return None
    joints = np.flatnonzero(~above & (sk.parents >= 0) & above[np.maximum(sk.parents, 0)])
    return joints if sk.has_position_channels[joints].all() else None


def apply_rigid(motion: Motion, rotation: np.ndarray, translation: np.ndarray) -> Motion:
    """The body moved by the world transform x → Q·x + d (exact for every body joint, see
    :func:`carriers`).

    rotation: Q, (4,) or per frame (T, 4); translation: d, (3,) or (T, 3), scene units.
    """
    out = motion.copy()
    sk = motion.skeleton
    joints = carriers(motion)
    for j in np.flatnonzero(sk.parents < 0) if joints is None else joints:
        parent = int(sk.parents[j])
        p_pos, p_rot = chain_world(motion, parent) if parent >= 0 else (np.zeros(3), quat.identity())
        frame = quat.multiply(p_rot, sk.rest_rotations[j])  # the joint's rest frame in world space
        world_pos = p_pos + quat.rotate(p_rot, motion.translations[:, j])
        world_rot = quat.multiply(frame, motion.rotations[:, j])
        new_pos = quat.rotate(rotation, world_pos) + translation
        out.translations[:, j] = quat.rotate(quat.conjugate(p_rot), new_pos - p_pos)
        out.rotations[:, j] = quat.multiply(quat.conjugate(frame), quat.multiply(rotation, world_rot))
    return out


def turn_about(
    motion: Motion, angle: np.ndarray | float, pivot: np.ndarray, up: np.ndarray, offset: np.ndarray | float = 0.0
) -> Motion:
    """Rotate by ``angle`` radians about the vertical line through ``pivot``, then move by ``offset``.

    angle: scalar or (T,); pivot, offset: (3,) or (T, 3), scene units.
    """
    q = yaw(angle, up)
    pivot = np.asarray(pivot, dtype=float)
    return apply_rigid(motion, q, pivot - quat.rotate(q, pivot) + offset)


def rotate(
    motion: Motion, degrees: float, pivot: np.ndarray | None = None, up: str | np.ndarray | None = None
) -> Motion:
    """The whole motion turned by ``degrees`` about the vertical axis through ``pivot``.

    Root orientation and root path turn together (every joint's world position p becomes
    R·(p − pivot) + pivot), relative poses are untouched. pivot: (3,) scene units, default the
    pelvis at frame 0; positive angles turn counter-clockwise seen from above (right-hand rule
    about up).
    """
    up = resolve_up(motion, up)
    if pivot is None:
        pivot = chain_world(motion.frames(slice(0, 1)), pelvis_joint(motion))[0][0]
    return turn_about(motion, np.radians(degrees), pivot, up)


def place(motion: Motion, frame: int, state: State, up: np.ndarray, path: Track | None = None) -> Motion:
    """A rigidly moved copy whose pelvis at ``frame`` has ``state``'s horizontal position and heading
    (its height is kept). path: :func:`track` of ``motion`` if already computed."""
    path = track(motion, up) if path is None else path
    here = path.positions[frame]
    offset = horizontal(state.position - here, up)
    return turn_about(motion, state.heading - path.headings[frame], here, up, offset)


def normalize_frames(motion: Motion, up: np.ndarray, path: Track | None = None) -> Motion:
    """Every frame moved so its pelvis is over the origin with heading 0 (a per-frame rigid transform).

    Pose comparisons and blends of two motions are done in this space; :func:`place_frames`
    undoes it.
    """
    path = track(motion, up) if path is None else path
    here = horizontal(path.positions, up)
    return turn_about(motion, -path.headings, here, up, -here)


def place_frames(motion: Motion, positions: np.ndarray, headings: np.ndarray, up: np.ndarray) -> Motion:
    """Frames of a :func:`normalize_frames` motion put back at pelvis ``positions`` (T, 3)
    (horizontal part used) and ``headings`` (T,)."""
    return turn_about(motion, headings, np.zeros(3), up, horizontal(positions, up))


def integrate(start: State, offsets: np.ndarray, turns: np.ndarray, up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions (K+1, 3) and headings (K+1,) reached from ``start`` by steps (offsets (K, 3), turns (K,)).

    The inverse of :meth:`Track.steps` for the horizontal path (heights are not integrated: the
    position's up component stays that of ``start``).
    """
    headings = start.heading + np.concatenate(([0.0], np.cumsum(turns)))
    moves = quat.rotate(yaw(headings[:-1], up), offsets)
    positions = start.position + np.concatenate((np.zeros((1, 3)), np.cumsum(moves, axis=0)))
    return positions, headings


def set_pelvis_world(motion: Motion, positions: np.ndarray, rotations: np.ndarray, copy: bool = True) -> Motion:
    """A copy (or, with ``copy=False``, the motion itself) whose pelvis has the given world positions
    (T, 3) and orientations (T, 4).

    When the pelvis is a root or has position channels, only its own channels change (its
    ancestors, e.g. Bandai's ``joint_Root``, are kept). Otherwise its root joint is moved
    rigidly, so the transform still reaches the file's channels.
    """
    sk = motion.skeleton
    joint = pelvis_joint(motion)
    out = motion.copy() if copy else motion
    parent = int(sk.parents[joint])
    if parent < 0 or sk.has_position_channels[joint]:
        p_pos, p_rot = chain_world(motion, parent) if parent >= 0 else (np.zeros(3), quat.identity())
        out.translations[:, joint] = quat.rotate(quat.conjugate(p_rot), positions - p_pos)
        frame = quat.multiply(p_rot, sk.rest_rotations[joint])
        out.rotations[:, joint] = quat.normalize(quat.multiply(quat.conjugate(frame), rotations))
        return out
    pos, rot = chain_world(motion, joint)
    correction = quat.normalize(quat.multiply(rotations, quat.conjugate(rot)))
    return apply_rigid(motion, correction, positions - quat.rotate(correction, pos))
