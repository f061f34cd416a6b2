"""Supports that collapse, and least-split solves that cannot finish, against independent references
(issue 16: the Bandai Namco captures read "worst |τ|/limit nan").

The Bandai Namco skeletons end each toe in an End Site of offset 0: the toe tip is the toe joint, so the toe's
box had no direction and collapsed to a point; with the toe alone in contact the support polygon had no edge,
the ZMP's nearest polygon point was NaN, and the NaN ground point spread to every joint's torque."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial import Delaunay

from core.physics.body import body_model
from core.physics.dynamics import ground_wrench, newton_euler, torque_ratios
from core.physics.split import hull_constraints, hull_lines, least_worst_split, split_torque_ratios
from core.physics.support import foot_boxes, to_ground


def test_a_toe_box_whose_tip_is_the_toe_joint_points_along_the_foot():
    """start = tip: the box runs ``back`` behind the toe joint along the given axis, ``half_width`` to each
    side (corners worked out by hand); without the axis it is the point it was."""
    toe, axis = np.array([1.0, 2.0]), np.array([0.0, 3.0])  # the foot points along +y
    box = foot_boxes(toe, toe, np.array(0.02), np.array(0.05), axis=axis)
    expected = [[1.05, 1.98], [1.05, 2.0], [0.95, 2.0], [0.95, 1.98]]  # rear−half, tip−half, tip+half, rear+half
    np.testing.assert_allclose(box, expected, atol=1e-12)
    np.testing.assert_allclose(foot_boxes(toe, toe, np.array(0.02), np.array(0.05)), [toe] * 4)
    moved = foot_boxes(toe, toe + [0.0, 0.1], np.array(0.02), np.array(0.05), axis=np.array([1.0, 0.0]))
    np.testing.assert_allclose(moved, foot_boxes(toe, toe + [0.0, 0.1], np.array(0.02), np.array(0.05)))


@pytest.fixture(scope="module")
def kick():
    """Bandai Namco's kick (30 fps, centimetres) 1.4× onto 90 kg, analysed as the benchmark does."""
    from core.contacts import detect_contacts
    from core.io.bvh import read_bvh
    from core.physics.metrics import analyse
    from core.physics.planting import with_toes
    from tests.conftest import shared_file

    motion = read_bvh(shared_file("bandai_namco_1/dataset-1_kick_normal_001.bvh")).scaled(1.4)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=0.01, up=contacts.up)
    return motion, body, analyse(motion, with_toes(motion, contacts), body)


