"""Physics layer: body model, derivatives, support polygons, ZMP, inverse dynamics, displacement
mapping, the UKF (against filterpy) and the physics-aware retargeting driver."""

import os

import numpy as np
import pytest
from scipy.interpolate import BSpline, make_lsq_spline
from scipy.signal import savgol_filter
from scipy.spatial import ConvexHull

from core import quaternion as quat
from core import synthetic
from core.motion import Motion
from core.physics.body import BodyModel, G, body_model
from core.physics.derivatives import savgol
from core.physics.displacement import (
    bspline_basis,
    bspline_rows,
    displace,
    displacement_between,
    displacement_curve,
    evaluate_rows,
    fit_controls,
    knots,
)
from core.physics.dynamics import center_of_mass, inverse_dynamics, momentum, segment_kinematics, zmp
from core.physics.support import convex_hull, hull_chain, hull_edges, polygon_query, project_inside
from core.physics.ukf import MerweScaledSigmaPoints, UnscentedKalmanFilter, pose_arithmetic
from core.skeleton import Skeleton

Z = np.array([0.0, 0.0, 1.0])
UP = np.array([0.0, 1.0, 0.0])


def static(skeleton: Skeleton, n: int = 40, fps: float = 60.0) -> Motion:
    return Motion.rest(skeleton, n, fps)


# --- body model -------------------------------------------------------------------------------


@pytest.mark.parametrize("sex", ["male", "female"])
def test_body_masses_sum_to_total_and_limbs_are_mapped(sex):
    body = body_model(synthetic.humanoid(), 83.0, height=1.8, sex=sex)
    assert body.masses.sum() == pytest.approx(83.0)
    assert body.missing == []
    sk = body.skeleton
    for name, joint in (("thigh_L", "LeftUpLeg"), ("shank_R", "RightLeg"), ("hand_L", "LeftHand"), ("head", "Head")):
        assert sk.names[body.segments[name]] == joint
    assert body.masses[sk.index("LeftUpLeg")] == pytest.approx(body.masses[sk.index("RightUpLeg")])
    assert body.masses[sk.index("LeftShoulder")] == 0.0  # clavicles carry no mass
    assert body.unit * 1.7 == pytest.approx(1.8)  # the humanoid is 1.7 scene units tall
    eig = np.linalg.eigvalsh(body.inertia_local[body.masses > 0])
    assert np.all(eig > 0)


def test_body_thigh_com_and_inertia_follow_de_leva():
    sk = synthetic.humanoid()
    body = body_model(sk, 70.0, unit=1.0)
    thigh = sk.index("LeftUpLeg")
    length = np.linalg.norm(sk.rest_translations[sk.index("LeftLeg")])
    assert body.masses[thigh] == pytest.approx(70.0 * 0.1416)
    np.testing.assert_allclose(body.com_local[thigh], 0.4095 * sk.rest_translations[sk.index("LeftLeg")])
    # Longitudinal axis of the thigh is Y in the rest pose: I_yy = m (r_long L)².
    assert body.inertia_local[thigh][1, 1] == pytest.approx(70.0 * 0.1416 * (0.149 * length) ** 2)


def test_body_model_on_real_skeletons():
    from core.io.bvh import read_bvh
    from tests.conftest import shared_file

    for rel, unit in (
        ("cmu_bvh_cgspeed/02_01.bvh", 0.0254 / 0.45),
        ("bandai_namco_1/dataset-1_walk_normal_001.bvh", 0.01),
    ):
        sk = read_bvh(shared_file(rel)).skeleton
        body = body_model(sk, 60.0, unit=unit)
        assert body.masses.sum() == pytest.approx(60.0)
        assert body.missing == []
        assert 1.3 < body.height < 1.9
        assert len(body.roles["spine"]) >= 2  # the trunk is split over several spine joints


