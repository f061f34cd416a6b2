"""Hybrid keys: whole-pose keyframes as the edit grid, minus the channel keys nobody needs.

After whole-pose keys are chosen, each channel (one F-curve) drops the keys its fitted
Bezier curve can do without. A global greedy pass removes, one at a time, the channel key
whose removal adds the least joint-space error (curve deviation × the channel's lever
arm), until the stored-key budget is met. First and last keys always stay, so every
channel still starts and ends on the grid and no segment crosses a forced key.
"""

from __future__ import annotations

import numpy as np


class _SegmentFits:
    """Batched Bezier segment fits of many (channel, start, stop) spans at once.

    Spans of different lengths share one padded array: each row has its own parameter
    s = (t − start)/(stop − start), frames past its end are masked out, and the 2×2 normal
    equations are solved in closed form per row.
    """

    def __init__(self, columns: np.ndarray, ridge: float = 1e-6, linear: bool = False) -> None:
        self.columns = columns  # (C, T), one contiguous row per channel
        self.ridge = ridge
        self.linear = linear  # straight segments (LINEAR keys) instead of fitted Bezier ones

    def errors(self, channel: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """Largest deviation of the best segment fit on frames start..stop of each channel (m,).

        Spans are grouped by length into power-of-two buckets, so padding wastes at most half.
        """
        out = np.empty(len(channel))
        bucket = np.ceil(np.log2(np.maximum(stop - start, 1))).astype(int)
        for b in np.unique(bucket):
            pick = np.flatnonzero(bucket == b)
            out[pick] = self._padded_errors(channel[pick], start[pick], stop[pick])
        return out

    def _padded_errors(self, channel: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        n = (stop - start).astype(float)[:, None]
        offsets = np.arange(int(n.max()) + 1)
        valid = offsets <= n
        frames = np.minimum(start[:, None] + offsets, stop[:, None])
        y = self.columns[channel[:, None], frames]
        s = np.minimum(offsets / n, 1.0)
        b1, b2 = 3 * (1 - s) ** 2 * s * valid, 3 * (1 - s) * s**2 * valid
        ya, yb = y[:, :1], self.columns[channel, stop][:, None]
        if self.linear:
            return (np.abs(y - ya - (yb - ya) * s) * valid).max(axis=1)
        base = ya * (1 - s) ** 3 + yb * s**3
        r = (y - base) * valid
        ridge = self.ridge
        m11, m12, m22 = (b1 * b1).sum(1) + ridge, (b1 * b2).sum(1), (b2 * b2).sum(1) + ridge
        r1 = (b1 * r).sum(1) + ridge * (ya + (yb - ya) / 3)[:, 0]
        r2 = (b2 * r).sum(1) + ridge * (ya + 2 * (yb - ya) / 3)[:, 0]
        det = m11 * m22 - m12 * m12
        h1 = ((m22 * r1 - m12 * r2) / det)[:, None]
        h2 = ((m11 * r2 - m12 * r1) / det)[:, None]
        return (np.abs(r - b1 * h1 - b2 * h2) * valid).max(axis=1)


def drop_channel_keys(
    values: np.ndarray,
    keys: np.ndarray,
    levers: np.ndarray,
    budget: int,
    forced: np.ndarray | None = None,
    batch: float = 0.25,
    linear: bool = False,
    caps: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Per channel, the subset of ``keys`` to keep so that ``budget`` keys remain in all.

    values: (T, C) dense target curves (the rebuild in each channel's own units); keys:
    sorted pose keyframes (K,); levers: (C,) scene units of joint motion per unit of the
    channel (e.g. a bone's reach for a rotation in radians, 1 for a location); forced:
    key positions (indices into ``keys``) no channel may drop; linear: the curves will play
    LINEAR keys (segments measured as straight lines, not fitted Beziers); caps: (C,) most keys
    each channel may keep (its own key count: a channel never gets more keys than it had) — the
    channels over their cap drop their cheapest keys first, then the budget is met over all
    channels (so a capped channel's unused share goes to the others). Locked keys (first, last,
    ``forced``) stay even past a cap. Returns C index arrays into the frame axis.

    Greedy in rounds: each round removes the cheapest ``batch`` share of the remaining
    excess at once (never two neighbours on one curve, whose costs would interact), then
    re-fits only the segments that changed, batched by length.
    """
    values = np.asarray(values, dtype=float)
    fits = _SegmentFits(np.ascontiguousarray(values.T), linear=linear)
    keys = np.asarray(keys, dtype=int)
    levers = np.asarray(levers, dtype=float)
    n_keys, n_channels = len(keys), values.shape[1]
    keep = np.ones((n_channels, n_keys), dtype=bool)
    locked = np.zeros(n_keys, dtype=bool)
    locked[[0, -1]] = True
    if forced is not None:
        locked[np.asarray(forced, dtype=int)] = True
    prev = np.tile(np.arange(-1, n_keys - 1), (n_channels, 1))
    nxt = np.tile(np.arange(1, n_keys + 1), (n_channels, 1))
    cost = np.full((n_channels, n_keys), np.inf)
    c_all, i_all = np.nonzero(np.broadcast_to(~locked, (n_channels, n_keys)))
    if len(c_all):
        cost[c_all, i_all] = fits.errors(c_all, keys[i_all - 1], keys[i_all + 1]) * levers[c_all]
    total = n_channels * n_keys
    count = np.full(n_channels, n_keys)
    cap = np.full(n_channels, n_keys) if caps is None else np.maximum(np.asarray(caps, dtype=int), locked.sum())
    while True:
        over = np.maximum(count - cap, 0)
        if over.any():  # first bring every channel down to its cap, each by its own cheapest keys
            excess, quota = int(over.sum()), over
            flat = np.where((over > 0)[:, None], cost, np.inf).ravel()
        elif total > budget:
            excess, quota = total - budget, None
            flat = cost.ravel()
        else:
            break
        take = min(excess, max(1, int(np.ceil(batch * excess))))
        if not np.isfinite(flat).any():
            break
        candidates = (
            np.argpartition(flat, min(take, flat.size - 1))[: take + 1] if take < flat.size else np.arange(flat.size)
        )
        candidates = candidates[np.argsort(flat[candidates], kind="stable")][:take]
        chosen, blocked = [], set()
        for flat_index in candidates.tolist():
            if not np.isfinite(flat[flat_index]):
                break
            c, i = divmod(flat_index, n_keys)
            if (c, i) in blocked or (quota is not None and quota[c] <= 0):
                continue
            if quota is not None:
                quota[c] -= 1
            chosen.append((c, i))
            blocked.update(((c, int(prev[c, i])), (c, int(nxt[c, i]))))
        touched = set()
        for c, i in chosen:
            p, q = prev[c, i], nxt[c, i]
            keep[c, i] = False
            count[c] -= 1
            cost[c, i] = np.inf
            nxt[c, p], prev[c, q] = q, p
            touched.update(((c, int(p)), (c, int(q))))
        total -= len(chosen)
        touched = [(c, k) for c, k in touched if keep[c, k] and not locked[k]]
        if touched:
            tc, tk = np.array(touched).T
            cost[tc, tk] = fits.errors(tc, keys[prev[tc, tk]], keys[nxt[tc, tk]]) * levers[tc]
    return [keys[keep[c]] for c in range(n_channels)]