def _nearest_in_box(corners: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The point of a convex quadrilateral (4, 2) nearest to q (2,): q inside (scipy's Delaunay), else the
    nearest of the four edges' nearest points."""
    if Delaunay(corners).find_simplex(q) >= 0:
        return q
    best = None
    for a, b in zip(corners, np.roll(corners, -1, axis=0)):
        t = np.clip(np.dot(q - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
        r = a + t * (b - a)
        if best is None or np.linalg.norm(r - q) < np.linalg.norm(best - q):
            best = r
    return best


def test_bandai_toe_support_has_area_and_every_torque_is_finite(kick):
    """The kick stands on the toes alone on frames 71–73 and 204–207 (NaN before): the toe boxes have area,
    every torque is finite, and on the toe-only frames the torques are the Newton–Euler pass's with the whole
    ground force at the toe box's point nearest to the ZMP (computed here independently)."""
    motion, body, an = kick
    sup = an.support
    names = [motion.skeleton.names[j] for j in sup.joints]
    toes = [b for b, n in enumerate(names) if n.startswith("Toes")]
    assert toes, names
    corners = sup.boxes[:, toes]  # (T, 2, 4, 2)
    d1, d2 = corners[..., 2, :] - corners[..., 0, :], corners[..., 3, :] - corners[..., 1, :]
    area = 0.5 * np.abs(d1[..., 0] * d2[..., 1] - d1[..., 1] * d2[..., 0])  # NumPy 2 refuses 2-D np.cross
    assert area.min() > 1.0  # cm²: no box collapses to a point or a segment
    assert np.isfinite(an.torques).all()
    assert np.isfinite(torque_ratios(an.torques, body)).all()

    alone = sup.flags[:, toes].sum(axis=1) == 1
    alone &= sup.flags.sum(axis=1) == 1
    frames = np.flatnonzero(alone & ~an.free_fall)
    assert {71, 72, 73} <= set(frames.tolist())
    limited = np.isfinite(body.torque_limits)
    wrench = ground_wrench(an.kin, body)
    zmp2 = to_ground(an.zmp, sup.basis)  # scene units
    for t in frames:
        box = int(np.flatnonzero(sup.flags[t])[0])
        tau = _torques_with_force_at(an, body, wrench, t, box, _nearest_in_box(sup.boxes[t, box], zmp2[t]))
        np.testing.assert_allclose(an.torques[t, limited], tau[limited], atol=1e-6 * body.mass * 9.81)


def _torques_with_force_at(an, body, wrench, t: int, box: int, r2: np.ndarray) -> np.ndarray:
    """(J, 3) joint torques of frame ``t`` by a Newton–Euler pass of that frame alone, with the whole ground
    force on the joint of support box ``box`` at the ground point ``r2`` (2,) (scene units)."""
    sup = an.support
    point = (r2 @ sup.basis + sup.ground * sup.up) * body.unit
    kin = an.kin._replace(
        **{f: getattr(an.kin, f)[t : t + 1] for f in ("joint_pos", "joint_rot", "com", "vel", "acc", "omega",
                                                       "alpha", "spin")}
    )  # fmt: skip
    feet = np.array([sup.joints[box]])
    return newton_euler(kin, body, body.skeleton.parents, feet, wrench.force[t][None, None], point[None, None])[0][0]


def _segment_problem(rng: np.random.Generator) -> tuple:
    """A double-support split whose left hull is a segment (a box of no width: no interior) and whose right hull
    is a box, ZMP between them, random torque maps (4 joints, limits 200 N·m)."""
    left = foot_boxes(np.array([-0.15, 0.0]), np.array([-0.15, 0.2]), np.array(0.05), np.array(0.0))
    right = foot_boxes(np.array([0.15, 0.0]), np.array([0.15, 0.2]), np.array(0.05), np.array(0.05))
    p = np.array([[rng.uniform(-0.1, 0.1), rng.uniform(0.0, 0.15)]])
    rows, bounds = [], []
    for k, box in enumerate((left, right)):
        c, d = hull_constraints(*hull_lines(box[None], np.ones((1, 4), dtype=bool)), p, left=k == 0)
        rows.append(c), bounds.append(d)
    rows.append(np.array([[[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])), bounds.append(np.array([[0.0, 1.0]]))
    a, b = rng.normal(0, 100, (1, 4, 3)), rng.normal(0, 300, (1, 4, 3, 3))
    return a, b, np.full(4, 200.0), np.concatenate(rows, axis=1), np.concatenate(bounds, axis=1)


def test_least_split_on_a_hull_without_interior_matches_scipy_without_overflow():
    """Feasible sets of no interior (a foot's hull a segment) are solved to scipy's SLSQP minimax, the iterate
    inside the hull rows, and steps long past convergence (frames held there) raise no warning."""
    rng = np.random.default_rng(16)
    for _ in range(8):
        a, b, limits, c, d = _segment_problem(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x = least_worst_split(a, b, limits, c, d, iterations=30)  # long past convergence: held, not overflowing
        assert np.isfinite(x).all()
        assert (c[0] @ x[0] - d[0]).max() < 1e-6

        def worst(y, a=a, b=b, limits=limits):
            return split_torque_ratios(a, b, limits, y[None]).max()

        cons = [{"type": "ineq", "fun": lambda y, c=c, d=d: d[0] - c[0] @ y}]
        ref = min(
            minimize(worst, y0, constraints=cons, method="SLSQP", options={"ftol": 1e-12, "maxiter": 500}).fun
            for y0 in ([0.2, 0, 0], [0.5, 0, 0], [0.8, 0, 0])
        )
        assert worst(x[0]) == pytest.approx(ref, abs=2e-3)


def test_an_infeasible_split_is_nan_without_overflow():
    """Hull rows that no split meets (the left CoP asked to be both ≥ 0.1 m and ≤ −0.1 m along one axis) end
    NaN, the caller's sign to keep the proximity split, without a non-finite step's warnings. (Before: after
    the default 12 steps a finite split 0.1 m outside the rows, used as valid; after 30, overflow and NaN.)"""
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 100, (1, 2, 3)), rng.normal(0, 300, (1, 2, 3, 3))
    c = np.array([[[0.0, 1.0, 0.0], [0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    d = np.array([[-1.0, -1.0, 0.0, 1.0]])  # s_x ≤ −1 and s_x ≥ 1 (units of SCALE)
    for iterations in (12, 30):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x = least_worst_split(a, b, np.full(2, 200.0), c, d, iterations=iterations)
        assert np.isnan(x).all()


def test_a_support_collapsed_to_a_point_takes_the_force_at_that_point(kick):
    """The toe boxes collapsed to points again (as before the fix: foot_boxes without an axis): the support of
    a toe-only frame has no edge, yet every torque is finite and the whole ground force acts at that point
    (the nearest point of a one-point polygon), by the Newton–Euler pass here; the proximity split of a
    point box puts its force there too, not at the ZMP."""
    from core.physics.dynamics import inverse_dynamics, split_ground_force
    from core.physics.support import Support

    motion, body, an = kick
    sup = an.support
    toes = np.array([motion.skeleton.names[j].startswith("Toes") for j in sup.joints])
    boxes = sup.boxes.copy()
    boxes[:, toes] = boxes[:, toes, 1:2]  # every corner on the tip corner: a point
    point_support = Support(boxes, sup.flags, sup.joints, sup.basis, sup.up, sup.ground)
    dyn = inverse_dynamics(an.kin, body, point_support)
    assert np.isfinite(dyn.torques).all()
    frames = np.flatnonzero((sup.flags.sum(axis=1) == 1) & sup.flags[:, toes].any(axis=1) & ~an.free_fall)
    assert len(frames) >= 3
    wrench = ground_wrench(an.kin, body)
    limited = np.isfinite(body.torque_limits)
    for t in frames:
        box = int(np.flatnonzero(sup.flags[t])[0])
        tau = _torques_with_force_at(an, body, wrench, t, box, boxes[t, box, 0])
        np.testing.assert_allclose(dyn.torques[t, limited], tau[limited], atol=1e-6 * body.mass * 9.81)
    grf, points = split_ground_force(wrench.force, an.zmp, point_support)
    t = frames[0]
    box = int(np.flatnonzero(sup.flags[t])[0])
    np.testing.assert_allclose(to_ground(points[t, box], sup.basis), boxes[t, box, 0], atol=1e-9)
    np.testing.assert_allclose(grf[t, box], wrench.force[t], atol=1e-9)


def _without(motion, names):
    """``motion`` with the subtrees of joints ``names`` removed (their End Sites too): a skeleton that ends at their
    parents, which keep no End Site of their own (the tip of such a joint is the joint itself)."""
    from core.motion import Motion
    from core.skeleton import Skeleton

    sk = motion.skeleton
    keep = np.ones(sk.n_joints, dtype=bool)
    for name in names:
        keep &= ~sk.subtree(sk.index(name))
    index = np.flatnonzero(keep)
    new = np.cumsum(keep) - 1
    ends = keep[sk.end_site_parents]
    skeleton = Skeleton([sk.names[j] for j in index], [new[p] if p >= 0 else -1 for p in sk.parents[index]],
                        sk.rest_translations[index], sk.rest_rotations[index], [sk.channels[j] for j in index],
                        new[sk.end_site_parents[ends]], sk.end_site_offsets[ends])  # fmt: skip
    return Motion(skeleton, motion.translations[:, index], motion.rotations[:, index], motion.fps)


def test_a_foot_that_ends_at_the_ankle_stands_on_a_box_under_it():
    """CMU walk 02_01 without its toes (each foot a leaf of no End Site: its tip is the ankle): each foot in
    contact stands on a box from heel·L behind the ankle's ground point to L ahead of it along the body's facing
    (normal to the hips' line) on the side the knees bend to, width·L across, L = de Leva's foot / shank length
    ratio × the shank over (1 + heel) (worked out here from the joints); before, a point: the ZMP inside on 0 % of
    the contact frames, its mean distance outside infinite and the whole clip given back as unexplained; then a box
    centred on the ankle, heel·L either side (no forward without toes): 0.44 of the contact frames inside."""
    from core.contacts import detect_contacts
    from core.io.bvh import read_bvh
    from core.physics.metrics import analyse, report
    from core.physics.planting import with_toes
    from tests.conftest import shared_file

    walk = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, None))
    motion = _without(walk, ["LeftToeBase", "RightToeBase"])
    contacts = detect_contacts(motion)
    unit = 0.0254 / 0.45
    body = body_model(motion.skeleton, 60.0, unit=unit, up=contacts.up)
    an = analyse(motion, with_toes(motion, contacts), body)
    sup, sk, pos = an.support, motion.skeleton, motion.world_positions()
    up = np.asarray(contacts.up, dtype=float)
    flat = lambda v: v - (v @ up)[..., None] * up  # noqa: E731
    across = flat(pos[:, sk.index("RightUpLeg")] - pos[:, sk.index("LeftUpLeg")])
    across /= np.linalg.norm(across, axis=1, keepdims=True)
    for b, joint in enumerate(sup.joints):
        name = sk.names[joint]
        knee, hip = sk.index(name.replace("Foot", "Leg")), sk.index(name.replace("Foot", "UpLeg"))
        length = 258.1 / 434.0 * np.median(np.linalg.norm(pos[:, joint] - pos[:, knee], axis=1)) / 1.25
        forward = np.cross(across, up)  # a walker's front, up to its sign: the knees bend to it
        bend = flat(pos[:, knee] - 0.5 * (pos[:, hip] + pos[:, joint]))
        forward *= np.sign(np.median(np.einsum("tc,tc->t", bend, forward)))
        corners = sup.boxes[:, b] @ sup.basis  # (T, 4, 3) back in the world, on the ground plane through 0
        ankle = flat(pos[:, joint])
        along = np.einsum("tkc,tc->tk", corners - ankle[:, None], forward)
        side = np.abs(np.einsum("tkc,tc->tk", corners - ankle[:, None], across))
        np.testing.assert_allclose(np.sort(along, axis=1)[:, [0, -1]], [[-0.25 * length, length]] * len(pos),
                                   rtol=1e-9, atol=1e-9 * length)  # heel 0.25 behind, the tip L ahead  # fmt: skip
        np.testing.assert_allclose(side, 0.25 * length, rtol=1e-9)  # half of width 0.5
    figures = report(an, body, motion)
    assert figures["zmp_inside_share"] > 0.7  # a CMU walk on these boxes: 0.84 (0.89 with its toes, 0.44 centred)
    assert np.isfinite([v for v in figures.values() if isinstance(v, float)]).all()
