"""Reconstruction error of many candidate segments at once: the kernel under every search method.

A segment (a, b) is two consecutive keys; its frames a < t < b are rebuilt as
:func:`~.reconstruct.reconstruct` does (slerp of every joint, lerp of every translation).
:class:`SegmentErrors` measures the per-frame error of those frames for whole batches of
segments, vectorised over segments, in-between frames and joints.

Error kinds (per frame t):
- ``"position"``: mean over the measured points of ‖X_t,p − X̂_t,p‖, world positions by FK
  (scene units): exactly the per-frame mean of :func:`~.error.position_errors`, the measure of
  every report: each bone's head, the tips of leaf bones and two side points per bone
  (:func:`~.error.measured_points`), so a leaf bone (hand, thumb, toe, head) turning alone or a
  bone twisting about its axis counts;
- ``"pose"``: the patent's error, :class:`~.distance.PoseMetric` between the original and
  the rebuilt pose (root travel + Σ_j w_j·d(q_j, q̂_j)); no FK, several times cheaper.

Two batch layouts share one joint loop. Segments of one gap g (table builds): arrays
(g−1, n), row i−1 is frame a+i, the key values (n,) broadcast along contiguous rows, and
the slerp weights sin(iθ/g)/sin θ come from rotating (cos, sin) by θ/g row by row instead
of a sine per value. Segments of mixed gaps (local search): all in-between frames in
one flat (N,) batch. Per rebuilt frame the work is O(J + P) elementwise numpy operations:
the world rotation of every joint (leaf bones too: their tips and sides turn with them),
turned once into a matrix shared by the joint's points and its children's heads; the head
of a joint sitting unmoved on its parent shares the parent's error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import quaternion as quat
from ..motion import Motion
from ..skeleton import Skeleton
from .distance import PoseMetric
from .error import measured_points, pose_points

KINDS = ("position", "pose")
_FLAT_BELOW = 2048  # gap groups with fewer rebuilt frames than this go to the flat layout, all in one batch
# (a batch costs about 8 ms of numpy calls whatever its size, for 31 joints: many small ones cost more than
# their frames)


def rest_locals(motion: Motion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The local rotations rest·q (T, J, 4) the rebuild slerps (the slerp commutes with the rest rotation), and
    (J,) masks of the joints that turn (rest·q not the same in every frame) and that move (translation not the
    same in every frame): the joints a segment's rebuild has to interpolate."""
    local = quat.multiply(motion.skeleton.rest_rotations, motion.rotations)
    turning = ~np.all(local == local[:1], axis=(0, 2))
    moving = ~np.all(motion.translations == motion.translations[:1], axis=(0, 2))
    return local, turning, moving


@dataclass
class _Batch:
    """Where a batch's in-between frames come from; ``shape`` is the shape of every per-frame array."""

    a: np.ndarray  # first key of each column (gap layout, (n,)) or value (flat, (N,))
    b: np.ndarray  # second key, same shape as a
    u: np.ndarray  # interpolation fraction, broadcastable to shape
    take: Callable[[np.ndarray], np.ndarray]  # (C, T) series -> (C, *shape) at the in-between frames
    shape: tuple[int, ...]


