"""The keyframe optimum: dynamic programming over segment errors, exact or coarse to fine.

Objective: for a keyframe count K, the key set (first and last frame included) that
minimises the total reconstruction error E = Σ_t e(t), where e(t) is the reports' per-frame
error (:mod:`.error`: the mean over every bone's measured points, heads, leaf tips and side
points, of the world position error) of frame t rebuilt by slerp/lerp between its two keys
(``position_mean`` of the result is E / T). Every frame's error depends only on the two keys
around it, so E is a sum of segment costs and the optimum is a shortest path:

    best[k, b] = min_{1 ≤ g ≤ G} best[k−1, b−g] + cost(b−g, b),   best[1, 0] = 0,

with G the largest gap allowed between consecutive keys.

Two paths; the result's params say which was taken and what the answer is optimal among
(``"optimal_among"``):

**Full resolution** (``exact=True``, or by default when :func:`table_work` ≤ BUDGET rebuilt
frames, a few seconds): the table cost(a, a+g) for all a and g ≤ G rebuilds
Σ_g (T−g)(g−1) ≈ T·G²/2 in-between frames, each an O(J + P) FK: O(T·G²·J) work; memory O(T·G)
plus one batch of ``SegmentErrors.chunk`` frames. The DP is O(K·T·G). Costs are exact for gaps
≤ G = ⌈GAP_FACTOR·(T−1)/(K−1)⌉ (4× the mean gap, at least MIN_GAP). Longer gaps, up to the
reach SCREEN_FACTOR·G, are screened: a segment's cost is estimated from SCREEN_SAMPLES evenly
spaced frames and scaled by OPTIMISM; the DP runs on exact plus optimistic costs, every screened
segment its answer uses gets its exact cost (its neighbours too), and the DP runs again until
the answer is made of exact costs only. That answer is optimal among all key sets with gaps ≤
the reach, unless some screened segment was overestimated by more than 1/OPTIMISM = 1.25× (on
CMU 05_02, 01_01 and 06_12, 6-frame estimates of 3600 random 40-400-frame segments were within
0.88-1.17× of the exact cost). If the answer uses a gap equal to the reach, the reach doubles.
``screen=False`` gives the strictly bounded optimum, exact among key sets with gaps ≤ G
(``max_gap=T−1``: the unbounded optimum, O(T³·J)). This path costs minutes on a long clip at
a few keys (G grows as the mean gap: O(T³/K²)).

**Coarse to fine** (the default beyond BUDGET; :func:`coarse_to_fine`): the full-resolution
optimum of the clip sampled every s frames (s from :func:`coarse_step`), refined level by level
(halving s, down to 2) by a corridor DP letting every key move by ±WINDOW steps, costs estimated
from every s-th frame, then at full resolution with exact costs until the corridor DP around the
answer finds nothing better. The answer is **optimal among every key set whose i-th key lies
within ±WINDOW frames of the answer's i-th key** (all of them costed exactly), not proven
globally optimal. Work: the coarse level (about COARSE_WORK rebuilt frames), (2·WINDOW+1)²·T/s
per sampled level, (2·WINDOW+1)²·T for the first exact round and, since every exact cost is
computed once (cached), only the segments around moved keys after it. Every rebuild reaches the
kernel in batches of thousands of frames: a batch costs about 8 ms of numpy calls whatever its
size (31 joints), so segments of mixed gaps go in one flat batch. Measured against the proved
optimum (:mod:`.exact`) on CMU 05_02 (1,124 frames): total error equal at 3 keys, 1.0015× at 5 %
keys, 1.013× at 10 %; about 0.5 s at 5 % (scripts/benchmark_optimal.py prints the current
figures).

The proved optimum over every key set (no gap bound, no estimate) is :func:`.exact.exact_keys`:
it starts from the coarse-to-fine answer and prunes segments with sound lower bounds, but
those bounds are loose near the mean gap, so it costs about as much as a full table. Both paths report progress every PROGRESS_FRAMES rebuilt
frames and can be cancelled (``progress`` raises); the cache of full-resolution tables is
then left as it was.
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
from .error import known_points
from .local_search import CachedCost, total_cost
from .segments import SegmentErrors

GAP_FACTOR = 4.0
MIN_GAP = 8
SCREEN_FACTOR = 2  # gaps up to SCREEN_FACTOR·G are screened by sampled estimates
SCREEN_SAMPLES = 6  # frames sampled per screened segment
OPTIMISM = 0.8  # screened estimates are scaled by this: a segment is missed only if overestimated by 25 %
CHUNK = 32768  # rebuilt frames per vectorised batch of the table build (about 70 MB for 31 joints)
PROGRESS_FRAMES = 16384  # rebuilt frames between progress calls (about 0.1 s for 31 joints)
BUDGET = 400_000  # rebuilt frames the full-resolution table may cost (a few seconds); beyond, coarse to fine
COARSE_WORK = 30_000  # rebuilt frames the coarse level's table may cost
COARSE_GAP_FACTOR = 2.0  # the coarse level's exact gaps: 2× its mean gap (screened beyond, as usual)
WINDOW = 2  # the corridor: each key moves by up to WINDOW steps of the level
Progress = Callable[[float], None]
_CACHE_SIZE = 2
_cache: OrderedDict[tuple, SegmentTable] = OrderedDict()


def default_max_gap(n_frames: int, count: int) -> int:
    """The default gap bound G for ``count`` keys on ``n_frames`` frames (see the module notes)."""
    mean_gap = (n_frames - 1) / max(count - 1, 1)
    return int(min(longest_gap(n_frames, count), max(MIN_GAP, math.ceil(GAP_FACTOR * mean_gap))))


def longest_gap(n_frames: int, count: int) -> int:
    """The longest gap a key set of ``count`` keys can have: the others are one frame each."""
    return max(1, n_frames - max(count, 2) + 1)


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
        total = float(sum((self.n_frames - g) * (g - 1) for g in range(old + 1, max_gap + 1)))
        done, pending, frames = 0.0, [], 0

        def flush() -> None:  # one batch for the pending pieces (many short gaps in one flat batch)
            nonlocal done, pending, frames
            if pending:
                a = np.concatenate([starts for starts, _ in pending])
                b = np.concatenate([starts + g for starts, g in pending])
                grown[a, b - a] = self.errors.costs(a, b)
                done += frames
                pending, frames = [], 0
                if progress is not None:
                    progress(done / max(total, 1.0))

        for g in range(old + 1, max_gap + 1):
            per = max(1, PROGRESS_FRAMES // max(g - 1, 1))  # progress after about PROGRESS_FRAMES rebuilt frames
            for start in range(0, self.n_frames - g, per):
                starts = np.arange(start, min(start + per, self.n_frames - g))
                pending.append((starts, g))
                frames += len(starts) * (g - 1)
                if frames >= PROGRESS_FRAMES:
                    flush()
        flush()
        self.table = grown
        self._reset_long()

    def screen(self, reach: int, progress: Progress | None = None) -> None:
        """Estimate the gaps up to ``reach``: OPTIMISM·(g−1)·(mean error of SCREEN_SAMPLES frames).

        O(T·SCREEN_SAMPLES·J) per gap instead of O(T·g·J).
        """
        n, gaps = self.n_frames, np.arange(self.reach + 1, min(reach, self.n_frames - 1) + 1)
        if len(gaps) == 0:
            return
        cols = np.full((n, len(gaps)), np.inf)
        k = (np.arange(SCREEN_SAMPLES) + 0.5) / SCREEN_SAMPLES
        total, done, pending = float(sum(n - gaps)), 0.0, []

        def flush() -> None:  # the small gaps' samples in one flat batch
            nonlocal done, pending
            if pending:
                col, a, offsets = (np.concatenate(x) for x in zip(*pending))
                b = a + gaps[col]
                err = self.errors.errors_at(a, b, a + offsets)
                uniq, where = np.unique(col * n + a, return_inverse=True)
                mean = np.bincount(where, err) / np.bincount(where)
                cols[uniq % n, uniq // n] = OPTIMISM * (gaps[uniq // n] - 1) * mean
                done += len(uniq)
                pending = []
                if progress is not None:  # raising here leaves the table as it was
                    progress(done / total)

        for col, g in enumerate(gaps):
            offsets = np.unique(1 + (k * (g - 1)).astype(int))
            if (n - g) * len(offsets) < PROGRESS_FRAMES // 4:  # few: with the other small gaps, flat
                a = np.arange(n - g)
                pending.append(
                    (np.full(len(a) * len(offsets), col), np.repeat(a, len(offsets)), np.tile(offsets, len(a)))
                )
                if sum(len(p[0]) for p in pending) >= PROGRESS_FRAMES:
                    flush()
                continue
            per = max(1, PROGRESS_FRAMES // len(offsets))  # many: rows of the gap layout, batch by batch
            for start in range(0, n - g, per):
                a = np.arange(start, min(start + per, n - g))
                cols[a, col] = OPTIMISM * (g - 1) * self.errors.gap_rows(a, int(g), offsets).mean(axis=0)
                done += len(a)
                if progress is not None:
                    progress(done / total)
        flush()
        self.long = np.concatenate((self.long, cols), axis=1)
        self.long_exact = np.concatenate((self.long_exact, np.zeros(cols.shape, dtype=bool)), axis=1)

    def mixed(self) -> np.ndarray:
        """(T, reach+1) exact costs up to G, then the screened columns."""
        return np.concatenate((self.table, self.long), axis=1)

    def settle(self, keys: np.ndarray, progress: Callable[[], None] | None = None) -> bool:
        """Give the screened segments of ``keys`` their exact cost; True if any was still an estimate.

        Neighbours (start and gap within ±max(2, g/8)) are settled with them: the DP tends to
        try a family of similar long segments one after another.
        """
        a, g = keys[:-1], np.diff(keys)
        a, g = a[g > self.max_gap], g[g > self.max_gap]
        todo = ~self.long_exact[a, g - self.max_gap - 1]
        if not todo.any():
            return False
        starts, gaps = [], []
        for start, gap in zip(a[todo], g[todo]):
            r = max(2, int(gap) // 8)
            near_a, near_g = np.meshgrid(np.arange(start - r, start + r + 1), np.arange(gap - r, gap + r + 1))
            starts.append(near_a.ravel())
            gaps.append(near_g.ravel())
        starts, gaps = np.concatenate(starts), np.concatenate(gaps)
        ok = (starts >= 0) & (gaps > self.max_gap) & (gaps <= self.reach) & (starts + gaps < self.n_frames)
        code = np.unique(starts[ok] * (self.n_frames + 1) + gaps[ok] - self.max_gap - 1)
        starts, col = code // (self.n_frames + 1), code % (self.n_frames + 1)
        new = ~self.long_exact[starts, col]
        starts, col = starts[new], col[new]
        tick = None if progress is None else (lambda fraction: progress())
        cost = _with_progress(self.errors.costs, tick, lambda: 0.0)  # one flat batch, progress between blocks
        self.long[starts, col] = cost(starts, starts + col + self.max_gap + 1)  # a cancel leaves the table as it was
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
    table = _cache.get(key) or SegmentTable(motion, kind)
    table.extend(max_gap, progress)  # all or nothing: a cancel leaves the cache as it was
    _cache[key] = table
    _cache.move_to_end(key)
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
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


def _layers(table: np.ndarray, count: int, last: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Run the DP: best totals per layer (count, T) and the chosen gap per layer (count, T).

    Layer k (its (k+1)-th key at frame b) is computed only where a key set of ``last`` keys (default
    ``count``) can pass: k ≤ b ≤ k + T − last (every key before and after b one frame apart at least);
    inf elsewhere. For many keys that band is narrow: T−1 keys cost O(T·G), not O(T²·G).
    """
    n, width = table.shape
    max_gap = width - 1
    slack = n - (count if last is None else last)
    # ending[b, g] = cost of the segment (b−g, b): the table re-indexed by its end frame
    rows = np.arange(n)[:, None] - np.arange(width)
    ending = np.where(rows >= 0, table[np.clip(rows, 0, None), np.arange(width)], np.inf)
    best = np.full((count, n), np.inf)
    gaps = np.zeros((count, n), dtype=np.int32)
    best[0, 0] = 0.0
    pad = np.full(n + max_gap, np.inf)
    windows = sliding_window_view(pad, width)[:, ::-1]  # windows[b, g] = pad[b + max_gap − g]: best[k−1, b−g]
    for k in range(1, count):
        pad[max_gap:] = best[k - 1]
        band = slice(k, min(n, k + slack + 1))
        cand = windows[band] + ending[band]  # cand[b, g] = best[k−1, b−g] + cost(b−g, b)
        gaps[k, band] = np.argmin(cand, axis=1)
        best[k, band] = cand[np.arange(len(cand)), gaps[k, band]]
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
    gap = min(longest_gap(n, count), max(gap, math.ceil((n - 1) / max(count - 1, 1))))  # count keys can cover the clip
    return gap, segment_table(motion, gap, progress=progress)


