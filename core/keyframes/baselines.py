"""Reference methods that other keyframe selections are measured against."""

from __future__ import annotations

import numpy as np


def uniform_keys(n_frames: int, count: int) -> np.ndarray:
    """``count`` keys spread evenly over ``n_frames`` frames, first and last included."""
    count = int(np.clip(count, 1 if n_frames == 1 else 2, n_frames))
    keys = np.unique(np.round(np.linspace(0, n_frames - 1, count)).astype(int))
    if len(keys) < count:  # rounding collided: fill the widest gaps
        keys = np.union1d(keys, np.setdiff1d(np.arange(n_frames), keys)[: count - len(keys)])
    return keys
