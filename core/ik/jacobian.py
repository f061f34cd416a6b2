"""Multi-link IK by damped least squares, batched over frames.

Every chain joint gets three rotational degrees of freedom, expressed as a small world-space
rotation vector ω_j (axis·angle, radians). Turning joint j by ω_j moves a descendant
effector at p_e by ω_j × (p_e − p_j), so the Jacobian block is the skew matrix [p_j − p_e]×.
Per frame the step is the weighted damped pseudo-inverse

    Δ = W Jᵀ (J W Jᵀ + λ² I)⁻¹ e,

W = diag(joint weights) (0 locks a joint, larger moves it more), e the stacked effector errors
(rows scaled by √effector weight), λ = damping · (total chain length) so the damping is
independent of the scene unit. Each joint's step is capped at ``max_step`` radians, applied
as exp(ω/2)·world orientation, and converted back to pose rotations. Frames are independent:
all unconverged frames take their step together ((T, 3k, 3n) Jacobians, one batched solve
of (T, 3k, 3k) systems per iteration); a frame stops once every effector is within
``tolerance``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import quaternion as quat
from ..kinematics import forward_kinematics
from ..motion import Motion
from .common import align_hemisphere, ancestry, local_from_world, parent_world_rotations


class JacobianIKResult(NamedTuple):
    """rotations: (T, J, 4) new pose rotations (only the chain joints differ from the input);
    residual: (T, k) distance of each effector to its target (scene units);
    iterations: (T,) iterations each frame took."""

    rotations: np.ndarray
    residual: np.ndarray
    iterations: np.ndarray


def skew(v: np.ndarray) -> np.ndarray:
    """Cross-product matrices (..., 3, 3) of vectors v (..., 3): skew(v) @ x = v × x."""
    x, y, z = np.moveaxis(np.asarray(v, dtype=float), -1, 0)
    o = np.zeros_like(x)
    return np.stack((np.stack((o, -z, y), -1), np.stack((z, o, -x), -1), np.stack((-y, x, o), -1)), -2)


def position_jacobian(pos: np.ndarray, joints: np.ndarray, effectors: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """Jacobians (T, 3k, 3n) of effector positions w.r.t. world rotation vectors of the joints.

    pos: (T, J, 3) world joint positions; moves: (k, n) bool, effector i below joint j.
    """
    r = pos[:, joints][:, None, :, :] - pos[:, effectors][:, :, None, :]  # (T, k, n, 3): p_j − p_e
    blocks = skew(r) * moves[None, :, :, None, None]  # (T, k, n, 3, 3)
    t, k, n = blocks.shape[:3]
    return blocks.transpose(0, 1, 3, 2, 4).reshape(t, 3 * k, 3 * n)


def dls_step(jac: np.ndarray, err: np.ndarray, joint_w: np.ndarray, damping: float) -> np.ndarray:
    """Weighted damped least-squares step (T, 3n) for Jacobians (T, m, 3n) and errors (T, m)."""
    w = np.repeat(joint_w, 3)
    jw = jac * w  # J W
    lhs = jw @ jac.transpose(0, 2, 1) + damping**2 * np.eye(jac.shape[1])
    return np.einsum("tmn,tm->tn", jw, np.linalg.solve(lhs, err[..., None])[..., 0])


def _cap(step: np.ndarray, max_step: float) -> np.ndarray:
    """Scale each joint's rotation vector (T, n, 3) down to at most max_step radians."""
    norm = np.linalg.norm(step, axis=-1, keepdims=True)
    return step * np.minimum(1.0, max_step / np.maximum(norm, 1e-300))


def _chain_length(motion: Motion, joints: np.ndarray, effectors: np.ndarray) -> float:
    pos = forward_kinematics(motion.skeleton, motion.translations[:1], motion.rotations[:1])[0][0]
    span = np.linalg.norm(pos[effectors][:, None] - pos[joints][None], axis=-1)
    return float(max(span.max(), 1e-12))


