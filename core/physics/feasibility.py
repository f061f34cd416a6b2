"""Lower bounds on what a landing demands of a joint, whatever pose near the motion it takes.

Issue 16 asks that a frame left over a torque limit be named with the reason no physically valid
pose near the motion exists. Two bounds, both true lower bounds (no pose, force profile or force
direction within the stated freedom does better):

- :func:`stopping_force`: a centre of mass falling at v m/s that must stop within s m. By work and
  energy, ∫(F − m·g) dz = ½·m·v² over the stopping distance z ≤ s, so the vertical ground force
  averaged over that distance is at least m·(g + v²/(2·s)), and so is its largest value: some frame
  of the stop needs at least that force (not every frame: the bound is about the stop).
- :func:`moment_arm_bound`: the least distance from a joint (anywhere within ``slack`` of where it
  is) to the ground force's line of action, the force acting at a point of the support box on the
  floor with a direction inside the friction cone (half angle atan μ about up). For a joint at
  horizontal distance h from the box and height H above the floor the distance to a line through a
  box point with direction at angle φ ≤ α = atan μ from up is at least h·cos α − H·sin α (equality
  at the box's nearest point, the cone's edge leaning away): the bound is
  max(0, (h − slack)·cos α − (H + slack)·sin α). Zero means the force can point through the joint.

The joint's torque from the ground force alone is then at least force × arm
(:func:`torque_bound`); what the segments below it add (their weight and inertia) is not bounded
here, so a frame is named as infeasible only when the ground force's share alone exceeds the limit
by more than ``below`` (N·m, the caller's bound on that remainder).
"""

from __future__ import annotations

import numpy as np

from .body import G


def stopping_force(speed: np.ndarray, distance: np.ndarray, mass: float, g: float = G) -> np.ndarray:
    """Least largest vertical ground force (N) that stops a fall of ``speed`` (m/s, downwards ≥ 0)
    within ``distance`` (m, > 0) for a body of ``mass`` kg: m·(g + v²/(2·s)); arrays broadcast."""
    speed = np.maximum(np.asarray(speed, dtype=float), 0.0)
    distance = np.asarray(distance, dtype=float)
    if np.any(distance <= 0):
        raise ValueError("the stopping distance must be positive")
    return mass * (g + speed**2 / (2.0 * distance))


def moment_arm_bound(
    horizontal: np.ndarray, height: np.ndarray, friction: float, slack: float | np.ndarray = 0.0
) -> np.ndarray:
    """Least distance (m) from a joint to the ground force's line of action (module notes).

    horizontal: (N,) the joint's horizontal distance from the support box (0 over it), m;
    height: (N,) its height above the floor, m; friction: μ (the force within atan μ of up);
    slack: how far (m) the joint may move from where it is."""
    alpha = np.arctan(friction)
    h = np.maximum(np.asarray(horizontal, dtype=float) - slack, 0.0)
    return np.maximum(h * np.cos(alpha) - (np.asarray(height, dtype=float) + slack) * np.sin(alpha), 0.0)


def torque_bound(force: np.ndarray, arm: np.ndarray, below: float | np.ndarray = 0.0) -> np.ndarray:
    """Least torque (N·m) at a joint whose segments below carry a ground force of at least ``force`` (N)
    at a line of action at least ``arm`` (m) away, less ``below`` (N·m: what those segments' own weight
    and inertia can take off); never negative."""
    return np.maximum(np.asarray(force, dtype=float) * np.asarray(arm, dtype=float) - below, 0.0)


