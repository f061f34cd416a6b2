"""The last stage: what the solve added to the motion, smoothed as far as every figure allows (issue 16's jerk bar).

The solve's change from the input (each joint's local rotation as the log of input⁻¹·result, (T, J, 3), and the
translations' difference, (T, J, 3) scene units) carries what planting and the plans add in a few frames: on a
clean capture the lift that caps a straight leg switches on within two frames, and the Mixamo rig's own walk ends
at ×1.097 of the input's jerk where the bar is ×1.05. That change is smoothed along time by penalised least squares
(:func:`smooth_frames`: third differences, a span of ``tau`` seconds) and put back on the input, for spans from
the widest (:data:`TRIM_SPANS`) down. The first that lowers the jerk and that :func:`_kept` accepts is taken:
every bar of issue 16 the result met still met, no more frames over a limit, no frame over a limit further over,
the ZMP inside, the flights and the deviation no worse (within the bars), and the feet in contact sliding no
farther (:data:`SKATING_SLACK`). None accepted: the result as it was.

Why not always: on noisy captures (CMU cgspeed) the change also cancels the capture's own jitter where planting
pins a foot; smoothing it gives the jitter back (walk 02_01: jerk ×0.977 → ×1.001 and the feet sliding 1.20 → 1.47
m over the clip at 0.02 s), and on 30 fps captures the balance plan's shift is itself a few frames long (Bandai's
walk at 0.03 s: ZMP inside 99.5 → 95.4 %). The jerk and the sliding are read from forward kinematics alone, so a
span that cannot be kept costs no analysis.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts, foot_skating
from ..motion import Motion
from .banded import banded_solve, difference_gram
from .body import BodyModel
from .derivatives import window_half
from .dynamics import torque_ratios
from .flights import FLIGHT_BAR, MOMENTUM_BAR
from .guard import _bars_met, _judged, spread_mask
from .metrics import Analysis, report, torque_regressions, zmp_inside
from .repair import REPAIR_DEVIATION

TRIM_SPANS = (0.03, 0.02, 0.015, 0.01)  # seconds, widest first
SKATING_SLACK = 1.01  # the feet in contact may slide this many times as far over the clip as the solve left them
BLOCK = 16  # rows of the smoother's blocks (:func:`.banded.banded_solve`)
TRIM_ROUNDS = 3  # trials a span: each gives the result's own change back around the frames the last made worse
TRIM_RAMP = 0.1  # seconds of smoothstep either side of such frames (beyond one derivative half-window)
ZMP_SLACK = 0.005  # a result at or above the 99 % bar may give up this share of its contact frames' ZMP inside


def smooth_frames(values: np.ndarray, span: float) -> np.ndarray:
    """``values`` (T, ...) smoothed along time: y minimising |y − values|² + λ·|D³y|², λ = span⁶ (span in frames:
    the third-difference penalty's cut-off period is about 2π·span frames), solved banded (Whittaker's smoother)."""
    t = len(values)
    if t < 4 or span <= 0:
        return np.array(values, dtype=float)
    a = difference_gram(t, 3) * span**6
    a.rows[:, a.band] += 1.0
    # solved on blocks of BLOCK rows, not of the band's 3: a third of the time (2,000 frames, 93 columns: 42 → 15 ms)
    return banded_solve(a.widened(BLOCK), np.reshape(values, (t, -1)), BLOCK).reshape(np.shape(values))


def smoothed_change(motion: Motion, result: Motion, tau: float) -> Motion:
    """``motion`` plus ``result``'s change from it smoothed over ``tau`` seconds (:func:`smooth_frames`)."""
    turn = quat.log(quat.multiply(quat.conjugate(motion.rotations), quat.make_continuous(result.rotations)))
    span = tau * motion.fps
    return _composed(motion, smooth_frames(turn, span), smooth_frames(result.translations - motion.translations, span))


def _jerk(positions: np.ndarray) -> float:
    """Mean |Δ³p| of world joint positions (T, J, 3): the report's jerk up to the constant fps³·unit."""
    return float(quat.length(np.diff(positions, 3, axis=0)).mean()) if len(positions) > 3 else 0.0


