"""The balance plan's realisation (module step 2 of :mod:`.solve`): the plans of the solve, their shifts realised
and planted (:class:`_Batch`) and measured; the plan's objective and solver are :mod:`.balance`'s.

Balance plan (:mod:`.balance`): a smooth horizontal shift δ(t) of the placement joint, the
feet planted again, solved by Gauss–Newton on the exact ZMP and inverse-dynamics torques of
the shifted motion, so that the ZMP stays ``margin`` inside the support polygon and the
hip, knee, ankle and spine torques under their limits (the per-frame filter cannot foresee
the accelerations its own corrections cause; the plan sees them). The torques the plan sees
hold the double-support ground-force split of its reference motion (:mod:`.split`; re-solved
on every evaluation, the least split turns at kinks as the joints that bind change, and on the
jumps the plan's Gauss–Newton then stalled at a merit five times higher); every figure after
the plan is measured with the split solved anew. The reference motion is
the input with the plan applied. The shift's jerk (third differences of its controls,
``plan_jerk``) is penalised too: it adds to the motion's (on 02_01 the plans added 7 %
of the input's jerk, the final plan 6 % more; with the penalty 4.6 % in all, planting 0.8 %).
So is the shift's exact acceleration that the measures' 0.2 s derivative window does not see
(``plan_unseen``, :mod:`.balance`): without it the plans wiggled the shift at ~11 Hz, moving the
measured ZMP but not the real one (benchmark, CMU 131_01: jerk ×3.3 of the input's; the jumps'
ZMP inside 99.5 % with the 0.2 s window, 30 % re-measured with a 0.1 s one, the input 78 %).

Speed: the plans' Jacobians dominate. Each is C·D finite-difference columns (C colours, D = 2),
realised and measured in batches (:class:`_Batch`: the copies one after another, planted in one
call, analysed with ``clips``), and a plan computes one Jacobian for all its Gauss–Newton steps
(``plan_jacobian_every``); the colouring reach is two control spacings plus one derivative
window, the clip's first and last half-window of frames reaching from the centre of the
one-sided window they are differentiated on (exact: 11 colours at 120 fps instead of the 17 of
twice the window), leaving out planting's blend (a contact's last frame moves the swing frames
after it; measured on the four CMU clips of the benchmark, the plans with and without that
coupling in the reach agree to three decimals of every figure). The plans' evaluations leave the
angular momentum out, and the extra final plan (when the ZMP is still inside on fewer than
``zmp_target`` of the contact frames) starts from the last plan's Jacobian. A plan's evaluation carries its forward
kinematics: the reference's, shifted with the placement joint, planting recomputing only the legs it turns
(``forward_kinematics(known=)``), and the joints it does not turn keep the reference's angular velocities and spins
(``analyse(turned=)``); a plan's result is the motion its last evaluation realised.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts
from ..ik.plant import BLEND as PLANT_BLEND
from ..ik.plant import placement_joint
from ..kinematics import forward_kinematics
from ..limbs import limb_chain
from ..motion import Motion
from .balance import BalancePlan, Measures, PlanGoals, SolverOptions, plan_balance
from .body import BodyModel, G
from .derivatives import window_half
from .displacement import bspline_rows, evaluate_rows, n_controls
from .metrics import Analysis, analyse
from .options import PhysicsOptions
from .planting import _plant
from .support import to_ground
from .unexplained import unexplained

HOLD = 1e4  # deviation weight factor on frames the plans leave alone (the repair's pin at a window's ends)
MIN_PLAN_SPACING = 2.0  # frames at least between a plan's control points (at 30 fps 1/30 s would be every frame)
# A control every frame lets a plan's shift turn at the frame rate, where the measures' derivative
# window barely sees it and the jerk (third differences per frame) sees it most: on the Bandai walk
# (30 fps) the plans then took the motion's jerk to 2.39 of the input's, 1.25 with a control every
# second frame; at 120 fps 1/30 s is four frames and nothing changes.


def state_joints(body: BodyModel, spine_joints: int = 2) -> tuple[int, list[int]]:
    """The filter's placement joint (translated) and rotated joints: pelvis, spine, hips, knees, ankles."""
    sk = body.skeleton
    legs = [limb_chain(sk, j) for j in body.roles.get("ankle", [])]
    root = placement_joint(sk, legs) if legs else 0
    spine = body.roles.get("spine", [])
    spine = [spine[0], spine[-1]][:spine_joints] if len(spine) > 1 else spine[:spine_joints]
    joints = body.roles.get("pelvis", [root]) + spine
    joints += body.roles.get("hip", []) + body.roles.get("knee", []) + body.roles.get("ankle", [])
    return root, list(dict.fromkeys(int(j) for j in joints))


