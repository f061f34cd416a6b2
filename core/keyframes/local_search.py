"""Improve a key set by moving, removing or inserting keys under one segment-cost criterion.

Every function takes ``cost(a, b) -> (n,)``: the summed error of the frames strictly
between keys a and b when rebuilt from them (vectorised over segments), e.g.
``SegmentErrors(motion).costs`` or ``SegmentTable.cost``. The total error of a key set is
the sum of its segments' costs, and each step below never increases it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..motion import Motion
from .segments import SegmentErrors

SegmentCost = Callable[[np.ndarray, np.ndarray], np.ndarray]


class CachedCost:
    """A segment cost that computes each segment (a, b) once: searches revisit the same segments."""

    def __init__(self, cost: SegmentCost, n_frames: int):
        self.cost, self.n_frames, self.memo = cost, int(n_frames), {}

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        codes = (a * self.n_frames + b).ravel()
        values = np.array([self.memo.get(c, np.nan) for c in codes.tolist()], dtype=float)
        missing = np.isnan(values)
        if missing.any():
            new_codes, where = np.unique(codes[missing], return_inverse=True)
            new = np.asarray(self.cost(new_codes // self.n_frames, new_codes % self.n_frames), dtype=float)
            self.memo.update(zip(new_codes.tolist(), new.tolist()))
            values[missing] = new[where]
        return values.reshape(a.shape)


def total_cost(keys: np.ndarray, cost: SegmentCost) -> float:
    """Σ over consecutive key pairs of their segment cost."""
    keys = np.asarray(keys, dtype=int)
    return float(cost(keys[:-1], keys[1:]).sum()) if len(keys) > 1 else 0.0


def _best_inner_frames(p: np.ndarray, n: np.ndarray, cost: SegmentCost) -> tuple[np.ndarray, np.ndarray]:
    """For spans (p_i, n_i): the frame c in (p, n) minimising cost(p, c) + cost(c, n), and that cost.

    Spans without an inner frame give c = −1 and cost +inf. Work: Σ_i (n_i − p_i)² frames.
    """
    width = np.maximum(n - p - 1, 0)
    group = np.repeat(np.arange(len(p)), width)
    c = np.repeat(p + 1 - np.r_[0, np.cumsum(width)[:-1]], width) + np.arange(width.sum())
    both = cost(p[group], c) + cost(c, n[group])
    best_c, best = np.full(len(p), -1), np.full(len(p), np.inf)
    if len(c):
        order = np.lexsort((c, both, group))  # per span: lowest cost first, then earliest frame
        first = order[np.r_[True, group[order][1:] != group[order][:-1]]]
        best_c[group[first]], best[group[first]] = c[first], both[first]
    return best_c, best


def local_search(
    motion: Motion, keys: np.ndarray, cost: SegmentCost | None = None, max_rounds: int = 1000
) -> np.ndarray:
    """Step 3 of the patent: move each inner key to the frame in (previous key, next key)
    that minimises the error of that span; repeat until no key moves.

    Keys whose neighbours did not move since they were last placed are skipped; keys of
    the same parity do not share a span, so each half-round moves them all at once. A key
    moves only for a strictly lower span error, so the total error falls at every move and
    the search ends. cost: segment cost (default: the summed mean error of the measured
    points of every bone, the reports' measure, see :class:`~.segments.SegmentErrors`).
    """
    cost = cost or SegmentErrors(motion).costs
    keys = np.array(np.unique(keys), dtype=int)
    dirty = np.ones(len(keys), dtype=bool)
    dirty[[0, -1]] = False
    for _ in range(max_rounds):
        if not dirty.any():
            break
        for parity in (1, 0):
            idx = np.flatnonzero(dirty & (np.arange(len(keys)) % 2 == parity))
            if len(idx) == 0:
                continue
            p, n = keys[idx - 1], keys[idx + 1]
            here = cost(p, keys[idx]) + cost(keys[idx], n)
            best_c, best = _best_inner_frames(p, n, cost)
            move = best < here - 1e-12 * np.maximum(1.0, np.abs(here))
            dirty[idx] = False
            keys[idx[move]] = best_c[move]
            moved = idx[move]
            dirty[np.clip(np.r_[moved - 1, moved + 1], 1, len(keys) - 2)] = True
    return keys


def exchange_search(
    motion: Motion, keys: np.ndarray, cost: SegmentCost | None = None, max_rounds: int = 10_000
) -> np.ndarray:
    """Local search plus key exchanges: while dropping one key and inserting one elsewhere
    lowers the total error, do the best such exchange and re-run :func:`local_search`.

    The count stays; the result is a set that no single move or exchange improves (an
    exchange pairs the cheapest removal with the best insertion in a segment it does not
    touch). Segment costs are memoised, so each round mostly re-reads known segments.
    """
    cost = CachedCost(cost or SegmentErrors(motion).costs, motion.n_frames)
    keys = local_search(motion, keys, cost)
    for _ in range(max_rounds):
        if len(keys) < 3:
            break
        seg = cost(keys[:-1], keys[1:])
        removal = cost(keys[:-2], keys[2:]) - seg[:-1] - seg[1:]  # dropping key i+1 merges segments i, i+1
        where, best = _best_inner_frames(keys[:-1], keys[1:], cost)
        gain = seg - best  # inserting where[s] into segment s
        pair = _best_exchange(removal, gain)
        if pair is None or gain[pair[1]] - removal[pair[0]] <= 1e-12 * max(1.0, seg.sum()):
            break
        i, s = pair
        keys = local_search(motion, np.sort(np.r_[np.delete(keys, i + 1), where[s]]), cost)
    return keys


def _best_exchange(removal: np.ndarray, gain: np.ndarray, top: int = 4) -> tuple[int, int] | None:
    """(removal i, segment s) with the largest gain − removal among the best few, s ∉ {i, i+1}."""
    best, pair = -np.inf, None
    for i in np.argsort(removal, kind="stable")[:top]:
        for s in np.argsort(-gain, kind="stable")[:top]:
            if s not in (i, i + 1) and np.isfinite(gain[s]) and gain[s] - removal[i] > best:
                best, pair = gain[s] - removal[i], (int(i), int(s))
    return pair


def greedy_remove(keys: np.ndarray, cost: SegmentCost, count: int) -> np.ndarray:
    """Drop inner keys one at a time, each time the one whose removal adds the least error."""
    keys = list(np.unique(keys))
    if len(keys) <= count:
        return np.array(keys)
    k = np.array(keys)
    seg = cost(k[:-1], k[1:])
    delta = list(cost(k[:-2], k[2:]) - seg[:-1] - seg[1:])  # added error if inner key i+1 goes
    while len(keys) > max(count, 2):
        i = int(np.argmin(delta))
        del keys[i + 1], delta[i]
        for j in (i - 1, i):  # the removed key's neighbours now span new segments
            if 0 <= j < len(delta):
                a, m, b = keys[j], keys[j + 1], keys[j + 2]
                delta[j] = float(cost(np.array([a, a, m]), np.array([b, m, b])) @ np.array([1.0, -1.0, -1.0]))
    return np.array(keys)


def greedy_insert(keys: np.ndarray, cost: SegmentCost, count: int) -> np.ndarray:
    """Insert keys one at a time, each time the frame that removes the most error."""
    keys = list(np.unique(keys))
    if len(keys) >= count:
        return np.array(keys)
    k = np.array(keys)
    here = cost(k[:-1], k[1:])
    best_c, best = _best_inner_frames(k[:-1], k[1:], cost)
    gain, where = list(here - best), list(best_c)  # gain of the best insertion per segment
    while len(keys) < count:
        i = int(np.argmax(gain))
        if where[i] < 0:
            break  # every frame is already a key
        keys.insert(i + 1, int(where[i]))
        a, m, b = np.array(keys[i : i + 3])
        seg_a, seg_b = np.array([a, m]), np.array([m, b])
        here = cost(seg_a, seg_b)
        best_c, best = _best_inner_frames(seg_a, seg_b, cost)
        gain[i : i + 1] = list(here - best)
        where[i : i + 1] = list(best_c)
    return np.array(keys)


def fit_to_count(keys: np.ndarray, cost: SegmentCost, count: int) -> np.ndarray:
    """``keys`` made exactly ``count`` long by :func:`greedy_remove` or :func:`greedy_insert`."""
    keys = greedy_remove(keys, cost, count)
    return greedy_insert(keys, cost, count)
