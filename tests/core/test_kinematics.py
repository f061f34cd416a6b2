from dataclasses import replace

import numpy as np
from scipy.spatial.transform import Rotation

from core import quaternion as quat
from core import synthetic
from core.kinematics import end_site_positions, forward_kinematics
from core.skeleton import rest_positions, rest_world


def fk_by_matrices(skeleton, translations, rotations, matrices=False):
    """Independent FK: 4×4 homogeneous matrices from scipy, multiplied joint by joint; the world
    positions (T, J, 3), or with ``matrices`` the world matrices (T, J, 4, 4)."""
    t, j = translations.shape[:2]
    world = np.zeros((t, j, 4, 4))
    for k in range(j):
        local = np.tile(np.eye(4), (t, 1, 1))
        q = quat.multiply(skeleton.rest_rotations[k], rotations[:, k])
        local[:, :3, :3] = Rotation.from_quat(q[:, [1, 2, 3, 0]]).as_matrix()
        local[:, :3, 3] = translations[:, k]
        p = skeleton.parents[k]
        world[:, k] = local if p < 0 else world[:, p] @ local
    return world if matrices else world[:, :, :3, 3]


def test_fk_matches_matrix_chain_with_rest_rotations():
    m = synthetic.walk(40)
    rng = np.random.default_rng(3)
    m.skeleton.rest_rotations = quat.normalize(rng.normal(size=(m.skeleton.n_joints, 4)))
    pos, rot = forward_kinematics(m.skeleton, m.translations, m.rotations)
    assert np.allclose(pos, fk_by_matrices(m.skeleton, m.translations, m.rotations))
    assert np.allclose(np.linalg.norm(rot, axis=-1), 1)


def test_rest_pose_is_sum_of_offsets():
    sk = synthetic.humanoid()
    pos = rest_positions(sk)
    hand = sk.index("LeftHand")
    chain = [hand]
    while sk.parents[chain[-1]] >= 0:
        chain.append(sk.parents[chain[-1]])
    assert np.allclose(pos[hand], sk.rest_translations[chain].sum(axis=0))
    assert np.isclose(sk.size(), 1.78)  # T-pose arm span 2·(0.05+0.13+0.28+0.25+0.18) beats the 1.70 m height


def test_rest_world_is_forward_kinematics_at_the_identity_pose():
    """The skeleton's own rest walk (no kinematics import) gives FK's numbers to the bit."""
    sk = synthetic.humanoid()
    rng = np.random.default_rng(5)
    sk = replace(sk, rest_rotations=quat.normalize(rng.normal(size=(sk.n_joints, 4))))
    pos, rot = forward_kinematics(sk, sk.rest_translations, quat.identity((sk.n_joints,)))
    got_pos, got_rot = rest_world(sk, include_end_sites=True)
    assert np.array_equal(got_pos, np.concatenate((pos, end_site_positions(sk, pos, rot))))
    assert np.array_equal(got_rot, rot)


def test_skeleton_helpers():
    sk = synthetic.humanoid()
    leg = sk.subtree(sk.index("LeftUpLeg"))
    assert {sk.names[i] for i in np.flatnonzero(leg)} == {"LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"}
    lengths = sk.subtree_lengths()
    assert lengths[sk.index("Hips")] > lengths[sk.index("LeftUpLeg")] > lengths[sk.index("LeftFoot")] > 0
    assert sk.has_position_channels.tolist() == [True] + [False] * (sk.n_joints - 1)


def test_change_rest_keeps_world_positions():
    from core.motion import change_rest

    m = synthetic.demo_clip().frames(slice(0, 50))
    rng = np.random.default_rng(5)
    sk = m.skeleton
    other = type(sk)(
        sk.names, sk.parents, sk.rest_translations, quat.normalize(rng.normal(size=(sk.n_joints, 4))), sk.channels
    )
    # keep rest positions: recompute offsets so heads stay where they were
    heads = rest_positions(sk)
    world = forward_kinematics(other, other.rest_translations, quat.identity((sk.n_joints,)))[1]
    for j, p in enumerate(sk.parents):
        other.rest_translations[j] = heads[j] if p < 0 else quat.rotate(quat.inverse(world[p]), heads[j] - heads[p])
    moved = change_rest(m, other)
    assert np.allclose(rest_positions(other), heads)
    assert np.allclose(moved.world_positions(), m.world_positions(), atol=1e-9)


