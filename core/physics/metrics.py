"""Physical plausibility metrics of a clip: balance, torque limits, flight, jerk, deviation from a source.

:func:`report` gives the figures (plain floats), :func:`combine_reports` merges the figures of
several stretches of one clip, :func:`series` the per-frame data behind them for plots and
overlays (:class:`PhysicsSeries`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts, contact_spans
from ..motion import Motion
from .body import BodyModel, G
from .derivatives import window_half
from .dynamics import (
    FREE_FALL,
    InverseDynamics,
    Kinematics,
    center_of_mass,
    ground_wrench,
    inverse_dynamics,
    momentum,
    phase_momentum,
    segment_kinematics,
    support_from,
    torque_ratios,
    zmp,
)
from .support import Support, convex_hull, from_ground, to_ground


class Analysis(NamedTuple):
    """Everything measured on a clip: kinematics, support, ZMP (T, 3) scene units and its
    free-fall flag (T,), inverse dynamics (joint torques N·m, ground forces), CoM (T, 3) m,
    angular momentum about it (T, 3) kg·m²/s (None when not asked for: :func:`analyse`), and the frames of the
    flights of the motion this one was made from (T,) bool, None when it is its own (:func:`flights`)."""

    kin: Kinematics
    support: Support
    zmp: np.ndarray
    free_fall: np.ndarray
    dynamics: InverseDynamics
    com: np.ndarray
    angular_momentum: np.ndarray | None
    flown: np.ndarray | None = None

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
    support: Support | None = None,
    clips: int = 1,
    momentum_about_com: bool = True,
    split: np.ndarray | None = None,
    least: bool = True,
    world: tuple[np.ndarray, np.ndarray] | None = None,
    turned: tuple | None = None,
    flown: np.ndarray | None = None,
) -> Analysis:
    """:class:`Analysis` of ``motion`` with its contacts (feet and/or toes) and body model.

    support: the polygons, when known (a motion whose planted feet did not move); else from the
    contacts. clips: the motion is that many equal clips one after another (a batch of variants
    of one clip, ``support`` given for all of them), each differentiated on its own.
    momentum_about_com: False leaves the angular momentum out (None; the balance plan's
    evaluations only need the ZMP and the torques). split: the double-support ground-force split
    to hold instead of solving for it (:func:`.dynamics.inverse_dynamics`; finite differences). world: the
    motion's forward kinematics (positions (T, J, 3) scene units, orientations (T, J, 4)) when already known;
    turned: the joints whose world orientations are a known clip's (:func:`.dynamics.segment_kinematics`); flown
    (T,) bool: the frames of the flights of the motion this one was made from (the solve's input), one clip's.
    """
    kin = segment_kinematics(motion, body, smooth, world=world, clips=clips, turned=turned)
    if support is None:
        world = (kin.joint_pos / body.unit, kin.joint_rot)
        support = support_from(motion, contacts, ground, heel, width, world)
    wrench = ground_wrench(kin, body)
    p, flag = zmp(kin, body, support.ground, free_fall, wrench)
    dynamics = inverse_dynamics(kin, body, support, free_fall, least, split, wrench)
    angular = momentum(kin, body)[1] if momentum_about_com else None
    if flown is not None and len(flown) * clips != motion.n_frames:
        raise ValueError(f"flown has {len(flown)} frames for clips of {motion.n_frames // clips}")
    flown = None if flown is None else np.tile(np.asarray(flown, dtype=bool), clips)
    return Analysis(kin, support, p, flag, dynamics, center_of_mass(kin, body), angular, flown)


CHANGED = 1e-9  # scene units (translations) and quaternion components: frames differing by less are unchanged


def changed_frames(motion: Motion, previous: Motion, tolerance: float = CHANGED) -> np.ndarray:
    """(T,) bool: frames where ``motion`` and ``previous`` (same skeleton and length) differ by more than ``tolerance``."""
    moved = np.abs(motion.translations - previous.translations).max(axis=(1, 2)) > tolerance
    return moved | (np.abs(motion.rotations - previous.rotations).max(axis=(1, 2)) > tolerance)


def _spliced(old: tuple, new: tuple, keep: slice, offset: int, t: int) -> tuple:
    """A copy of the NamedTuple ``old`` with frames ``keep`` of every per-frame array (axis 0 of length
    ``t``; nested NamedTuples too) taken from ``new``, whose frame 0 is frame ``offset`` of ``old``."""
    values = {}
    for name, value in zip(old._fields, old):
        fresh = getattr(new, name)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            values[name] = _spliced(value, fresh, keep, offset, t)
        elif isinstance(value, np.ndarray) and value.ndim and len(value) == t and name != "inertia_local":
            out = value.copy()
            out[keep] = fresh[keep.start - offset : keep.stop - offset]
            values[name] = out
    return old._replace(**values)


def analysis_frames(analysis: Analysis, part: slice) -> Analysis:
    """The measures of frames ``part`` of ``analysis``: every per-frame array cut (nested NamedTuples too), the support
    polygons with them. Measured with context either side (two derivative half-windows), a piece reads as in the
    whole clip (:func:`analyse_changed`'s reach), not as a clip of its own, whose edges are differentiated one-sided."""
    t = len(analysis.zmp)

    def cut(value):
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return value._replace(**{name: cut(v) for name, v in zip(value._fields, value) if name != "inertia_local"})
        return value[part] if isinstance(value, np.ndarray) and value.ndim and len(value) == t else value

    return cut(analysis)._replace(support=analysis.support.frames(part))


def _spliced_support(old: Support, new: Support, keep: slice, offset: int) -> Support:
    """``old`` with frames ``keep`` from ``new`` (frame 0 = frame ``offset`` of ``old``); no hull is recomputed."""
    out = object.__new__(Support)
    part = slice(keep.start - offset, keep.stop - offset)
    for name in ("boxes", "flags", "points", "active", "end", "valid", "steady"):
        value = getattr(old, name).copy()
        value[keep] = getattr(new, name)[part]
        setattr(out, name, value)
    out.joints, out.basis, out.up, out.ground = old.joints, old.basis, old.up, old.ground
    out._legs = {}
    for key, lines in old._legs.items():
        if key in new._legs:
            out._legs[key] = []
            for leg_old, leg_new in zip(lines, new._legs[key]):
                leg = tuple(a.copy() for a in leg_old)
                for a, b in zip(leg, leg_new):
                    a[keep] = b[part]
                out._legs[key].append(leg)
    return out


def options_for(measure: dict, part: slice) -> dict:
    """:func:`analyse`'s options ``measure`` for the frames ``part`` of the clip they were made for: its per-frame
    option (``flown``, the input's flight frames) cut to them."""
    return measure if measure.get("flown") is None else dict(measure, flown=measure["flown"][part])


def analyse_changed(
    motion: Motion,
    contacts: Contacts,
    body: BodyModel,
    previous: Analysis,
    changed: np.ndarray,
    smooth: float = 0.2,
    ground: float | None = None,
    **measure,
) -> Analysis:
    """:func:`analyse` of ``motion`` where it differs from the motion ``previous`` analyses only on the
    frames ``changed`` (T,) bool (:func:`changed_frames`), same options (``ground`` given): the
    changed span [lo, hi) is analysed with two derivative half-windows h of unchanged frames either
    side (what the derivatives of its neighbours read), and frames [lo − h, hi + h) of that analysis
    replace those of ``previous`` (from the clip's first frame when lo ≤ 2h, to its last when hi ≥ T − 2h: the first
    and last h frames are differentiated on the clip's first and last full window, which the change then reaches;
    kept from frame lo − h, a change at 21–68 of the jumps left frames 0–8 with their old velocities, 0.09 m/s off;
    every other frame's measures are the same: kinematics, support
    polygons, ZMP and the ground-force split are per frame, the derivatives reach h frames). Equal to
    the whole-clip analysis up to the interior-point split's tolerance (tests). A span covering most of the
    clip is cut into the runs of changed frames more than four half-windows apart (:func:`changed_runs`), each
    analysed and spliced so: planting a planted motion again moves a few frames all over the clip (45 frames
    between 520 and 1836 of the 1,952 of CMU 01_01 from frame 800, the torque repair's replanting after a kept
    window), which a whole-clip analysis took 0.19 s of CPU to measure again, ten times in a solve. Falls back to
    :func:`analyse` when no ``ground`` is given or the runs' stretches cover most of the clip."""
    t = motion.n_frames
    idx = np.flatnonzero(changed)
    kw = dict(measure, smooth=smooth, ground=ground)
    if kw.get("flown") is None and previous.flown is not None:  # the same frames: the previous analysis' flights
        kw["flown"] = previous.flown
    if not len(idx):
        return previous
    half = window_half(smooth, motion.fps, 3) if smooth > 0 else 1
    lo, hi = int(idx[0]), int(idx[-1]) + 1
    runs = [(lo, hi)] if min(hi + 2 * half, t) - max(lo - 2 * half, 0) <= 0.6 * t else changed_runs(idx, 4 * half)
    cover = sum(min(b + 2 * half, t) - max(a - 2 * half, 0) for a, b in runs)
    if ground is None or kw.get("support") is not None or kw.get("clips", 1) != 1 or cover > 0.6 * t:
        return analyse(motion, contacts, body, **kw)
    spliced, support = previous._replace(support=None), previous.support
    for lo, hi in runs:
        start, stop = max(lo - 2 * half, 0), min(hi + 2 * half, t)
        part = slice(start, stop)
        sub_contacts = contacts.frames(part)
        sub = analyse(motion.frames(part), sub_contacts, body, **options_for(kw, part))
        if (previous.angular_momentum is None) != (sub.angular_momentum is None):
            raise ValueError("analyse_changed: the previous analysis was made with other options")
        # a change within a window of the clip's first or last frame reaches every frame of that one-sided window
        keep = slice(0 if lo <= 2 * half else lo - half, t if hi >= t - 2 * half else hi + half)
        support = _spliced_support(support, sub.support, keep, start)
        spliced = _spliced(spliced, sub._replace(support=None), keep, start, t)
    return spliced._replace(support=support)


def cluster_labels(frames: np.ndarray, gap: int) -> np.ndarray:
    """Cluster index of each of the sorted ``frames`` (N,): frames within ``gap`` of the previous one share it."""
    return np.concatenate(([0], np.cumsum(np.diff(frames) > gap))) if len(frames) else np.zeros(0, dtype=int)


def changed_runs(frames: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """[start, stop) of each cluster of the sorted ``frames`` (N,) (:func:`cluster_labels`)."""
    label = cluster_labels(frames, gap)
    return [(int(frames[label == c][0]), int(frames[label == c][-1]) + 1) for c in range(int(label[-1]) + 1)]


def flight_phases(support_any: np.ndarray, min_frames: int = 3) -> np.ndarray:
    """(S, 2) [start, stop) frame ranges without any support, at least ``min_frames`` long."""
    spans = contact_spans(~np.asarray(support_any, dtype=bool))
    return spans[spans[:, 1] - spans[:, 0] >= min_frames]


def flights(
    support_any: np.ndarray, free_fall: np.ndarray, min_frames: int = 3, flown: np.ndarray | None = None
) -> np.ndarray:
    """(S, 2) the :func:`flight_phases` of ``support_any`` (T,) bool, the frames a foot bears (steadily: the
    analyses pass ``Support.steady``), that are real flights: on most of their frames the vertical
    ground force is under the free-fall threshold (``free_fall`` (T,) bool), or (``flown`` (T,) bool, the frames
    of the flights of the motion this one was made from) over a flight of that motion. A foot lost by contact
    detection in a dance is not a jump, nor is a child sitting on a climbing frame: neither the
    solver's ballistic goals nor the report's flight figures count them
    (:mod:`.unexplained` names the long ones). But a flight the solve slowed until most of its frames ask for more
    than the free-fall threshold is still the performance's flight, now off its parabola: counted by its own frames
    alone, the report read no flight there, and the solve's judges let a trial slow it for free (CMU 05_06 at 1.4×
    onto 90 kg: the input's flight on frames 442–496, 38.3 mm RMS from its parabola, left 11.3 mm off — 24.1 mm at
    worst — and reported as 0.00 mm over no flight frames)."""
    phases = flight_phases(support_any, min_frames)
    free = np.asarray(free_fall)
    real = [free[a:b].mean() >= 0.5 or (flown is not None and bool(flown[a:b].any())) for a, b in phases]
    return phases[np.array(real, dtype=bool)] if len(phases) else phases


def flight_momentum_change(an: Analysis, body: BodyModel, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """The angular momentum about the CoM over one flight phase [start, stop), from derivatives of the
    phase's own frames (:func:`.dynamics.phase_momentum`): its drift from the phase mean (n, 3), N·m·s,
    and that drift's norm as a share of the mean's (n,) (the report's ``flight_momentum_change``)."""
    momentum = phase_momentum(an.kin, body, start, stop)
    drift = momentum - momentum.mean(axis=0)
    return drift, quat.length(drift) / max(np.linalg.norm(momentum.mean(axis=0)), 1e-9)


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x)))) if np.size(x) else 0.0


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


