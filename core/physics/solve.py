"""Physics-aware retargeting (Jin et al. 2014, after Tak & Ko 2005): make a retargeted motion physically plausible.

Input: a motion already retargeted to the target skeleton (geometric retargeting is another
module's job), its foot contacts and the target's :class:`~.body.BodyModel`. Steps, each stage's notes in its module:

1. Analysis (:func:`.metrics.analyse`): segment kinematics, support polygons (feet, and toes
   when ``toes``: a heel lifted before toe-off still supports on the forefoot), ZMP, torques.
   The feet are planted before the first step and after every pass (:mod:`.planting`).
2. Flight (:mod:`.flights`) and balance plan (:mod:`.plan`; its objective and solver :mod:`.balance`): the CoM on
   its parabola in flight, then a smooth horizontal shift of the placement joint for balance and torques.
3. Unscented Kalman filter, one step per key frame (:mod:`.filter_pass`).
4. Smoothing + displacement mapping (:mod:`.filter_pass`).
5. Flight, once more (:func:`.flights._final_flight`).
6. Final plan: the filter's corrections and the final planting move the ZMP and the torques the
   plan had set (they cannot see the accelerations they cause), so the balance plan runs once
   more on the result (``polish_iterations`` Gauss–Newton steps): the motion returned is the one
   whose exact measures that plan evaluated, and its line search only takes steps that lower the
   objective. Joint-frames still over a torque limit and further over than in the input are
   named in the report (``torque_worse``: the guard on the torque constraint). It holds the
   flight phases as step 5 left them (its shift pinned at zero there, as on held frames): a shift
   moving in flight changes how planting's blends turn the legs there, and on the jumps the final
   plan took the flights' angular momentum change 1.2 → 6.6 %; held, 1.5 %. Its deviation term measures the
   shift from the way back to the input's placement joint (``polish_back``, :class:`.balance.PlanGoals` ``toward``)
   with weight ``polish_deviation``, not from where the filter left it: it takes back what the earlier steps moved
   that balance and torques do not need (benchmark, 1.4× onto 90 kg: deviation on the jumps 1.53 → 1.43 %, walk
   05_01 0.84 → 0.63 %, the dance 1.26 → 1.01 %; with weight 1e-2 as the first plan's, 1.52 % on the jumps).
7. Torque guard (:func:`.guard._guard_torques`).
8. Torque repair (:func:`.repair._repair_torques`).
9. Do no harm (:func:`.guard._do_no_harm`).

10. Retry (``retry_boost``, :func:`_finish`): a result that still misses one of issue 16's bars, judged as the
   report judges it (:func:`.guard._judged`, the contacts its feet bear: ZMP inside on ≥ 99 % of the contact frames, no
   frame over a limit, the worst ratio not above the input's, jerk ≤ ×1.05, deviation ≤ 1.5 %, flight CoM within
   1 mm of its parabola, angular momentum within 5 %), runs steps 6–9 again from the passes' result with
   the final plan weighing the joint-frames the solve made worse like the others (``polish_boost`` 5 → 1), and the
   better by the bars is kept (:func:`.guard._bar_score`: fewer bars missed, then fewer frames over a limit, more ZMP
   inside, less deviation); the second final plan starts from the first's Jacobian. Why: the outcome was chaotic
   in millimetres. ``scripts/perturb_physics.py`` solves a row 7 times (planting's knee cap ×0.998–1.002, i.e.
   ±1–2 mm of the leg; the input's root swayed ±1 mm mid-clip) and gives median [range]; before → after, 1.4×
   onto 90 kg: jumps 01_01 frames over a limit 0 [0–8] → 0 [0–1], worst 1.00 [0.99–1.47] → 0.99 [0.99–1.01], ZMP
   99.4 [97.6–99.4] → 99.4 [99.4–99.8] %, deviation 1.49 [1.43–1.58] → 1.44 [1.40–1.54] %, every bar held in
   2 → 4 of 7 runs (the rest: deviation 1.53–1.54 %, or one frame at 1.01); CMU 06_14 frames 4 [0–15] → 0 [0–2],
   worst 1.08 [0.92–1.43] → 0.99 [0.92–1.12], ZMP 97.9 [94.1–99.6] → 99.4 [99.2–100.0] %, deviation 1.34
   [1.22–1.55] → 1.29 [1.20–1.41] %, bars 1 → 4 of 7; Bandai's punch (no run holds its bars: deviation 3.5–5.7 %)
   frames 6 [1–15] → 6 [1–12], ZMP 77.7 [51.8–84.8] → 79.5 [71.0–86.2] %. Walks 02_01 and 05_01, the dance,
   Mixamo and CC hold every bar in 7 of 7 runs before and after (no retry runs on them); CMU 131_01 is steady
   and no retry wins there (55 [53–58] frames over a limit, ZMP 95.8 [95.0–96.0] %, before and after). Where the runs part:
   traced on the punch at four caps, the passes end within 35–40 frames over a limit and ZMP 39–42 %, the first
   final plan at ZMP 47–56 % and deviation 3.5–5.6 % (Gauss–Newton full steps taken on any decrease of the merit
   on active sets that only grow; the first step alone moves the shift 8–11 units), and the extra final plan is
   kept or refused whole (at ×1.002 refused: ZMP 47 → 67 % but worst 1.64 → 1.92); on the jumps the first plan
   already differs (50 vs 57 frames over a limit at ×1 and ×0.998) and the repair ends at 0 or 8. Neither
   weighing alone is steadier (``polish_boost`` 1 alone: jumps bars in 2 of 7 runs, frames over 3 [0–13]; a
   smooth ramp of the boost: jumps 3/7, 06_14 1/7), nor other second candidates (final plan torque weight 1.0:
   jumps 2/7, 06_14 1/7; no ``polish_back``: 2/7, 1/7), nor choosing between the two final plans before the guard
   and repair (cheaper: jumps 3/7, frames 1 [0–13]). Cost: none where every bar holds (the README's six
   rows: the same figures and speeds, benchmark alternated with main on one core each); otherwise the final
   stages twice, mostly the repair's: CMU 131_01 196 → 136 frames/s of CPU (same figures: the second finish is
   not better), Bandai's tired walk 174 → 148 (ZMP inside 98.4 → 98.8 %, worst 0.99 → 1.00, deviation 1.15 →
   1.22 %), the punch 102 → 64 (same figures); the jumps ×0.998 163 → 107–110 frames/s (load 2–2.5).
   Which bars the second finish moves (benchmark, the 24 rows solved once each, first finish's bars → second's):
   it ran on 17 rows and was kept on 10, by the bars on one (dribble 06_12: 1 frame over a limit → 0, every bar
   held) and by the tie-breaks on nine (frames over a limit: climb 01_14 317 → 301, cartwheel 05_06 163 → 146,
   dance 05_18 132 → 121, hop 131_03 28 → 21, sit 01_08 70 → 63, Bandai's dance 352 → 294 and kick 4 → 3; ZMP
   inside: Bandai's dash 11.1 → 22.2 %, the tired walk 98.4 → 98.8 %). Not kept: jump_01_01_rest (23 → 19 frames
   over a limit, but the flight CoM bar broken), 131_01 (61 → 72), the punch (2 → 6), Bandai's run (jerk bar
   broken), CC's own capture (55 → 60); on Bandai's walk and Mixamo's own capture (the jerk bar alone missed)
   the second was the first: no joint-frame was boosted (:func:`_made_worse`), so both final plans are the same,
   and it is no longer run. No other bar went from missed to held in any row (jerk, deviation, flight CoM and
   momentum never), so a rule on the bars missed that skips the retry on jump_01_01_rest or the cartwheel would
   lose those rows' tie-break wins (skipped on the cartwheel: 163 frames over a limit instead of 146, ZMP inside
   58.2 % instead of 65.0 %): not taken.
11. Jerk trim (:mod:`.jerk_trim`): what the solve added, smoothed along time as far as every figure allows.

An input that already meets every bar of issue 16 as the report judges it (``keep_settled``) is returned as it is:
the stages had moved a still, balanced pose of CMU 02_01 (1.4× onto 90 kg, ZMP inside on every frame, worst
|τ|/limit 0.38) by 3.3 cm on average and its root by 6.7 cm (planting's lift of its straight front leg, then the
balance plan's margin), and raised its worst ratio 0.3805 → 0.3808; on the benchmark, 02_01 on the Mixamo rig (ZMP
inside 99.4 %, worst 0.83, every bar met as retargeted) is the one row so returned.

Where the input is under every torque limit and already balanced, the solve works on limits scaled by
the input's worst |τ|/limit (:func:`solver_body`): the plans, the filter's torque rows, the guard and the
repair then hold the result's worst ratio at the input's (the reports use the real limits). Out of balance the
limits stay, and the do-no-harm guard (step 9) gives back the frames the solve put above the input's worst ratio.

Speed: the plans' (:mod:`.plan`), the guard's and the repair's trials' (:mod:`.repair`) notes. The input's judged
analysis is made once for both finishes, and a finish's own judged result is the report's where the limits are not
scaled.

Progress: ``progress(fraction)`` is called after every evaluation of the clip (each Jacobian
column of the plans, each filter key), with fractions that only grow (:mod:`.progress`), so a
callback that raises stops the solve within one evaluation.

Memory (docs/physics_notes.md, "Long clips"): the plans' regulariser and normal equations are banded
(:class:`.banded.Banded`) and B-splines evaluated from their sparse rows (dense, they grew with the square of the
clip), and no stage holds what the solve does not read again (the pass's filter, a plan's realised motions but its
result, the extra final plan's when not kept, the guard's planting after the repair, the repair's and the do-no-harm
guard's last trial while the next is made, the final plan's Jacobian when no retry can read it): peak traced memory
on looped CMU 02_01 (1.4×, 90 kg) 2,000 frames 243 → 190 MB, 8,000 frames 1,188 → 735 MB, 20,000 frames
2,136 MB (main: 12,000 frames 2,265 MB; ~5.4 GB fitted at 20,000).

BLAS threads are pinned to one while the solve runs (:func:`core.blas.one_blas_thread`, through
OpenBLAS's own symbols: the matrices are 30 × 30, and idle OpenBLAS workers spin a second core).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import NamedTuple

import numpy as np

from ..blas import one_blas_thread
from ..contacts import Contacts
from ..motion import Motion
from .body import BodyModel
from .derivatives import window_half
from .dynamics import inverse_dynamics, torque_ratios
from .feasibility import landing_bound
from .filter_pass import _keys, _pass
from .flights import _final_flight, _flying, airborne
from .guard import BARS, _bar_score, _bars_met, _do_no_harm, _guard_torques, _judged
from .jerk_trim import trim_added_jerk
from .metrics import (
    Analysis,
    analyse,
    analysis_frames,
    mean_jerk,
    report,
    torque_causes,
    torque_regressions,
    zmp_inside,
)
from .metrics import series as physics_series
from .options import PhysicsOptions
from .plan import _balance, state_joints
from .planting import _plant, planting_anchors, with_toes
from .progress import as_progress
from .repair import REPAIR_DEVIATION, _repair_torques
from .unexplained import unexplained


class Prepared(NamedTuple):
    """What :func:`physics_retarget` measures on its input before the stages (module steps 1–11 read it)."""

    motion: Motion  # the input
    before: Analysis  # its analysis on the solver's body, the input's flights marked (``measure["flown"]``)
    contacts: Contacts  # the feet's and toes' contacts the analyses stand on
    feet: Contacts  # planting's: the feet's, anchors eased (:func:`.planting.planting_anchors`)
    body: BodyModel  # the solver's body (:func:`solver_body`)
    report_body: BodyModel  # the report's
    judged_in: Analysis  # the input judged as the report judges it (:func:`.guard._judged`)
    was: dict  # its report
    opts: PhysicsOptions
    measure: dict  # :func:`.metrics.analyse`'s keywords for every analysis of the solve
    keys: np.ndarray  # the filter's key frames (:func:`.filter_pass._keys`) and their stride
    stride: int
    hold: np.ndarray  # (T,) bool: the stretches held off the floor (:func:`.unexplained.unexplained`)


def solver_body(body: BodyModel, before: Analysis, balanced: float, opts: PhysicsOptions) -> BodyModel:
    """The body the solve works with: ``body`` with every torque limit scaled by the input's worst
    |τ|/limit (torques from ``before``, the input's analysis) when that is under 1 and the input is
    already balanced (``balanced``, its share of contact frames with the ZMP inside, at least
    ``zmp_target``), so that every goal, guard and repair holds the result under the input's worst
    ratio (issue 16: the worst |τ|/limit never worse than before; the plans otherwise let a torque
    rise to ``1 − torque_margin`` of its limit: on the Mixamo walk 0.83 → 0.95, with the scaled
    limits 0.79). An input out of balance keeps its limits: bringing the ZMP inside takes torque
    (CMU 02_01's first second, 1.4× onto 90 kg, ZMP inside on 89 % of its contact frames: the hip
    0.71 → 0.79 of its limit; scaled, the solve ended with two frames over the real limit, ZMP 97 %
    and 40 % more jerk). Scaling every limit alike changes no least-torque split (:mod:`.split`)."""
    limited = np.isfinite(body.torque_limits)
    ratios = torque_ratios(before.torques, body)[:, limited]
    worst = float(ratios.max()) if ratios.size else 1.0
    if not (0.0 < worst < 1.0 and balanced >= opts.zmp_target and opts.torques):
        return body
    return replace(body, torque_limits=body.torque_limits * worst)


def _finish(
    out, an, opts, motion, before, planted, contacts, feet, body, measure, hold, polish, judged_in, stage, jacobian=None,
    keep=True,
):  # fmt: skip
    """The final plan(s), the torque guard, the repair and the do-no-harm guard on the passes' result: (motion,
    analysis, the repair's searched frames, the final plan's Jacobian when ``keep``, else None: not held through the
    guard, the repair and the do-no-harm guard, ~8 kB a frame of clip, when no later finish will read it).
    judged_in: the input's :func:`.guard._judged` analysis (with ``body``; the same for every finish, made once). jacobian:
    the final plan's of an earlier finish from the same motion (its measures' Jacobian does not depend on the plan's
    weights: with the defaults, one Jacobian per ``plan_jacobian_every`` = 6 iterations and 4 of them, the plan is
    the same as with a fresh one, without its cost)."""
    last = None
    if polish:  # the filter and the planting move what the plan set: plan again on the result
        final = replace(
            opts,
            plan_iterations=opts.polish_iterations,
            plan_torque_weight=opts.polish_torque_weight,
            plan_deviation=opts.polish_deviation,
        )
        boost = 1.0 + (opts.polish_boost - 1.0) * _made_worse(an, before, body, opts)
        fixed = hold | _flying(an)  # the final flight set the flights: the final plan leaves them as they are
        root = state_joints(body, opts.spine_joints)[0]
        back = (before.kin.joint_pos[:, root] - an.kin.joint_pos[:, root]) / body.unit if opts.polish_back else None
        out, last = _balance(
            out,
            an,
            contacts,
            feet,
            body,
            final,
            measure,
            stage.span(0.0, 0.8),
            boost,
            jacobian,
            hold=fixed,
            toward=back,
        )
        an = analyse(out, contacts, body, **measure)
        if opts.balance and zmp_inside(an)[0] < opts.zmp_target:
            # Balance not yet where it must be: one more final plan from where the last one ended, on its Jacobian (no fresh one), kept if better.
            again, _ = _balance(
                out,
                an,
                contacts,
                feet,
                body,
                final,
                measure,
                stage.span(0.8, 1.0),
                boost,
                last.jacobian,
                hold=fixed,
            )
            again_an = analyse(again, contacts, body, **measure)
            # the report's ZMP inside share and worst ratio, no whole report
            if zmp_inside(again_an)[0] > zmp_inside(an)[0] and _worst_ratio(again_an, body) <= max(
                _worst_ratio(an, body), _worst_ratio(before, body)
            ):
                out, an = again, again_an
            again = again_an = None  # not held through the guard and the repair when not kept
    kept = None if last is None or not keep else last.jacobian
    last = None
    replanted = None  # the guard's planting of its input, for the repair when the guard kept nothing
    if opts.torques and opts.torque_guard:
        out, an, replanted = _guard_torques(out, an, planted, before, contacts, feet, body, opts, measure)
    searched: dict = {}
    if opts.torques and opts.repair_rounds:
        out, an, searched = _repair_torques(out, an, before, motion, contacts, feet, body, opts, measure, replanted)
    replanted = None  # the guard's planting (a motion, another and its analysis): not held through the rest
    # judged as the report judges (by the contacts each motion's own feet bear, :func:`core.contacts.bearing`)
    an = _judged(out, contacts, body, measure)
    out, an = _do_no_harm(out, an, motion, judged_in, contacts, feet, body, opts, measure, hold)
    return out, an, searched, kept


def _worst_ratio(an: Analysis, body: BodyModel) -> float:
    """The worst |τ|/limit of an analysis (:func:`.metrics.report`'s ``torque_worst_ratio``)."""
    ratios = torque_ratios(an.torques, body)
    return float(ratios.max()) if ratios.size else 0.0


def _made_worse(an: Analysis, before: Analysis, body: BodyModel, opts: PhysicsOptions) -> np.ndarray:
    """(T, L) bool: the joint-frames of the limited joints that the solve took near or over their limit (above
    ``1 − torque_margin`` of it) and above the input's ratio (``before``): the ones the final plan weighs
    ``polish_boost`` times (the retry: ``retry_boost`` times; with none of them both final plans are the same)."""
    limited = np.isfinite(body.torque_limits)
    ratio, ratio_in = (torque_ratios(x.torques, body)[:, limited] for x in (an, before))
    return (ratio > 1.0 - opts.torque_margin) & (ratio > ratio_in)


def _measure(opts: PhysicsOptions) -> dict:
    """:func:`.metrics.analyse`'s keywords from the options, before the input's flights and floor are added."""
    return {"smooth": opts.smooth, "free_fall": opts.free_fall, "heel": opts.heel, "width": opts.width}


def physics_retarget(
    motion: Motion,
    contacts: Contacts,
    body: BodyModel,
    options: PhysicsOptions | None = None,
    progress: Callable[[float], None] | None = None,
    series: bool = False,
    toes: Contacts | None = None,
    ground: float | None = None,
) -> tuple[Motion, dict]:
    """Physically plausible version of an already retargeted ``motion`` for ``body`` (module notes).

    contacts: the motion's foot contacts (:func:`core.contacts.detect_contacts`); body: the
    target's body model (:func:`.body.body_model`). Returns the new motion and a report:
    ``before`` and ``after`` metrics (:func:`.metrics.report`; ``after`` with the deviation
    from ``motion``), ``seconds`` and ``frames_per_second`` of the solve (analysis, plan,
    filter, smoothing; not the final metrics), the key frames filtered and the options, and
    ``torque_worse``: the frames over a torque limit that the input had under it or less far over
    (:func:`.metrics.torque_regressions`; empty when the torque constraint held), and
    ``torque_causes``: every frame still over a limit with why (:func:`.metrics.torque_causes`) and
    ``searched`` (the torque repair looked around it and found no motion that keeps the other
    constraints with it under its limits), ``repair`` (why, :func:`.repair._repair_torques`: what the closest motion it
    found left over a limit and which bars refused it, figure against bar; None where not searched) and
    ``bound`` (:func:`.feasibility.landing_bound`'s reason,
    with every joint allowed 1.5 % of the stature: proven infeasible, or "searched, not proven"), and
    ``unexplained``: the stretches the floor-and-feet model cannot explain (:func:`.unexplained.unexplained`:
    ``start``, ``stop``, ``kind``, ``reason``; held ones given back as they were).
    progress: called with the share done (0–1, only growing) after every evaluation of the clip; a
    callback that raises (a cancel) stops the solve there. series: also put
    the per-frame data before and after (:func:`.metrics.series`) in the report under
    ``series`` (``{"before": PhysicsSeries, "after": PhysicsSeries}``; not JSON). toes: ``contacts`` with the toes'
    own (:func:`.planting.with_toes`), ground: the floor's height (scene units along the up axis,
    :func:`.dynamics.ground_height`), each when made on a longer clip ``motion`` is cut from (:mod:`.windows`: every
    window stands on the same floor and toe contacts); default measured on ``motion``.
    """
    opts = options or PhysicsOptions()
    step = as_progress(progress)
    start = time.perf_counter()
    with one_blas_thread():  # small products only: OpenBLAS's idle workers would spin a core
        feet, toes = contacts, with_toes(motion, contacts) if toes is None else toes
        contacts = toes if opts.toes else feet
        measure = _measure(opts)
        before = analyse(motion, contacts, body, ground=ground, **measure)
        # every later analysis judges the input's flights as flights, however the solve leaves them (:func:`.flights`)
        measure["flown"] = _flying(before)
        before = before._replace(flown=measure["flown"])
        feet = planting_anchors(motion, feet, toes, before, body, opts)
        # the plans hold the stretches held off the floor; a ZMP far beyond the feet is named after the
        # solve where it still is (held by the plans, a synthetic walk the solve balances on 79 % of its
        # frames stayed at 4 %: no shift near the motion brings it back was not true of its input)
        hold, unexplained_spans = unexplained(before, body, motion.fps, reach=np.inf)
        step(0.01)
        report_body, body = body, solver_body(body, before, zmp_inside(before)[0], opts)
        measure["ground"] = before.support.ground
        keys, stride = _keys(motion.n_frames, motion.fps, opts.key_rate)
        # the input judged as the report judges it (:func:`.guard._judged`, the contacts its feet bear, the report's body)
        judged_in = _judged(motion, contacts, report_body, measure)
        was = report(judged_in, report_body, motion)
        if opts.keep_settled and len(_bars_met(was | {"deviation": 0.0}, was)) == BARS:  # any change costs closeness
            out, an, judged, searched, after_report, trim_span = motion, judged_in, judged_in, {}, None, 0.0
            step(1.0)
        else:
            prepared = Prepared(motion, before, contacts, feet, body, report_body, judged_in, was, opts, measure, keys,
                                stride, hold)  # fmt: skip
            out, an, judged, searched, after_report, trim_span = _stages(prepared, step)
        beyond = [u for u in unexplained(an, body, motion.fps)[1] if u["kind"] == "beyond the feet"]  # still far
        unexplained_spans = sorted(unexplained_spans + beyond, key=lambda u: u["start"])
    seconds = time.perf_counter() - start
    state = state_joints(body, opts.spine_joints)  # the filter's (the solver's body: the same skeleton and roles)
    rep = _outcome(motion, out, judged_in, judged, was, after_report, report_body, searched, unexplained_spans, opts)
    rep |= {
        "seconds": seconds,
        "frames_per_second": motion.n_frames / seconds,
        "jerk_trim_s": trim_span,
        "key_frames": int(len(keys)),
        "state_dimension": 3 + 3 * len(state[1]),
        "state_joints": [body.skeleton.names[j] for j in [state[0], *state[1]]],
        "options": asdict(opts),
    }
    if series:
        rep["series"] = {"before": physics_series(judged_in, report_body), "after": physics_series(judged, report_body)}
    step(1.0)
    return out, rep


def _outcome(
    motion, out, before, after, was, after_report, body, searched, unexplained_spans, opts
) -> dict:  # fmt: skip
    """The figures :func:`physics_retarget` reports of ``out`` made from ``motion``: before and after (``was``, and
    ``after_report`` when already made), torque_worse, torque_causes (``searched``: the repair's searched frames with
    why) and unexplained; ``before``, ``after``: both judged (:func:`.guard._judged`) on the report's ``body``."""
    return {
        "before": was,
        "after": report(after, body, out, source=motion) if after_report is None else after_report,
        "torque_worse": torque_regressions(before, after, body),
        "torque_causes": _causes(after, body, searched, opts, motion.fps),
        "unexplained": unexplained_spans,
    }


def _causes(after: Analysis, body: BodyModel, searched: dict, opts: PhysicsOptions, fps: float) -> list[dict]:
    """Every frame of ``after`` over a limit with why (:func:`.metrics.torque_causes`), whether the repair searched
    it and what it found (``searched``), and the landing's bound (:func:`.feasibility.landing_bound`)."""
    return [
        c
        | {
            "searched": c["frame"] in searched,
            "repair": searched.get(c["frame"]),
            "bound": landing_bound(
                after, body, c["frame"], body.skeleton.index(c["joint"]), REPAIR_DEVIATION * body.height
            )["reason"],
        }
        for c in torque_causes(after, body, window_half(opts.smooth, fps, 3), opts.free_fall)
    ]


def judge(
    motion: Motion,
    result: Motion,
    contacts: Contacts,
    body: BodyModel,
    options: PhysicsOptions | None = None,
    series: bool = False,
    own: slice | None = None,
    progress: Callable[[float], None] | None = None,
    toes: Contacts | None = None,
    ground: float | None = None,
    unexplained_spans: list[dict] | None = None,
) -> dict:
    """The report :func:`physics_retarget` gives (its ``before``, ``after``, ``torque_worse``, ``torque_causes``,
    ``unexplained`` and with ``series`` its ``series``) of a ``result`` of ``motion`` made otherwise: a long stretch
    solved in overlapping windows and joined (:mod:`.windows`), measured piece by piece. own: the frames reported
    (default all), the others the context they are measured in (two derivative half-windows either side make them
    read as in the whole clip, :func:`.metrics.analysis_frames`); frames in the report count from its start. No frame
    is ``searched`` here: the caller knows which of them its solves searched. progress: called after each of its four
    analyses (a callback that raises stops it there). toes, ground: as :func:`physics_retarget`'s. unexplained_spans:
    the frames the floor-and-feet model cannot explain (:func:`.unexplained.unexplained`'s, in ``motion``'s frames),
    when found on more of the clip than this context (a run of the ZMP beyond the feet is named whole where it goes
    farthest; the windows' solves see 2 s either side of their pieces); default found here."""
    opts = options or PhysicsOptions()
    step = progress or (lambda _x: None)
    lo, hi, _ = (own or slice(0, motion.n_frames)).indices(motion.n_frames)
    with one_blas_thread():
        if opts.toes:
            contacts = with_toes(motion, contacts) if toes is None else toes
        measure = _measure(opts)
        # the flights, the floor and the unexplained frames read no torques: the split is left out (most of the cost)
        before = analyse(motion, contacts, body, least=False, ground=ground, **measure)
        measure["flown"] = _flying(before)
        measure["ground"] = before.support.ground
        step(0.1)
        spans = unexplained_spans
        if spans is None:
            spans = unexplained(before._replace(flown=measure["flown"]), body, motion.fps, reach=np.inf)[1]
            an = analyse(result, contacts, body, least=False, **measure)
            spans += [u for u in unexplained(an, body, motion.fps)[1] if u["kind"] == "beyond the feet"]
            del an
        del before
        step(0.2)
        judged_in = _judged(motion, contacts, body, measure)
        step(0.6)
        judged = _judged(result, contacts, body, measure)
        step(1.0)
        part = slice(lo, hi)
        piece_in, piece_in_motion = analysis_frames(judged_in, part), motion.frames(part)
        piece_out = analysis_frames(judged, part)
        rep = {
            "before": report(piece_in, body, piece_in_motion),
            "after": report(piece_out, body, result.frames(part), source=piece_in_motion),
            "torque_worse": [
                w | {"frame": w["frame"] - lo}
                for w in torque_regressions(judged_in, judged, body)
                if lo <= w["frame"] < hi
            ],
            "torque_causes": [
                c | {"frame": c["frame"] - lo}
                for c in _causes(judged, body, {}, opts, motion.fps)
                if lo <= c["frame"] < hi
            ],
            "unexplained": [
                u | {"start": max(u["start"], lo) - lo, "stop": min(u["stop"], hi) - lo}
                for u in sorted(spans, key=lambda u: u["start"])
                if u["start"] < hi and u["stop"] > lo
            ],
        }
    # the third differences from every own frame, those across the cut after it too (each counted in one piece)
    end = min(hi + 3, motion.n_frames)
    rep["before"]["jerk_m_s3"] = mean_jerk(judged_in.kin.joint_pos[lo:end], motion.fps)
    rep["after"]["jerk_m_s3"] = mean_jerk(judged.kin.joint_pos[lo:end], motion.fps)
    if series:
        rep["series"] = {"before": physics_series(piece_in, body), "after": physics_series(piece_out, body)}
    return rep


def _stages(p: Prepared, step) -> tuple[Motion, Analysis, Analysis, dict, dict | None, float]:
    """Steps 1–11 of the module notes on an input that misses a bar (what :func:`physics_retarget` measured first):
    (result, its analysis on the solver's body, its judged analysis on the report's, the frames the repair searched
    with why, its report when made here, the jerk trim's span in seconds)."""
    out, an = p.motion, p.before
    if p.opts.plant:
        out = _plant(p.motion, p.feet, hinge=True)
        step.tick()
        # with flights the pass reads only its flights and kinematics (it analyses the motion they shift anew):
        # the ground-force split is solved only where its balance plan reads it
        an = analyse(out, p.contacts, p.body, least=False, **p.measure)
        if not (p.opts.flight and len(airborne(an))):
            an = an._replace(dynamics=inverse_dynamics(an.kin, p.body, an.support, p.opts.free_fall))
    planted = out
    passes = max(p.opts.passes, 1)
    polish = p.opts.polish_iterations > 0 and (p.opts.balance or p.opts.torques)
    end = 0.75 if polish else 0.97
    step(0.02)
    for k in range(passes):
        part = step.span(0.02 + (end - 0.02) * k / passes, 0.02 + (end - 0.02) * (k + 1) / passes)
        out = _pass(
            out, an, p.contacts, p.feet, p.body, p.opts, p.measure, p.keys, p.stride, part.span(0, 0.98), p.hold
        )
        if p.opts.plant:
            out = _plant(out, p.feet)
            part(0.99)
        an = analyse(out, p.contacts, p.body, least=False, **p.measure)  # the split is solved below, when needed
        part(1.0)
    if p.opts.flight and len(airborne(an)):
        out, an = _final_flight(out, an, p.contacts, p.feet, p.body, p.opts, p.measure)
    else:
        an = an._replace(dynamics=inverse_dynamics(an.kin, p.body, an.support, p.opts.free_fall))
    first_in = (out, an)
    # each motion judged by the contacts its own feet can bear (:func:`.guard._judged`), on the report's body; the
    # finishes judge on the solve's, the same analysis when the limits were not scaled (:func:`solver_body`)
    judged_solver = p.judged_in if p.body is p.report_body else _judged(p.motion, p.contacts, p.body, p.measure)

    def judged_of(finished: tuple) -> Analysis:
        return finished[1] if p.body is p.report_body else _judged(finished[0], p.contacts, p.report_body, p.measure)

    args = (p.motion, p.before, planted, p.contacts, p.feet, p.body, p.measure, p.hold, polish, judged_solver)
    # the retry (below) runs only when the passes' result has joint-frames the final plan weighs differently
    weighs_apart = polish and p.opts.retry_boost > 0 and p.opts.retry_boost != p.opts.polish_boost
    retry = weighs_apart and bool(_made_worse(an, p.before, p.body, p.opts).any())
    first = _finish(out, an, p.opts, *args, step.span(end, 0.99), None, retry)  # the Jacobian kept for a retry
    out, an, searched, jacobian = first
    judged = judged_of(first)
    after_report = None  # the result's report, when made here
    if weighs_apart:
        after_report = report(judged, p.report_body, out, source=p.motion)
        score = _bar_score(after_report, p.was)
        # a bar missed: the final stages again with the other weighing of the worse joint-frames (none of them:
        # the same final plan, the same result)
        if score[0] and retry:
            second = _finish(
                first_in[0],
                first_in[1],
                replace(p.opts, polish_boost=p.opts.retry_boost),
                *args,
                step.span(0.99, 0.995),
                jacobian,
                False,
            )
            judged_second = judged_of(second)
            after_second = report(judged_second, p.report_body, second[0], source=p.motion)
            if _bar_score(after_second, p.was) < score:
                (out, an, searched, _), judged, after_report = second, judged_second, after_second
    trim_span = 0.0
    if p.opts.trim_jerk:  # what the solve added, smoothed as far as every figure allows (:mod:`.jerk_trim`)
        after_report = report(judged, p.report_body, out, source=p.motion) if after_report is None else after_report
        trim = (
            judged,
            after_report,
            p.was,
            p.judged_in,
            p.contacts,
            p.report_body,
            p.measure,
            p.hold,
            step.span(0.995, 1.0),
        )
        out, trimmed, after_report, trim_span = trim_added_jerk(p.motion, out, *trim)
        if trim_span:
            judged = trimmed
            an = trimmed if p.body is p.report_body else _judged(out, p.contacts, p.body, p.measure)
    return out, an, judged, searched, after_report, trim_span