def test_com_of_symmetric_t_pose_on_mid_plane():
    sk = synthetic.humanoid()
    body = body_model(sk, 70.0, height=1.7)
    kin = segment_kinematics(static(sk), body)
    com = center_of_mass(kin, body)
    assert np.abs(com[:, 0]).max() < 1e-12  # left is +X, right −X
    assert 0.8 < com[0, 1] < 1.2  # a little above the hips (0.95 m)


# --- derivatives and support polygons -----------------------------------------------------------


@pytest.mark.parametrize(("half", "order", "deriv"), [(1, 2, 1), (1, 2, 2), (6, 3, 0), (6, 3, 1), (6, 3, 2)])
def test_savgol_matches_scipy(half, order, deriv):
    x = np.random.default_rng(0).normal(size=(40, 3, 2))
    ref = savgol_filter(x, 2 * half + 1, order, deriv=deriv, delta=0.05, axis=0, mode="interp")
    np.testing.assert_allclose(savgol(x, half, order, deriv, 0.05), ref, atol=1e-9)


def cross_2d(u: np.ndarray, v: np.ndarray) -> float:
    """z of the cross product of two 2-D vectors (numpy 2 refuses np.cross on 2-vectors)."""
    return float(u[0] * v[1] - u[1] * v[0])


def test_hulls_and_polygon_queries_match_scipy():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(60, 8, 2))
    active = rng.random((60, 8)) < 0.7
    active[:, :3] = True
    q = rng.normal(size=(60, 2))
    end, valid = hull_chain(points, hull_edges(points, active))
    inside, signed, nearest = polygon_query(points, end, valid, q)
    for t in range(60):
        pts = points[t][active[t]]
        ref = pts[ConvexHull(pts).vertices]
        mine = convex_hull(pts)
        assert len(mine) == len(ref) and {tuple(p) for p in mine} == {tuple(p) for p in ref}
        segs = [(a, b) for a, b in zip(ref, np.roll(ref, -1, axis=0))]
        d = min(
            np.linalg.norm(q[t] - (a + np.clip((q[t] - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1) * (b - a)))
            for a, b in segs
        )
        # scipy's 2-D hull is counter-clockwise: inside is left of every edge (2-D cross product ≥ 0)
        inside_ref = all(cross_2d(b - a, q[t] - a) >= 0 for a, b in segs)
        assert inside[t] == inside_ref  # the queries are ≥ 0.027 from every edge: no float tie
        assert abs(signed[t]) == pytest.approx(d, abs=1e-12)
        assert np.linalg.norm(nearest[t] - q[t]) == pytest.approx(max(signed[t], 0.0), abs=1e-12)
    moved = project_inside(points, end, valid, q, margin=0.0)
    assert polygon_query(points, end, valid, moved)[1].max() < 1e-9


# --- ZMP, momentum, inverse dynamics ------------------------------------------------------------


def test_zmp_equals_com_projection_for_a_static_pose():
    sk = synthetic.humanoid()
    m = static(sk)
    m.rotations[:, sk.index("LeftUpLeg")] = quat.from_axis_angle(np.array([1.0, 0, 0]), -0.6)  # leg forward
    m.rotations[:, sk.index("Spine")] = quat.from_axis_angle(np.array([0, 0, 1.0]), 0.3)  # lean sideways
    body = body_model(sk, 70.0, unit=1.0)
    kin = segment_kinematics(m, body)
    p, flag = zmp(kin, body, ground=0.0)
    com = center_of_mass(kin, body)
    assert not flag.any()
    np.testing.assert_allclose(p[:, [0, 2]], com[:, [0, 2]], atol=1e-12)
    np.testing.assert_allclose(p[:, 1], 0.0, atol=1e-12)
    linear, angular = momentum(kin, body)
    assert np.abs(linear).max() < 1e-9 and np.abs(angular).max() < 1e-9


def test_torque_causes_name_gravity_for_a_pose_held_still_and_the_clip_edges():
    """A still pose over a (lowered) limit is over it by gravity alone; a limit only the motion's
    accelerations exceed is named by where it is: near the clip's ends, or the dynamics."""
    from core.contacts import detect_contacts
    from core.physics.metrics import analyse, torque_causes
    from core.physics.planting import with_toes

    sk = synthetic.humanoid()
    m = static(sk)
    m.rotations[:, sk.index("LeftUpLeg")] = quat.from_axis_angle(np.array([1.0, 0, 0]), -0.6)  # leg forward
    body = body_model(sk, 70.0, unit=1.0)
    contacts = with_toes(m, detect_contacts(m))
    an = analyse(m, contacts, body)
    ratio = np.linalg.norm(an.torques, axis=-1) / body.torque_limits
    assert np.nanmax(np.where(np.isfinite(body.torque_limits), ratio, 0)) < 1.0
    assert torque_causes(an, body, edge=3) == []
    hip = sk.index("LeftUpLeg")
    body.torque_limits[hip] = 0.5 * np.linalg.norm(an.torques[:, hip], axis=-1).min()
    an = analyse(m, contacts, body)  # the double-support split depends on the limits: the least worst ratio
    causes = torque_causes(an, body, edge=3)
    assert len(causes) == m.n_frames and {c["cause"] for c in causes} == {"gravity alone"}
    assert all(c["joint"] == "LeftUpLeg" and c["static"] == pytest.approx(c["ratio"]) for c in causes)
    body.torque_limits[hip] = 2.0 * np.linalg.norm(an.torques[:, hip], axis=-1).max()
    fake = an._replace(
        dynamics=an.dynamics._replace(torques=an.torques * np.where(np.arange(m.n_frames) % 2, 3.0, 1.0)[:, None, None])
    )
    causes = torque_causes(fake, body, edge=3)
    frames = {c["frame"]: c["cause"] for c in causes}  # one entry per frame over a limit
    assert set(frames) == set(range(1, m.n_frames, 2)) and len(causes) == len(frames)
    assert frames[1] == "clip edge" and frames[m.n_frames - 1] == "clip edge" and frames[11] == "dynamics"


def test_zmp_is_nan_and_flagged_in_free_fall():
    sk = synthetic.humanoid()
    m = static(sk, 60, 60.0)
    t = np.arange(60) / 60.0
    m.translations[:, 0] += np.stack((0.8 * t, 2.0 * t - 0.5 * G * t**2, 0.3 * t), axis=-1)
    m.rotations[:, 0] = quat.from_axis_angle(np.array([1.0, 0, 0]), 1.5 * t)  # tumbling at constant ω
    body = body_model(sk, 70.0, unit=1.0)
    kin = segment_kinematics(m, body)
    p, flag = zmp(kin, body, ground=0.0)
    assert flag.all() and np.isnan(p).all()


def pendulum(n=2000, fps=1000.0):
    """A rod swinging about a fixed pivot (about Z) and its hand-derived torque τ = (I + m l²) θ̈ + m g l sin θ."""
    m, length, lc, ic = 2.0, 1.0, 0.6, 0.05
    t = np.arange(n) / fps
    th = 0.8 * np.sin(2.3 * t) + 0.2 * np.sin(5 * t)
    thdd = -0.8 * 2.3**2 * np.sin(2.3 * t) - 0.2 * 25 * np.sin(5 * t)
    sk = Skeleton(["Pivot", "Tip"], [-1, 0], [[0, 0, 0], [0, -length, 0]])
    motion = Motion.rest(sk, n, fps)
    motion.rotations[:, 0] = quat.from_axis_angle(Z, th)
    body = BodyModel(
        sk, m, 1.0, 1.0, UP, np.array([m, 0.0]), np.array([[0, -lc, 0], [0, 0, 0.0]]),
        np.array([ic * np.eye(3), np.zeros((3, 3))]), np.array([np.inf, np.inf]),
    )  # fmt: skip
    return motion, body, (ic + m * lc**2) * thdd + m * G * lc * np.sin(th)


def test_inverse_dynamics_matches_a_hand_derived_pendulum():
    motion, body, ref = pendulum()
    kin = segment_kinematics(motion, body, smooth=0.0)
    tau = inverse_dynamics(kin, body).torques[:, 0]
    np.testing.assert_allclose(tau[1:-1, 2], ref[1:-1], atol=1e-4 * np.abs(ref).max())  # one-sided ends
    assert np.abs(tau[:, :2]).max() < 1e-9


def test_inverse_dynamics_matches_a_hand_derived_two_link_arm():
    """Planar two-link arm (angles from +X about Z, gravity −Y), Spong's closed-form M(q)q̈ + C(q, q̇)q̇ + G(q)."""
    fps, n = 1000.0, 1500
    t = np.arange(n) / fps
    m1, m2, l1, lc1, lc2, i1, i2 = 3.0, 1.5, 0.5, 0.25, 0.2, 0.06, 0.02
    q1, q1d, q1dd = 0.5 * np.sin(3 * t) - 0.3, 1.5 * np.cos(3 * t), -4.5 * np.sin(3 * t)
    q2, q2d, q2dd = 0.7 + 0.6 * np.sin(4 * t), 2.4 * np.cos(4 * t), -9.6 * np.sin(4 * t)
    sk = Skeleton(["Shoulder", "Elbow", "Hand"], [-1, 0, 1], [[0, 0, 0], [l1, 0, 0], [0.4, 0, 0]])
    motion = Motion.rest(sk, n, fps)
    motion.rotations[:, 0] = quat.from_axis_angle(Z, q1)
    motion.rotations[:, 1] = quat.from_axis_angle(Z, q2)
    inertia = np.array([np.diag([0.01, i1, i1]), np.diag([0.01, i2, i2]), np.zeros((3, 3))])
    body = BodyModel(
        sk, m1 + m2, 1.0, 1.0, UP, np.array([m1, m2, 0.0]), np.array([[lc1, 0, 0], [lc2, 0, 0], [0, 0, 0]]),
        inertia, np.full(3, np.inf),
    )  # fmt: skip
    c2, s2 = np.cos(q2), np.sin(q2)
    m11 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + i1 + i2
    m12 = m2 * (lc2**2 + l1 * lc2 * c2) + i2
    m22 = m2 * lc2**2 + i2
    h = -m2 * l1 * lc2 * s2
    g1 = (m1 * lc1 + m2 * l1) * G * np.cos(q1) + m2 * lc2 * G * np.cos(q1 + q2)
    g2 = m2 * lc2 * G * np.cos(q1 + q2)
    tau1 = m11 * q1dd + m12 * q2dd + h * q2d**2 + 2 * h * q1d * q2d + g1
    tau2 = m12 * q1dd + m22 * q2dd - h * q1d**2 + g2
    tau = inverse_dynamics(segment_kinematics(motion, body, smooth=0.0), body).torques
    scale = max(np.abs(tau1).max(), np.abs(tau2).max())
    np.testing.assert_allclose(tau[5:-5, 0, 2], tau1[5:-5], atol=1e-4 * scale)
    np.testing.assert_allclose(tau[5:-5, 1, 2], tau2[5:-5], atol=1e-4 * scale)


# --- displacement mapping ---------------------------------------------------------------------


def test_bspline_basis_matches_scipy_least_squares():
    n, spacing = 49, 4.0
    x = np.arange(n, dtype=float)
    y = np.sin(x / 7.0) + 0.1 * np.cos(x)
    ref = make_lsq_spline(x, y, knots(n, spacing), k=3)
    controls = fit_controls(x, y, n, spacing, smoothness=0.0)
    np.testing.assert_allclose(controls, ref.c, atol=1e-8)
    np.testing.assert_allclose(bspline_basis(x, len(controls), spacing, 2) @ controls, ref(x, 2), atol=1e-8)


def test_spline_on_sparse_rows_equals_the_dense_basis_product():
    """evaluate_rows (four controls a frame) gives the spline of every plan in a batch (E, n, D) as the dense
    basis does, at the clip's ends too (where the last controls act), and scipy's spline through those controls."""
    n_frames, spacing = 61, 4.0
    frames = np.arange(n_frames)
    rows = bspline_rows(frames, 18, spacing)
    controls = np.random.default_rng(5).normal(size=(3, 18, 2))
    dense = np.einsum("tn,end->etd", bspline_basis(frames, 18, spacing), controls)
    np.testing.assert_allclose(evaluate_rows(rows, controls), dense, rtol=1e-13, atol=1e-13)
    ref = BSpline(knots(n_frames, spacing), controls[1], 3)(frames)
    np.testing.assert_allclose(evaluate_rows(rows, controls[1]), ref, atol=1e-10)


def test_displacement_interpolates_sparse_offsets_and_is_smooth():
    n = 200
    keys = np.array([0, 30, 55, 90, 140, 199])
    values = np.random.default_rng(1).normal(size=(6, 3))
    curve = displacement_curve(keys, values, n, spacing=10.0)
    np.testing.assert_allclose(curve[keys], values, atol=1e-4)
    # Smooth: bounded second differences, no kinks (C² cubic).
    assert np.abs(np.diff(curve, 2, axis=0)).max() < 0.05
    assert np.abs(np.diff(curve, 3, axis=0)).max() < 0.01


def test_displace_keeps_detail_and_round_trips():
    walk = synthetic.walk(120)
    offsets = np.zeros((120, walk.skeleton.n_joints, 3))
    offsets[:, 0] = displacement_curve([0, 60, 119], np.array([[0, 0, 0], [0.1, -0.05, 0], [0, 0, 0.0]]), 120)
    rot = np.zeros_like(offsets)
    rot[:, 1] = displacement_curve([0, 119], np.array([[0, 0, 0.2], [0.1, 0, 0]]), 120)
    warped = displace(walk, offsets, rot)
    t, r = displacement_between(walk, warped)
    np.testing.assert_allclose(t, offsets, atol=1e-12)
    np.testing.assert_allclose(r, rot, atol=1e-9)


# --- unscented Kalman filter --------------------------------------------------------------------


def _fx(x, dt):
    return np.array([x[0] + dt * x[2], x[1] + dt * x[3], x[2] * np.cos(0.1 * x[1]), x[3] + 0.05 * np.sin(x[0])])


def _hx(x):
    return np.array([np.hypot(x[0] - 1, x[1] + 2), np.arctan2(x[1] + 2, x[0] - 1), x[2] * x[3]])


def test_ukf_matches_filterpy():
    if os.environ.get("CI"):
        import filterpy  # noqa: F401  (pinned in requirements-dev.txt: never skipped in CI)
    kalman = pytest.importorskip("filterpy.kalman", reason="filterpy (requirements-dev.txt) not installed")
    dt = 0.1
    points = kalman.MerweScaledSigmaPoints(4, alpha=0.3, beta=2.0, kappa=0.5)
    ref = kalman.UnscentedKalmanFilter(4, 3, dt, _hx, _fx, points)
    ref.x = np.array([0.5, 0.2, 1.0, -0.3])
    ref.P = np.diag([0.3, 0.2, 0.1, 0.2])
    ref.Q = 0.01 * np.eye(4)
    ref.R = np.diag([0.05, 0.01, 0.02])
    ukf = UnscentedKalmanFilter(MerweScaledSigmaPoints(4, 0.3, 2.0, 0.5))
    x, P = ref.x.copy(), ref.P.copy()
    rng = np.random.default_rng(0)
    for k in range(25):
        z = _hx(np.array([0.5 + 0.1 * k, 0.2, 1.0, -0.3])) + 0.1 * rng.normal(size=3)
        ref.predict()
        x, P = ukf.predict(x, P, lambda s: np.array([_fx(v, dt) for v in s]), ref.Q)
        np.testing.assert_allclose(x, ref.x, atol=1e-8)
        np.testing.assert_allclose(P, ref.P, atol=1e-8)
        ref.update(z)
        x, P = ukf.update(x, P, z, lambda s: np.array([_hx(v) for v in s]), ref.R)
        np.testing.assert_allclose(x, ref.x, atol=1e-8)
        np.testing.assert_allclose(P, ref.P, atol=1e-8)


def test_ukf_pose_arithmetic_recovers_a_rotation_from_positions():
    """A quaternion state observed through the points it rotates converges to the true rotation."""
    add, residual, mean = pose_arithmetic(0, 1)
    truth = quat.from_axis_angle(np.array([0.3, 1.0, -0.2]), 1.1)
    marks = np.eye(3)
    ukf = UnscentedKalmanFilter(MerweScaledSigmaPoints(3, 0.5), add, residual, mean)
    x = quat.identity()
    hx = lambda s: quat.rotate(s[:, None, :], marks).reshape(len(s), -1)  # noqa: E731
    for _ in range(8):  # iterated: the prior spread is restored before each update
        x, _ = ukf.update(x, 0.1 * np.eye(3), quat.rotate(truth, marks).ravel(), hx, 1e-6 * np.eye(9))
    assert quat.distance(x, truth) < 1e-4
    np.testing.assert_allclose(residual(add(x, np.array([0.1, -0.2, 0.05])), x), [0.1, -0.2, 0.05], atol=1e-12)


# --- physics-aware retargeting ------------------------------------------------------------------


def test_physics_retarget_balances_a_scaled_real_walk():
    from core.contacts import detect_contacts
    from core.io.bvh import read_bvh
    from core.physics.solve import physics_retarget
    from tests.conftest import shared_file

    source = read_bvh(shared_file("cmu_bvh_cgspeed/05_01.bvh")).frames(slice(1, 360))  # frame 0: T-pose
    motion = source.scaled(1.4)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45)
    out, rep = physics_retarget(motion, detect_contacts(motion), body)
    before, after = rep["before"], rep["after"]
    assert after["zmp_inside_share"] >= 0.95 > before["zmp_inside_share"]
    assert after["torque_worst_ratio"] < before["torque_worst_ratio"]
    assert after["deviation"] < 0.02  # mean joint error under 2 % of the stature
    assert out.n_frames == motion.n_frames and rep["frames_per_second"] > 0  # speed: scripts/benchmark_physics.py


