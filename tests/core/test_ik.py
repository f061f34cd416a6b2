"""IK: analytic two-link limbs and the damped-least-squares chain solver, checked through FK."""

import numpy as np
import pytest
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from core import quaternion as quat
from core import synthetic
from core.contacts import detect_contacts, foot_skating
from core.ik.jacobian import jacobian_ik
from core.ik.plant import blended_offsets, plant_feet
from core.ik.two_link import DEFAULT_SOFTNESS, apply_two_link, soft_clamp, two_link_ik
from core.io.bvh import read_bvh
from core.kinematics import forward_kinematics
from core.limbs import limb_chain
from core.motion import Motion
from core.skeleton import Skeleton
from tests.conftest import shared_file


@pytest.fixture(scope="module")
def walk():
    return synthetic.walk(120)


def chain_of(motion, *names):
    return tuple(motion.skeleton.index(n) for n in names)


LEG = ("LeftUpLeg", "LeftLeg", "LeftFoot")
ARM = ("RightArm", "RightForeArm", "RightHand")


def world_of(motion):
    return forward_kinematics(motion.skeleton, motion.translations, motion.rotations)


def reachable_targets(motion, upper, mid, end, rng, low=0.0, high=1.0):
    """Random targets from the upper joint, between fractions low and high of the way from the
    limb's shortest exact reach |l1 − l2| + soft zone to its longest l1 + l2 − soft zone."""
    pos = motion.world_positions()
    l1 = np.linalg.norm(pos[:, mid] - pos[:, upper], axis=-1)
    l2 = np.linalg.norm(pos[:, end] - pos[:, mid], axis=-1)
    direction = rng.normal(size=(motion.n_frames, 3))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    soft = np.minimum(DEFAULT_SOFTNESS * (l1 + l2), 0.5 * np.minimum(l1, l2))
    lo, hi = np.abs(l1 - l2) + soft, l1 + l2 - soft
    dist = lo + (hi - lo) * rng.uniform(low, high, motion.n_frames)
    return pos[:, upper] + direction * dist[:, None]


def test_between_rotates_u_onto_v():
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=(500, 3)), rng.normal(size=(500, 3))
    got = quat.rotate(quat.between(u, v), u)
    assert np.allclose(got / np.linalg.norm(got, axis=-1, keepdims=True), v / np.linalg.norm(v, axis=-1, keepdims=True))
    assert np.allclose(quat.rotate(quat.between([0, 0, 2.0], [0, 0, -1.0]), [0, 0, 1.0]), [0, 0, -1.0])
    assert np.allclose(quat.between([0, 0, 0.0], [1.0, 0, 0]), quat.identity())


@pytest.mark.parametrize("names", [LEG, ARM])
@pytest.mark.parametrize("options", [{}, {"pole": [0.0, 0.0, 1.0]}, {"keep_end_orientation": True}])
def test_two_link_reaches_targets(walk, names, options):
    upper, mid, end = chain_of(walk, *names)
    targets = reachable_targets(walk, upper, mid, end, np.random.default_rng(1))
    out = apply_two_link(walk, upper, mid, end, targets, **options)
    pos, rot = world_of(out)
    assert np.abs(pos[:, end] - targets).max() < 1e-9
    outside = ~walk.skeleton.subtree(upper)
    assert np.allclose(pos[:, outside], walk.world_positions()[:, outside])
    assert np.allclose(np.linalg.norm(out.rotations, axis=-1), 1.0)
    if options.get("keep_end_orientation"):
        assert np.allclose(np.abs(quat.dot(rot[:, end], world_of(walk)[1][:, end])), 1.0)


def test_pole_sets_the_bend_direction(walk):
    upper, mid, end = chain_of(walk, *LEG)
    targets = reachable_targets(walk, upper, mid, end, np.random.default_rng(2), 0.3, 0.9)
    for pole in ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]):
        pos = apply_two_link(walk, upper, mid, end, targets, pole=pole).world_positions()
        axis = pos[:, end] - pos[:, upper]
        axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
        knee = pos[:, mid] - pos[:, upper]
        knee_perp = knee - np.sum(knee * axis, -1, keepdims=True) * axis
        pole_perp = pole - np.sum(pole * axis, -1, keepdims=True) * axis
        cos = (
            np.sum(knee_perp * pole_perp, -1) / np.linalg.norm(knee_perp, axis=-1) / np.linalg.norm(pole_perp, axis=-1)
        )
        assert np.allclose(cos, 1.0)