def optimal_keys(
    motion: Motion,
    count: int,
    max_gap: int | None = None,
    screen: bool = True,
    progress: Progress | None = None,
    exact: bool | None = None,
) -> tuple[np.ndarray, dict]:
    """The optimum for ``count`` keys: keys and {"total_error", "position_mean", "path",
    "optimal_among"} (+ "max_gap", "reach" on the full-resolution path; "coarse_step", "window",
    "rounds" coarse to fine). ``optimal_among`` says in words what the answer is optimal among.

    exact: True for the full-resolution path, False for coarse to fine; None (default) picks
    the full-resolution path when ``max_gap`` is given, ``screen`` is False or
    :func:`table_work` ≤ BUDGET (see the module notes); also when keys are too dense (over a sixth
    of the frames) to sample the clip coarser.

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
        return keys, {
            "total_error": 0.0,
            "position_mean": 0.0,
            "max_gap": 1,
            "reach": 1,
            "path": "full",
            "optimal_among": "every key set (nothing to rebuild)",
        }
    if count == 2:  # one key set, the first and last frame: one segment, no table
        total = float(SegmentErrors(motion).costs(0, n - 1))
        return np.array([0, n - 1]), {
            "total_error": total,
            "position_mean": total / n,
            "max_gap": n - 1,
            "reach": n - 1,
            "path": "full",
            "optimal_among": "every key set (there is one: the first and last frame)",
        }
    if exact is None:
        exact = max_gap is not None or not screen or table_work(n, count) <= BUDGET
    if not exact and (n - 1) // 2 + 2 < 3 * count:  # too many keys to sample the clip coarser
        exact = True
    if not exact:
        return coarse_to_fine(motion, count, progress=progress)
    stage = _Stages(progress)
    gap, table = _prepare(motion, count, max_gap, stage.part(0.0, 0.8))
    if not screen:
        keys, total = solve(table.table[:, : gap + 1], count)
        return keys, {
            "total_error": total,
            "position_mean": total / n,
            "max_gap": gap,
            "reach": gap,
            "path": "full",
            "optimal_among": f"key sets with gaps ≤ {gap} frames",
        }
    longest = longest_gap(n, count)
    table.screen(min(SCREEN_FACTOR * table.max_gap, longest), stage.part(0.8, 0.9))
    while True:
        keys, total = solve(table.mixed(), count)
        if table.settle(keys, stage.tick):
            continue  # an estimate was used: solve again with its exact cost
        if np.diff(keys).max() < table.reach or table.reach >= longest:
            break
        table.screen(min(2 * table.reach, longest), stage.part(0.9, 0.9))  # the answer touches the reach: look further
    if progress is not None:
        progress(1.0)
    info = {
        "total_error": total,
        "position_mean": total / n,
        "max_gap": table.max_gap,
        "reach": table.reach,
        "path": "full",
        "optimal_among": f"key sets with gaps ≤ {table.reach} frames, unless a screened estimate of a gap "
        f"over {table.max_gap} exceeded its exact cost {1 / OPTIMISM:.2f}×",
    }
    return keys, info


class _Stages:
    """Progress of the full-resolution path: the table build, the screening, then the settling
    (of unknown length: ticks creep towards 1)."""

    def __init__(self, progress: Progress | None):
        self.progress, self.last, self.ticks = progress, 0.0, 0

    def part(self, start: float, end: float) -> Progress | None:
        if self.progress is None:
            return None

        def report(fraction: float) -> None:
            self.last = max(self.last, start + (end - start) * fraction)
            self.progress(self.last)

        return report

    def tick(self) -> None:
        if self.progress is not None:
            self.ticks += 1
            self.last = max(self.last, 0.9 + 0.09 * self.ticks / (self.ticks + 20))
            self.progress(self.last)


def table_work(n_frames: int, count: int) -> float:
    """Rebuilt frames of the full-resolution path for ``count`` keys: the exact table up to the
    default G plus the screening up to SCREEN_FACTOR·G (the part that dominates its time)."""
    longest = longest_gap(n_frames, count)
    gap = min(longest, max(default_max_gap(n_frames, count), math.ceil((n_frames - 1) / max(count - 1, 1))))
    g = np.arange(2, gap + 1, dtype=float)
    reach = min(longest, SCREEN_FACTOR * gap)
    return float(((n_frames - g) * (g - 1)).sum()) + n_frames * (reach - gap) * SCREEN_SAMPLES


def coarse_step(n_frames: int, count: int) -> int:
    """The sampling step s of the coarse level: the smallest whose table on the T/s sampled frames
    (exact gaps up to COARSE_GAP_FACTOR× its mean gap, screened up to twice that) costs at most
    COARSE_WORK rebuilt frames, keeping at least three frames per key."""
    best = 2
    for step in range(2, n_frames):
        frames = (n_frames - 1) // step + 2
        if frames < 3 * count:
            break
        best = step
        gap = max(MIN_GAP, math.ceil(COARSE_GAP_FACTOR * (frames - 1) / max(count - 1, 1)))
        g = np.arange(2, min(gap, frames - 1) + 1, dtype=float)
        work = float(((frames - g) * (g - 1)).sum()) + frames * gap * SCREEN_SAMPLES
        if work <= COARSE_WORK:
            break
    return best


def _sampled_cost(errors: SegmentErrors, step: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Segment cost estimated from every ``step``-th in-between frame (t = a + step, a + 2·step, …),
    each weighted ``step``: the exact cost for step 1."""
    if step == 1:
        return errors.costs

    def cost(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.asarray(a, dtype=int).ravel(), np.asarray(b, dtype=int).ravel()
        width = np.maximum((b - a - 1) // step, 0)
        seg = np.repeat(np.arange(len(a)), width)
        first = np.r_[0, np.cumsum(width)[:-1]]
        t = a[seg] + step * (1 + np.arange(len(seg)) - np.repeat(first, width))
        out = np.zeros(len(a))
        if len(t):
            err = errors.errors_at(a[seg], b[seg], t)
            np.add.at(out, seg, step * err)
        return out

    return cost


def _with_progress(cost: Callable, progress: Progress | None, report: Callable[[], float]) -> Callable:
    """``cost`` evaluated in blocks of about PROGRESS_FRAMES rebuilt frames, calling ``progress(report())``
    after each block."""
    if progress is None:
        return cost

    def call(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.asarray(a, dtype=int).ravel(), np.asarray(b, dtype=int).ravel()
        block = np.cumsum(np.maximum(b - a - 1, 1)) // PROGRESS_FRAMES
        out = np.empty(len(a))
        for value in np.unique(block):
            idx = np.flatnonzero(block == value)
            out[idx] = cost(a[idx], b[idx])
            progress(report())
        return out

    return call


def corridor(cost: Callable, keys: np.ndarray, step: int, window: int, n_frames: int) -> tuple[np.ndarray, float]:
    """The best key set whose i-th key is within ``keys[i] ± window·step`` (in steps of ``step``; the
    ends fixed): a DP over the candidates of consecutive keys. Returns the keys and their total cost."""
    n = n_frames
    offsets = step * np.arange(-window, window + 1)
    cands = [np.array([0])] + [np.unique(np.clip(k + offsets, 1, n - 2)) for k in keys[1:-1]] + [np.array([n - 1])]
    pairs = list(zip(cands[:-1], cands[1:]))
    a = np.concatenate([np.repeat(c0, len(c1)) for c0, c1 in pairs])
    b = np.concatenate([np.tile(c1, len(c0)) for c0, c1 in pairs])
    costs = np.full(len(a), np.inf)
    ok = b > a
    costs[ok] = cost(a[ok], b[ok])
    best, choices, at = np.zeros(1), [], 0
    for c0, c1 in pairs:
        total = best[:, None] + costs[at : at + len(c0) * len(c1)].reshape(len(c0), len(c1))
        at += len(c0) * len(c1)
        choice = np.argmin(total, axis=0)
        best = total[choice, np.arange(len(c1))]
        choices.append(choice)
    out, i = [n - 1], 0
    for level in range(len(choices) - 1, -1, -1):
        i = int(choices[level][i])
        out.append(int(cands[level][i]))
    return np.array(out[::-1]), float(best[0])


def coarse_to_fine(
    motion: Motion, count: int, step: int | None = None, progress: Progress | None = None
) -> tuple[np.ndarray, dict]:
    """Keys for ``count`` on a long clip or a small count, where the full table is too costly.

    1. The optimum (:func:`optimal_keys`, full-resolution path) of the clip sampled every ``step``
       frames (its last frame added): about T·G²/(2·step³) rebuilt frames instead of T·G²/2.
    2. Levels of halving step down to 2: each key may move by up to WINDOW steps of the level
       (the corridor DP, :func:`corridor`), segment costs estimated from every step-th frame.
    3. At step 1 with exact costs (each computed once), the corridor DP is repeated around its
       answer until it returns a set no better: the answer is **optimal among all key sets whose
       i-th key lies within ±WINDOW frames of the answer's i-th key** (every such set was costed
       exactly), and no key set the coarse optimum led to is better; it is not proven globally
       optimal.
    """
    n = motion.n_frames
    step = step or coarse_step(n, count)
    errors = SegmentErrors(motion)
    grid = np.unique(np.r_[np.arange(0, n, step), n - 1])
    done = [0.0]

    def report() -> float:  # the refinement's length is not known ahead: an asymptote below 1
        return 0.5 + 0.49 * done[0] / (done[0] + 25.0 * n)

    sub_progress = None if progress is None else (lambda f: progress(0.5 * f))
    sub_gap = max(MIN_GAP, math.ceil(COARSE_GAP_FACTOR * (len(grid) - 1) / max(count - 1, 1)))
    sub = motion.frames(grid)
    with known_points(sub, errors.original_points(grid)):  # the sampled clip's points: the clip's, not computed again
        sub_keys, _ = optimal_keys(sub, count, max_gap=sub_gap, progress=sub_progress, exact=True)
    keys = grid[sub_keys]

    def counted(cost: Callable) -> Callable:
        def call(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            done[0] += float(np.maximum(np.asarray(b) - np.asarray(a) - 1, 0).sum()) / cost_step[0]
            return cost(a, b)

        return call

    cost_step = [1]
    level = step // 2
    while level > 1:  # the sampled levels; step 1 (exact costs, cached) follows
        cost_step[0] = level
        cost = _with_progress(counted(_sampled_cost(errors, level)), progress, report)
        keys, _ = corridor(cost, keys, level, WINDOW, n)
        level //= 2
    cost_step[0] = 1
    exact = CachedCost(_with_progress(counted(errors.costs), progress, report), n)
    total = total_cost(keys, exact)
    rounds = 0
    while True:  # exact costs, each computed once (cached): a round after the first costs only where keys moved
        rounds += 1
        better, better_total = corridor(exact, keys, 1, WINDOW, n)
        if not better_total < total - 1e-12 * max(total, 1e-300):
            break
        keys, total = better, better_total
    info = {
        "total_error": total,
        "position_mean": total / n,
        "path": "coarse_to_fine",
        "optimal_among": f"key sets with each key within ±{WINDOW} frames of the answer's",
        "coarse_step": int(step),
        "window": WINDOW,
        "rounds": rounds,
    }
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
        best, _ = _layers(table.table[:, : gap + 1], int(counts.max()), last=int(counts.min()))
        return best[counts - 1, n - 1]
    table.screen(min(SCREEN_FACTOR * table.max_gap, longest_gap(n, int(counts.min()))))
    while True:
        best, gaps = _layers(table.mixed(), int(counts.max()), last=int(counts.min()))
        settled = [table.settle(_backtrack(best, gaps, int(c))) for c in counts]
        if not any(settled):
            return best[counts - 1, n - 1]


def optimal_for_count(
    motion: Motion, metric: PoseMetric, count: int, progress: Progress | None = None
) -> tuple[np.ndarray, dict]:
    """The ``METHODS`` entry: :func:`optimal_keys` with the default gap bound (``progress`` as there).

    The objective is the position error whatever the pose metric; ``metric`` is unused.
    """
    return optimal_keys(motion, count, progress=progress)
