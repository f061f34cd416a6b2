"""Hybrid keys: whole-pose keyframes as the edit grid, minus the channel keys nobody needs.

After whole-pose keys are chosen, each channel (one F-curve) drops the keys its fitted
Bezier curve can do without. A global greedy pass removes the channel keys whose removal adds
the least error on the measured points (curve deviation × the channel's lever arm: how far a
unit of it moves the points of :mod:`.error`, see ``channel_keys.channel_levers``), until the
stored-key budget is met, many non-neighbouring keys a round. First and last keys always stay,
so every channel still starts and ends on the grid and no segment crosses a forced key; a
bone's own jump (:func:`bone_jumps`) is on the grid and its channels keep both sides.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import quaternion as quat
from ..motion import Motion
from ..skeleton import Skeleton, rest_world
from .error import measured_points, rest_key
from .jumps import isolated_steps

# A bone's own jump (:func:`bone_jumps`): a step over JUMP_FACTOR × the bone's median step and
# JUMP_ISOLATION × each neighbouring step. Whole-pose jumps use 15 and 4 over two steps each side;
# a bone can spin twice two frames apart (131_03's thumb at frames 257 and 259: steps 2.0 and 2.2
# units, 0.67 and 0.18 around them, median 0.015), so here one step each side, twice as large.
JUMP_FACTOR, JUMP_ISOLATION = 15.0, 2.0
MIS_PASSES = 4  # passes a round makes to pick keys no cheaper neighbour blocks (see drop_channel_keys)
EXACT_ROWS = 32  # spans of one length fitted together in closed form from this many (see _SegmentFits)
STILL = 1e-9  # a channel moving the points this share of the most any channel does is still (drop_channel_keys)
RAGGED_FRAMES = 5000  # the other spans of a call: laid end to end up to this many frames, else padded
PADDED_CALL = 16384  # padded span frames that cost as much as a call of _SegmentFits._padded_errors
RESIDUAL_ROWS = 48  # spans up to this length: their residual as one matrix product (see _SegmentFits)
SAMPLE_STEP = 8  # a round's cheapest keys: sought under a cost from every this-th key first (see _cheapest)
SHARED_BASIS = 256  # span lengths up to this: their fit tables kept for the session (a few MB at most)


def point_reach(skeleton: Skeleton) -> np.ndarray:
    """(J,) largest rest distance from each joint to a measured point (:func:`.error.measured_points`:
    heads, tips, side points) of its own bone or a bone below it, scene units."""
    key = rest_key(skeleton)
    if key not in _REACH:
        if len(_REACH) >= 8:
            _REACH.pop(next(iter(_REACH)))
        _REACH[key] = _point_reach(skeleton)
    return _REACH[key].copy()


_REACH: dict[tuple, np.ndarray] = {}  # rest_key → point_reach, the last few skeletons


def _point_reach(skeleton: Skeleton) -> np.ndarray:
    points = measured_points(skeleton)
    pos, rot = rest_world(skeleton)
    world = pos[points.owner] + quat.rotate(rot[points.owner], points.offsets)
    reach = np.zeros(skeleton.n_joints)
    for j in range(skeleton.n_joints):
        below = skeleton.subtree(j)[points.owner]
        reach[j] = np.linalg.norm(world[below] - pos[j], axis=1).max()
    return reach


def bone_jumps(motion: Motion, floor: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Steps where one bone jumps on its own: (frames t, joints j), the step t → t+1 of joint j.

    Per bone, the step is its local rotation's angle from frame to frame × its :func:`point_reach`
    (scene units: how far the bone's farthest measured point below it moves); a jump is an isolated step far over
    the bone's median (:func:`.jumps.isolated_steps`) and over ``floor`` × the body size. A whole-pose
    jump test cannot see these: CMU 131_03's right thumb spins half a turn between frames 985 and
    986 and again 4 frames later (its tip moves 1.4 units, 6 % of the body), while every joint
    barely moves. Interpolating across such a step smears the spin over the segment. A flick (two
    big steps in a row that end close to where they started, as 06_14's left thumb does for 4
    frames at a time) counts too, both its steps.
    """
    if motion.n_frames < 3:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    skeleton = motion.skeleton
    q = motion.rotations
    dot = np.minimum(np.abs(np.einsum("tjc,tjc->tj", q[1:], q[:-1])), 1.0)
    reach = point_reach(skeleton)[None, :]
    step = 2.0 * np.arccos(dot) * reach
    median = np.median(step, axis=0)
    big = (step > JUMP_FACTOR * median) & (step > floor * skeleton.size())
    jumps = isolated_steps(step, JUMP_FACTOR, JUMP_ISOLATION, window=1, median=median) & big
    # a flick out and back (or back and forth for several frames): two big steps in a row whose
    # ends are close, which fast real motion (going on in one direction) is not
    across = 2.0 * np.arccos(np.minimum(np.abs(np.einsum("tjc,tjc->tj", q[2:], q[:-2])), 1.0)) * reach
    flick = big[:-1] & big[1:] & (across < 0.5 * np.minimum(step[:-1], step[1:]))
    jumps[:-1] |= flick
    jumps[1:] |= flick
    t, j = np.nonzero(jumps)
    return t, j