def test_default_keeps_the_bend_plane_for_small_moves(walk):
    upper, mid, end = chain_of(walk, *LEG)
    pos0 = walk.world_positions()
    pos = apply_two_link(walk, upper, mid, end, pos0[:, end] + [0.0, 0.05, 0.0]).world_positions()
    n0 = np.cross(pos0[:, mid] - pos0[:, upper], pos0[:, end] - pos0[:, mid])
    n1 = np.cross(pos[:, mid] - pos[:, upper], pos[:, end] - pos[:, mid])
    cos = np.sum(n0 * n1, -1) / np.linalg.norm(n0, axis=-1) / np.linalg.norm(n1, axis=-1)
    assert cos.min() > 0.99


def test_unreachable_targets_point_the_limb_at_them(walk):
    upper, mid, end = chain_of(walk, *LEG)
    pos0 = walk.world_positions()
    reach = np.linalg.norm(pos0[:, mid] - pos0[:, upper], axis=-1) + np.linalg.norm(
        pos0[:, end] - pos0[:, mid], axis=-1
    )
    rng = np.random.default_rng(3)
    direction = rng.normal(size=(walk.n_frames, 3))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    for scale in (1.0, 1.5, 20.0):
        targets = pos0[:, upper] + scale * reach[:, None] * direction
        result = two_link_ik(walk, upper, mid, end, targets)
        out = apply_two_link(walk, upper, mid, end, targets)
        pos = out.world_positions()
        assert np.isfinite(pos).all()
        got = pos[:, end] - pos[:, upper]
        dist = np.linalg.norm(got, axis=-1)
        assert np.allclose(got / dist[:, None], direction, atol=1e-9)
        assert np.all(dist <= reach + 1e-12) and np.all(dist > (1 - DEFAULT_SOFTNESS) * reach)
        assert np.allclose(result.reached, pos[:, end])
        assert np.allclose(result.error, np.linalg.norm(targets - pos[:, end], axis=-1))
    hard = apply_two_link(walk, upper, mid, end, pos0[:, upper] + 5 * direction, softness=0.0).world_positions()
    assert np.allclose(np.linalg.norm(hard[:, end] - hard[:, upper], axis=-1), reach)


def test_too_close_and_degenerate_targets_stay_finite(walk):
    upper, mid, end = chain_of(walk, *ARM)
    pos0 = walk.world_positions()
    for targets in (pos0[:, upper], pos0[:, upper] + 1e-6, pos0[:, mid]):
        pos = apply_two_link(walk, upper, mid, end, targets).world_positions()
        assert np.isfinite(pos).all()
        l1 = np.linalg.norm(pos0[:, mid] - pos0[:, upper], axis=-1)
        l2 = np.linalg.norm(pos0[:, end] - pos0[:, mid], axis=-1)
        assert np.all(np.linalg.norm(pos[:, end] - pos[:, upper], axis=-1) >= np.abs(l1 - l2) - 1e-12)


def test_soft_clamp_is_smooth_and_bounded():
    d = np.linspace(0.0, 3.0, 3001)
    lo, hi, soft = np.full_like(d, 0.2), np.full_like(d, 2.0), np.full_like(d, 0.1)
    out = soft_clamp(d, lo, hi, soft)
    assert np.all((out > 0.2) & (out < 2.0))
    # d is returned as is inside [lo + soft, hi − soft]. The sample d = 0.3 sits an ulp below the
    # zone's edge (0.2 + 0.1 = 0.30000000000000004): it takes the exp branch, whose last bit varies
    # by CPU, so it is compared within float noise; every sample clear of the edges is exact.
    inside = (d >= 0.3) & (d <= 1.9)
    np.testing.assert_allclose(out[inside], d[inside], rtol=0, atol=1e-12)
    clear = (d >= 0.3 + 1e-9) & (d <= 1.9 - 1e-9)
    assert np.array_equal(out[clear], d[clear])
    slope = np.diff(out) / np.diff(d)
    assert np.all(slope > 0) and np.all(slope <= 1 + 1e-9) and np.abs(np.diff(slope)).max() < 0.02


