"""Reference methods that other keyframe selections are measured against."""

from __future__ import annotations

import heapq

import numpy as np

from ..motion import Motion
from .error import pose_points


def uniform_keys(n_frames: int, count: int) -> np.ndarray:
    """``count`` keys spread evenly over ``n_frames`` frames, first and last included."""
    count = int(np.clip(count, 1 if n_frames == 1 else 2, n_frames))
    keys = np.unique(np.round(np.linspace(0, n_frames - 1, count)).astype(int))
    if len(keys) < count:  # rounding collided: fill the widest gaps
        keys = np.union1d(keys, np.setdiff1d(np.arange(n_frames), keys)[: count - len(keys)])
    return keys


def simplify_keys(motion: Motion, count: int) -> np.ndarray:
    """Top-down curve simplification (Ramer–Douglas–Peucker / Lowe) of the measured points' paths.

    The clip is the curve t ↦ X_t ∈ R^(3P) of the world positions of all P measured points of
    :func:`~.error.measured_points` (heads, leaf tips and side points of every bone: what the
    error measures, so a thumb or toe that turns alone bends the curve too). Starting from the
    first and last frame, the segment whose frame lies farthest from the segment's chord is
    split at that frame, until ``count`` keys exist (a priority queue, so counts are exact).
    Distance: ‖X_t − lerp(X_a, X_b, (t−a)/(b−a))‖, the time-synchronous chord distance, in
    scene units. Work O(T·P) per level of splitting, O(T·P·log T) for balanced splits.

    The splits form a fixed tree (a segment always splits at its own farthest frame) that the queue
    walks best first, so it splits the segments whose distance, capped by every ancestor's, ranks
    among the count − 2 largest. The tree is grown a level at a time for every open segment still in
    that rank (:func:`_farthest`, the short segments of a level all at once), then the queue is
    replayed on it: the same keys as splitting one segment a call, without a Python call for each of
    the many short ones (CMU 01_01 at 10 %: 2,200 splits).
    """
    n = motion.n_frames
    count = int(np.clip(count, 1 if n == 1 else 2, n))
    if n == 1:
        return np.array([0])
    x = np.ascontiguousarray(pose_points(motion).reshape(n, -1))  # frames as rows (pose_points lays them last)
    splits = count - 2
    a, b = np.array([0]), np.array([n - 1])
    a, b = a[b - a >= 2], b[b - a >= 2]  # a segment without an inner frame is never split
    dev, at = _farthest(x, a, b)
    capped, growing = dev.copy(), np.ones(len(a), dtype=bool)  # capped: by every ancestor's distance
    while splits > 0 and len(a):
        rank = len(capped) - splits
        cut = -np.inf if rank <= 0 else np.partition(capped, rank)[rank]  # the splits-th largest
        grow = np.flatnonzero(growing & (capped >= cut))
        if not len(grow):
            break
        growing[grow] = False
        ca, cb = np.concatenate((a[grow], at[grow])), np.concatenate((at[grow], b[grow]))
        cap = np.concatenate((capped[grow], capped[grow]))
        inner = cb - ca >= 2
        ca, cb, cap = ca[inner], cb[inner], cap[inner]
        d, t = _farthest(x, ca, cb)
        a, b, dev, at = (np.concatenate(pair) for pair in ((a, ca), (b, cb), (dev, d), (at, t)))
        capped = np.concatenate((capped, np.minimum(d, cap)))
        growing = np.concatenate((growing, np.ones(len(ca), dtype=bool)))
    tree = dict(zip(zip(a.tolist(), b.tolist()), zip(dev.tolist(), at.tolist())))
    keys = [0, n - 1]
    heap: list[tuple[float, int, int, int]] = []

    def push(a: int, b: int) -> None:
        if b - a < 2:
            return
        if (a, b) not in tree:  # not grown (a tie at the cut): this segment alone
            d, t = _farthest(x, np.array([a]), np.array([b]))
            tree[a, b] = (float(d[0]), int(t[0]))
        d, t = tree[a, b]
        heapq.heappush(heap, (-d, a, b, t))

    push(0, n - 1)
    while len(keys) < count and heap:
        _, a, b, t = heapq.heappop(heap)
        keys.append(t)
        push(a, t)
        push(t, b)
    return np.array(sorted(keys))


LONG_SEGMENT = 48  # inner frames from which a segment is measured on its own (slices), shorter ones together (gathers)
GATHERED = 1 << 21  # numbers of X the short segments of one group gather (16 MB a temporary)


def _farthest(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For segments (a, b) of the curve ``x`` (T, D), each with an inner frame: the largest distance of
    an inner frame from the chord and that frame (the first of equals).

    ‖e − u·w‖² = ‖e‖² − u·(2⟨e, w⟩ − u‖w‖²) with e = X_t − X_a, w = X_b − X_a, u = (t − a)/(b − a): a
    long segment in one pass over its frames and a matrix-vector product, the short ones of a call
    together, their frames and ends gathered."""
    dev, at = np.zeros(len(a)), np.zeros(len(a), dtype=int)
    inner = b - a - 1
    for i in np.flatnonzero(inner >= LONG_SEGMENT).tolist():
        e = x[a[i] + 1 : b[i]] - x[a[i]]
        w = x[b[i]] - x[a[i]]
        u = np.arange(1, b[i] - a[i]) / (b[i] - a[i])
        squared = np.einsum("ij,ij->i", e, e) - u * (2.0 * (e @ w) - u * (w @ w))
        k = int(np.argmax(squared))
        dev[i], at[i] = np.sqrt(max(squared[k], 0.0)), a[i] + 1 + k
    short = np.flatnonzero(inner < LONG_SEGMENT)
    rows = max(LONG_SEGMENT, GATHERED // x.shape[1])  # frames gathered at once
    ends = np.cumsum(inner[short])
    while len(short):  # in groups of whole segments of about ``rows`` frames
        take = max(1, int(np.searchsorted(ends, rows, side="right")))
        group, short, ends = short[:take], short[take:], ends[take:] - ends[take - 1]
        sa, sb, size = a[group], b[group], inner[group]
        first = np.concatenate(([0], np.cumsum(size)[:-1]))
        seg = np.repeat(np.arange(len(group)), size)
        frames = np.arange(len(seg)) - first[seg] + sa[seg] + 1
        e = x[frames] - x[sa[seg]]
        w = x[sb] - x[sa]
        u = (frames - sa[seg]) / (sb - sa)[seg]
        along = np.einsum("ij,ij->i", e, w[seg])
        squared = np.einsum("ij,ij->i", e, e) - u * (2.0 * along - u * np.einsum("ij,ij->i", w, w)[seg])
        largest = np.maximum.reduceat(squared, first)
        hit = np.flatnonzero(squared == largest[seg])
        _, where = np.unique(seg[hit], return_index=True)
        dev[group], at[group] = np.sqrt(np.maximum(largest, 0.0)), frames[hit[where]]
    return dev, at


def simplify_for_count(motion: Motion, metric: object, count: int) -> tuple[np.ndarray, dict]:
    """The ``METHODS`` entry of :func:`simplify_keys` (positions only: ``metric`` is unused)."""
    return simplify_keys(motion, count), {}
