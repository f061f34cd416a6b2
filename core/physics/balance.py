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
             + λ_smooth |D² c|² + λ_free Σ_flight |k₀ δ̈|²

goal the projection of the ZMP onto the polygon shrunk by ``margin``; a frame (a joint-frame
for torques) becomes active for good once it comes within its margin, so a satisfied goal then
pins the frame instead of letting the next step push it back out. Without support δ must not
accelerate (k₀ δ̈ in length units, k₀ a CoM height over g), which keeps flight ballistic.

The Jacobians come from finite differences with colouring (as in sparse-Jacobian estimation):
a control moves only the frames within two spacings plus the measures' derivative window
(``reach``), so controls further apart than twice that are perturbed together and each frame's
change is credited to the one control of that colour near it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .displacement import bspline_basis, evaluate, n_controls, second_difference_penalty
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


class BalancePlan(NamedTuple):
    """controls (n, D) of the shift's B-spline (ground coordinates, then up when D = 3, scene
    units); shift (T, D) per frame; zmp_active (T,) and torque_active (T, L) the constrained
    frames; iterations run; the measures of the realised plan."""

    controls: np.ndarray
    shift: np.ndarray
    zmp_active: np.ndarray
    torque_active: np.ndarray
    iterations: int
    measures: Measures


def coloured_jacobian(
    f: Callable[[np.ndarray], np.ndarray], controls: np.ndarray, spacing: float, reach: float, eps: float
) -> tuple[np.ndarray, np.ndarray]:
    """Finite-difference Jacobian of per-frame outputs f(controls) (T, M) with respect to B-spline
    controls (n, D) whose effect on a frame stays within ``reach`` frames of the control's peak.

    Returns index (T, C): the control of each colour that acts on each frame (−1: none), and
    jac (T, M, C, D): ∂f[t] / ∂controls[index[t, c], d]. Costs C·D + 1 evaluations of f, with
    C = ⌊2·reach / spacing⌋ + 1 colours.
    """
    n, dims = controls.shape
    colours = min(int(2 * reach // spacing) + 1, n)
    base = f(controls)
    t = len(base)
    peak = np.arange(n) - 1.0  # control i of the uniform cubic B-spline peaks at frame (i − 1)·spacing
    u = np.arange(t) / spacing
    index = np.empty((t, colours), dtype=int)
    jac = np.zeros((t, base.shape[1], colours, dims))
    for c in range(colours):
        i = np.clip(np.round((u - peak[c]) / colours) * colours + c, c, None).astype(int)
        i = np.where(i >= n, i - colours, i)
        index[:, c] = np.where(np.abs(u - peak[i]) * spacing <= reach, i, -1)
        for d in range(dims):
            moved = controls.copy()
            moved[c::colours, d] += eps
            jac[:, :, c, d] = (f(moved) - base) / eps
    jac *= (index >= 0)[:, None, :, None]
    return index, jac


def _rows(index: np.ndarray, jac: np.ndarray, n: int) -> np.ndarray:
    """Dense Jacobian rows (R, n·D) from colour-compressed ones: index (R, C), jac (R, C, D)."""
    r, c, d = jac.shape
    out = np.zeros((r, n + 1, d))
    out[np.arange(r)[:, None], np.where(index < 0, n, index)] = jac
    return out[:, :n].reshape(r, n * d)


def _predict(index: np.ndarray, jac: np.ndarray, delta: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Outputs (T, M) after moving the controls by delta (n, D), on the linear model."""
    padded = np.concatenate((delta, np.zeros((1, delta.shape[1]))))
    return base + np.einsum("tmcd,tcd->tm", jac, padded[index])


def plan_balance(
    realise: Callable[[np.ndarray], object],
    measure: Callable[[object], Measures],
    support: Support,
    limits: np.ndarray,
    spacing: float,
    reach: float,
    margin: float,
    dims: int = 2,
    balance: bool = True,
    torque_margin: float = 0.05,
    torque_weight: float = 0.0,
    deviation: float | np.ndarray = 1e-2,
    smoothness: float = 1e-3,
    free_gain: float = 0.0,
    fps: float = 120.0,
    iterations: int = 3,
    inner: int = 5,
    eps: float = 1e-3,
    progress: Callable[[float], None] | None = None,
) -> BalancePlan:
    """The :class:`BalancePlan` of a clip (module notes).

    realise(controls (n, D)) → motion; measure(motion) → :class:`Measures`; support: the
    clip's polygons (the feet stay planted, so they do not move with the shift); limits (L,)
    N·m of the measured torques; spacing: control spacing in frames; reach: how far in frames
    a control's effect spreads past its peak (two spacings plus the derivative window);
    margin: how far inside the polygon the ZMP should stay (scene units); balance: constrain
    the ZMP at all; torque_weight: scene
    units per unit of |τ|/limit above 1 − torque_margin (0: balance only); deviation: weight
    of |δ|² per frame, a scalar or one per dimension; free_gain: k₀ in s² for frames without
    support; iterations: Gauss–Newton steps (each costs C·D + 2 evaluations, see
    :func:`coloured_jacobian`); inner: active-set rounds per step on the linear model;
    eps: finite-difference step, scene units.
    """
    t = len(support.flags)
    n = n_controls(t, spacing)
    basis = bspline_basis(np.arange(t), n, spacing)
    weights = np.broadcast_to(np.asarray(deviation, dtype=float), (dims,))
    reg = np.kron(basis.T @ basis, np.diag(weights)) + np.kron(
        smoothness * second_difference_penalty(n) + 1e-12 * np.eye(n), np.eye(dims)
    )
    free = ~support.any
    if free.any() and free_gain > 0:
        acc = bspline_basis(np.flatnonzero(free), n, spacing, 2) * (free_gain * fps**2)
        reg += np.kron(acc.T @ acc, np.eye(dims))
    limits = np.asarray(limits, dtype=float)

    def flat(controls: np.ndarray) -> np.ndarray:
        return measure(realise(controls)).flat()

    def violations(zmp: np.ndarray, torques: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Frames whose ZMP is within the margin of the boundary or out (T,), joint-frames over
        1 − torque_margin of their limit (T, L)."""
        defined = support.any & np.all(np.isfinite(zmp), axis=-1)
        _, signed, _ = support.query(np.where(defined[:, None], zmp, np.nan))
        ratio = np.linalg.norm(torques, axis=-1) / limits
        return defined & (signed > -margin) & balance, (ratio > 1.0 - torque_margin) & (torque_weight > 0)

    def merit(controls: np.ndarray, m: Measures, za: np.ndarray, ta: np.ndarray) -> float:
        """The objective (module notes) on the active sets za (T,), ta (T, L)."""
        z = np.where(za[:, None], m.zmp, np.nan)
        r = np.where(za[:, None], z - support.project(z, margin), 0.0)
        excess = np.maximum(np.linalg.norm(m.torques, axis=-1) / limits - (1.0 - torque_margin), 0.0)
        x = controls.ravel()
        return float(np.nansum(r**2) + ((torque_weight * excess[ta]) ** 2).sum() + x @ reg @ x)

    def step_to(controls: np.ndarray, m: Measures, index, jac, za, ta) -> np.ndarray:
        """Gauss–Newton target controls for the active sets (goals held where they are now)."""
        x = controls.ravel()
        rows, rhs = [], []
        f = np.flatnonzero(za)
        goal = support.project(np.where(za[:, None], m.zmp, np.nan), margin)[f]
        for k in range(2):
            rows.append(_rows(index[f], jac[f, k], n))
            rhs.append(m.zmp[f, k] - goal[:, k])
        tf, tj = np.nonzero(ta)
        if len(tf):
            tau = m.torques[tf, tj]
            norm = np.linalg.norm(tau, axis=-1)
            jt = jac[:, 2:].reshape(t, len(limits), 3, *jac.shape[2:])[tf, tj]  # (R, 3, C, D)
            w = torque_weight / limits[tj]
            jt = np.einsum("rx,rxcd->rcd", tau / np.maximum(norm, 1e-12)[:, None], jt) * w[:, None, None]
            rows.append(_rows(index[tf], jt, n))
            rhs.append(np.maximum(w * norm - torque_weight * (1.0 - torque_margin), 0.0))
        a, b = np.concatenate(rows), np.concatenate(rhs)
        return np.linalg.solve(a.T @ a + reg, a.T @ (a @ x - b)).reshape(n, dims)

    controls = np.zeros((n, dims))
    current = measure(realise(controls))
    zmp_active = np.zeros(t, dtype=bool)
    torque_active = np.zeros((t, len(limits)), dtype=bool)
    done = 0
    for done in range(1, iterations + 1):
        za, ta = violations(current.zmp, current.torques)
        zmp_active |= za
        torque_active |= ta
        if not zmp_active.any() and not torque_active.any():
            break
        index, jac = coloured_jacobian(flat, controls, spacing, reach, eps)
        for _ in range(inner):  # active sets grown on the linear model: frames the step would push out
            target = step_to(controls, current, index, jac, zmp_active, torque_active)
            change = _predict(index, jac, target - controls, current.flat())
            za, ta = violations(np.where(np.isfinite(current.zmp), change[:, :2], np.nan),
                                change[:, 2:].reshape(current.torques.shape))  # fmt: skip
            if not (za & ~zmp_active).any() and not (ta & ~torque_active).any():
                break
            zmp_active |= za
            torque_active |= ta
        before = merit(controls, current, zmp_active, torque_active)
        step = 1.0
        for _ in range(4):  # backtracking: the measures are not linear in the shift
            trial = controls + step * (target - controls)
            m = measure(realise(trial))
            if merit(trial, m, zmp_active, torque_active) < before:
                controls, current = trial, m
                break
            step *= 0.5
        else:
            break
        if progress is not None:
            progress(done / iterations)
    shift = evaluate(controls, t, spacing)
    return BalancePlan(controls, shift, zmp_active, torque_active, done, current)
