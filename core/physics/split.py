"""The ground-force split of double support: the valid split whose worst joint-torque ratio is least.

In double support inverse dynamics is indeterminate: the motion fixes the net ground wrench (force
F and, through the ZMP p, its horizontal moment), not how the two feet share it. The torque
constraint holds when *some* valid split keeps every joint within its limit, so the torque of a
double-support frame is the least any valid split needs; single support is determined.

Model (each leg k = the boxes of one foot in contact, foot and toe; :func:`leg_of_boxes`): leg k
takes the share wₖ of F at its centre of pressure rₖ on the ground, w_L + w_R = 1 and
w_L r_L + w_R r_R = p, so the two forces sum to F and their horizontal moment is the motion's; rₖ
lies in the convex hull of leg k's boxes in contact. Each leg's force is parallel to F (its
tangential part in proportion to its load, as the proximity split it replaces had it), so it lies
in its friction cone exactly when the net force does: |F_t| ≤ μ F_n with μ = :data:`MU` = 0.8, the
static friction of a shoe sole on a dry floor (0.6–1.0 in the slip-resistance literature, e.g.
Chang et al. 2001, "The role of friction in the measurement of slipperiness", Ergonomics 44(13)).
The vertical free moment is not modelled (as before: it is left to the root's residual).

Unknowns per frame x = (w_L, s/ℓ), s = w_L (r_L − p) in ground coordinates (ℓ = 0.1 m scales the
columns alike). With the pose fixed every joint moment is affine in x: a joint above one leg only
has τⱼ = Aⱼ − (s + w_L (p − pⱼ)) × F for the left leg and Aⱼ − ((1 − w_L)(p − pⱼ) − s) × F for the
right (Aⱼ its moment without ground force, pⱼ its position, points 3-D on the ground); joints above
both legs or neither do not depend on the split. The hulls give linear inequalities: an edge
n·r ≤ c of the left hull gives n·s − (c − n·p) w_L ≤ 0, one of the right hull
−n·s + (c − n·p) w_L ≤ c − n·p; 0 ≤ w_L ≤ 1.

The ZMP is the motion's where it is defined and inside the support polygon; where it lies outside
no split is valid, and the point of the polygon nearest to it stands in for it (the moment the
feet cannot give is left to the root's residual, as before), so the split stays continuous as the
ZMP crosses the boundary. Single support puts the whole force at that point.

Objective: the worst |τⱼ|/Lⱼ over the joints with limits that depend on the split, in epigraph
form (min σ subject to |τⱼ|²/Lⱼ² ≤ σ and the hull rows; convex), solved by a primal-dual
interior-point method vectorised over frames (numpy only; 12 Newton steps reach 1e-6 of the
ratio). Checked against scipy's SLSQP on the minimax problem itself (tests). A frame stops stepping
once its mean complementarity is below :data:`CONVERGED` (1e-12: far past the 1e-6 of the ratio;
further steps only grow the dual/slack ratios until the reduced matrix overflows, as it did on a
stand whose foot's hull is a segment: no interior) or when a step is not finite (the last finite
iterate is kept); a frame whose iterate then violates its hull rows by more than :data:`FEASIBLE`
(5 mm: an iterate 12 steps have not quite converged is within a millimetre, e.g. 0.8 mm on a still
stand whose limit was cut to half its gravity torque; rows no split meets are missed by centimetres)
is NaN, and the caller keeps the proximity split there.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from .support import hull_chain, hull_edges

MU = 0.8  # static friction coefficient, shoe sole on a dry floor (module notes)
SCALE = 0.1  # metres: the unit of the CoP offset unknowns
CONVERGED = 1e-12  # mean complementarity (squared ratios) at which a frame stops stepping (module notes)
FEASIBLE = 5e-3  # metres: the hull rows' violation above which a frame's solve counts as broken down (module notes)


def leg_of_boxes(subtree: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """(B,) leg index of each support box: boxes whose joints lie on one chain (a foot and its toe) share one.

    subtree: (J, J) bool, row j the joints of j's subtree; joints: (B,) the boxes' joints.
    """
    leg = -np.ones(len(joints), dtype=int)
    n = 0
    for b, jb in enumerate(joints):
        for a in range(b):
            ja = joints[a]
            if subtree[ja, jb] or subtree[jb, ja]:
                leg[b] = leg[a]
                break
        else:
            leg[b], n = n, n + 1
    return leg


def hull_lines(points: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hull of each frame's active points (..., P, 2) as lines n·r ≤ c: unit outward normals
    (..., P, 2), offsets c (...,  P) (units of the points) and which points start an edge (..., P)."""
    end, valid = hull_chain(points, hull_edges(points, active))
    e = end - points
    n = np.stack((e[..., 1], -e[..., 0]), axis=-1)
    size = quat.length(n)[..., None]
    valid = valid & (size[..., 0] > 1e-12)
    n = np.where(valid[..., None], n / np.where(size > 1e-12, size, 1.0), 0.0)
    return n, quat.inner(n, points), valid


