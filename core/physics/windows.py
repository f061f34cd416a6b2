"""Long stretches solved in overlapping windows, so that memory stays bounded whatever the clip's length.

Solved whole, the solve holds ~90–107 kB a frame of clip (docs/physics_notes.md, "Long clips"): about 7.7 GB for
a ten-minute capture at 120 fps, more than many machines running Blender have. A stretch longer than
``WINDOW_SECONDS`` is cut into the fewest pieces of at most that length (:func:`window_cuts`: the cuts chosen
together, each on the feet, mid double support where it can, so that both windows plant the feet on the same
anchors around it and no flight is split), each piece solved with ``MARGIN_SECONDS`` of the clip either side of
it as context (its solve sees the steps and flights around its ends, and its own clip edges, where derivatives
are one-sided, fall outside what is kept) on the stretch's floor and toe contacts, and neighbouring results
crossfaded over ``BLEND_SECONDS`` centred on each cut (:func:`join_windows`, :func:`core.editing.mix.mix`). The
figures are measured piece by piece on the joined motion, each piece with the context its derivatives read
(:func:`.solve.judge`), and combined as the stretches between jumps are (:func:`.metrics.combine_reports`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ..contacts import Contacts
from ..editing.mix import mix
from ..ik.common import smoothstep
from ..motion import Motion
from .body import BodyModel
from .derivatives import window_half
from .dynamics import ground_height
from .options import PhysicsOptions
from .planting import with_toes
from .solve import judge, physics_retarget

WINDOW_SECONDS = 60.0  # a piece's own frames at most: 7,200 frames at 120 fps, under 1 GB solved
MARGIN_SECONDS = 2.0  # clip solved either side of a piece as its context
BLEND_SECONDS = 0.5  # the crossfade across a cut, half each side
CUT_CLEARANCE = 0.25  # seconds: a cut this far from a change of contacts is as good as farther
MIN_WINDOW_SECONDS = 2.0  # shorter windows would overlap their crossfades (a piece is at least a quarter window)


def window_cuts(flags: np.ndarray, fps: float, window_seconds: float = WINDOW_SECONDS) -> np.ndarray:
    """Frames (k − 1,) cutting T frames into the fewest pieces k of at most ``window_seconds`` (empty when one piece
    will do), none shorter than a quarter of that.

    flags: (T, F) bool, the feet's contacts (:attr:`core.contacts.Contacts.flags`). The cuts are chosen together
    (dynamic programming over the frames: cut one at a time, an early cut had forced the next into a flight on CMU
    01_01 in 3 s windows where cuts on the floor existed): each cut on a foot in contact before in the air, with
    both feet down before one, as far from the nearest frame that is not (up to ``CUT_CLEARANCE``) and then as
    near its even place as can be (:func:`_cut_value`)."""
    if not window_seconds >= MIN_WINDOW_SECONDS:
        raise ValueError(f"a window of {window_seconds:g} s is shorter than {MIN_WINDOW_SECONDS:g} s")
    flags = np.asarray(flags, dtype=bool).reshape(len(flags), -1)
    t = len(flags)
    if t <= window_seconds * fps:  # also an endless window
        return np.zeros(0, dtype=int)
    longest = int(window_seconds * fps)
    pieces = -(-t // longest)
    # a piece no shorter than its crossfades (≤ t / pieces / 2 for any window of 2 s: every count of pieces fits)
    shortest = max(longest // 4, 2 * _blend_half(fps) + 1)
    value = _cut_value(flags, fps, pieces - 1)
    totals = []  # totals[j][c]: the best value of cuts 1..j + 1 with the last at frame c (−inf where impossible)
    reach = np.arange(t)
    total = np.where((reach >= shortest) & (reach <= longest), value, -np.inf)
    for j in range(1, pieces):
        total = total - np.abs(reach - j * t / pieces) / (2 * t)  # the even place: less than any contact tier
        totals.append(total)
        if j == pieces - 1:
            break
        total = _running_max(total, shortest, longest) + value
    last = totals[-1].copy()
    last[(t - reach < shortest) | (t - reach > longest)] = -np.inf
    cuts = [int(np.argmax(last))]
    for total in reversed(totals[:-1]):
        lo, hi = max(cuts[-1] - longest, 0), cuts[-1] - shortest
        cuts.append(lo + int(np.argmax(total[lo : hi + 1])))
    return np.asarray(cuts[::-1], dtype=int)


def _cut_value(flags: np.ndarray, fps: float, cuts: int) -> np.ndarray:
    """(T,) how good a cut each frame is, in three tiers: a foot in contact, then every foot down, then up to 1 each
    for the frames to the nearest frame without a contact and without every foot, capped at ``CUT_CLEARANCE``. Each
    tier outweighs everything below it summed over all ``cuts`` (and the even-place term, under 0.5 in all), so that
    no gain on the other cuts buys one cut in the air, or on one foot (fixed weights 100 and 10 gave way at 12
    pieces)."""
    cap = max(int(round(CUT_CLEARANCE * fps)), 1)
    some, every = (_distance_to(~x) for x in (flags.any(axis=1), flags.all(axis=1)))
    both = 2.0 * cuts + 1.0
    contact = cuts * (both + 2.0) + 1.0
    return contact * (some > 0) + both * (every > 0) + (np.minimum(some, cap) + np.minimum(every, cap)) / cap


def _blend_half(fps: float, seconds: float = BLEND_SECONDS) -> int:
    """Frames of a crossfade of ``seconds`` either side of a cut."""
    return int(round(seconds * fps / 2))


def _running_max(x: np.ndarray, nearest: int, farthest: int) -> np.ndarray:
    """(T,) the maximum of ``x`` (T,) over frames c − farthest … c − nearest for each frame c (−inf where none), in
    O(T) (van Herk's blocks: prefix and suffix maxima of blocks as long as the range)."""
    t, width = len(x), farthest - nearest + 1
    padded = np.concatenate((x, np.full(-t % width, -np.inf))).reshape(-1, width)
    prefix = np.maximum.accumulate(padded, axis=1).ravel()
    suffix = np.maximum.accumulate(padded[:, ::-1], axis=1)[:, ::-1].ravel()
    end = np.arange(t) - nearest  # the range's last frame
    start = end - width + 1
    out = np.full(t, -np.inf)
    ok = end >= 0
    out[ok] = prefix[end[ok]]
    both = start >= 0
    out[both] = np.maximum(suffix[start[both]], prefix[end[both]])
    return out


def _distance_to(mask: np.ndarray) -> np.ndarray:
    """(T,) frames from each frame to the nearest True of ``mask`` (T,) bool (T when there is none)."""
    t = len(mask)
    where = np.flatnonzero(mask)
    if not len(where):
        return np.full(t, t, dtype=np.int64)
    frames = np.arange(t)
    right = np.searchsorted(where, frames)
    after = np.where(right < len(where), where[np.minimum(right, len(where) - 1)] - frames, t)
    before = np.where(right > 0, frames - where[np.maximum(right - 1, 0)], t)
    return np.minimum(after, before)


def window_spans(t: int, cuts: Sequence[int], fps: float, margin_seconds: float = MARGIN_SECONDS) -> list[tuple]:
    """Each piece's own frames and the frames solved for it: [(own start, own stop, solved start, solved stop)],
    the solved ones reaching ``margin_seconds`` past each cut (within the T frames)."""
    margin = int(round(margin_seconds * fps))
    bounds = [0, *[int(c) for c in cuts], t]
    return [(a, b, max(a - margin, 0), min(b + margin, t)) for a, b in zip(bounds[:-1], bounds[1:])]


def join_windows(
    results: Sequence[Motion], spans: Sequence[tuple], fps: float, blend_seconds: float = BLEND_SECONDS
) -> Motion:
    """One motion from the windows' ``results`` (each covering its span's solved frames, :func:`window_spans`):
    each piece's own frames from its window, crossfaded across each cut over ``blend_seconds`` (smoothstep weights,
    :func:`core.editing.mix.mix`: local rotations slerped, the pelvis mixed in world space). The blend is limited
    to what both windows cover."""
    first = results[0]
    t = spans[-1][1]
    trans = np.empty((t, *first.translations.shape[1:]))
    rot = np.empty((t, *first.rotations.shape[1:]))
    for result, (a, b, lo, _hi) in zip(results, spans):
        trans[a:b], rot[a:b] = result.translations[a - lo : b - lo], result.rotations[a - lo : b - lo]
    out = Motion(first.skeleton, trans, rot, fps)
    half = _blend_half(fps, blend_seconds)
    for (left, span_l), (right, span_r) in zip(
        zip(results[:-1], spans[:-1]), zip(results[1:], spans[1:])
    ):  # fmt: skip
        cut = span_l[1]
        lo, hi = max(cut - half, span_r[2]), min(cut + half, span_l[3])
        if hi - lo < 2:
            continue
        weights = smoothstep((np.arange(lo, hi) - lo + 0.5) / (hi - lo))
        mixed = mix(left.frames(slice(lo - span_l[2], hi - span_l[2])),
                    right.frames(slice(lo - span_r[2], hi - span_r[2])), weights, blend_ancestors=True)  # fmt: skip
        out.translations[lo:hi], out.rotations[lo:hi] = mixed.translations, mixed.rotations
    return out


def solve_in_windows(
    clip: Motion,
    contacts: Contacts,
    body: BodyModel,
    options: PhysicsOptions,
    progress: Callable[[float], None] | None = None,
    window_seconds: float = WINDOW_SECONDS,
) -> tuple[Motion, list[tuple[int, dict]]]:
    """:func:`.solve.physics_retarget` on one stretch, in windows when it is longer than ``window_seconds``
    (module notes): the result and [(first frame, report)] of its pieces, each report with ``series`` and its
    ``seconds`` (its window's solve and its own measure). Every window and piece stands on the stretch's floor and
    toe contacts (measured on each window, the floor of CMU 05_02 in 3 s windows moved −28 to +67 mm)."""
    step = progress or (lambda _x: None)
    cuts = window_cuts(contacts.flags, clip.fps, window_seconds)
    if not len(cuts):
        return _solved_whole(clip, contacts, body, options, step)
    toes = with_toes(clip, contacts)
    ground = ground_height(clip, toes if options.toes else contacts)
    spans = window_spans(clip.n_frames, cuts, clip.fps)
    total = sum(hi - lo for _a, _b, lo, hi in spans)
    results, solved, done = [], [], 0
    for _a, _b, lo, hi in spans:
        part = _share(step, 0.95 * done / total, 0.95 * (hi - lo) / total)
        result, rep = physics_retarget(clip.frames(slice(lo, hi)), contacts_frames(contacts, lo, hi), body, options,
                                       progress=part, toes=contacts_frames(toes, lo, hi), ground=ground)  # fmt: skip
        results.append(result)
        solved.append({
            "causes": {c["frame"] + lo: c for c in rep["torque_causes"]},
            "unexplained": [u | {"start": u["start"] + lo, "stop": u["stop"] + lo} for u in rep["unexplained"]],
            "seconds": rep["seconds"],
        })  # fmt: skip
        done += hi - lo
    out = join_windows(results, spans, clip.fps)
    del results
    pieces = []
    reach = 2 * window_half(options.smooth, clip.fps, 3)  # what a piece's measures read of its neighbours
    for (a, b, _lo, _hi), window in zip(spans, solved):
        start = time.perf_counter()
        lo, hi = max(a - reach, 0), min(b + reach, clip.n_frames)
        part = _share(step, 0.95 + 0.05 * a / clip.n_frames, 0.05 * (b - a) / clip.n_frames)
        # the window's unexplained frames: found with its 2 s of context, not this measure's few frames
        known = [u | {"start": u["start"] - lo, "stop": u["stop"] - lo} for u in window["unexplained"]]
        rep = judge(clip.frames(slice(lo, hi)), out.frames(slice(lo, hi)), contacts_frames(contacts, lo, hi), body,
                    options, series=True, own=slice(a - lo, b - lo), progress=part, toes=contacts_frames(toes, lo, hi),
                    ground=ground, unexplained_spans=known)  # fmt: skip
        for cause in rep["torque_causes"]:  # the window's repair searched it, or did not
            seen = window["causes"].get(cause["frame"] + a, {})
            cause["searched"], cause["repair"] = seen.get("searched", False), seen.get("repair")
        rep["seconds"] = window["seconds"] + time.perf_counter() - start
        pieces.append((a, rep))
    _merge_unexplained(pieces)
    return out, pieces


def _merge_unexplained(pieces: list[tuple[int, dict]]) -> None:
    """A span of unexplained frames running across a cut, listed once, in the piece where it begins."""
    for k in range(len(pieces) - 1, 0, -1):  # from the last cut: a span across several moves back whole
        (a, rep), (next_a, following) = pieces[k - 1], pieces[k]
        if not rep["unexplained"] or not following["unexplained"]:
            continue
        last, first = rep["unexplained"][-1], following["unexplained"][0]
        if a + last["stop"] == next_a and first["start"] == 0 and first["kind"] == last["kind"]:
            last["stop"] = next_a - a + first["stop"]
            following["unexplained"].pop(0)


def _solved_whole(clip, contacts, body, options, step) -> tuple[Motion, list[tuple[int, dict]]]:
    result, rep = physics_retarget(clip, contacts, body, options, progress=step, series=True)
    return result, [(0, rep)]


def _share(step: Callable[[float], None], start: float, width: float) -> Callable[[float], None]:
    """``step`` reporting a window's share done as the stretch's."""
    return lambda x: step(start + width * x)


def contacts_frames(contacts: Contacts, start: int, stop: int) -> Contacts:
    """The contacts of frames [start, stop)."""
    return contacts.frames(slice(start, stop))
