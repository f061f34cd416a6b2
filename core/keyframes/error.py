"""Error measures between a motion and its rebuild; every benchmark and report uses these.

position error: distance between original and rebuilt world joint positions (scene units),
End Sites excluded. ``position_mean`` is the mean over all frames and joints,
``position_max`` the largest value. rotation error: the pose distance of
:class:`~.distance.PoseMetric` (the patent's root distance + weighted joint distances).
"""

from __future__ import annotations

import numpy as np

from ..motion import Motion
from .distance import PoseMetric


def position_errors(original: Motion, rebuilt: Motion, original_positions: np.ndarray | None = None) -> np.ndarray:
    """(T, J) world joint position error in scene units."""
    if original_positions is None:
        original_positions = original.world_positions()
    return np.linalg.norm(original_positions - rebuilt.world_positions(), axis=-1)


def rotation_errors(original: Motion, rebuilt: Motion, metric: PoseMetric) -> np.ndarray:
    """(T,) pose distance between each original frame and its rebuild."""
    return metric(original.rotations, original.translations, rebuilt.rotations, rebuilt.translations)


def summarize(position: np.ndarray, rotation: np.ndarray | None = None) -> dict[str, float]:
    """The summary figures of a report: position mean/p95/max and rotation mean/max."""
    summary = {
        "position_mean": float(position.mean()),
        "position_p95": float(np.percentile(position, 95)),
        "position_max": float(position.max()),
    }
    if rotation is not None:
        summary["rotation_mean"] = float(rotation.mean())
        summary["rotation_max"] = float(rotation.max())
    return summary


def evaluate(original: Motion, rebuilt: Motion, metric: PoseMetric) -> tuple[dict[str, float], np.ndarray]:
    """Summary figures and the per-frame mean joint position error (T,)."""
    position = position_errors(original, rebuilt)
    return summarize(position, rotation_errors(original, rebuilt, metric)), position.mean(axis=1)