def test_bvh_layout_keeps_positions_and_end_sites():
    from core.io.bvh import to_bvh_layout
    from core.kinematics import end_site_positions

    m = synthetic.walk(30)
    rng = np.random.default_rng(9)
    sk = m.skeleton
    # a Blender-like skeleton: arbitrary rest rotations, same rest positions
    turned = type(sk)(
        sk.names,
        sk.parents,
        sk.rest_translations,
        quat.normalize(rng.normal(size=(sk.n_joints, 4))),
        sk.channels,
        sk.end_site_parents,
        sk.end_site_offsets,
    )
    moved = to_bvh_layout(turned_motion := type(m)(turned, m.translations, m.rotations, m.fps))
    assert np.allclose(moved.skeleton.rest_rotations, [1, 0, 0, 0])
    pos_a, rot_a = forward_kinematics(turned, turned_motion.translations, turned_motion.rotations)
    pos_b, rot_b = forward_kinematics(moved.skeleton, moved.translations, moved.rotations)
    assert np.allclose(pos_a, pos_b)
    assert np.allclose(end_site_positions(turned, pos_a, rot_a), end_site_positions(moved.skeleton, pos_b, rot_b))


def test_reach_is_the_longest_lever():
    sk = synthetic.humanoid()
    reach = sk.reach()
    # left forearm: elbow → wrist 0.25 → hand end site +0.18
    assert np.isclose(reach[sk.index("LeftForeArm")], 0.43)
    assert reach[sk.index("Hips")] > reach[sk.index("LeftUpLeg")] > reach[sk.index("LeftFoot")] > 0


def test_scaled_motion_scales_every_position_and_keeps_rotations():
    m = synthetic.walk(20)
    big = m.scaled(1.4)
    assert np.allclose(big.world_positions(), 1.4 * m.world_positions())
    assert np.array_equal(big.rotations, m.rotations) and big.skeleton.names == m.skeleton.names
    assert np.isclose(big.skeleton.size(), 1.4 * m.skeleton.size())


def test_known_world_recomputes_only_the_changed_subtree_bit_for_bit():
    m = synthetic.walk(30)
    sk = m.skeleton
    rng = np.random.default_rng(5)
    sk.rest_rotations = quat.normalize(rng.normal(size=(sk.n_joints, 4)))
    before = forward_kinematics(sk, m.translations, m.rotations)
    leg = sk.index("LeftUpLeg")
    turned = m.rotations.copy()
    turned[:, leg] = quat.normalize(rng.normal(size=(len(turned), 4)))
    full = forward_kinematics(sk, m.translations, turned)
    redo = sk.subtree(leg)
    part = forward_kinematics(sk, m.translations, turned, known=(*before, redo))
    assert np.array_equal(part[0], full[0]) and np.array_equal(part[1], full[1])
    stale = forward_kinematics(sk, m.translations, turned, known=(*before, np.zeros(sk.n_joints, dtype=bool)))
    assert not np.allclose(stale[0][:, redo], full[0][:, redo])  # the mask is what is recomputed


def test_size_follows_the_rest_geometry_it_was_kept_for():
    """Skeleton.size() is kept per rest geometry: the same skeleton asks again cheaply, and an offset
    changed in place (or a copy with other offsets) gets its own extent, not the kept one."""
    from core.skeleton import Skeleton

    sk = Skeleton(("root", "a", "b"), [-1, 0, 1], [[5.0, 5.0, 5.0], [0.0, 1.0, 0.0], [0.0, 2.0, 0.0]])
    assert sk.size() == sk.size()
    assert np.isclose(sk.size(), 3.0)  # the root's placement ignored: 0 … 1 + 2 along y
    sk.rest_translations[2] = [0.0, 0.0, 4.0]
    assert np.isclose(sk.size(), 4.0)  # z from 0 to 4 (y from 0 to 1)
    other = replace(sk, rest_translations=sk.rest_translations * 2.0)
    assert np.isclose(other.size(), 8.0)
    assert np.isclose(sk.size(), 4.0)