def test_physics_retarget_balances_real_jumps_and_lowers_their_torques():
    """CMU 01_01 (jumps) retargeted 1.4× onto 90 kg: balance, ballistic flight and torques all improve."""
    from core.contacts import detect_contacts
    from core.io.bvh import read_bvh
    from core.physics.solve import physics_retarget
    from tests.conftest import shared_file

    source = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 500))
    motion = source.scaled(1.4)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45)
    out, rep = physics_retarget(motion, detect_contacts(motion), body)
    before, after = rep["before"], rep["after"]
    assert before["flight_phases"] >= 2 and after["flight_phases"] == before["flight_phases"]
    assert after["zmp_inside_share"] >= 0.95 > before["zmp_inside_share"]
    assert after["flight_error_m"] < 0.001 < before["flight_error_m"]  # the CoM on its parabola within 1 mm
    assert after["flight_momentum_change"] < 0.7 * before["flight_momentum_change"]
    assert after["torque_violation_frames"] < 0.75 * before["torque_violation_frames"]
    assert after["torque_worst_ratio"] < before["torque_worst_ratio"]
    assert after["deviation"] < 0.02


def test_physics_torque_constraint_holds_on_a_real_walk():
    """CMU 05_01 retargeted 1.4× onto 90 kg, frames over a torque limit in the input (planting the
    feet and filtering used to raise such torques): re-measured by inverse dynamics on the returned
    motion, no frame over a limit is worse than the input's, and every joint-frame that is would be
    named."""
    from core.contacts import detect_contacts
    from core.io.bvh import read_bvh
    from core.physics.dynamics import torque_ratios
    from core.physics.metrics import analyse
    from core.physics.planting import with_toes
    from core.physics.solve import physics_retarget
    from tests.conftest import shared_file

    motion = read_bvh(shared_file("cmu_bvh_cgspeed/05_01.bvh")).frames(slice(1, 300)).scaled(1.4)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45)
    contacts = detect_contacts(motion)
    out, rep = physics_retarget(motion, contacts, body)
    toes = with_toes(motion, contacts)
    before = analyse(motion, toes, body)
    ratio_before = torque_ratios(before.torques, body)
    ratio_after = torque_ratios(analyse(out, toes, body, ground=before.support.ground).torques, body)
    assert (ratio_before > 1).any(axis=1).sum() >= 3  # the input has frames over a limit
    worst_before, worst_after = ratio_before.max(axis=1), ratio_after.max(axis=1)
    worse = (worst_after > 1) & (worst_after > np.maximum(worst_before, 1) + 1e-3)
    assert {w["frame"] for w in rep["torque_worse"]} == set(np.flatnonzero(worse).tolist())
    assert (ratio_after > 1).any(axis=1).sum() <= (ratio_before > 1).any(axis=1).sum()
    assert ratio_after.max() <= ratio_before.max()
    assert rep["after"]["zmp_inside_share"] >= 0.99
    over = set(np.flatnonzero(worst_after > 1).tolist())
    assert {c["frame"] for c in rep["torque_causes"]} == over  # each remaining frame with its cause
    assert all((c["cause"] == "gravity alone") == (c["static"] > 1) for c in rep["torque_causes"])
    # each with the feasibility check's verdict (core.physics.feasibility.landing_bound)
    assert all(c["bound"].startswith(("landing:", "searched, not proven:")) for c in rep["torque_causes"])


