"""Banded matrices (:mod:`core.physics.banded`): built from sparse rows, solved block by block, and the final
displacement fit (:func:`core.physics.displacement.fit_controls`) on them, against dense references built here."""

import tracemalloc

import numpy as np
import pytest
from scipy.interpolate import BSpline
from scipy.linalg import solveh_banded

from core.physics.banded import Banded, banded_gram, banded_solve, difference_gram, interleaved
from core.physics.displacement import bspline_rows, fit_controls, knots, n_controls


def _spd_banded(n: int, band: int, seed: int) -> np.ndarray:
    """A random symmetric positive-definite (n, n) with every diagonal up to ``band`` off the main one filled (the
    outermost too: the block boundary's case) and none beyond, positive definite by diagonal dominance."""
    rng = np.random.default_rng(seed)
    a = np.zeros((n, n))
    for k in range(1, band + 1):
        off = rng.normal(size=n - k)
        a += np.diag(off, k) + np.diag(off, -k)
    return a + np.diag(np.abs(a).sum(axis=1) + rng.uniform(0.1, 1.0, n))


def _lower_form(a: np.ndarray, band: int) -> np.ndarray:
    """``a`` in LAPACK's lower banded storage (band + 1, n), for scipy's solveh_banded."""
    n = len(a)
    out = np.zeros((band + 1, n))
    for k in range(band + 1):
        out[k, : n - k] = np.diag(a, -k)
    return out


@pytest.mark.parametrize("n, band", [(982, 19), (1176, 19), (40, 3)])
def test_banded_solve_equals_the_dense_solve(n, band):
    """A symmetric positive-definite system zero beyond ``band`` off its diagonal (a whole-clip plan's size and
    band, and one small enough to go to the dense solve), against numpy's dense LU solve."""
    a = _spd_banded(n, band, n)
    b = np.random.default_rng(n + 1).normal(size=n)
    x = banded_solve(a, b, band)
    expected = np.linalg.solve(a, b)
    assert np.abs(x - expected).max() <= 1e-9 * np.abs(expected).max()
    assert np.abs(a @ x - b).max() <= 1e-9 * np.abs(b).max()


