"""The per-frame filter stage (module steps 3 and 4 of :mod:`.solve`): one plan → filter → smoothing pass
(:func:`_pass`): the flight shift and the balance plan make the reference, the filter (:class:`_Filter`, its goals
:class:`_Goals`) runs on its key frames (:func:`_keys`) and the smoothed displacements warp it.

3. Unscented Kalman filter, one step per key frame (``key_rate`` per second). State (reduced,
   to keep it fast): the placement joint's translation and the rotations of the pelvis (body
   root), up to ``spine_joints`` spine joints, hips, knees and ankles — 3 + 3·K tangent
   dimensions, typically K = 9 → 30, 61 sigma points, all pushed through forward kinematics
   at once. Prediction: the displacement-mapped reference frame, x_t = ref_t ⊕ ρ·(x_{t−1} ⊖
   ref_{t−1}) with ρ = exp(−Δt/``decay``) (displacements fade back to the reference), process
   noise ``sigma_root``, ``sigma_rotation`` per √s. Measurements ("goals", their noise being
   stiffness knobs): contact joints (feet, toes) at their anchors; the ZMP (moved as much as
   the CoM moves from the reference's) at the reference's ZMP projected into the polygon; torques
   of hips, knees, ankles and spine clamped to their limits (rows only for joints over
   ``1 − torque_margin`` of the limit; torques from a reduced, quasi-static measure: the
   reference frame's body forces and ground forces held fixed, moment arms from the sigma
   pose); in flight the CoM on a ballistic parabola bridging take-off and landing and the
   angular momentum about the CoM equal to its mean over the phase (reference velocities,
   sigma-pose arms and inertia).
   Stiffness (``stiffness`` s, default 1, one knob for both noise matrices): Q = Q₀/s and
   R = s·R₀, i.e. the process standard deviations divided by √s and every measurement's
   multiplied by √s. The Kalman gain follows the ratio of prior to measurement covariance,
   which s divides by s²: a stiffer filter keeps the pose closer to its prediction (the
   reference: the input with the balance plan and flight corrections), a softer one follows
   the per-frame goals further. Measured with the Retarget operator on CMU 02_01 retargeted
   1.4× (90 kg), s = 0.3 / 1 / 3: ZMP inside 90.7 / 99.4 / 99.4 % of contact frames,
   deviation 1.1 / 0.8 / 0.7 % of the stature, torque-limit frames 23 / 24 / 24.
4. Smoothing + displacement mapping: the filtered displacements at the key frames are fitted
   with a penalised cubic B-spline (control every key, ``smoothing`` the second-difference
   weight), which removes frame-to-frame jitter, and the reference motion is warped by it
   (q·exp(v/2), p + v) on every frame.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts
from ..kinematics import forward_kinematics
from ..motion import Motion
from .body import BodyModel, G
from .displacement import displace, displacement_curve
from .dynamics import body_torques, phase_momentum
from .flights import _flight_shift, airborne
from .metrics import Analysis, analyse, ballistic_bridge, ballistic_fit
from .options import PhysicsOptions
from .plan import _balance, _shift_root, state_joints
from .progress import as_progress
from .support import to_ground
from .ukf import MerweScaledSigmaPoints, UnscentedKalmanFilter, pose_arithmetic


class _Goals:
    """Per-frame measurement data of the reference motion, precomputed for the whole clip (vectorised)."""

    def __init__(self, ref: Motion, an: Analysis, contacts: Contacts, body: BodyModel, opts: PhysicsOptions, world):
        sk = body.skeleton
        self.input_world = world
        self.body, self.opts, self.contacts = body, opts, contacts
        self.height_units = body.height / body.unit
        sup = an.support
        self.basis = sup.basis
        self.com_ref2 = to_ground(an.com / body.unit, sup.basis)
        self.zmp_valid = sup.any & ~an.free_fall & opts.balance
        self.zmp_plan = np.where(self.zmp_valid[:, None], to_ground(an.zmp, sup.basis), 0.0)
        self.zmp_goal = np.where(self.zmp_valid[:, None], sup.project(self.zmp_plan, 0.0), 0.0)
        self.zmp_valid &= np.all(np.isfinite(self.zmp_goal), axis=1)  # a degenerate polygon (a toe box of no size)
        # Reduced torque measure: body and ground forces of the reference held fixed.
        limited = [j for r in ("hip", "knee", "ankle", "spine") for j in body.roles.get(r, [])]
        self.tau_joints = np.array(sorted(set(limited)), dtype=int)
        self.tau_limits = body.torque_limits[self.tau_joints]
        mask = np.array([sk.subtree(int(j)) for j in self.tau_joints]).reshape(-1, sk.n_joints)
        box_mask = mask[:, sup.joints].astype(float)
        self.mask = mask.astype(float)
        f = body.masses[:, None] * (an.kin.acc + G * body.up)
        gf, gp = an.dynamics.ground_forces, an.dynamics.ground_points * body.unit
        self.forces = f
        self.tau_a = np.einsum("aj,tjc->tac", self.mask, f) - np.einsum("ab,tbc->tac", box_mask, gf)
        self.tau_b = np.einsum("aj,tjc->tac", self.mask, body_torques(an.kin)) - np.einsum(
            "ab,tbc->tac", box_mask, np.cross(gp, gf)
        )
        self.tau_on = opts.torques & sup.any
        self._feet(ref, an, contacts, body, opts)
        self._flight(ref, an, body, opts)

    def _feet(self, ref: Motion, an: Analysis, contacts: Contacts, body: BodyModel, opts: PhysicsOptions) -> None:
        """Contact-joint goals (T, F, 3) and weights (T, F): where the contact joints of the pass's
        input are (already planted by :func:`core.ik.plant_feet`), i.e. before the balance shift."""
        self.foot_goal = self.input_world[:, contacts.joints]
        self.foot_weight = contacts.flags.astype(float)

    def _flight(self, ref: Motion, an: Analysis, body: BodyModel, opts: PhysicsOptions) -> None:
        t = ref.n_frames
        self.com_goal = np.full((t, 3), np.nan)
        self.momentum_goal = np.full((t, 3), np.nan)
        self.vel, self.omega = an.kin.vel, an.kin.omega
        if not opts.flight:
            return
        for start, stop in airborne(an):
            if start > 0 and stop < t:
                path = ballistic_bridge(an.com[start - 1], an.com[stop], stop - start + 2, ref.fps, body.up)[1:-1]
            else:
                path = ballistic_fit(an.com[start:stop], ref.fps, body.up)
            self.com_goal[start:stop] = path
            self.momentum_goal[start:stop] = phase_momentum(an.kin, body, start, stop).mean(axis=0)


class _Filter:
    """The per-key-frame UKF of module step 3 on a reference motion."""

    def __init__(self, ref: Motion, goals: _Goals, body: BodyModel, opts: PhysicsOptions):
        self.ref, self.goals, self.body, self.opts = ref, goals, body, opts
        self.root, self.joints = state_joints(body, opts.spine_joints)
        k = len(self.joints)
        self.n = 3 + 3 * k
        self.add, self.residual, mean = pose_arithmetic(3, k)
        points = MerweScaledSigmaPoints(self.n, opts.alpha, opts.beta, opts.kappa)
        self.ukf = UnscentedKalmanFilter(points, self.add, self.residual, mean, self._limit)
        self.max_root = opts.max_root_step * goals.height_units
        self.max_rotation = opts.max_rotation_step
        self.ref_state = np.concatenate(
            (ref.translations[:, self.root], ref.rotations[:, self.joints].reshape(ref.n_frames, 4 * k)), axis=1
        )
        h = goals.height_units
        rate = np.concatenate((np.full(3, (opts.sigma_root * h) ** 2), np.full(3 * k, opts.sigma_rotation**2)))
        self.q_rate = np.diag(rate) / opts.stiffness

    def _limit(self, step: np.ndarray) -> np.ndarray:
        """Trust region: the root moves at most ``max_root_step`` heights, each joint turns at most
        ``max_rotation_step`` radians per update (a far goal is then reached over several keys)."""
        step = step.copy()
        n = np.linalg.norm(step[:3])
        if n > self.max_root:
            step[:3] *= self.max_root / n
        rot = step[3:].reshape(-1, 3)
        n = np.linalg.norm(rot, axis=1, keepdims=True)
        step[3:] = (rot * np.minimum(1.0, self.max_rotation / np.maximum(n, 1e-12))).ravel()
        return step

    def run(self, keys: np.ndarray, progress: Callable[[float], None] | None = None) -> np.ndarray:
        """Filtered states (K, 3 + 4k) at the key frames; ``progress`` gets the share done now and then."""
        fps = self.ref.fps
        x = self.ref_state[keys[0]].copy()
        P = self.q_rate * self.opts.decay / 2
        out = np.empty((len(keys), x.size))
        prev = keys[0]
        for i, t in enumerate(keys):
            if i:
                dt = (t - prev) / fps
                rho = np.exp(-dt / self.opts.decay)
                ref_t, ref_p = self.ref_state[t], self.ref_state[prev]
                x, P = self.ukf.predict(
                    x, P, lambda s, a=ref_t, b=ref_p, r=rho: self.add(a, r * self.residual(s, b)), self.q_rate * dt
                )
            x, P = self._update(int(t), x, P)
            out[i] = x
            prev = t
            if progress is not None:
                progress((i + 1) / len(keys))
        return out

    def _pose(self, t: int, sigmas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World positions (S, J, 3) and rotations (S, J, 4) of the sigma poses at frame t."""
        s = len(sigmas)
        trans = np.repeat(self.ref.translations[t][None], s, axis=0)
        rot = np.repeat(self.ref.rotations[t][None], s, axis=0)
        trans[:, self.root] = sigmas[:, :3]
        rot[:, self.joints] = sigmas[:, 3:].reshape(s, len(self.joints), 4)
        return forward_kinematics(self.ref.skeleton, trans, rot)

    def _update(self, t: int, x: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g, body, opts = self.goals, self.body, self.opts
        sigmas = self.ukf.points.sigma_points(x, P, self.add)
        pos, rot = self._pose(t, sigmas)
        com_parts = pos + quat.rotate(rot, body.com_local)  # scene units
        com = np.einsum("j,sjc->sc", body.masses, com_parts) / body.mass
        h_rows, z_rows, r_rows = [], [], []
        hu = g.height_units

        def rows(h: np.ndarray, z: np.ndarray, sigma: float | np.ndarray) -> None:
            z = np.asarray(z, dtype=float)
            h_rows.append(h.reshape(len(sigmas), -1))
            z_rows.append(z.ravel())
            r_rows.append(np.broadcast_to(np.asarray(sigma, dtype=float) ** 2, z.shape).ravel())

        on = g.foot_weight[t] > 0.01
        if on.any():
            sigma = opts.sigma_contact * hu / g.foot_weight[t, on][:, None]
            rows(pos[:, g.contacts.joints[on]], g.foot_goal[t, on], sigma)
        if g.zmp_valid[t]:
            moved = to_ground(com, g.basis) - g.com_ref2[t]
            rows(g.zmp_plan[t] + moved, g.zmp_goal[t], opts.sigma_zmp * hu)
        if g.tau_on[t] and len(g.tau_joints):
            self._torque_rows(t, pos, com_parts, rows)
        if np.isfinite(g.com_goal[t, 0]):
            rows(com, g.com_goal[t] / body.unit, opts.sigma_flight * hu)
            rows(
                self._momentum(t, com_parts, com, rot),
                g.momentum_goal[t],
                opts.sigma_momentum * body.mass * body.height**2,
            )
        if not h_rows:
            return x, P
        h = np.concatenate(h_rows, axis=1)
        z = np.concatenate(z_rows)
        use = np.isfinite(z) & np.all(np.isfinite(h), axis=0)  # a goal that cannot be measured is left out
        if not use.any():
            return x, P
        r = np.diag(np.concatenate(r_rows)[use]) * opts.stiffness
        return self.ukf.update_sigmas(x, P, sigmas, h[:, use], z[use], r)

    def _torque_rows(self, t: int, pos: np.ndarray, com_parts: np.ndarray, rows) -> None:
        g, u = self.goals, self.body.unit
        tau = (
            np.einsum("aj,sjc->sac", g.mask, quat.cross(com_parts * u, g.forces[t]))
            + g.tau_b[t]
            - quat.cross(pos[:, g.tau_joints] * u, g.tau_a[t])
        )
        norm = np.linalg.norm(tau[0], axis=-1)
        over = norm > (1.0 - self.opts.torque_margin) * g.tau_limits
        if over.any():
            scale = np.minimum(1.0, (1.0 - self.opts.torque_margin) * g.tau_limits[over] / norm[over])
            rows(tau[:, over], tau[0, over] * scale[:, None], self.opts.sigma_torque * g.tau_limits[over][:, None])

    def _momentum(self, t: int, com_parts: np.ndarray, com: np.ndarray, rot: np.ndarray) -> np.ndarray:
        """Angular momentum about the CoM (S, 3) with the reference velocities and the sigma poses' arms."""
        g, body = self.goals, self.body
        v = g.vel[t] - np.einsum("j,jc->c", body.masses, g.vel[t]) / body.mass
        arms = (com_parts - com[:, None]) * body.unit
        r = quat.to_matrix(rot)
        inertia = r @ body.inertia_local @ np.swapaxes(r, -1, -2)
        spin = np.einsum("sjab,jb->sa", inertia, g.omega[t])
        return np.einsum("j,sjc->sc", body.masses, quat.cross(arms, v)) + spin


def _keys(n_frames: int, fps: float, rate: float) -> tuple[np.ndarray, int]:
    stride = max(int(round(fps / rate)), 1)
    keys = np.arange(0, n_frames, stride)
    if keys[-1] != n_frames - 1:
        keys = np.append(keys, n_frames - 1)
    return keys, stride


PLAN_SHARE = 0.8  # of a pass's time, the balance plan's (for progress reports)


def _pass(
    motion: Motion, an: Analysis, contacts, feet, body, opts, measure, keys, stride, progress, hold=None
) -> Motion:
    """One plan → filter → smoothing pass on ``motion`` (analysed as ``an``); progress: share of the pass
    done, reported after every evaluation of the clip."""
    step = as_progress(progress)
    ref, ref_an = motion, an
    root = state_joints(body, opts.spine_joints)[0]
    flight = _flight_shift(an, body, motion.fps, opts.flight_blend) if opts.flight else None
    if flight is not None:
        ref = _shift_root(ref, root, flight / body.unit)
        ref_an = analyse(ref, contacts, body, **measure)
        step(0.01)
    if opts.balance or opts.torques:
        ref, _ = _balance(ref, ref_an, contacts, feet, body, opts, measure, step.span(0.01, PLAN_SHARE), hold=hold)
        ref_an = analyse(ref, contacts, body, **measure)
    step(PLAN_SHARE)
    goals = _Goals(ref, ref_an, contacts, body, opts, an.kin.joint_pos / body.unit)
    filt = _Filter(ref, goals, body, opts)
    states = filt.run(keys, step.span(PLAN_SHARE, 0.98))
    shifts = filt.residual(states, filt.ref_state[keys])
    spacing = max(float(stride), opts.spline_spacing * motion.fps)
    curve = displacement_curve(keys, shifts, motion.n_frames, spacing=spacing, smoothness=opts.smoothing)
    t_off = np.zeros_like(motion.translations)
    r_off = np.zeros_like(motion.translations)
    t_off[:, filt.root] = curve[:, :3]
    r_off[:, filt.joints] = curve[:, 3:].reshape(motion.n_frames, len(filt.joints), 3)
    return displace(ref, t_off, r_off)
