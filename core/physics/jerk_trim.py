"""The last stage: what the solve added to the motion, smoothed as far as every figure allows (issue 16's jerk bar).

The solve's change from the input (:func:`.displacement.displacement_between`: each joint's rotation vector in its
own frame, (T, J, 3) radians, and the translations' difference, (T, J, 3) scene units) carries what planting and the
plans add in a few frames: on a clean capture the lift that caps a straight leg switches on within two frames, and
the Mixamo rig's own walk ended at ×1.097 of the input's jerk where the bar is ×1.05. That change is smoothed along
time by penalised least squares (:func:`smooth_frames`: third differences, a span of ``tau`` seconds) and put back
on the input, for every span of :data:`TRIM_SPANS`. A trial is accepted when it lowers the jerk, lets the feet in
contact slide at most :data:`SKATING_SLACK` as far over the clip, and :func:`_kept` accepts it: every bar of issue 16
the result met still met and no figure worse than the result's (frames and joint-frames over a limit, frames further
over than in the input, the worst ratio, the ZMP inside and its distance outside, each flight), the deviation within
:data:`DEVIATION_SLACK`. A trial refused gives back the result's own change around the frames it made worse (a ratio
above the result's, a ZMP farther outside), over one derivative half-window and a :data:`TRIM_RAMP` smoothstep, and
is tried again (:data:`TRIM_ROUNDS`): all of it at once, or half of what is left each round (:data:`GIVE_BACK`; all
of it on the last); a trial sliding too far (up to :data:`RESCUE_SLACK`) is judged too, since what is given back
may pin its feet. Of the trials
accepted (a span and a way each, widest span first) a later one replaces the one taken only with less jerk and no
figure worse than it (:func:`_better`); the held stretches keep the result's change throughout (given back as
captured). None accepted: the result as it was. The frames still over a limit are then named from the trimmed
result; a cause's ``repair`` note is the repair's search around the result before the trim.

Why both ways and every span (session 20, benchmark 1.4× onto 90 kg): giving all back at once, Bandai's walk kept
0.02 s at ×1.062 (0.03 s lost the ZMP bar on two frames and slid 1.5 % farther); half a round keeps 0.03 s at ×1.037,
its feet sliding 0.95 % farther. On the hop giving all back at once is the smoother (×1.125: the halves leave its
flight's momentum worse round after round), and on Bandai's dash the widest span kept is not the smoothest (0.03 s
×1.109, 0.015 s ×1.097).

Why not always: on noisy captures (CMU cgspeed) the change also cancels the capture's own jitter where planting
pins a foot; smoothing it gives the jitter back (walk 02_01: jerk ×0.977 → ×1.001 and the feet sliding 1.20 → 1.47
m over the clip at 0.02 s), and on 30 fps captures the balance plan's shift is itself a few frames long (Bandai's
walk at 0.03 s: ZMP inside 99.5 → 95.4 %). The jerk is read from forward kinematics alone, so a span that only
raises it costs no analysis.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..contacts import Contacts, foot_skating
from ..motion import Motion
from .banded import banded_solve, difference_gram
from .body import BodyModel
from .derivatives import window_half
from .displacement import displace, displacement_between
from .dynamics import torque_ratios
from .guard import SAME, _bars_met, _judged, spread_mask
from .metrics import Analysis, mean_jerk, report, torque_regressions, zmp_inside

BLOCK = 16  # rows of the smoother's blocks (:func:`.banded.banded_solve`)
TRIM_SPANS = (0.03, 0.02, 0.015, 0.01)  # seconds, widest first
MIN_SPAN = (
    0.4  # frames: a narrower span moves the clip's fastest wiggle (2 frames a cycle) by under a tenth (24–30 fps)
)
SKATING_SLACK = 1.01  # the feet in contact may slide this many times as far over the clip as the solve left them
RESCUE_SLACK = 1.02  # … and a trial sliding up to this far is judged and given back in rounds (farther: dropped:
# Bandai's walk, rescued, slid 1.5 % farther at first; judging every trial cost the hop and 131_01 a fifth of their
# solve for nothing: the hop 126 → 152 frames per CPU second with this cap, paired at load 2.3; the run ×1.322 →
# ×1.355)
DEVIATION_SLACK = 1e-4  # … and the mean joint deviation be this share of the stature more (0.2 mm on 1.8 m)
TRIM_ROUNDS = 6  # trials a span and share: each gives back the result's change around the frames the last made worse
GIVE_BACK = (1.0, 0.5)  # shares of what is left given back a round: all, or half (the smoother of the two kept)
TRIM_RAMP = 0.1  # seconds of smoothstep either side of such frames (beyond one derivative half-window)


def smooth_frames(values: np.ndarray, span: float) -> np.ndarray:
    """``values`` (T, ...) smoothed along time: y minimising |y − values|² + λ·|D³y|², λ = span⁶ (span in frames;
    for spans of a frame or more the cut-off period is about 2π·span frames), solved banded (Whittaker's smoother)."""
    t = len(values)
    if t < 4 or span <= 0:
        return np.array(values, dtype=float)
    a = difference_gram(t, 3) * span**6
    a.rows[:, a.band] += 1.0
    # solved on blocks of BLOCK rows, not of the band's 3: a third of the time (2,000 frames, 93 columns: 42 → 15 ms)
    return banded_solve(a.widened(BLOCK), np.reshape(values, (t, -1)), BLOCK).reshape(np.shape(values))


def smoothed_change(motion: Motion, result: Motion, tau: float, keep: np.ndarray | None = None) -> Motion:
    """``motion`` plus ``result``'s change from it (:func:`.displacement.displacement_between`) smoothed over ``tau``
    seconds (:func:`smooth_frames`), except by ``keep`` (T,) in [0, 1]: 1 keeps the result's own change there."""
    change = _change(motion, result)
    return _changed(motion, change, smooth_frames(change, tau * motion.fps), keep)


def _change(motion: Motion, result: Motion) -> np.ndarray:
    """(T, J, 6) ``result``'s change from ``motion``: translations' difference, then rotation vectors."""
    return np.concatenate(displacement_between(motion, result), axis=-1)


def _changed(motion: Motion, change: np.ndarray, smooth: np.ndarray, keep: np.ndarray | None) -> Motion:
    """``motion`` plus the ``smooth`` change, ``change`` itself by ``keep`` (T,) (both (T, J, 6), :func:`_change`)."""
    if keep is not None:
        smooth = smooth + keep[:, None, None] * (change - smooth)
    return displace(motion, smooth[..., :3], smooth[..., 3:])


def _no_worse(trial: float, result: float, slack: float = 0.0) -> bool:
    return trial <= result + slack + SAME * abs(result)


def _kept(trial: dict, result: dict, was: dict, worse: int, result_worse: int) -> bool:
    """Whether a smoothed ``trial`` may replace ``result`` (:func:`.metrics.report` of each; ``was`` the input's):
    every bar ``result`` met still met, and no figure worse than ``result``'s (within float rounding): frames and
    joint-frames over a limit, frames further over than in the input (``worse``, ``result_worse``), the worst ratio,
    the ZMP inside and its mean distance outside, each flight's path and momentum; the deviation within
    :data:`DEVIATION_SLACK`."""
    return (
        _bars_met(trial, was) >= _bars_met(result, was)
        and trial["torque_violation_frames"] <= result["torque_violation_frames"]
        and trial["torque_violations"] <= result["torque_violations"]
        and worse <= result_worse
        and _no_worse(trial["torque_worst_ratio"], result["torque_worst_ratio"])
        and _no_worse(-trial["zmp_inside_share"], -result["zmp_inside_share"])
        and _no_worse(trial["zmp_outside_mean_m"], result["zmp_outside_mean_m"])
        and _no_worse(trial["flight_error_worst_m"], result["flight_error_worst_m"])
        and _no_worse(trial["flight_momentum_change_worst"], result["flight_momentum_change_worst"])
        and _no_worse(trial["deviation"], result["deviation"], DEVIATION_SLACK)
    )


def _made_worse(trial: Analysis, ratio: np.ndarray, signed: np.ndarray, body: BodyModel) -> np.ndarray:
    """(T,) frames a smoothed ``trial`` made worse than the result: a worst |τ|/limit above the result's worst, or
    over a limit and above that frame's (``ratio`` (T,), the result's), or the ZMP of a contact frame outside and
    farther out than the result's (``signed`` (T,), scene units from its polygon, negative inside). A ratio that
    rises under both is no worse by any figure."""
    _, contact, trial_signed = zmp_inside(trial)
    trial_ratio = torque_ratios(trial.torques, body).max(axis=1)
    raised = (trial_ratio > ratio.max() * (1 + SAME)) | ((trial_ratio > 1.0) & (trial_ratio > ratio * (1 + SAME)))
    return raised | (contact & (trial_signed > 0) & (trial_signed > signed))


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
    progress: Callable[[float], None] | None = None,
) -> tuple[Motion, Analysis, dict, float]:
    """(result, its judged analysis, its report, the span taken in seconds: 0 for none) after smoothing what the
    solve added (module notes). judged, after: ``result``'s judged analysis (:func:`.guard._judged`) and report;
    was, judged_in: the input's; contacts: the solve's (feet and toes); body: the report's; held: (T,) bool, the
    frames given back as captured (:func:`.unexplained.unexplained`'s held stretches), which stay so."""
    world, fps = result.world_positions(), motion.fps
    jerk, slide = mean_jerk(world), foot_skating(result, contacts, positions=world).total_distance
    result_worse = len(torque_regressions(judged_in, judged, body))
    ratio = torque_ratios(judged.torques, body).max(axis=1)
    signed = zmp_inside(judged)[2]
    reach = window_half(measure["smooth"], fps, 3) if measure["smooth"] > 0 else 1
    ramp = max(int(round(TRIM_RAMP * fps)), 2)
    spans = [tau for tau in TRIM_SPANS if tau * fps >= MIN_SPAN]
    change = _change(motion, result)
    held_keep = spread_mask(held, 0, ramp) if held is not None else np.zeros(motion.n_frames)  # 1: the result's own
    args = (motion, change, contacts, body, measure, judged_in, after, was, result_worse, slide, reach, ramp)
    trials = _Trials(*args, ratio, signed)
    best, best_worse, bound = (result, judged, after, 0.0), result_worse, jerk
    for k, tau in enumerate(spans):
        if progress is not None:
            progress((k + 1) / len(spans))
        smooth = smooth_frames(change, tau * fps)
        for share in GIVE_BACK:
            kept = trials.rounds(smooth, held_keep, share, bound)
            if kept is not None and _better(kept[2], best[2], was, kept[3], best_worse):
                best, best_worse, bound = (*kept[:3], tau), kept[3], kept[4]
    return best


