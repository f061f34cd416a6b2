"""Physics-aware retargeting (Jin et al. 2014, after Tak & Ko 2005): make a retargeted motion physically plausible.

Input: a motion already retargeted to the target skeleton (geometric retargeting is another
module's job), its foot contacts and the target's :class:`~.body.BodyModel`. Steps:

1. Analysis (:func:`.metrics.analyse`): segment kinematics, support polygons (feet, and toes
   when ``toes``: a heel lifted before toe-off still supports on the forefoot), ZMP, torques.
2. Flight: in flight phases the input is moved so its CoM follows the ballistic parabola
   bridging take-off and landing (zero shift at both ends; a rigid shift is exact in flight).
   Balance plan (:mod:`.balance`): a smooth horizontal shift δ(t) of the placement joint, the
   feet planted again, solved by Gauss–Newton on the exact ZMP and inverse-dynamics torques of
   the shifted motion, so that the ZMP stays ``margin`` inside the support polygon and the
   hip, knee, ankle and spine torques under their limits (the per-frame filter cannot foresee
   the accelerations its own corrections cause; the plan sees them). The torques the plan sees
   hold the double-support ground-force split of its reference motion (:mod:`.split`; re-solved
   on every evaluation, the least split turns at kinks as the joints that bind change, and on the
   jumps the plan's Gauss–Newton then stalled at a merit five times higher); every figure after
   the plan is measured with the split solved anew. The reference motion is
   the input with the plan applied. The shift's jerk (third differences of its controls,
   ``plan_jerk``) is penalised too: it adds to the motion's (on 02_01 the plans added 7 %
   of the input's jerk, the final plan 6 % more; with the penalty 4.6 % in all, planting 0.8 %).
   So is the shift's exact acceleration that the measures' 0.2 s derivative window does not see
   (``plan_unseen``, :mod:`.balance`): without it the plans wiggled the shift at ~11 Hz, moving the
   measured ZMP but not the real one (benchmark, CMU 131_01: jerk ×3.3 of the input's; the jumps'
   ZMP inside 99.5 % with the 0.2 s window, 30 % re-measured with a 0.1 s one, the input 78 %).
3. Unscented Kalman filter, one step per key frame (``key_rate`` per second). State (reduced,
   to keep it fast): the placement joint's translation and the rotations of the pelvis (body
   root), up to ``spine_joints`` spine joints, hips, knees and ankles — 3 + 3·K tangent
   dimensions, typically K = 9 → 30, 61 sigma points, all pushed through forward kinematics
   at once. Prediction: the displacement-mapped reference frame, x_t = ref_t ⊕ ρ·(x_{t−1} ⊖
   ref_{t−1}) with ρ = exp(−Δt/``decay``) (displacements fade back to the reference), process
   noise ``sigma_root``, ``sigma_rotation`` per √s. Measurements ("goals", their noise being
   stiffness knobs): contact joints (feet, toes) at their anchors; the ZMP (moved as much as
   the CoM moves from the reference's) at the reference's ZMP projected into the polygon; torques
   of hips, knees, ankles and spine clamped to their limits (rows only for joints over
   ``1 − torque_margin`` of the limit; torques from a reduced, quasi-static measure: the
   reference frame's body forces and ground forces held fixed, moment arms from the sigma
   pose); in flight the CoM on a ballistic parabola bridging take-off and landing and the
   angular momentum about the CoM equal to its mean over the phase (reference velocities,
   sigma-pose arms and inertia).
   Stiffness (``stiffness`` s, default 1, one knob for both noise matrices): Q = Q₀/s and
   R = s·R₀, i.e. the process standard deviations divided by √s and every measurement's
   multiplied by √s. The Kalman gain follows the ratio of prior to measurement covariance,
   which s divides by s²: a stiffer filter keeps the pose closer to its prediction (the
   reference: the input with the balance plan and flight corrections), a softer one follows
   the per-frame goals further. Measured with the Retarget operator on CMU 02_01 retargeted
   1.4× (90 kg), s = 0.3 / 1 / 3: ZMP inside 90.7 / 99.4 / 99.4 % of contact frames,
   deviation 1.1 / 0.8 / 0.7 % of the stature, torque-limit frames 23 / 24 / 24.
4. Smoothing + displacement mapping: the filtered displacements at the key frames are fitted
   with a penalised cubic B-spline (control every key, ``smoothing`` the second-difference
   weight), which removes frame-to-frame jitter, and the reference motion is warped by it
   (q·exp(v/2), p + v) on every frame.
5. Flight, once more (:func:`_final_flight`): the filter and the smoothing bend the flight paths
   the reference had, so in each flight phase the whole body is turned about its CoM to hold the
   angular momentum about the CoM at its phase mean (θ̇ = I⁻¹(L̄ − L), :func:`_flight_spin`), then
   shifted so the CoM follows the parabola bridging take-off and landing, twice (the second
   turn measures L on the phase's own frames, :func:`.dynamics.phase_momentum`, as the report
   does: the clip-wide derivative windows mix take-off and landing into the phase's first and
   last 0.1 s; on the jumps that measure gives 12.6 % where the phase's own frames give 9.1 %
   before, and the solve ended at 7.5 % on it when it turned on the clip-wide L). The final plan
   after it keeps flight ballistic (its regulariser penalises the shift's acceleration in flight,
   and a shift does not change the momentum about the CoM).
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

7. Torque guard (:func:`_guard_torques`): frames over a limit and further over than in the input
   are blended back towards the (planted) input with a smooth 0.3 s bump, a quarter more each
   round, kept only while that leaves fewer such frames and no fewer contact frames with the ZMP
   inside.
8. Torque repair (:func:`_repair_torques`): around the frames still over a limit (±0.35 s, the
   windows of frames worse than the input first, at most four a round), a local plan on that
   stretch alone moves the body in 3-D — up and down too: a knee or hip over its limit on a
   landing needs less flexion or a slower deceleration, which only the vertical shift gives —
   with a five times stronger torque weight aiming 2 % under the limits, the shift held at zero
   at the window's inner ends; a clip edge is searched inwards (its frames' derivatives come from
   a one-sided window, the same before and after). A window's shift is kept only when, measured
   on the whole clip, fewer frames stay over a limit there (or as many, less far over), no more
   frames are worse than the input, the ZMP stays inside on as many contact frames (or at least
   ``zmp_target``), the deviation stays within 1.5 % of the stature (or 0.1 % above what it was),
   and jerk and flight stay within issue 16's bars (or as they were; each flight, not only their RMS: a trial
   that only a flight refuses is first turned and shifted back in the flights it touches, :func:`_flights_restored`). What remains is reported
   per frame with its cause (:func:`.metrics.torque_causes`: gravity alone, clip edge, dynamics)
   and whether the repair searched it and found nothing that keeps every other constraint.
   Measured (benchmark, 1.4× CMU onto 90 kg): frames over a limit on walk 02_01 2 → 0 (its last
   two, the clip edge), on the dance 2 → 0, on the jumps 20 → 7 (the four worse than the input
   among them fixed). A trial that is better but refused (a frame left worse than the input, a bar) is searched
   on once more from where it ended (``REPAIR_FOLLOW``): on the jumps' landing at 643–656 the first local plan
   left 2–5 of 8 frames over and one worse than the input, depending on ``plan_unseen`` (0.003–0.005), the second
   none. A trial refused because it moved a flight (the CoM off its parabola past the bar, or its angular momentum)
   is searched once more from the start with the flights held: at 0.005 the right ankle at 289–290 (1.02, after
   a landing) was repaired only by a trial that took the flight CoM error 0.72 → 1.01 mm; with the flights held,
   0.73 mm. The jumps now end with no frame over a limit at ``plan_unseen`` 0.003, 0.004 and 0.005 (deviation
   1.45, 1.43, 1.45 %; before these searches 8, 0 and 8 frames stayed over).

9. Do no harm (:func:`_do_no_harm`): frames the floor-and-feet model cannot explain
   (:mod:`.unexplained`: a stretch without foot contact that does not fall — held by the hands or
   equipment; a ZMP run farther outside the feet than a shift near the motion can bring back) are
   named in the report; the held ones are held by every plan (their shift pinned at zero, where the
   flight regulariser used to carry a landing's shift back across them linearly: on CMU 01_14, 30 cm
   over 1.4 s of sitting, 8.4 % mean deviation) and given back as captured. Then, while the result
   has more frames over a torque limit than the input, a higher worst ratio or a flight whose angular
   momentum changes more, frames made worse are given back to the input (whole derivative windows,
   0.3 s smoothstep ramps) until it has not. Contacts: a foot sliding more than ``LEASH`` of the
   stature from its span's anchor (a pivot, a shuffle under the speed threshold) is planted on a
   leash instead (:func:`core.contacts.leash_anchors`; on CMU 06_12 planting dragged a foot 36 cm).

10. Retry (``retry_boost``, :func:`_finish`): a result that still misses one of issue 16's bars, judged as the
   report judges it (:func:`_judged`, the contacts its feet bear: ZMP inside on ≥ 99 % of the contact frames, no
   frame over a limit, the worst ratio not above the input's, jerk ≤ ×1.05, deviation ≤ 1.5 %, flight CoM within
   1 mm of its parabola, angular momentum within 5 %), runs steps 6–9 again from the passes' result with
   the final plan weighing the joint-frames the solve made worse like the others (``polish_boost`` 5 → 1), and the
   better by the bars is kept (:func:`_bar_score`: fewer bars missed, then fewer frames over a limit, more ZMP
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

Planting (:func:`_plant`) pins each foot to its contact's anchor; the anchors it gets are eased in and
out over each span's first and last ``plant_ease`` seconds (``MIN_EASE`` frames at least, :func:`eased_anchors`), so a
foot leaves its anchor at the velocity the motion has there rather than stopping dead and jumping to it (third
differences that added 3.8 % to the CC walk's jerk, planting alone); next to a flight the pins stay (eased there, the
jumps' flight momentum changed by 42 % instead of 4.7 %). Measured with the benchmark: jerk after / before
CC 02_01 1.079 → 1.025, walk 02_01 1.050 → 0.975, 05_01 0.991 → 0.974, Mixamo 1.039 → 1.007, deviation
0.69 → 0.50 %, 0.87 → 0.49 %, 0.79 → 0.67 %, 0.36 → 0.26 % (the dance 1.19 → 1.32 %, the jumps unchanged);
the ankle then moves off its anchor along the ground by 0.3 % of the body size on average over a contact's
frames on walk 02_01, up to 3.3 % on its last frame (where the motion's ankle has already rolled forward).
Those figures are over 0.1 s; the ease now lasts 0.2 s (:func:`eased_anchors`: the clean Mixamo walk's jerk).

Where the input is under every torque limit and already balanced, the solve works on limits scaled by
the input's worst |τ|/limit (:func:`solver_body`): the plans, the filter's torque rows, the guard and the
repair then hold the result's worst ratio at the input's (the reports use the real limits). Out of balance the
limits stay, and the do-no-harm guard (step 9) gives back the frames the solve put above the input's worst ratio.

Speed: the plans' Jacobians dominate. Each is C·D finite-difference columns (C colours, D = 2),
realised and measured in batches (:class:`_Batch`: the copies one after another, planted in one
call, analysed with ``clips``), and a plan computes one Jacobian for all its Gauss–Newton steps
(``plan_jacobian_every``); the colouring reach is two control spacings plus one derivative
window, the clip's first and last half-window of frames reaching from the centre of the
one-sided window they are differentiated on (exact: 11 colours at 120 fps instead of the 17 of
twice the window), leaving out planting's blend (a contact's last frame moves the swing frames
after it; measured on the four CMU clips of the benchmark, the plans with and without that
coupling in the reach agree to three decimals of every figure). The plans' evaluations leave the
angular momentum out, and the extra final plan (when the ZMP is still inside on fewer than
``zmp_target`` of the contact frames) starts from the last plan's Jacobian. The torque guard's and
repair's trials are re-analysed on the frames they change only (:func:`.metrics.analyse_changed`:
the changed span and two derivative half-windows, spliced into the previous analysis); the repair's
trials are also planted on their window only (:func:`_plant_span`: the span and two blend margins), and
the guard's likewise, both spliced into the motion planted again and its analysis (:func:`_replanted`), so a
trial's analysis covers its window alone; that replanting moves a few frames all over the clip, and is re-analysed
run by run of them (:func:`.metrics.analyse_changed`; it had been measured whole, ~0.19 s of CPU each on the rest of
01_01, ten times a solve); a repair trial's flights away from its window are its base's (:func:`.metrics.flight_series`
with ``known``), and the guard reads a trial's flight figures alone; a repair window's search restarted from zero with the flights held
starts from the first search's stretch, analysis and Jacobian (the same motion and controls: bit for bit), and a
trial's report takes its world positions spliced from its planting's (:func:`_positions_from`). The input's judged
analysis is made once for both finishes, and a finish's own judged result is the report's where the limits are not
scaled. A plan's evaluation carries its forward kinematics: the reference's,
shifted with the placement joint, planting recomputing only the legs it turns (``forward_kinematics(known=)``),
and the joints it does not turn keep the reference's angular velocities and spins (``analyse(turned=)``); a
plan's result is the motion its last evaluation realised.

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
from .guard import _bar_score, _do_no_harm, _guard_torques, _judged
from .metrics import Analysis, analyse, report, torque_causes, torque_regressions, zmp_inside
from .metrics import series as physics_series
from .options import PhysicsOptions
from .plan import _balance, state_joints
from .planting import _plant, planting_anchors, with_toes
from .progress import as_progress
from .repair import REPAIR_DEVIATION, _repair_torques
from .unexplained import unexplained


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
    judged_in: the input's :func:`_judged` analysis (with ``body``; the same for every finish, made once). jacobian:
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


def physics_retarget(
    motion: Motion,
    contacts: Contacts,
    body: BodyModel,
    options: PhysicsOptions | None = None,
    progress: Callable[[float], None] | None = None,
    series: bool = False,
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
    constraints with it under its limits), ``repair`` (why, :func:`_repair_torques`: what the closest motion it
    found left over a limit and which bars refused it, figure against bar; None where not searched) and
    ``bound`` (:func:`.feasibility.landing_bound`'s reason,
    with every joint allowed 1.5 % of the stature: proven infeasible, or "searched, not proven"), and
    ``unexplained``: the stretches the floor-and-feet model cannot explain (:func:`.unexplained.unexplained`:
    ``start``, ``stop``, ``kind``, ``reason``; held ones given back as they were).
    progress: called with the share done (0–1, only growing) after every evaluation of the clip; a
    callback that raises (a cancel) stops the solve there. series: also put
    the per-frame data before and after (:func:`.metrics.series`) in the report under
    ``series`` (``{"before": PhysicsSeries, "after": PhysicsSeries}``; not JSON).
    """
    opts = options or PhysicsOptions()
    step = as_progress(progress)
    start = time.perf_counter()
    with one_blas_thread():  # small products only: OpenBLAS's idle workers would spin a core
        feet, toes = contacts, with_toes(motion, contacts)
        contacts = toes if opts.toes else feet
        measure = {"smooth": opts.smooth, "free_fall": opts.free_fall, "heel": opts.heel, "width": opts.width}
        before = analyse(motion, contacts, body, **measure)
        feet = planting_anchors(motion, feet, toes, before, body, opts)
        # the plans hold the stretches held off the floor; a ZMP far beyond the feet is named after the
        # solve where it still is (held by the plans, a synthetic walk the solve balances on 79 % of its
        # frames stayed at 4 %: no shift near the motion brings it back was not true of its input)
        hold, unexplained_spans = unexplained(before, body, motion.fps, reach=np.inf)
        step(0.01)
        report_body, body = body, solver_body(body, before, zmp_inside(before)[0], opts)
        measure["ground"] = before.support.ground
        keys, stride = _keys(motion.n_frames, motion.fps, opts.key_rate)
        out, an = motion, before
        if opts.plant:
            out = _plant(motion, feet, hinge=True)
            step.tick()
            # with flights the pass reads only its flights and kinematics (it analyses the motion they shift anew):
            # the ground-force split is solved only where its balance plan reads it
            an = analyse(out, contacts, body, least=False, **measure)
            if not (opts.flight and len(airborne(an))):
                an = an._replace(dynamics=inverse_dynamics(an.kin, body, an.support, opts.free_fall))
        planted = out
        passes = max(opts.passes, 1)
        polish = opts.polish_iterations > 0 and (opts.balance or opts.torques)
        end = 0.75 if polish else 0.97
        step(0.02)
        for k in range(passes):
            part = step.span(0.02 + (end - 0.02) * k / passes, 0.02 + (end - 0.02) * (k + 1) / passes)
            out = _pass(out, an, contacts, feet, body, opts, measure, keys, stride, part.span(0, 0.98), hold)
            if opts.plant:
                out = _plant(out, feet)
                part(0.99)
            an = analyse(out, contacts, body, least=False, **measure)  # the split is solved below, when needed
            part(1.0)
        if opts.flight and len(airborne(an)):
            out, an = _final_flight(out, an, contacts, feet, body, opts, measure)
        else:
            an = an._replace(dynamics=inverse_dynamics(an.kin, body, an.support, opts.free_fall))
        first_in = (out, an)
        # each motion judged by the contacts its own feet can bear (:func:`_judged`), on the report's body; the
        # finishes judge on the solve's, the same analysis when the limits were not scaled (:func:`solver_body`)
        judged_in = _judged(motion, contacts, report_body, measure)
        judged_solver = judged_in if body is report_body else _judged(motion, contacts, body, measure)

        def judged_of(finished: tuple) -> Analysis:
            return finished[1] if body is report_body else _judged(finished[0], contacts, report_body, measure)

        args = (motion, before, planted, contacts, feet, body, measure, hold, polish, judged_solver)
        # the retry (below) runs only when the passes' result has joint-frames the final plan weighs differently
        retry = polish and opts.retry_boost > 0 and opts.retry_boost != opts.polish_boost
        retry = retry and bool(_made_worse(an, before, body, opts).any())
        first = _finish(out, an, opts, *args, step.span(end, 0.99), None, retry)  # the Jacobian kept for a retry
        out, an, searched, jacobian = first
        judged = judged_of(first)
        was = after_report = None  # the reports of the input and of the result, when made here
        if polish and opts.retry_boost > 0 and opts.retry_boost != opts.polish_boost:
            was, after_report = report(judged_in, report_body, motion), report(judged, report_body, out, source=motion)
            score = _bar_score(after_report, was)
            # a bar missed: the final stages again with the other weighing of the worse joint-frames (none of them:
            # the same final plan, the same result)
            if score[0] and retry:
                second = _finish(
                    first_in[0],
                    first_in[1],
                    replace(opts, polish_boost=opts.retry_boost),
                    *args,
                    step.span(0.99, 0.995),
                    jacobian,
                    False,
                )
                judged_second = judged_of(second)
                after_second = report(judged_second, report_body, second[0], source=motion)
                if _bar_score(after_second, was) < score:
                    (out, an, searched, _), judged, after_report = second, judged_second, after_second
        beyond = [u for u in unexplained(an, body, motion.fps)[1] if u["kind"] == "beyond the feet"]  # still far
        unexplained_spans = sorted(unexplained_spans + beyond, key=lambda u: u["start"])
    seconds = time.perf_counter() - start
    state = state_joints(body, opts.spine_joints)  # the filter's (the solver's body: the same skeleton and roles)
    body = report_body
    before, after = judged_in, judged
    rep = {
        "before": report(before, body, motion) if was is None else was,
        "after": report(after, body, out, source=motion) if after_report is None else after_report,
        "torque_worse": torque_regressions(before, after, body),
        "torque_causes": [
            c
            | {
                "searched": c["frame"] in searched,
                "repair": searched.get(c["frame"]),
                "bound": landing_bound(
                    after, body, c["frame"], body.skeleton.index(c["joint"]), REPAIR_DEVIATION * body.height
                )["reason"],
            }
            for c in torque_causes(after, body, window_half(opts.smooth, motion.fps, 3), opts.free_fall)
        ],
        "unexplained": unexplained_spans,
        "seconds": seconds,
        "frames_per_second": motion.n_frames / seconds,
        "key_frames": int(len(keys)),
        "state_dimension": 3 + 3 * len(state[1]),
        "state_joints": [body.skeleton.names[j] for j in [state[0], *state[1]]],
        "options": asdict(opts),
    }
    if series:
        rep["series"] = {"before": physics_series(before, body), "after": physics_series(after, body)}
    step(1.0)
    return out, rep