def _shift_root(motion: Motion, root: int, shift: np.ndarray, rot: np.ndarray | None = None) -> Motion:
    """The motion with the placement joint moved by world offsets (T, 3); rot: its world orientations (T, J, 4)
    when known."""
    out = motion.copy()
    parent = motion.skeleton.parents[root]
    if parent >= 0:
        if rot is None:
            rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)[1]
        shift = quat.rotate(quat.conjugate(rot[:, parent]), shift)
    out.translations[:, root] += shift
    return out


def _balance(
    ref: Motion,
    ref_an: Analysis,
    contacts: Contacts,
    feet: Contacts,
    body: BodyModel,
    opts: PhysicsOptions,
    measure: dict,
    progress,
    torque_boost: np.ndarray | None = None,
    jacobian: tuple[np.ndarray, np.ndarray] | None = None,
    vertical: bool = False,
    pin: np.ndarray | None = None,
    least: bool = True,
    hold: np.ndarray | None = None,
    toward: np.ndarray | None = None,
) -> tuple[Motion, BalancePlan]:
    """The balance plan of ``ref`` (module step 2) and the motion that realises it; torque_boost
    (T, L) multiplies the torque term's weight per joint-frame of the limited joints; jacobian: an
    earlier plan's of a nearby motion to start from (:attr:`.balance.BalancePlan.jacobian`);
    vertical: the shift moves the body up and down too (``repair_vertical``); pin (T,): multiplies the
    deviation weight per frame (large: the shift held at zero there); stretches without contact that
    do not fall (:func:`.unexplained.unexplained`: held by the hands or equipment) are held too,
    instead of the flight regulariser carrying the shift across them (on CMU 01_14 it carried 30 cm
    back over 1.4 s of sitting). hold (T,): the frames to hold instead — the input's held stretches
    (without it they are detected on ``ref``). ZMP runs beyond the feet are not held: the plans often
    bring such a ZMP in (a synthetic walk with its ZMP 0.6 m outside: 79 % inside after the solve,
    4 % with those runs held), and the report names the runs still beyond the feet afterwards. toward (T, 3):
    world offsets, scene units, the deviation term measures the shift from (:class:`.balance.PlanGoals`), zero on
    held frames."""
    if hold is None:  # held, not flying
        hold = unexplained(ref_an, body, ref.fps, reach=np.inf)[0]
    if hold.any():
        pin = np.where(hold, HOLD, 1.0) * (1.0 if pin is None else pin)
    sup = ref_an.support
    root = state_joints(body, opts.spine_joints)[0]
    limited = np.flatnonzero(np.isfinite(body.torque_limits))
    spacing = max(opts.plan_spacing * ref.fps, MIN_PLAN_SPACING)
    dims = 3 if vertical and opts.repair_vertical > 0 else 2
    axes = np.vstack((sup.basis, sup.up[None]))[:dims]  # the shift's axes: along the ground, then up
    deviation = np.full((ref.n_frames, dims), opts.plan_deviation)
    if dims == 3:
        deviation[:, 2] /= opts.repair_vertical
    if pin is not None:
        deviation *= pin[:, None]
    half = window_half(opts.smooth, ref.fps, 3) if opts.smooth > 0 else 1
    t = ref.n_frames
    if toward is not None:  # along the shift's axes; held frames are held where they are
        toward = toward @ axes.T
        if pin is not None:
            toward = np.where(pin[:, None] > 1.0, 0.0, toward)

    batch = _Batch(ref, root, feet, spacing, axes, opts.plant, ref_an.kin if ref_an.kin.smooth == opts.smooth else None)

    def realise(controls: np.ndarray) -> tuple[Motion, tuple[np.ndarray, np.ndarray]]:
        """The motion of one plan and its FK, made anew each time (the same values): the plan's result is realised
        once more at its end rather than its last evaluations kept (four of them, 14 kB a frame of clip)."""
        return batch.realise(controls[None])

    held = ref_an.dynamics.split if least else None  # the reference's split, held through the plan (smooth measures)

    def measures(realised: tuple) -> Measures:
        motion, world = realised
        an = analyse(
            motion, contacts, body, support=sup, momentum_about_com=False, split=held, least=least, world=world,
            turned=batch.turned(world, 1), **measure,
        )  # fmt: skip
        return Measures(to_ground(an.zmp, sup.basis), an.torques[:, limited])

    tiled: dict[int, object] = {}

    def measures_many(controls: np.ndarray) -> list[Measures]:
        e = len(controls)
        if e not in tiled:
            tiled[e] = sup.tiled(e)
        split = None if held is None else np.tile(held, (e, 1))
        motion, world = batch.realise(controls)
        an = analyse(
            motion, contacts, body, support=tiled[e], clips=e, momentum_about_com=False, split=split, least=least,
            world=world, turned=batch.turned(world, e), **measure,
        )  # fmt: skip
        zmp = to_ground(an.zmp, sup.basis).reshape(e, t, 2)
        tau = an.torques[:, limited].reshape(e, t, len(limited), 3)
        return [Measures(z, q) for z, q in zip(zmp, tau)]

    hu = body.height / body.unit
    plan = plan_balance(
        realise,
        measures,
        sup,
        body.torque_limits[limited],
        spacing,
        2 * spacing + half,
        PlanGoals(
            margin=opts.margin * hu,
            balance=opts.balance,
            torque_margin=opts.torque_margin,
            torque_weight=(opts.plan_torque_weight * hu * (1.0 if torque_boost is None else torque_boost))
            if opts.torques
            else 0.0,
            deviation=deviation,
            smoothness=opts.plan_smoothness,
            jerk=opts.plan_jerk,
            free_gain=0.55 * body.height / G,
            unseen=opts.plan_unseen,
            window=half if opts.smooth > 0 else 0,
            toward=toward,
        ),
        SolverOptions(iterations=opts.plan_iterations, eps=1e-3 * hu, jacobian_every=opts.plan_jacobian_every),
        fps=ref.fps,
        dims=dims,
        progress=progress,
        measure_many=measures_many,
        edge=half,
        jacobian=jacobian,
    )
    return realise(plan.controls)[0], plan


