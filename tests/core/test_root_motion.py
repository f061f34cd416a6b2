"""Root motion for game rigs: travel and heading on the bone above the pelvis, the pelvis unchanged."""

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.kinematics import forward_kinematics
from core.retarget import RetargetOptions, retarget
from core.retarget.body import leg_length
from core.retarget.mapping import label_skeleton
from core.retarget.root_motion import carry_root_motion, heading
from core.skeleton import rest_world
from tests import rigs


@pytest.fixture(scope="module")
def turning_walk():
    return synthetic.turn(synthetic.walk(240), 60, 180, 90.0)


@pytest.fixture(scope="module")
def unreal():
    return rigs.build("unreal", rolls=True, z_up=True, scale=1.2)


def yaw(q, up):
    """(T,) angle (radians) of the twist of q about up, unwrapped."""
    return np.unwrap(2.0 * np.arctan2(q[..., 1:] @ up, q[..., 0]))


def test_root_bone_carries_travel_and_heading_at_the_floor(turning_walk, unreal):
    plain = retarget(turning_walk, unreal, target_up="z")
    result = retarget(turning_walk, unreal, options=RetargetOptions(root_motion=True), target_up="z")
    root, pelvis = unreal.index("root"), unreal.index("pelvis")
    assert result.root_bone == root and result.root == pelvis and not result.notes
    up = result.up
    assert np.allclose(np.abs(up), [0, 0, 1], atol=1e-6)  # the rig is Z-up
    pos, rot = forward_kinematics(result.motion.skeleton, result.motion.translations, result.motion.rotations)
    plain_pos, plain_rot = forward_kinematics(plain.motion.skeleton, plain.motion.translations, plain.motion.rotations)
    below = np.flatnonzero(unreal.subtree(pelvis))
    # the pelvis and everything under it: the same world path and orientation as without root motion
    assert np.allclose(pos[:, below], plain_pos[:, below], atol=1e-9)
    assert np.allclose(np.abs(quat.dot(rot[:, below], plain_rot[:, below])), 1.0, atol=1e-9)
    # the root stays on the floor (its rest height) and sits under the pelvis
    assert np.allclose(pos[:, root] @ up, rest_world(unreal)[0][root] @ up, atol=1e-9)
    flat = pos[:, pelvis] - np.outer(pos[:, pelvis] @ up, up)
    assert np.allclose(pos[:, root] - np.outer(pos[:, root] @ up, up), flat, atol=1e-9)
    # its travel is the source's, scaled by the leg-length ratio
    src_labels, tgt_labels = label_skeleton(turning_walk.skeleton)[0], label_skeleton(unreal)[0]
    ratio = leg_length(unreal, tgt_labels) / leg_length(turning_walk.skeleton, src_labels)
    assert result.scale == pytest.approx(ratio) and ratio == pytest.approx(1.2, rel=0.05)
    hips = turning_walk.world_positions()[:, turning_walk.skeleton.index("Hips")]
    mapped = result.map_points(hips)
    travel = np.linalg.norm((mapped[-1] - mapped[0]) - ((mapped[-1] - mapped[0]) @ up) * up)
    root_travel = np.linalg.norm(pos[-1, root] - pos[0, root])
    assert travel > 2.0 and root_travel == pytest.approx(travel, rel=0.02)  # planting nudges the pelvis a little
    # its heading is the source's: a 90° turn (plus the pelvis's sway)
    turned = yaw(quat.multiply(rot[:, root], quat.inverse(rot[:1, root])), up)
    assert np.degrees(turned[-1]) == pytest.approx(90.0, abs=8.0)
    assert np.degrees(np.ptp(turned[:50])) < 16.0  # before the turn only the sway


def test_heading_is_the_twist_about_up():
    up = np.array([0.0, 0.0, 1.0])
    twist = quat.from_axis_angle(up, np.radians(70.0))
    swing = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.radians(25.0))
    # twist · swing = swing' · twist with swing' = twist · swing · twist⁻¹ about a horizontal axis
    h = heading(quat.multiply(twist, swing)[None], up)[0]
    assert np.allclose(np.abs(quat.dot(h, twist)), 1.0)
    assert np.allclose(np.abs(quat.dot(heading(twist[None], up)[0], twist)), 1.0)
    assert np.allclose(np.abs(quat.dot(heading(swing[None], up)[0], quat.identity())), 1.0)


def test_only_mapped_and_in_between_bones_are_keyed(turning_walk, unreal):
    result = retarget(turning_walk, unreal, options=RetargetOptions(root_motion=True, plant_feet=False))
    keyed = {unreal.names[j] for j in result.keyed}
    assert set(result.mapping) <= keyed
    assert {"root", "spine_02", "spine_03", "spine_04"} <= keyed  # the root bone and the in-between spine
    for name in ("ik_foot_root", "ik_foot_l", "upperarm_twist_01_l", "thigh_twist_01_r"):
        assert name not in keyed
    plain = retarget(turning_walk, unreal, options=RetargetOptions(plant_feet=False))
    assert {unreal.names[j] for j in plain.keyed} == keyed  # the root above the pelvis is held (at rest)


def test_no_bone_above_the_pelvis_is_a_note(turning_walk):
    target = synthetic.humanoid(1.1)
    result = retarget(turning_walk, target, options=RetargetOptions(root_motion=True, plant_feet=False))
    assert result.root_bone is None and any("root motion" in n for n in result.notes)


def test_carry_root_motion_refuses_a_bone_that_is_not_above(turning_walk):
    sk = turning_walk.skeleton
    with pytest.raises(ValueError, match="is not above"):
        carry_root_motion(turning_walk, sk.index("Hips"), sk.index("LeftFoot"), np.array([0.0, 1.0, 0.0]))