@pytest.mark.parametrize("n, band, k", [(982, 19, 5), (1501, 3, 30), (40, 3, 4), (700, 3, 1)])
def test_banded_solve_takes_many_right_hand_sides(n, band, k):
    """b (N, K): the K solutions at once, against scipy's banded Cholesky solve (LAPACK) and numpy's dense LU, and
    each column as its own (N,) solve gives it; blocked sizes (N²·band over 2·10⁶: a plan's band 19, the final
    fit's band 3) and ones small enough for the dense solve."""
    a = _spd_banded(n, band, n + band)
    b = np.random.default_rng(k).normal(size=(n, k))
    x = banded_solve(Banded.from_dense(a, band), b, band)
    assert x.shape == (n, k)
    for expected in (solveh_banded(_lower_form(a, band), b, lower=True), np.linalg.solve(a, b)):
        assert np.abs(x - expected).max() <= 1e-9 * np.abs(expected).max()
    assert np.abs(a @ x - b).max() <= 1e-9 * np.abs(b).max()
    one = banded_solve(a, b[:, k // 2], band)
    assert np.abs(x[:, k // 2] - one).max() <= 1e-9 * np.abs(one).max()


def test_grams_equal_their_dense_products():
    """BᵀWB from a spline's sparse rows, DᵀD of second and third differences and the coordinates interleaved:
    the dense matrices built here from the whole basis (scipy's), np.diff of the identity and np.kron."""
    n_frames, spacing = 97, 4.0
    n = n_controls(n_frames, spacing)
    frames = np.sort(np.random.default_rng(2).uniform(0, n_frames - 1, 60))
    weights = np.random.default_rng(3).uniform(0.5, 2.0, 60)
    basis = BSpline.design_matrix(frames, knots(n_frames, spacing), 3).toarray()
    gram = banded_gram(*bspline_rows(frames, n, spacing), n, weights)
    np.testing.assert_allclose(gram.dense(), basis.T @ (weights[:, None] * basis), rtol=0, atol=1e-14)
    for order in (2, 3):
        d = np.diff(np.eye(n), order, axis=0)
        assert difference_gram(n, order).band == order
        np.testing.assert_array_equal(difference_gram(n, order).dense(), d.T @ d)
    both = interleaved([gram, difference_gram(n, 2)])
    expected = np.kron(gram.dense(), np.diag([1.0, 0.0])) + np.kron(difference_gram(n, 2).dense(), np.diag([0.0, 1.0]))
    np.testing.assert_allclose(both.dense(), expected, rtol=0, atol=1e-14)


def _dense_fit(keys, values, n_frames, spacing, smoothness, weights):
    """The penalised least-squares controls built densely, independently of :mod:`core.physics.displacement`'s
    rows: scipy's B-spline design matrix B, BᵀWB + λ·scale·DᵀD + 1e-12·scale·I (scale the mean of BᵀWB's
    diagonal) and numpy's dense solve."""
    basis = BSpline.design_matrix(keys, knots(n_frames, spacing), 3).toarray()
    n = basis.shape[1]
    normal = basis.T @ (weights[:, None] * basis)
    scale = np.trace(normal) / n
    d = np.diff(np.eye(n), 2, axis=0)
    lhs = normal + smoothness * scale * d.T @ d + 1e-12 * scale * np.eye(n)
    flat = values.reshape(len(keys), -1)
    return np.linalg.solve(lhs, basis.T @ (weights[:, None] * flat)).reshape(n, *values.shape[1:])


@pytest.mark.parametrize("n_frames, stride, spacing", [(3001, 4, 12.0), (3001, 4, 3.0), (250, 4, 4.0), (30, 1, 10.0)])
def test_fit_controls_equals_a_dense_fit(n_frames, stride, spacing):
    """The final displacement fit as the solve makes it (a key every 4 frames and a control every 12 at 120 fps,
    the clip's last frame a key; smoothing 0.05; (K, 9, 3) values), one with 1,001 controls that takes the block
    solve (N²·band over its dense limit) and small ones that take the dense solve:
    the dense reference's controls within 1e-9 relative, with and without per-key weights."""
    rng = np.random.default_rng(n_frames)
    keys = np.append(np.arange(0, n_frames - 1, stride), n_frames - 1).astype(float)
    values = rng.normal(size=(len(keys), 9, 3)) * 0.01
    for weights in (None, rng.uniform(0.2, 3.0, len(keys))):
        got = fit_controls(keys, values, n_frames, spacing, 0.05, weights)
        w = np.ones(len(keys)) if weights is None else weights
        expected = _dense_fit(keys, values, n_frames, spacing, 0.05, w)
        assert got.shape == expected.shape == (n_controls(n_frames, spacing), 9, 3)
        assert np.abs(got - expected).max() <= 1e-9 * np.abs(expected).max()


def test_fit_controls_memory_grows_with_the_clip_not_its_square():
    """The final fit of a 40,000-frame clip (5.6 minutes at 120 fps; a key every 4 frames, a control every 12:
    3,337 controls, 30 values a key as the filter's 9 joints): one dense (n, n) matrix is 89 MB. Peak traced
    memory stays under a quarter of that (measured: 12.1 MB, most of it the (K, 4, 30) products of the right-hand
    side; with the dense normal matrix, penalty and solve 356.8 MB)."""
    n_frames, spacing = 40_000, 12.0
    keys = np.append(np.arange(0, n_frames - 1, 4), n_frames - 1)
    values = np.random.default_rng(4).normal(size=(len(keys), 30)) * 0.01
    dense = n_controls(n_frames, spacing) ** 2 * 8
    tracemalloc.start()
    try:
        controls = fit_controls(keys, values, n_frames, spacing, 0.05)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.isfinite(controls).all()
    assert peak < dense / 4, f"{peak / 1e6:.1f} MB, one dense matrix {dense / 1e6:.0f} MB"