class PhysicsSeries(NamedTuple):
    """Per-frame data behind :func:`report`, for plots and overlays (:func:`series`).

    zmp, com (T, 2): ground coordinates in metres (ZMP NaN where undefined); inside (T,): ZMP
    inside the support polygon; counted (T,): frames the ZMP-inside share counts (support and
    no free fall); support_points (T, P, 2) metres and support_active (T, P): the candidate
    hull points of each frame (:meth:`hull`); torque_joints (K,) names, torques (T, K) N·m
    norms and torque_limits (K,) N·m of the hip, knee and ankle joints; basis (2, 3), up (3,),
    ground (scene units) and unit (metres per scene unit) place the ground plane in the
    motion's space (:meth:`to_scene`); fps.
    """

    zmp: np.ndarray
    com: np.ndarray
    inside: np.ndarray
    counted: np.ndarray
    support_points: np.ndarray
    support_active: np.ndarray
    torque_joints: list
    torques: np.ndarray
    torque_limits: np.ndarray
    basis: np.ndarray
    up: np.ndarray
    ground: float
    unit: float
    fps: float

    @property
    def n_frames(self) -> int:
        return len(self.zmp)

    def hull(self, frame: int) -> np.ndarray:
        """(H, 2) counter-clockwise support polygon of one frame in metres (empty without support)."""
        active = self.support_active[frame]
        return convex_hull(self.support_points[frame][active]) if active.any() else np.zeros((0, 2))

    def to_scene(self, points2: np.ndarray) -> np.ndarray:
        """Ground points (..., 2) in metres as points (..., 3) on the ground plane in scene units."""
        return from_ground(np.asarray(points2) / self.unit, self.basis, self.up, self.ground)

    def inside_share(self) -> float:
        """Share of the counted frames whose ZMP is inside the support polygon (1 when none)."""
        return float(self.inside[self.counted].mean()) if self.counted.any() else 1.0