def test_phase_momentum_is_constant_where_the_clip_wide_derivatives_mix_in_the_phase_ends():
    """A pose held still and turned about the vertical through its CoM at one rate on frames
    40–79 and another outside: the vertical angular momentum (I_zz·ω, I_zz constant under that
    turn) from derivatives of those frames alone is constant and equals the clip-wide one
    mid-phase, where its window stays inside; the clip-wide windows reach across the rate
    changes near the ends."""
    from core.io.bvh import read_bvh
    from core.physics.body import body_model
    from core.physics.dynamics import center_of_mass, momentum, phase_momentum, segment_kinematics
    from core.physics.flights import _turn_about_com
    from tests.conftest import shared_file

    unit = 0.0254 / 0.45
    clip = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, 121)).scaled(1.4)
    held = clip.copy()
    held.translations[:] = clip.translations[:1]
    held.rotations[:] = clip.rotations[:1]
    body = body_model(held.skeleton, 90.0, unit=unit)
    com = center_of_mass(segment_kinematics(held, body, 0.2), body) / unit
    rate = np.where((np.arange(120) >= 40) & (np.arange(120) < 80), 3.0, 1.0)  # rad/s
    theta = np.concatenate(([0.0], np.cumsum(rate[:-1]))) / held.fps
    turned = _turn_about_com(held, com, theta[:, None] * body.up)
    kin = segment_kinematics(turned, body, 0.2)
    own = phase_momentum(kin, body, 40, 80) @ body.up
    wide = momentum(kin, body)[1][40:80] @ body.up
    assert np.abs(own - own.mean()).max() < 1e-3 * abs(own.mean())
    assert own[20] == pytest.approx(wide[20], rel=1e-6)
    assert np.abs(wide - own.mean()).max() > 0.1 * abs(own.mean())
