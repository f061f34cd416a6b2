"""Key-frame extraction of the patent: motion-activity peaks, segment votes, local search.

Steps (ARCHITECTURE.md, "Patent: key-frame extraction for virtual-human motion data"):

1. Activity signal a(t) from the main joints: the pose distance (:class:`PoseMetric` with
   the ``MAIN`` weights: hands and fingers excluded; preset and overrides adjustable, and
   joints the caller's metric weighs 0 stay out) across a window of ω frames either side
   of t. ``signal="speed"`` (default): distance between poses t−ω and t+ω, how much the
   body moves around t; ``"change"``: distance of pose t from the slerp of poses t−ω and
   t+ω, how much the motion turns inside the window. Values below the noise floor
   ε·P95(a) are set to 0.
2. Smooth a(t) (Gaussian, σ seconds) and take all its peaks. Peaks ≥ the upper quartile of
   the peak values are salient; with the first and last frame they are the initial keys.
   r_wm is the mean over the initial segments of width / MLRE; segments wider than
   W = δ·e_l·r_wm are split at their relatively salient peaks (≥ the upper quartile of the
   unused peaks inside), repeated until no wide segment has a peak left. Then each
   segment votes: MLRE (largest frame error), ALRE (summed error) and LSW (width) each give
   0-3 by how many of their thresholds a1 < a2 < a3 they reach; the majority wins, a
   three-way tie takes the smallest. That many keys are added from the segment's unused
   peaks, the combination minimising the segment's error.
3. :func:`~.local_search.local_search` moves every inner key to its best frame until none
   moves.

Frame error e(t) (``error``): ``"position"`` (default: mean error of the measured points of
every bone, heads, leaf tips and sides, the figure reports use) or ``"pose"`` (the patent's root distance + Σ_j w_j·d(q_j, q̂_j)).
Thresholds are relative so the defaults carry across skeletons and frame rates: e_l is a
fraction of the body size (position) or a pose distance (pose); MLRE thresholds are
``mlre_levels``·e_l, ALRE thresholds ``alre_levels``·e_l·W, LSW thresholds ``lsw_levels``·W.
Levels 1, 4, 9 follow from linear rebuilds of smooth motion: n added keys cut a segment's
largest and summed error by about (n+1)², its width by n+1 (hence 1, 2, 3 for LSW).

A count target runs steps 1-2 with the natural parameters, then removes or inserts keys
by the same error criterion (:func:`~.local_search.fit_to_count`: the key whose removal
adds the least error, the frame whose insertion removes the most) and runs step 3 with
exchanges (:func:`~.local_search.exchange_search`, ``exchange=True``, beyond the patent):
step 3's moves stay inside (previous, next key), so a key is never taken from where it is
cheapest to lose to where it is most needed; an exchange does that, at the same count.

How the defaults were chosen (scripts/tune_activity.py: the seven CMU cgspeed clips the
tests do not use, 2/5/10 % keys, position_mean over that of uniform keys at the same
count, geometric mean of the 21 cases; lower is better):
    variant (from the defaults)               score   worst
    defaults (speed, ω 0.05 s, σ 0.03 s, ε 0.1,  0.571   0.878
      e_l 1 %, δ 1, position error, exchanges)
    no exchanges (the patent's step 3 only)    0.582   0.878
    signal "change"                            0.574   0.905
    ε 0.02                                     0.572   0.878
    ω 0.1 s                                    0.572   0.913
    σ 0.06 s                                   0.569   0.913
    δ 2                                        0.571   0.878
    e_l 3 %                                    0.572   0.878
    error "pose" (the patent's)                0.648   1.011
    no local search (steps 1-2 + fit only)     0.706   1.055
    no local search, signal "change"           0.722   1.547

Signal, window, smoothing, noise floor, δ and e_l move the score by under 1 %, because
count targets end with the error-driven fit, local search and exchanges; without the
search the "speed" signal places better keys (0.706 vs 0.722, worst case 1.05 vs 1.55),
which decided the signal; the other variants were within noise, so the first values
tried stayed. The position error beat the patent's pose error (0.571 vs 0.648) on the
figure reports use. Exchanges gain 2 % here and more where the natural keys sit badly (on
the test clips: 01_01 at 2 % 0.742 → 0.613, 05_02 at 5 % 0.108 → 0.090; optimum 0.607 and
0.086). e_l = 1 % of the body size puts the natural count (steps 1-2) near 5 % of the
frames at 120 fps; it is bounded by the number of activity peaks (natural/target
0.25-2.0 over 2-10 % targets).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from .distance import PoseMetric, joint_weights
from .local_search import CachedCost, SegmentCost, exchange_search, fit_to_count, local_search
from .segments import SegmentErrors


@dataclass(frozen=True)
class ActivityParams:
    """Parameters of the patent method (see the module notes for units and how the defaults were chosen)."""

    window: float = 0.05  # ω in seconds (at least one frame)
    signal: str = "speed"  # "speed" or "change" (see the module notes)
    noise_floor: float = 0.1  # ε as a fraction of the activity's 95th percentile
    smooth: float = 0.03  # Gaussian σ in seconds (0: no smoothing)
    joints: str = "MAIN"  # joint weight preset of the activity signal
    joint_overrides: Mapping[str, float] | None = None
    error: str = "position"  # frame error: "position" or "pose"
    error_bound: float = 0.01  # e_l: fraction of the body size ("position") or pose distance ("pose")
    width_factor: float = 1.0  # δ
    mlre_levels: tuple[float, float, float] = (1.0, 4.0, 9.0)
    alre_levels: tuple[float, float, float] = (1.0, 4.0, 9.0)
    lsw_levels: tuple[float, float, float] = (1.0, 2.0, 3.0)
    max_combinations: int = 256  # beyond this, peaks are added greedily one at a time
    refine: bool = True  # run the local search (step 3)
    exchange: bool = True  # count targets: also exchange keys across the clip (beyond the patent)


# ---- step 1: the activity signal ------------------------------------------------------
def activity_metric(motion: Motion, metric: PoseMetric, params: ActivityParams) -> PoseMetric:
    """The pose metric of the activity signal: the ``joints`` preset, minus joints the user's metric excludes."""
    w = joint_weights(motion.skeleton, params.joints, params.joint_overrides)
    w = np.where(metric.weights > 0, w, 0.0)
    w = w / w.sum() if w.sum() > 0 else np.asarray(metric.weights)
    return PoseMetric(w, metric.moving, metric.size, metric.translation_weight)