def series(analysis: Analysis, body: BodyModel) -> PhysicsSeries:
    """The :class:`PhysicsSeries` of an :class:`Analysis`."""
    a, sup = analysis, analysis.support
    q2 = to_ground(a.zmp, sup.basis)
    joints = [j for role in ("hip", "knee", "ankle") for j in body.roles.get(role, [])]
    return PhysicsSeries(
        q2 * body.unit,
        to_ground(a.com / body.unit, sup.basis) * body.unit,
        sup.query(q2)[0],
        sup.any & ~a.free_fall,
        sup.points * body.unit,
        sup.active.copy(),
        [body.skeleton.names[j] for j in joints],
        quat.length(a.torques[:, joints]),
        body.torque_limits[joints].astype(float),
        sup.basis,
        sup.up,
        sup.ground,
        body.unit,
        a.kin.fps,
    )


def stitch_series(parts: list[tuple[int, PhysicsSeries]], n_frames: int) -> PhysicsSeries:
    """One :class:`PhysicsSeries` of ``n_frames`` from parts placed at their first frame; frames no
    part covers get NaN positions and torques, no support and are not counted."""
    first = parts[0][1]
    zmp = np.full((n_frames, 2), np.nan)
    com = np.full((n_frames, 2), np.nan)
    inside = np.zeros(n_frames, dtype=bool)
    counted = np.zeros(n_frames, dtype=bool)
    points = np.zeros((n_frames, *first.support_points.shape[1:]))
    active = np.zeros((n_frames, first.support_active.shape[1]), dtype=bool)
    torques = np.full((n_frames, first.torques.shape[1]), np.nan)
    for start, part in parts:
        stop = start + part.n_frames
        zmp[start:stop], com[start:stop] = part.zmp, part.com
        inside[start:stop], counted[start:stop] = part.inside, part.counted
        points[start:stop], active[start:stop] = part.support_points, part.support_active
        torques[start:stop] = part.torques
    return first._replace(zmp=zmp, com=com, inside=inside, counted=counted, support_points=points,
                          support_active=active, torques=torques)  # fmt: skip