def _better(trial: dict, best: dict, was: dict, worse: int, best_worse: int) -> bool:
    """Whether an accepted trial's report replaces the ``best`` so far: less jerk, and :func:`_kept` against it."""
    return trial["jerk_m_s3"] < best["jerk_m_s3"] and _kept(trial, best, was, worse, best_worse)


class _Trials(NamedTuple):
    """One trim's trials: ``change`` (:func:`_change`) smoothed on ``motion`` and judged against the result (its
    report ``after``, ``result_worse`` frames worse than the input, its feet's ``slide``, per-frame worst
    ``ratio`` and ZMP ``signed`` distance); the input's ``was`` and ``judged_in``; ``reach`` and ``ramp`` in frames."""

    motion: Motion
    change: np.ndarray
    contacts: Contacts
    body: BodyModel
    measure: dict
    judged_in: Analysis
    after: dict
    was: dict
    result_worse: int
    slide: float
    reach: int
    ramp: int
    ratio: np.ndarray
    signed: np.ndarray

    def rounds(
        self, smooth: np.ndarray, keep: np.ndarray, share: float, bound: float
    ) -> tuple[Motion, Analysis, dict, int, float] | None:
        """The first trial with the ``smooth`` change (but ``keep``) that :func:`_kept` accepts and that slides within
        :data:`SKATING_SLACK` (None: none in :data:`TRIM_ROUNDS`); each round gives back ``share`` of what is left of
        the result's change around the frames the last made worse (:func:`_given_back`). A trial sliding too far but
        within :data:`RESCUE_SLACK` is still judged: what is given back where it made a figure worse may pin its feet
        too; one sliding farther ends the rounds unjudged. A trial whose jerk
        (:func:`.metrics.mean_jerk` of its positions) is not under ``bound`` (the best's so far) ends the rounds
        unjudged: the later rounds only give back more of the result's change."""
        for _ in range(TRIM_ROUNDS):
            trial = _changed(self.motion, self.change, smooth, keep)
            world = trial.world_positions()
            jerk = mean_jerk(world)
            if jerk >= bound:
                return None
            skate = foot_skating(trial, self.contacts, positions=world).total_distance
            if skate > RESCUE_SLACK * self.slide:  # farther than the rounds' give-back pins back: no analysis
                return None
            slides = skate > SKATING_SLACK * self.slide
            judged = _judged(trial, self.contacts, self.body, self.measure)
            rep = report(judged, self.body, trial, source=self.motion)
            worse = len(torque_regressions(self.judged_in, judged, self.body))
            if not slides and _kept(rep, self.after, self.was, worse, self.result_worse):
                return trial, judged, rep, worse, jerk
            made = spread_mask(_made_worse(judged, self.ratio, self.signed, self.body), self.reach, self.ramp)
            more = _given_back(keep, made, share)
            if not (more > keep + 1e-9).any():  # nothing new to keep: the next trial would be this one
                return None
            keep = more
        return None


def _given_back(keep: np.ndarray, worse: np.ndarray, share: float) -> np.ndarray:
    """``keep`` (T,) raised by ``share`` of what is left to 1 where ``worse`` (T,) in [0, 1], so that a frame made
    worse on every round has it all back on the last (:data:`TRIM_ROUNDS`); at share 1 to ``worse`` at once."""
    if share >= 1:
        return np.maximum(keep, worse)
    more = keep + share * (1 - keep) * worse
    return np.where(1 - more <= share ** (TRIM_ROUNDS - 1) + SAME, 1.0, more)
