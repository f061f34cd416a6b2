"""The torque repair (module step 8 of :mod:`.solve`): local plans around the frames still over a limit.

Torque repair (:func:`_repair_torques`): around the frames still over a limit (±0.35 s, the
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
that only a flight refuses is first turned and shifted back in the flights it touches, :func:`.flights._flights_restored`). What remains is reported
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

Speed: the torque guard's and
repair's trials are re-analysed on the frames they change only (:func:`.metrics.analyse_changed`:
the changed span and two derivative half-windows, spliced into the previous analysis); the repair's
trials are also planted on their window only (:func:`.planting._plant_span`: the span and two blend margins), and
the guard's likewise, both spliced into the motion planted again and its analysis (:func:`.planting._replanted`), so a
trial's analysis covers its window alone; that replanting moves a few frames all over the clip, and is re-analysed
run by run of them (:func:`.metrics.analyse_changed`; it had been measured whole, ~0.19 s of CPU each on the rest of
01_01, ten times a solve); a repair trial's flights away from its window are its base's (:func:`.metrics.flight_series`
with ``known``), and the guard reads a trial's flight figures alone; a repair window's search restarted from zero with the flights held
starts from the first search's stretch, analysis and Jacobian (the same motion and controls: bit for bit), and a
trial's report takes its world positions spliced from its planting's (:func:`_positions_from`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ik.plant import BLEND as PLANT_BLEND
from ..motion import Motion
from .derivatives import window_half
from .dynamics import torque_ratios
from .flights import _flights_kept, _flights_restored, _flying
from .metrics import (
    Analysis,
    analyse,
    analyse_changed,
    changed_frames,
    flight_series,
    options_for,
    report,
    torque_regressions,
)
from .plan import _balance, _shift_root, state_joints
from .planting import _plant_span, _replanted
from .unexplained import unexplained

REPAIR_WINDOWS = 4  # windows a repair round searches at most: a bound on its cost
REPAIR_DEVIATION = 0.015  # the repair keeps the deviation from the input within this share of the stature…
REPAIR_SLACK = 0.001  # … or within this much more than it had before the repair
REPAIR_FOLLOW = 1  # local plans a window's search may chain on from a trial that is better but refused
JERK_BAR = 1.05  # … the jerk within this many times the input's (or what it was)
FLIGHT_REFUSAL = "a flight off its parabola or its angular momentum changed"


def _repair_torques(
    motion: Motion,
    an: Analysis,
    before: Analysis,
    source: Motion,
    contacts,
    feet,
    body,
    opts,
    measure: dict,
    replanted: tuple | None = None,
) -> tuple[Motion, Analysis, set]:
    """Module step 8, the repair of the torque constraint: around the frames still over a limit
    (windows of ``repair_window`` seconds either side, overlapping ones merged) a local balance plan
    on that stretch alone moves the body in 3-D (the feet planted again), with the torque weight
    ``repair_torque_weight`` aiming ``repair_margin`` under every limit and the shift held at zero
    at the window's inner ends; the shift is kept when, on the whole clip, it leaves fewer frames
    over a limit in the window (or as many, less far over), no more frames worse than the input,
    the ZMP inside on as many contact frames as before or at least ``zmp_target`` of them, and the
    deviation from ``source`` within ``REPAIR_DEVIATION`` of the stature (or at most ``REPAIR_SLACK``
    above what it was before the repair), and the jerk and flight figures within issue 16's bars
    (or no worse than they were; "as it was" measured on the motion planted again, into which the trials are
    spliced: planting a planted motion again moves it a little, and against the motion before that a trial
    with no shift at all failed the jerk bar on CMU 131_01, 717 against 716 m/s³; so measured, Bandai's punch
    keeps its repairs, 13 → 2 frames over a limit, none worse than the input, 9 before). A trial better but refused is searched on from where it ended
    (``REPAIR_FOLLOW`` more local plans), or from the start with the flights held when it moved a flight.
    ``repair_rounds`` rounds. Returns the motion, its analysis and the frames of the windows whose search
    found nothing it could keep, each with why (:func:`.metrics.torque_causes` marks the frames still over a
    limit there as searched): the closest trial refused (the fewest frames over a limit it left in the window)
    and every bar it broke, with its figure and the bar, or that no local plan lowered them at all.
    replanted: (a motion, its :func:`.planting._replanted` motion and analysis) already made, used when it is ``motion``'s
    (the guard's, when the guard kept nothing: the same planting, not made twice)."""
    t = motion.n_frames
    pad = max(int(round(opts.repair_window * motion.fps)), 1)
    root = state_joints(body, opts.spine_joints)[0]
    local = replace(
        opts, plan_torque_weight=opts.repair_torque_weight, torque_margin=opts.repair_margin,
        plan_jerk=opts.repair_jerk, plan_iterations=opts.repair_iterations, plan_spacing=opts.repair_spacing,
    )  # fmt: skip
    source_jerk = report(before, body, source)["jerk_m_s3"]
    source_pos = source.world_positions()  # what every trial's deviation is measured against (its FK made once)
    current = report(an, body, motion, source=source_pos)
    allowed = max(REPAIR_DEVIATION, current["deviation"] + REPAIR_SLACK)
    searched: dict = {}
    base = None  # (motion, its planting, that one's analysis, report, positions and flights): the trials' planting

    def based(replanted: tuple) -> tuple:
        pos, flown = replanted[1].world_positions(), flight_series(replanted[2], body, motion.fps)
        return (
            *replanted,
            report(replanted[2], body, replanted[1], source_pos, positions=pos, flight=flown),
            pos,
            flown,
        )

    if opts.plant and replanted is not None and replanted[0] is motion:
        base = based(replanted)
    plant_reach = max(1, round(PLANT_BLEND * motion.fps)) if opts.plant else 0

    def judge(trial: Motion, window: tuple[int, int], span: tuple[int, int]) -> tuple:
        """(the trial planted, its analysis, report, worst ratio per frame, whether it leaves fewer frames over a
        limit on ``window`` or less far over, the bars it breaks, (frames over a limit on the window, their
        excess, before)) of a trial that differs from ``motion`` on ``span`` (frames [a, b))."""
        if opts.plant:
            trial = _plant_span(trial, feet, base[1], *span)
            trial_pos = _positions_from(trial, base[1], base[4])
            trial_an = analyse_changed(trial, contacts, body, base[2], changed_frames(trial, base[1]), **measure)
        else:
            trial_an = analyse_changed(trial, contacts, body, an, changed_frames(trial, motion), **measure)
            trial_pos = None
        known = None if base is None or base[0] is not motion else (base[2], base[5])
        trial_flights = flight_series(trial_an, body, motion.fps, known=known)
        now = report(trial_an, body, trial, source=source_pos, positions=trial_pos, flight=trial_flights)
        w_new = torque_ratios(trial_an.torques, body).max(axis=1)
        part = slice(*window)
        count, count_new = (worst[part] > 1.0).sum(), (w_new[part] > 1.0).sum()
        excess, excess_new = np.maximum(worst[part] - 1.0, 0).sum(), np.maximum(w_new[part] - 1.0, 0).sum()
        better = count_new < count or (count_new == count and excess_new < excess - 1e-6)
        was = current if base is None or base[0] is not motion else {  # the zero shift's, replanted too
            **{k: max(v, base[3][k]) if k != "zmp_inside_share" else min(v, base[3][k])
               for k, v in current.items() if isinstance(v, float)},
            "flights": [*current["flights"], *base[3]["flights"]],
        }  # fmt: skip
        worse_new, worse_now = (len(torque_regressions(before, x, body)) for x in (trial_an, an))
        zmp_bar = min(was["zmp_inside_share"], opts.zmp_target)
        jerk_bar = max(JERK_BAR * source_jerk, was["jerk_m_s3"])
        refusals = [
            text
            for fails, text in (
                (worse_new > worse_now, f"{worse_new} frames worse than the input (had {worse_now})"),
                (now["zmp_inside_share"] < zmp_bar - 1e-9,
                 f"ZMP inside {100 * now['zmp_inside_share']:.1f} % < {100 * zmp_bar:.1f} %"),
                (now["deviation"] > allowed,
                 f"deviation {100 * now['deviation']:.2f} % > {100 * allowed:.2f} % of the stature"),
                (now["jerk_m_s3"] > jerk_bar,
                 f"jerk {now['jerk_m_s3']:.0f} > {jerk_bar:.0f} m/s³ (input {source_jerk:.0f})"),
                (not _flights_kept(now, was), FLIGHT_REFUSAL),
            )
            if fails
        ]  # fmt: skip
        return trial, trial_an, now, w_new, better, refusals, (count_new, excess_new, count)

    for _ in range(opts.repair_rounds):
        worst = torque_ratios(an.torques, body).max(axis=1)
        bad = np.flatnonzero(worst > 1.0)
        if not len(bad):
            break
        windows: list[list[int]] = []
        for f in bad:
            lo, hi = max(int(f) - pad, 0), min(int(f) + pad + 1, t)
            lo, hi = max(min(lo, hi - 2 * pad - 1), 0), min(max(hi, lo + 2 * pad + 1), t)  # at a clip edge: inwards
            if windows and lo <= windows[-1][1]:
                windows[-1][1] = hi
            else:
                windows.append([lo, hi])
        windows = [w for w in windows if not searched.keys() >= set(range(w[0], w[1]))]  # no second search of one
        worse = {w["frame"] for w in torque_regressions(before, an, body)}
        order = sorted(windows, key=lambda w: (not worse.intersection(range(*w)), -worst[w[0] : w[1]].max()))
        worst_first = order[:REPAIR_WINDOWS]  # frames worse than the input first, then the farthest over
        changed = False
        for lo, hi in sorted(worst_first):
            if hi - lo < 4 * window_half(opts.smooth, motion.fps, 3):
                continue
            part = slice(lo, hi)
            pin = np.ones(hi - lo)
            ramp = max(pad // 3, 1)
            if lo > 0:
                pin[:ramp] = 1e4
            if hi < t:
                pin[-ramp:] = 1e4
            sub_contacts = contacts.frames(part)
            sub_feet = feet.frames(part)
            sub_measure = options_for(measure, part)
            shift, trial, hold_flights, follows = np.zeros((t, 3)), motion, False, 0
            closest = None  # (frames over a limit, excess, before, why refused) of the best trial refused
            start = None  # (stretch, its analysis, its plan's Jacobian) of the search from zero: a restart's
            for _attempt in range(REPAIR_FOLLOW + 2):  # a better trial some bar refuses: search on from it
                from_zero = trial is motion
                if from_zero and start is not None:  # the flights-held restart: the same stretch, the same Jacobian
                    sub, sub_an, jacobian = start
                else:
                    sub, jacobian = trial.frames(part), None
                    sub_an = analyse(sub, sub_contacts, body, **sub_measure)
                trial = trial_an = None  # the last trial's whole-clip copies: not kept through the plan
                held = None  # None: _balance holds the stretches held off the floor; then the flights too
                if hold_flights:
                    held = unexplained(sub_an, body, motion.fps, reach=np.inf)[0] | _flying(sub_an)
                _, plan = _balance(
                    sub, sub_an, sub_contacts, sub_feet, body, local, sub_measure, None, jacobian=jacobian, vertical=True,
                    pin=pin, hold=held,
                )  # fmt: skip
                if from_zero and start is None:
                    start = (sub, sub_an, plan.jacobian)
                axes = np.vstack((sub_an.support.basis, sub_an.support.up[None]))[: plan.shift.shape[1]]
                shift[part] += plan.shift @ axes
                shifted = _shift_root(motion, root, shift)
                if opts.plant and (base is None or base[0] is not motion):
                    base = based((motion, *_replanted(motion, an, contacts, feet, body, measure)))
                trial, trial_an, now, w_new, better, refusals, counts = judge(shifted, (lo, hi), (lo, hi))
                if better and refusals == [FLIGHT_REFUSAL]:  # only a flight refused it: turn and shift it back
                    reach = (lo - plant_reach, hi + plant_reach)  # planting's blends reach this far from the window
                    restored = _flights_restored(trial, shifted, contacts, body, opts, measure, reach)
                    judged = restored and judge(restored[0], restored[1], restored[1])
                    if judged and judged[4] and not judged[5]:  # kept; else searched on as refused for the flight
                        trial, trial_an, now, w_new, better, refusals, counts = judged
                flight_ok = FLIGHT_REFUSAL not in refusals
                kept = better and not refusals
                if better and refusals and (closest is None or counts[:2] < closest[:2]):
                    closest = (*counts, refusals)
                if kept or not better:
                    break
                if not flight_ok and not hold_flights:  # it moved a flight: search again from the start, flights held
                    shift, trial, hold_flights = np.zeros((t, 3)), motion, True
                elif follows >= REPAIR_FOLLOW:
                    break
                else:
                    follows += 1
            if kept:
                motion, an, current, worst, changed = trial, trial_an, now, w_new, True
            else:
                span = f"frames {lo}–{hi - 1}"
                why = (
                    f"a local plan on {span} left {closest[0]} of their {closest[2]} frames over a limit, "
                    f"refused: {'; '.join(closest[3])} (the repair's own figures: on the input's contacts, before "
                    "the do-no-harm guard)"
                    if closest
                    else f"no local plan on {span} left fewer frames over a limit or less far over"
                )
                searched.update(dict.fromkeys(range(lo, hi), why))
        if not changed:
            break
    return motion, an, searched


def _positions_from(motion: Motion, previous: Motion, positions: np.ndarray) -> np.ndarray:
    """``motion.world_positions()`` (T, J, 3) where ``motion`` differs from ``previous`` (same skeleton and length;
    world positions ``positions``) on a few frames: forward kinematics is per frame, so only the span of the frames
    that differ at all is computed (bit for bit the whole clip's; a repair trial's report on 1,952 frames spent
    half its time on the whole clip's)."""
    differ = (motion.translations != previous.translations).any(axis=(1, 2))
    moved = np.flatnonzero(differ | (motion.rotations != previous.rotations).any(axis=(1, 2)))
    if not len(moved):
        return positions
    out = positions.copy()
    out[moved[0] : moved[-1] + 1] = motion.frames(slice(moved[0], moved[-1] + 1)).world_positions()
    return out