def torque_regressions(before: Analysis, after: Analysis, body: BodyModel, tolerance: float = 1e-3) -> list[dict]:
    """Frames over a torque limit after that were not as far over before (the guard on the torque
    constraint: a solve must not make a frame worse without saying so).

    Per frame, not per joint: with the double-support split that minimises the worst ratio
    (:mod:`.split`) several joints often share that worst ratio, and which of them carries it is an
    artefact of the tie. Returns one dict per frame, in order: ``frame`` (index in the clip),
    ``joint`` (the name of a joint at the frame's worst ratio after), ``before`` and ``after`` (the
    frame's worst |τ|/limit). tolerance: ratios within it count as equal.
    """
    rb, ra = torque_ratios(before.torques, body), torque_ratios(after.torques, body)
    wb, wa = rb.max(axis=1), ra.max(axis=1)
    frames = np.flatnonzero((wa > 1.0) & (wa > np.maximum(wb, 1.0) + tolerance))
    names = body.skeleton.names
    return [
        {"frame": int(t), "joint": names[int(np.argmax(ra[t]))], "before": float(wb[t]), "after": float(wa[t])}
        for t in frames
    ]


def torque_causes(after: Analysis, body: BodyModel, edge: int, free_fall: float = FREE_FALL) -> list[dict]:
    """Why each frame still over a torque limit is over it, computed on the result.

    Returns one dict per frame over a limit, in order: ``frame``, ``joint`` (one at the frame's worst
    ratio), ``ratio`` (the frame's worst |τ|/limit), ``static`` (the same for the pose held still:
    gravity and the ground alone, no velocity or acceleration, the ground force split as well as it
    can be) and ``cause``: "gravity alone" when ``static`` is over 1 (no motion near this pose helps),
    "clip edge" within ``edge`` frames of the clip's first or last frame (derivatives from a one-sided
    window: the accelerations extrapolate), else "dynamics" (the accelerations of the motion, which
    the solver traded against balance and closeness).
    """
    kin = after.kin
    zero = np.zeros_like(kin.vel)
    still = kin._replace(vel=zero, acc=zero, omega=zero, alpha=zero, spin=zero)
    static = torque_ratios(inverse_dynamics(still, body, after.support, free_fall).torques, body).max(axis=1)
    ratios = torque_ratios(after.torques, body)
    worst = ratios.max(axis=1) if ratios.size else np.zeros(len(ratios))
    t = len(ratios)
    out = []
    for f in np.flatnonzero(worst > 1.0):
        cause = "gravity alone" if static[f] > 1.0 else "clip edge" if min(f, t - 1 - f) < edge else "dynamics"
        out.append({"frame": int(f), "joint": body.skeleton.names[int(np.argmax(ratios[f]))], "ratio": float(worst[f]),
                    "static": float(static[f]), "cause": cause})  # fmt: skip
    return out