def _kept(trial: dict, result: dict, was: dict, worse: int, result_worse: int) -> bool:
    """Whether a smoothed ``trial`` may replace ``result`` (:func:`.metrics.report` of each; ``was`` the input's):
    every bar ``result`` met still met, no more frames over a limit (``worse`` of them further over than in the
    input, ``result_worse`` before), the worst ratio no higher than the result's or, under the limits, the
    input's (the solve holds a motion under every limit at its input's worst: :func:`.solve.solver_body`), the ZMP
    inside, flights and deviation no worse (within their bars)."""
    return (
        _bars_met(trial, was) >= _bars_met(result, was)
        and trial["torque_violation_frames"] <= result["torque_violation_frames"]
        and worse <= result_worse
        and trial["torque_worst_ratio"] <= max(result["torque_worst_ratio"], min(was["torque_worst_ratio"], 1.0))
        and trial["zmp_inside_share"] >= result["zmp_inside_share"] - (ZMP_SLACK if result["zmp_inside_share"] >= 0.99 else 0.0)
        and trial["flight_error_worst_m"] <= max(result["flight_error_worst_m"], FLIGHT_BAR)
        and trial["flight_momentum_change_worst"] <= max(result["flight_momentum_change_worst"], MOMENTUM_BAR)
        and trial["deviation"] <= max(result["deviation"], REPAIR_DEVIATION)
    )  # fmt: skip


def _composed(motion: Motion, turn: np.ndarray, shift: np.ndarray) -> Motion:
    """``motion`` turned by ``turn`` (T, J, 3), quaternion logs in each joint's parent frame, and its translations
    moved by ``shift`` (T, J, 3) scene units."""
    rotations = quat.multiply(motion.rotations, quat.exp(turn))
    return Motion(motion.skeleton, motion.translations + shift, rotations, motion.fps)


def _made_worse(trial: Analysis, ratio: np.ndarray, cap: float, outside: np.ndarray, body: BodyModel) -> np.ndarray:
    """(T,) frames a smoothed ``trial`` made worse: the worst |τ|/limit above the result's ``ratio`` (T,) and above
    ``cap``, or the ZMP of a contact frame outside where the result's was not (``outside`` (T,))."""
    _, contact, signed = zmp_inside(trial)
    raised = torque_ratios(trial.torques, body).max(axis=1) > np.maximum(ratio, cap)
    return raised | (contact & (signed > 0) & ~outside)


def trim_added_jerk(
    motion: Motion,
    result: Motion,
    judged: Analysis,
    after: dict,
    was: dict,
    judged_in: Analysis,
    contacts: Contacts,
    body: BodyModel,
    measure: dict,
    held: np.ndarray | None = None,
    progress=None,
) -> tuple[Motion, Analysis, dict, float]:
    """(result, its judged analysis, its report, the span taken in seconds: 0 for none) after smoothing what the
    solve added (module notes). judged, after: ``result``'s judged analysis (:func:`.guard._judged`) and report;
    was, judged_in: the input's; contacts: the solve's (feet and toes); body: the report's; held: (T,) bool, the
    frames given back as captured (:func:`.unexplained.unexplained`'s held stretches), which stay so."""
    world, fps = result.world_positions(), motion.fps
    jerk, slide = _jerk(world), foot_skating(result, contacts, positions=world).total_distance
    result_worse = len(torque_regressions(judged_in, judged, body))
    ratio = torque_ratios(judged.torques, body).max(axis=1)
    cap = min(was["torque_worst_ratio"], 1.0)
    _, contact, signed = zmp_inside(judged)
    outside = contact & (signed > 0)
    reach, ramp = window_half(measure["smooth"], fps, 3), max(int(round(TRIM_RAMP * fps)), 2)
    turn = quat.log(quat.multiply(quat.conjugate(motion.rotations), quat.make_continuous(result.rotations)))
    shift = result.translations - motion.translations
    for k, tau in enumerate(TRIM_SPANS):
        smooth_turn, smooth_shift = np.split(smooth_frames(np.concatenate((turn, shift), axis=-1), tau * fps), 2, -1)
        level = spread_mask(held, 0, ramp) if held is not None else np.zeros(motion.n_frames)  # 1: the result's own
        for r in range(TRIM_ROUNDS):
            if progress is not None:
                progress((k + (r + 1) / TRIM_ROUNDS) / len(TRIM_SPANS))
            keep = level[:, None, None]
            trial = _composed(
                motion, smooth_turn + keep * (turn - smooth_turn), smooth_shift + keep * (shift - smooth_shift)
            )
            trial_world = trial.world_positions()
            if _jerk(trial_world) >= jerk:
                break
            if foot_skating(trial, contacts, positions=trial_world).total_distance > SKATING_SLACK * slide:
                break
            trial_judged = _judged(trial, contacts, body, measure)
            trial_report = report(trial_judged, body, trial, source=motion)
            worse = len(torque_regressions(judged_in, trial_judged, body))
            if _kept(trial_report, after, was, worse, result_worse):
                return trial, trial_judged, trial_report, tau
            bad = _made_worse(trial_judged, ratio, cap, outside, body)
            if not bad.any():
                break
            level = np.maximum(level, spread_mask(bad, reach, ramp))
    return result, judged, after, 0.0
