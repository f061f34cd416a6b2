"""Transitions from motion A to motion B (MotionPro): align, blend across a window, clean the feet.

1. **Join frames**: given, or searched (:func:`find_join`): over candidate start frames i of A
   and j of B, the cost is the sum over the window (k = 0..L−1, sampled) of the squared distances
   between the joint positions of A[i+k] and B[j+k], each frame first moved so its pelvis is over
   the origin with heading 0 (:func:`.root.normalize_frames`) and divided by the body size. A
   window of poses that match also has matching velocities.
2. **Blend** over L frames: w_k = smoothstep((k+1)/(L+1)) (zero slope at both ends). Poses are
   mixed in the normalised space (:func:`.mix.mix`: slerp of joints); the root is not lerped but
   re-integrated: the pelvis steps (velocity in the heading frame and turn rate) of A and B are
   mixed with the same weights and integrated from A's pelvis at frame i. B after the window
   continues from there with its own steps, i.e. B's root position and heading are normalised
   to A's at the join.
3. **Clean-up**: contacts are detected on the result and those overlapping the window (plus a
   margin) are planted with two-link IK (:mod:`.cleanup`).
4. **Report**: foot skating in the window ± margin before/after clean-up, and the pose and
   velocity jumps across the window against those inside the two clips (:mod:`.continuity`).

Result layout: frames [0, i) are A; [i, i+L) the blend; from i+L on, B from frame j+L.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..contacts import Contacts, Skating, detect_contacts
from ..ik.common import smoothstep
from ..motion import Motion
from .cleanup import clean_foot_sliding, contacts_near, shift_contacts, skating_in
from .clips import join
from .conform import conform
from .continuity import JoinReport, join_continuity
from .mix import mix
from .root import State, Track, advance, integrate, normalize_frames, place, place_frames, resolve_up, track


class Join(NamedTuple):
    """Best join: start frame in A, start frame in B, RMS joint distance over the window (body sizes)."""

    frame_a: int
    frame_b: int
    cost: float


@dataclass(eq=False)
class Transition:
    """A transition and its report. motion: the result; frame_a, frame_b: blend start in A and B;
    window: blend length L (frames); cost: the search cost (None when the frames were given);
    region: [start, stop) frames of the result where skating is reported (window ± margin);
    skating_before/after: skating there before/after clean-up (None without clean-up);
    continuity: jumps across the window vs inside the clips; contacts: those near the window
    (planted when cleaning up)."""

    motion: Motion
    frame_a: int
    frame_b: int
    window: int
    cost: float | None
    region: tuple[int, int]
    skating_before: Skating
    skating_after: Skating | None
    continuity: JoinReport
    contacts: Contacts | None

    @property
    def blend(self) -> tuple[int, int]:
        """[start, stop) frames of the blend window in the result."""
        return self.frame_a, self.frame_a + self.window


def window_frames(seconds: float, fps: float) -> int:
    """Blend window length in frames (at least 2)."""
    return max(2, round(seconds * fps))


def pose_features(motion: Motion, up: np.ndarray) -> np.ndarray:
    """(T, 3J) heading-normalised joint positions in body sizes (see the module notes)."""
    pos = normalize_frames(motion, up).world_positions()
    return pos.reshape(motion.n_frames, -1) / motion.skeleton.size()


def _range(search: tuple[int, int] | None, default: tuple[int, int], n_frames: int, window: int) -> tuple[int, int]:
    lo, hi = default if search is None else search
    lo, hi = max(int(lo), 0), min(int(hi), n_frames - window)
    if lo > hi:
        raise ValueError(
            f"no room for a {window}-frame window in frames [{lo}, {hi + window}) of a {n_frames}-frame clip"
        )
    return lo, hi


def find_join(
    a: Motion,
    b: Motion,
    window: int,
    search_a: tuple[int, int] | None = None,
    search_b: tuple[int, int] | None = None,
    up: str | np.ndarray | None = None,
    samples: int = 8,
) -> Join:
    """The window start frames (i in A, j in B) whose poses match best (module notes, step 1).

    a, b: same skeleton and frame rate. window: L frames. search_a, search_b: inclusive ranges
    of start frames (default: the second half of A, the first half of B). samples: window
    frames compared per candidate (evenly spread).
    """
    up = resolve_up(a, up)
    lo_a, hi_a = _range(search_a, (a.n_frames // 2, a.n_frames), a.n_frames, window)
    lo_b, hi_b = _range(search_b, (0, b.n_frames // 2), b.n_frames, window)
    fa = pose_features(a.frames(slice(lo_a, hi_a + window)), up)
    fb = pose_features(b.frames(slice(lo_b, hi_b + window)), up)
    d2 = np.sum(fa**2, axis=1)[:, None] + np.sum(fb**2, axis=1)[None, :] - 2.0 * fa @ fb.T
    na, nb = hi_a - lo_a + 1, hi_b - lo_b + 1
    offsets = np.unique(np.linspace(0, window - 1, min(samples, window)).round().astype(int))
    cost = sum(d2[k : k + na, k : k + nb] for k in offsets)
    i, j = np.unravel_index(int(np.argmin(cost)), cost.shape)
    rms = np.sqrt(max(cost[i, j], 0.0) / (len(offsets) * a.skeleton.n_joints))
    return Join(int(lo_a + i), int(lo_b + j), float(rms))


def blend_window(a: Motion, b: Motion, path_a: Track, path_b: Track, start: State, weights: np.ndarray) -> Motion:
    """Mix two equally long pieces with per-frame weights (L,): poses in normalised space, root steps
    mixed and integrated from the state ``start``."""
    up = path_a.up
    mixed = mix(normalize_frames(a, up, path_a), normalize_frames(b, up, path_b), weights)
    off_a, turn_a = path_a.steps()
    off_b, turn_b = path_b.steps()
    w = 0.5 * (weights[1:] + weights[:-1])
    offsets = off_a + w[:, None] * (off_b - off_a)
    turns = turn_a + w * (turn_b - turn_a)
    positions, headings = integrate(start, offsets, turns, up)
    return place_frames(mixed, positions, headings, up)


def assemble(a: Motion, b: Motion, frame_a: int, frame_b: int, length: int, up: np.ndarray) -> Motion:
    """A before the window, the blended window, then B continuing from it with its own steps
    (module notes, step 2)."""
    path_a, path_b = track(a, up), track(b, up)
    end_a, end_b = frame_a + length, frame_b + length
    weights = smoothstep((np.arange(length) + 1.0) / (length + 1.0))
    pieces = (a.frames(slice(frame_a, end_a)), b.frames(slice(frame_b, end_b)))
    blended = blend_window(
        *pieces, path_a.sub(frame_a, end_a), path_b.sub(frame_b, end_b), path_a.state(frame_a), weights
    )
    parts = [a.frames(slice(0, frame_a)), blended]
    if end_b < b.n_frames:
        state = advance(track(blended, up).state(length - 1), path_b.step(end_b - 1, end_b), up)
        parts.append(place(b.frames(slice(end_b, None)), 0, state, up, path_b.sub(end_b)))
    return join(parts)


def _contacts_near(motion: Motion, region: tuple[int, int], context: int, up: np.ndarray) -> Contacts:
    """Contacts overlapping ``region``, detected on it ± ``context`` frames, on the whole motion's frames."""
    lo, hi = max(region[0] - context, 0), min(region[1] + context, motion.n_frames)
    local = detect_contacts(motion.frames(slice(lo, hi)), up=up)
    return shift_contacts(contacts_near(local, region[0] - lo, region[1] - lo), lo, motion.n_frames)


