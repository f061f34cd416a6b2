"""Gait cycles: cut a cyclic motion at the strikes of one foot and resample each cycle to N frames."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..motion import Motion
from .events import Events, foot_strikes
from .timing import stretch


@dataclass(eq=False)
class Cycle:
    """One cycle resampled to N + 1 evenly spaced frames (fps N / duration), from a strike to the
    next strike of the same foot, both included (frame N is the next cycle's frame 0). source: index of the motion it
    came from; start, stop: its strike frames there; duration: seconds."""

    motion: Motion
    source: int
    start: float
    stop: float
    duration: float


def cycle_bounds(events: Events, side: str | None = None) -> np.ndarray:
    """(C, 2) consecutive strike frames of one foot: ``side`` (default "L" if present, else the
    first event's label)."""
    if not len(events.labels):
        return np.zeros((0, 2))
    side = side if side is not None else ("L" if "L" in set(events.labels.tolist()) else str(events.labels[0]))
    strikes = events.frames[events.labels == side]
    return np.stack((strikes[:-1], strikes[1:]), axis=-1)


def cut_cycles(
    motion: Motion,
    n_frames: int = 32,
    side: str | None = None,
    up: str | np.ndarray | None = None,
    source: int = 0,
    events: Events | None = None,
) -> list[Cycle]:
    """The gait cycles of ``motion``, each resampled (slerp) to ``n_frames`` + 1 frames.

    events: key events (default :func:`.events.foot_strikes`); side: which foot's strikes delimit
    the cycles.
    """
    events = foot_strikes(motion, up) if events is None else events
    cycles = []
    for start, stop in cycle_bounds(events, side):
        duration = (stop - start) / motion.fps
        piece = stretch(motion, n_frames + 1, start, stop)
        piece.fps = n_frames / duration
        cycles.append(Cycle(piece, source, float(start), float(stop), duration))
    return cycles
