"""Control-rig maths (core.retarget.controls), checked against plain forward kinematics written here."""

import numpy as np

from core import quaternion as quat
from core.kinematics import forward_kinematics
from core.retarget import controls
from core.skeleton import rest_world

RNG = np.random.default_rng(7)


def transform(q, p):
    return controls.matrices(np.asarray(p, dtype=float), np.asarray(q, dtype=float))


def random_rotations(n):
    return quat.normalize(RNG.normal(size=(n, 4)))


def test_body_skeleton_rejoins_a_chain_the_rig_hung_under_its_controls():
    # spine → spine.001 → spine.002 (connected), thigh under spine; the rig hangs spine.001 under a
    # control (no ancestor among the bones): its parent is the bone whose tail meets its head
    up = quat.between(np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]))
    down = quat.between(np.array([0.0, 1.0, 0.0]), np.array([0.1, 0.0, -1.0]))
    names = ["spine.002", "thigh", "spine", "spine.001"]
    heads = np.array([[0, 0, 1.4], [0.1, 0, 1.0], [0, 0, 1.0], [0, 0, 1.2]])
    rots = np.array([up, down, up, up])
    lengths = np.array([0.2, 0.45, 0.2, 0.2])
    rest = transform(rots, heads)
    ancestors = [[3, 2], [2], [], []]  # spine.002 under spine.001 (its parent in the rig), thigh under spine
    direct = np.array([True, True, False, False])
    sk = controls.body_skeleton(names, rest, lengths, ancestors, direct)
    parent = {n: (sk.names[p] if p >= 0 else None) for n, p in zip(sk.names, sk.parents)}
    assert parent == {"spine": None, "spine.001": "spine", "spine.002": "spine.001", "thigh": "spine"}
    pos, rot = rest_world(sk)
    for i, name in enumerate(names):  # the rest pose is the rig's
        k = sk.names.index(name)
        assert np.allclose(pos[k], heads[i]) and abs(abs(quat.dot(rot[k], rots[i])) - 1) < 1e-12
    assert set(sk.names[p] for p in sk.end_site_parents) == {"spine.002", "thigh"}


def chain_world(basis, rests):
    """World transforms (T, n, 4, 4) of a plain parent chain of pose bones: parent · rest⁻¹ · rest · basis."""
    out = np.empty_like(basis)
    for c in range(basis.shape[1]):
        if c == 0:
            out[:, c] = rests[c] @ basis[:, c]
        else:
            out[:, c] = out[:, c - 1] @ np.linalg.inv(rests[c - 1]) @ rests[c] @ basis[:, c]
    return out


def test_control_step_settles_a_rigid_chain_in_one_step_when_it_knows_the_ancestors():
    t, n = 5, 3
    rests = transform(random_rotations(n), RNG.normal(size=(n, 3)))
    goal = chain_world(transform(random_rotations(t * n).reshape(t, n, 4), 0.1 * RNG.normal(size=(t, n, 3))), rests)
    basis = np.tile(np.eye(4), (t, n, 1, 1))
    evaluated = chain_world(basis, rests)
    wanted = controls.wanted_poses(evaluated, evaluated, goal)  # each control drives itself
    none = np.zeros((t, 0, 4, 4))
    known, _ = controls.control_step(basis, evaluated, wanted, none, np.array([-1, 0, 1]))
    assert np.allclose(chain_world(known, rests), goal, atol=1e-9)
    blind, _ = controls.control_step(basis, evaluated, wanted, none, np.array([-1, -1, -1]))
    assert not np.allclose(chain_world(blind, rests)[:, 1:], goal[:, 1:], atol=1e-3)  # one pass per level then
    for _ in range(n - 1):
        blind, _ = controls.control_step(blind, chain_world(blind, rests), goal, none, np.array([-1, -1, -1]))
    assert np.allclose(chain_world(blind, rests), goal, atol=1e-9)


def test_torso_takes_the_pelvis_heading_and_pivot_not_its_tilt():
    up = np.array([0.0, 0.0, 1.0])
    pelvis_rest = transform(quat.between(np.array([0.0, 1.0, 0.0]), up), [0.0, 0.0, 1.0])
    torso_rest = transform(quat.identity(), [0.0, 0.05, 1.1])
    yaw = quat.from_axis_angle(up, np.array([0.3, -1.2]))
    tilt = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.array([0.4, 0.2]))
    turn = quat.multiply(yaw, tilt)  # world delta of the pelvis: a tilt, then a heading
    pelvis = transform(quat.multiply(turn, quat.from_matrix(pelvis_rest[:3, :3])), [[1.0, 2.0, 0.9], [0.0, -1.0, 1.0]])
    torso = controls.torso_targets(pelvis, pelvis_rest, torso_rest, up)
    assert np.allclose(torso[:, :3, :3], quat.to_matrix(yaw), atol=1e-9)
    delta = pelvis @ np.linalg.inv(pelvis_rest)
    assert np.allclose(torso[:, :3, 3], (delta @ np.array([0.0, 0.05, 1.1, 1.0]))[:, :3], atol=1e-12)


def test_aimed_control_puts_the_chain_end_on_its_target():
    t = 4
    neck = transform(random_rotations(t), RNG.normal(size=(t, 3)))
    base = neck[:, :3, 3]
    tip = (neck @ np.array([0.0, 0.3, 0.05, 1.0]))[:, :3]  # a point the control carries rigidly
    base_goal = RNG.normal(size=(t, 3))
    direction = RNG.normal(size=(t, 3))
    tip_goal = base_goal + np.hypot(0.3, 0.05) * direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    aimed = controls.aimed_poses(neck, base, tip, base_goal, tip_goal)
    moved = aimed @ np.linalg.inv(neck)
    assert np.allclose((moved @ np.append(base, np.ones((t, 1)), 1)[..., None])[..., :3, 0], base_goal, atol=1e-12)
    new_tip = (moved @ np.append(tip, np.ones((t, 1)), 1)[..., None])[..., :3, 0]
    assert np.allclose(new_tip, tip_goal, atol=1e-9)


