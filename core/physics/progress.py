"""Progress reports of a long solve, split over its stages, whose fractions only grow.

A caller's ``progress(fraction)`` (0–1) may raise to stop the work (the add-on's jobs raise
``Cancelled`` once the user pressed Esc), so the solve calls it often — after every evaluation
of the whole clip — and each stage gets its own span of the fraction.
"""

from __future__ import annotations

from collections.abc import Callable

ProgressFn = Callable[[float], None]


class Progress:
    """``progress(fraction)`` mapped onto the span [lo, hi] of a callback, never going back.

    Calling an instance with x in [0, 1] reports lo + (hi − lo)·x to the callback (or at least
    the largest fraction reported so far by any span of the same callback); :meth:`span` gives
    the sub-span of a stage; :meth:`tick` reports the last fraction again (a cancellation point
    without progress to show). callback None: nothing is reported.
    """

    def __init__(self, callback: ProgressFn | None = None, lo: float = 0.0, hi: float = 1.0, _last=None) -> None:
        self.callback, self.lo, self.hi = callback, float(lo), float(hi)
        self._last = _last if _last is not None else [0.0]

    def __call__(self, x: float) -> None:
        value = self.lo + (self.hi - self.lo) * min(max(float(x), 0.0), 1.0)
        self._last[0] = max(self._last[0], value)
        if self.callback is not None:
            self.callback(self._last[0])

    def tick(self) -> None:
        """Report the fraction reached so far again (lets the callback stop the work)."""
        if self.callback is not None:
            self.callback(self._last[0])

    def span(self, a: float, b: float) -> Progress:
        """The stage covering [a, b] of this span (fractions of it)."""
        w = self.hi - self.lo
        return Progress(self.callback, self.lo + w * a, self.lo + w * b, self._last)


def as_progress(progress: ProgressFn | Progress | None) -> Progress:
    """``progress`` as a :class:`Progress` (the same object when it already is one)."""
    return progress if isinstance(progress, Progress) else Progress(progress)