def straight_arm(n_frames=200, fps=100.0):
    """A two-bone arm (bones of length 1 along +X, the elbow bent by 0.3 rad about Z)."""
    sk = Skeleton(["root", "upper", "mid", "end"], [-1, 0, 1, 2], [[0, 0, 0], [0, 0, 0], [1.0, 0, 0], [1.0, 0, 0]])
    m = Motion.rest(sk, n_frames, fps=fps)
    m.rotations[:, 2] = quat.from_axis_angle([0.0, 0.0, 1.0], np.full(n_frames, 0.3))
    return m


def test_soft_clamp_prevents_the_knee_pop():
    """A target sweeping out past full reach and back in 2 s, sampled at 1000 fps: with a hard
    clamp the elbow's angular speed is unbounded (it grows with the sampling rate), soft IK keeps it small."""
    m = straight_arm(2000, fps=1000.0)
    x = 1.5 + 1.0 * np.sin(np.linspace(0, np.pi, m.n_frames))  # reach is 2.0
    targets = np.stack((x, 0.3 * np.ones_like(x), np.zeros_like(x)), axis=-1)

    def elbow_speed_and_acceleration(softness):
        options = {} if softness is None else {"softness": softness}
        pos = apply_two_link(m, 1, 2, 3, targets, **options).world_positions()
        a, b = pos[:, 2] - pos[:, 1], pos[:, 3] - pos[:, 2]
        bend = np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1))
        return np.abs(np.diff(bend)).max() * m.fps, np.abs(np.diff(bend, 2)).max() * m.fps**2

    (soft_v, soft_a), (hard_v, hard_a) = elbow_speed_and_acceleration(None), elbow_speed_and_acceleration(0.0)
    assert soft_v < 12.0 and hard_v > 5 * soft_v  # rad/s
    assert hard_a > 50 * soft_a


def test_straight_limb_uses_the_pole_and_never_nans():
    m = Motion.rest(straight_arm().skeleton, 10)
    targets = np.array([1.2, 0.0, 0.0])
    out = apply_two_link(m, 1, 2, 3, targets, pole=[0.0, 1.0, 0.0])
    pos = out.world_positions()
    assert np.allclose(pos[:, 3], targets) and np.all(pos[:, 2, 1] > 0.5)
    # by a swing, not by bending away from the pole and rolling the limb over (the pole plane's sign: 180°)
    assert np.degrees(2.0 * np.arccos(np.abs(out.rotations[:, 1, 0]))).max() < 90.0
    free = apply_two_link(m, 1, 2, 3, targets).world_positions()
    assert np.isfinite(free).all() and np.allclose(free[:, 3], targets)


def test_rest_rotations_and_twist_segments():
    """Blender-like bones (non-identity rest rotations) and a twist joint between knee and foot."""
    rng = np.random.default_rng(4)
    names = ["hips", "thigh", "shin", "shin.001", "foot"]
    offsets = [[0, 1, 0], [0.1, -0.05, 0], [0, -0.4, 0.02], [0, -0.2, 0], [0, -0.2, 0.01]]
    sk = Skeleton(names, [-1, 0, 1, 2, 3], offsets, rest_rotations=quat.normalize(rng.normal(size=(5, 4))))
    m = Motion(
        sk, np.broadcast_to(sk.rest_translations, (50, 5, 3)).copy(), quat.normalize(rng.normal(size=(50, 5, 4)))
    )
    targets = reachable_targets(m, 1, 2, 4, rng)
    out = apply_two_link(m, 1, 2, 4, targets, keep_end_orientation=True)
    pos, rot = world_of(out)
    assert np.abs(pos[:, 4] - targets).max() < 1e-9
    assert np.allclose(out.rotations[:, 3], m.rotations[:, 3])
    assert np.allclose(np.abs(quat.dot(rot[:, 4], world_of(m)[1][:, 4])), 1.0)
    with pytest.raises(ValueError):
        two_link_ik(m, 2, 1, 4, targets)


