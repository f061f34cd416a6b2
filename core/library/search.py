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

    def _starts(self) -> np.ndarray:
        return np.flatnonzero(np.r_[True, self.clip_of[1:] != self.clip_of[:-1]])

    def __post_init__(self) -> None:
        # (S, 3, N): one contiguous (3, N) matrix a segment, so a query's dot products are S small matmuls
        self._by_segment = np.ascontiguousarray(np.asarray(self.poses, dtype=np.float32).transpose(1, 2, 0))

    def distances(self, query: np.ndarray) -> np.ndarray:
        """(Q, N) pose distances (:func:`.poses.pose_distances`, uniform weights) from each query pose
        to every library pose, radians; computed segment by segment, in place, block by block."""
        query = np.asarray(query, dtype=np.float32)
        n_seg = query.shape[1]
        out = np.zeros((len(query), len(self.poses)), dtype=np.float32)
        for i in range(0, len(self.poses), BLOCK):
            block = out[:, i : i + BLOCK]
            for s in range(n_seg):
                dots = query[:, s, :] @ self._by_segment[s, :, i : i + BLOCK]
                np.clip(dots, -1.0, 1.0, out=dots)
                block += np.arccos(dots, out=dots)
        out /= n_seg
        return out

    def rank(self, query: np.ndarray, single_pose: bool = False) -> list[tuple[str, float]]:
        """Clips (name, score) best first for query poses (Q, S, 3): see the module docstring."""
        d = self.distances(query)
        starts = self._starts()
        nearest_in_clip = np.minimum.reduceat(d, starts, axis=1)  # (Q, C)
        if single_pose:
            score = nearest_in_clip.min(axis=0)
        else:
            counts = np.diff(np.r_[starts, len(self.clip_of)])
            back = np.add.reduceat(d.min(axis=0), starts) / counts
            score = 0.5 * (nearest_in_clip.mean(axis=0) + back)
        order = np.argsort(score, kind="stable")
        return [(self.names[i], float(score[i])) for i in order]
