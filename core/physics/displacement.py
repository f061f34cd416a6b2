"""Displacement mapping (motion warping): smooth offsets added to a motion, which keeps its detail.

q(t) = q₀(t)·exp(v(t)/2) per joint (v a rotation vector in the joint's own frame, radians:
``quaternion.exp`` takes half-angle vectors) and p(t) = p₀(t) + v₀(t) on the animated
translations; v is a uniform cubic B-spline fitted through sparse constraint offsets.

The B-spline is hand-written (numpy only; Blender ships no scipy): control points every
``spacing`` frames, knots (k − 3)·spacing, so it covers frames 0 … T − 1 with
⌈(T − 1)/spacing⌉ + 3 control points. Fitting minimises Σ wₖ‖v(tₖ) − vₖ‖² + λ‖D²c‖² over the
control points c (D² the second difference): with keys at least ``spacing`` apart and a small
λ the curve passes through the keys, and where the keys leave control points free the
penalty picks the least-curved curve (it also makes the problem well posed).
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from .banded import Banded, banded_gram, banded_solve, difference_gram


def n_controls(n_frames: int, spacing: float) -> int:
    """Number of control points of a uniform cubic B-spline covering frames 0 … n_frames − 1."""
    return max(int(np.ceil(max(n_frames - 1, 0) / spacing - 1e-9)), 1) + 3


def knots(n_frames: int, spacing: float) -> np.ndarray:
    """The full knot vector (frames) of that spline, as scipy's BSpline expects it."""
    return (np.arange(n_controls(n_frames, spacing) + 4) - 3.0) * spacing