def combine_reports(reports: list[dict], starts: list[int] | None = None) -> dict:
    """The figures of several stretches of one clip (each a :func:`report`) as one :func:`report`.

    Shares and means are weighted by the frames they count (contact frames for the ZMP, flight
    frames for the flight error and drift, frames otherwise); counts add up; worst ratios and the
    worst flight take the maximum; the flights are listed in the clip's frames (``starts``: each
    stretch's first frame, default 0).
    """
    if len(reports) == 1:
        return dict(reports[0])
    out: dict = {}

    def weighted(key: str, weight: str, rms: bool = False) -> float:
        w = np.array([r[weight] for r in reports], dtype=float)
        x = np.array([r[key] for r in reports], dtype=float)
        if w.sum() <= 0:
            return float(x.mean()) if not rms else 0.0
        return float(np.sqrt((w * x**2).sum() / w.sum())) if rms else float((w * x).sum() / w.sum())

    for key in ("frames", "contact_frames", "free_fall_contact_frames", "torque_violations",
                "torque_violation_frames", "flight_phases", "flight_frames"):  # fmt: skip
        out[key] = int(sum(r[key] for r in reports))
    worst = max(reports, key=lambda r: r["torque_worst_ratio"])
    out["zmp_inside_share"] = weighted("zmp_inside_share", "contact_frames")
    out["zmp_outside_mean_m"] = weighted("zmp_outside_mean_m", "contact_frames")
    out["torque_worst_ratio"], out["torque_worst_joint"] = worst["torque_worst_ratio"], worst["torque_worst_joint"]
    out["flight_error_m"] = weighted("flight_error_m", "flight_frames", rms=True)
    out["flight_momentum_drift"] = weighted("flight_momentum_drift", "flight_frames", rms=True)
    out["flight_momentum_change"] = weighted("flight_momentum_change", "flight_frames", rms=True)
    out["flights"] = [
        f | {"start": f["start"] + a, "stop": f["stop"] + a}
        for r, a in zip(reports, starts or [0] * len(reports))
        for f in r["flights"]
    ]
    out["flight_error_worst_m"] = max(r["flight_error_worst_m"] for r in reports)
    out["flight_momentum_change_worst"] = max(r["flight_momentum_change_worst"] for r in reports)
    out["jerk_m_s3"] = weighted("jerk_m_s3", "frames")
    if all("deviation" in r for r in reports):
        out["deviation"] = weighted("deviation", "frames")
    return {k: out[k] for k in reports[0] if k in out}