def transition(
    a: Motion,
    b: Motion,
    window: float = 0.5,
    frame_a: int | None = None,
    frame_b: int | None = None,
    search_a: tuple[int, int] | None = None,
    search_b: tuple[int, int] | None = None,
    cleanup: bool = True,
    margin: float = 0.5,
    context: float = 5.0,
    up: str | np.ndarray | None = None,
    **plant_options,
) -> Transition:
    """Transition from ``a`` into ``b`` (module notes).

    b is first conformed to a's skeleton and frame rate. window, margin: seconds; context: seconds
    around the window used for contact detection and as the clips' reference in the report. frame_a,
    frame_b: blend start frames; either one left None is searched (with the other fixed when
    given). plant_options: passed to :func:`core.ik.plant.plant_feet`.
    """
    b = conform(b, a.skeleton, a.fps)
    up = resolve_up(a, up)
    length = window_frames(window, a.fps)
    cost = None
    if frame_a is None or frame_b is None:
        fixed_a = None if frame_a is None else (frame_a, frame_a)
        fixed_b = None if frame_b is None else (frame_b, frame_b)
        frame_a, frame_b, cost = find_join(a, b, length, fixed_a or search_a, fixed_b or search_b, up)
    if not (0 <= frame_a <= a.n_frames - length and 0 <= frame_b <= b.n_frames - length):
        raise ValueError(f"a {length}-frame window does not fit at frames {frame_a} of A and {frame_b} of B")
    result = assemble(a, b, frame_a, frame_b, length, up)
    pad, ctx = round(margin * a.fps), round(context * a.fps)
    region = (max(frame_a - pad, 0), min(frame_a + length + pad, result.n_frames))
    if cleanup:
        cleaned, near = clean_foot_sliding(result, *region, up=up, context=context, **plant_options)
    else:
        cleaned, near = result, _contacts_near(result, region, ctx, up)
    references = [
        a.frames(slice(max(frame_a - ctx, 0), frame_a + length)),
        b.frames(slice(frame_b, min(frame_b + length + ctx, b.n_frames))),
    ]
    return Transition(
        cleaned,
        frame_a,
        frame_b,
        length,
        cost,
        region,
        skating_in(result, near, *region),
        skating_in(cleaned, near, *region) if cleanup else None,
        join_continuity(cleaned, frame_a, frame_a + length, references),
        near,
    )