def box_distance(point: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Horizontal distance (N,) of points (N, 2) from convex boxes (N, 4, 2) given by their corners
    in order (0 inside), in the ground plane's coordinates."""
    point = np.asarray(point, dtype=float)
    corners = np.asarray(corners, dtype=float)
    a, b = corners, np.roll(corners, -1, axis=1)
    edge = b - a
    t = np.clip(np.sum((point[:, None] - a) * edge, axis=-1) / np.maximum(np.sum(edge * edge, axis=-1), 1e-300), 0, 1)
    nearest = np.linalg.norm(point[:, None] - (a + t[..., None] * edge), axis=-1).min(axis=1)
    cross = edge[..., 0] * (point[:, None, 1] - a[..., 1]) - edge[..., 1] * (point[:, None, 0] - a[..., 0])
    inside = np.all(cross >= 0, axis=1) | np.all(cross <= 0, axis=1)
    return np.where(inside, 0.0, nearest)


def landing_bound(an, body, frame: int, joint: int, slack: float, friction: float = 0.8) -> dict:
    """The bounds of this module at one frame over a torque limit in a landing, with their reason.

    an: the :class:`.metrics.Analysis` of the motion; joint: the joint over its limit (a knee or a
    hip: its leg's foot boxes are the ones below it); slack: how far (m) every joint and the CoM
    may move from where they are (the closeness the motion must keep; the issue's deviation bar is
    a mean, so a per-joint slack is the caller's assumption, stated in the reason).
    The fall is the CoM's downward speed v at ``frame`` and the distance s it still falls in the
    motion until it stops (lowest point), plus 2·slack (the frame's CoM may sit higher, the low
    point lower). A bound on the joint holds only while the feet below it carry the whole body
    (no other box in contact from ``frame`` to the low point); else the other foot may take it all.
    Returns ``frame``, ``joint``, ``speed`` (m/s), ``distance`` (m), ``force`` (N, the least largest
    ground force of the stop), ``arm`` (m), ``torque`` (N·m, the least at the frame of that force),
    ``limit`` (N·m), ``proven`` (torque > limit) and ``reason`` (one sentence)."""
    sk, unit, up = body.skeleton, body.unit, body.up
    sup = an.support
    height = an.com @ up  # m
    vel = np.einsum("j,tjc->tc", body.masses, an.kin.vel) @ up / body.masses.sum()  # the CoM's, m/s
    t = len(height)
    low = frame
    while low + 1 < t and vel[low + 1] < 0:
        low += 1
    speed = max(-vel[frame], 0.0)
    distance = max(height[frame] - height[low], 0.0) + 2.0 * slack
    force = float(stopping_force(speed, distance, float(body.masses.sum())))
    below = sk.subtree(int(joint))
    mine = np.array([bool(below[j]) for j in sup.joints])
    others = sup.flags[frame : low + 1][:, ~mine].any()
    name = sk.names[int(joint)]
    limit = float(body.torque_limits[int(joint)])
    on = sup.flags[frame] & mine
    if not on.any():
        return {"frame": frame, "joint": name, "speed": speed, "distance": distance, "force": force, "arm": 0.0,
                "torque": 0.0, "limit": limit, "proven": False,
                "reason": f"searched, not proven: {name}'s foot is not on the ground"}  # fmt: skip
    point = (an.kin.joint_pos[frame, int(joint)] / unit) @ sup.basis.T
    h = min(box_distance(point[None], sup.boxes[frame, i][None])[0] for i in np.flatnonzero(on)) * unit
    rise = float(an.kin.joint_pos[frame, int(joint)] @ up - sup.ground * unit)
    arm = float(moment_arm_bound(h, rise, friction, slack))
    torque = 0.0 if others else float(torque_bound(force, arm))
    proven = torque > limit
    fall = f"the fall of {speed:.2f} m/s must stop within {100 * distance:.1f} cm, which needs ≥ {force:.0f} N"
    if others:
        reason = f"searched, not proven: {fall}, but the other foot is on the ground and may carry it"
    elif proven:
        reason = f"landing: {fall}; {name}'s torque is at least {torque:.0f} N·m > limit {limit:.0f}"
    else:
        reason = (
            f"searched, not proven: {fall}, but the force's line may pass within {100 * arm:.1f} cm of {name} "
            f"(friction {friction}, {100 * slack:.1f} cm slack): at least {torque:.0f} N·m, limit {limit:.0f}"
        )
    return {"frame": frame, "joint": name, "speed": speed, "distance": distance, "force": force, "arm": arm,
            "torque": torque, "limit": limit, "proven": proven, "reason": reason}  # fmt: skip
