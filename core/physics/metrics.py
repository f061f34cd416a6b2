"""Physical plausibility metrics of a clip: balance, torque limits, flight, jerk, deviation from a source."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..contacts import Contacts, contact_spans
from ..motion import Motion
from .body import BodyModel, G
from .dynamics import (
    FREE_FALL,
    InverseDynamics,
    Kinematics,
    center_of_mass,
    inverse_dynamics,
    momentum,
    segment_kinematics,
    support_from,
    torque_ratios,
    zmp,
)
from .support import Support, to_ground


class Analysis(NamedTuple):
    """Everything measured on a clip: kinematics, support, ZMP (T, 3) scene units and its
    free-fall flag (T,), inverse dynamics (joint torques N·m, ground forces), CoM (T, 3) m,
    angular momentum about it (T, 3) kg·m²/s."""

    kin: Kinematics
    support: Support
    zmp: np.ndarray
    free_fall: np.ndarray
    dynamics: InverseDynamics
    com: np.ndarray
    angular_momentum: np.ndarray

    @property
    def torques(self) -> np.ndarray:
        return self.dynamics.torques


def analyse(
    motion: Motion,
    contacts: Contacts,
    body: BodyModel,
    smooth: float = 0.2,
    free_fall: float = FREE_FALL,
    ground: float | None = None,
    heel: float = 0.25,
    width: float = 0.5,
) -> Analysis:
    """:class:`Analysis` of ``motion`` with its contacts (feet and/or toes) and body model."""
    kin = segment_kinematics(motion, body, smooth)
    world = (kin.joint_pos / body.unit, kin.joint_rot)
    support = support_from(motion, contacts, ground, heel, width, world)
    p, flag = zmp(kin, body, support.ground, free_fall)
    dynamics = inverse_dynamics(kin, body, support, free_fall)
    return Analysis(kin, support, p, flag, dynamics, center_of_mass(kin, body), momentum(kin, body)[1])


def flight_phases(support_any: np.ndarray, min_frames: int = 3) -> np.ndarray:
    """(S, 2) [start, stop) frame ranges without any support, at least ``min_frames`` long."""
    spans = contact_spans(~np.asarray(support_any, dtype=bool))
    return spans[spans[:, 1] - spans[:, 0] >= min_frames]


def ballistic_fit(com: np.ndarray, fps: float, up: np.ndarray, g: float = G) -> np.ndarray:
    """Least-squares ballistic path (T, 3) through CoM samples (T, 3) in metres: c₀ + v₀t − ½gt²·up."""
    t = np.arange(len(com)) / fps
    lifted = com + 0.5 * g * (t**2)[:, None] * up
    design = np.stack((np.ones_like(t), t), axis=1)
    coef, *_ = np.linalg.lstsq(design, lifted, rcond=None)
    return design @ coef - 0.5 * g * (t**2)[:, None] * up


def ballistic_bridge(
    start: np.ndarray, end: np.ndarray, n: int, fps: float, up: np.ndarray, g: float = G
) -> np.ndarray:
    """Ballistic path (n, 3) from ``start`` (frame 0) to ``end`` (frame n − 1), metres."""
    t = np.arange(n) / fps
    duration = (n - 1) / fps
    v0 = (end - start + 0.5 * g * duration**2 * up) / max(duration, 1e-12)
    return start + t[:, None] * v0 - 0.5 * g * (t**2)[:, None] * up


def report(
    analysis: Analysis, body: BodyModel, motion: Motion, source: Motion | None = None, min_flight: int = 3
) -> dict:
    """Metrics of an :class:`Analysis` (plain floats, JSON-ready).

    zmp_inside_share: contact frames with a defined ZMP inside the support polygon;
    zmp_outside_mean_m: mean distance outside over those frames; torque_violations: joint-frames
    with |τ| above the limit, torque_violation_frames, torque_worst_ratio (and its joint);
    flight_error_m: RMS distance of the CoM from its best ballistic parabola over flight phases;
    flight_momentum_drift: RMS of L − mean(L) over flight frames / mean |L| scale (m·h²/s);
    jerk: mean |d³p/dt³| of joint positions, m/s³; deviation: mean joint position error
    against ``source`` divided by the stature.
    """
    a = analysis
    sup = a.support
    q2 = to_ground(a.zmp, sup.basis)
    inside, signed, _ = sup.query(q2)
    contact = sup.any & ~a.free_fall
    ratios = torque_ratios(a.torques, body)
    worst = np.unravel_index(np.argmax(ratios), ratios.shape) if ratios.size else (0, 0)
    phases = flight_phases(sup.any, min_flight)
    flight_err, drift = [], []
    for start, stop in phases:
        com = a.com[start:stop]
        flight_err.append(np.linalg.norm(com - ballistic_fit(com, motion.fps, body.up), axis=1))
        drift.append(a.angular_momentum[start:stop] - a.angular_momentum[start:stop].mean(axis=0))
    pos = a.kin.joint_pos
    jerk = np.linalg.norm(np.diff(pos, 3, axis=0), axis=-1) * motion.fps**3 if len(pos) > 3 else np.zeros(1)
    out = {
        "frames": int(motion.n_frames),
        "contact_frames": int(contact.sum()),
        "free_fall_contact_frames": int((sup.any & a.free_fall).sum()),
        "zmp_inside_share": float(inside[contact].mean()) if contact.any() else 1.0,
        "zmp_outside_mean_m": float(np.maximum(signed[contact], 0).mean() * body.unit) if contact.any() else 0.0,
        "torque_violations": int((ratios > 1.0).sum()),
        "torque_violation_frames": int((ratios > 1.0).any(axis=1).sum()),
        "torque_worst_ratio": float(ratios.max()) if ratios.size else 0.0,
        "torque_worst_joint": motion.skeleton.names[worst[1]],
        "flight_phases": int(len(phases)),
        "flight_frames": int(sum(stop - start for start, stop in phases)),
        "flight_error_m": float(np.sqrt(np.mean(np.concatenate(flight_err) ** 2))) if flight_err else 0.0,
        "flight_momentum_drift": (
            float(np.sqrt(np.mean(np.concatenate(drift) ** 2)) / (body.mass * body.height**2)) if drift else 0.0
        ),
        "jerk_m_s3": float(jerk.mean()),
    }
    if source is not None:
        err = np.linalg.norm(source.world_positions() - motion.world_positions(), axis=-1).mean()
        out["deviation"] = float(err * body.unit / body.height)
    return out