def zmp_inside(analysis: Analysis) -> tuple[float, np.ndarray, np.ndarray]:
    """Share of the contact frames (support, no free fall) whose ZMP is inside the support polygon (1 without
    any: :func:`report`'s ``zmp_inside_share``), the contact frames (T,) bool and the signed distances (T,)
    from the polygon, scene units (negative inside)."""
    sup = analysis.support
    inside, signed, _ = sup.query(to_ground(analysis.zmp, sup.basis))
    contact = sup.any & ~analysis.free_fall
    return (float(inside[contact].mean()) if contact.any() else 1.0), contact, signed


class FlightSeries(NamedTuple):
    """One flight phase's per-frame figures (:func:`flight_series`): frames [start, stop); error (n,) m, the CoM's
    distance from its least-squares parabola; drift (n, 3) N·m·s and change (n,), the angular momentum's drift from
    its phase mean and that drift as a share of the mean's norm (:func:`flight_momentum_change`)."""

    start: int
    stop: int
    error: np.ndarray
    drift: np.ndarray
    change: np.ndarray


def _same_over(a: Analysis, b: Analysis, start: int, stop: int) -> bool:
    """Whether what a flight's figures read (:func:`flight_series`) is bit for bit the same in ``a`` and ``b`` on
    frames [start, stop): the CoM, the bodies' CoMs and their orientations."""
    f = slice(start, stop)
    return (
        np.array_equal(a.com[f], b.com[f])
        and np.array_equal(a.kin.com[f], b.kin.com[f])
        and np.array_equal(a.kin.joint_rot[f], b.kin.joint_rot[f])
    )


def flight_series(
    analysis: Analysis,
    body: BodyModel,
    fps: float,
    min_flight: int = 3,
    known: tuple[Analysis, list[FlightSeries]] | None = None,
) -> list[FlightSeries]:
    """The per-frame figures of every flight (:func:`flights`) that :func:`report` and :func:`flight_figures` sum up.

    known: (an analysis of a motion that differs from this one on a few frames, its flight series): a flight with
    the same frames there over which both analyses read the same (:func:`_same_over`) is taken from it (the same
    arithmetic on the same values: bit for bit; the torque repair's trials change one window of a clip with many
    flights)."""
    a = analysis
    reuse = {} if known is None else {(f.start, f.stop): f for f in known[1]}
    out = []
    for start, stop in flights(a.support.steady, a.free_fall, min_flight, a.flown):
        start, stop = int(start), int(stop)
        old = reuse.get((start, stop))
        if old is not None and _same_over(a, known[0], start, stop):
            out.append(old)
            continue
        com = a.com[start:stop]
        drift, change = flight_momentum_change(a, body, start, stop)
        out.append(FlightSeries(start, stop, quat.length(com - ballistic_fit(com, fps, body.up)), drift, change))
    return out


def flight_figures(series: list[FlightSeries], body: BodyModel) -> dict:
    """:func:`report`'s flight figures (``flight_phases`` … ``flight_momentum_change_worst``) from the flights'
    :func:`flight_series` (what the torque guard and repair read of a trial's flights)."""
    err = [f.error for f in series]
    drift = [f.drift for f in series]
    change = [f.change for f in series]
    out = {
        "flight_phases": int(len(series)),
        "flight_frames": int(sum(f.stop - f.start for f in series)),
        "flight_error_m": float(np.sqrt(np.mean(np.concatenate(err) ** 2))) if err else 0.0,
        "flight_momentum_drift": (
            float(np.sqrt(np.mean(np.concatenate(drift) ** 2)) / (body.mass * body.height**2)) if drift else 0.0
        ),
        "flight_momentum_change": float(np.sqrt(np.mean(np.concatenate(change) ** 2))) if change else 0.0,
        "flights": [
            {"start": f.start, "stop": f.stop, "error_m": _rms(f.error), "momentum_change": _rms(f.change)}
            for f in series
        ],
    }
    out["flight_error_worst_m"] = max((f["error_m"] for f in out["flights"]), default=0.0)
    out["flight_momentum_change_worst"] = max((f["momentum_change"] for f in out["flights"]), default=0.0)
    return out