def bspline_rows(x: np.ndarray, n_ctrl: int, spacing: float, deriv: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sparse basis of a uniform cubic B-spline at frames x (N,): first control index (N,) and the
    four weights (N, 4) of controls index … index + 3, derivatives per frame^deriv."""
    u = np.asarray(x, dtype=float) / spacing
    i = np.clip(np.floor(u).astype(int), 0, n_ctrl - 4)
    s = u - i
    if deriv == 0:
        w = np.stack(((1 - s) ** 3, 3 * s**3 - 6 * s**2 + 4, -3 * s**3 + 3 * s**2 + 3 * s + 1, s**3), -1) / 6
    elif deriv == 1:
        w = np.stack((-((1 - s) ** 2), 3 * s**2 - 4 * s, -3 * s**2 + 2 * s + 1, s**2), -1) / (2 * spacing)
    elif deriv == 2:
        w = np.stack((1 - s, 3 * s - 2, -3 * s + 1, s), -1) / spacing**2
    else:
        raise ValueError("deriv must be 0, 1 or 2")
    return i, w


def bspline_basis(x: np.ndarray, n_ctrl: int, spacing: float, deriv: int = 0) -> np.ndarray:
    """(N, n_ctrl) dense basis matrix of a uniform cubic B-spline at frames x (N,), derivatives per frame^deriv."""
    i, w = bspline_rows(x, n_ctrl, spacing, deriv)
    out = np.zeros((len(i), n_ctrl))
    out[np.arange(len(i))[:, None], i[:, None] + np.arange(4)] = w
    return out


def fit_controls(
    keys: np.ndarray,
    values: np.ndarray,
    n_frames: int,
    spacing: float,
    smoothness: float = 1e-6,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Control points (n_ctrl, ...) of the penalised least-squares B-spline through ``values`` (K, ...) at frames ``keys`` (K,).

    smoothness: λ of the second-difference penalty, relative to the data term's mean diagonal.
    weights: (K,) per-key weights (default 1).
    The normal matrix BᵀWB + λ·DᵀD is banded (band 3: a key touches four neighbouring controls), made from the
    sparse rows and solved block by block for all the value's columns at once (:mod:`.banded`): dense, it grew
    with the square of the clip (72,000 frames at 120 fps, a control every 12 frames: 6,003 controls, 288 MB a
    matrix and several at once: 1,154 MB peak traced, 10.2 s of CPU; banded: 21.7 MB, 0.20 s).
    """
    keys = np.asarray(keys, dtype=float)
    values = np.asarray(values, dtype=float)
    n_ctrl = n_controls(n_frames, spacing)
    index, w = bspline_rows(keys, n_ctrl, spacing)
    weights = np.ones(len(keys)) if weights is None else np.asarray(weights, dtype=float)
    normal = banded_gram(index, w, n_ctrl, weights)
    scale = max(float(normal.rows[:, normal.band].sum()) / n_ctrl, 1e-12)  # the trace over n
    ridge = Banded(np.full((n_ctrl, 1), 1e-12 * scale), 0)
    lhs = normal + difference_gram(n_ctrl, 2) * (smoothness * scale) + ridge
    rhs = np.zeros((n_ctrl, int(np.prod(values.shape[1:], dtype=int))))
    np.add.at(rhs, index[:, None] + np.arange(4), (weights[:, None] * w)[..., None] * values.reshape(len(keys), 1, -1))
    return banded_solve(lhs, rhs, lhs.band).reshape(n_ctrl, *values.shape[1:])


def evaluate_rows(rows: tuple[np.ndarray, np.ndarray], controls: np.ndarray) -> np.ndarray:
    """The spline (..., N, D) at the frames of sparse rows (index (N,), weights (N, 4): :func:`bspline_rows`) for
    controls (..., n, D): the four terms of each frame summed in order, as a product with the dense
    :func:`bspline_basis` over all n controls sums them (its other terms are zeros), at 4/n of its cost."""
    index, w = rows
    out = w[:, 0, None] * controls[..., index, :]
    for k in range(1, 4):
        out += w[:, k, None] * controls[..., index + k, :]
    return out


def evaluate(controls: np.ndarray, n_frames: int, spacing: float, deriv: int = 0) -> np.ndarray:
    """The spline (or its derivative per frame^deriv) on frames 0 … n_frames − 1, shape (n_frames, ...), from the
    sparse rows (:func:`evaluate_rows`): a dense (n_frames, n) basis grew with the square of the clip (20,000
    frames, a control every 4: 800 MB)."""
    rows = bspline_rows(np.arange(n_frames), len(controls), spacing, deriv)
    return evaluate_rows(rows, controls.reshape(len(controls), -1)).reshape(n_frames, *controls.shape[1:])


def displacement_curve(
    keys: np.ndarray,
    values: np.ndarray,
    n_frames: int,
    spacing: float | None = None,
    smoothness: float = 1e-6,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Smooth offsets (n_frames, ...) through sparse constraint offsets ``values`` (K, ...) at frames ``keys``.

    spacing: control-point spacing in frames (default: the smallest gap between keys, at least 1).
    """
    keys = np.asarray(keys, dtype=float)
    if spacing is None:
        gaps = np.diff(np.unique(keys))
        spacing = float(max(gaps.min(), 1.0)) if len(gaps) else float(max(n_frames - 1, 1))
    return evaluate(fit_controls(keys, values, n_frames, spacing, smoothness, weights), n_frames, spacing)


def displace(motion: Motion, translation_offsets: np.ndarray, rotation_offsets: np.ndarray) -> Motion:
    """The warped motion: translations + offsets (T, J, 3) (scene units, parent frame),
    rotations · exp(v/2) with rotation vectors v (T, J, 3) in radians."""
    out = motion.copy()
    out.translations = motion.translations + translation_offsets
    out.rotations = quat.multiply(motion.rotations, quat.exp(0.5 * np.asarray(rotation_offsets)))
    return out


def displacement_between(source: Motion, target: Motion) -> tuple[np.ndarray, np.ndarray]:
    """Offsets that :func:`displace` ``source`` into ``target``: translations (T, J, 3), rotation vectors (T, J, 3)."""
    rot = 2.0 * quat.log(quat.multiply(quat.conjugate(source.rotations), target.rotations))
    return target.translations - source.translations, rot
