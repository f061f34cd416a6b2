"""The exact keyframe optimum: dynamic programming over a table of segment errors.

Objective: for a keyframe count K, the key set (first and last frame included) that
minimises the total reconstruction error E = Σ_t e(t), where e(t) is the mean over joints
of the world position error of frame t rebuilt by slerp/lerp between its two keys
(``position_mean`` of the result is E / T). Every frame's error depends only on the two keys
around it, so E is a sum of segment costs and the optimum is a shortest path:

    best[k, b] = min_{1 ≤ g ≤ G} best[k−1, b−g] + cost(b−g, b),   best[1, 0] = 0,

with G the largest gap allowed between consecutive keys. The answer is best[K, T−1],
exact among key sets whose gaps are all ≤ G.

Cost: the table cost(a, a+g) for all a and g ≤ G rebuilds Σ_g (T−g)(g−1) ≈ T·G²/2
in-between frames, each an O(J) FK: O(T·G²·J) work, memory O(T·G) for the table plus one
batch of ``SegmentErrors.chunk`` frames. The DP is O(K·T·G) additions and stores K·T gap
indices for the backtrack.

The gap bound: by default G = ⌈GAP_FACTOR · (T−1)/(K−1)⌉ (at least MIN_GAP), i.e. a
multiple of the mean gap, and the bound is widened (×1.5) and the DP re-run while the best
key set uses a gap equal to G. On the CMU captures at 1-10 % keys the optimum's longest
gap was at most ≈2.5× the mean gap (scripts/compare_keyframe_methods.py --gaps), so with
GAP_FACTOR = 4 the bound was never active. It is a bound, not a proof: a still stretch
longer than G could be cheaper as one segment; pass ``max_gap=T−1`` for the unbounded
optimum (O(T³·J), fine for a few hundred frames).
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..motion import Motion
from .distance import PoseMetric
from .segments import SegmentErrors

GAP_FACTOR = 4.0
MIN_GAP = 8
_CACHE_SIZE = 2
_cache: OrderedDict[tuple, SegmentTable] = OrderedDict()


def default_max_gap(n_frames: int, count: int) -> int:
    """The default gap bound G for ``count`` keys on ``n_frames`` frames (see the module notes)."""
    mean_gap = (n_frames - 1) / max(count - 1, 1)
    return int(min(n_frames - 1, max(MIN_GAP, math.ceil(GAP_FACTOR * mean_gap))))


class SegmentTable:
    """Segment costs of one motion, grown on demand.

    ``table[a, g]`` (T, G+1): Σ_{a<t<a+g} e(t) for the rebuild of segment (a, a+g), e the
    per-frame error of ``kind`` (see :mod:`.segments`); +inf where a+g > T−1 and at g = 0.
    """

    def __init__(self, motion: Motion, kind: str = "position"):
        self.errors = SegmentErrors(motion, kind)
        self.errors.motion = None  # the table may be cached: keep no reference to the clip
        self.n_frames = motion.n_frames
        self.table = np.full((self.n_frames, 2), np.inf)
        self.table[: self.n_frames - 1, 1] = 0.0

    @property
    def max_gap(self) -> int:
        return self.table.shape[1] - 1

    def extend(self, max_gap: int) -> None:
        """Compute the columns up to gap ``max_gap`` (capped at T−1); O((T·g)·J) per gap g."""
        max_gap = min(int(max_gap), self.n_frames - 1)
        old = self.max_gap
        if max_gap <= old:
            return
        grown = np.full((self.n_frames, max_gap + 1), np.inf)
        grown[:, : old + 1] = self.table
        for g in range(old + 1, max_gap + 1):
            grown[: self.n_frames - g, g] = self.errors.gap_errors(np.arange(self.n_frames - g), g).sum(axis=1)
        self.table = grown

    def cost(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(n,) summed in-between error of segments (a, b); computed directly when b − a > G."""
        a, b = np.broadcast_arrays(np.asarray(a, dtype=int), np.asarray(b, dtype=int))
        gap = b - a
        inside = gap <= self.max_gap
        out = np.empty(a.shape)
        out[inside] = self.table[a[inside], gap[inside]]
        if not inside.all():
            out[~inside] = self.errors.costs(a[~inside], b[~inside])
        return out