class _Problem(NamedTuple):
    motion: Motion
    joints: np.ndarray
    effectors: np.ndarray
    targets: np.ndarray  # (T, k, 3)
    joint_w: np.ndarray  # (n,)
    row_w: np.ndarray  # (3k,)
    moves: np.ndarray  # (k, n)

    def evaluate(self, frames: np.ndarray, rotations: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World positions, orientations and weighted errors (A, 3k) of some frames."""
        pos, rot = forward_kinematics(self.motion.skeleton, self.motion.translations[frames], rotations)
        err = (self.targets[frames] - pos[:, self.effectors]).reshape(len(frames), -1) * self.row_w
        return pos, rot, err

    def step(self, pos, rot, err, rotations, damping, max_step) -> np.ndarray:
        """Candidate pose rotations (A, J, 4) after one damped least-squares step."""
        sk = self.motion.skeleton
        jac = position_jacobian(pos, self.joints, self.effectors, self.moves) * self.row_w[:, None]
        step = _cap(dls_step(jac, err, self.joint_w, damping).reshape(len(pos), -1, 3), max_step)
        world = quat.multiply(quat.exp(0.5 * step), rot[:, self.joints])
        new = local_from_world(sk, self.joints, world, parent_world_rotations(sk, rot, self.joints))
        out = rotations.copy()
        out[:, self.joints] = align_hemisphere(new, rotations[:, self.joints])
        return out


def jacobian_ik(
    motion: Motion,
    joints: np.ndarray,
    effectors: np.ndarray,
    targets: np.ndarray,
    joint_weights: np.ndarray | None = None,
    effector_weights: np.ndarray | None = None,
    damping: float = 0.05,
    max_iterations: int = 100,
    tolerance: float | None = None,
    max_step: float = 0.5,
) -> JacobianIKResult:
    """Rotate ``joints`` (n,) so the ``effectors`` (k,) reach ``targets`` (T, k, 3) (or (k, 3)).

    joint_weights: (n,) ≥ 0, default 1; effector_weights: (k,) > 0, default 1. damping: the
    starting λ as a fraction of the chain length (largest joint→effector distance in frame
    0); it then adapts per frame (Levenberg–Marquardt: halved after a step that lowers the
    error, ×4 and the step undone otherwise), which keeps stretched, nearly singular chains
    converging. tolerance: scene units, default 1e-6 · chain length. Unreachable targets end
    with the chain stretched towards them; the residual reports the gap.
    """
    joints = np.atleast_1d(np.asarray(joints, dtype=int))
    effectors = np.atleast_1d(np.asarray(effectors, dtype=int))
    k = len(effectors)
    eff_w = np.ones(k) if effector_weights is None else np.asarray(effector_weights, dtype=float)
    problem = _Problem(
        motion,
        joints,
        effectors,
        np.broadcast_to(np.asarray(targets, dtype=float), (motion.n_frames, k, 3)),
        np.ones(len(joints)) if joint_weights is None else np.asarray(joint_weights, dtype=float),
        np.sqrt(np.repeat(eff_w, 3)),
        ancestry(motion.skeleton, effectors, joints),
    )
    length = _chain_length(motion, joints, effectors)
    tolerance = 1e-6 * length if tolerance is None else tolerance
    rotations = motion.rotations.copy()
    iterations = np.zeros(motion.n_frames, dtype=int)
    lam = np.full(motion.n_frames, damping * length)
    active = np.arange(motion.n_frames)
    pos, rot, err = problem.evaluate(active, rotations)
    for _ in range(max_iterations):
        gap = np.linalg.norm(err.reshape(len(active), k, 3) / problem.row_w.reshape(k, 3), axis=-1).max(axis=-1)
        keep = (gap > tolerance) & (lam[active] < 1e6 * length)
        active, pos, rot, err = active[keep], pos[keep], rot[keep], err[keep]
        if not len(active):
            break
        candidate = problem.step(pos, rot, err, rotations[active], lam[active][:, None, None], max_step)
        c_pos, c_rot, c_err = problem.evaluate(active, candidate)
        better = np.sum(c_err**2, axis=-1) < np.sum(err**2, axis=-1)
        rotations[active[better]] = candidate[better]
        pos[better], rot[better], err[better] = c_pos[better], c_rot[better], c_err[better]
        lam[active] = np.where(better, np.maximum(0.5 * lam[active], 1e-6 * length), 4.0 * lam[active])
        iterations[active] += 1
    pos = forward_kinematics(motion.skeleton, motion.translations, rotations)[0]
    residual = np.linalg.norm(problem.targets - pos[:, effectors], axis=-1)
    return JacobianIKResult(rotations, residual, iterations)
