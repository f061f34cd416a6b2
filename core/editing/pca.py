"""PCA synthesis (MotionPro): similar cyclic motions → cycles → PCA → a parameter → new cycles.

1. **Cycles**: every motion is cut at the strikes of one foot (:mod:`.cycles`) and each cycle is
   resampled to N frames (time normalisation; its duration is kept as a feature).
2. **Root normalisation**: every frame is moved over the origin with heading 0
   (:func:`.root.normalize_frames`); the path becomes per-frame pelvis velocity in the heading
   frame and turn rate (root velocity), in body sizes per second and radians per second.
   With ``close=True`` (default) each cycle's poses get a linear correction in log space that
   makes its last frame equal its first, so generated cycles loop without a pop.
3. **Pose vector** per cycle, for each of the N frames: log(mean⁻¹·q) of every joint below the
   pelvis and of the pelvis's heading-free world orientation (mean: per frame and joint over all
   cycles), pelvis height (sizes), root velocity and turn rate; plus √N·log(duration). Root
   features are scaled by ``root_weight``.
4. **PCA** (SVD of the centred pose vectors): components, explained variance.
5. **Parameter**: one scalar per cycle (given per motion, or ``"speed"``: pelvis travel per
   second in the first motion's scene units); the PCA coefficients are fitted as a linear
   function of it (least squares: c(p) = c₀ + p·c₁). A new cycle for a value p is mean +
   c(p)·components, decoded; :meth:`CyclePCA.generate` loops it into a motion whose root keeps
   integrating. Extrapolation is allowed up to half the parameter range beyond either end
   (:data:`EXTRAPOLATION`), further raises.

All motions must share the joint names of the first (:func:`.conform.conform`); the result uses
the first motion's skeleton and body size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from ..skeleton import Skeleton
from .conform import conform
from .cycles import Cycle, cut_cycles
from .mix import ancestors
from .root import (
    State,
    chain_world,
    horizontal,
    integrate,
    normalize_frames,
    pelvis_joint,
    place_frames,
    resolve_up,
    set_pelvis_world,
    track,
)
from .timing import resample

EXTRAPOLATION = 0.5


def close_loop(q: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotations (N+1, ..., 4) and values (N+1, ...) corrected linearly along the cycle so that
    frame N equals frame 0: q_i·exp((i/N)·log(q_N⁻¹·q_0)), v_i + (i/N)·(v_0 − v_N)."""
    n = len(q) - 1
    ramp = np.arange(n + 1) / n
    d = quat.log(quat.multiply(quat.conjugate(q[-1]), q[0]))
    shape = (-1,) + (1,) * (q.ndim - 1)
    q = quat.multiply(q, quat.exp(ramp.reshape(shape) * d))
    values = values + ramp.reshape((-1,) + (1,) * (values.ndim - 1)) * (values[0] - values[-1])
    return q, values


def mean_rotation(q: np.ndarray) -> np.ndarray:
    """Chordal mean over axis 0 of rotations (C, ..., 4), signs aligned to the first."""
    sign = np.where(quat.dot(q, q[0]) < 0.0, -1.0, 1.0)
    return quat.normalize(np.sum(q * sign[..., None], axis=0))


@dataclass
class _Raw:
    """Per-cycle pose data before PCA: rotations (N, P+1, 4) (pose joints, then the pelvis),
    heights (N,) sizes, velocities (N, 3) sizes/s, turn rates (N,) rad/s, duration s."""

    rotations: np.ndarray
    heights: np.ndarray
    velocities: np.ndarray
    turn_rates: np.ndarray
    duration: float


def _raw(cycle: Cycle, pose_joints: np.ndarray, up: np.ndarray, size: float, close: bool) -> _Raw:
    m = cycle.motion
    path = track(m, up)
    flat = normalize_frames(m, up, path)
    pelvis_rot = chain_world(flat, pelvis_joint(m))[1]
    q = np.concatenate((flat.rotations[:, pose_joints], pelvis_rot[:, None]), axis=1)
    heights = path.positions @ up / size
    if close:
        q, heights = close_loop(q, heights)
    offsets, turns = path.steps()
    dt = cycle.duration / (m.n_frames - 1)
    return _Raw(q[:-1], heights[:-1], offsets / (size * dt), turns / dt, cycle.duration)