class _SegmentFits:
    """Batched Bezier segment fits of many (channel, start, stop) spans at once.

    Spans of one length share the curve parameter s = (t − start)/(stop − start): the spans of a
    length many spans have (:data:`EXACT_ROWS` or more) are fitted together in closed form. The fit is
    linear in the span's values y (n + 1,) — its ends are y's, its handles least squares of y — so
    the residual is one matrix product, y·R with R = I − (the fit's map) of that length, built once:
    a span costs a gather and a product of its frames by at most :data:`RESIDUAL_ROWS` + 1 numbers;
    longer spans take the handles (two dot products) and a residual pass. The spans are laid out one
    a column, so the largest residual of each is an element-wise maximum over rows. The other spans
    are fitted together with their frames laid end to end (:meth:`_ragged_errors`: sums over each
    span's frames, one call for all of them) when they are few (:data:`RAGGED_FRAMES`), else in padded
    rows grouped by power-of-two length (:meth:`_padded_errors`: a third of the passes a frame; on
    01_01's 1.3 million such frames at 10 % 0.043 s padded, 0.070 s end to end). Measured on the calls
    of CMU 01_01's channel pass at 10 % (508,000 spans, 4.1 million span frames): per-row basis
    products 0.16–0.21 s, one residual matrix a length 0.10–0.11 s, the same errors to 1e-12 of the
    largest.
    """

    def __init__(self, columns: np.ndarray, ridge: float = 1e-6, linear: bool = False) -> None:
        self.columns = columns  # (C, T), one contiguous row per channel
        self.ridge = ridge
        self.linear = linear  # straight segments (LINEAR keys) instead of fitted Bezier ones
        self._flat = np.ascontiguousarray(columns).ravel()
        # the tables of a span length depend on the length, ridge and kind only: kept for the session
        self._bases: dict[int, tuple] = _BASES.setdefault((ridge, linear), {})
        self._residuals: dict[int, np.ndarray] = _RESIDUALS.setdefault((ridge, linear), {})
        self._long_bases: dict[int, tuple] = {}  # lengths over SHARED_BASIS: rarer and larger, this pass's only
        self._window_view: np.ndarray | None = None  # see _windows

    def errors(self, channel: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """Largest deviation of the best segment fit on frames start..stop of each channel (m,)."""
        length = stop - start
        out = np.empty(len(channel))
        counts = np.bincount(length)
        many = counts >= EXACT_ROWS
        exact = np.flatnonzero(many)
        rest = np.flatnonzero(~many[length])
        if len(rest):
            few = (stop[rest] - start[rest]).sum() < RAGGED_FRAMES  # end to end: fewer calls; padded: fewer passes
            fit = self._ragged_errors if few else self._bucketed_errors
            out[rest] = fit(channel[rest], start[rest], stop[rest])
        if not len(exact):
            return out
        base = channel * self.columns.shape[1] + start
        # spans grouped by length: a stable sort of small integers (a radix sort for 16 bits)
        order = np.argsort(length.astype(np.int16 if len(counts) <= 1 << 15 else np.int32), kind="stable")
        ends = np.cumsum(counts)[exact]
        windows = self._windows()
        for n, a, b in zip(exact.tolist(), (ends - counts[exact]).tolist(), ends.tolist()):
            rows = order[a:b]
            y = windows[base[rows], : n + 1].T  # (n + 1, m) the spans' values, a column each (each read as a run)
            if n <= RESIDUAL_ROWS:
                r = self._residual(n) @ y
            else:
                basis, to_handles, ends_to_handles = self._basis(n)
                ab = y[[0, n]]
                coefficients = ab if self.linear else np.concatenate((ab, to_handles.T @ y + ends_to_handles.T @ ab))
                r = y - basis.T @ coefficients
            np.abs(r, out=r)
            out[rows] = r.max(axis=0)
        return out

    def shared_errors(self, start: np.ndarray, stop: np.ndarray, channels: np.ndarray) -> np.ndarray:
        """(m, len(channels)) :meth:`errors` of spans start..stop (m,) on every one of ``channels``: spans one
        key each side of a grid key, the same on every curve before any curve drops a key. A span's frames
        are rows of every channel at once (a contiguous gather), fitted a length at a time by one batched
        product (CMU 05_02 at 10 %: 15 → 7.7 ms against :meth:`errors` of the same spans, the same errors)."""
        out = np.empty((len(start), len(channels)))
        rows_of = np.ascontiguousarray(self.columns[channels].T)  # (T, c): a frame's values of every channel
        length = stop - start
        for n in np.unique(length).tolist():
            rows = np.flatnonzero(length == n)
            y = rows_of[start[rows, None] + np.arange(n + 1)]  # (m, n + 1, c)
            if n <= RESIDUAL_ROWS:
                r = self._residual(n) @ y
            else:
                basis, to_handles, ends_to_handles = self._basis(n)
                ab = y[:, [0, n]]
                coefficients = ab if self.linear else np.concatenate((ab, to_handles.T @ y + ends_to_handles.T @ ab), 1)
                r = y - basis.T @ coefficients
            np.abs(r, out=r)
            out[rows] = r.max(axis=1)
        return out

    def _residual(self, n: int) -> np.ndarray:
        """(n + 1, n + 1) R with R·y the residual of the fit of a span's values y (n + 1,) of length n."""
        if n not in self._residuals:
            basis, to_handles, ends_to_handles = self._basis(n)
            fit = np.zeros((n + 1, len(basis)))  # values → the fit's coefficients (ends, then handles)
            fit[0, 0] = fit[n, 1] = 1.0
            if not self.linear:
                fit[:, 2:] = to_handles
                fit[[0, n], 2:] += ends_to_handles
            residual = np.ascontiguousarray((np.eye(n + 1) - fit @ basis).T)
            residual.setflags(write=False)
            self._residuals[n] = residual
        return self._residuals[n]

    def _basis(self, n: int) -> tuple:
        """For spans of length n: the basis (2 or 4, n + 1) — (1−s, s) for lines, else (1−s)³, s³ and
        the two handle polynomials — and for Bezier spans the maps from the values (n + 1, 2) and from
        the two end values (2, 2) to the least-squares handles (the ridge included, as in :meth:`_ragged_errors`)."""
        known = self._bases.get(n) or self._long_bases.get(n)
        if known is not None:
            return known
        s = np.arange(n + 1) / n
        t = 1.0 - s
        if self.linear:
            tables = (np.stack((t, s)), None, None)
        else:
            b1, b2, t3, s3 = 3.0 * t * t * s, 3.0 * t * s * s, t * t * t, s * s * s
            ridge = self.ridge
            m11, m12, m22 = b1 @ b1 + ridge, b1 @ b2, b2 @ b2 + ridge
            inverse = np.array([[m22, -m12], [-m12, m11]]) / (m11 * m22 - m12 * m12)
            # right-hand sides: y·b − y_a (t³·b) − y_b (s³·b) + ridge × the straight line's handle
            from_ends = np.array([[ridge * 2 / 3 - t3 @ b1, ridge / 3 - t3 @ b2],
                                  [ridge / 3 - s3 @ b1, ridge * 2 / 3 - s3 @ b2]])  # fmt: skip
            tables = (np.stack((t3, s3, b1, b2)), np.stack((b1, b2), axis=1) @ inverse.T, from_ends @ inverse.T)
        for table in tables:
            if table is not None:
                table.setflags(write=False)
        (self._bases if n <= SHARED_BASIS else self._long_bases)[n] = tables  # the longer ones: this call's
        return tables

    def _ragged_errors(self, channel: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """:meth:`errors` of spans of any lengths n at once, their frames laid end to end (no padding):
        the sums a fit needs are sums over each span's frames (``np.add.reduceat``), the sums over the
        basis alone depend on n only (:meth:`_normal`)."""
        n = stop - start
        first = np.concatenate(([0], np.cumsum(n + 1)[:-1]))
        span = np.repeat(np.arange(len(n)), n + 1)
        k = np.arange(len(span)) - first[span]
        y = self._flat[(channel * self.columns.shape[1] + start)[span] + k]
        ya, yb = y[first], y[first + n]
        s = k / n[span]
        if self.linear:
            fit = ya[span] + (yb - ya)[span] * s
        else:
            t = 1.0 - s
            ts = t * s
            b1, b2 = 3.0 * t * ts, 3.0 * ts * s
            m11, m12, m22, a1, c1, a2, c2 = self._normal(n)
            ridge = self.ridge
            r1 = np.add.reduceat(y * b1, first) + ridge * (ya + (yb - ya) / 3) - ya * a1 - yb * c1
            r2 = np.add.reduceat(y * b2, first) + ridge * (ya + 2 * (yb - ya) / 3) - ya * a2 - yb * c2
            det = m11 * m22 - m12 * m12
            h1 = (m22 * r1 - m12 * r2) / det
            h2 = (m11 * r2 - m12 * r1) / det
            fit = ya[span] * (t * t * t)
            fit += yb[span] * (s * s * s)
            fit += h1[span] * b1
            fit += h2[span] * b2
        fit -= y
        np.abs(fit, out=fit)
        return np.maximum.reduceat(fit, first)

    def _bucketed_errors(self, channel: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """:meth:`errors` of spans grouped by length into padded rows: first buckets of lengths within √2 of
        each other, then neighbouring buckets merged while the padding they add costs less than a call
        (:data:`PADDED_CALL` padded frames; the fewest padded frames plus calls, chosen over the buckets by
        dynamic programming). On CMU 05_02 at 10 %, the rounds of 300–1,000 such spans of up to 1,100
        frames: 3.5 → 2.4 ms and 2.0 → 1.1 ms a round; the whole channel pass 1.0–1.1× (same keys)."""
        out = np.empty(len(channel))
        n = stop - start
        order = np.argsort(n, kind="stable")
        sorted_n = n[order]
        bucket = np.ceil(2.0 * np.log2(np.maximum(sorted_n, 1)))
        edges = np.concatenate(([0], np.flatnonzero(np.diff(bucket)) + 1, [len(n)])).tolist()
        widths = (sorted_n[np.array(edges[1:]) - 1] + 1).tolist()  # each bucket's longest span's frames
        best, cut = [0.0], [0]  # best[j]: the cost of buckets 0..j − 1 in groups; cut[j]: where its last group starts
        for j in range(1, len(edges)):
            costs = [best[i] + PADDED_CALL + (edges[j] - edges[i]) * widths[j - 1] for i in range(j)]
            i = int(np.argmin(costs))
            best.append(costs[i])
            cut.append(i)
        j = len(edges) - 1
        while j:
            rows = order[edges[cut[j]] : edges[j]]
            out[rows] = self._padded_errors(channel[rows], start[rows], stop[rows])
            j = cut[j]
        return out

    def _padded_errors(self, channel: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """:meth:`errors` of spans of different lengths n, one padded row each.

        The Bezier fit is the cubic c₀ + c₁s + c₂s² + c₃s³ in s = k/n (k = 0..n, the frame in the span),
        so a row's moments Σ y·kᵖ and its fit at every k are products with the table of kᵖ shared by
        all rows; the sums over the basis alone (the normal equations) depend on n only
        (:meth:`_normal`). Frames past a row's stop are masked out."""
        n = stop - start
        width = int(n.max()) + 1
        k = np.arange(width)
        y = self._windows()[channel * self.columns.shape[1] + start, :width]  # (m, width)
        outside = k > n[:, None]
        rows = np.arange(len(n))
        ya, yb = y[:, 0], y[rows, n]
        nf = n.astype(float)
        if self.linear:
            fit = ya[:, None] + (yb - ya)[:, None] * (k / nf[:, None])
        else:
            powers = k[:, None] ** np.arange(4.0)  # (width, 4): kᵖ
            y[outside] = 0.0
            scale = nf[:, None] ** -np.arange(4.0)  # kᵖ → sᵖ
            moments = (y @ powers) * scale  # (m, 4): Σ y·sᵖ
            m11, m12, m22, a1, b1, a2, b2 = self._normal(n)
            ridge = self.ridge
            r1 = 3.0 * (moments[:, 1] - 2.0 * moments[:, 2] + moments[:, 3])  # Σ y·b₁, b₁ = 3s(1−s)²
            r1 += ridge * (ya + (yb - ya) / 3) - ya * a1 - yb * b1
            r2 = 3.0 * (moments[:, 2] - moments[:, 3])  # Σ y·b₂, b₂ = 3s²(1−s)
            r2 += ridge * (ya + 2 * (yb - ya) / 3) - ya * a2 - yb * b2
            det = m11 * m22 - m12 * m12
            h1 = (m22 * r1 - m12 * r2) / det
            h2 = (m11 * r2 - m12 * r1) / det
            cubic = np.stack((ya, 3.0 * (h1 - ya), 3.0 * (ya - 2.0 * h1 + h2), yb - ya + 3.0 * (h1 - h2)), axis=1)
            fit = (cubic * scale) @ powers.T
        fit -= y
        fit[outside] = 0.0
        np.abs(fit, out=fit)
        return fit.max(axis=1)

    def _windows(self) -> np.ndarray:
        """Every run of T + 1 values of the channels laid end to end (then T zeros), as rows of a view:
        a padded span's values are the first n + 1 of its start's row."""
        if self._window_view is None:
            t = self.columns.shape[1]
            self._window_view = sliding_window_view(np.concatenate((self._flat, np.zeros(t))), t + 1)
        return self._window_view

    def _normal(self, n: np.ndarray) -> np.ndarray:
        """(7, m) per span length n (m,): the sums over s = k/n, k = 0..n, of b₁², b₁b₂, b₂² (ridge
        included), and of b₁·(1−s)³, b₁·s³, b₂·(1−s)³, b₂·s³; sums of positive terms (no power sums
        whose differences would cancel), computed once a length and ridge for the session (they depend
        on nothing else: :data:`_NORMALS`)."""
        normals = _NORMALS.get(self.ridge, np.zeros((7, 0)))
        if len(normals[0]) <= n.max():
            grown = np.full((7, max(int(n.max()) + 1, 2 * len(normals[0]))), np.nan)
            grown[:, : len(normals[0])] = normals
            normals = _NORMALS[self.ridge] = grown
        table = normals[:, n]
        missing = np.isnan(table[0])
        if missing.any():
            new = np.unique(n[missing])
            # every new length's frames end to end: s = k/n for k = 0..n of each
            first = np.concatenate(([0], np.cumsum(new + 1)[:-1]))
            length = np.repeat(new, new + 1)
            s = (np.arange(len(length)) - np.repeat(first, new + 1)) / length
            t = 1.0 - s
            b1, b2 = 3.0 * t * t * s, 3.0 * t * s * s
            t3, s3 = t * t * t, s * s * s
            terms = np.stack((b1 * b1, b1 * b2, b2 * b2, b1 * t3, b1 * s3, b2 * t3, b2 * s3))
            normals[:, new] = np.add.reduceat(terms, first, axis=1)
            normals[[0, 2], new[:, None]] += self.ridge
            table = normals[:, n]
        return table


_BASES: dict[tuple, dict[int, tuple]] = {}  # (ridge, linear) → span length → _SegmentFits._basis (read-only)
_RESIDUALS: dict[tuple, dict[int, np.ndarray]] = {}  # (ridge, linear) → span length → _SegmentFits._residual
_NORMALS: dict[
    float, np.ndarray
] = {}  # ridge → (7, N) the basis sums of _SegmentFits._normal per span length, NaN unknown


def drop_channel_keys(
    values: np.ndarray,
    keys: np.ndarray,
    levers: np.ndarray,
    budget: int,
    forced: np.ndarray | None = None,
    batch: float = 0.5,
    linear: bool = False,
    caps: np.ndarray | None = None,
    pinned: np.ndarray | None = None,
    tick: Callable[[], None] | None = None,
) -> list[np.ndarray]:
    """Per channel, the subset of ``keys`` to keep so that ``budget`` keys remain in all.

    values: (T, C) dense target curves (the rebuild in each channel's own units); keys:
    sorted pose keyframes (K,); levers: (C,) scene units of joint motion per unit of the
    channel (e.g. a bone's reach for a rotation in radians, 1 for a location); forced:
    key positions (indices into ``keys``) no channel may drop; linear: the curves will play
    LINEAR keys (segments measured as straight lines, not fitted Beziers); caps: (C,) most keys
    each channel may keep (its own key count: a channel never gets more keys than it had) — the
    channels over their cap drop their cheapest keys first, then the budget is met over all
    channels (so a capped channel's unused share goes to the others). pinned: (C, K) bool, keys
    each channel keeps (e.g. both sides of its bone's jump, :func:`bone_jumps`). Locked keys
    (first, last, ``forced``, pinned) stay even past a cap. Returns C index arrays into the frame axis.

    Greedy in rounds, in numpy: each round takes the cheapest ``batch`` share of the remaining
    excess and removes those of them no cheaper one is next to (never two neighbours on one curve,
    whose costs would interact; removals that are not neighbours are independent, so a round is
    exact for each), then re-fits only the segments that changed, batched by length. Removals
    with equal cost go in a scrambled fixed order. Measured on CMU 05_02 / 01_01 and Bandai's dance
    (1,901 frames, 132 curves) at 2–10 %: the same errors as removing one key at a time, the
    channel pass 3–4× faster than the earlier per-key Python loop; batch 0.25 and 0.5 give the same
    errors, 0.5 fewer rounds. A channel that does not move (:func:`_still_channels`: a fifth
    of a CMU capture's curves, its unanimated fingers) drops its free keys before the first round when
    the budget drops at least as many (the greedy drops them first anyway, refitting ever longer spans
    of them): the pass 1.3–1.6× faster on CMU 05_02 and 01_01, the rounds' keys a little different
    (errors within ±3 %, as often lower as higher).
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
    # per curve, a linked list of the kept keys (flat indices c·K + i): removing a key relinks its neighbours
    flat_index = np.arange(n_channels * n_keys).reshape(n_channels, n_keys)
    prev = (flat_index - 1).ravel()
    nxt = (flat_index + 1).ravel()
    cost = np.full(n_channels * n_keys, np.inf)
    fixed = np.broadcast_to(locked, (n_channels, n_keys))
    if pinned is not None:
        fixed = fixed | np.asarray(pinned, dtype=bool)
    fixed = fixed.ravel()
    free = np.flatnonzero(~fixed)
    waiting = np.zeros(n_channels * n_keys, dtype=bool)  # a round's candidates not yet picked nor blocked
    mark = np.zeros(n_channels * n_keys, dtype=bool)

    def refit(flat: np.ndarray) -> None:
        c, i = np.divmod(flat, n_keys)
        cost[flat] = fits.errors(c, keys[prev[flat] % n_keys], keys[nxt[flat] % n_keys]) * levers[c]

    # a channel flat to rounding between its locked keys (an unanimated finger: a fifth of a CMU
    # capture's curves) loses nothing by dropping its free keys, which the greedy would all drop
    # first, refitting ever longer spans of it: they go at once when the budget drops at least as many
    still = _still_channels(levers, values[keys])
    dropped = still[:, None] & ~fixed.reshape(n_channels, n_keys)
    if not 0 < dropped.sum() <= n_channels * n_keys - budget:
        dropped[:] = False
    keep[dropped] = False
    free = free[keep.ravel()[free]]
    if len(free):  # every free key's span is the same on each curve: fitted across the curves at once
        c, i = np.divmod(free, n_keys)
        moving, column = _present(c, n_channels)
        at, row = _present(i, n_keys)
        shared = fits.shared_errors(keys[at - 1], keys[at + 1], moving)
        cost[free] = shared[row, column] * levers[c]
    live = free  # the keys still kept and free to go (ascending): costs are finite there only
    count = n_keys - dropped.sum(axis=1)
    total = int(count.sum())
    floor = fixed.reshape(n_channels, n_keys).sum(axis=1)
    cap = np.full(n_channels, n_keys) if caps is None else np.maximum(np.asarray(caps, dtype=int), floor)
    while True:
        if tick is not None:  # a long pass can be cancelled between rounds (the caller's progress raises)
            tick()
        over = np.maximum(count - cap, 0)
        if over.any():  # first bring every channel down to its cap, each by its own cheapest keys
            excess = int(over.sum())
            finite = live[over[live // n_keys] > 0]
        elif total > budget:
            excess, over = total - budget, None
            finite = live
        else:
            break
        take = min(excess, max(1, int(np.ceil(batch * excess))))
        if not len(finite):
            break
        if take < len(finite):
            finite = _cheapest(finite, cost[finite], take)
        if over is not None:  # at most each channel's excess, its cheapest first
            candidates = finite[_cheapest_first(finite, cost[finite])]
            channel = candidates // n_keys
            order = np.argsort(channel, kind="stable")
            first = np.searchsorted(channel[order], channel[order])
            within = np.empty(len(candidates), dtype=int)
            within[order] = np.arange(len(candidates)) - first
            finite = candidates[within < over[channel]]
        # never two neighbours on one curve (their costs interact), as the one-by-one greedy would:
        # a candidate goes when no cheaper candidate is next to it (equal costs — a flat stretch — in a
        # scrambled but fixed order, so that a run of them is not one chain in which only its first key
        # is cheaper than both neighbours: :func:`_before`), then its neighbours drop out, and again on
        # the rest (a few passes; what is left waits for the next round)
        waiting[finite] = True
        alive, picked = finite, []
        for _ in range(MIS_PASSES):
            p, q = prev[alive], nxt[alive]
            pick = alive[(~waiting[p] | _before(alive, p, cost)) & (~waiting[q] | _before(alive, q, cost))]
            picked.append(pick)
            waiting[pick] = waiting[prev[pick]] = waiting[nxt[pick]] = False
            alive = alive[waiting[alive]]
            if not len(alive):
                break
        waiting[alive] = False
        chosen = np.concatenate(picked)
        p, q = prev[chosen], nxt[chosen]
        keep.ravel()[chosen] = False
        count -= np.bincount(chosen // n_keys, minlength=n_channels)
        cost[chosen] = np.inf
        nxt[p], prev[q] = q, p
        total -= len(chosen)
        live = live[keep.ravel()[live]]
        mark[p] = mark[q] = True
        touched = np.flatnonzero(mark)
        mark[touched] = False
        touched = touched[keep.ravel()[touched] & ~fixed[touched]]
        if len(touched):
            refit(touched)
    return [keys[keep[c]] for c in range(n_channels)]


def _cheapest(flat: np.ndarray, cost: np.ndarray, take: int) -> np.ndarray:
    """The ``take`` keys of ``flat`` (flat indices, costs ``cost``) of lowest cost, in no order: the keys
    under the cost that ranks a little past ``take`` among every :data:`SAMPLE_STEP`-th key are partitioned
    alone when they are enough (else all are). A pass over every key and a partition of a few more than
    ``take``, not of them all: the first rounds take 40 % of the keys, the last ones a few of 26,000 (CMU
    01_01 at 10 %). The same keys as one partition, the share's largest cost ties apart."""
    if len(cost) > SAMPLE_STEP * 64:
        sample = cost[::SAMPLE_STEP]
        rank = min(len(sample) - 1, (take + take // 16) // SAMPLE_STEP + 16)
        under = np.flatnonzero(cost <= np.partition(sample, rank)[rank])
        if len(under) >= take:
            return flat[under[np.argpartition(cost[under], take - 1)[:take]]]
    return flat[np.argpartition(cost, take - 1)[:take]]


def _present(values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of integers in [0, size), by a table instead of a sort."""
    seen = np.zeros(size, dtype=bool)
    seen[values] = True
    present = np.flatnonzero(seen)
    rank = np.empty(size, dtype=np.intp)
    rank[present] = np.arange(len(present))
    return present, rank[values]


def _still_channels(levers: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(C,) whether each channel moves the measured points less than :data:`STILL` × the largest channel
    movement (lever × the range of its values): a still curve, every segment fit of it within that."""
    movement = levers * np.ptp(values, axis=0)
    return movement <= STILL * movement.max(initial=0.0)


def _scrambled(flat: np.ndarray) -> np.ndarray:
    """A fixed scrambled order of flat key indices (a bijection modulo 2³²): the tie-break of equal costs."""
    return (flat * 2654435761) % 4294967296


def _before(x: np.ndarray, y: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Whether key x goes before key y (flat indices): cheaper, or as cheap and earlier in the scrambled
    order — the order of :func:`_cheapest_first`, decided pair by pair without sorting."""
    cx, cy = cost[x], cost[y]
    out = cx < cy
    tie = cx == cy
    if tie.any():
        out[tie] = _scrambled(x[tie]) < _scrambled(y[tie])
    return out


def _cheapest_first(flat: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """The order of keys ``flat`` (flat indices) by ``cost``, equal costs in a scrambled but fixed order
    of their indices: ``np.lexsort((_scrambled(flat), cost))``, with the second key sorted only where costs
    tie (measured: the lexsort was a sixth of the channel pass on CMU 01_01 at 10 %)."""
    order = np.argsort(cost)
    ranked = cost[order]
    tie = np.zeros(len(order), dtype=bool)
    same = ranked[1:] == ranked[:-1]
    tie[1:] |= same
    tie[:-1] |= same
    if tie.any():
        tied = order[tie]
        order[tie] = tied[np.lexsort((_scrambled(flat[tied]), cost[tied]))]
    return order
