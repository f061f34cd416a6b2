"""Balance plan: a smooth horizontal shift of the body that brings the ZMP into the support polygon.

A per-frame filter cannot see the accelerations its own corrections will cause, and at mocap
rates they dominate: shifting the body by δ(t) moves the ZMP by δ − k·δ̈ with
k = m (C·u − h0) / F_n (cart-table model; exact for a rigid horizontal shift of the whole
body, C the CoM, h0 the ground height, F_n the vertical ground force). A correction over a
0.5 s stance is amplified several times by the k·δ̈ term, with the opposite sign at its
edges. So the shift is planned over the whole clip first, as a uniform cubic B-spline
displacement (:mod:`.displacement`), by iterated least squares:

    minimise Σ_active |Z + δ − k δ̈ − goal|² + λ_dev Σ_all |δ|² + λ_smooth |D² c|²

where goal is the projection of the current planned ZMP onto the polygon shrunk by
``margin``, and a frame becomes active (for good) once its planned ZMP comes within the
margin of the boundary. Frames without support or without a defined ZMP are free. δ̈ is
measured with the same Savitzky–Golay filter as the ZMP itself, so that what the plan
predicts is what the metric will measure.
The unscented Kalman filter then realises the planned CoM in the pose (its ZMP measurement
uses this model), with the feet held on their anchors.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .derivatives import savgol
from .displacement import bspline_basis, n_controls, second_difference_penalty
from .support import Support


class BalancePlan(NamedTuple):
    """delta (T, 2) horizontal shift in ground coordinates and its second derivative delta_acc
    (T, 2) per s²; planned ZMP (T, 2) (NaN where undefined); active (T,) frames constrained;
    all in scene units."""

    delta: np.ndarray
    delta_acc: np.ndarray
    zmp: np.ndarray
    active: np.ndarray


def plan_balance(
    zmp2: np.ndarray,
    k: np.ndarray,
    support: Support,
    fps: float,
    spacing: float,
    margin: float,
    smooth_half: int = 1,
    smooth_order: int = 2,
    iterations: int = 10,
    deviation: float = 1e-2,
    smoothness: float = 1e-3,
    free_accel: float = 1.0,
) -> BalancePlan:
    """The :class:`BalancePlan` of a clip.

    zmp2: (T, 2) source ZMP in ground coordinates (NaN where undefined); k: (T,) s², the
    cart-table gain; support: the clip's polygons; spacing: control spacing in frames;
    margin: how far inside the polygon the planned ZMP should stay (scene units);
    smooth_half, smooth_order: the Savitzky–Golay window that measures accelerations (the
    plan's δ̈ is measured the same way, so plan and measurement agree); free_accel: weight of
    |k₀ δ̈|² on frames without support (k₀ the median gain), which keeps δ unaccelerated in flight
    so that it does not bend the ballistic path.
    """
    t = len(zmp2)
    valid = support.any & np.all(np.isfinite(zmp2), axis=-1)
    z = np.where(valid[:, None], zmp2, 0.0)
    n = n_controls(t, spacing)
    basis = bspline_basis(np.arange(t), n, spacing)
    basis_acc = savgol(basis, smooth_half, smooth_order, 2, 1.0 / fps)
    a = basis - np.where(valid, k, 0.0)[:, None] * basis_acc
    base = deviation * (basis.T @ basis) + smoothness * second_difference_penalty(n) + 1e-12 * np.eye(n)
    free = ~support.any  # in flight δ must stay ballistic-neutral: straight, unaccelerated
    if free.any():
        k0 = float(np.median(k[valid])) if valid.any() else 0.1
        base += free_accel * k0**2 * basis_acc[free].T @ basis_acc[free]
    controls = np.zeros((n, 2))
    active = np.zeros(t, dtype=bool)
    for _ in range(iterations):
        planned = z + a @ controls
        _, signed, _ = support.query(np.where(valid[:, None], planned, np.nan))
        active |= valid & (signed > -margin)
        if not active.any():
            break
        goal = support.project(planned, margin)
        aw = a[active]
        new = np.linalg.solve(base + aw.T @ aw, aw.T @ (goal - z)[active])
        change = np.abs(new - controls).max()
        controls = new
        if change < 1e-3 * margin:
            break
    delta, delta_acc = basis @ controls, basis_acc @ controls
    planned = np.where(valid[:, None], z + delta - k[:, None] * delta_acc, np.nan)
    return BalancePlan(delta, delta_acc, planned, active)


def cart_table_gain(com_height: np.ndarray, vertical_force: np.ndarray, mass: float, weight: float) -> np.ndarray:
    """k = m (C·u − h0) / F_n (T,) in s², F_n floored at half the body weight (near take-off and
    landing the measured force drops and k would blow up; the ZMP there is barely defined)."""
    return mass * com_height / np.maximum(vertical_force, 0.5 * weight)
