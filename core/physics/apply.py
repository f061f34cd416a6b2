"""Physics on a retargeted clip from the settings a user gives (the Retarget operator's Physics
section and ``scripts/retarget.py --physics`` share it).

- **Body models**: the target's from its mass, body-model column (de Leva's male or female)
  and stature — given in metres, or measured: the standing height of the skeleton
  (:func:`core.limbs.standing_height`) times the metres per scene unit the caller knows (Blender:
  the scene's Unit Scale times the object's scale). The source's model (its own mass, same
  metres per unit unless told otherwise) only gives reference figures: how plausible the
  capture is on the performer's body.
- **Stretches between jumps**: a capture can jump between two frames (the T-pose that the
  CMU BVH conversions add as frame 0, a teleport): the derivatives across such a step are
  meaningless (the ZMP flies off, a "flight" appears). The clip is cut at every jump
  (:func:`core.keyframes.jumps.jump_steps`); stretches of at least ``min_seconds`` go through
  :func:`.solve.physics_retarget` one by one (one longer than a minute in overlapping windows,
  :mod:`.windows`: memory bounded whatever its length), shorter ones are kept as retargeted and
  named in the notes, so are stretches where no foot touches the floor (a clip with nothing
  else is a PhysicsError). The figures combine the stretches (:func:`.metrics.combine_reports`).
- **Body map**: on a retargeted clip the body model's legs must be the retarget's canonical
  body map's (:func:`check_legs`); a map without legs, or a body that finds other joints for
  them, is a PhysicsError naming them. So is a skeleton that is no whole body (pelvis and legs
  only: :func:`.body.check_whole`) or a foot with no leg above it (:func:`.body.leg_chain`).
- **Figures** (:func:`summary` gives the line users read): ZMP-inside share of the contact
  frames, torque-limit frames, worst torque ratio, CoM flight-path error, deviation from the
  retargeted clip (mean joint error / stature), before → after; JSON-ready; with the derivatives'
  Savitzky–Golay span (``derivative_window_s``) that a re-measure of the written motion needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..contacts import Contacts, detect_contacts
from ..keyframes.distance import PoseMetric
from ..keyframes.jumps import JUMP_RATE, isolated_steps, jump_steps
from ..limbs import standing_height
from ..motion import Motion
from .body import BodyModel, body_model
from .errors import PhysicsError, check_pose_values
from .metrics import PhysicsSeries, analyse, combine_reports, report, stitch_series
from .options import PhysicsOptions
from .planting import with_toes
from .units import PLAUSIBLE_HEIGHT, PLAUSIBLE_MASS, height_warning, plausible
from .windows import MIN_WINDOW_SECONDS, WINDOW_SECONDS, contacts_frames, solve_in_windows

FIGURES = (
    "zmp_inside_share",
    "zmp_outside_mean_m",
    "torque_violations",
    "torque_violation_frames",
    "torque_worst_ratio",
    "torque_worst_joint",
    "flight_frames",
    "flight_error_m",
    "flight_momentum_drift",
    "flight_momentum_change",
    "flight_error_worst_m",
    "flight_momentum_change_worst",
    "jerk_m_s3",
    "deviation",
)


# the Retarget panel's Stiffness range, for every caller: on CMU 02_01, 0.01 and 100 keep every bar (ZMP inside
# 86.3 -> 100 %, worst |τ|/limit 0.756 -> 0.689 and 0.667); 1e-9 (scripts/retarget.py took any positive number)
# left the ZMP inside on 92.7 %, raised the worst ratio to 0.775 and the deviation to 1.75 % of the stature
STIFFNESS_RANGE = (0.01, 100.0)


@dataclass
class PhysicsSettings:
    """What the user chooses. Masses in kg; target_height in metres (None: measured)."""

    target_mass: float = 70.0
    target_height: float | None = None
    source_mass: float = 60.0
    sex: str = "male"  # de Leva's column: "male" or "female"
    balance: bool = True
    torques: bool = True
    momentum: bool = True  # ballistic CoM and conserved angular momentum in flight
    stiffness: float = 1.0  # PhysicsOptions.stiffness: Q = Q₀/s, R = s·R₀

    def __post_init__(self) -> None:
        if not (self.target_mass > 0 and self.source_mass > 0):
            raise PhysicsError("masses must be positive")
        for what, kg in (("target", self.target_mass), ("source", self.source_mass)):
            if not PLAUSIBLE_MASS[0] <= kg <= PLAUSIBLE_MASS[1]:
                # every torque limit is per kg, so a mass in grams (70000) ran as a 70-tonne body with the 70 kg
                # figures and motion, and the report said 70000 kg
                lo, hi = PLAUSIBLE_MASS
                raise PhysicsError(f"{what} mass {kg:g} kg is not a body's ({lo:g}–{hi:g} kg): give it in kilograms")
        if self.target_height is not None and not self.target_height > 0:
            raise PhysicsError(f"target height must be positive, got {self.target_height}")
        if self.target_height is not None and not plausible(self.target_height):
            # given, it scales the whole body model: 180 (centimetres meant) gave a 180 m body, every contact frame
            # over a torque limit (worst 2.2e11 × its limit) and the ZMP inside on 1 %, without a warning
            lo, hi = PLAUSIBLE_HEIGHT
            raise PhysicsError(f"target height {self.target_height:g} m is not a human stature ({lo:g}–{hi:g} m): "
                               "give it in metres, or leave it out to measure it")  # fmt: skip
        if self.sex not in ("male", "female"):
            raise PhysicsError(f"body model must be 'male' or 'female', got {self.sex!r}")
        if not self.stiffness > 0:
            raise PhysicsError(f"stiffness must be positive, got {self.stiffness}")
        if not STIFFNESS_RANGE[0] <= self.stiffness <= STIFFNESS_RANGE[1]:
            lo, hi = STIFFNESS_RANGE
            raise PhysicsError(f"stiffness {self.stiffness:g} is outside {lo:g}–{hi:g}")

    def options(self) -> PhysicsOptions:
        return PhysicsOptions(balance=self.balance, torques=self.torques, flight=self.momentum,
                              stiffness=self.stiffness)  # fmt: skip


@dataclass
class PhysicsOutcome:
    """The physics result: the new motion, JSON-ready figures, per-frame series of the whole clip
    (``{"before": PhysicsSeries, "after": PhysicsSeries}``, frames kept as retargeted are NaN)
    and notes for the user."""

    motion: Motion
    figures: dict
    series: dict[str, PhysicsSeries]
    notes: list[str] = field(default_factory=list)


# body sizes (Skeleton.size) per second: an isolated step of the placement joints faster than this is a teleport
TELEPORT_SPEED = 2.0


def teleport_steps(motion: Motion, factor: float = 15.0, isolation: float = 4.0) -> np.ndarray:
    """Frames t (0-based, sorted) where the placement joints (those with position channels: the root) jump
    between t and t + 1: their travel over that step isolated as :func:`core.keyframes.jumps.jump_steps`' rule
    has it (``factor`` × the median step, scaled down below 120 fps, and ``isolation`` × the steps around it)
    and faster than :data:`TELEPORT_SPEED`. Why: jump_steps' pose distance weighs the root's travel at 0.1 of a
    radian per half body size, so a capture whose root teleports 30 cm in one frame (two takes spliced, a
    floor recalibrated) reads as a smooth step there, and its 36 m/s stood in the solve as the clip's worst
    torque (CMU 02_01, 1.4×, first 60 frames raised 30 cm: worst |τ|/limit 4.80, the raised frames "held by
    the hands")."""
    moving = motion.skeleton.has_position_channels
    if motion.n_frames < 3 or not moving.any():
        return np.zeros(0, dtype=int)
    step = np.linalg.norm(np.diff(motion.translations[:, moving], axis=0), axis=2).sum(axis=1)
    return _fast_jumps(step, motion, factor, isolation)


def _fast_jumps(step: np.ndarray, motion: Motion, factor: float, isolation: float) -> np.ndarray:
    """Steps t (0-based, sorted) of ``step`` (T − 1,) scene units that :func:`core.keyframes.jumps.jump_steps`' rule
    isolates (``factor`` scaled down below 120 fps) and faster than :data:`TELEPORT_SPEED`."""
    fast = step > TELEPORT_SPEED * motion.skeleton.size() / motion.fps
    return np.flatnonzero(isolated_steps(step, factor * min(1.0, motion.fps / JUMP_RATE), isolation) & fast)


# body sizes per second: the least mean speed of the body's mass into and out of a one-frame glitch
GLITCH_SPEED = 0.25


def glitch_frames(
    motion: Motion,
    masses: np.ndarray | None = None,
    factor: float = 5.0,
    isolation: float = 4.0,
    points: tuple | None = None,
) -> np.ndarray:
    """Frames t (0-based, sorted) that stand alone: the body jumps away at t and back at t + 1 (a marker swap, a
    one-frame dropout of raw capture). Measured twice, on the joints' world positions weighted by ``masses``
    ((J,) kg on each joint, :attr:`.body.BodyModel.masses`; default equal): the travel of their centre (the root
    glitches), and their mean travel about it, Σ m_j·|Δp_j| / Σ m_j (the pose: a flipped thumb, CMU 06_14's 179°
    and back on 0.1 % of the mass, is not one and a flipped knee is). In either, both steps are over ``factor``
    × the clip's median step (scaled down below 120 fps), ``isolation`` × the steps before and after them and ×
    half the distance from frame t − 1 to t + 1 (the body comes back), and faster than :data:`GLITCH_SPEED`.
    :func:`core.keyframes.jumps.jump_steps` finds neither step (each has the other beside it): CMU 02_01 (1.4×)
    with its root 50 cm up on one frame was read as a 9-frame flight that the solve put on a parabola (flight CoM
    158.6 → 0.03 mm), a knee turned 162° on one frame as the clip's worst torque (2.16). points: :func:`_mass_points`
    of ``motion``, if made."""
    if motion.n_frames < 5:
        return np.zeros(0, dtype=int)
    scale = factor * min(1.0, motion.fps / JUMP_RATE)
    floor = GLITCH_SPEED * motion.skeleton.size() / motion.fps
    spike = np.zeros(motion.n_frames - 2, dtype=bool)  # frames 1 … T − 2
    for p, weights in _mass_points(motion, masses) if points is None else points:  # the pose about its centre; travel
        step = np.linalg.norm(np.diff(p, axis=0), axis=2) @ weights  # (T − 1,)
        skip = np.linalg.norm(p[2:] - p[:-2], axis=2) @ weights  # (T − 2,) frame t − 1 to t + 1
        padded = np.pad(step, 1)
        around = np.maximum.reduce([padded[:-3], padded[3:], skip / 2])  # steps t − 2 → t − 1 and t + 1 → t + 2
        least = np.minimum(step[:-1], step[1:])  # into frame t and out of it
        spike |= (least > scale * np.median(step)) & (least > isolation * around) & (least > floor)
    return np.flatnonzero(spike) + 1


def _mass_points(motion: Motion, masses: np.ndarray | None) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The body as :func:`glitch_frames` and :func:`pose_steps` measure it: its joints' world positions about the
    centre of ``masses`` ((T, J, 3), with their shares of the mass (J,)), and that centre ((T, 1, 3), weight (1,))."""
    pos = motion.world_positions()
    w = np.ones(motion.skeleton.n_joints) if masses is None else np.asarray(masses, dtype=float)
    w = w / w.sum()
    centre = pos.transpose(0, 2, 1) @ w  # (T, 3)
    return (pos - centre[:, None], w), (centre[:, None], np.ones(1))


def pose_steps(
    motion: Motion,
    masses: np.ndarray | None = None,
    factor: float = 15.0,
    isolation: float = 4.0,
    points: tuple | None = None,
) -> np.ndarray:
    """Frames t (0-based, sorted) where the pose jumps between t and t + 1: the mean travel of the body's mass about
    its centre (:func:`glitch_frames`' pose measure) isolated as :func:`core.keyframes.jumps.jump_steps`' rule has it
    and faster than :data:`TELEPORT_SPEED`. Why: jump_steps' distance is the joints' rotations, and a T-pose frame
    (CMU's BVH conversions add one) retargeted onto a Rigify rig read 14.9 times the median step against its factor
    of 15 once planting bent its straight legs as on the next frame; the frame stayed in the clip and its step (the
    arms 0.9 m in 1/120 s) put 12 frames over a torque limit. points: :func:`_mass_points` of ``motion``, if made."""
    if motion.n_frames < 3:
        return np.zeros(0, dtype=int)
    (p, weights), _ = _mass_points(motion, masses) if points is None else points
    return _fast_jumps(np.linalg.norm(np.diff(p, axis=0), axis=2) @ weights, motion, factor, isolation)


def held_period(motion: Motion) -> int:
    """How many frames each pose of ``motion`` is held: k ≥ 2 when its poses change only every k-th frame (a
    capture at fps/k written at fps, each pose repeated k times), else 1. A step is a hold when the largest change
    of any translation (over the body size) or rotation component is under 1 % of the clip's 90th-percentile step;
    k is the most common gap between changes and must be at least 80 % of them, so a still clip, a still start or
    a few duplicated frames (a dropped frame filled in) are not held data."""
    if motion.n_frames < 3:
        return 1
    size = motion.skeleton.size()
    step = np.maximum(
        np.abs(np.diff(motion.translations, axis=0)).max(axis=(1, 2)) / size,
        np.abs(np.diff(motion.rotations, axis=0)).max(axis=(1, 2)),
    )
    changes = np.flatnonzero(step > max(0.01 * np.percentile(step, 90), 1e-12))
    if len(changes) < 3:
        return 1
    gaps = np.diff(changes)
    k = int(np.bincount(gaps).argmax())
    return k if k >= 2 and np.mean(gaps == k) >= 0.8 else 1


def check_held(motion: Motion) -> None:
    """PhysicsError when ``motion``'s poses are held for several frames each (:func:`held_period`): its velocities
    and accelerations are steps, so every change reads as a jump or a jolt. A 30 fps capture of CMU 02_01 written
    at 120 fps (each pose 4 times) was refused as having "no stretch of at least 0.5 s between jumps"; the Mixamo
    walk's 30 fps poses at 60 fps (twice each) ran, its input's jerk 170 times the clean walk's."""
    k = held_period(motion)
    if k > 1:
        rate = motion.fps / k
        raise PhysicsError(f"each pose is held for {k} frames (data at {rate:.4g} fps in a {motion.fps:.4g} fps clip): "
                           f"its velocities and accelerations are steps; resample it to {rate:.4g} fps first")  # fmt: skip


def stretches(
    motion: Motion, min_frames: int, masses: np.ndarray | None = None, source: Motion | None = None
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """[start, stop) frame ranges between jumps (:func:`core.keyframes.jumps.jump_steps`, :func:`pose_steps`,
    :func:`teleport_steps`) and around one-frame glitches (:func:`glitch_frames`, each a range of its own): those
    with at least ``min_frames`` frames, and the others. masses: the body's, for :func:`glitch_frames` and
    :func:`pose_steps`; source: the clip ``motion`` was retargeted from (same frames), whose own jumps cut it too:
    the retarget may soften a jump the source shows plainly (CMU's T-pose frame, 28 times its median step there,
    read 14.9 times on a Rigify rig once planting bent its legs as on the next frame)."""
    points = _mass_points(motion, masses) if motion.n_frames >= 3 else None  # the body's FK, made once for both
    glitches = glitch_frames(motion, masses, points=points)
    jumps = [
        jump_steps(motion, PoseMetric.for_motion(motion)),
        pose_steps(motion, masses, points=points),
        teleport_steps(motion),
    ]
    if source is not None and source.n_frames == motion.n_frames:
        jumps.append(jump_steps(source, PoseMetric.for_motion(source)))
    steps = [*jumps, glitches - 1, glitches]
    cuts = np.unique(np.concatenate(steps)) + 1
    bounds = [0, *[int(c) for c in cuts], motion.n_frames]
    spans = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    return [s for s in spans if s[1] - s[0] >= min_frames], [s for s in spans if s[1] - s[0] < min_frames]


def _frames_text(spans: list[tuple[int, int]], first: int) -> str:
    return ", ".join(f"{a + first}" if b - a == 1 else f"{a + first}–{b - 1 + first}" for a, b in spans)


def apply_physics(
    motion: Motion,
    settings: PhysicsSettings,
    contacts: Contacts | None = None,
    up: np.ndarray | None = None,
    unit: float = 1.0,
    source: Motion | None = None,
    source_unit: float | None = None,
    first_frame: int = 0,
    min_seconds: float = 0.5,
    progress: Callable[[float], None] | None = None,
    labels: dict[str, int] | None = None,
    window_seconds: float = WINDOW_SECONDS,
) -> PhysicsOutcome:
    """Physically plausible version of a retargeted ``motion`` (module notes).

    contacts: its foot contacts (default: detected on each stretch, since a jump disturbs the
    detection's smoothed speeds around it); up: its world up axis (default detected);
    unit: metres per scene unit of ``motion``, used when ``settings.target_height`` is None;
    source: the source clip (same frames) for reference figures, measured on its own body:
    ``source_unit`` metres per source unit (default ``unit``, whatever the target height); first_frame: number of the first frame in notes;
    progress: called with the share done (0–1); window_seconds: a stretch longer than this is solved in overlapping
    windows (:mod:`.windows`: memory bounded whatever its length); labels: the retarget's canonical body map of
    ``motion``'s skeleton (canonical joint → joint, :attr:`core.retarget.RetargetResult.target_labels`),
    which the body model's legs must agree with (:func:`check_legs`). Raises :class:`.errors.PhysicsError`
    when the settings are out of range, the skeleton has no feet, the body map no legs, a pose is not finite
    (:func:`.errors.check_pose_values`), its poses are each held for several frames (:func:`check_held`), or no
    stretch is long enough.
    """
    check_pose_values(motion, first_frame)
    if not window_seconds >= MIN_WINDOW_SECONDS:
        raise PhysicsError(f"windows of {window_seconds:g} s are too short to join (at least {MIN_WINDOW_SECONDS:g} s)")
    for clip in (motion, source) if source is not None else (motion,):  # the retarget's planting smears the holds
        check_held(clip)
    step = progress or (lambda _x: None)
    notes: list[str] = []
    sk = motion.skeleton
    if up is None:
        up = contacts.up if contacts is not None else _feet(motion).up
    up = np.asarray(up, dtype=float)
    stand = standing_height(sk, up)
    measured = settings.target_height is None
    given_unit = unit
    if not measured:
        unit = settings.target_height / stand
    body = body_model(sk, settings.target_mass, unit=unit, sex=settings.sex, up=up)
    if labels is not None:
        check_legs(body, labels)
    fix = "give the target height (its masses and torque limits follow it)"
    warning = height_warning("target", body.height, f"{unit:.3g} m a unit", fix) if measured else None
    if warning:
        notes.append(warning)
    if body.missing:
        notes.append(f"body segments not found (their mass is spread over the others): {', '.join(body.missing)}")
    need = max(int(round(min_seconds * motion.fps)), 8)
    solved, kept = stretches(motion, need, body.masses, source)
    if not solved:  # a 10-frame clip read "between jumps" and no more: its length and the need named
        n = motion.n_frames
        raise PhysicsError(f"no stretch of at least {min_seconds} s between jumps: nothing to solve (the clip has {n} "
                           f"frame{'s' * (n != 1)}, {n / motion.fps:.3g} s at {motion.fps:.4g} fps; physics needs "
                           f"{need} frames without a jump)")  # fmt: skip
    if kept:
        notes.append(f"frames {_frames_text(kept, first_frame)} kept as retargeted: jumps (a T-pose, a teleport, "
                     "a one-frame glitch) cut them off")  # fmt: skip
    feet_of = [_feet(motion.frames(slice(a, b)), up) if contacts is None else contacts_frames(contacts, a, b)
               for a, b in solved]  # fmt: skip
    airborne = [s for s, f in zip(solved, feet_of) if not f.flags.any()]
    if len(airborne) == len(solved):
        raise PhysicsError("no foot touches the floor on any frame (a clip all in flight, or a floor the feet never "
                           "reach): nothing to balance on")  # fmt: skip
    if airborne:  # the solve has no take-off or landing to bridge there: it added jerk and changed nothing else
        notes.append(f"frames {_frames_text(airborne, first_frame)} kept as retargeted: no foot touches the floor "
                     "in them")  # fmt: skip
        solved, feet_of = map(list, zip(*[(s, f) for s, f in zip(solved, feet_of) if f.flags.any()]))
    out = motion.copy()
    opts = settings.options()
    reports, starts, before, after, windowed = [], [], [], [], []
    total = sum(b - a for a, b in solved)
    done = 0
    for (a, b), feet in zip(solved, feet_of):
        share = (b - a) / total

        def part(x: float, d=done / total, w=share) -> None:
            step(0.9 * (d + w * x))

        clip = motion.frames(slice(a, b))
        result, pieces = solve_in_windows(clip, feet, body, opts, part, window_seconds)
        out.translations[a:b], out.rotations[a:b] = result.translations, result.rotations
        if len(pieces) > 1:
            windowed.append([(a + start, a + start + rep["before"]["frames"]) for start, rep in pieces])
        for start, rep in pieces:
            reports.append(rep)
            starts.append(a + start)
            before.append((a + start, rep["series"]["before"]))
            after.append((a + start, rep["series"]["after"]))
        done += b - a
    causes = [_jsonable(c) | {"frame": a + c["frame"]} for a, r in zip(starts, reports) for c in r["torque_causes"]]
    why = {c["frame"]: c for c in causes}
    worse = [(a + w["frame"], w) for a, r in zip(starts, reports) for w in r.get("torque_worse", [])]
    if worse:
        notes.append("frames over a torque limit that physics made worse: "
                     + ", ".join(f"frame {t + first_frame} {w['joint']} {w['before']:.2f} → {w['after']:.2f} "
                                 f"({why.get(t, {}).get('cause', 'not found')})" for t, w in worse[:8])
                     + (f" and {len(worse) - 8} more" if len(worse) > 8 else "") + " (every one, and why: the report's "
                     "torque_worse)")  # fmt: skip
    unexplained = [
        (a + u["start"], a + u["stop"], u) for a, r in zip(starts, reports) for u in r.get("unexplained", [])
    ]
    if unexplained:
        notes.append("frames the floor-and-feet model cannot explain (those held off the floor kept as retargeted): "
                     + "; ".join(f"{lo + first_frame}–{hi - 1 + first_frame} ({u['reason']})" for lo, hi, u in unexplained[:4])
                     + (f" and {len(unexplained) - 4} more" if len(unexplained) > 4 else ""))  # fmt: skip
    figures = {
        "target_mass_kg": float(settings.target_mass),
        "target_height_m": float(body.height),
        "target_height_measured": bool(measured),
        "unit_m": float(body.unit),
        "body_model": settings.sex,
        "source_mass_kg": float(settings.source_mass),
        "balance": bool(settings.balance),
        "torques": bool(settings.torques),
        "momentum": bool(settings.momentum),
        "stiffness": float(settings.stiffness),
        "derivative_window_s": float(opts.smooth),  # Savitzky–Golay span of every velocity and acceleration
        "frames": int(motion.n_frames),
        "frames_solved": int(total),
        "stretches": [[int(a), int(b)] for a, b in solved],
        "unexplained": [
            {"start": int(lo), "stop": int(hi), "kind": u["kind"], "reason": u["reason"]} for lo, hi, u in unexplained
        ],
        "contact_frames": int(sum(r["before"]["contact_frames"] for r in reports)),  # the ZMP share's frames
        # every frame still over a limit with why (metrics.torque_causes; the repair's search), and those of them
        # physics made worse (metrics.torque_regressions) with their input's and result's ratio: 0-based clip frames
        "torque_causes": causes,
        "torque_worse": [
            {**why.get(t, {"frame": t}), "joint": w["joint"], "before": float(w["before"]), "after": float(w["after"])}
            for t, w in worse
        ],
        "windows": [[int(a), int(b)] for w in windowed for a, b in w],  # each window's own frames [a, b) (memory)
        "window_s": float(window_seconds),
        "before": _pick(combine_reports([r["before"] for r in reports], starts)),
        "after": _pick(combine_reports([r["after"] for r in reports], starts)),
        "seconds": float(sum(r["seconds"] for r in reports)),
    }
    figures["frames_per_second"] = total / max(figures["seconds"], 1e-9)
    if source is not None:
        try:
            source_unit = given_unit if source_unit is None else source_unit
            figures.update(_source_figures(source, settings, source_unit, solved))
            warning = height_warning("source", figures["source_height_m"], f"{source_unit:.3g} m a unit",
                                     "the capture's own figures are not meaningful")  # fmt: skip
            if warning:
                notes.append(warning)
        except ValueError as exc:
            notes.append(f"no source figures: {exc}")
    step(1.0)
    series = {"before": stitch_series(before, motion.n_frames), "after": stitch_series(after, motion.n_frames)}
    return PhysicsOutcome(out, figures, series, notes)


LEG_ROLES = {"upper_leg": "hip", "lower_leg": "knee", "foot": "ankle"}  # canonical joint → body-model role


def check_legs(body: BodyModel, labels: dict[str, int]) -> None:
    """Refuse (:class:`.errors.PhysicsError`, naming what is missing) a body whose legs the canonical
    body map ``labels`` (canonical joint → joint of ``body.skeleton``) does not hold, or holds on other
    joints than the body model found: the balance, the contacts and the hip, knee and ankle torques all
    stand on them. An upper-body rig retargeted with Force Partial had its hands taken for feet (the two
    lowest leaf chains): a 0.92 m body, held off the floor on every frame, reported as ZMP inside 100 %."""
    names = body.skeleton.names
    unmapped = [f"{'left' if s == 'L' else 'right'} {c.replace('_', ' ')}" for s in "LR" for c in LEG_ROLES
                if f"{c}.{s}" not in labels]  # fmt: skip
    if unmapped:
        raise PhysicsError(f"the bone map leaves the legs unmapped ({', '.join(unmapped)}): physics needs the "
                           "hips, knees and feet of both legs")  # fmt: skip
    for canonical, role in LEG_ROLES.items():
        mapped = sorted(labels[f"{canonical}.{s}"] for s in "LR")
        found = sorted(body.roles.get(role, []))
        if found != mapped:
            raise PhysicsError(f"the body model's {role} joints ({', '.join(repr(names[j]) for j in found) or 'none'}) "
                               f"are not the bone map's ({', '.join(repr(names[j]) for j in mapped)}): physics "
                               "needs a body whose legs it finds")  # fmt: skip


def _feet(clip: Motion, up: np.ndarray | None = None) -> Contacts:
    """Foot contacts of ``clip`` (:func:`core.contacts.detect_contacts`); no feet is a PhysicsError."""
    try:
        return detect_contacts(clip, up=up)
    except ValueError as exc:
        raise PhysicsError(str(exc)) from exc


def _source_figures(source: Motion, settings: PhysicsSettings, unit: float, solved) -> dict:
    """The source clip's figures on its own body (same stretches)."""
    body = body_model(source.skeleton, settings.source_mass, unit=unit, sex=settings.sex)
    reports = []
    for a, b in solved:
        clip = source.frames(slice(a, b))
        contacts = with_toes(clip, detect_contacts(clip, up=body.up))
        reports.append(report(analyse(clip, contacts, body), body, clip))
    return {"source_height_m": float(body.height), "source": _pick(combine_reports(reports, [a for a, _ in solved]))}


def _jsonable(cause: dict) -> dict:
    """A :func:`.solve.physics_retarget` report's ``torque_causes`` entry with plain Python values, without the ones
    that are None (``repair`` where the repair did not search: an action's record, ID properties, takes none on
    some Blender versions)."""
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in cause.items() if v is not None}


def _pick(figures: dict) -> dict:
    return {k: figures[k] for k in FIGURES if k in figures}


def summary_lines(figures: dict, kilograms=None, metres=None) -> list[str]:
    """The figures as the report reads them, one row each:
    ``physics (90 kg, 1.99 m): ZMP inside 72.9% → 98.8% of contact frames``, ``torque-limit frames …``.
    kilograms, metres: functions writing a mass (kg) and a length (m) in the user's units (Blender
    passes the scene's); default kg, m, and cm for the flight error."""
    b, a = figures["before"], figures["after"]
    kilograms = kilograms or (lambda kg: f"{kg:.3g} kg")
    flight = metres or (lambda m: f"{100 * m:.2g} cm")
    metres = metres or (lambda m: f"{m:.3g} m")
    zmp = f"ZMP inside {100 * b['zmp_inside_share']:.1f}% → {100 * a['zmp_inside_share']:.1f}% of contact frames"
    if figures.get("contact_frames") == 0:  # its share is 1 by convention (metrics.zmp_inside): say so
        zmp = "no contact frames: balance not measured"
    parts = [
        f"physics ({kilograms(figures['target_mass_kg'])}, {metres(figures['target_height_m'])}"
        f"{' measured' if figures['target_height_measured'] else ''}): {zmp}",
        f"torque-limit frames {b['torque_violation_frames']} → {a['torque_violation_frames']}",
    ]
    if a["flight_frames"] or b["flight_frames"]:
        error = f"flight CoM error {flight(b['flight_error_m'])} → {flight(a['flight_error_m'])}"
        if a.get("flight_phases", 0) > 1:  # the clip's RMS can hide one flight far off: name the worst
            error += f" (worst flight {flight(a['flight_error_worst_m'])})"
        parts.append(error)
    else:
        parts.append("no flight")
    parts.append(f"deviation {100 * a['deviation']:.2g}% of height")
    if figures.get("windows"):  # a long clip, solved in windows to bound memory (core/physics/windows.py)
        parts.append(f"solved in {len(figures['windows'])} windows of up to {figures['window_s']:g} s")
    return parts


def summary(figures: dict) -> str:
    """:func:`summary_lines` on one line, joined by "; " (scripts print it)."""
    return "; ".join(summary_lines(figures))


def ground_drawing(s: PhysicsSeries) -> dict:
    """What an overlay draws of a :class:`PhysicsSeries`, in the motion's space (scene units):
    ``zmp`` (T, 3) on the ground plane (NaN where undefined), ``inside`` (T,), and the support
    polygons as ``polygons`` (N, 3) with ``offsets`` (T + 1,): frame t's polygon is
    ``polygons[offsets[t]:offsets[t + 1]]`` (counter-clockwise; empty without support)."""
    hulls = [s.hull(t) for t in range(s.n_frames)]
    offsets = np.concatenate(([0], np.cumsum([len(h) for h in hulls]))).astype(int)
    flat = np.concatenate([h for h in hulls if len(h)]) if offsets[-1] else np.zeros((0, 2))
    return {"zmp": s.to_scene(s.zmp), "inside": s.inside.copy(), "polygons": s.to_scene(flat), "offsets": offsets}
