"""Unscented Kalman filter (numpy) with Merwe scaled sigma points and manifold-aware state arithmetic.

The algorithm is filterpy's ``UnscentedKalmanFilter`` step for step (so tests can compare
posteriors to 1e-8): sigma points xᵢ = x ⊕ ±(columns of chol((n + λ)P)); predict passes
them through f, takes the weighted mean and covariance (+ Q) and redraws sigma points from
the prior; update passes those through h, forms S = Σ Wc (h − ẑ)(h − ẑ)ᵀ + R and
Pxz = Σ Wc (xᵢ ⊖ x)(hᵢ − ẑ)ᵀ, K = Pxz S⁻¹, x ← x ⊕ K(z − ẑ), P ← P − K S Kᵀ.

State arithmetic is pluggable: ``add(x, dx)`` (⊕), ``residual(a, b)`` (⊖) and
``mean(sigmas, Wm)``, all vectorised over leading axes; an optional ``limit_step`` caps the
correction K(z − ẑ) (a trust region for strongly nonlinear measurements; off by default, and
then the step is filterpy's). For plain vectors they are +, − and
the weighted sum; for poses (:func:`pose_arithmetic`) rotations live as quaternions and
move by rotation vectors: q ⊕ v = q·exp(v/2), a ⊖ b = 2·log(b⁻¹a), and the mean is one
Gauss–Newton step of the intrinsic mean around the first sigma point. f and h take all
sigma points at once ((S, dim_x) → (S, ...)), so there is no Python loop over them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import quaternion as quat


class MerweScaledSigmaPoints:
    """Sigma points and weights of van der Merwe's scaled unscented transform for an n-dimensional tangent space."""

    def __init__(self, n: int, alpha: float = 0.5, beta: float = 2.0, kappa: float = 0.0):
        self.n, self.alpha, self.beta, self.kappa = n, alpha, beta, kappa
        self.lam = alpha**2 * (n + kappa) - n
        c = 0.5 / (n + self.lam)
        self.Wm = np.full(2 * n + 1, c)
        self.Wc = np.full(2 * n + 1, c)
        self.Wm[0] = self.lam / (n + self.lam)
        self.Wc[0] = self.lam / (n + self.lam) + (1.0 - alpha**2 + beta)

    def sqrt(self, P: np.ndarray) -> np.ndarray:
        """Lower Cholesky factor of (n + λ)P (the columns equal the rows of filterpy's upper factor)."""
        a = (self.n + self.lam) * P
        try:
            return np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            a = 0.5 * (a + a.T)
            w, v = np.linalg.eigh(a)
            return np.linalg.cholesky(v @ np.diag(np.maximum(w, 1e-12 * max(w.max(), 1e-300))) @ v.T)

    def sigma_points(self, x: np.ndarray, P: np.ndarray, add: Callable) -> np.ndarray:
        """(2n + 1, dim_x) sigma points: x, x ⊕ Lₖ (k < n), x ⊕ −Lₖ."""
        u = self.sqrt(P).T  # rows = columns of L
        steps = np.concatenate((np.zeros((1, self.n)), u, -u))
        return add(np.broadcast_to(x, (2 * self.n + 1, *np.shape(x))), steps)


def vector_add(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
    return x + dx


def vector_residual(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a - b


def vector_mean(sigmas: np.ndarray, wm: np.ndarray) -> np.ndarray:
    return wm @ sigmas


class UnscentedKalmanFilter:
    """Stateless UKF steps on (x, P) pairs; see the module notes. n: tangent dimension."""

    def __init__(
        self,
        points: MerweScaledSigmaPoints,
        add: Callable = vector_add,
        residual: Callable = vector_residual,
        mean: Callable = vector_mean,
        limit_step: Callable | None = None,
    ):
        self.points, self.add, self.residual, self.mean = points, add, residual, mean
        self.limit_step = limit_step

    def transform(self, sigmas: np.ndarray, noise: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Weighted mean and covariance (+ noise) of state sigma points (S, dim_x)."""
        x = self.mean(sigmas, self.points.Wm)
        r = self.residual(sigmas, x)
        P = (r * self.points.Wc[:, None]).T @ r
        return x, P if noise is None else P + noise

    def predict(self, x: np.ndarray, P: np.ndarray, fx: Callable, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Prior (x, P): sigma points of (x, P) through ``fx`` ((S, dim_x) → (S, dim_x)), plus Q."""
        return self.transform(fx(self.points.sigma_points(x, P, self.add)), Q)

    def update(
        self, x: np.ndarray, P: np.ndarray, z: np.ndarray, hx: Callable, R: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior (x, P) from measurement z (m,) with model ``hx`` ((S, dim_x) → (S, m)) and noise R (m, m)."""
        sigmas = self.points.sigma_points(x, P, self.add)
        return self.update_sigmas(x, P, sigmas, np.asarray(hx(sigmas), dtype=float), z, R)

    def update_sigmas(
        self, x: np.ndarray, P: np.ndarray, sigmas: np.ndarray, h: np.ndarray, z: np.ndarray, R: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`update` with the sigma points of (x, P) and their measurements h (S, m) already computed."""
        wm, wc = self.points.Wm, self.points.Wc
        zp = wm @ h
        dz = h - zp
        S = (dz * wc[:, None]).T @ dz + R
        pxz = (self.residual(sigmas, x) * wc[:, None]).T @ dz
        K = np.linalg.solve(S.T, pxz.T).T  # Pxz S⁻¹ (S symmetric)
        step = K @ (z - zp)
        x = self.add(x, step if self.limit_step is None else self.limit_step(step))
        P = P - K @ S @ K.T
        return x, 0.5 * (P + P.T)


def pose_arithmetic(n_positions: int, n_rotations: int) -> tuple[Callable, Callable, Callable]:
    """(add, residual, mean) for states [positions (n_positions), quaternions (4·n_rotations)] with
    tangent [positions, rotation vectors (3·n_rotations)]; all vectorised over leading axes."""
    p, k = n_positions, n_rotations

    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x[..., :p], x[..., p:].reshape(*x.shape[:-1], k, 4)

    def add(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        pos, q = split(x)
        rot = quat.multiply(q, quat.exp(0.5 * dx[..., p:].reshape(*dx.shape[:-1], k, 3)))
        return np.concatenate((pos + dx[..., :p], rot.reshape(*rot.shape[:-2], 4 * k)), axis=-1)

    def residual(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        pa, qa = split(a)
        pb, qb = split(b)
        v = 2.0 * quat.log(quat.multiply(quat.conjugate(qb), qa))
        return np.concatenate((pa - pb, v.reshape(*v.shape[:-2], 3 * k)), axis=-1)

    def mean(sigmas: np.ndarray, wm: np.ndarray) -> np.ndarray:
        ref = sigmas[0]
        step = wm @ residual(sigmas, ref)
        return add(ref, step)

    return add, residual, mean
