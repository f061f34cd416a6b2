"""The exact keyframe optimum: dynamic programming over a table of segment errors.

Objective: for a keyframe count K, the key set (first and last frame included) that
minimises the total reconstruction error E = Σ_t e(t), where e(t) is the mean over joints
of the world position error of frame t rebuilt by slerp/lerp between its two keys
(``position_mean`` of the result is E / T). Every frame's error depends only on the two keys
around it, so E is a sum of segment costs and the optimum is a shortest path:

    best[k, b] = min_{1 ≤ g ≤ G} best[k−1, b−g] + cost(b−g, b),   best[1, 0] = 0,

with G the largest gap allowed between consecutive keys. The answer is best[K, T−1],
exact among key sets whose gaps are all ≤ G.

Cost: the exact table cost(a, a+g) for all a and g ≤ G rebuilds Σ_g (T−g)(g−1) ≈ T·G²/2
in-between frames, each an O(J) FK: O(T·G²·J) work; memory O(T·G) for the table plus one
batch of ``SegmentErrors.chunk`` frames. The DP is O(K·T·G) additions and stores K·T gap
indices for the backtrack. 3000 frames × 31 joints at 5 % keys (G = 81): 9.5 M rebuilt
frames, 15-20 s on a shared 2-core machine (scripts/compare_keyframe_methods.py).

The gap bound. Costs are exact for gaps ≤ G = ⌈GAP_FACTOR·(T−1)/(K−1)⌉ (4× the mean gap,
at least MIN_GAP). Longer gaps, up to the reach SCREEN_FACTOR·G, are screened: a segment's
cost is estimated from SCREEN_SAMPLES evenly spaced frames (O(T·S·J) per gap instead of
O(T·g·J)) and scaled by OPTIMISM; the DP runs on exact plus optimistic costs, every
screened segment its answer uses gets its exact cost (its neighbours too), and the DP runs
again until the answer is made of exact costs only. That answer is optimal among all key
sets with gaps ≤ the reach, unless some screened segment was overestimated by more than
1/OPTIMISM = 1.25× (on CMU 05_02, 01_01 and 06_12, 6-frame estimates of 3600 random
40-400-frame segments were within 0.88-1.17× of the exact cost). If the answer uses a gap
equal to the reach, the reach doubles. Measured on 05_02 and 01_01: the optimum's longest
gap is ≤ 3.2× the mean gap at 5-10 % keys (inside G) but 6.1× on 05_02 at 2 % (a slow
328-frame stretch), which screening finds: 0.3688 mean error, as with every gap ≤ 450
exact, where the DP bounded by G alone gave 0.3812. ``screen=False`` gives the strictly
bounded optimum, exact among key sets with gaps ≤ G (``max_gap=T−1``: the unbounded
optimum, O(T³·J), fine for a few hundred frames).

Small counts stay expensive: G grows as the mean gap, so the table is O(T³/K²) rebuilt
frames (05_02 at 10 keys: about 100 M frames, minutes). Two keys need no table (one key
set). The table build reports progress and can be cancelled (``progress`` raises); the
cache is left as it was. Provable lower bounds were tried instead of the optimistic
estimates (triangle inequality from a few exact frames and a Lipschitz bound of the slerp
rebuild: sound, but only 0.5-0.7 of the exact cost, too loose to prune: on 05_02 at 5 %,
86 k of 150 k screened segments still needed their exact cost); see scripts/benchmark_optimal.py
for the measured costs.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..motion import Motion
from .distance import PoseMetric
from .segments import SegmentErrors

GAP_FACTOR = 4.0
MIN_GAP = 8
SCREEN_FACTOR = 2  # gaps up to SCREEN_FACTOR·G are screened by sampled estimates
SCREEN_SAMPLES = 6  # frames sampled per screened segment
OPTIMISM = 0.8  # screened estimates are scaled by this: a segment is missed only if overestimated by 25 %
CHUNK = 32768  # rebuilt frames per vectorised batch of the table build (about 70 MB for 31 joints)
Progress = Callable[[float], None]
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
        self.errors = SegmentErrors(motion, kind, chunk=CHUNK)
        self.n_frames = motion.n_frames
        self.table = np.full((self.n_frames, 2), np.inf)
        self.table[: self.n_frames - 1, 1] = 0.0
        self._reset_long()

    def _reset_long(self) -> None:
        """Screened columns for the gaps G+1 .. reach: optimistic estimates, exact once settled."""
        self.long = np.zeros((self.n_frames, 0))
        self.long_exact = np.zeros((self.n_frames, 0), dtype=bool)

    @property
    def max_gap(self) -> int:
        """G: every segment up to this gap has its exact cost."""
        return self.table.shape[1] - 1

    @property
    def reach(self) -> int:
        """The largest gap the DP may use: G plus the screened gaps."""
        return self.max_gap + self.long.shape[1]

    def extend(self, max_gap: int, progress: Progress | None = None) -> None:
        """Compute the exact columns up to gap ``max_gap`` (capped at T−1); O(T·g·J) per gap g.

        progress: called with the fraction of the rebuilt frames done after every gap; it may
        raise to cancel (the table then keeps the gaps it had).
        """
        max_gap = min(int(max_gap), self.n_frames - 1)
        old = self.max_gap
        if max_gap <= old:
            return
        grown = np.full((self.n_frames, max_gap + 1), np.inf)
        grown[:, : old + 1] = self.table
        work = np.cumsum([(self.n_frames - g) * (g - 1) for g in range(old + 1, max_gap + 1)], dtype=float)
        for i, g in enumerate(range(old + 1, max_gap + 1)):
            grown[: self.n_frames - g, g] = self.errors.gap_errors(np.arange(self.n_frames - g), g).sum(axis=1)
            if progress is not None:
                progress(work[i] / max(work[-1], 1.0))
        self.table = grown
        self._reset_long()

    def screen(self, reach: int) -> None:
        """Estimate the gaps up to ``reach``: OPTIMISM·(g−1)·(mean error of SCREEN_SAMPLES frames).

        O(T·SCREEN_SAMPLES·J) per gap instead of O(T·g·J).
        """
        n, gaps = self.n_frames, np.arange(self.reach + 1, min(reach, self.n_frames - 1) + 1)
        if len(gaps) == 0:
            return
        cols = np.full((n, len(gaps)), np.inf)
        k = (np.arange(SCREEN_SAMPLES) + 0.5) / SCREEN_SAMPLES
        for g_col, g in enumerate(gaps):
            a = np.arange(n - g)
            offsets = np.unique(1 + (k * (g - 1)).astype(int))
            t = (a[:, None] + offsets).ravel()
            a_rep = np.repeat(a, len(offsets))
            err = self.errors.errors_at(a_rep, a_rep + g, t).reshape(len(a), len(offsets))
            cols[a, g_col] = OPTIMISM * (g - 1) * err.mean(axis=1)
        self.long = np.concatenate((self.long, cols), axis=1)
        self.long_exact = np.concatenate((self.long_exact, np.zeros(cols.shape, dtype=bool)), axis=1)

    def mixed(self) -> np.ndarray:
        """(T, reach+1) exact costs up to G, then the screened columns."""
        return np.concatenate((self.table, self.long), axis=1)

    def settle(self, keys: np.ndarray) -> bool:
        """Give the screened segments of ``keys`` their exact cost; True if any was still an estimate.

        Neighbours (start and gap within ±max(2, g/8)) are settled with them: the DP tends to
        try a family of similar long segments one after another.
        """
        a, g = keys[:-1], np.diff(keys)
        a, g = a[g > self.max_gap], g[g > self.max_gap]
        todo = ~self.long_exact[a, g - self.max_gap - 1]
        if not todo.any():
            return False
        for start, gap in zip(a[todo], g[todo]):
            r = max(2, int(gap) // 8)
            starts, gaps = np.meshgrid(np.arange(start - r, start + r + 1), np.arange(gap - r, gap + r + 1))
            starts, gaps = starts.ravel(), gaps.ravel()
            ok = (starts >= 0) & (gaps > self.max_gap) & (gaps <= self.reach) & (starts + gaps < self.n_frames)
            starts, col = starts[ok], gaps[ok] - self.max_gap - 1
            new = ~self.long_exact[starts, col]
            starts, col = starts[new], col[new]
            self.long[starts, col] = self.errors.costs(starts, starts + col + self.max_gap + 1)
            self.long_exact[starts, col] = True
        return True

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


def segment_table(
    motion: Motion, max_gap: int, kind: str = "position", progress: Progress | None = None
) -> SegmentTable:
    """The (cached) segment table of ``motion`` with at least the gaps 1..max_gap.

    The last two tables are kept, keyed by a digest of the clip's arrays, so repeated
    requests (several counts, a max-error search) share one table.
    """
    key = (_digest(motion), kind)
    table = _cache.pop(key, None) or SegmentTable(motion, kind)
    _cache[key] = table
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    table.extend(max_gap, progress)
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


def check_finite(motion: Motion) -> None:
    """Refuse NaN/inf motion: ValueError naming the first bad frame and joint."""
    bad = ~(np.isfinite(motion.rotations).all(axis=2) & np.isfinite(motion.translations).all(axis=2))  # (T, J)
    if bad.any():
        frame, joint = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"motion has non-finite (NaN/inf) values at frame {frame}, joint "
            f"{motion.skeleton.names[joint]!r}: {int(bad.any(axis=1).sum())} frame(s) affected"
        )


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
    return _backtrack(best, gaps, count), float(best[count - 1, n - 1])


def _backtrack(best: np.ndarray, gaps: np.ndarray, count: int) -> np.ndarray:
    """The keys of the best path with ``count`` keys ending at the last frame."""
    n = best.shape[1]
    if not np.isfinite(best[count - 1, n - 1]):
        return np.array([0, n - 1])
    keys = [n - 1]
    for k in range(count - 1, 0, -1):
        keys.append(keys[-1] - int(gaps[k, keys[-1]]))
    return np.array(keys[::-1])


def _prepare(
    motion: Motion, count: int, max_gap: int | None, progress: Progress | None = None
) -> tuple[int, SegmentTable]:
    n = motion.n_frames
    gap = max_gap or default_max_gap(n, count)
    gap = min(n - 1, max(gap, math.ceil((n - 1) / max(count - 1, 1))))  # count keys can cover the clip
    return gap, segment_table(motion, gap, progress=progress)


def optimal_keys(
    motion: Motion, count: int, max_gap: int | None = None, screen: bool = True, progress: Progress | None = None
) -> tuple[np.ndarray, dict]:
    """The optimum for ``count`` keys: keys and {"total_error", "position_mean", "max_gap", "reach"}.

    max_gap: G, the gap up to which every segment cost is exact (default
    :func:`default_max_gap`; a cached table may already be exact further). screen: also
    allow longer gaps, up to SCREEN_FACTOR·G and further while the answer touches that
    reach, through optimistic estimates settled to exact costs whenever the DP uses them
    (see the module notes). With ``screen=False`` the answer is exact among gaps ≤ max_gap.
    progress: called with the fraction done of the table build (the long part); raise from
    it to cancel (e.g. Esc in Blender): nothing is returned and the cache stays consistent.
    Non-finite motion raises ValueError naming the frame; 1- and 2-frame clips give every frame.
    """
    check_finite(motion)
    n = motion.n_frames
    count = int(min(max(count, 2 if n > 1 else 1), n))
    if n <= 2 or count >= n:  # every frame is a key: nothing to rebuild
        keys = np.arange(n) if count >= n else np.array([0, n - 1])
        return keys, {"total_error": 0.0, "position_mean": 0.0, "max_gap": 1, "reach": 1}
    if count == 2:  # one key set, the first and last frame: one segment, no table
        total = float(SegmentErrors(motion).costs(0, n - 1))
        return np.array([0, n - 1]), {
            "total_error": total,
            "position_mean": total / n,
            "max_gap": n - 1,
            "reach": n - 1,
        }
    gap, table = _prepare(motion, count, max_gap, progress)
    if not screen:
        keys, total = solve(table.table[:, : gap + 1], count)
        return keys, {"total_error": total, "position_mean": total / n, "max_gap": gap, "reach": gap}
    table.screen(SCREEN_FACTOR * table.max_gap)
    while True:
        keys, total = solve(table.mixed(), count)
        if table.settle(keys):
            continue  # an estimate was used: solve again with its exact cost
        if np.diff(keys).max() < table.reach or table.reach >= n - 1:
            break
        table.screen(2 * table.reach)  # the answer touches the reach: look further
    info = {"total_error": total, "position_mean": total / n, "max_gap": table.max_gap, "reach": table.reach}
    return keys, info


def optimal_curve(motion: Motion, counts: np.ndarray, max_gap: int | None = None, screen: bool = True) -> np.ndarray:
    """(len(counts),) least total error for each key count: the quality limit for benchmarks.

    One DP of max(counts) layers answers every count; G defaults to the bound of the
    smallest count, so each count gets at least its own default (screening as in
    :func:`optimal_keys`, settled for every count; no widening of the reach).
    """
    check_finite(motion)
    n = motion.n_frames
    counts = np.clip(np.asarray(counts, dtype=int), min(2, n), n)
    if n <= 2:
        return np.zeros(len(counts))
    gap, table = _prepare(motion, int(counts.min()), max_gap)
    if not screen:
        best, _ = _layers(table.table[:, : gap + 1], int(counts.max()))
        return best[counts - 1, n - 1]
    table.screen(SCREEN_FACTOR * table.max_gap)
    while True:
        best, gaps = _layers(table.mixed(), int(counts.max()))
        settled = [table.settle(_backtrack(best, gaps, int(c))) for c in counts]
        if not any(settled):
            return best[counts - 1, n - 1]


def optimal_for_count(motion: Motion, metric: PoseMetric, count: int) -> tuple[np.ndarray, dict]:
    """The ``METHODS`` entry: :func:`optimal_keys` with the default gap bound.

    The objective is the position error whatever the pose metric; ``metric`` is unused.
    """
    return optimal_keys(motion, count)
