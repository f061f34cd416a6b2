"""Error measures between a motion and its rebuild; every benchmark and report uses these.

position error: distance between original and rebuilt world joint positions (scene units),
End Sites excluded. ``position_mean`` is the mean over all frames and joints,
``position_max`` the largest value. rotation error: the pose distance of
:class:`~.distance.PoseMetric` (the patent's root distance + weighted joint distances).
"""

from __future__ import annotations

import numpy as np

from ..kinematics import CHUNK, forward_kinematics
from ..motion import Motion
from .distance import PoseMetric
from .reconstruct import Rebuild


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


def evaluate_keys(motion: Motion, keys: np.ndarray, metric: PoseMetric) -> tuple[dict[str, float], np.ndarray]:
    """:func:`evaluate` of the slerp rebuild from ``keys``, block by block without building it whole.

    Same figures as ``evaluate(motion, reconstruct(motion, keys), metric)``; on long clips it
    is several times faster because no clip-sized temporary is ever allocated.
    """
    n, j = motion.n_frames, motion.skeleton.n_joints
    position = np.empty((n, j))
    rotation = np.empty(n)
    sk = motion.skeleton
    rebuild = Rebuild(motion, keys)
    for start in range(0, n, CHUNK):
        frames = np.arange(start, min(start + CHUNK, n))
        trans, rot = rebuild(frames)
        original = forward_kinematics(sk, motion.translations[frames], motion.rotations[frames], False)[0]
        played = forward_kinematics(sk, trans, rot, False)[0]
        position[frames] = np.sqrt(np.einsum("tjc,tjc->tj", original - played, original - played))
        rotation[frames] = metric(motion.rotations[frames], motion.translations[frames], rot, trans)
    return summarize(position, rotation), position.mean(axis=1)