def segment_table(motion: Motion, max_gap: int, kind: str = "position") -> SegmentTable:
    """The (cached) segment table of ``motion`` with at least the gaps 1..max_gap.

    The last two tables are kept, keyed by a digest of the clip's arrays, so repeated
    requests (several counts, a max-error search) share one table.
    """
    key = (_digest(motion), kind)
    table = _cache.pop(key, None) or SegmentTable(motion, kind)
    _cache[key] = table
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    table.extend(max_gap)
    return table


def clear_cache() -> None:
    """Forget the cached segment tables."""
    _cache.clear()


def _digest(motion: Motion) -> str:
    sk = motion.skeleton
    h = hashlib.blake2b(digest_size=16)
    for arr in (motion.rotations, motion.translations, sk.parents, sk.rest_translations, sk.rest_rotations):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(str(arr.shape).encode())
    return h.hexdigest()


def _layers(table: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Run the DP: best totals per layer (count, T) and the chosen gap per layer (count, T)."""
    n, width = table.shape
    max_gap = width - 1
    # ending[b, g] = cost of the segment (b−g, b): the table re-indexed by its end frame
    rows = np.arange(n)[:, None] - np.arange(width)
    ending = np.where(rows >= 0, table[np.clip(rows, 0, None), np.arange(width)], np.inf)
    best = np.full((count, n), np.inf)
    gaps = np.zeros((count, n), dtype=np.int32)
    best[0, 0] = 0.0
    pad = np.full(n + max_gap, np.inf)
    for k in range(1, count):
        pad[max_gap:] = best[k - 1]
        cand = sliding_window_view(pad, width)[:, ::-1] + ending  # cand[b, g] = best[k−1, b−g] + cost
        gaps[k] = np.argmin(cand, axis=1)
        best[k] = cand[np.arange(n), gaps[k]]
    return best, gaps


def solve(table: np.ndarray, count: int) -> tuple[np.ndarray, float]:
    """The key set of ``count`` keys minimising the summed segment costs of ``table`` (T, G+1).

    Returns the keys (ascending, 0 and T−1 included) and their total cost (inf when
    ``count`` keys cannot cover the clip with gaps ≤ G).
    """
    n = table.shape[0]
    count = int(min(max(count, 2 if n > 1 else 1), n))
    if n == 1:
        return np.array([0]), 0.0
    best, gaps = _layers(table, count)
    total = float(best[-1, n - 1])
    if not np.isfinite(total):
        return np.array([0, n - 1]), total
    keys = [n - 1]
    for k in range(count - 1, 0, -1):
        keys.append(keys[-1] - int(gaps[k, keys[-1]]))
    return np.array(keys[::-1]), total


def optimal_keys(motion: Motion, count: int, max_gap: int | None = None, widen: bool = True) -> tuple[np.ndarray, dict]:
    """The exact optimum for ``count`` keys: keys and {"total_error", "position_mean", "max_gap"}.

    max_gap: the gap bound G (default :func:`default_max_gap`). widen: grow G by 1.5× and
    solve again while the optimum uses a gap equal to G.
    """
    n = motion.n_frames
    count = int(min(max(count, 2 if n > 1 else 1), n))
    gap = max_gap or default_max_gap(n, count)
    gap = max(gap, math.ceil((n - 1) / max(count - 1, 1)))  # feasible
    while True:
        table = segment_table(motion, gap)
        keys, total = solve(table.table[:, : gap + 1], count)
        longest = int(np.diff(keys).max()) if len(keys) > 1 else 0
        if not widen or longest < gap or gap >= n - 1:
            break
        gap = min(n - 1, math.ceil(1.5 * gap))
    return keys, {"total_error": total, "position_mean": total / n, "max_gap": int(gap)}


def optimal_curve(motion: Motion, counts: np.ndarray, max_gap: int | None = None) -> np.ndarray:
    """(len(counts),) least total error for each key count: the quality limit for benchmarks.

    One DP of max(counts) layers answers every count. max_gap defaults to the bound of the
    smallest count, so each count gets at least its own default bound (no widening here).
    """
    n = motion.n_frames
    counts = np.clip(np.asarray(counts, dtype=int), 2, n)
    gap = max_gap or default_max_gap(n, int(counts.min()))
    table = segment_table(motion, gap)
    best, _ = _layers(table.table[:, : gap + 1], int(counts.max()))
    return best[counts - 1, n - 1]


def optimal_for_count(motion: Motion, metric: PoseMetric, count: int) -> tuple[np.ndarray, dict]:
    """The ``METHODS`` entry: :func:`optimal_keys` with the default gap bound.

    The objective is the position error whatever the pose metric; ``metric`` is unused.
    """
    return optimal_keys(motion, count)