class SegmentErrors:
    """Rebuild-and-measure kernel for one motion.

    motion: the original clip (T frames, J joints). kind: ``"position"`` or ``"pose"``.
    metric: the pose metric for ``kind="pose"`` (default :meth:`PoseMetric.for_motion`).
    chunk: rebuilt frames per vectorised batch (memory: the world rotation, matrix and head of the
    joints whose children are pending, about 16 arrays of chunk floats each, plus temporaries).
    """

    def __init__(self, motion: Motion, kind: str = "position", metric: PoseMetric | None = None, chunk: int = 8192):
        if kind not in KINDS:
            raise ValueError(f"unknown segment error kind {kind!r}; choose from {KINDS}")
        sk = motion.skeleton
        self.kind, self.chunk = kind, int(chunk)
        self.n_frames, self.n_joints = motion.n_frames, sk.n_joints
        self.parents = sk.parents
        local, turning, moving = rest_locals(motion)
        self._rot = np.ascontiguousarray(local.transpose(1, 2, 0))  # (J, 4, T)
        self._trans = np.ascontiguousarray(motion.translations.transpose(1, 2, 0))  # (J, 3, T)
        self._const_rot, self._const_trans = ~turning, ~moving
        self._has_children = np.bincount(sk.parents[sk.parents >= 0], minlength=sk.n_joints) > 0
        self._last_child = np.full(sk.n_joints, -1)
        self._last_child[sk.parents[sk.parents >= 0]] = np.flatnonzero(sk.parents >= 0)
        if kind == "position":
            points = measured_points(sk)
            self._n_points = len(points)
            # (P, 3, T); pose_points of the motion itself, so points an extraction already has are not computed again
            self._pts = np.ascontiguousarray(pose_points(motion).transpose(1, 2, 0))
            self._offsets = points.offsets
            self._owner = self._position_owners(sk)
            self._mult = np.bincount(self._owner, minlength=sk.n_joints)
            extra = points.owner[sk.n_joints :]
            self._extra = [sk.n_joints + np.flatnonzero(extra == j) for j in range(sk.n_joints)]
            needed = np.ones(sk.n_joints, dtype=bool)  # every bone carries points off its axis
        else:
            self.metric = metric or PoseMetric.for_motion(motion)
            self._scale = self.metric.translation_weight / (0.5 * self.metric.size)
            needed = self.metric.weights > 0
        self._varying = np.flatnonzero(needed & ~self._const_rot)  # joints that need a slerp
        self._slot = np.full(sk.n_joints, -1)
        self._slot[self._varying] = np.arange(len(self._varying))
        self._rot_var = self._rot[self._varying]

    def _position_owners(self, sk: Skeleton) -> np.ndarray:
        """(J,) the joint whose world position each joint shares: itself unless it sits, unmoved, on its parent."""
        at_parent = (sk.parents >= 0) & self._const_trans & np.all(self._trans[:, :, 0] == 0.0, axis=1)
        owner = np.arange(sk.n_joints)
        for j in np.flatnonzero(at_parent):
            owner[j] = owner[sk.parents[j]]
        return owner

    def original_points(self, frames: np.ndarray) -> np.ndarray:
        """(len(frames), P, 3) the original's measured points (:func:`~.error.pose_points`) at ``frames``."""
        return np.ascontiguousarray(self._pts[:, :, frames].transpose(2, 0, 1))

    # ---- public batch queries -------------------------------------------------------
    def gap_errors(self, starts: np.ndarray, gap: int) -> np.ndarray:
        """(n, gap−1) per-frame errors of the in-between frames of segments (starts, starts + gap)."""
        starts = np.asarray(starts, dtype=int)
        if gap < 2 or len(starts) == 0:
            return np.zeros((len(starts), max(gap - 1, 0)))
        per = max(1, self.chunk // (gap - 1))
        return np.concatenate([self._gap_batch(starts[i : i + per], gap).T for i in range(0, len(starts), per)])

    def gap_rows(self, starts: np.ndarray, gap: int, offsets: np.ndarray) -> np.ndarray:
        """(len(offsets), n) errors of frames starts + offsets (1 ≤ offset < gap) rebuilt from the
        segments (starts, starts + gap): a few rows of :meth:`gap_errors`, at the gap layout's speed."""
        starts, offsets = np.asarray(starts, dtype=int), np.asarray(offsets, dtype=int)
        if len(starts) == 0 or len(offsets) == 0:
            return np.zeros((len(offsets), len(starts)))
        per = max(1, self.chunk // len(offsets))
        return np.concatenate(
            [self._rows_batch(starts[i : i + per], gap, offsets) for i in range(0, len(starts), per)], axis=1
        )

    def flat_errors(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(Σ (b−a−1),) per-frame errors of the in-between frames of segments (a, b), segment after segment."""
        a, b = np.asarray(a, dtype=int).ravel(), np.asarray(b, dtype=int).ravel()
        width = np.maximum(b - a - 1, 0)
        seg = np.repeat(np.arange(len(a)), width)
        t = a[seg] + 1 + np.arange(len(seg)) - np.repeat(np.r_[0, np.cumsum(width)[:-1]], width)
        return self.errors_at(a[seg], b[seg], t)

    def errors_at(self, a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
        """(N,) errors of frames t, each rebuilt from its own keys a < t < b (flat layout)."""
        out = np.empty(len(t))
        for i in range(0, len(t), self.chunk):
            s = slice(i, i + self.chunk)
            out[s] = self._flat_batch(a[s], b[s], t[s])
        return out

    def costs(
        self, a: np.ndarray, b: np.ndarray, reduce: str = "sum", part: tuple[float, float] | None = None
    ) -> np.ndarray:
        """Summed (``"sum"``) or largest (``"max"``) in-between error of segments (a, b), shaped like a.

        part: None for every in-between frame; (f₀, f₁) for the frames of the centred share f₁ of them
        that are not in the centred share f₀ (:func:`centred_range`): (0, 0.5) is the middle half, where
        the rebuild's error concentrates (about 2/3 of the sum on CMU captures, and a lower bound of it,
        every frame's error being ≥ 0), (0.5, 1) the rest; the parts of a chain (0, f₁), (f₁, f₂), …,
        (fₙ, 1) add up to the whole.
        """
        a, b = np.broadcast_arrays(np.asarray(a, dtype=int), np.asarray(b, dtype=int))
        a_flat, b_flat = a.ravel(), b.ravel()
        out = np.zeros(a_flat.shape)
        few = []
        for gap, idx in _group_by_gap(b_flat - a_flat):
            if gap < 2:
                continue
            rows = _part_offsets(gap, part)
            if len(idx) * len(rows) < _FLAT_BELOW:
                few.append(idx)
                continue
            if part is None:
                err = self.gap_errors(a_flat[idx], gap)
            else:
                err = self.gap_rows(a_flat[idx], gap, rows).T
            out[idx] = err.sum(axis=1) if reduce == "sum" or not len(rows) else err.max(axis=1)
        if few:
            idx = np.concatenate(few)
            a_few, b_few = a_flat[idx], b_flat[idx]
            width = np.maximum(b_few - a_few - 1, 0)
            seg = np.repeat(np.arange(len(idx)), width)
            t = a_few[seg] + 1 + np.arange(len(seg)) - np.repeat(np.r_[0, np.cumsum(width)[:-1]], width)
            if part is not None:
                offset, gaps = t - a_few[seg], (b_few - a_few)[seg]
                (lo0, hi0), (lo1, hi1) = (centred_range(gaps, share) for share in _check_part(part))
                keep = (offset >= lo1) & (offset < hi1) & ~((offset >= lo0) & (offset < hi0))
                seg, t = seg[keep], t[keep]
            err = self.errors_at(a_few[seg], b_few[seg], t)
            if reduce == "sum":
                out[idx] = np.bincount(seg, err, minlength=len(idx))
            else:
                most = np.zeros(len(idx))
                np.maximum.at(most, seg, err)
                out[idx] = most
        return out.reshape(a.shape)

    def frame_errors(self, keys: np.ndarray) -> np.ndarray:
        """(T,) per-frame error of the rebuild from ``keys`` (0 at the keys)."""
        keys = np.asarray(keys, dtype=int)
        out = np.zeros(self.n_frames)
        inner = np.ones(self.n_frames, dtype=bool)
        inner[keys] = False
        inner[: keys[0]] = inner[keys[-1] :] = False
        out[inner] = self.flat_errors(keys[:-1], keys[1:])
        return out

    # ---- kernel ---------------------------------------------------------------------
    def _gap_batch(self, starts: np.ndarray, g: int) -> np.ndarray:
        """(g−1, n) errors for n segments of gap g."""
        u = (np.arange(1, g) / g)[:, None]
        batch = _Batch(starts, starts + g, u, _Frames(starts, g), (g - 1, len(starts)))
        return self._errors(batch, *self._gap_weights(starts, g, u))

    def _rows_batch(self, starts: np.ndarray, g: int, offsets: np.ndarray) -> np.ndarray:
        """(r, n) errors at rows ``offsets`` of n segments of gap g (slerp weights by a sine per row)."""
        u = (offsets / g)[:, None]
        batch = _Batch(starts, starts + g, u, _Frames(starts, g, offsets), (len(offsets), len(starts)))
        theta, s, near, sign = self._arc(starts, starts + g)
        inv = (1.0 / np.where(near, 1.0, s))[:, None, :]
        wa = np.where(near[:, None, :], 1.0 - u, np.sin((1.0 - u) * theta[:, None, :]) * inv)
        wb = np.where(near[:, None, :], u, np.sin(u * theta[:, None, :]) * inv) * sign[:, None, :]
        return self._errors(batch, wa, wb)

    def _flat_batch(self, a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
        """(N,) errors of frames t, each rebuilt from its keys a < t < b."""
        u = (t - a) / (b - a)
        batch = _Batch(a, b, u, lambda series: series[:, t], (len(t),))
        pairs, where = np.unique(a * self.n_frames + b, return_inverse=True)  # the arc once per segment
        theta, s, near, sign = (x[:, where] for x in self._arc(pairs // self.n_frames, pairs % self.n_frames))
        inv = 1.0 / np.where(near, 1.0, s)
        wa = np.where(near, 1.0 - u, np.sin((1.0 - u) * theta) * inv)
        wb = np.where(near, u, np.sin(u * theta) * inv) * sign
        return self._errors(batch, wa, wb)

    def _arc(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        """(V, n) arc angle θ between the keys, sin θ, near (sin θ < 1e-6: lerp) and the sign of the second key."""
        d = np.einsum("vcn,vcn->vn", self._rot_var[:, :, a], self._rot_var[:, :, b])
        theta = np.arccos(np.minimum(np.abs(d), 1.0))
        s = np.sin(theta)
        return theta, s, s < 1e-6, np.where(d < 0.0, -1.0, 1.0)  # the shorter arc: flip the second key

    def _gap_weights(self, starts: np.ndarray, g: int, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(V, g−1, n) slerp weights: wb = sin(iθ/g)/sin θ and wa = sin((g−i)θ/g)/sin θ (wb read backwards)."""
        theta, s, near, sign = self._arc(starts, starts + g)
        c1, s1 = np.cos(theta / g), np.sin(theta / g)
        sines = np.empty((len(theta), g - 1, len(starts)))
        sines[:, 0] = s1
        cos_i = c1
        for i in range(1, g - 1):  # rotate (cos iφ, sin iφ) by φ = θ/g
            sines[:, i] = sines[:, i - 1] * c1 + cos_i * s1
            cos_i = cos_i * c1 - sines[:, i - 1] * s1
        wb = sines * (1.0 / np.where(near, 1.0, s))[:, None, :]
        wa = wb[:, ::-1]
        if near.any():
            wa = np.where(near[:, None, :], 1.0 - u, wa)
            wb = np.where(near[:, None, :], u, wb)
        return wa, wb * sign[:, None, :]

    def _errors(self, batch: _Batch, wa: np.ndarray, wb: np.ndarray) -> np.ndarray:
        if self.kind == "pose":
            err = np.zeros(batch.shape)
            for j in range(self.n_joints):
                err += self._pose_term(j, batch, wa, wb)
            return err
        return self._position_errors(batch, wa, wb)

    def _position_errors(self, batch: _Batch, wa: np.ndarray, wb: np.ndarray) -> np.ndarray:
        """Mean distance of the measured points (:func:`~.error.measured_points`) of the rebuilt
        frames: FK joint by joint, parents first; a joint's tips and side points are its head plus
        its world rotation (as a matrix, shared by its points and its children) times their offsets."""
        err = np.zeros(batch.shape)
        world: dict[int, tuple] = {}
        matrix: dict[int, tuple] = {}
        pos: dict[int, tuple] = {}
        for j in range(self.n_joints):
            p = self.parents[j]
            if self._owner[j] == j:
                t = self._translation(j, batch)
                pj = t if p < 0 else tuple(pp + r for pp, r in zip(pos[p], _apply(matrix[p], t)))
                dist = _distance(pj, batch.take(self._pts[j]))
                err += dist if self._mult[j] == 1 else self._mult[j] * dist
            else:
                pj = pos[p]
            q = self._local(j, batch, wa, wb)
            q = q if p < 0 else quat.multiply_parts(world[p], q)
            m = _matrix(q)
            for k in self._extra[j]:
                x = tuple(pc + r for pc, r in zip(pj, _apply(m, self._offsets[k])))
                err += _distance(x, batch.take(self._pts[k]))
            if self._has_children[j]:
                world[j], matrix[j], pos[j] = q, m, pj
            if p >= 0 and self._last_child[p] == j:  # free the parent's arrays while warm in cache
                del world[p], matrix[p], pos[p]
        err /= self._n_points
        return err

    def _local(self, j: int, batch: _Batch, wa: np.ndarray, wb: np.ndarray) -> tuple:
        """Rebuilt local rotation of joint j (slerp): 4 components, arrays of batch.shape or scalars."""
        if self._const_rot[j]:
            return tuple(self._rot[j, :, 0])
        v = self._slot[j]
        qa, qb = self._rot[j][:, batch.a], self._rot[j][:, batch.b]
        return tuple(wa[v] * qa[c] + wb[v] * qb[c] for c in range(4))

    def _translation(self, j: int, batch: _Batch) -> tuple:
        """Rebuilt local translation of joint j (lerp): 3 components, arrays of batch.shape or scalars."""
        if self._const_trans[j]:
            return tuple(self._trans[j, :, 0])
        ta, tb = self._trans[j][:, batch.a], self._trans[j][:, batch.b]
        return tuple(ta[c] + batch.u * (tb[c] - ta[c]) for c in range(3))

    def _pose_term(self, j: int, batch: _Batch, wa: np.ndarray, wb: np.ndarray) -> np.ndarray | float:
        """Joint j's share of the pose distance: w_j·d(q, q̂) plus its weighted translation error."""
        term = 0.0
        w = self.metric.weights[j]
        if w > 0 and not self._const_rot[j]:
            q = self._local(j, batch, wa, wb)
            dots = sum(o * r for o, r in zip(batch.take(self._rot[j]), q))
            term = w * np.arccos(np.minimum(np.abs(dots), 1.0))
        if self._scale and self.metric.moving[j] and not self._const_trans[j]:
            t = self._translation(j, batch)
            term = term + self._scale * np.sqrt(sum((tc - oc) ** 2 for tc, oc in zip(t, batch.take(self._trans[j]))))
        return term


def _matrix(q: tuple) -> tuple:
    """The rotation matrix (9 entries, row by row) of unit-quaternion components (w, x, y, z)."""
    w, x, y, z = q
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    return (
        1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
        2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
        2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy),
    )  # fmt: skip


def _apply(m: tuple, v: tuple | np.ndarray) -> tuple:
    """Matrix (9 entries) times vector (3 components, scalars or arrays); zero scalar components skipped."""
    out = []
    for row in range(3):
        terms = [m[3 * row + c] * v[c] for c in range(3) if not (np.isscalar(v[c]) and v[c] == 0.0)]
        out.append(sum(terms[1:], terms[0]) if terms else 0.0)
    return tuple(out)


def _distance(x: tuple, original: np.ndarray) -> np.ndarray:
    """Euclidean distance between points given by 3 components and the (3, …) original points."""
    return np.sqrt(sum((xc - oc) ** 2 for xc, oc in zip(x, original)))


class _Frames:
    """Gather a (C, T) series at the in-between frames of segments (starts, starts + g): (C, g−1, n),
    or at the rows ``offsets`` only: (C, len(offsets), n).

    Contiguous starts (table builds) give a strided view, no copy (a copy of the rows asked for).
    """

    def __init__(self, starts: np.ndarray, g: int, offsets: np.ndarray | None = None):
        self.g, self.n, self.offsets = g, len(starts), offsets
        self.first = int(starts[0])
        self.contiguous = bool(np.all(np.diff(starts) == 1))
        if not self.contiguous:
            rows = np.arange(1, g) if offsets is None else offsets
            self.index = starts[None, :] + rows[:, None]

    def __call__(self, series: np.ndarray) -> np.ndarray:
        if self.contiguous:
            block = series[:, self.first : self.first + self.n + self.g - 1]
            view = sliding_window_view(block, self.n, axis=-1)
            return view[:, 1 : self.g] if self.offsets is None else view[:, self.offsets]
        return series[:, self.index]


def centred_range(gaps: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Offsets [lo, hi) from a segment's first key of the centred ``share`` of its g − 1 in-between frames
    (⌈share·(g−1)⌉ of them); the ranges of growing shares are nested."""
    inner = np.maximum(np.asarray(gaps) - 1, 0)
    width = np.ceil(share * inner - 1e-9).astype(int)
    lo = 1 + (inner - width) // 2
    return lo, lo + width


def _check_part(part: tuple[float, float]) -> tuple[float, float]:
    first, last = (float(x) for x in part)
    if not 0.0 <= first < last <= 1.0:
        raise ValueError(f"part {part!r}: two shares 0 ≤ f₀ < f₁ ≤ 1 of the in-between frames")
    return first, last


def _part_offsets(gap: int, part: tuple[float, float] | None) -> np.ndarray:
    """The in-between offsets of ``part`` (see :meth:`SegmentErrors.costs`) of a segment of ``gap``."""
    every = np.arange(1, gap)
    if part is None:
        return every
    (lo0, hi0), (lo1, hi1) = (centred_range(np.array([gap]), share) for share in _check_part(part))
    return every[(every >= lo1[0]) & (every < hi1[0]) & ~((every >= lo0[0]) & (every < hi0[0]))]


def _group_by_gap(gaps: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(gap, indices) for each distinct gap value of a 1-D array."""
    order = np.argsort(gaps, kind="stable")
    values, first = np.unique(gaps[order], return_index=True)
    for gap, idx in zip(values, np.split(order, first[1:])):
        yield int(gap), idx
