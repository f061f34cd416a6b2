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