def test_weight_blends_between_original_and_solution(walk):
    upper, mid, end = chain_of(walk, *LEG)
    targets = walk.world_positions()[:, end] + [0.0, 0.1, 0.1]
    weight = np.linspace(0.0, 1.0, walk.n_frames)
    out = apply_two_link(walk, upper, mid, end, targets, weight)
    assert np.allclose(out.rotations[0], walk.rotations[0])
    assert np.allclose(out.world_positions()[-1, end], targets[-1])


# --- damped least squares -------------------------------------------------------------------


def random_chain(rng, n_joints, n_frames):
    """A root plus an n-joint chain with random offsets (0.3–1 long), rest rotations and pose."""
    offsets = rng.normal(size=(n_joints + 1, 3))
    offsets *= rng.uniform(0.3, 1.0, (n_joints + 1, 1)) / np.linalg.norm(offsets, axis=-1, keepdims=True)
    names = [f"j{i}" for i in range(n_joints + 1)]
    rest = quat.normalize(rng.normal(size=(n_joints + 1, 4)))
    sk = Skeleton(names, np.arange(-1, n_joints), offsets, rest_rotations=rest)
    rotations = quat.normalize(rng.normal(size=(n_frames, n_joints + 1, 4)))
    return Motion(sk, np.broadcast_to(offsets, (n_frames, n_joints + 1, 3)).copy(), rotations)


def scipy_solve(motion, frame, joints, target):
    """Independent solver: scipy least_squares over rotation vectors r_j, pose_j = exp(r_j)·original_j,
    with FK by scipy rotation matrices. Returns the end position it reaches (3,)."""
    sk = motion.skeleton
    rest = Rotation.from_quat(np.roll(sk.rest_rotations, -1, axis=-1)).as_matrix()
    pose = Rotation.from_quat(np.roll(motion.rotations[frame], -1, axis=-1)).as_matrix()
    offsets = motion.translations[frame]

    def end_position(x):
        local = rest @ pose
        local[joints] = rest[joints] @ Rotation.from_rotvec(x.reshape(-1, 3)).as_matrix() @ pose[joints]
        world_r, world_p = np.eye(3), np.zeros(3)
        for j in range(sk.n_joints):  # a single chain: each joint's parent is the previous one
            world_p = world_p + world_r @ offsets[j]
            world_r = world_r @ local[j]
        return world_p

    x0 = np.zeros(3 * len(joints))
    fit = least_squares(lambda x: end_position(x) - target, x0, xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=20000)
    return end_position(fit.x)


@pytest.mark.parametrize("n_joints", [3, 5])
def test_jacobian_matches_scipy_on_random_chains(n_joints):
    rng = np.random.default_rng(10 + n_joints)
    m = random_chain(rng, n_joints, 6)
    end, joints = n_joints, np.arange(1, n_joints)  # the end joint's own rotation moves nothing
    reach = np.linalg.norm(m.skeleton.rest_translations[2:], axis=-1).sum()
    goal_pose = m.copy()
    goal_pose.rotations[:, joints] = quat.normalize(rng.normal(size=(m.n_frames, len(joints), 4)))
    reachable = goal_pose.world_positions()[:, end]
    origin = m.world_positions()[:, 1]
    direction = rng.normal(size=(m.n_frames, 3))
    far = origin + 3 * reach * direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    for targets, tol in ((reachable, 1e-9), (far, 1e-6 * reach)):
        result = jacobian_ik(m, joints, [end], targets[:, None], max_iterations=300, tolerance=1e-10)
        ours = forward_kinematics(m.skeleton, m.translations, result.rotations)[0][:, end]
        theirs = np.array([scipy_solve(m, t, joints, targets[t]) for t in range(m.n_frames)])
        assert np.isfinite(result.rotations).all()
        assert np.abs(ours - theirs).max() < tol
        assert np.allclose(result.residual[:, 0], np.linalg.norm(targets - ours, axis=-1))
    assert result.residual.min() > 1.9 * reach  # the far targets stay out of reach