def test_forward_kinematics_and_matrices_agree():
    # the targets of a control rig come from the core's FK as (T, J, 4, 4): same positions and axes
    from tests import rigs

    sk = rigs.build("rigify", z_up=True)
    rots = random_rotations(2 * sk.n_joints).reshape(2, sk.n_joints, 4)
    trans = np.broadcast_to(sk.rest_translations, (2, sk.n_joints, 3))
    pos, rot = forward_kinematics(sk, trans, rots)
    m = controls.matrices(pos, rot)
    child = next(j for j in range(sk.n_joints) if sk.parents[j] >= 0)
    p = sk.parents[child]
    local = np.linalg.inv(m[:, p]) @ m[:, child]
    assert np.allclose(local[:, :3, 3], sk.rest_translations[child], atol=1e-12)
    assert np.allclose(controls.rigid_inverse(m) @ m, np.eye(4), atol=1e-12)


def test_pole_goes_out_from_the_bent_joint_at_its_rest_distance():
    y_to = lambda d: quat.between(np.array([0.0, 1.0, 0.0]), np.asarray(d, dtype=float))  # noqa: E731
    upper_rest = transform(y_to([0, 0, -1]), [0.0, 0.0, 1.0])
    lower_rest = transform(y_to([0, 0, -1]), [0.0, 0.0, 0.55])
    pole_rest = transform(quat.identity(), [0.0, -0.4, 0.55])  # in front of the knee
    # a bent knee (forward), and a straight leg turned by 90° about the vertical
    knee = np.array([[0.0, -0.2, 0.55], [0.0, 0.0, 0.55]])
    turn = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.array([0.0, np.pi / 2]))
    upper = transform(quat.multiply(turn, y_to([0, 0, -1])), [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    upper[0, :3, :3] = quat.to_matrix(y_to(knee[0] - [0.0, 0.0, 1.0]))
    lower = transform(quat.multiply(turn, y_to([0, 0, -1])), knee)
    end = transform(quat.multiply(turn, y_to([0, 0, -1])), [[0.0, 0.0, 0.1], [0.0, 0.0, 0.1]])
    poles = controls.pole_targets(upper, lower, end, upper_rest, lower_rest, pole_rest)
    assert np.allclose(poles[0, :3, 3], knee[0] + [0.0, -0.4, 0.0], atol=1e-12)  # out from the bend
    assert np.allclose(poles[1, :3, 3], knee[1] + [0.4, 0.0, 0.0], atol=1e-12)  # the rest offset, turned
    assert np.allclose(poles[:, :3, :3], pole_rest[:3, :3])


def test_turned_root_brings_the_middle_joint_round_and_keeps_the_ends():
    t = 3
    root = transform(random_rotations(t), RNG.normal(size=(t, 3)))
    pivot, end = root[:, :3, 3], RNG.normal(size=(t, 3))
    joint = pivot + RNG.normal(size=(t, 3))
    # the wanted joint: the joint turned about the pivot–end line by some angle
    axis = (end - pivot) / np.linalg.norm(end - pivot, axis=-1, keepdims=True)
    spin = quat.to_matrix(quat.from_axis_angle(axis, np.array([0.5, -2.0, 3.0])))
    goal = pivot + (spin @ (joint - pivot)[..., None])[..., 0]
    turned = controls.turned_poses(root, pivot, end, joint, goal)
    moved = turned @ np.linalg.inv(root)
    carried = (moved @ np.append(joint, np.ones((t, 1)), 1)[..., None])[..., :3, 0]
    assert np.allclose(carried, goal, atol=1e-9)
    assert np.allclose((moved @ np.append(end, np.ones((t, 1)), 1)[..., None])[..., :3, 0], end, atol=1e-9)


def test_root_targets_stand_under_the_pelvis_turned_by_its_heading():
    """A pelvis turned by θ about up (z) and tilted by α about its own x, at (x, y, h): the root control goes
    to (x, y, floor) turned from its rest by θ alone (the twist of Rz(θ)·Rx(α) about z is Rz(θ))."""
    from scipy.spatial.transform import Rotation

    theta, alpha = np.linspace(-2.5, 2.5, 7), np.linspace(0.6, -0.4, 7)
    pelvis_rest = np.eye(4)
    pelvis_rest[:3, 3] = (0.0, 0.1, 1.0)
    root_rest = np.eye(4)
    root_rest[:3, :3] = Rotation.from_euler("x", 90, degrees=True).as_matrix()  # Blender's bones lie along y
    pelvis = np.repeat(pelvis_rest[None], 7, axis=0)
    pelvis[:, :3, :3] = (
        Rotation.from_euler("z", theta[:, None]) * Rotation.from_euler("x", alpha[:, None])
    ).as_matrix()
    pelvis[:, :3, 3] = np.column_stack((np.linspace(0, 3, 7), np.linspace(1, -1, 7), np.linspace(0.9, 1.1, 7)))
    for floor, height in ((None, 0.0), (0.25, 0.25)):
        out = controls.root_targets(pelvis, pelvis_rest, root_rest, np.array([0.0, 0.0, 2.0]), floor)
        assert np.allclose(out[:, :2, 3], pelvis[:, :2, 3]) and np.allclose(out[:, 2, 3], height)
        expected = Rotation.from_euler("z", theta[:, None]).as_matrix() @ root_rest[:3, :3]
        assert np.allclose(out[:, :3, :3], expected, atol=1e-9) and np.allclose(out[:, 3], [0, 0, 0, 1])
