"""The library's index: one JSON object per clip (JSON Lines), what a browser or a search needs.

An entry holds the file, its skeleton convention, joints, frames, fps, duration, the summary
keyframes (0-based frames) with their error (the one measure of :mod:`core.keyframes.error`, in the
file's length unit), the contact sheet's file, and the keyframe poses of :mod:`.poses` (rounded to
1e-4, about 0.006°) for search by pose. Files are found and read by the library command; this
module only builds and parses entries.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..keyframes.distance import PoseMetric
from ..keyframes.error import evaluate_keys
from ..keyframes.extract import extract_keyframes
from ..motion import Motion
from ..retarget.mapping import label_skeleton
from .poses import SEGMENT_NAMES, pose_directions

INDEX_FORMAT = "mocap_workbench.library/1"
SUMMARY_PER_SECOND = 1.0  # summary keyframes per second of motion, within SUMMARY_RANGE
SUMMARY_RANGE = (4, 24)


@dataclass
class ClipEntry:
    """One clip of the library index (see the module docstring)."""

    file: str
    convention: str | None
    joints: int
    frames: int
    fps: float
    duration: float
    keyframes: list[int]
    error_mean: float
    error_max: float
    sheet: str | None = None
    poses: list | None = None  # (K, S, 3) nested lists, or None when the body could not be labelled
    note: str = ""
    format: str = field(default=INDEX_FORMAT)

    def line(self) -> str:
        """The entry as one line of JSON."""
        return json.dumps(asdict(self), separators=(",", ":"), allow_nan=False)

    @classmethod
    def parse(cls, text: str) -> ClipEntry:
        data = json.loads(text)
        if data.get("format") != INDEX_FORMAT:
            raise ValueError(f"not a Mocap Workbench library entry (format {data.get('format')!r})")
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def pose_array(self) -> np.ndarray | None:
        """(K, S, 3) float32 keyframe poses, or None."""
        return None if self.poses is None else np.asarray(self.poses, dtype=np.float32)


def summary_count(motion: Motion) -> int:
    """How many keyframes summarise a clip: one a second, within SUMMARY_RANGE, at most every frame."""
    lo, hi = SUMMARY_RANGE
    per_time = round(SUMMARY_PER_SECOND * motion.n_frames / motion.fps)
    return int(min(motion.n_frames, max(lo, min(hi, per_time))))


def summary_frames(motion: Motion, limit: int | None = None) -> np.ndarray:
    """(K,) the frames that summarise a clip: :func:`summary_count` of them (at most ``limit``), chosen
    by curve simplification (every bone's measured points)."""
    count = summary_count(motion) if limit is None else min(summary_count(motion), limit)
    return extract_keyframes(motion, "simplify", count=count).keys


def describe_clip(motion: Motion, file: str | Path, keys: np.ndarray | None = None, error: dict | None = None,
                  sheet: str | None = None) -> ClipEntry:  # fmt: skip
    """The index entry of ``motion`` read from ``file``.

    keys, error: keyframes already extracted and their error summary (``position_mean``,
    ``position_max``); default: the summary keyframes (curve simplification, :func:`summary_count`).
    """
    if keys is None:
        keys = summary_frames(motion)
    keys = np.asarray(keys, dtype=int)
    if error is None:
        error, _ = evaluate_keys(motion, keys, PoseMetric.for_motion(motion))
    labels, convention = label_skeleton(motion.skeleton)
    try:
        poses, note = np.round(pose_directions(motion, labels, keys), 4).tolist(), ""
    except ValueError as exc:
        poses, note = None, f"not searchable by pose: {exc}"
    return ClipEntry(
        file=str(file), convention=convention, joints=motion.skeleton.n_joints, frames=motion.n_frames,
        fps=float(motion.fps), duration=motion.n_frames / motion.fps, keyframes=keys.tolist(),
        error_mean=float(error["position_mean"]), error_max=float(error["position_max"]), sheet=sheet,
        poses=poses, note=note,
    )  # fmt: skip


def read_index(path: str | Path) -> list[ClipEntry]:
    """The entries of an index file; a bad line raises ValueError naming the file and line."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                entries.append(ClipEntry.parse(text))
            except (ValueError, TypeError, KeyError) as exc:
                raise ValueError(f"{path}, line {number}: {exc}") from None
    return entries


__all__ = [
    "ClipEntry",
    "INDEX_FORMAT",
    "SEGMENT_NAMES",
    "describe_clip",
    "read_index",
    "summary_count",
    "summary_frames",
]