@dataclass(eq=False)
class CycleEncoding:
    """Cycle data ↔ pose vectors, and pose data → motion (module notes, steps 2–3).

    skeleton, up, size (scene units); n_frames: N; pose_joints: (P,) joints below the pelvis;
    translations: (J, 3) local translations used for joints other than the pelvis;
    mean_rotations: (N, P+1, 4); root_weight.
    """

    skeleton: Skeleton
    up: np.ndarray
    size: float
    n_frames: int
    pose_joints: np.ndarray
    translations: np.ndarray
    mean_rotations: np.ndarray
    root_weight: float

    def encode(self, raw: _Raw) -> np.ndarray:
        """(F,) pose vector of one cycle's data."""
        logs = quat.log(quat.multiply(quat.conjugate(self.mean_rotations), raw.rotations))
        n = self.n_frames
        root = np.concatenate(
            (raw.heights, raw.velocities.ravel(), raw.turn_rates, [np.sqrt(n) * np.log(raw.duration)])
        )
        return np.concatenate((logs.ravel(), self.root_weight * root))

    def decode(self, vector: np.ndarray) -> _Raw:
        """Cycle data from a pose vector (F,) (inverse of :meth:`encode`)."""
        n, p = self.n_frames, len(self.pose_joints) + 1
        logs = vector[: n * p * 3].reshape(n, p, 3)
        root = vector[n * p * 3 :] / self.root_weight
        heights, velocities, turns = root[:n], root[n : 4 * n].reshape(n, 3), root[4 * n : 5 * n]
        rotations = quat.multiply(self.mean_rotations, quat.exp(logs))
        return _Raw(rotations, heights, velocities, turns, float(np.exp(root[-1] / np.sqrt(n))))

    def motion(self, raw: _Raw, loops: int = 1, fps: float | None = None) -> Motion:
        """The cycle played ``loops`` times (loops·N + 1 frames at N/duration fps, the last frame
        closing the loop), starting over the origin at heading 0; resampled to ``fps`` if given."""
        n = self.n_frames
        idx = np.arange(loops * n + 1) % n
        flat = Motion.rest(self.skeleton, len(idx), n / raw.duration)
        flat.translations[:] = self.translations
        flat.rotations[:, self.pose_joints] = raw.rotations[idx, :-1]
        flat = set_pelvis_world(flat, raw.heights[idx, None] * self.size * self.up, raw.rotations[idx, -1])
        dt = raw.duration / n
        offsets = np.tile(raw.velocities * self.size * dt, (loops, 1))
        positions, headings = integrate(State(np.zeros(3), 0.0), offsets, np.tile(raw.turn_rates * dt, loops), self.up)
        out = place_frames(flat, positions, headings, self.up)
        return out if fps is None else resample(out, fps)


@dataclass(eq=False)
class CyclePCA:
    """A fitted PCA cycle model (module notes).

    encoding: pose vectors ↔ motions; fps: output rate; parameters: (C,) one per training cycle;
    cycles: the training :class:`Cycle` objects; mean: (F,) mean pose vector; components: (K, F)
    orthonormal rows; variances: (K,) variance along each; coefficients: (C, K) of the training
    cycles; intercept, slope: (K,) the linear fit c(p) = intercept + p·slope.
    """

    encoding: CycleEncoding
    fps: float
    parameters: np.ndarray
    cycles: list[Cycle]
    mean: np.ndarray
    components: np.ndarray
    variances: np.ndarray
    coefficients: np.ndarray
    intercept: np.ndarray
    slope: np.ndarray

    up = property(lambda self: self.encoding.up)
    size = property(lambda self: self.encoding.size)
    n_frames = property(lambda self: self.encoding.n_frames)
    pose_joints = property(lambda self: self.encoding.pose_joints)

    def decode(self, vector: np.ndarray) -> _Raw:
        return self.encoding.decode(vector)

    def motion(self, raw: _Raw, loops: int = 1, fps: float | None = None) -> Motion:
        return self.encoding.motion(raw, loops, fps)

    @property
    def explained_variance_ratio(self) -> np.ndarray:
        """(K,) share of the total variance along each component."""
        total = self.variances.sum()
        return self.variances / total if total > 0 else np.zeros_like(self.variances)

    def n_components_for(self, share: float) -> int:
        """Fewest components whose cumulative explained variance reaches ``share`` (0..1)."""
        return int(np.searchsorted(np.cumsum(self.explained_variance_ratio), share - 1e-12) + 1)

    @property
    def parameter_r2(self) -> float:
        """Share of the coefficients' variance explained by the linear fit in the parameter."""
        fitted = self.intercept + self.parameters[:, None] * self.slope
        total = np.sum((self.coefficients - self.coefficients.mean(axis=0)) ** 2)
        return float(1.0 - np.sum((self.coefficients - fitted) ** 2) / total) if total > 0 else 1.0

    def vector(self, coefficients: np.ndarray, n_components: int | None = None) -> np.ndarray:
        """Pose vector (F,) from PCA coefficients (K,), using the first ``n_components``."""
        k = len(self.components) if n_components is None else n_components
        return self.mean + np.asarray(coefficients, dtype=float)[:k] @ self.components[:k]

    def predict(self, value: float) -> np.ndarray:
        """Coefficients (K,) for a parameter value (linear fit; limited extrapolation)."""
        lo, hi = self.parameters.min(), self.parameters.max()
        span = hi - lo
        if not lo - EXTRAPOLATION * span <= value <= hi + EXTRAPOLATION * span:
            raise ValueError(
                f"parameter {value:g} is too far outside the training range [{lo:g}, {hi:g}] "
                f"(at most {EXTRAPOLATION:g}× the range beyond either end)"
            )
        return self.intercept + value * self.slope

    def generate(
        self, value: float, loops: int = 1, n_components: int | None = None, fps: float | None = None
    ) -> Motion:
        """A new cycle (looped ``loops`` times) for parameter ``value``, at ``fps`` (default the
        model's rate)."""
        raw = self.decode(self.vector(self.predict(value), n_components))
        return self.motion(raw, loops, self.fps if fps is None else fps)

    def reconstruct(self, index: int, n_components: int | None = None) -> Motion:
        """Training cycle ``index`` rebuilt from its first ``n_components`` coefficients, at N/duration fps."""
        return self.motion(self.decode(self.vector(self.coefficients[index], n_components)))


