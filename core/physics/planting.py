"""Planting on the solve side: the anchors the feet are pinned to, and the planting of a motion or a window of it.

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

Contacts: a foot sliding more than ``LEASH`` of the stature from its span's anchor (a pivot, a shuffle under the
speed threshold) is planted on a leash instead (:func:`core.contacts.leash_anchors`; on CMU 06_12 planting dragged a
foot 36 cm); see :func:`planting_anchors`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..contacts import Contacts, contact_spans, detect_contacts, leash_anchors
from ..ik.plant import BLEND as PLANT_BLEND
from ..ik.plant import plant_feet
from ..limbs import find_feet
from ..motion import Motion
from .body import BodyModel
from .metrics import Analysis, analyse_changed, changed_frames, flight_phases
from .options import PhysicsOptions

LEASH = 0.06  # stature shares a foot may slide from its contact's anchor before planting lets the anchor follow
HELD = 0.001  # of the stature: a toe moving less over a release is held by the input (:func:`held_toes`)
MIN_EASE = 6  # frames at least over which planting eases a contact's anchor in and out (``plant_ease``)


def _plant(
    motion: Motion, contacts: Contacts, hinge: bool = False, world=None, with_world: bool = False, legs=None,
    in_place: bool = False,
):  # fmt: skip
    """:func:`~core.ik.plant.plant_feet` bending each leg in its own plane, or with ``hinge`` in its thigh's hinge
    plane where it is nearly straight (:func:`~core.ik.plant.hinge_pole`). The input's first planting takes the
    hinge: where a leg is nearly straight its own plane is noise, and on 05_01 that planting added 5.6 % to the
    clip's jerk (the result 1.065 of the input's; with the hinge 0.991, the other clips as they were or better).
    Every later planting keeps the plane the legs have by then: the hinge there too (1.001 on 05_01) left the
    jumps' ankles worse than the input on 4 frames and one frame of 02_01 over a limit. world, with_world: the
    motion's forward kinematics when known; also return the result's; legs: the contact joints' limb chains when
    known (:func:`~core.ik.plant.plant_feet`); in_place: plant ``motion`` itself (a caller's own temporary).

    Most of the jerk planting still adds to the clean walks is its lift (:func:`~core.ik.plant.lift_to_reach`), not
    the ease: the Mixamo rig's own walk (60 fps) holds its stance legs at 7° of bend, planting caps them at 0.985 of
    the reach (20°) by raising the ankle up to 2 cm, and the lift switches on and off with a kink. Measured stage by
    stage (benchmark setting, jerk / input's): this first planting ×1.090 of the whole solve's ×1.096 (plans, filter
    and later plantings +0.2 %, the do-no-harm guard +0.4 %); all of it on the legs (knees 40 %, the left knee
    176 → 330 m/s³; ankles 15 %, toes 45 %; root and upper body 0), within 0.4 s of a contact's ends, the top 5 % of
    frames 46 %
    (the left knee's third difference 1,903 against the input's 135 m/s³ where the lift ends, 7 frames before a
    release); without the lift (``out_of_reach=None``) this planting adds ×1.032. The Bandai walk (30 fps, ×1.110):
    this planting ×1.075 (×1.034 without the lift), the first plan +5.0 % more, again on the legs only (the plan's
    shift moves the hip and planting's IK and lift turn it into knee and foot jerk; the upper body +0 %).
    A lift faded in under the cap (reach − w + w·tanh, w = 0.015–0.05 of the reach, C2 at its onset; the least lift
    within 0.2 s of a stretch of 3 frames without contact, a smoothstep back over the next 0.2 s) took the solve to
    ×1.016–1.041 on the Mixamo walk and ×1.065–1.079 on the Bandai walk and kept the six first rows' bars (measured
    at w = 0.03; at 0.05 on every frame, flights' too, the jumps went 0 → 17 frames over a limit), but it bends the knee more
    where the leg is near the cap and left frames worse than the input on Bandai's punch at each w tried (0.015, 0.03:
    2 → 6 and 16 frames over a limit), CMU 06_14 0 → 9 at w = 0.03; capped at 0.99 instead, the punch 17; eased only within 0.2 s of a
    contact's ends (the least lift mid-stance), Mixamo ×1.032, Bandai ×1.074 and the punch 19 (13 worse than the
    input). Not kept. The lift's amount smoothed in time instead (:func:`~core.ik.plant.upper_envelope` over
    ±0.05 / ±0.1 s, never less lift than the cap asks): Mixamo ×1.050 / ×1.026, Bandai walk ×1.049 / ×1.040, tired
    walk ×1.063 / ×1.047, but more lift bends loaded knees too: the punch 2 → 15 / 16 frames over a limit, 06_14
    0 → 7 / 9, the tired walk 0 → 2 / 1. Its lower envelope (never more lift than the cap asks, the knee briefly
    straighter): Mixamo ×1.083 / ×1.033, tired walk ×1.045 / ×1.047 (ZMP inside 98.4 → 99.6 %, 0 frames over), but
    the Bandai walk ×1.065 / ×1.067 with 0 → 2 / 1 frames over a limit, the punch 2 → 3 / 5 and 06_14's deviation
    1.41 → 1.52 % at ±0.1 s. Not kept either.

    A lift that knows the knee's load (the soft lift's width w·clip(1 − r/m, 0, 1) per frame and leg, r the knee's
    |τ|/limit in the input, upper envelope over ±0.1 s; w = 0.03, m = 0.8): Mixamo ×1.024–1.031, Bandai walk
    ×1.078–1.087, tired walk ×1.085–1.096, 131_01 ×1.114–1.133, but the punch 5–13 frames over a limit (worst about
    1.7: the left knee 2–3 frames after its stamping touch-downs), the jumps 1 frame, the dance's ZMP inside 98.0 %.
    Not kept (nor m = 0.5 or 1.2, the hard-planted pose's load, both knees', soft only from mid-stance to mid-swing).
    Those rows sit at the solve's noise floor, though: the hard cap alone moved by ±0.1–0.2 % of the reach (at most
    3 mm of joint motion in the first planting) takes the punch 2 → 1–15 frames (its final plan's ZMP inside 47–79 %),
    06_14 0 → 0–15, the jumps 0 → 0–8 frames with deviation 1.43 → 1.49–1.58 %; over those five caps the punch's
    median is 4 frames hard, 24 soft (w = 0.03 everywhere), 8 load-gated, 06_14's 2, 2, 0. The soft lift raises no
    knee's ratio by more than 0.06–0.10 in the planting itself. No lift tried took a clean walk but Mixamo's under ×1.05 (best: the Bandai
    walk ×1.055, tired ×1.085, 131_01 ×1.109).

    The hip reached from above instead of the ankle lifted (this first planting only, tried and not kept): the
    placement joint lowered by the least drop that brings every planted leg within the cap, capped at 1 % of the body
    size, smoothed by a C2 envelope over ±0.25 s that never falls below it (running maximum, cubic B-spline kernel;
    hugging it: a plain envelope averaged 3× the least drop, taking walk 02_01's deviation 0.47 → 1.62 % and 05_01's
    0.61 → 1.95 %), counted only 0.5 s away from flights (next to them the dip moved hop 131_03 ×1.46 → ×1.58 and 05_18's
    flight 6.4 → 10.4 mm), the rest lifted; the other plantings lift. The first planting alone then adds ×1.043 on the
    Mixamo walk instead of ×1.090 and ×1.010 on the Bandai walk instead of ×1.075, the stance ankle on its anchor.
    Whole benchmark (24 rows, 1.4× onto 90 kg), jerk / input's: Mixamo ×1.097 → ×1.022, Bandai walk ×1.110 → ×1.058
    (the first plan's +5 % left), tired ×1.099 → ×1.056, punch ×1.225 → ×1.073, Bandai's dance ×1.301 → ×1.151 (294 →
    209 frames over a limit), but 131_01 ×1.108 → ×1.118 and the kick ×0.980 → ×1.033; hop 131_03, 05_18 and the
    flights' rows as they were. The six first rows kept every bar (deviation up: walk 02_01 0.47 → 0.99 %, 05_01 0.61
    → 0.98 %, the dance 1.02 → 1.08 %), foot skating the same (the ankle held on the same anchors). But the dip bends
    every planted leg, the loaded one too: Bandai's punch 2 → 11 frames over a limit (worst 1.17 → 1.63, ZMP inside
    82.6 → 67.4 %; tests/core/test_physics_repair_notes.py's punch left 9 frames worse than the input, the left knee
    at frame 31 1.23 → 1.38), the Bandai walk's ZMP inside 99.5 → 98.5 % (two more frames outside, one by 1.8 cm),
    131_01 61 → 65 frames (worst 1.84 → 2.08) and deviation 1.15 → 1.48 %, the kick 3 → 4. Capped at 0.5 %: Mixamo
    ×1.021, Bandai walk ×1.072, the punch 7 frames, the tired walk 0 → 1, the punch test still failing; dipping only in
    single support (one planted leg): the punch as before but Mixamo ×1.072, the Bandai walk ×1.080 with 2 frames over
    and deviation 1.59 %. Not kept."""
    return plant_feet(motion, contacts, legs=legs, hinge=hinge, world=world, with_world=with_world, in_place=in_place)


def _plant_span(motion: Motion, contacts: Contacts, planted: Motion, lo: int, hi: int) -> Motion:
    """:func:`_plant` of ``motion``, which differs from the motion ``planted`` came from on frames [lo, hi) only.

    Planting is per frame apart from the blend ramps (``PLANT_BLEND`` seconds, m frames, on each side of a
    contact): a change on [lo, hi) reaches frames [lo - m, hi + m), and those read frames within m of
    themselves. So plant the slice [lo - 2m, hi + 2m) and splice its [lo - m, hi + m) into ``planted``
    (tests/core/test_physics_plant_span.py: equal to whole-clip planting). Returns a new motion (T frames).
    Not quite per frame: a knee straight within :data:`core.ik.two_link.STRAIGHT` bends in its nearest bent frame's
    plane, which may lie outside the slice (on raw captures 0.0015 units on a body 34 units tall, in the leg's own
    plane; the solve's plantings of its planted motions are equal).
    """
    n = motion.n_frames
    m = max(1, round(PLANT_BLEND * motion.fps))
    a, b = max(0, lo - 2 * m), min(n, hi + 2 * m)
    keep_a, keep_b = max(0, lo - m), min(n, hi + m)
    part = contacts.frames(slice(a, b))
    sub = _plant(motion.frames(slice(a, b)), part)
    out = planted.copy()
    out.translations[keep_a:keep_b] = sub.translations[keep_a - a : keep_b - a]
    out.rotations[keep_a:keep_b] = sub.rotations[keep_a - a : keep_b - a]
    return out


def eased_anchors(motion: Motion, contacts: Contacts, seconds: float, supported: np.ndarray | None = None) -> Contacts:
    """``contacts`` whose anchors ease in and out of each contact span over its first and last ``seconds``
    (at most half the span): from the joint's path in ``motion`` at touch-down to the span's anchor, and from
    it back to the path at release, smoothstep-weighted.

    Planting pins a contact joint to its anchor up to the span's last frame, then lets it go at the speed the
    motion has there (above the detector's speed threshold: the heel is already rising), a jump in velocity
    whose third differences add to the clip's jerk; eased, the joint leaves (and reaches) the anchor at the
    path's velocity. Measured on the planting alone (the legs of nearly straight legs in the hinge plane),
    0.1 s: jerk of CC 02_01 1.038 → 1.013 of the input's, walk 02_01 1.008 → 0.975, jumps 0.975 → 0.956;
    the joint moves from its anchor by up to 2.5–4 % of the body size on average at a span's end (the
    distance the path has already left it by, mostly up). At least ``MIN_EASE`` frames: eased over 0.1 s, three
    frames at 30 fps, the planting alone took the Bandai walk's jerk to 1.094 of the input's, the tired walk's to
    1.199, CMU 02_01 resampled to 30 fps 1.016 (at 120 fps 0.975); over six frames 1.075, 1.067, 0.996, and at
    60 and 120 fps 0.1 s is six frames or more. The default is 0.2 s (``plant_ease``): the added acceleration of
    a release falls with the square of the ease's length, and over 0.1 s planting alone took the Mixamo rig's own
    walk (60 fps, clean) to ×1.289 of the input's jerk, over 0.2 s ×1.090 (0.15 s ×1.16 and 0.3 s ×1.05 in the
    whole solve); the contact joints then stay on average 0.79 % of the stature from their anchors over its contact
    frames instead of 0.71 % (walk 02_01 0.76 % instead of 0.70 %).

    supported (T,): frames the body stands on something (default: any of ``contacts``' joints in contact); a
    span's end is eased only where the body stays supported over planting's blend on that side (not next to a
    flight). Pass the toes' contacts too (:func:`with_toes`): a heel raised while its toe stays down is no
    flight, and an ankle pinned to its anchor up to that release and let go at once was most of planting's
    jerk on the clean 3ds Max captures (131_01's first 3 s, 1.4× onto 90 kg: planting ×1.087 → ×1.018 of the input's).

    The ease cost the toes of an input that holds them (:func:`held_toes`, which keeps them since). Tried first
    on every toe: from the ease's start the ankle where the toe stays put until the toe's release took 02_01's
    toes (retarget planted, then Physics) from 0.56 / 0.81 to 0.35 / 0.22 units/s, but on the benchmark's raw
    captures the toe's own jitter went into the legs: the Mixamo rig's walk ×1.096 → ×1.207, the Bandai walk
    ×1.110 → ×1.234 with 0 → 2 frames over a limit, shoot 06_14 0 → 7, 131_01's ZMP inside 96.1 → 89.6 %.
    Pinning the ankle to its path wherever the toe alone is down: the jumps 0 → 8 frames over a limit, the
    dance 0 → 6."""
    n = int(round(seconds * motion.fps))
    if n < 1:
        return contacts
    n = max(n, MIN_EASE)
    pos = motion.world_positions()[:, contacts.joints]
    anchors = contacts.anchors.copy()
    t = motion.n_frames
    m = max(1, round(PLANT_BLEND * motion.fps))
    supported = contacts.flags.any(axis=1) if supported is None else supported
    for i in range(len(contacts.joints)):
        for a, b in contact_spans(contacts.flags[:, i]):
            k = min(n, (b - a) // 2)
            if k < 1:
                continue
            w = smoothstep_bump(k)[:k, None]  # rising from 0 (not reached) to 1 (not reached)
            if a > 0 and supported[max(a - m, 0) : a].all():  # touch-down: from the path onto the anchor
                f = slice(a, a + k)
                anchors[f, i] += w[::-1] * (pos[f, i] - anchors[f, i])
            if b < t and supported[b : b + m].all():  # release: from the anchor back onto the path
                f = slice(b - k, b)
                anchors[f, i] += w * (pos[f, i] - anchors[f, i])
    return replace(contacts, anchors=anchors)


def with_toes(motion: Motion, contacts: Contacts) -> Contacts:
    """``contacts`` plus the toe joints' own contacts (same detection rule, same up axis)."""
    try:
        feet = find_feet(motion.skeleton, contacts.up)
    except ValueError:
        return contacts
    toes = [toe for foot, toe in feet.values() if toe is not None and foot in contacts.joints]
    toes = [t for t in toes if t not in contacts.joints]
    if not toes:
        return contacts
    extra = detect_contacts(motion, joints=toes, up=contacts.up)
    return Contacts(
        np.concatenate((contacts.joints, extra.joints)),
        np.concatenate((contacts.flags, extra.flags), axis=1),
        np.concatenate((contacts.anchors, extra.anchors), axis=1),
        contacts.up,
        np.concatenate((np.atleast_1d(contacts.floor), np.atleast_1d(extra.floor))),
        np.concatenate((np.broadcast_to(contacts.height_threshold, contacts.joints.shape), extra.height_threshold)),
        contacts.speed_threshold,
        contacts.fps,
        size=contacts.size,
    )


def planting_anchors(
    motion: Motion, feet: Contacts, toes: Contacts, before: Analysis, body: BodyModel, opts: PhysicsOptions
) -> Contacts:
    """The anchors planting pins the feet (``feet``, the motion's foot contacts; ``toes``, the same with the toes'
    own, :func:`with_toes`) to: on a leash of ``LEASH`` of the
    stature (:func:`core.contacts.leash_anchors`), eased in and out over ``plant_ease`` seconds
    (:func:`eased_anchors`) except next to a stretch without support at least as long as a flight phase
    (:func:`.metrics.flight_phases`, 3 frames; ``before``: the input's analysis, its support with the toes). A
    frame or two the detector loses between two steps is no flight: on CMU 131_01 (1.4×, 90 kg) frame 702 (both
    ankles above the speed threshold, the body not falling) left the touch-down after it and the release before
    it uneased, the ankle snapped 5.9 cm onto its anchor and planting alone took the hip there to 2.73 of its limit
    (input 2.10); eased, planting alone ends at 2.31 (frame 350) and the solve at 1.85. Only real flights
    (mostly free fall, :func:`.flights.airborne`) keeping their pins eased the stretches held off the floor too, and
    cost elsewhere (the benchmark: CMU 01_14 286 → 320 frames over a limit, 05_18 130 → 137, Bandai's run
    1 → 6)."""
    world = motion.world_positions()
    feet = leash_anchors(feet, world, LEASH * body.height / body.unit)
    unsupported = np.zeros(motion.n_frames, dtype=bool)
    for a, b in flight_phases(before.support.any):
        unsupported[a:b] = True
    feet = eased_anchors(motion, feet, opts.plant_ease, ~unsupported)
    return held_toes(feet, toes, motion, world, opts.plant_ease, ~unsupported, HELD * body.height / body.unit)


def held_toes(
    feet: Contacts,
    toes: Contacts,
    motion: Motion,
    world: np.ndarray,
    seconds: float,
    supported: np.ndarray,
    still: float,
) -> Contacts:
    """``feet`` (ankle contacts eased by :func:`eased_anchors`) that keep a toe the motion already holds still.

    Where a toe in contact stays within ``still`` (scene units) of one place from before an ankle's eased
    release (its last ``seconds``) until after it, the ankle follows ``ankle(t) + toe(s) − toe(t)`` (s: the
    hold's first frame; the ankle that leaves the toe where it was, with the motion's foot orientation) plus
    the anchor's offset from it at s, eased away over the ease's length, until the toe moves or is released.

    Planting keeps each foot's world orientation, so an ankle eased off its anchor while the heel rises over a
    toe still down drags that toe, and once let go the plans' shift of the hips carries it. An input already
    planted (Retarget with its feet planted, toes included) had its toes slide again: CMU 02_01 retargeted 1.4×
    then Physics, 0.56 and 0.81 units/s (3–5 cm/s on the 1.99 m body) over the last 0.1–0.2 s of each step.
    Held only where the input holds the toe: on raw captures the toe's own jitter went into the legs (the
    benchmark's Mixamo walk ×1.096 → ×1.207, the Bandai walk ×1.110 → ×1.234). Held so, the benchmark's CMU
    rows are as they were; the two rows retargeted onto rigs gained (jerk ×1.003 → ×0.999, ×1.010 → ×1.003),
    and the Bandai captures, whose toes stand still, moved: the dance 349 → 347 frames over a limit, the kick
    3 → 4, the 24-frame run given back whole by the do-no-harm guard (1 → 8 frames over, as captured; it had
    ended 10.6 % from the capture at ×1.705 jerk). toes: ``motion``'s foot and toe contacts (:func:`with_toes`);
    world: (T, J, 3) positions of ``motion``; seconds, supported: the ease of :func:`eased_anchors`."""
    n = int(round(seconds * motion.fps))
    if len(toes.joints) == len(feet.joints) or n < 1:
        return feet
    n = max(n, MIN_EASE)
    side = {foot: toe for foot, toe in find_feet(motion.skeleton, feet.up).values() if toe is not None}
    column = {int(j): i for i, j in enumerate(toes.joints)}
    t, m = motion.n_frames, max(1, round(PLANT_BLEND * motion.fps))
    flags, anchors = feet.flags.copy(), feet.anchors.copy()
    for i, ankle in enumerate(feet.joints):
        toe = side.get(int(ankle))
        if toe not in column:
            continue
        for a, b in contact_spans(feet.flags[:, i]):
            k = min(n, (b - a) // 2)
            if k < 1 or not supported[b : b + m].all():  # (a span the clip ends in: from k frames before its end)
                continue
            s = b - k
            near = toes.flags[a:, column[toe]] & (np.linalg.norm(world[a:, toe] - world[s, toe], axis=-1) <= still)
            e = s + (int(np.argmin(near[s - a :])) if not near[s - a :].all() else t - s)  # the toe's release or slip
            if e < b:
                continue
            while s > a and near[s - 1 - a]:  # held since before the release's ease: from there
                s -= 1
            f = slice(s, e)
            implied = world[f, ankle] + world[s, toe] - world[f, toe]
            w = np.ones((e - s, 1))
            w[:k] = smoothstep_bump(k)[:k, None]
            anchors[f, i] = implied + (1.0 - w) * (anchors[s, i] - implied[0])
            flags[b:e, i] = True
    return replace(feet, flags=flags, anchors=anchors)


def _replanted(motion: Motion, an: Analysis, contacts, feet, body, measure: dict) -> tuple[Motion, Analysis]:
    """``motion`` planted again and its analysis (from ``an``, the motion's, on the frames planting changed): what
    the windowed trials of the guard and the repair (:func:`_plant_span`) splice into, so that a trial's analysis
    is a splice of its window alone (planting a planted motion again moves some frames: on 02_01 most of them)."""
    planted = _plant(motion, feet)
    return planted, analyse_changed(planted, contacts, body, an, changed_frames(planted, motion), **measure)


def smoothstep_bump(half: int) -> np.ndarray:
    """(2·half + 1,) weights rising from 0 to 1 at the centre and back, smoothstep-shaped."""
    x = 1.0 - np.abs(np.arange(-half, half + 1)) / (half + 1)
    return x * x * (3 - 2 * x)
