"""Search a library by pose: which clips hold poses like these?

Every clip's keyframe poses (:mod:`.poses`) are stacked once into one (N, S, 3) float32 array with
each pose's clip; a query is a few poses (Q, S, 3) and every distance is computed at once, in
blocks. Two rankings:

- **like a pose** (one query pose, ``--frame``): a clip's score is its closest keyframe pose;
- **like a clip** (the query clip's keyframes): the symmetric chamfer distance — the mean, over the
  query's poses, of the distance to the clip's closest pose, and the same from the clip's poses
  to the query's, averaged — so a clip must hold the query's poses and no others to rank first.

Scores are mean segment angles in radians (0 = the same poses).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .poses import segment_distances

BLOCK = 1 << 15  # library poses per block of distances (Q × BLOCK floats a segment)


@dataclass
class PoseLibrary:
    """poses: (N, S, 3) float32; clip_of: (N,) clip number of each pose, clips in order, each non-empty;
    names: one name per clip."""

    poses: np.ndarray
    clip_of: np.ndarray
    names: list[str]

    @classmethod
    def build(cls, names: list[str], clip_poses: list[np.ndarray | None]) -> PoseLibrary:
        """From each clip's (K, S, 3) poses; clips without poses (None or empty) are left out."""
        kept = [(n, np.asarray(p, dtype=np.float32)) for n, p in zip(names, clip_poses, strict=True)
                if p is not None and len(p)]  # fmt: skip
        if not kept:
            raise ValueError("no clip in the library has poses to search")
        poses = np.concatenate([p for _, p in kept])
        clip_of = np.repeat(np.arange(len(kept)), [len(p) for _, p in kept])
        return cls(poses, clip_of, [n for n, _ in kept])

    def __post_init__(self) -> None:
        # (S, 3, N): one contiguous (3, N) matrix a segment, so a query's dot products are S small matmuls
        self._by_segment = np.ascontiguousarray(np.asarray(self.poses, dtype=np.float32).transpose(1, 2, 0))

    def distances(self, query: np.ndarray, chord: bool = False, poses: np.ndarray | None = None) -> np.ndarray:
        """(Q, N) pose distances (:func:`.poses.segment_distances`, uniform weights; ``chord``: its lower
        bound) from each query pose to the library's poses (``poses``: (N,) indices, default all),
        radians, block by block."""
        query = np.asarray(query, dtype=np.float32)
        columns = self._by_segment if poses is None else self._by_segment[:, :, poses]
        out = np.empty((len(query), columns.shape[2]), dtype=np.float32)
        for i in range(0, columns.shape[2], BLOCK):
            out[:, i : i + BLOCK] = segment_distances(query, columns[:, :, i : i + BLOCK], chord=chord)
        return out

    @staticmethod
    def _scores(d: np.ndarray, clip_of: np.ndarray, single_pose: bool) -> tuple[np.ndarray, np.ndarray]:
        """(clips present in ``clip_of`` (ascending), their scores) from distances d (Q, N) to poses of
        clips ``clip_of`` (N,), grouped: the module docstring's two rankings."""
        starts = np.flatnonzero(np.r_[True, clip_of[1:] != clip_of[:-1]])
        nearest_in_clip = np.minimum.reduceat(d, starts, axis=1)  # (Q, C)
        if single_pose:
            return clip_of[starts], nearest_in_clip.min(axis=0)
        counts = np.diff(np.r_[starts, len(clip_of)])
        back = np.add.reduceat(d.min(axis=0), starts) / counts
        return clip_of[starts], 0.5 * (nearest_in_clip.mean(axis=0) + back)

    def rank(self, query: np.ndarray, single_pose: bool = False, top: int | None = None) -> list[tuple[str, float]]:
        """Clips (name, score) best first for query poses (Q, S, 3): see the module docstring.

        top: only the best ``top`` clips, exactly, found faster: every clip is first scored on chord
        distances (no arccos), a lower bound L of its score with the score ≤ (π/2)·L (both rankings are
        means and minima of pose distances, so the bounds carry over); only clips whose L is within the
        top-th smallest upper bound can be among the best and get their exact score."""
        if top is not None and top < len(self.names):
            clips, lower = self._scores(self.distances(query, chord=True), self.clip_of, single_pose)
            bound = np.partition(lower * (np.pi / 2), top - 1)[top - 1]
            keep = clips[lower <= bound * (1 + 1e-4) + 1e-6]  # float32 slack
            poses = np.flatnonzero(np.isin(self.clip_of, keep))
        else:
            poses = np.arange(len(self.clip_of))
        clips, score = self._scores(self.distances(query, poses=poses), self.clip_of[poses], single_pose)
        order = np.argsort(score, kind="stable")[:top]
        return [(self.names[clips[i]], float(score[i])) for i in order]
