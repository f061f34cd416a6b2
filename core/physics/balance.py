"""Balance plan: a smooth shift of the body that brings the ZMP into the support polygon and the
joint torques under their limits, solved on the exact measures of the realised motion.

A per-frame filter cannot see the accelerations its own corrections cause, and at mocap rates
they dominate: shifting the body by δ(t) moves the ZMP by about δ − k·δ̈ (cart-table model,
k = m·h/F_n, which over a 0.5 s stance is several times δ) and changes every joint torque
through the same δ̈. So the shift is planned over the whole clip first, as a uniform cubic
B-spline (:mod:`.displacement`, controls every ``spacing`` frames, horizontal and optionally
vertical), by Gauss–Newton on the measures themselves: the caller's ``realise`` applies a
shift (the placement joint moved, the feet planted again) and ``measure`` gives the ZMP and
the joint torques of the result by inverse dynamics, so what the plan optimises is what the
metrics report:

    minimise Σ_active |Z − goal|² + w² Σ_active (|τ|/L − (1 − m_τ))² + λ_dev Σ_all |δ|²
             + λ_smooth |D² c|² + λ_jerk |D³ c|² + λ_free Σ_flight |k₀ δ̈|²
             + λ_unseen Σ_support |k₀ (δ̈ − S δ)|²

goal the projection of the ZMP onto the polygon shrunk by ``margin``; a frame (a joint-frame
for torques) becomes active for good once it comes within its margin, so a satisfied goal then
pins the frame instead of letting the next step push it back out. Without support δ must not
accelerate (k₀ δ̈ in length units, k₀ a CoM height over g), which keeps flight ballistic.

The measures take accelerations through a Savitzky–Golay window (S: its second derivative), which
barely answers a shift turning faster than the window: left alone, the plans turned the shift at
~11 Hz (2–3 mm wiggles) so that the measured ZMP moved where the true one (δ − k₀δ̈ for the shift's
share) did not. The last term charges the shift's exact acceleration (the B-spline's, analytic) that
the window does not see, in the same length units as the ZMP: on the first 3 s of CMU 131_01 (1.4×,
90 kg) with λ_unseen = 0.004 the solve's jerk ×3.9 → ×1.19 of the input's, and the ZMP re-measured
with a 0.1 s window inside on 1 % → 60 % of contact frames (input 56 %). (Since then, with planting easing a heel
raised on its toe and the final plan pulling back to the input, ×1.11 and 58 %.)

The Jacobians come from finite differences with colouring (as in sparse-Jacobian estimation):
a control moves only the frames within two spacings plus the measures' derivative window
(``reach``), so controls further apart than twice that are perturbed together and each frame's
change is credited to the one control of that colour near it. The caller may evaluate all the
perturbed plans of a Jacobian in batches (``measure_many``: one realisation and one analysis of
many copies of the clip, far less interpreter overhead per evaluation), and a Jacobian may be
reused for several steps (``SolverOptions.jacobian_every``): each step still evaluates the exact
measures of its trial, so the reuse costs convergence speed, never correctness of the merit.
Each step's normal equations are banded (a Jacobian row touches C neighbouring controls, the regularisers
couple neighbours): built from the colour-compressed rows (:class:`Rows`) and solved block by block
(:func:`.banded.banded_solve`).

The error metric (:class:`BalanceObjective`: residuals, weights, regularisers) is kept apart
from the algorithm that minimises it (:func:`gauss_newton`), as ACL keeps its error metric
apart from its compression algorithm; :func:`plan_balance` joins them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import quaternion as quat
from .banded import Banded, banded_gram, banded_solve, difference_gram, interleaved
from .derivatives import savgol
from .displacement import bspline_rows, evaluate, n_controls
from .progress import Progress, as_progress
from .support import Support


class Measures(NamedTuple):
    """What the plan constrains, per frame: zmp (T, 2) ground coordinates in scene units (NaN where
    undefined) and torques (T, L, 3) N·m of the L joints with limits."""

    zmp: np.ndarray
    torques: np.ndarray

    def flat(self) -> np.ndarray:
        """(T, 2 + 3L) with undefined ZMP rows as 0 (finite differences of them are not used)."""
        t = len(self.zmp)
        return np.concatenate((np.nan_to_num(self.zmp), self.torques.reshape(t, -1)), axis=1)

    def with_flat(self, flat: np.ndarray) -> Measures:
        """The measures held in ``flat`` (T, 2 + 3L), undefined where this ZMP is undefined."""
        zmp = np.where(np.isfinite(self.zmp), flat[:, :2], np.nan)
        return Measures(zmp, flat[:, 2:].reshape(self.torques.shape))


class BalancePlan(NamedTuple):
    """controls (n, D) of the shift's B-spline (ground coordinates, then up when D = 3, scene
    units); shift (T, D) per frame; zmp_active (T,) and torque_active (T, L) the constrained
    frames; iterations run; the measures of the realised plan; jacobian: the last colour-compressed
    Jacobian of the measures (index, jac: :func:`coloured_jacobian`), for a later plan to start from."""

    controls: np.ndarray
    shift: np.ndarray
    zmp_active: np.ndarray
    torque_active: np.ndarray
    iterations: int
    measures: Measures
    jacobian: tuple[np.ndarray, np.ndarray] | None = None


def coloured_jacobian(
    f: Callable[[np.ndarray], np.ndarray],
    controls: np.ndarray,
    spacing: float,
    reach: float,
    eps: float,
    many: Callable[[np.ndarray], Iterable[np.ndarray]] | None = None,
    base: np.ndarray | None = None,
    edge: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Finite-difference Jacobian of per-frame outputs f(controls) (T, M) with respect to B-spline
    controls (n, D) whose effect on a frame stays within ``reach`` frames of the control's peak.

    Returns index (T, C): the control of each colour that acts on each frame (−1: none), and
    jac (T, M, C, D): ∂f[t] / ∂controls[index[t, c], d]. Costs C·D + 1 evaluations of f, with
    C = ⌊2·reach / spacing⌋ + 1 colours; ``many`` (E, n, D) → the E values (T, M) (an array, or one at a time:
    each is written into the Jacobian as it comes), when given, makes them all in batches (the same values as f,
    one call per batch: far less overhead per evaluation);
    base: f(controls) when already known (one evaluation fewer); edge: the first and last ``edge``
    frames depend on the samples of the first and last full window (one-sided derivatives), so
    their reach is measured from the centre of that window (frame ``edge`` or T − 1 − ``edge``).
    """
    n, dims = controls.shape
    colours = min(int(2 * reach // spacing) + 1, n)
    moved = np.repeat(controls[None], colours * dims, axis=0)
    for c in range(colours):
        for d in range(dims):
            moved[c * dims + d, c::colours, d] += eps
    if base is None:
        base = f(controls)
    t = len(base)
    peak = np.arange(n) - 1.0  # control i of the uniform cubic B-spline peaks at frame (i − 1)·spacing
    u = np.clip(np.arange(t), min(edge, (t - 1) // 2), max(t - 1 - edge, (t - 1) // 2)) / spacing
    index = np.empty((t, colours), dtype=int)
    # each evaluation's difference written in place as it comes: no (C·D, T, M) stack of them besides the Jacobian
    # (on a long clip three such arrays at once were the balance plan's peak); laid out (C, D, T, M) in memory
    by_column = np.empty((colours, dims, *base.shape))
    for e, value in enumerate(many(moved) if many is not None else (f(m) for m in moved)):
        np.divide(value - base, eps, out=by_column[divmod(e, dims)])
    jac = by_column.transpose(2, 3, 0, 1)
    for c in range(colours):
        i = np.clip(np.round((u - peak[c]) / colours) * colours + c, c, None).astype(int)
        i = np.where(i >= n, i - colours, i)
        index[:, c] = np.where(np.abs(u - peak[i]) * spacing <= reach, i, -1)
    jac *= (index >= 0)[:, None, :, None]
    return index, jac


class Rows(NamedTuple):
    """Jacobian rows A (R, n·D) kept colour-compressed: columns (R, K) where each row's K = C·D stored values
    (R, K) sit, in a layout of n·D + D columns whose last D (a colour with no control, −1) are dropped; width n·D.
    Each row has at most K of its n·D entries non-zero, so AᵀA costs R·K² products instead of R·(n·D)²
    (CMU 01_01 from frame 800, 1,952 frames at 1.4×: the dense AᵀA took 2.3 s of the solve's ~20 s CPU,
    this 0.35 s; the same figures within float rounding)."""

    columns: np.ndarray
    values: np.ndarray
    width: int
    padded: int  # n·D + D: the width with the dropped colour's columns

    @classmethod
    def compressed(cls, index: np.ndarray, values: np.ndarray, n: int) -> Rows:
        """From index (R, C), the control of each colour a row depends on (−1: none), and values (R, C, D),
        the row's derivatives by those controls' D coordinates; n controls."""
        r, c, d = values.shape
        columns = np.where(index < 0, n, index)[:, :, None] * d + np.arange(d)
        return cls(columns.reshape(r, c * d), values.reshape(r, c * d), n * d, (n + 1) * d)

    def gram(self) -> Banded:
        """AᵀA (n·D, n·D), banded (:meth:`band`)."""
        band, cols, vals = self.band(), self.columns, self.values
        size = self.width * (2 * band + 1)
        at = cols[:, :, None] * (2 * band + 1) + (cols[:, None, :] - cols[:, :, None] + band)
        at[(cols[:, :, None] >= self.width) | (cols[:, None, :] >= self.width)] = (
            size  # the dropped colour's: binned apart
        )
        products = vals[:, :, None] * vals[:, None, :]
        return Banded(np.bincount(at.ravel(), products.ravel(), size + 1)[:size].reshape(self.width, -1), band)

    def times(self, x: np.ndarray) -> np.ndarray:
        """A·x (R,) for x (n·D,)."""
        padded = np.zeros(self.padded)
        padded[: self.width] = x
        return (self.values * padded[self.columns]).sum(axis=1)

    def band(self) -> int:
        """The largest distance between two stored columns of one row: AᵀA is zero farther off its diagonal."""
        valid = self.columns < self.width
        if not valid.any():
            return 0
        high = np.where(valid, self.columns, -1).max(axis=1)
        low = np.where(valid, self.columns, self.width).min(axis=1)
        return int(np.max(high - low, where=valid.any(axis=1), initial=0))

    def transposed_times(self, y: np.ndarray) -> np.ndarray:
        """Aᵀ·y (n·D,) for y (R,)."""
        return np.bincount(self.columns.ravel(), (self.values * y[:, None]).ravel(), self.width)[: self.width]


def unseen_gram(t: int, n: int, spacing: float, half: int, rows: np.ndarray, scale: float, block: int = 256) -> Banded:
    """UᵀU (n, n), U = scale·(B″ − S B) on the frames ``rows`` (T,) bool: the shift's exact acceleration the measures'
    Savitzky–Golay window (S, half-width ``half``) does not see, per control (B: the B-spline basis over T frames,
    n controls every ``spacing`` frames). Made ``block`` frames at a time, each from the basis on those frames and
    one window either side (S is a window's sum: the same values as on the whole clip), so no (T, n) basis is formed."""
    band = int(2 * half // spacing) + 5  # a row of U spans the controls of 2·half + 1 frames
    out = Banded.zeros(n, band)
    w = 2 * half + 1
    for t0 in range(0, t, block):
        t1 = min(t0 + block, t)
        lo, hi = max(t0 - half, 0), min(t1 + half, t)
        lo = max(min(lo, hi - w), 0)
        index, values = bspline_rows(np.arange(lo, hi), n, spacing)
        c0, c1 = int(index.min()), int(index.max()) + 4
        basis = np.zeros((hi - lo, c1 - c0))
        basis[np.arange(hi - lo)[:, None], index[:, None] - c0 + np.arange(4)] = values
        index, values = bspline_rows(np.arange(t0, t1), n, spacing, 2)
        exact = np.zeros((t1 - t0, c1 - c0))
        exact[np.arange(t1 - t0)[:, None], index[:, None] - c0 + np.arange(4)] = values
        u = (exact - savgol(basis, half, 3, 2)[t0 - lo : t1 - lo])[rows[t0:t1]] * scale
        local = Banded.from_dense(u.T @ u, band)
        out.rows[c0:c1] += local.rows
    return out


def _predict(index: np.ndarray, jac: np.ndarray, delta: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Outputs (T, M) after moving the controls by delta (n, D), on the linear model."""
    padded = np.concatenate((delta, np.zeros((1, delta.shape[1]))))
    return base + np.einsum("tmcd,tcd->tm", jac, padded[index])


@dataclass(frozen=True)
class PlanGoals:
    """What the plan asks for (the objective's terms and weights; module notes).

    margin: how far inside the polygon the ZMP should stay, scene units; balance: constrain the
    ZMP at all; torque_margin: torques count above (1 − torque_margin) of their limit;
    torque_weight: scene units per unit of |τ|/limit over that (0: balance only), a scalar or one per
    joint-frame (T, L) (:meth:`BalanceObjective.torque_weights`); deviation:
    weight of |δ|² per frame, a scalar, one per dimension (D,) or one per frame and dimension (T, D); smoothness: weight of the
    controls' second differences; free_gain: k₀ in s² for frames without support; jerk: weight of
    the controls' third differences (the shift's jerk, which adds to the motion's); unseen: weight of
    |k₀ (δ̈ − S δ)|² on supported frames, the shift's acceleration that the measures' derivative window
    (half width ``window`` frames, cubic Savitzky–Golay; 0: none) does not see (module notes); toward:
    (T, D) the shift the deviation term measures from (None: zero), scene units along the shift's axes —
    the final plan's is the way back to the performance, so its |δ − toward|² is the deviation it adds or removes.
    """

    margin: float
    balance: bool = True
    torque_margin: float = 0.05
    torque_weight: float | np.ndarray = 0.0
    deviation: float | tuple[float, ...] | np.ndarray = 1e-2
    smoothness: float = 1e-3
    free_gain: float = 0.0
    jerk: float = 0.0
    unseen: float = 0.0
    window: int = 0
    toward: np.ndarray | None = None


@dataclass(frozen=True)
class SolverOptions:
    """How the plan is solved: iterations: Gauss–Newton steps (each costs one evaluation, or more
    when the line search backtracks, plus C·D for a fresh Jacobian, see :func:`coloured_jacobian`);
    jacobian_every: steps per fresh Jacobian (the steps between reuse the last one with the new
    residuals and active sets: a chord method, whose line search still measures exactly);
    inner: active-set rounds per step on the linear model; eps: finite-difference step, scene
    units; backtracks: halvings of a step before giving up; batch_frames: frames per batched
    evaluation of the Jacobian's columns (when the caller can batch)."""

    iterations: int = 3
    inner: int = 5
    eps: float = 1e-3
    backtracks: int = 4
    batch_frames: int = 2048
    jacobian_every: int = 1


class BalanceObjective:
    """The plan's error metric (module notes), apart from how it is minimised: which frames
    violate a goal, the residuals of the active ones and their linearisation, the quadratic
    regulariser (|δ|², curvature, flight acceleration, acceleration the measures' window misses) and the merit that sums them.

    support: the clip's polygons; limits (L,) N·m of the measured torques; n controls of
    dimension ``dims`` every ``spacing`` frames; fps: frame rate (flight acceleration).
    """

    def __init__(
        self, support: Support, limits: np.ndarray, goals: PlanGoals, spacing: float, fps: float, dims: int = 2
    ) -> None:
        self.support, self.goals, self.dims = support, goals, dims
        self.limits = np.asarray(limits, dtype=float)
        t = len(support.flags)
        self.n = n = n_controls(t, spacing)
        index, values = bspline_rows(np.arange(t), n, spacing)  # the basis, sparse: no (T, n) matrix
        weights = np.broadcast_to(np.asarray(goals.deviation, dtype=float), (t, dims))
        self.linear = np.zeros(n * dims)  # x·reg·x − 2·linear·x (+ a constant) is the regularisers' share
        shared = difference_gram(n, 2) * goals.smoothness + difference_gram(n, 3) * goals.jerk
        shared.rows[:, shared.band] += 1e-12
        free = ~support.any
        if free.any() and goals.free_gain > 0:
            at, acc = bspline_rows(np.flatnonzero(free), n, spacing, 2)
            shared = shared + banded_gram(at, acc * (goals.free_gain * fps**2), n)
        if goals.unseen > 0 and goals.window > 0 and (~free).any():  # δ̈ exact − δ̈ as the measures see it
            scale = np.sqrt(goals.unseen) * goals.free_gain * fps**2
            shared = shared + unseen_gram(t, n, spacing, goals.window, ~free, scale)
        per_dim = []
        for d in range(dims):  # Σ_t w[t, d] |δ_d(t) − toward_d(t)|²
            per_dim.append(banded_gram(index, values, n, weights[:, d]) + shared)
            if goals.toward is not None:
                weighted = (weights[:, d] * goals.toward[:, d])[:, None] * values
                self.linear[d::dims] = np.bincount((index[:, None] + np.arange(4)).ravel(), weighted.ravel(), n)
        self.regulariser = interleaved(per_dim)  # (n·D, n·D) banded: x·reg·x is the regularisers' share of the merit
        self.band = self.regulariser.nonzero_band()  # reg is zero farther off its diagonal

    def torque_weights(self, shape: tuple[int, int]) -> np.ndarray:
        """The torque weight of every joint-frame (T, L)."""
        return np.broadcast_to(np.asarray(self.goals.torque_weight, dtype=float), shape)

    def violations(self, m: Measures) -> tuple[np.ndarray, np.ndarray]:
        """Frames whose ZMP is within the margin of the boundary or out (T,), joint-frames over
        1 − torque_margin of their limit (T, L)."""
        g, sup = self.goals, self.support
        defined = sup.any & np.all(np.isfinite(m.zmp), axis=-1)
        _, signed, _ = sup.query(np.where(defined[:, None], m.zmp, np.nan))
        ratio = quat.length(m.torques) / self.limits
        weights = self.torque_weights(ratio.shape)
        return defined & (signed > -g.margin) & g.balance, (ratio > 1.0 - g.torque_margin) & (weights > 0)

    def merit(self, controls: np.ndarray, m: Measures, active: tuple[np.ndarray, np.ndarray]) -> float:
        """The objective on the active sets (T,), (T, L): squared residuals plus regularisers."""
        za, ta = active
        g = self.goals
        f = np.flatnonzero(za)
        r = np.zeros_like(m.zmp)
        r[f] = m.zmp[f] - self.support.project(m.zmp[f], g.margin, f)
        excess = np.maximum(quat.length(m.torques) / self.limits - (1.0 - g.torque_margin), 0.0)
        x = controls.ravel()
        weights = self.torque_weights(excess.shape)
        reg = x @ self.regulariser @ x - 2.0 * self.linear @ x
        return float(np.nansum(r**2) + ((weights[ta] * excess[ta]) ** 2).sum() + reg)

    def linearise(
        self, m: Measures, index: np.ndarray, jac: np.ndarray, active: tuple[np.ndarray, np.ndarray]
    ) -> tuple[Rows, np.ndarray]:
        """Jacobian rows (R, n·D, colour-compressed: :class:`Rows`) and values (R,) of the active
        residuals (goals held where they are now), from the measures' colour-compressed Jacobian
        (:func:`coloured_jacobian`)."""
        za, ta = active
        g, n, limits = self.goals, self.n, self.limits
        at, rows, rhs = [], [], []
        f = np.flatnonzero(za & np.isfinite(m.zmp).all(axis=1))  # a frame the shift took off the floor: no row
        goal = self.support.project(m.zmp[f], g.margin, f)
        for k in range(2):
            at.append(index[f]), rows.append(jac[f, k])
            rhs.append(m.zmp[f, k] - goal[:, k])
        tf, tj = np.nonzero(ta)
        if len(tf):
            tau = m.torques[tf, tj]
            norm = quat.length(tau)
            jt = jac[:, 2:].reshape(len(m.zmp), len(limits), 3, *jac.shape[2:])[tf, tj]  # (R, 3, C, D)
            weight = self.torque_weights(ta.shape)[tf, tj]
            w = weight / limits[tj]
            jt = np.einsum("rx,rxcd->rcd", tau / np.maximum(norm, 1e-12)[:, None], jt) * w[:, None, None]
            at.append(index[tf]), rows.append(jt)
            rhs.append(np.maximum(w * norm - weight * (1.0 - g.torque_margin), 0.0))
        return Rows.compressed(np.concatenate(at), np.concatenate(rows), n), np.concatenate(rhs)


def gauss_newton(
    objective: BalanceObjective,
    evaluate_measures: Callable[[np.ndarray], Measures],
    spacing: float,
    reach: float,
    options: SolverOptions,
    progress: Callable[[float], None] | Progress | None = None,
    evaluate_many: Callable[[np.ndarray], list[Measures]] | None = None,
    edge: int = 0,
    jacobian: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, Measures, tuple[np.ndarray, np.ndarray], int, tuple[np.ndarray, np.ndarray] | None]:
    """Minimise ``objective`` over the controls (n, D) from zero: Gauss–Newton steps on coloured
    finite-difference Jacobians, active sets that only grow (first from the measures, then from
    what the linear model says a step would push out), a backtracking line search on the merit.

    evaluate_measures(controls) → :class:`Measures`; spacing, reach, edge: see :func:`coloured_jacobian`;
    evaluate_many(controls (E, n, D)) → E :class:`Measures`, the same values in one call (batches of
    ``options.batch_frames`` frames), for the Jacobians.
    progress: called with the share done after every evaluation (the shares only grow), so a
    callback that raises stops the solve within one evaluation of the clip.
    jacobian: (index, jac) of :func:`coloured_jacobian` from an earlier plan of a nearby motion (same
    frames and controls), used in place of a fresh one until ``options.jacobian_every`` steps are
    done (a chord method: every step still measures its trial exactly).
    Returns (controls, their measures, active sets, iterations run, the last Jacobian).
    """
    n, dims = objective.n, objective.dims
    report = as_progress(progress)
    expected = min(int(2 * reach // spacing) + 1, n) * dims + 2  # evaluations per iteration
    counter = [0, 0]  # iteration, evaluations in it

    def measured(controls: np.ndarray) -> Measures:
        m = evaluate_measures(controls)
        measured_report()
        return m

    def flat(controls: np.ndarray) -> np.ndarray:
        return measured(controls).flat()

    def flat_many(controls: np.ndarray) -> Iterator[np.ndarray]:
        """Each plan's :meth:`Measures.flat`, batch by batch (a batch's alone held at once)."""
        size = max(1, options.batch_frames // max(len(current.zmp), 1))
        for start in range(0, len(controls), size):
            ms = evaluate_many(controls[start : start + size])
            counter[1] += len(ms) - 1
            measured_report()
            yield from (m.flat() for m in ms)

    def measured_report() -> None:
        counter[1] += 1
        share = min(counter[1] / expected, 0.99)
        report((max(counter[0] - 1, 0) + share) / options.iterations)

    def grown(active, new):
        return tuple(a | b for a, b in zip(active, new))

    controls = np.zeros((n, dims))
    index, jac = jacobian if jacobian is not None else (None, None)
    current = measured(controls)
    active = (np.zeros(len(current.zmp), dtype=bool), np.zeros(current.torques.shape[:2], dtype=bool))
    done = 0
    for done in range(1, options.iterations + 1):
        counter[:] = [done, 0]
        active = grown(active, objective.violations(current))
        if not any(a.any() for a in active):
            break
        fresh = (done - 1) % max(options.jacobian_every, 1) == 0 and not (jacobian is not None and done == 1)
        if fresh or jac is None:  # else the last Jacobian, at the new residuals
            many = flat_many if evaluate_many is not None else None
            index, jac = coloured_jacobian(flat, controls, spacing, reach, options.eps, many, current.flat(), edge)
        for _ in range(options.inner):  # active sets grown on the linear model: frames the step would push out
            a, b = objective.linearise(current, index, jac, active)
            report.tick()  # each of these is about one evaluation's work on a long clip
            x = controls.ravel()
            normal = a.gram() + objective.regulariser
            report.tick()
            rhs = a.transposed_times(a.times(x) - b) + objective.linear
            target = banded_solve(normal, rhs, max(a.band(), objective.band)).reshape(n, dims)
            report.tick()
            predicted = current.with_flat(_predict(index, jac, target - controls, current.flat()))
            new = objective.violations(predicted)
            if not any((v & ~was).any() for v, was in zip(new, active)):
                break
            active = grown(active, new)
        before = objective.merit(controls, current, active)
        step = 1.0
        for _ in range(options.backtracks):  # the measures are not linear in the shift
            trial = controls + step * (target - controls)
            m = measured(trial)
            if objective.merit(trial, m, active) < before:
                controls, current = trial, m
                break
            step *= 0.5
        else:
            break
        report(done / options.iterations)
    report(1.0)
    return controls, current, active, done, (None if jac is None else (index, jac))


def plan_balance(
    realise: Callable[[np.ndarray], object],
    measure: Callable[[object], Measures],
    support: Support,
    limits: np.ndarray,
    spacing: float,
    reach: float,
    goals: PlanGoals,
    solver: SolverOptions | None = None,
    fps: float = 120.0,
    dims: int = 2,
    progress: Callable[[float], None] | Progress | None = None,
    measure_many: Callable[[np.ndarray], list[Measures]] | None = None,
    edge: int = 0,
    jacobian: tuple[np.ndarray, np.ndarray] | None = None,
) -> BalancePlan:
    """The :class:`BalancePlan` of a clip (module notes): :class:`BalanceObjective` minimised by
    :func:`gauss_newton`.

    realise(controls (n, D)) → motion; measure(motion) → :class:`Measures`; support: the
    clip's polygons (the feet stay planted, so they do not move with the shift); limits (L,)
    N·m of the measured torques; spacing: control spacing in frames; reach: how far in frames
    a control's effect spreads past its peak (two spacings plus the derivative window); edge: the
    derivative window's half (:func:`coloured_jacobian`: the clip's first and last frames reach further);
    measure_many(controls (E, n, D)) → E :class:`Measures`: realise and measure a batch at once
    (optional, for the Jacobians; see :func:`gauss_newton`); jacobian: a nearby plan's, to start from
    (:attr:`BalancePlan.jacobian`, see :func:`gauss_newton`).
    """
    objective = BalanceObjective(support, limits, goals, spacing, fps, dims)
    controls, current, (zmp_active, torque_active), done, last = gauss_newton(
        objective,
        lambda c: measure(realise(c)),
        spacing,
        reach,
        solver or SolverOptions(),
        progress,
        measure_many,
        edge,
        jacobian,
    )
    shift = evaluate(controls, len(support.flags), spacing)
    return BalancePlan(controls, shift, zmp_active, torque_active, done, current, last)
