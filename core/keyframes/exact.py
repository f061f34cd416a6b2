"""The exact keyframe optimum without the full table: lower bounds, pruning, exact costs where it matters.

Problem: for a key count K on T frames, the key set 0 = k₁ < … < k_K = T−1 minimising
Σ_i E(k_i, k_{i+1}), where the segment cost E(a, b) = Σ_{a<t<b} e_ab(t) sums the per-frame error
e_ab(t) ≥ 0 (:class:`~.segments.SegmentErrors`, kind ``"position"``: the mean over the P measured
points of the distance between the original and the slerp/lerp rebuild). The full table of E has
T²/2 segments and T³/6 rebuilt frames; this module finds the same minimum while rebuilding a
fraction of them.

**Proof of exactness.** Let U be the true total of some key set with K keys (so U ≥ OPT, the
optimum) and L(a, b) ≤ E(a, b) a lower bound for every segment (E itself where computed). Run
the count-constrained DP forwards and backwards on L: F(k, a) ≤ the least cost of k keys from
frame 0 to a, and B(k, b) ≤ the least cost of k keys from b to T−1, since every path's L-cost
is at most its E-cost. The k-th segment (a, b) of a key set costing at most U satisfies
F(k, a) + L(a, b) + B(K−k, b) ≤ U; so a segment with min_k F + L + B > U is in no key set
costing ≤ U, in particular in no optimal one (OPT ≤ U). It is pruned (L = ∞) for good: bounds
only rise, so F and B only rise. No segment can be longer than T−K+1 (the K keys leave T−K
frames between them). Surviving segments get their exact cost, a few at a time (those whose
bound is lowest, the key sets the relaxed DP prefers), and the DP runs again; whenever the
relaxed DP's best path is made of exact costs only, it is a real key set and its total
replaces U if lower. When every surviving segment is exact, the DP over them returns a key set
of least total among the key sets avoiding pruned segments, which include every optimal key
set: its total is OPT. The float tolerance of the test (1e-9 relative) only keeps more
segments than needed. Nothing here assumes the costs grow with the gap (tested on motion that
comes back to its start, held poses and one-frame flicks).

**The lower bounds.** Every segment with a gap ≤ G₀ (1.5× the mean gap, capped so the band
costs at most BAND_WORK rebuilt frames) is computed exactly. A longer segment (a, b), gap g, has
its error computed exactly at one frame c (:func:`sampled_bounds`; ``SAMPLES`` frames spread evenly
when asked), which extends to the frames t around it (within ``REACH``):

    e_ab(t) ≥ e_ab(c) − D(c, t) − |t − c| · v_ab,

where D(c, t) = mean_p ‖X_c,p − X_t,p‖ is how far the original points move between c and t
(exact, from the clip) and v_ab bounds how far the rebuilt points move per frame: along a
segment the slerp turns joint j's local rotation at the constant rate 2α_j/g per frame (α_j the
arc between its two keys on the unit quaternion sphere) and the lerp moves its translation by
‖Δt_j‖/g per frame; turning joint j by φ moves a point p below it by at most φ·ρ_jp (ρ_jp: the
sum of the bone offsets on the chain from j to p, a bound of their distance in any pose) and
translating it by d moves p by d. Hence v_ab = Σ_j (2α_j Λ_j + ‖Δt_j‖ μ_j) / g with
Λ_j = (1/P) Σ_{p below j} ρ_jp and μ_j the share of the points below j (the triangle
inequality on each point, then the mean). Summing max(0, ·) over the frames each sample covers
gives a lower bound of E(a, b). The long segments this one sample leaves under U then get the
Hermite bound of :mod:`.hermite` (each rebuilt point's cubic Hermite through its key values and its
velocities there, from the joints' constant body-frame rates, within a remainder bounded by the
fourth derivative; summed over four runs of frames by prefix sums: O(J + P) a segment, no rebuilt
frame), and keep the larger of the two: on 05_02 a median 0.90× of the exact cost at gap 20 where the
one-sample bound reached 0.07× (four samples 0.22×), 0.78–0.85× up to gap 400 (the module's notes). The
Hermite bound goes by bands of gaps (HERMITE_REACH), each after a DP prune on the bounds so far when that
prune costs less than the bounds of a tenth of the long segments left (PRUNE_SHARE, HERMITE_CELLS: such a
prune removes 1–10 % of them on 05_02, under 1 % at 5 % of 01_01, where one costs about 4 s).

A survivor is made exact in STEPS: first the exact sum over the centred quarter of its in-between
frames plus the Hermite bound of the frames outside it (:func:`_hermite_bounds`: the runs the whole
bound sums, cut at that quarter; a lower bound, every frame's error being ≥ 0). The Hermite bound is
tightest near the keys, where its remainder (t−a)²(b−t)² vanishes, and the exact frames are where the
slerp's error and the remainder peak: on 05_02 a median 0.82–0.91× of the exact cost from gap 30 to 300
(10th percentile 0.59–0.74; with the centred half 0.93–0.96×, the centred half alone 0.68×); the next
time it is chosen, the rest. Each round (a DP forwards and backwards) takes the survivors in key sets
bounded within FOCUS of the way from the relaxed optimum to U, their first steps before any second, and
as many more of the most promising as make the round rebuild about as many frames as its DP costs
(DP_CELLS). With 3 keys only the segments from the first frame or to the last can be in a key set
(:func:`feasible_starts`): the band and the samples skip the others.

**Cost, measured** (cold, the coarse-to-fine upper bound included, CPU seconds on a shared 2-core
machine; run alternately with the version before, efd1f15, in the same conditions, load 0.3–2.8).
CMU 05_02 (1,124 frames) at 5 % keys 18.4–21.7 s (25.0–26.5 before; 1.47 M rebuilt frames, 2.38 M
before; peak RSS 140 MB, 153), at 10 % 12.9–14.1 s (14.4–15.7; 0.94 M, 1.13 M), 3 keys 3.9–4.1 s
(9.6–12.4; 0.33 M, 1.40 M), 10 keys 140 s (203; 19.1 M, 36.2 M: small counts are the slow ones, every long
segment survives the one sample, 330 k the Hermite bound). CMU 01_01 (2,752 frames) at 5 % 111 s (150; 5.74 M, 7.30 M; 1.62 M long
segments given the Hermite bound, 2.32 M; peak RSS 461 MB), 3 keys 18.4 s (60.2; 1.50 M, 6.55 M), 10 keys
over 600 s (stopped). Still far from the 1 s asked for, and from 10 s at any count on 01_01. Where the time goes (process time per stage): at 5 % of 05_02 (18.5 s)
the exact band 1.6 s, the one-frame samples of 560 k long segments 5.1 s (about 9 µs each in the flat
layout), the Hermite bound of the 228 k they leave 7.1 s (about 30 µs each: the velocities of 100
points at both keys), the rounds 2.4 s of rebuilding and 2 s of DP (22 rounds); at 5 % of 01_01
(114 s) the samples of 3.8 M long segments 33 s, the Hermite bound of 1.62 M 49 s, the DP 20 s, the
rounds 9.5 s. The default coarse-to-fine path's total is 1.0015× the optimum at 5 % of 05_02, 1.013×
at 10 %, equal at 3 keys; on 01_01 1.0025× at 5 %, 1.007× at 10 %, equal at 1,000 keys.

Tried and dropped (5 % of 05_02 unless said): a DP prune with the band exact and every long segment at
0 ahead of the samples removes nothing (any path may take one long segment at no cost); exact samples
every s frames extended by the rule above as the first step reach 0.67/0.56/0.43× of the cost at gap 40
for s = 2/3/4 (0.96–0.92× at gap 160), but the rounds' survivors are mostly of gaps 40–60, where the
centred half did as well; nine Hermite bands up to 24 mean gaps (298 k → 292 k bounded, the prunes
costlier); REACH 96 or 200 (no more pruned than 48); two to four samples a long segment before the
Hermite bound (272 k → 194/158/139 k left, for 5.5/9/12.7 s more: dearer than the bounds they save);
the Hermite bound only when the rounds choose a long segment beyond the last band (157–177 k bounded
instead of 228 k, but every round's DP then spans gaps up to 1,069: 29 s); a subset of the points for
the Hermite bound (89–91 of the 100 carry 95 % of it); its chain sums as one matrix product (no faster)
or its runs as one batched product (33 → 64 µs a segment); the least bound of the rest of a key set
computed at the live segments only (42 ms against 26 ms dense); before the Hermite bound (with the
sampled bound alone): steps (0.25, 0.5, 1) and (0.2, 0.4, 0.7, 1), a narrower FOCUS, the ball bound
(0.03–0.2×), one segment's samples shared with its neighbours. scripts/benchmark_optimal.py prints
the current figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..blas import one_blas_thread
from ..motion import Motion
from .error import measured_points, pose_points
from .hermite import HermiteBounds
from .segments import SegmentErrors, centred_range, rest_locals

SAMPLES = 4  # exactly rebuilt frames per long segment (sampled_bounds' default)
# the Hermite bounds by bands of gaps up to these many mean gaps, then the rest; a DP prune before each band
HERMITE_REACH = (1.5, 3.0, 6.0)
REACH = 48  # frames each sample's bound extends to, either side
BAND_FACTOR = 1.5  # segments up to this many mean gaps are computed exactly at once
MIN_BAND = 8
BAND_WORK = 400_000  # rebuilt frames the exact band may cost (small counts: long mean gaps)
STEPS = (0.25, 1.0)  # survivors made exact in steps: the centred quarter (+ a Hermite bound of the rest), the rest
FOCUS = 0.1  # survivors made exact each round: bound within this share of the way from the relaxed optimum to U
# a DP prune ahead of a Hermite band only when it costs less than the bounds of this share of the long segments
# left (it removes 1-10 % of them on 05_02, under 1 % on 01_01 at 5 %, where one costs 4 s), a DP over
# HERMITE_CELLS cells (K·T·W) costing about as much as one segment's Hermite bound
PRUNE_SHARE = 0.1
HERMITE_CELLS = 6000
DP_CELLS = 800  # a round's DP (forwards, backwards, the rest) costs about as much per K·T·W cells as a rebuilt frame
DP_LAYERS = 12  # and its loops over the gaps (_reversed, _through) about as much as 12 layers more
TOLERANCE = 1e-9  # relative slack of the pruning test (float rounding): it only keeps more
CHUNK = 32768
BATCH = 65536  # sampled frames per flat batch of the long segments' bounds (progress between batches)
Progress = Callable[[float], None]


class Rates:
    """Per-pair bound of how fast the rebuilt points move, and the original points' displacements.

    ``speed(a, b)`` (n,): Σ_j 2α_j Λ_j + ‖Δt_j‖ μ_j, the mean over points of a bound of the
    distance a rebuilt point travels along the whole segment (divide by the gap for per frame).
    ``moved[c, d]`` (T, REACH+1): mean over points of ‖X_c − X_{c+d}‖ (inf past the clip's end).
    """

    def __init__(self, motion: Motion, reach: int = REACH):
        sk = motion.skeleton
        points = measured_points(sk)
        n_points, n_joints = len(points), sk.n_joints
        longest = np.linalg.norm(motion.translations, axis=2).max(axis=0)  # (J,) in any frame
        self.lever = np.zeros(n_joints)  # Λ_j
        self.share = np.zeros(n_joints)  # μ_j
        for p in range(n_points):
            j, reach_p = int(points.owner[p]), float(np.linalg.norm(points.offsets[p]))
            while j >= 0:
                self.lever[j] += reach_p / n_points
                self.share[j] += 1.0 / n_points
                reach_p += float(longest[j])
                j = int(sk.parents[j])
        local, turning, moving = rest_locals(motion)
        self._turning, self._moving = np.flatnonzero(turning), np.flatnonzero(moving)
        self._rot = np.ascontiguousarray(local[:, self._turning].transpose(1, 2, 0))  # (V, 4, T)
        self._trans = np.ascontiguousarray(motion.translations[:, self._moving].transpose(1, 2, 0))  # (M, 3, T)
        x = pose_points(motion, points)  # (T, P, 3)
        n = motion.n_frames
        self.moved = np.full((n, reach + 1), np.inf)
        self.moved[:, 0] = 0.0
        for d in range(1, min(reach, n - 1) + 1):
            diff = x[d:] - x[:-d]
            self.moved[: n - d, d] = np.sqrt(np.einsum("tpc,tpc->tp", diff, diff)).mean(axis=1)

    def speed(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        dots = np.abs(np.einsum("vcn,vcn->vn", self._rot[:, :, a], self._rot[:, :, b]))
        out = 2.0 * self.lever[self._turning] @ np.arccos(np.minimum(dots, 1.0))
        if len(self._moving):
            step = np.linalg.norm(self._trans[:, :, b] - self._trans[:, :, a], axis=1)  # (M, n)
            out = out + self.share[self._moving] @ step
        return out


def _offsets(gap: int, samples: int = SAMPLES) -> np.ndarray:
    """The frames (offsets from the segment's start) sampled on a segment of ``gap``: the middles of
    ``samples`` equal cells of its in-between frames."""
    inner = gap - 1
    edges = np.linspace(0.0, inner, min(samples, inner) + 1)
    return np.unique(np.clip(np.round(0.5 * (edges[:-1] + edges[1:]) + 0.5).astype(int), 1, inner))


def sampled_bounds(
    errors: SegmentErrors,
    rates: Rates,
    gaps: list[int],
    samples: int = SAMPLES,
    starts: list[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """For each gap g ≥ 2 of ``gaps``: lower bounds of the cost of the segments (a, a+g) for every a of
    ``starts`` (one array a gap, e.g. :func:`feasible_starts`; default every a < T−g), from ``samples`` exactly
    rebuilt frames each (see the module notes). One flat batch for all the gaps."""
    n = errors.n_frames
    offsets = [_offsets(g, samples) for g in gaps]
    starts = [np.arange(n - g) for g in gaps] if starts is None else starts
    a = np.concatenate([np.repeat(s, len(o)) for s, o in zip(starts, offsets)])
    b = np.concatenate([np.repeat(s + g, len(o)) for s, o, g in zip(starts, offsets, gaps)])
    t = np.concatenate([(s[:, None] + o).ravel() for s, o in zip(starts, offsets)])
    flat = errors.errors_at(a, b, t)
    reach = rates.moved.shape[1] - 1
    out, at = [], 0
    for g, s, o in zip(gaps, starts, offsets):
        err = flat[at : at + len(s) * len(o)].reshape(len(s), len(o)).T  # (S, n)
        at += len(s) * len(o)
        v = rates.speed(s, s + g) / g  # (n,) rebuilt travel per frame
        lower = np.r_[1, (o[:-1] + o[1:]) // 2 + 1]  # each sample's cell: its nearest frames
        upper = np.r_[(o[:-1] + o[1:]) // 2, g - 1]
        total = np.zeros(len(s))
        for k, c in enumerate(o):
            d = np.arange(max(int(lower[k]), int(c) - reach), min(int(upper[k]), int(c) + reach) + 1) - c
            first = np.where(d[:, None] >= 0, s[None, :] + c, s[None, :] + c + d[:, None])
            moved = rates.moved[first, np.abs(d)[:, None]]  # (D, n) = D(c, c+d)
            total += np.maximum(err[k][None, :] - moved - np.abs(d)[:, None] * v[None, :], 0.0).sum(axis=0)
        out.append(total)
    return out


def _hermite_bounds(hermite: HermiteBounds, a: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hermite moment bounds (:meth:`.hermite.HermiteBounds.run_bounds`) of segments (a, a+g), (n,) each: over
    every in-between frame, and over the frames outside the centred share STEPS[0] (those the rounds' first
    step leaves out). Four runs: the frames before that share, its two halves, the frames after it."""
    lo, hi = centred_range(g, STEPS[0])
    runs = hermite.run_bounds(a, a + g, np.stack((np.ones_like(g), lo, (lo + hi) // 2, hi, g)))
    return runs.sum(axis=0), runs[0] + runs[3]


def _chosen(
    todo: np.ndarray, through: np.ndarray, done: np.ndarray, within: float, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """The survivors (a, g) made exact next, from the (T, W+1) masks ``todo``, ``done`` (STEPS taken) and
    ``through``, the least bound of a key set using each: the most promising first, those in key sets bounded
    ``within`` (near the relaxed optimum), their cheap first steps before any later one; and as many more of
    the most promising as make the round rebuild as many frames as its DP costs (DP_CELLS a frame)."""
    a, g = np.nonzero(todo)
    key, step = through[a, g], done[a, g]
    focus = key <= within
    pick = focus & (step == 0)
    pick = pick if pick.any() else focus
    shares = np.r_[0.0, STEPS]
    frames = _frames(g, shares[step], shares[step + 1])
    budget = (count + DP_LAYERS) * todo.size / DP_CELLS - frames[pick].sum()
    if budget > 0:
        rest = np.flatnonzero(~pick)
        rest = rest[np.argsort(key[rest])]
        pick[rest[: int(np.searchsorted(np.cumsum(frames[rest]), budget)) + 1]] = True
    return a[pick], g[pick]


def feasible_starts(n: int, gap: int, count: int | None = None) -> np.ndarray:
    """The starts a of the segments (a, a+gap) of a clip of n frames that can be in a key set of ``count``
    keys, the first and last frame keyed: with 3 keys only a = 0 and a = n−1−gap (the one key between is
    either end of the segment); else every a < n − gap (with 4 keys or more, one key either side of the
    segment leaves room for the others whenever gap ≤ n − count + 1)."""
    if count == 3:
        return np.unique([0, max(n - 1 - gap, 0)])
    return np.arange(n - gap)


def _parts(errors: SegmentErrors, a: np.ndarray, g: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """(n,) the summed error of segments (a, a+g) over the frames of shares (first, last) (each its own)."""
    out = np.zeros(len(a))
    for f0, f1 in set(zip(first.tolist(), last.tolist())):
        pick = (first == f0) & (last == f1)
        out[pick] = errors.costs(a[pick], a[pick] + g[pick], part=(f0, f1))
    return out


def _frames(g: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """(n,) how many in-between frames of segments of gaps g the shares (first, last) hold."""
    inner = np.maximum(g - 1, 0)
    return np.ceil(last * inner - 1e-9).astype(int) - np.ceil(first * inner - 1e-9).astype(int)


def _reversed(table: np.ndarray) -> np.ndarray:
    """The table of the clip played backwards: rev[T−1−b, g] = table[b−g, g]."""
    n, width = table.shape
    rev = np.full(table.shape, np.inf)
    for g in range(1, width):
        rev[: n - g, g] = table[: n - g, g][::-1]
    return rev


def _through(forward: np.ndarray, backward: np.ndarray, count: int, width: int) -> np.ndarray:
    """(T, W+1) min over k of F(k, a) + B(K−k, a+g): the least bound of the rest of a key set using (a, a+g)."""
    n = forward.shape[1]
    out = np.full((n, width + 1), np.inf)
    f = forward[: count - 1]  # f[k, a]: k+1 keys up to a (a is key k+1)
    b = backward[count - 2 :: -1][: count - 1]  # b[k, j] = B with K−k−1 keys from j
    for g in range(1, width + 1):
        out[: n - g, g] = np.min(f[:, : n - g] + b[:, g:], axis=0)
    return out


def _prune(sub: np.ndarray, forward: np.ndarray, count: int, limit: float) -> np.ndarray:
    """Set to inf, in place, every segment of the bounds ``sub`` (T, W+1) that cannot be in a key set within
    ``limit``: its bound plus the least bounds of the rest of such a set (``forward``: :func:`.optimal._layers`
    of ``sub``; the backward DP computed here) exceeds it. Returns that rest (T, W+1) (:func:`_through`)."""
    from .optimal import _layers

    backward = _layers(_reversed(sub), count)[0][:, ::-1]
    rest = _through(forward, backward, count, sub.shape[1] - 1)
    sub[rest + sub > limit] = np.inf
    return rest


def exact_keys(
    motion: Motion, count: int, upper: tuple[np.ndarray, float] | None = None, progress: Progress | None = None
) -> tuple[np.ndarray, dict]:
    """The key set of ``count`` keys (first and last frame included) with the least total error over
    every such key set (no gap bound), and its info (see the module notes for the proof).

    upper: a key set and its exact total to start from (default: :func:`.optimal.coarse_to_fine`).
    progress: called with the fraction done; raise from it to cancel. Returns keys and
    {"total_error", "position_mean", "path": "exact", "optimal_among", "band", "rebuilt", "rounds",
    "survivors"} (survivors: long segments left after the one-frame sample, given the Hermite bound, and left
    after it).
    """
    with one_blas_thread():  # small products only (Rates.speed, the Hermite bound): idle workers would spin a core
        return _exact_keys(motion, count, upper, progress)


def _exact_keys(
    motion: Motion, count: int, upper: tuple[np.ndarray, float] | None, progress: Progress | None
) -> tuple[np.ndarray, dict]:
    from .optimal import _backtrack, _layers, check_finite, coarse_to_fine, solve

    check_finite(motion)
    n = motion.n_frames
    count = int(min(max(count, 2 if n > 1 else 1), n))
    if n <= 2 or count >= n or count == 2:
        from .optimal import optimal_keys

        return optimal_keys(motion, count, exact=True, max_gap=n - 1 if n > 1 else None, screen=False)
    report = progress or (lambda fraction: None)
    errors = SegmentErrors(motion, chunk=CHUNK)
    if upper is None:
        keys_u, info_u = coarse_to_fine(motion, count, progress=lambda f: report(0.3 * f))
        upper = (keys_u, float(info_u["total_error"]))
    keys_u, bound = np.asarray(upper[0]), float(upper[1])
    limit = bound * (1.0 + TOLERANCE) + 1e-300
    longest = n - count + 1  # K keys leave n − K in-between frames: no segment can hold more
    band = int(min(longest, max(MIN_BAND, math.ceil(BAND_FACTOR * (n - 1) / (count - 1)))))
    g = np.arange(2, band + 1)
    band = max(min(band, MIN_BAND), int(np.searchsorted(np.cumsum((n - g) * (g - 1)), BAND_WORK, side="right")) + 1)
    table = np.full((n, n), np.inf)  # table[a, g]: a lower bound of E(a, a+g), exact where ``exact``
    exact = np.zeros((n, n), dtype=bool)
    done = np.zeros((n, n), dtype=np.int8)  # how many of the STEPS shares of the frames are summed in ``partial``
    partial = np.zeros((n, n))
    table[: n - 1, 1], exact[: n - 1, 1] = 0.0, True
    rebuilt = 0
    work = float(sum((n - g) * (g - 1) for g in range(2, band + 1)))
    for g in range(2, band + 1):
        starts = feasible_starts(n, g, count)
        table[starts, g] = errors.gap_errors(starts, g).sum(axis=1)
        exact[starts, g] = True
        rebuilt += len(starts) * (g - 1)
        report(0.3 + 0.2 * rebuilt / max(work, 1.0))
    rates = Rates(motion)
    per = max(1, BATCH // n)  # gaps per flat batch
    for first in range(band + 1, longest + 1, per):  # one sample each: most long segments exceed U at once
        gaps = list(range(first, min(first + per, longest + 1)))
        starts = [feasible_starts(n, g, count) for g in gaps]
        for g, a, lb in zip(gaps, starts, sampled_bounds(errors, rates, gaps, samples=1, starts=starts)):
            table[a, g] = np.where(lb > limit, np.inf, lb)
            rebuilt += len(a)
        report(0.5 + 0.15 * (gaps[-1] - band) / max(longest - band, 1))
    stages = {"sampled": int(np.isfinite(table[:, band + 1 :]).sum())}  # long segments left after one sample each
    hermite = HermiteBounds(motion)
    outside = np.zeros((n, n))  # the Hermite bound of the frames the rounds' first step leaves out
    mean_gap = (n - 1) / (count - 1)
    edges = [band] + [int(f * mean_gap) for f in HERMITE_REACH if band < f * mean_gap < longest] + [longest]
    for i, (low, high) in enumerate(zip(edges[:-1], edges[1:])):
        # the DP's test F + L + B > U on the bounds so far (a shorter gap's Hermite bound raises F and B for
        # the longer ones), then the Hermite bound (hermite.py, O(P) a segment) on the gaps low < g ≤ high
        sub = table[:, : int(np.flatnonzero(np.isfinite(table).any(axis=0)).max()) + 1]
        if count * sub.size / HERMITE_CELLS < PRUNE_SHARE * np.isfinite(table[:, low + 1 :]).sum():
            _prune(sub, _layers(sub, count)[0], count, limit)
        a_long, g_long = np.nonzero(np.isfinite(table[:, low + 1 : high + 1]))
        g_long += low + 1
        stages["bounded"] = stages.get("bounded", 0) + len(a_long)
        for j in range(0, len(a_long), BATCH):
            a, g = a_long[j : j + BATCH], g_long[j : j + BATCH]
            lb, outside[a, g] = _hermite_bounds(hermite, a, g)
            table[a, g] = np.where(lb > limit, np.inf, np.maximum(lb, table[a, g]))
            report(0.65 + 0.15 * (i + min(j + BATCH, len(a_long)) / max(len(a_long), 1)) / (len(edges) - 1))
    stages["hermite"] = int(np.isfinite(table[:, band + 1 :]).sum())  # and after the Hermite bound
    rounds = 0
    while True:
        rounds += 1
        live = np.flatnonzero(np.isfinite(table).any(axis=0))
        width = int(live.max())
        sub = table[:, : width + 1]
        forward, gaps = _layers(sub, count)
        relaxed = float(forward[count - 1, n - 1])
        path = _backtrack(forward, gaps, count)
        if exact[path[:-1], np.diff(path)].all() and relaxed < bound:  # a key set of exact costs: a better U
            keys_u, bound = path, relaxed
            limit = bound * (1.0 + TOLERANCE) + 1e-300
        rest = _prune(sub, forward, count, limit)
        todo = np.isfinite(sub) & ~exact[:, : width + 1]
        if not todo.any():
            break
        a, g = _chosen(todo, rest + sub, done[:, : width + 1], relaxed + FOCUS * (bound - relaxed), count)
        # in steps (STEPS): first the centred share of their frames where the error concentrates (a tighter
        # lower bound, with which the next round's DP prunes most of them), the next time chosen the next share
        step = done[a, g]
        shares = np.r_[0.0, STEPS]
        part = partial[a, g] + _parts(errors, a, g, shares[step], shares[step + 1])
        rebuilt += int(_frames(g, shares[step], shares[step + 1]).sum())
        done[a, g] = step + 1
        partial[a, g] = part
        finished = step + 1 == len(STEPS)
        # not finished: the exact sum so far plus, after the first step, the Hermite bound of the frames left out
        outer = np.where(step == 0, outside[a, g], 0.0)
        sub[a, g] = np.where(finished, part, np.maximum(sub[a, g], part + outer))
        exact[a[finished], g[finished]] = True
        report(0.8 + 0.19 * rounds / (rounds + 3))
    keys, total = solve(table[:, : width + 1], count)
    if not total <= bound:  # float rounding only: the upper bound's keys are as good
        keys, total = keys_u, bound
    report(1.0)
    return keys, {
        "total_error": float(total),
        "position_mean": float(total) / n,
        "path": "exact",
        "optimal_among": "every key set with that count (first and last frame keyed)",
        "band": band,
        "rebuilt": rebuilt,
        "rounds": rounds,
        "survivors": stages,
    }
