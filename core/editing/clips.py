"""Clip operations: copy, cut, paste (insert), concatenate, repeat and reverse, with root continuity.

Root continuity rule: where two pieces meet, the second piece is moved rigidly (turned about
up and shifted horizontally, see :mod:`.root`) so that its first frame follows the last frame
of the first piece by one **step** (pelvis displacement in the heading frame plus heading
change). Which step:

- a :class:`Clip` made by :func:`copy`/:func:`cut` remembers the steps that joined it to its
  source (``entry``, ``exit``); pasting it uses them, so cutting and pasting back at the same
  frame reproduces the original exactly;
- the frames after the paste point keep the step they had in the target (from the frame
  before the paste point to the one after it);
- otherwise (a plain :class:`~core.motion.Motion`) the mean of the neighbours' own steps at
  the seam (constant-velocity extrapolation from both sides).

Heights are never changed: only horizontal position and heading continue.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..motion import Motion
from .conform import conform
from .root import Step, Track, advance, mean_step, place, resolve_up, retreat, track


@dataclass(eq=False)
class Clip:
    """A copied stretch of motion. entry: the step from the source frame before the clip to its
    first frame (None at the source's start); exit: from its last frame to the source frame after
    it (None at the end)."""

    motion: Motion
    entry: Step | None = None
    exit: Step | None = None


def join(parts: list[Motion]) -> Motion:
    """Frames of motions on the same skeleton one after another (no re-placement)."""
    first = parts[0]
    return Motion(
        first.skeleton,
        np.concatenate([p.translations for p in parts]),
        np.concatenate([p.rotations for p in parts]),
        first.fps,
    )


def _own_step(path: Track, first: bool) -> Step | None:
    """A path's first (or last) step, None for a single frame."""
    if len(path.headings) < 2:
        return None
    return path.step(0, 1) if first else path.step(len(path.headings) - 2, len(path.headings) - 1)


def _check_range(motion: Motion, start: int, stop: int) -> None:
    if not 0 <= start < stop <= motion.n_frames:
        raise ValueError(f"need 0 <= start < stop <= {motion.n_frames}, got start={start}, stop={stop}")


def copy(motion: Motion, start: int, stop: int, up: str | np.ndarray | None = None) -> Clip:
    """Frames [start, stop) as a :class:`Clip` with the steps that joined it to its neighbours."""
    _check_range(motion, start, stop)
    path = track(motion, up)
    entry = path.step(start - 1, start) if start > 0 else None
    exit_ = path.step(stop - 1, stop) if stop < motion.n_frames else None
    return Clip(motion.frames(slice(start, stop)), entry, exit_)


def cut(motion: Motion, start: int, stop: int, up: str | np.ndarray | None = None) -> tuple[Motion, Clip]:
    """Remove frames [start, stop): (the rest, the removed :class:`Clip`).

    The frames after the cut are moved to follow the frame before it with the step they had
    (their own incoming root velocity and turn).
    """
    _check_range(motion, start, stop)
    if stop - start == motion.n_frames:
        raise ValueError("cutting every frame leaves nothing")
    up = resolve_up(motion, up)
    path = track(motion, up)
    clip = copy(motion, start, stop, up)
    head, tail = motion.frames(slice(0, start)), motion.frames(slice(stop, None))
    if start == 0 or stop == motion.n_frames:
        return join([p for p in (head, tail) if p.n_frames]), clip
    state = advance(path.state(start - 1), path.step(stop - 1, stop), up)
    return join([head, place(tail, 0, state, up, path.sub(stop))]), clip


def paste(target: Motion, clip: Clip | Motion, at: int, up: str | np.ndarray | None = None) -> Motion:
    """Insert ``clip`` before frame ``at`` of ``target`` (0 ≤ at ≤ T; at = T appends).

    The clip is converted to the target's skeleton and frame rate (:func:`.conform.conform`),
    then placed to continue the root path and heading from the paste point, and the target's
    frames from ``at`` on are placed to continue after it (see the module notes). At ``at`` = 0
    the target stays where it is and the clip is placed to lead into it.
    """
    if not 0 <= at <= target.n_frames:
        raise ValueError(f"paste position must be in [0, {target.n_frames}], got {at}")
    clip = clip if isinstance(clip, Clip) else Clip(clip)
    piece = conform(clip.motion, target.skeleton, target.fps)
    up = resolve_up(target, up)
    path, piece_path = track(target, up), track(piece, up)
    if at == 0:
        exit_ = clip.exit or mean_step(_own_step(piece_path, first=False), _own_step(path, first=True))
        state = retreat(path.state(0), exit_, up)
        return join([place(piece, piece.n_frames - 1, state, up, piece_path), target])
    head_end = path.sub(0, at)
    entry = clip.entry or mean_step(_own_step(head_end, first=False), _own_step(piece_path, first=True))
    placed = place(piece, 0, advance(path.state(at - 1), entry, up), up, piece_path)
    head = target.frames(slice(0, at))
    if at == target.n_frames:
        return join([head, placed])
    state = advance(track(placed, up).state(placed.n_frames - 1), path.step(at - 1, at), up)
    tail = place(target.frames(slice(at, None)), 0, state, up, path.sub(at))
    return join([head, placed, tail])


def concatenate(first: Motion, second: Motion | Clip, up: str | np.ndarray | None = None) -> Motion:
    """``second`` appended after ``first`` with root continuity (paste at the end)."""
    return paste(first, second, first.n_frames, up)


def repeat(motion: Motion, times: int, closed: bool = False, up: str | np.ndarray | None = None) -> Motion:
    """A cyclic clip played ``times`` times in a row, each repetition continuing the root path.

    closed: the last frame repeats the first pose (a closed loop, like Bandai's run/dash loops):
    each repetition then starts on the previous one's last frame, which is not doubled.
    Otherwise each repetition follows the previous one by the mean of the clip's first and last
    steps.
    """
    if times < 1:
        raise ValueError(f"times must be at least 1, got {times}")
    up = resolve_up(motion, up)
    path = track(motion, up)
    parts, last = [motion], path.state(motion.n_frames - 1)
    for _ in range(times - 1):
        if closed:
            part = place(motion, 0, last, up, path).frames(slice(1, None))
        else:
            entry = mean_step(_own_step(path, first=False), _own_step(path, first=True))
            part = place(motion, 0, advance(last, entry, up), up, path)
        parts.append(part)
        last = track(part, up).state(part.n_frames - 1)
    return join(parts)


def reverse(motion: Motion) -> Motion:
    """The motion played backwards (same root path, travelled the other way)."""
    return motion.frames(slice(None, None, -1))