def hull_constraints(
    normals: np.ndarray, offsets: np.ndarray, valid: np.ndarray, zmp2: np.ndarray, left: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Rows C (N, P, 3) and bounds d (N, P) of C·x ≤ d that keep one leg's centre of pressure in its
    hull, given as lines (:func:`hull_lines`, metres), the ZMP zmp2 (N, 2) metres (module notes;
    rows of points that start no edge are 0 ≤ 1)."""
    gap = offsets - quat.inner(normals, zmp2[:, None])  # c − n·p: how far p is inside that line
    sign = 1.0 if left else -1.0
    rows = np.concatenate((-sign * gap[..., None], sign * SCALE * normals), axis=-1)
    bound = np.zeros_like(gap) if left else gap
    return np.where(valid[..., None], rows, 0.0), np.where(valid, bound, 1.0)


def torque_map(
    free: np.ndarray, joint_pos: np.ndarray, force: np.ndarray, zmp3: np.ndarray, basis: np.ndarray, left: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """a (N, K, 3) N·m and B (N, K, 3, 3) with τ = a + B·x for K joints above one leg each.

    free: (N, K, 3) their moments without ground force; joint_pos (N, K, 3), zmp3 (N, 3) m; force
    (N, 3) N, the net ground force; basis (2, 3) ground axes; left (K,) bool: above the left leg.
    """
    arm = quat.cross(zmp3[:, None] - joint_pos, force[:, None])  # (p − pⱼ) × F
    e = quat.cross(basis[None], force[:, None]) * SCALE  # (N, 2, 3): eᵢ × F per unit of x
    cols = np.concatenate((arm[..., None], np.broadcast_to(e.transpose(0, 2, 1)[:, None], arm.shape + (2,))), -1)
    sign = np.where(left, -1.0, 1.0)[None, :, None, None]
    a = np.where(left[None, :, None], free, free - arm)
    return a, sign * cols


def least_worst_split(
    a: np.ndarray, b: np.ndarray, limits: np.ndarray, c: np.ndarray, d: np.ndarray, iterations: int = 12
) -> np.ndarray:
    """x (N, 3) that minimises maxⱼ |aⱼ + Bⱼx| / Lⱼ subject to c·x ≤ d (module notes), batched.

    a (N, K, 3), b (N, K, 3, 3) from :func:`torque_map`; limits (K,) N·m; c (N, M, 3), d (N, M).
    The epigraph form, min σ subject to |aⱼ + Bⱼx|²/Lⱼ² ≤ σ and c·x ≤ d (convex), solved by a
    primal-dual interior-point method (Mehrotra's predictor-corrector, the constraints linearised
    at every step) with a fixed number of Newton steps, one 4 × 4 solve per frame each; it starts
    outside the feasible set as easily as inside.
    """
    a, b = a / limits[None, :, None], b / limits[None, :, None, None]
    n_frames, k = a.shape[:2]
    m = k + c.shape[1]
    btb = 2.0 * np.swapaxes(b, -1, -2) @ b  # (N, K, 3, 3): the Hessians of the squared ratios
    y = np.zeros((n_frames, 4))
    y[:, 3] = quat.inner(a, a).max(axis=1) + 1.0
    jac = np.zeros((n_frames, m, 4))
    jac[:, :k, 3] = -1.0
    jac[:, k:, :3] = c
    g = np.empty((n_frames, m))
    slack = np.ones((n_frames, m))
    dual = np.ones((n_frames, m))
    eye = 1e-10 * np.eye(4)
    live = np.ones(n_frames, dtype=bool)  # frames still stepping (module notes: converged or broken down: held)

    def longest(v, dv):
        neg = dv < 0
        return np.min(np.where(neg, -v / np.where(neg, dv, -1.0), np.inf), axis=1)

    for _ in range(iterations):
        v = a + (b @ y[:, None, :3, None])[..., 0]  # (N, K, 3)
        g[:, :k] = quat.inner(v, v) - y[:, 3:]
        g[:, k:] = (c @ y[:, :3, None])[..., 0] - d
        jac[:, :k, :3] = 2.0 * (np.swapaxes(b, -1, -2) @ v[..., None])[..., 0]
        jt = np.swapaxes(jac, 1, 2)  # (N, 4, M)
        rd = (jt @ dual[..., None])[..., 0]
        rd[:, 3] += 1.0  # ∇σ
        rp = g + slack
        lhs = jt @ (jac * (dual / slack)[..., None]) + eye
        lhs[:, :3, :3] += np.sum(dual[:, :k, None, None] * btb, axis=1)
        mu = np.mean(slack * dual, axis=1, keepdims=True)
        live &= mu[:, 0] > CONVERGED
        if not live.any():
            break
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # the held frames' steps are dropped
            system = (cholesky(lhs), jt, jac, rd, rp, slack, dual)
            dy, ds, dl = _newton_step(system, slack * dual)  # affine (predictor) step
            alpha = np.minimum(1.0, np.minimum(longest(slack, ds), longest(dual, dl)))[:, None]
            mu_aff = np.mean((slack + alpha * ds) * (dual + alpha * dl), axis=1, keepdims=True)
            sigma = (mu_aff / np.maximum(mu, 1e-300)) ** 3
            dy, ds, dl = _newton_step(system, slack * dual + ds * dl - sigma * mu)  # corrector
            alpha = np.minimum(1.0, 0.95 * np.minimum(longest(slack, ds), longest(dual, dl)))[:, None]
            y_new = y + alpha * dy
            slack_new, dual_new = np.maximum(slack + alpha * ds, 1e-14), np.maximum(dual + alpha * dl, 1e-14)
        live &= np.isfinite(y_new).all(axis=1) & np.isfinite(slack_new).all(axis=1) & np.isfinite(dual_new).all(axis=1)
        y = np.where(live[:, None], y_new, y)
        slack, dual = np.where(live[:, None], slack_new, slack), np.where(live[:, None], dual_new, dual)
    violation = np.max((c @ y[:, :3, None])[..., 0] - d, axis=1, initial=0.0)
    return np.where((violation <= FEASIBLE)[:, None], y[:, :3], np.nan)


def _newton_step(system: tuple, rc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps (dy, d slack, d dual) of the interior-point Newton system reduced to the unknowns, for the
    complementarity residual rc; system: (Cholesky factor of the reduced matrix, Jᵀ, J, dual residual,
    primal residual, slack, dual)."""
    factor, jt, jac, rd, rp, slack, dual = system
    rhs = -rd - (jt @ ((-rc + dual * rp) / slack)[..., None])[..., 0]
    dy = cholesky_solve(factor, rhs)
    ds = -rp - (jac @ dy[..., None])[..., 0]
    return dy, ds, (-rc - dual * ds) / slack


def cholesky(m: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors (N, n, n) of symmetric positive-definite matrices (N, n, n), vectorised over
    N (a loop over the n² entries: for many small matrices far faster than one LAPACK call per matrix)."""
    n = m.shape[-1]
    low = np.zeros_like(m)
    for j in range(n):
        d = m[:, j, j] - np.sum(low[:, j, :j] ** 2, axis=1)
        low[:, j, j] = np.sqrt(np.maximum(d, 1e-300))
        for i in range(j + 1, n):
            low[:, i, j] = (m[:, i, j] - np.sum(low[:, i, :j] * low[:, j, :j], axis=1)) / low[:, j, j]
    return low


def cholesky_solve(low: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x (N, n) with L Lᵀ x = b (N, n), L from :func:`cholesky`."""
    n = b.shape[-1]
    y = np.empty_like(b)
    for i in range(n):
        y[:, i] = (b[:, i] - np.sum(low[:, i, :i] * y[:, :i], axis=1)) / low[:, i, i]
    x = np.empty_like(b)
    for i in range(n - 1, -1, -1):
        x[:, i] = (y[:, i] - np.sum(low[:, i + 1 :, i] * x[:, i + 1 :], axis=1)) / low[:, i, i]
    return x


def split_torque_ratios(a: np.ndarray, b: np.ndarray, limits: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|aⱼ + Bⱼx| / Lⱼ (N, K) of a split x (N, 3)."""
    return quat.length(a + np.einsum("nkij,nj->nki", b, x)) / limits