def window_frames(motion: Motion, params: ActivityParams) -> int:
    """The activity window ω in frames (at least one)."""
    return max(1, int(round(params.window * motion.fps)))


def activity_signal(motion: Motion, metric: PoseMetric, params: ActivityParams) -> np.ndarray:
    """(T,) motion activity (pose-distance units), noise floor applied, smoothed."""
    n = motion.n_frames
    omega = window_frames(motion, params)
    t = np.arange(n)
    lo, hi = np.clip(t - omega, 0, n - 1), np.clip(t + omega, 0, n - 1)
    rot, trans = motion.rotations, motion.translations
    if params.signal == "speed":
        a = metric(rot[lo], trans[lo], rot[hi], trans[hi])
    elif params.signal == "change":
        u = np.where(hi > lo, (t - lo) / np.maximum(hi - lo, 1), 0.0)
        mid_rot = quat.slerp(rot[lo], rot[hi], u[:, None])
        mid_trans = trans[lo] + u[:, None, None] * (trans[hi] - trans[lo])
        a = metric(rot, trans, mid_rot, mid_trans)
    else:
        raise ValueError(f"unknown activity signal {params.signal!r}; choose 'change' or 'speed'")
    a = np.where(a < params.noise_floor * np.percentile(a, 95), 0.0, a)
    return gaussian_smooth(a, params.smooth * motion.fps)


