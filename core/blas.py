"""One BLAS thread while a job of many small matrix products runs.

NumPy's wheels (and Blender's bundled NumPy) multiply matrices with OpenBLAS, which hands a product
above a small size to worker threads — one a core — and keeps those workers spinning for a while after
each call, waiting for the next. The products an extraction makes are small and many: the threads win
nothing on them, and their spinning burns a core the whole time, counted in the process's CPU time and
taken from Blender's own threads and any other process. Measured on Extract Keyframes (05_02 at 10 %,
2 cores): CPU time 0.49 → 0.19 s, wall 0.26 → 0.18 s with one thread.

:func:`one_blas_thread` limits OpenBLAS to one thread for a block and puts the count back after;
with any other BLAS (or none found) it does nothing.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_users = 0  # blocks inside one_blas_thread (any thread): the count is put back when the last leaves
_saved = 0
_found: list = []  # [(set, get)] once looked up; [None] when there is no OpenBLAS to limit


def _openblas() -> tuple[Any, Any] | None:
    """(set_num_threads, get_num_threads) of the OpenBLAS NumPy loaded, or None."""
    if _found:
        return _found[0]
    import numpy as np

    base = os.path.dirname(np.__file__)
    candidates = []
    for pattern in ("../numpy.libs/*openblas*", ".libs/*openblas*", ".dylibs/*openblas*", "../numpy.libs/*blas*"):
        candidates += glob.glob(os.path.join(base, pattern))
    try:  # Linux: the libraries the process has loaded (a system NumPy's OpenBLAS)
        with open("/proc/self/maps") as maps:
            candidates += sorted({line.split()[-1] for line in maps if "openblas" in line and "/" in line})
    except OSError:
        pass
    found = None
    for path in candidates:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        # NumPy 1.x wheels: openblas_*64_; NumPy 2 wheels (scipy-openblas): scipy_openblas_*64_
        for prefix, suffix in (("", "64_"), ("", ""), ("scipy_", "64_"), ("scipy_", "")):
            setter = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            getter = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype, getter.restype = [ctypes.c_int], None, ctypes.c_int
                found = (setter, getter)
                break
        if found:
            break
    _found.append(found)
    return found


def blas_threads() -> int | None:
    """OpenBLAS's thread count now, None without OpenBLAS."""
    found = _openblas()
    return None if found is None else int(found[1]())


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block (from any thread; blocks may nest or overlap), OpenBLAS computes on one thread."""
    global _users, _saved
    found = _openblas()
    if found is None:
        yield
        return
    setter, getter = found
    with _lock:
        if _users == 0:
            _saved = int(getter())
            if _saved != 1:
                setter(1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _saved != 1:
                setter(_saved)
