"""A lower bound of a segment's rebuild error without rebuilding it: a cubic Hermite of each point's path.

Along a segment (a, b), gap g, the rebuild turns each joint's local rotation L_j = rest_j·q_j at a
constant body-frame angular velocity, L_j(t) = L_j(a)·exp((t−a)·ŵ_j), w_j = 2·log(L_j(a)⁻¹L_j(b)')/g
rad/frame (L_j(b)' the key on the shorter arc, as the slerp takes it, so |w_j| = 2θ_j/g with
θ_j = arccos|L_a·L_b|), and lerps every translation. A measured point p (owner joint o, offset o_p)
is t_root(t) + Σ_k W_par(k)(t)·t_k(t) + W_o(t)·o_p, each W a product of the local rotations above.

- Its values at the keys are the original's (the keys are exact): X_a,p and X_b,p.
- Its velocity there needs no rebuild: ṗ = Σ_i ω_i × (p − x_i) + Σ_k W_par(k)·Δt_k/g over the joints
  i, k on p's chain (itself included), ω_i = W_i·w_i the world axis of joint i's turn and x_i its head,
  all at the key's pose (w_j is the same at both keys).
- Its fourth derivative is bounded: for a product of rotations with constant body-frame rates,
  ‖dⁿ/dtⁿ Π R_i‖ ≤ (Σ|w_i|)ⁿ (product rule, ‖ŵⁿ‖ = |w|ⁿ), so
  |p⁗| ≤ M_p = Ω_o⁴|o_p| + Σ_k (Ω'_k⁴ |t_k|max + 4 Ω'_k³ |Δt_k|/g), Ω_o the sum of |w_i| over the
  joints from the root to o, Ω'_k the same above k (k excluded), |t_k|max the longer of its two keys.

So the cubic Hermite H_p through (X_a,p, ṗ(a)) and (X_b,p, ṗ(b)) is within M_p·(t−a)²(b−t)²/24 of the
rebuilt point (the Hermite remainder, on each direction of the vector), and by the triangle inequality
e_ab(t) ≥ mean_p max(0, ‖X_t,p − H_p(t)‖ − M_p (t−a)²(b−t)²/24): summed over the in-between frames, a
lower bound of E(a, b) (:meth:`HermiteBounds.gap_bounds`, O(g·P) a segment, as costly as the exact
rebuild). :meth:`HermiteBounds.moment_bounds` sums it over a few runs of frames instead, where
Σ_t max(0, ‖X_t − H(t)‖ − R(t)) ≥ ‖Σ_t X_t − Σ_t H(t)‖ − Σ_t R(t): the original's sums from prefix
sums, the Hermite's and the remainder's in closed form, so O(J + P) a segment whatever its gap (the
chain sums are running sums down the tree), no forward kinematics, no rebuilt frame.
:meth:`HermiteBounds.run_bounds` gives that bound run by run for any cuts: exact.py adds the runs outside a
segment's centred quarter to the exact error inside it.

Measured on CMU 05_02 (120 fps, random segments; L/E, median and 10th percentile): frame by frame 0.96 /
0.64 at gap 20, 0.84 at 40, 0.83–0.89 up to 400; the four-run moments 0.90 / 0.67 at gap 20, 0.83 / 0.34
at 40, 0.81 / 0.25 at 80, 0.85 / 0.50 at 200, 0.78 / 0.45 at 400 (exact.py's sampled bound with four
samples: 0.22 at gap 20, 0.15–0.36 beyond; with the one sample exact_keys takes, 0.06–0.13 from gap 20
to 400). The moments on CMU 01_01: 0.98 from gap 10 to 40, 0.94 at 160, 0.82 / 0.33 at 320; on the
Bandai dance (30 fps) 0.80–0.83 / 0.42–0.58 from gap 10 to 160; on a hand-made motion turning every
joint up to 3 rad a frame 0.08–0.16, below the four-sample bound (0.12–1.0 from gap 40 to 5), above the
one sample's from gap 10 (0.02–0.10). Loose where the joints turn a lot over the segment: the remainder grows as
(Σθ)⁴ and as g⁴ (M_p = 3·10⁻⁴ per frame⁴ gives 10 scene units at the middle of a 60-frame segment,
against errors of 0.1–1), so long segments keep mostly the points near the root (the root's own head is
rebuilt exactly by the Hermite: a line). About 30 µs a segment (100 points, numpy, loaded 2-core machine).
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..blas import one_blas_thread
from ..kinematics import forward_kinematics
from ..motion import Motion
from .error import measured_points, pose_points
from .segments import rest_locals

CHUNK = 1 << 18  # point-frames (P × in-between frames × segments) per vectorised batch (stays in cache)
PIECES = 4  # runs of frames per segment in :meth:`HermiteBounds.moment_bounds`
SEGMENTS = 128  # segments per batch of :meth:`HermiteBounds.moment_bounds` (for about 100 points)


class HermiteBounds:
    """Per-frame quantities of one motion for the bounds (see the module notes), frames first so a
    segment's keys gather whole rows: world rotation matrices (T, 3, 3, J), heads (T, 3, J), the
    measured points (T, 3, P) and their prefix sums (T+1, 3, P)."""

    def __init__(self, motion: Motion):
        sk = motion.skeleton
        points = measured_points(sk)
        parents = sk.parents
        self.n_frames, self.n_points = motion.n_frames, len(points)
        local, turning, moving = rest_locals(motion)
        self.turning, self.moving = np.flatnonzero(turning), np.flatnonzero(moving)
        self.local = np.ascontiguousarray(local[:, self.turning].transpose(0, 2, 1))  # (T, 4, V)
        self.trans = np.ascontiguousarray(motion.translations[:, self.moving].transpose(0, 2, 1))  # (T, 3, M)
        self.trans_norm = np.linalg.norm(motion.translations, axis=2)  # (T, J)
        heads, world = forward_kinematics(sk, motion.translations, motion.rotations)
        self.heads = np.ascontiguousarray(heads.transpose(0, 2, 1))  # (T, 3, J)
        world = quat.to_matrix(world)  # (T, J, 3, 3)
        self.world = np.ascontiguousarray(world.transpose(0, 2, 3, 1))  # (T, 3, 3, J)
        above_moving = np.where(  # W_par(k) of the moving joints, identity at a root: (T, 3, 3, M)
            (parents[self.moving] >= 0)[None, :, None, None], world[:, np.maximum(parents[self.moving], 0)], np.eye(3)
        )
        self.parent_world = np.ascontiguousarray(above_moving.transpose(0, 2, 3, 1))
        self.x = np.ascontiguousarray(pose_points(motion, points).transpose(0, 2, 1))  # (T, 3, P)
        self.cum = np.concatenate((np.zeros((1, 3, self.n_points)), np.cumsum(self.x, axis=0)))  # Σ_{s<t} X_s
        # a difference of two prefix sums is within 2·T·ε·Σ_t |X_t| of its exact value (loose, tiny)
        self.rounding = 2.0 * self.n_frames * np.finfo(float).eps * np.abs(self.x).sum(axis=(0, 1))  # (P,)
        self.owner = np.asarray(points.owner)
        self.links = [(j, int(p)) for j, p in enumerate(parents) if p >= 0]  # parents come first
        self.not_root = (parents >= 0).astype(float)
        self.offset_norm = np.linalg.norm(points.offsets, axis=1)  # (P,)

    def velocities(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n, 3, P) velocities of the rebuilt points at a and at b (scene units per frame), and (n, P)
        M_p, the bound of their fourth derivative along each segment (a, b)."""
        n, n_joints, n_points = len(a), len(self.not_root), self.n_points
        inv_g = 1.0 / (b - a).astype(float)[:, None]
        w = np.zeros((3, n, n_joints))  # body-frame rates (rad/frame), components first
        v = self.turning
        if len(v):
            qa, qb = self.local[a], self.local[b]  # (n, 4, V)
            rw, rx, ry, rz = quat.multiply_parts(  # conj(q_a)·q_b
                (qa[:, 0], -qa[:, 1], -qa[:, 2], -qa[:, 3]), tuple(qb.transpose(1, 0, 2))
            )
            s = np.sqrt(rx * rx + ry * ry + rz * rz)
            # log on the shorter arc (the slerp's: the sign of rw), |w| = 2θ/g with θ = atan2(s, |rw|)
            scale = 2.0 * np.arctan2(s, np.abs(rw)) * np.where(rw < 0.0, -1.0, 1.0) * inv_g / np.where(s > 0, s, 1.0)
            w[0][:, v], w[1][:, v], w[2][:, v] = rx * scale, ry * scale, rz * scale
        rate = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])  # (n, J)
        m = self.moving
        step = (self.trans[b] - self.trans[a]) * inv_g[:, :, None] if len(m) else None  # (n, 3, M) per frame
        out = []
        for f in (a, b):
            rot, heads = self.world[f], self.heads[f]  # (n, 3, 3, J), (n, 3, J)
            omega = [rot[:, c, 0] * w[0] + rot[:, c, 1] * w[1] + rot[:, c, 2] * w[2] for c in range(3)]  # world axes
            spin = np.stack(omega)  # (3, n, J)
            drift = np.stack([_cross(heads[:, 0], heads[:, 1], heads[:, 2], omega, c) for c in range(3)])  # x_i × ω_i
            if len(m):
                par = self.parent_world[f]  # (n, 3, 3, M)
                for c in range(3):  # + W_par(k)·Δt_k/g
                    drift[c][:, m] += (par[:, c] * step).sum(axis=1)
            spin = self._chain_sums(spin)[:, :, self.owner]  # summed over p's chain
            drift = self._chain_sums(drift)[:, :, self.owner]
            x = self.x[f]  # (n, 3, P)
            vel = np.empty((n, 3, n_points))
            for c in range(3):  # ω × X_p + Σ x_i × ω_i + translations, ω and the sums those of p's owner
                vel[:, c] = _cross(spin[0], spin[1], spin[2], (x[:, 0], x[:, 1], x[:, 2]), c) + drift[c]
            out.append(vel)
        ang = self._chain_sums(rate[None])[0]  # (n, J) Ω over each joint's chain, itself included
        above = ang - rate  # (n, J) Ω' above each joint
        longest = np.maximum(self.trans_norm[a], self.trans_norm[b])  # the lerp stays within the longer key
        speed = np.zeros((n, n_joints))
        if len(m):
            speed[:, m] = np.sqrt((step * step).sum(axis=1))
        above2 = above * above
        joint = self._chain_sums(((above2 * above2 * longest + 4.0 * above2 * above * speed) * self.not_root)[None])[0]
        ang2 = ang[:, self.owner] * ang[:, self.owner]
        bound = ang2 * ang2 * self.offset_norm + joint[:, self.owner]
        return out[0], out[1], bound

    def _chain_sums(self, values: np.ndarray) -> np.ndarray:
        """(C, n, J): for each joint, the sum of ``values`` (C, n, J) over its chain (root to itself), a running
        sum down the tree, parents first."""
        total = values.copy()
        for j, parent in self.links:
            total[:, :, j] += total[:, :, parent]
        return total

    def gap_bounds(self, starts: np.ndarray, gap: int, per_frame: bool = False) -> np.ndarray:
        """Lower bounds (n,) of E(a, a+gap) for a in ``starts``, frame by frame (or (n, gap−1) per frame):
        the tighter and costlier form of :meth:`moment_bounds` (O(gap · P) a segment)."""
        starts = np.asarray(starts, dtype=int)
        inner, n_points = gap - 1, self.n_points
        if inner < 1 or len(starts) == 0:
            return np.zeros((len(starts), max(inner, 0)) if per_frame else len(starts))
        basis = _basis(np.arange(1, gap) / gap, gap)  # (g−1, 4)
        i = np.arange(1, gap, dtype=float)
        remainder = ((i * (gap - i)) ** 2 / 24.0)[:, None, None]  # frames⁴
        out = np.zeros((len(starts), inner)) if per_frame else np.zeros(len(starts))
        per = max(1, CHUNK // (inner * n_points))
        with one_blas_thread():
            for s in range(0, len(starts), per):
                a = starts[s : s + per]
                n = len(a)
                va, vb, bound = self.velocities(a, a + gap)
                ends = np.stack((self.x[a], va, self.x[a + gap], vb)).reshape(4, -1)
                h = (basis @ ends).reshape(inner, n, 3, n_points)
                h -= self.x[a[None, :] + np.arange(1, gap)[:, None]]
                h *= h
                dist = h[:, :, 0] + h[:, :, 1]
                dist += h[:, :, 2]
                np.sqrt(dist, out=dist)  # (g−1, n, P)
                dist -= bound[None] * remainder
                np.maximum(dist, 0.0, out=dist)
                frame = dist.mean(axis=2).T  # (n, g−1)
                out[s : s + per] = frame if per_frame else frame.sum(axis=1)
        return out

    def moment_bounds(self, a: np.ndarray, b: np.ndarray, pieces: int = PIECES) -> np.ndarray:
        """Lower bounds (n,) of E(a, b) at O(pieces · P) a segment whatever its gap: the in-between frames
        cut into ``pieces`` runs, on each Σ_t max(0, ‖X_t − H(t)‖ − R(t)) ≥ ‖Σ_t X_t − Σ_t H(t)‖ − Σ_t R(t)
        (triangle inequality), with Σ_t X_t from prefix sums and Σ_t H(t), Σ_t R(t) in closed form."""
        a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
        g = (b - a).astype(float)
        cuts = 1 + np.round(np.arange(pieces + 1)[:, None] * (g - 1)[None, :] / pieces)  # (K+1, n) offsets
        return self.run_bounds(a, b, cuts.astype(int)).sum(axis=0)

    def run_bounds(self, a: np.ndarray, b: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        """(K, n) lower bounds of the error of segments (a, b) summed over each run of in-between frames
        a + cuts[k] ≤ t < a + cuts[k+1] (``cuts`` (K+1, n) offsets, non-decreasing, within 1 … b − a), by the
        moments of :meth:`moment_bounds`; a run may be empty (bound 0)."""
        a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
        out = np.zeros((len(cuts) - 1, len(a)))
        per = max(1, SEGMENTS * 100 // max(self.n_points, 1))
        with one_blas_thread():  # small products: OpenBLAS's spinning workers would only burn the other core
            for s in range(0, len(a), per):
                out[:, s : s + per] = self._moments(a[s : s + per], b[s : s + per], cuts[:, s : s + per])
        return out

    def _moments(self, a: np.ndarray, b: np.ndarray, cuts: np.ndarray) -> np.ndarray:
        g = (b - a).astype(float)
        va, vb, bound = self.velocities(a, b)
        ends = (self.x[a], va, self.x[b], vb)  # (n, 3, P) each
        out = np.empty((len(cuts) - 1, len(a)))
        sums = [_sums(c.astype(float)) for c in cuts]
        prefix = self.cum[a + cuts[0]]
        for k in range(len(cuts) - 1):
            following = self.cum[a + cuts[k + 1]]  # the run: offsets cuts[k] ≤ i < cuts[k+1]
            diff = following - prefix  # Σ X_t over the run, (n, 3, P)
            prefix = following
            for e, coef in zip(ends, _basis_sums(sums[k], sums[k + 1], g)):
                diff -= coef[:, None, None] * e
            dist = np.sqrt(diff[:, 0] ** 2 + diff[:, 1] ** 2 + diff[:, 2] ** 2)
            rem = _remainder_sums(sums[k], sums[k + 1], g)[:, None] * bound + self.rounding  # Σ R(t) over the run
            out[k] = np.maximum(dist - rem, 0.0).mean(axis=1)
        return out


def _basis(u: np.ndarray, gap) -> np.ndarray:
    """The cubic Hermite basis at fractions u (shape (..., 4)): h00, h10·g, h01, h11·g (velocities per frame)."""
    u2, u3 = u * u, u * u * u
    return np.stack((2 * u3 - 3 * u2 + 1, (u3 - 2 * u2 + u) * gap, 3 * u2 - 2 * u3, (u3 - u2) * gap), axis=-1)


def _sums(i: np.ndarray) -> tuple[np.ndarray, ...]:
    """Σ_{0 ≤ j < i} j^m for m = 0…4."""
    s1 = i * (i - 1) / 2
    return i, s1, (i - 1) * i * (2 * i - 1) / 6, s1 * s1, (i - 1) * i * (2 * i - 1) * (3 * i * i - 3 * i - 1) / 30


def _basis_sums(lo: tuple, hi: tuple, g: np.ndarray) -> np.ndarray:
    """(4, n) Σ over offsets i0 ≤ i < i1 of the Hermite basis at u = i/g (lo, hi: :func:`_sums` of i0, i1)."""
    s0, s1, s2, s3 = ((top - low) / g**m for m, (top, low) in enumerate(zip(hi[:4], lo[:4])))
    return np.stack((2 * s3 - 3 * s2 + s0, (s3 - 2 * s2 + s1) * g, 3 * s2 - 2 * s3, (s3 - s2) * g))


def _remainder_sums(lo: tuple, hi: tuple, g: np.ndarray) -> np.ndarray:
    """(n,) Σ over offsets i0 ≤ i < i1 of i²(g−i)²/24, the Hermite remainder's weight."""
    s2, s3, s4 = (hi[m] - lo[m] for m in (2, 3, 4))
    return (g * g * s2 - 2 * g * s3 + s4) / 24.0


def _cross(ux, uy, uz, v, c: int) -> np.ndarray:
    """Component c of u × v, u given by its components, v a sequence of three components."""
    u = (ux, uy, uz)
    i, j = (c + 1) % 3, (c + 2) % 3
    return u[i] * v[j] - u[j] * v[i]
