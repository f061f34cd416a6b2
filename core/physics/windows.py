"""Long stretches solved in overlapping windows, so that memory stays bounded whatever the clip's length.

Solved whole, the solve holds ~90–107 kB a frame of clip (docs/physics_notes.md, "Long clips"): about 7.7 GB for
a ten-minute capture at 120 fps, more than many machines running Blender have. A stretch longer than
``WINDOW_SECONDS`` is cut into pieces of at most that length (:func:`window_cuts`), each piece solved with
``MARGIN_SECONDS`` of the clip either side of it as context (its solve sees the steps and flights around its ends,
and its own clip edges, where derivatives are one-sided, fall outside what is kept), and neighbouring results
crossfaded over ``BLEND_SECONDS`` centred on each cut (:func:`join_windows`, :func:`core.editing.mix.mix`). A cut
is placed where both feet stand on the floor longest near its even place: there both windows plant the feet on the
same anchors (the contact runs around it lie whole inside both), no flight is split, and the two solves agree
closely, so the crossfade moves little. The figures are measured piece by piece on the joined motion
(:func:`.solve.judge`), the way the stretches between jumps are (:func:`.metrics.combine_reports`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ..contacts import Contacts
from ..editing.mix import mix
from ..ik.common import smoothstep
from ..motion import Motion
from .body import BodyModel
from .derivatives import window_half
from .options import PhysicsOptions
from .solve import judge, physics_retarget

WINDOW_SECONDS = 60.0  # a piece's own frames at most: 7,200 frames at 120 fps, under 1 GB solved
MARGIN_SECONDS = 2.0  # clip solved either side of a piece as its context
BLEND_SECONDS = 0.5  # the crossfade across a cut, half each side
SEARCH_SHARE = 0.25  # a cut is searched within this share of a piece either side of its even place


def window_cuts(flags: np.ndarray, fps: float, window_seconds: float = WINDOW_SECONDS) -> np.ndarray:
    """Frames (k − 1,) cutting T frames into k pieces of at most ``window_seconds`` (empty when one piece will do).

    flags: (T, F) bool, the feet's contacts (:attr:`core.contacts.Contacts.flags`). Each cut is the frame farthest
    from any frame where not every foot is in contact (then from any frame with no foot in contact, so that a
    clip without double support is not cut in flight), searched within ``SEARCH_SHARE`` of a piece of its even
    place, the nearest to it among equals; no piece is longer than ``window_seconds``."""
    if not window_seconds * fps >= 2:
        raise ValueError(f"a window of {window_seconds:g} s at {fps:g} fps is shorter than two frames")
    flags = np.asarray(flags, dtype=bool).reshape(len(flags), -1)
    t = len(flags)
    if t <= window_seconds * fps:  # also an endless window
        return np.zeros(0, dtype=int)
    longest = int(window_seconds * fps)
    pieces = -(-t // longest)  # ceil: even pieces shorter than the window leave room to move each cut
    size = t / pieces
    # the farthest from a frame without both feet down, then (× T + 1 keeps the order) from a frame in the air
    score = _distance_to(~flags.all(axis=1)) * (t + 1) + _distance_to(~flags.any(axis=1))
    cuts, prev = [], 0
    for k in range(1, pieces):
        even = k * size
        # within the search, after the last cut, and leaving no piece (this one or those after) too long
        lo = max(int(np.ceil(even - SEARCH_SHARE * size)), prev + 1, t - (pieces - k) * longest)
        hi = max(min(int(even + SEARCH_SHARE * size), prev + longest, t - 1), lo)
        frames = np.arange(lo, hi + 1)
        prev = int(frames[np.lexsort((np.abs(frames - even), -score[frames]))[0]])
        cuts.append(prev)
    return np.asarray(cuts, dtype=int)


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
    half = int(round(blend_seconds * fps / 2))
    for (left, span_l), (right, span_r) in zip(
        zip(results[:-1], spans[:-1]), zip(results[1:], spans[1:])
    ):  # fmt: skip
        cut = span_l[1]
        lo, hi = max(cut - half, span_r[2]), min(cut + half, span_l[3])
        if hi - lo < 2:
            continue
        weights = smoothstep((np.arange(lo, hi) - lo + 0.5) / (hi - lo))
        mixed = mix(left.frames(slice(lo - span_l[2], hi - span_l[2])),
                    right.frames(slice(lo - span_r[2], hi - span_r[2])), weights)  # fmt: skip
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
    ``seconds`` (its window's solve and its own measure)."""
    step = progress or (lambda _x: None)
    cuts = window_cuts(contacts.flags, clip.fps, window_seconds)
    if not len(cuts):
        return _solved_whole(clip, contacts, body, options, step)
    spans = window_spans(clip.n_frames, cuts, clip.fps)
    total = sum(hi - lo for _a, _b, lo, hi in spans)
    results, solved, done = [], [], 0
    for _a, _b, lo, hi in spans:
        part = _share(step, 0.95 * done / total, 0.95 * (hi - lo) / total)
        result, rep = physics_retarget(clip.frames(slice(lo, hi)), contacts_frames(contacts, lo, hi), body, options,
                                       progress=part)  # fmt: skip
        results.append(result)
        solved.append({c["frame"] + lo: c for c in rep["torque_causes"]} | {"seconds": rep["seconds"]})
        done += hi - lo
    out = join_windows(results, spans, clip.fps)
    del results
    pieces = []
    reach = 2 * window_half(options.smooth, clip.fps, 3)  # what a piece's measures read of its neighbours
    for (a, b, _lo, _hi), searched in zip(spans, solved):
        start = time.perf_counter()
        lo, hi = max(a - reach, 0), min(b + reach, clip.n_frames)
        rep = judge(clip.frames(slice(lo, hi)), out.frames(slice(lo, hi)), contacts_frames(contacts, lo, hi), body,
                    options, series=True, own=slice(a - lo, b - lo))  # fmt: skip
        for cause in rep["torque_causes"]:  # the window's repair searched it, or did not
            seen = searched.get(cause["frame"] + a, {})
            cause["searched"], cause["repair"] = seen.get("searched", False), seen.get("repair")
        rep["seconds"] = searched["seconds"] + time.perf_counter() - start
        pieces.append((a, rep))
        step(0.95 + 0.05 * b / clip.n_frames)
    return out, pieces


def _solved_whole(clip, contacts, body, options, step) -> tuple[Motion, list[tuple[int, dict]]]:
    result, rep = physics_retarget(clip, contacts, body, options, progress=step, series=True)
    return result, [(0, rep)]


def _share(step: Callable[[float], None], start: float, width: float) -> Callable[[float], None]:
    """``step`` reporting a window's share done as the stretch's."""
    return lambda x: step(start + width * x)


def contacts_frames(contacts: Contacts, start: int, stop: int) -> Contacts:
    """The contacts of frames [start, stop)."""
    return replace(contacts, flags=contacts.flags[start:stop], anchors=contacts.anchors[start:stop])