def mean_jerk(positions: np.ndarray, fps: float = 1.0) -> float:
    """Mean |d³p/dt³| of joint positions (T, J, 3) at ``fps`` (third differences × fps³; 0 under four frames): the
    report's jerk, m/s³ on positions in metres; fps 1 gives it per frame³, for comparing motions of one clip."""
    return float((quat.length(np.diff(positions, 3, axis=0)) * fps**3).mean()) if len(positions) > 3 else 0.0


def report(
    analysis: Analysis,
    body: BodyModel,
    motion: Motion,
    source: Motion | np.ndarray | None = None,
    min_flight: int = 3,
    positions: np.ndarray | None = None,
    flight: list[FlightSeries] | None = None,
) -> dict:
    """Metrics of an :class:`Analysis` (plain floats, JSON-ready).

    zmp_inside_share: contact frames with a defined ZMP inside the support polygon;
    zmp_outside_mean_m: mean distance outside over those frames; torque_violations: joint-frames
    with |τ| above the limit, torque_violation_frames, torque_worst_ratio (and its joint);
    flight_error_m: RMS distance of the CoM from its best ballistic parabola over the flights (:func:`flights`);
    flight_momentum_drift: RMS of L − mean(L) over flight frames / mean |L| scale (m·h²/s), L from
    derivatives of each phase's own frames (:func:`.dynamics.phase_momentum`);
    flight_momentum_change: the same RMS over each phase's mean |L̄| (its own momentum; RMS over
    the phases' frames): 0.05 is "constant within 5 %"; flights: each phase's ``start``, ``stop``, ``error_m``
    and ``momentum_change`` (RMS over its frames), and flight_error_worst_m, flight_momentum_change_worst: the
    worst phase's (the clip's RMS can hide one phase far off: on the rest of CMU 01_01, 0.98 mm and 4.4 %
    over seven flights with one at 2.2 mm and one at 7.3 %) (:func:`flight_figures`);
    jerk: mean |d³p/dt³| of joint positions, m/s³; deviation: mean joint position error
    against ``source`` divided by the stature (``source`` the motion, or its world joint positions (T, J, 3),
    scene units, from a caller that reports many motions against one source); positions: ``motion``'s world joint
    positions (T, J, 3), scene units, when known (the deviation's; else its forward kinematics); flight: the
    analysis's :func:`flight_series` when already made (with ``min_flight``).
    """
    a = analysis
    sup = a.support
    share, contact, signed = zmp_inside(a)
    ratios = torque_ratios(a.torques, body)
    worst = np.unravel_index(np.argmax(ratios), ratios.shape) if ratios.size else (0, 0)
    flight = flight_series(a, body, motion.fps, min_flight) if flight is None else flight
    out = {
        "frames": int(motion.n_frames),
        "contact_frames": int(contact.sum()),
        "free_fall_contact_frames": int((sup.any & a.free_fall).sum()),
        "zmp_inside_share": share,
        "zmp_outside_mean_m": float(np.maximum(signed[contact], 0).mean() * body.unit) if contact.any() else 0.0,
        "torque_violations": int((ratios > 1.0).sum()),
        "torque_violation_frames": int((ratios > 1.0).any(axis=1).sum()),
        "torque_worst_ratio": float(ratios.max()) if ratios.size else 0.0,
        "torque_worst_joint": motion.skeleton.names[worst[1]],
        **flight_figures(flight, body),
        "jerk_m_s3": mean_jerk(a.kin.joint_pos, motion.fps),
    }
    for key in ("flight_error_worst_m", "flight_momentum_change_worst"):  # after the jerk, as they always were
        out[key] = out.pop(key)
    if source is not None:
        reference = source.world_positions() if isinstance(source, Motion) else source
        err = quat.length(reference - (motion.world_positions() if positions is None else positions)).mean()
        out["deviation"] = float(err * body.unit / body.height)
    return out