class _Batch:
    """Realise many balance plans of one reference motion at once: the shifted copies one after
    another (with still, contact-free gaps between them when the feet are planted, so planting's
    blends never reach across copies), planted in one call, the gaps dropped: a motion of E·T
    frames and its forward kinematics (the reference's, shifted where the placement joint moves
    it, the legs computed anew by planting)."""

    def __init__(
        self, ref: Motion, root: int, feet: Contacts, spacing: float, basis: np.ndarray, plant: bool, kin=None
    ) -> None:
        """kin: the reference's :class:`~.dynamics.Kinematics` (for :meth:`turned`), when known."""
        self.ref, self.root, self.feet, self.plant = ref, root, feet, plant
        t = ref.n_frames
        self.rows = bspline_rows(np.arange(t), n_controls(t, spacing), spacing)  # the shift's sparse basis
        self.ground = basis
        parent = ref.skeleton.parents[root]
        self.world = forward_kinematics(ref.skeleton, ref.translations, ref.rotations)
        self.moves = ref.skeleton.subtree(root)  # the joints a shift of the placement joint moves
        if len(self.moves) == ref.skeleton.n_joints:  # all of them (the root): a slice, not a gather and scatter
            self.moves = slice(None)
        self.to_local = None  # world → the placement joint's parent frame
        if parent >= 0:
            self.to_local = quat.conjugate(self.world[1][:, parent])
        self.gap = max(1, round(PLANT_BLEND * ref.fps)) + 2 if plant else 0
        self.tiled: dict[int, Contacts] = {}
        self.legs = [limb_chain(ref.skeleton, int(j)) for j in feet.joints] if plant else None  # planting's chains
        self.kin = kin if kin is not None and np.array_equal(kin.joint_rot, self.world[1]) else None

    def turned(self, world: tuple[np.ndarray, np.ndarray], e: int) -> tuple | None:
        """For :func:`.metrics.analyse`: the reference's kinematics and the joints (J,) whose world orientations
        in ``world`` (of E realised plans) are the reference's on every frame (planting turns the legs alone)."""
        if self.kin is None:
            return None
        j = self.world[1].shape[1]
        same = (world[1].reshape(e, self.ref.n_frames, j, 4) == self.world[1][None]).reshape(-1, j * 4)
        return self.kin, same.all(axis=0).reshape(j, 4).all(axis=1)  # rows first: 3× faster than over axes (0, 1, 3)

    def realise(self, controls: np.ndarray) -> tuple[Motion, tuple[np.ndarray, np.ndarray]]:
        """The motion (E·T frames) of plans ``controls`` (E, n, D) and its forward kinematics."""
        ref, e, t, g = self.ref, len(controls), self.ref.n_frames, self.gap
        moved_world = evaluate_rows(self.rows, controls) @ self.ground  # (E, T, 3) world
        shift = moved_world if self.to_local is None else quat.rotate(self.to_local[None], moved_world)
        span = t + g
        trans = np.empty((e, span, *ref.translations.shape[1:]))
        rot = np.empty((e, span, *ref.rotations.shape[1:]))
        trans[:, :t], rot[:, :t] = ref.translations, ref.rotations
        trans[:, t:], rot[:, t:] = ref.translations[-1], ref.rotations[-1]
        trans[:, :t, self.root] += shift
        trans[:, t:, self.root] += shift[:, -1:]
        moved = Motion(ref.skeleton, trans.reshape(e * span, -1, 3), rot.reshape(e * span, -1, 4), ref.fps)
        pos, orient = np.empty_like(trans), np.empty_like(rot)  # its forward kinematics: the reference's, shifted
        pos[:, :t], pos[:, t:] = self.world[0], self.world[0][-1]
        orient[:, :t], orient[:, t:] = self.world[1], self.world[1][-1]
        pos[:, :t, self.moves] += moved_world[:, :, None]
        pos[:, t:, self.moves] += moved_world[:, -1:, None]
        world = (pos.reshape(e * span, -1, 3), orient.reshape(e * span, -1, 4))
        if self.plant:
            if e not in self.tiled:  # the copies' contacts, the same for every batch of e plans
                f = self.feet
                flags = np.zeros((e, span, f.flags.shape[1]), dtype=bool)
                flags[:, :t] = f.flags
                anchors = np.zeros((e, span, *f.anchors.shape[1:]))
                anchors[:, :t] = f.anchors
                self.tiled[e] = replace(f, flags=flags.reshape(e * span, -1), anchors=anchors.reshape(e * span, -1, 3))
            moved, world = _plant(moved, self.tiled[e], world=world, with_world=True, legs=self.legs, in_place=True)
        if not g:
            return moved, world
        keep = (np.arange(e * span) % span) < t
        return moved.frames(keep), (world[0][keep], world[1][keep])
