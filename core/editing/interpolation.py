"""Interpolation between two motions, Verbs & Adverbs style (walk + run → jog).

1. **Key events** (foot strikes, :func:`.events.foot_strikes`, or given) are matched in order
   between A and B; event k sits at frame e_A[k] in A and e_B[k] in B.
2. **Time warp**: the output runs through the same events; segment k lasts
   ((1−c)·Δe_A[k]/fps_A + c·Δe_B[k]/fps_B) / speed seconds (c the coefficient), at least 10 % of
   the shorter source segment. Each output frame has a canonical time u (event index plus
   fraction), and source times e_A(u), e_B(u) by piecewise-linear interpolation between events.
3. **Poses**: A and B sampled at those times (slerp), each frame moved to the origin with heading
   0 (:func:`.root.normalize_frames`), mixed with weight c (slerp of joints; the pelvis in
   world space), so pelvis height, lean and limbs interpolate.
4. **Root**: the pelvis steps of the two sampled motions (displacement in the heading frame and
   turn per output frame, i.e. root velocity) are interpolated with c and re-integrated from the
   interpolated start (position lerp, heading by the shorter way), so c = 0 gives A and c = 1
   gives B exactly, time-aligned. Placement joints above the pelvis (Bandai's ``joint_Root``)
   keep A's channels.

Extrapolation: c in [-0.5, 1.5] (:data:`COEFFICIENT_RANGE`); beyond, slerp past the end poses
turns joints by more than half again their A–B difference, which breaks poses. speed: a
time-scale factor (2 = twice as fast: half as many frames for the same path); (0, 10].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..motion import Motion
from .conform import conform
from .events import foot_strikes, match_events
from .mix import mix
from .root import State, Track, integrate, normalize_frames, place_frames, resolve_up, track, wrap
from .timing import sample

COEFFICIENT_RANGE = (-0.5, 1.5)


@dataclass(eq=False)
class Interpolation:
    """motion: the result (A's skeleton and frame rate); frames_a, frames_b: (N,) source frame
    positions used for each output frame; events: (M,) output frame positions of the matched
    events; events_a, events_b: (M,) their frames in A and B."""

    motion: Motion
    frames_a: np.ndarray
    frames_b: np.ndarray
    events: np.ndarray
    events_a: np.ndarray
    events_b: np.ndarray


def warp_times(
    events_a: np.ndarray, events_b: np.ndarray, fps_a: float, fps_b: float, c: float, speed: float, fps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source frame positions (N,) in A and B for each output frame, and the events' output
    frame positions (M,) (module notes, step 2)."""
    da, db = np.diff(events_a) / fps_a, np.diff(events_b) / fps_b
    durations = np.maximum((1.0 - c) * da + c * db, 0.1 * np.minimum(da, db)) / speed
    knots = np.concatenate(([0.0], np.cumsum(durations)))
    n = int(np.floor(knots[-1] * fps + 1e-9)) + 1
    u = np.interp(np.arange(n) / fps, knots, np.arange(len(knots)))
    index = np.arange(len(knots))
    return np.interp(u, index, events_a), np.interp(u, index, events_b), knots * fps


def blended_path(pa: Track, pb: Track, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions (N, 3) and headings (N,) integrated from the steps of two equally long paths mixed
    with coefficient c, from the mixed start (module notes, step 4)."""
    (off_a, turn_a), (off_b, turn_b) = pa.steps(), pb.steps()
    start = State(
        (1.0 - c) * pa.positions[0] + c * pb.positions[0],
        float(pa.headings[0] + c * wrap(pb.headings[0] - pa.headings[0])),
    )
    return integrate(start, (1.0 - c) * off_a + c * off_b, (1.0 - c) * turn_a + c * turn_b, pa.up)


def interpolate(
    a: Motion,
    b: Motion,
    coefficient: float,
    events_a: np.ndarray | None = None,
    events_b: np.ndarray | None = None,
    speed: float = 1.0,
    up: str | np.ndarray | None = None,
) -> Interpolation:
    """Motion between A (coefficient 0) and B (1), time-aligned on key events (module notes).

    events_a, events_b: matching event frames (M ≥ 2, increasing) in A and B; both None to use
    matched foot strikes. B is conformed to A's skeleton but keeps its own frame rate (times are
    in seconds); the result has A's frame rate.
    """
    c = float(coefficient)
    if not COEFFICIENT_RANGE[0] <= c <= COEFFICIENT_RANGE[1]:
        raise ValueError(f"coefficient must be in {list(COEFFICIENT_RANGE)} (mild extrapolation only), got {c}")
    if not 0.0 < speed <= 10.0:
        raise ValueError(f"speed must be in (0, 10], got {speed}")
    b = conform(b, a.skeleton)
    up = resolve_up(a, up)
    if events_a is None and events_b is None:
        events_a, events_b = match_events(foot_strikes(a, up), foot_strikes(b, up))
    elif events_a is None or events_b is None:
        raise ValueError("give the events of both motions, or neither")
    events_a, events_b = np.asarray(events_a, dtype=float), np.asarray(events_b, dtype=float)
    if len(events_a) != len(events_b) or len(events_a) < 2:
        raise ValueError(f"need at least two matching events in each motion, got {len(events_a)} and {len(events_b)}")
    if np.any(np.diff(events_a) <= 0) or np.any(np.diff(events_b) <= 0):
        raise ValueError("event frames must increase")
    frames_a, frames_b, events = warp_times(events_a, events_b, a.fps, b.fps, c, speed, a.fps)
    sa, sb = sample(a, frames_a), sample(b, frames_b, a.fps)
    pa, pb = track(sa, up), track(sb, up)
    mixed = mix(normalize_frames(sa, up, pa), normalize_frames(sb, up, pb), c)
    out = place_frames(mixed, *blended_path(pa, pb, c), up)
    return Interpolation(out, frames_a, frames_b, events, events_a, events_b)
