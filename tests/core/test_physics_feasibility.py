"""The landing bounds of core.physics.feasibility are true lower bounds: checked against brute force.

Stopping force: random force profiles (piecewise constant over the fall) that stop a fall within
the distance never keep their largest force under the bound, and a constant force attains it.
Moment arm: random knee positions within the slack, force points in the box and directions in the
friction cone never come closer than the bound, and the worst case comes within sampling of it.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.physics.feasibility import box_distance, moment_arm_bound, stopping_force, torque_bound

G = 9.81


def simulate_stop(forces: np.ndarray, mass: float, speed: float, dt: float) -> float | None:
    """Distance (m) a body falling at ``speed`` covers until it stops under the vertical ground
    forces (piecewise constant, dt s each), None if it has not stopped when they end."""
    v, z = speed, 0.0
    for f in forces:
        a = G - f / mass  # downwards positive
        if v + a * dt <= 0:  # stops within this piece
            t = v / -a
            return z + v * t + 0.5 * a * t * t
        z += v * dt + 0.5 * a * dt * dt
        v += a * dt
    return None


def test_no_force_profile_stops_a_fall_within_the_distance_under_the_bound():
    rng = np.random.default_rng(1)
    mass, speed, distance = 90.0, 1.2, 0.15
    bound = stopping_force(speed, distance, mass)
    constant = simulate_stop(np.full(4000, bound), mass, speed, 1e-4)
    assert constant == pytest.approx(distance, rel=1e-3)  # a constant force attains the bound
    stops = 0
    for _ in range(3000):
        forces = rng.uniform(0, 3 * bound, rng.integers(2, 12)).repeat(50)
        z = simulate_stop(forces, mass, speed, 2e-3)
        if z is not None and z <= distance:
            stops += 1
            assert forces.max() >= bound * (1 - 1e-9)
    assert stops > 100  # the check saw many profiles that stop in time
    # the bound is the smallest: just under the distance needs more force, just over less
    assert stopping_force(speed, 0.9 * distance, mass) > bound > stopping_force(speed, 1.1 * distance, mass)


def test_the_moment_arm_bound_is_never_beaten_by_sampled_poses_and_forces():
    rng = np.random.default_rng(2)
    box = np.array([[0.0, -0.05], [0.25, -0.05], [0.25, 0.05], [0.0, 0.05]])  # foot box on the floor, m
    friction, slack = 0.6, 0.02
    alpha = np.arctan(friction)
    for knee in ([0.55, 0.0, 0.45], [-0.6, 0.1, 0.3], [0.1, 0.0, 0.5], [0.9, 0.3, 0.2]):
        knee = np.array(knee)
        h = box_distance(knee[None, :2], box[None])[0]
        bound = moment_arm_bound(h, knee[2], friction, slack)
        n = 40000
        k = knee + slack * rng.uniform(-1, 1, (n, 3)) / np.sqrt(3)  # within the slack ball
        p = np.column_stack((rng.uniform(0, 0.25, n), rng.uniform(-0.05, 0.05, n), np.zeros(n)))
        tilt, turn = alpha * np.sqrt(rng.uniform(0, 1, n)), rng.uniform(0, 2 * np.pi, n)
        u = np.column_stack((np.sin(tilt) * np.cos(turn), np.sin(tilt) * np.sin(turn), np.cos(tilt)))
        arm = np.linalg.norm(np.cross(k - p, u), axis=1)
        assert arm.min() >= bound - 1e-12
        if bound > 0:  # tight: the nearest corner, the cone's edge leaning away, the knee moved in
            near = np.array([0.25 if knee[0] > 0.25 else 0.0, np.clip(knee[1], -0.05, 0.05), 0.0])
            flat = (knee - near)[:2] / np.linalg.norm((knee - near)[:2])
            moved = knee - slack * np.append(flat, -1.0) / np.sqrt(2)  # inwards and up, within the slack
            lean = np.append(np.sin(alpha) * flat, np.cos(alpha))
            worst = np.linalg.norm(np.cross(moved - near, lean))
            assert worst >= bound - 1e-12 and worst < bound + 2 * slack
    assert moment_arm_bound(0.05, 0.45, 0.6) == 0.0  # a knee nearly over the foot: the force can pass through it


def test_torque_bound_and_bad_input():
    assert torque_bound(1000.0, 0.1, below=20.0) == pytest.approx(80.0)
    assert torque_bound(1000.0, 0.0) == 0.0
    with pytest.raises(ValueError, match="stopping distance"):
        stopping_force(1.0, 0.0, 80.0)


def test_the_landing_bound_holds_for_the_motion_itself():
    """With no slack the motion is one of the motions the bound covers: its own largest ground force
    over the stop is at least the bound's, and its knee, in double support, is not named infeasible."""
    from core import synthetic
    from core.contacts import detect_contacts
    from core.physics.body import body_model
    from core.physics.feasibility import landing_bound
    from core.physics.metrics import analyse

    jump = synthetic.jump(240, 120.0)
    contacts = detect_contacts(jump)
    body = body_model(jump.skeleton, 70.0, up=contacts.up)
    an = analyse(jump, contacts, body)
    vz = np.einsum("j,tjc->tc", body.masses, an.kin.vel) @ body.up / body.masses.sum()
    air = np.flatnonzero(~an.support.any)
    landing = int(air.max()) + 1  # the first frame on the ground after the flight
    assert vz[landing] < -0.5 and an.support.any[landing]
    knee = jump.skeleton.index("RightLeg")
    r = landing_bound(an, body, landing, knee, slack=0.0)
    low = landing + int(np.argmax(vz[landing:] >= 0))
    vertical = an.dynamics.ground_forces.sum(axis=1) @ body.up  # N, both feet
    assert r["speed"] == pytest.approx(-vz[landing])
    assert vertical[landing : low + 1].max() >= r["force"] * (1 - 0.02)  # sampled derivatives: 2 %
    assert not r["proven"] and "other foot" in r["reason"]
