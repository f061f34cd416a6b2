"""Symmetric banded matrices: kept as their band, built from sparse rows, solved block by block.

The physics' least-squares problems over B-spline controls (:mod:`.displacement`) have normal matrices that are
zero more than a few controls off their diagonal: a frame's row touches four neighbouring controls, a difference
penalty couples neighbours, the balance plan's Jacobian rows a few colours (:mod:`.balance`). Kept dense, they
grew with the square of the clip (a ten-minute 120 fps capture, 72,000 frames: the filter's final fit, a control
every 12 frames, 6,003 controls, 288 MB a matrix; the balance plan's 36,002 unknowns, 10 GB each). Kept as their
band (:class:`Banded`, N·(2·band + 1) numbers), made from the sparse rows (:func:`banded_gram`,
:func:`difference_gram`, :func:`interleaved`) and solved by block-tridiagonal elimination (:func:`banded_solve`),
they grow with the clip.
"""

from __future__ import annotations

import numpy as np


class Banded:
    """A symmetric (N, N) matrix zero more than ``band`` off its diagonal, kept as its band: rows (N, 2·band + 1),
    rows[i, k] = a[i, i − band + k] (zero outside the matrix). The balance plan's regulariser and normal equations
    and the final displacement fit's normal matrix are kept so: N·(2·band + 1) numbers, where as dense (N, N)
    matrices they grew with the square of the clip (8,000 frames at 120 fps: the plan's 4,002 unknowns, 128 MB
    each and several at once; a ten-minute capture's 36,002: 10 GB each)."""

    __array_ufunc__ = None  # ``x @ a`` for an array x comes here (:meth:`__rmatmul__`), not to a dense copy

    def __init__(self, rows: np.ndarray, band: int) -> None:
        self.rows, self.band = rows, int(band)

    @classmethod
    def zeros(cls, n: int, band: int) -> Banded:
        return cls(np.zeros((n, 2 * band + 1)), band)

    @classmethod
    def from_dense(cls, a: np.ndarray, band: int) -> Banded:
        """The band of a dense (N, N) ``a`` that is zero farther off its diagonal."""
        n = len(a)
        return cls(cls(np.zeros((n, 0)), band)._gather(a, 0, n), band)

    def _gather(self, a: np.ndarray, r0: int, r1: int) -> np.ndarray:
        n = len(a)
        j = np.arange(r0, r1)[:, None] + np.arange(-self.band, self.band + 1)
        return np.where((j >= 0) & (j < n), a[np.arange(r0, r1)[:, None], np.clip(j, 0, n - 1)], 0.0)

    @property
    def n(self) -> int:
        return len(self.rows)

    def widened(self, band: int) -> Banded:
        """The same matrix kept with a band of ``band`` (at least its own)."""
        pad = band - self.band
        return self if pad == 0 else Banded(np.pad(self.rows, ((0, 0), (pad, pad))), band)

    def __add__(self, other: Banded) -> Banded:
        band = max(self.band, other.band)
        return Banded(self.widened(band).rows + other.widened(band).rows, band)

    def __sub__(self, other: Banded) -> Banded:
        band = max(self.band, other.band)
        return Banded(self.widened(band).rows - other.widened(band).rows, band)

    def __mul__(self, factor: float) -> Banded:
        return Banded(self.rows * factor, self.band)

    def times(self, x: np.ndarray) -> np.ndarray:
        """a·x (N,) for x (N,)."""
        window = np.lib.stride_tricks.sliding_window_view(np.pad(x, self.band), 2 * self.band + 1)
        return (self.rows * window).sum(axis=1)

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        return self.times(np.asarray(x, dtype=float))

    def __rmatmul__(self, x: np.ndarray) -> np.ndarray:  # symmetric: xᵀa = (a·x)ᵀ
        return self.times(np.asarray(x, dtype=float))

    def block(self, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        """a[r0:r1, c0:c1], dense."""
        k = np.arange(c0, c1)[None] - np.arange(r0, r1)[:, None] + self.band
        inside = (k >= 0) & (k <= 2 * self.band)
        return np.where(inside, self.rows[np.arange(r0, r1)[:, None], np.clip(k, 0, 2 * self.band)], 0.0)

    def dense(self) -> np.ndarray:
        return self.block(0, self.n, 0, self.n)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return self.dense() if dtype is None else self.dense().astype(dtype)

    def nonzero_band(self) -> int:
        """The largest distance off the diagonal of a non-zero entry."""
        used = np.flatnonzero(self.rows.any(axis=0))
        return int(np.abs(used - self.band).max(initial=0))


def banded_gram(index: np.ndarray, values: np.ndarray, n: int, weights: np.ndarray | None = None) -> Banded:
    """BᵀWB (n, n) of rows B (N, n) non-zero on columns index … index + m − 1 alone (index (N,), values (N, m);
    weights (N,), default 1), without forming B."""
    m = values.shape[1]
    out = Banded.zeros(n, m - 1)
    scaled = values if weights is None else weights[:, None] * values
    for a in range(m):
        for b in range(m):
            np.add.at(out.rows, (index + a, b - a + m - 1), scaled[:, a] * values[:, b])
    return out


def interleaved(per_dim: list[Banded]) -> Banded:
    """The (n·D, n·D) matrix with ``per_dim[d]`` (n, n) on the coordinates d, d + D, …: kron(a, I_D) when all are a."""
    dims, band = len(per_dim), max(a.band for a in per_dim)
    out = Banded.zeros(per_dim[0].n * dims, band * dims)
    for d, a in enumerate(per_dim):
        out.rows[d::dims, ::dims] = a.widened(band).rows
    return out


def difference_gram(n: int, order: int) -> Banded:
    """DᵀD (n, n) of the ``order``-th differences D of n control points, band ``order`` (2: curvature; 3: the uniform
    cubic B-spline's third derivative, piecewise constant, is the third difference / spacing³)."""
    coefficients = np.diff(np.eye(order + 1), order, axis=0)[0]
    rows = max(n - order, 0)
    return banded_gram(np.arange(rows), np.tile(coefficients, (rows, 1)), n)


def banded_solve(a: Banded | np.ndarray, b: np.ndarray, band: int) -> np.ndarray:
    """x (N,) or (N, K) with a·x = b, b (N,) or (N, K) (K right-hand sides at once), for a symmetric
    positive-definite a (N, N) that is zero more than ``band`` off its diagonal: block-tridiagonal elimination on
    blocks of ``band`` rows, N / band small solves in place of one dense LU of N × N (a whole-clip plan: 982
    unknowns, band 19, ~10× faster; the same x within float rounding). A system too small or a band too wide for
    blocks to pay off (under ~2·10⁶ for N²·band, measured: a block costs ~35 µs of overhead) is solved densely."""
    n, m = len(b), max(band, 1)
    a = a if isinstance(a, Banded) else Banded.from_dense(a, band)
    if n * n * m < 2_000_000:
        return np.linalg.solve(a.dense(), b)
    columns = np.asarray(b, dtype=float).reshape(n, -1)
    reduced = []  # per block: (its coupling to the next block, its right-hand sides), both eliminated
    coupling = rhs = None
    for start in range(0, n, m):
        stop = min(start + m, n)
        upper = a.block(start, stop, stop, min(stop + m, n))
        diagonal, right = a.block(start, stop, start, stop), columns[start:stop]
        if coupling is not None:
            lower = a.block(start, stop, start - m, start)
            diagonal, right = diagonal - lower @ coupling, right - lower @ rhs
        both = np.linalg.solve(diagonal, np.hstack((upper, right)))
        coupling, rhs = both[:, : upper.shape[1]], both[:, upper.shape[1] :]
        reduced.append((coupling, rhs))
    x = np.empty_like(columns)
    after = None
    for k in range(len(reduced) - 1, -1, -1):
        coupling, rhs = reduced[k]
        after = rhs if after is None else rhs - coupling @ after
        x[k * m : k * m + len(after)] = after
    return x.reshape(np.shape(b))