def cycle_speed(cycle: Cycle, up: np.ndarray, scale: float = 1.0) -> float:
    """Pelvis travel from strike to strike per second (horizontal), times ``scale``."""
    path = track(cycle.motion, up)
    return float(np.linalg.norm(horizontal(path.positions[-1] - path.positions[0], up)) * scale / cycle.duration)


def gather_cycles(
    motions: Sequence[Motion], parameters: Sequence[float] | str, n_frames: int, side: str | None, up: np.ndarray
) -> tuple[list[Cycle], np.ndarray]:
    """Cycles of all motions (on the first one's skeleton) and their parameter values (C,)."""
    sk, size = motions[0].skeleton, motions[0].skeleton.size()
    cycles, values = [], []
    for i, m in enumerate(motions):
        found = cut_cycles(conform(m, sk), n_frames, side, up, source=i)
        cycles += found
        if parameters == "speed":
            values += [cycle_speed(c, up, size / m.skeleton.size()) for c in found]
        else:
            values += [float(parameters[i])] * len(found)
    if len(cycles) < 2:
        raise ValueError(f"need at least two gait cycles, found {len(cycles)}")
    values = np.asarray(values)
    if np.ptp(values) <= 0:
        raise ValueError("the parameter must vary between cycles")
    return cycles, values


def principal_components(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean (F,), components (K, F), variances (K,) and coefficients (C, K) of vectors (C, F)."""
    mean = vectors.mean(axis=0)
    _, s, vt = np.linalg.svd(vectors - mean, full_matrices=False)
    keep = s > 1e-12 * max(s[0], 1e-300)
    components = vt[keep]
    return mean, components, s[keep] ** 2 / max(len(vectors) - 1, 1), (vectors - mean) @ components.T


def linear_fit(parameters: np.ndarray, coefficients: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares intercept and slope (K,) of coefficients (C, K) against parameters (C,)."""
    design = np.stack((np.ones_like(parameters), parameters), axis=1)
    (intercept, slope), *_ = np.linalg.lstsq(design, coefficients, rcond=None)
    return intercept, slope


def fit_cycle_pca(
    motions: Sequence[Motion],
    parameters: Sequence[float] | str = "speed",
    n_frames: int = 32,
    side: str | None = None,
    up: str | np.ndarray | None = None,
    close: bool = True,
    root_weight: float = 1.0,
) -> CyclePCA:
    """Fit the PCA cycle model (module notes) to similar cyclic motions.

    parameters: one value per motion, or ``"speed"`` (each cycle's own speed, first motion's
    units per second). n_frames: N, frames per normalised cycle. side: foot whose strikes cut
    the cycles (default "L"). close: make each cycle loop (step 2).
    """
    reference = motions[0]
    up = resolve_up(reference, up)
    cycles, values = gather_cycles(motions, parameters, n_frames, side, up)
    pelvis = pelvis_joint(reference)
    pose = ~ancestors(reference, pelvis)
    pose[pelvis] = False
    pose_joints = np.flatnonzero(pose)
    # Heights and velocities in each subject's own body sizes, decoded with the reference's.
    raws = [_raw(c, pose_joints, up, motions[c.source].skeleton.size(), close) for c in cycles]
    translations = np.mean([c.motion.translations.mean(axis=0) for c in cycles], axis=0)
    encoding = CycleEncoding(
        reference.skeleton,
        up,
        reference.skeleton.size(),
        n_frames,
        pose_joints,
        translations,
        mean_rotation(np.stack([r.rotations for r in raws])),
        root_weight,
    )
    mean, components, variances, coefficients = principal_components(np.stack([encoding.encode(r) for r in raws]))
    intercept, slope = linear_fit(values, coefficients)
    return CyclePCA(
        encoding, reference.fps, values, cycles, mean, components, variances, coefficients, intercept, slope
    )