def gaussian_smooth(x: np.ndarray, sigma: float) -> np.ndarray:
    """(T,) x convolved with a Gaussian of σ frames (edges reflected); σ < 0.5 returns x."""
    if sigma < 0.5 or len(x) < 2:
        return x.copy()
    r = int(np.ceil(3 * sigma))
    kernel = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    padded = np.pad(x, r, mode="reflect" if len(x) > r else "edge")
    return np.convolve(padded, kernel / kernel.sum(), mode="valid")


def find_peaks(x: np.ndarray) -> np.ndarray:
    """Indices of the positive local maxima of x: a rise, then a fall (a plateau counts once, at its first frame)."""
    x = np.asarray(x, dtype=float)
    change = np.flatnonzero(np.diff(x) != 0)  # x[i] != x[i+1]
    if len(change) < 2:
        return np.zeros(0, dtype=int)
    up = x[change + 1] > x[change]  # the step after frame change[i] rises
    # a rise into change[i+1]'s level followed by the next step falling: the level starts at change[i]+1
    peak = up[:-1] & ~up[1:]
    starts = change[:-1][peak] + 1
    return starts[x[starts] > 0]


def upper_quartile(values: np.ndarray) -> float:
    return float(np.percentile(values, 75)) if len(values) else np.inf


# ---- step 2: initial keys, splitting and votes -------------------------------------------
def _segment_stats(errors: SegmentErrors, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per segment of ``keys``: MLRE (largest frame error), ALRE (summed error), LSW (width in frames)."""
    e = errors.frame_errors(keys)  # 0 at the keys, so each range may include its closing key
    starts = keys[:-1] + 1
    return np.maximum.reduceat(e, starts), np.add.reduceat(e, starts), np.diff(keys).astype(float)


def initial_keys(n: int, peaks: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The first and last frame plus the salient peaks (≥ the upper quartile of all peak values)."""
    salient = peaks[values >= upper_quartile(values)]
    return np.union1d([0, n - 1], salient).astype(int)


def split_wide(keys: np.ndarray, peaks: np.ndarray, values: np.ndarray, width_limit: float) -> np.ndarray:
    """Split every segment wider than ``width_limit`` at its relatively salient unused peaks, until none can be."""
    while True:
        unused = ~np.isin(peaks, keys)
        seg = np.searchsorted(keys, peaks, side="right") - 1
        wide = (keys[np.minimum(seg + 1, len(keys) - 1)] - keys[seg]) > width_limit
        added = []
        for s in np.unique(seg[unused & wide]):
            inside = unused & (seg == s)
            added.extend(peaks[inside & (values >= upper_quartile(values[inside]))])
        if not added:
            return keys
        keys = np.union1d(keys, added).astype(int)


def vote(measures: tuple[np.ndarray, ...], thresholds: tuple[np.ndarray, ...]) -> np.ndarray:
    """Keys to add per segment: each measure votes 0-3 (thresholds reached), majority, tie → smallest.

    measures: three (S,) arrays; thresholds: three (3,) ascending arrays (or (S, 3)).
    """
    v = np.stack([(m[:, None] >= np.broadcast_to(t, (len(m), 3))).sum(axis=1) for m, t in zip(measures, thresholds)])
    v0, v1, v2 = v
    majority = np.where((v0 == v1) | (v0 == v2), v0, np.where(v1 == v2, v1, v.min(axis=0)))
    return majority


def _best_subset(a: int, b: int, cands: np.ndarray, k: int, cost: SegmentCost, limit: int) -> np.ndarray:
    """k of the candidate frames inside (a, b) minimising the segment's summed error."""
    k = min(k, len(cands))
    if k == 0:
        return np.zeros(0, dtype=int)
    n_comb = 1
    for i in range(k):
        n_comb = n_comb * (len(cands) - i) // (i + 1)
    if n_comb > limit:  # greedy: the best single addition, k times
        chosen: list[int] = []
        for _ in range(k):
            rest = [c for c in cands if c not in chosen]
            trials = [np.array(sorted([a, b, *chosen, c])) for c in rest]
            totals = [cost(t[:-1], t[1:]).sum() for t in trials]
            chosen.append(int(rest[int(np.argmin(totals))]))
        return np.array(sorted(chosen))
    combos = np.array(list(itertools.combinations(np.sort(cands), k)))
    full = np.column_stack([np.full(len(combos), a), combos, np.full(len(combos), b)])
    totals = cost(full[:, :-1].ravel(), full[:, 1:].ravel()).reshape(len(combos), -1).sum(axis=1)
    return combos[int(np.argmin(totals))]


def natural_keys(
    errors: SegmentErrors, peaks: np.ndarray, values: np.ndarray, e_l: float, p: ActivityParams
) -> tuple[np.ndarray, dict]:
    """Step 2 with error bound e_l (frame-error units): keys and the count after each sub-step."""
    keys = initial_keys(errors.n_frames, peaks, values)
    mlre, _, width = _segment_stats(errors, keys)
    ok = (mlre > 0) & (width >= 2)
    r_wm = float(np.mean(width[ok] / mlre[ok])) if ok.any() else np.inf
    limit = p.width_factor * e_l * r_wm
    initial = len(keys)
    keys = split_wide(keys, peaks, values, limit)
    mlre, alre, width = _segment_stats(errors, keys)
    w_ref = limit if np.isfinite(limit) else float(errors.n_frames)
    thresholds = (
        e_l * np.asarray(p.mlre_levels),
        e_l * w_ref * np.asarray(p.alre_levels),
        w_ref * np.asarray(p.lsw_levels),
    )
    extra = vote((mlre, alre, width), thresholds)
    added = []
    for s in np.flatnonzero(extra):
        a, b = keys[s], keys[s + 1]
        cands = peaks[(peaks > a) & (peaks < b) & ~np.isin(peaks, keys)]
        added.extend(_best_subset(a, b, cands, int(extra[s]), errors.costs, p.max_combinations))
    info = {"initial_count": initial, "split_count": len(keys), "width_limit": float(limit)}
    return np.union1d(keys, added).astype(int), info


def activity_keys(
    motion: Motion, metric: PoseMetric, count: int | None = None, params: ActivityParams | None = None
) -> tuple[np.ndarray, dict]:
    """Keys by the patent's method; with ``count``, exactly that many (see the module notes).

    Returns the keys and what each step did: peaks found, key counts after the initial
    set / splitting / votes (``natural_count``), e_l and the width limit W in frames.
    """
    p = params or ActivityParams()
    n = motion.n_frames
    if n <= 2:
        return np.arange(n), {}
    signal = activity_signal(motion, activity_metric(motion, metric, p), p)
    peaks = find_peaks(signal)
    errors = SegmentErrors(motion, p.error, metric if p.error == "pose" else None)
    scale = motion.skeleton.size() if p.error == "position" else 1.0
    keys, info = natural_keys(errors, peaks, signal[peaks], p.error_bound * scale, p)
    info.update(peaks=len(peaks), natural_count=len(keys), window_frames=window_frames(motion, p))
    cost = CachedCost(errors.costs, n)
    if count is not None:
        keys = fit_to_count(keys, cost, count)
    if p.refine and count is not None and p.exchange:
        keys = exchange_search(motion, keys, cost)
    elif p.refine:
        keys = local_search(motion, keys, cost)
    return keys, info


def activity_for_count(motion: Motion, metric: PoseMetric, count: int) -> tuple[np.ndarray, dict]:
    """The ``METHODS`` entry: :func:`activity_keys` with the default parameters and an exact count."""
    return activity_keys(motion, metric, count)