def test_jacobian_locked_joint_matches_scipy_without_it():
    rng = np.random.default_rng(20)
    m = random_chain(rng, 4, 6)
    joints = np.arange(1, 4)
    target = m.world_positions()[:, 4] + rng.normal(scale=0.3, size=(m.n_frames, 3))
    result = jacobian_ik(m, joints, [4], target[:, None], joint_weights=[0.0, 1.0, 1.0], max_iterations=300)
    assert np.allclose(result.rotations[:, 1], m.rotations[:, 1])
    ours = forward_kinematics(m.skeleton, m.translations, result.rotations)[0][:, 4]
    theirs = np.array([scipy_solve(m, t, joints[1:], target[t]) for t in range(m.n_frames)])
    assert np.abs(ours - theirs).max() < 1e-5


def test_jacobian_two_effectors_on_the_humanoid(walk):
    sk = walk.skeleton
    names = ["Spine", "Chest", "LeftShoulder", "LeftArm", "LeftForeArm", "RightShoulder", "RightArm", "RightForeArm"]
    joints = [sk.index(n) for n in names]
    hands = [sk.index("LeftHand"), sk.index("RightHand")]
    goal = walk.copy()
    rng = np.random.default_rng(5)
    goal.rotations[:, joints] = quat.slerp(
        walk.rotations[:, joints], quat.normalize(rng.normal(size=(walk.n_frames, len(joints), 4))), 0.3
    )
    targets = goal.world_positions()[:, hands]
    result = jacobian_ik(walk, joints, hands, targets, tolerance=1e-6)
    pos = forward_kinematics(sk, walk.translations, result.rotations)[0]
    assert np.abs(pos[:, hands] - targets).max() < 1e-6
    assert result.residual.max() < 1e-6 and result.iterations.max() < 100
    untouched = np.setdiff1d(np.arange(sk.n_joints), joints)
    assert np.array_equal(result.rotations[:, untouched], walk.rotations[:, untouched])


# --- foot planting ---------------------------------------------------------------------------


def joint_speed_and_acceleration(motion, joints):
    pos = motion.world_positions()[:, joints]
    speed = np.linalg.norm(np.diff(pos, axis=0), axis=-1) * motion.fps
    acceleration = np.linalg.norm(np.diff(pos, 2, axis=0), axis=-1) * motion.fps**2
    return speed.max(), acceleration.max()


def test_blended_offsets_fade_smoothly():
    flags = np.zeros(60, dtype=bool)
    flags[20:30] = flags[34:40] = True  # a 4-frame flight between two contacts
    positions = np.zeros((60, 3))
    positions[:, 0] = np.arange(60) * 0.1
    anchors = np.where(flags[:, None], [[2.5, 0.0, 0.0]], np.nan)
    anchors[34:40] = [3.7, 0.0, 0.0]
    offset, weight = blended_offsets(positions, flags, anchors, blend=6)
    assert np.all(weight[flags] == 1) and np.all((weight >= 0) & (weight <= 1))
    assert weight[:13].max() == 0 and weight[47:].max() == 0
    assert np.allclose((positions + offset)[flags], anchors[flags])
    assert np.abs(np.diff(offset[:, 0])).max() < 0.35  # no jump at the contact edges


def contact_misses(planted, contacts):
    """Horizontal and vertical (along up) offsets of the planted joints from their anchors, in contact."""
    offset = (planted.world_positions()[:, contacts.joints] - contacts.anchors)[contacts.flags]
    vertical = offset @ contacts.up
    return np.linalg.norm(offset - vertical[:, None] * contacts.up, axis=-1), vertical


def pelvis_drop(before, after, contacts):
    hips = before.skeleton.index("Hips")
    return (before.world_positions()[:, hips] - after.world_positions()[:, hips]) @ contacts.up


def assert_no_pops(before, after, contacts):
    """Leg joints move no faster than 1.3× and accelerate no harder than 3× the input's maxima."""
    sk = before.skeleton
    legs = np.flatnonzero(np.any([sk.subtree(limb_chain(sk, j)[0]) for j in contacts.joints], axis=0))
    speed0, acc0 = joint_speed_and_acceleration(before, legs)
    speed1, acc1 = joint_speed_and_acceleration(after, legs)
    assert speed1 < 1.3 * speed0 and acc1 < 3 * acc0, (speed1 / speed0, acc1 / acc0)


