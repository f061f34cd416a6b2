"""Two halves of one big array step at once: the caller's thread and one worker.

NumPy releases the GIL inside its array loops, so a step made of large array operations (forward
kinematics of every frame, playing every F-curve) runs on two cores when its frames (or curves) are
split in two. Each half is computed exactly as the whole would be, element by element, so the result
is the same to the bit, whatever the scheduling. Small steps (under ``least`` items) and steps asked
from the worker itself run in the caller's thread alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

WORKERS = min(2, os.cpu_count() or 1)  # the caller and at most one worker
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_inside = threading.local()  # set in the worker: a half does not split again


def halves(step: Callable[[slice], T], n: int, least: float = 512) -> list[T]:
    """``[step(slice(0, h)), step(slice(h, n))]`` computed at once (h = n // 2), or ``[step(slice(0, n))]``
    when n < ``least``, on a single core, or from inside a half."""
    if n < least or WORKERS < 2 or getattr(_inside, "active", False):
        return [step(slice(0, n))]
    h = n // 2
    second = _worker().submit(_marked, step, slice(h, n))
    try:
        first = step(slice(0, h))
    finally:
        rest = second.result()
    return [first, rest]


def _marked(step: Callable[[slice], T], part: slice) -> T:
    _inside.active = True
    try:
        return step(part)
    finally:
        _inside.active = False


def _worker() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mocap-workbench-half")
        return _pool