def test_planting_removes_sliding_on_the_procedural_walk():
    walk = synthetic.with_sliding(synthetic.walk(), 0.05)
    size = walk.skeleton.size()
    contacts = detect_contacts(walk)
    before = foot_skating(walk, contacts)
    assert before.total_rate > 0.3  # m/s: the procedural walk slides, and the drift adds more
    # default: out-of-reach anchors lift the foot (like a heel) instead of letting it slide
    planted = plant_feet(walk, contacts)
    assert foot_skating(planted, contacts).total_rate < 1e-9
    horizontal, vertical = contact_misses(planted, contacts)
    assert horizontal.max() < 1e-9 and vertical.min() > -1e-9
    assert np.mean(vertical < 1e-9) > 0.7 and vertical.mean() < 0.01 * size
    assert np.array_equal(planted.translations, walk.translations)
    assert_no_pops(walk, planted, contacts)
    # "drop": feet stay exactly on their anchors, the pelvis goes down instead (within its cap)
    dropped = plant_feet(walk, contacts, out_of_reach="drop")
    assert foot_skating(dropped, contacts).total_rate < before.total_rate / 10
    drop = pelvis_drop(walk, dropped, contacts)
    assert drop.min() > -1e-9 and drop.max() < 0.05 * size + 1e-9
    assert_no_pops(walk, dropped, contacts)
    deeper = plant_feet(walk, contacts, out_of_reach="drop", max_drop=0.1)
    horizontal, vertical = contact_misses(deeper, contacts)
    assert horizontal.max() < 1e-9 and np.abs(vertical).max() < 1e-9
    # None: the soft clamp leaves some anchors short, but the sliding still drops
    short = plant_feet(walk, contacts, out_of_reach=None)
    assert np.array_equal(short.translations, walk.translations)
    assert foot_skating(short, contacts).total_rate < before.total_rate / 3


def test_planting_without_contacts_changes_nothing():
    walk = synthetic.walk(60)
    contacts = detect_contacts(walk)
    contacts.flags[:] = False
    planted = plant_feet(walk, contacts)
    assert np.allclose(planted.translations, walk.translations) and np.allclose(planted.rotations, walk.rotations)


def test_planting_on_a_real_cmu_walk_with_added_sliding():
    m = read_bvh(shared_file("cmu_bvh_cgspeed/05_01.bvh"))
    size = m.skeleton.size()
    slid = synthetic.with_sliding(m, 0.03 * size)
    contacts = detect_contacts(slid)
    before = foot_skating(slid, contacts)
    planted = plant_feet(slid, contacts)
    assert foot_skating(planted, contacts).total_rate < before.total_rate / 10
    horizontal, vertical = contact_misses(planted, contacts)
    assert horizontal.max() < 1e-6 * size and vertical.min() > -1e-6 * size and vertical.mean() < 0.02 * size
    assert_no_pops(slid, planted, contacts)
    dropped = plant_feet(slid, contacts, out_of_reach="drop")
    assert foot_skating(dropped, contacts).total_rate < before.total_rate / 10
    drop = pelvis_drop(slid, dropped, contacts)
    assert drop.min() > -1e-9 and drop.max() < 0.05 * size + 1e-9
    assert_no_pops(slid, dropped, contacts)


@pytest.mark.parametrize("out_of_reach", ["lift", "drop"])
def test_planting_returns_the_forward_kinematics_of_its_result(walk, out_of_reach):
    contacts = detect_contacts(walk)
    given = forward_kinematics(walk.skeleton, walk.translations, walk.rotations)
    planted, (pos, rot) = plant_feet(walk, contacts, out_of_reach=out_of_reach, world=given, with_world=True)
    assert np.array_equal(planted.rotations, plant_feet(walk, contacts, out_of_reach=out_of_reach).rotations)
    full = forward_kinematics(planted.skeleton, planted.translations, planted.rotations)
    assert np.array_equal(pos, full[0]) and np.array_equal(rot, full[1])
