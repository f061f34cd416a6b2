"""The error measure on every bone's head, tip and sides (core/keyframes/error.py), by hand."""

import numpy as np
import pytest

from core import quaternion as quat
from core.keyframes import PoseMetric, evaluate, position_errors
from core.keyframes.error import SHELL_FRACTION, measured_points, pose_points
from core.motion import Motion
from core.skeleton import Skeleton


def chain(end_site: bool) -> Skeleton:
    """Root at the origin, a 2-long bone along +Y to the leaf 'Hand', the leaf's End Site 1 further along +Y."""
    ends = dict(end_site_parents=[1], end_site_offsets=[[0.0, 1.0, 0.0]]) if end_site else {}
    return Skeleton(("Root", "Hand"), [-1, 0], [[0.0, 0.0, 0.0], [0.0, 2.0, 0.0]], **ends)


def posed(skeleton: Skeleton, hand: np.ndarray, frames: int = 3) -> Motion:
    """Rest pose on every frame, except the hand turned by ``hand`` on frame 1."""
    m = Motion.rest(skeleton, frames)
    m.rotations[1, 1] = hand
    return m


def test_points_of_a_two_bone_chain():
    sk = chain(end_site=True)
    points = measured_points(sk)
    # heads of both joints, the End Site, two sides per bone
    assert points.kinds == ("head", "head", "tip", "side", "side", "side", "side")
    assert points.owner.tolist() == [0, 1, 1, 0, 0, 1, 1]
    assert np.allclose(points.offsets[2], [0, 1, 0])
    shell = SHELL_FRACTION * 2.0  # mean bone length: the one bone of length 2
    sides = points.offsets[3:]
    assert np.allclose(np.linalg.norm(sides, axis=1), shell)
    assert np.allclose(sides[:, 1], 0)  # across the bones' axis, +Y
    assert abs(np.dot(sides[2], sides[3])) < 1e-12  # and across each other
    pos = pose_points(Motion.rest(sk, 4))
    assert pos.shape == (4, 7, 3)
    assert np.allclose(pos[0, :3], [[0, 0, 0], [0, 2, 0], [0, 3, 0]])


def test_twist_of_a_leaf_about_its_own_axis_is_seen_by_the_sides_only():
    angle = 0.3
    original = posed(chain(end_site=True), quat.identity(()))
    twisted = posed(chain(end_site=True), quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), angle))
    err = position_errors(original, twisted)
    heads_and_tips = err[:, :3]
    assert heads_and_tips.max() < 1e-12  # the joints and the tip lie on the axis: nothing moves
    shell = SHELL_FRACTION * 2.0
    assert err[1, 5:] == pytest.approx([2 * shell * np.sin(angle / 2)] * 2)  # chord of the twist
    summary, per_frame = evaluate(original, twisted, PoseMetric.for_motion(original))
    assert (summary["worst_bone"], summary["worst_point"], summary["worst_frame"]) == ("Hand", "side", 1)
    assert summary["per_bone_max"] == {"Root": 0.0, "Hand": pytest.approx(2 * shell * np.sin(angle / 2))}
    assert per_frame[0] == 0 and per_frame[1] == pytest.approx(2 * 2 * shell * np.sin(angle / 2) / 7)


def test_wrong_leaf_rotation_is_the_tip_distance():
    angle = 0.5
    original = posed(chain(end_site=True), quat.identity(()))
    bent = posed(chain(end_site=True), quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), angle))
    err = position_errors(original, bent)
    # the End Site at (0, 3, 0) turns about the hand at (0, 2, 0): to (-sin a, 2 + cos a, 0)
    tip = np.linalg.norm(np.array([-np.sin(angle), 2 + np.cos(angle), 0.0]) - [0.0, 3.0, 0.0])
    assert err[1, 2] == pytest.approx(tip) and tip == pytest.approx(2 * np.sin(angle / 2))
    assert err[:, :2].max() == 0  # the heads do not move
    summary, _ = evaluate(original, bent, PoseMetric.for_motion(original))
    assert (summary["worst_bone"], summary["worst_point"], summary["worst_frame"]) == ("Hand", "tip", 1)
    assert summary["position_max"] == pytest.approx(tip)
    assert summary["position_mean"] == pytest.approx(err.mean())


def test_a_leaf_without_end_site_gets_a_tip_at_the_mean_bone_length():
    sk = chain(end_site=False)
    points = measured_points(sk)
    assert points.kinds[2] == "tip" and points.owner[2] == 1
    assert np.allclose(points.offsets[2], [0.0, 2.0, 0.0])  # along the bone, mean bone length 2
    angle = 0.5
    err = position_errors(posed(sk, quat.identity(())), posed(sk, quat.from_axis_angle(np.array([1.0, 0, 0]), angle)))
    assert err[1, 2] == pytest.approx(2 * 2.0 * np.sin(angle / 2))


def of(points, owner: int, kind: str) -> list[int]:
    return [i for i, (o, k) in enumerate(zip(points.owner, points.kinds)) if o == owner and k == kind]


def test_axes_follow_rest_rotations_and_children():
    # B is turned 90° about Z at rest; its child C sits at (-1, 0, 0) in B's frame
    turn = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    sk = Skeleton(("A", "B", "C"), [-1, 0, 1], [[0, 0, 0], [0, 1, 0], [-1, 0, 0]], [[1, 0, 0, 0], turn, [1, 0, 0, 0]])
    points = measured_points(sk)
    assert np.allclose(points.offsets[of(points, 1, "side")] @ [-1.0, 0.0, 0.0], 0)  # across B→C
    # the leaf C (no End Site) continues along its own offset, mean bone length 1
    assert np.allclose(points.offsets[of(points, 2, "tip")], [[-1.0, 0.0, 0.0]])
    world = pose_points(Motion.rest(sk, 1))[0]
    # B at (0, 1, 0), C at B + turn·(-1, 0, 0) = (0, 0, 0); C's tip continues B→C to (0, -1, 0)
    assert np.allclose(world[2], [0, 0, 0]) and np.allclose(world[of(points, 2, "tip")], [[0, -1.0, 0]])


def test_a_blender_bone_gets_its_sides_on_its_roll_axes_despite_float_noise():
    # Blender bones point along their own Y; read from Blender the child offsets carry float32 noise
    for noise in (0.0, 3e-8, -3e-8):
        sk = Skeleton(("A", "B"), [-1, 0], [[0, 0, 0], [noise, 1.0, -noise]], end_site_parents=[1],
                      end_site_offsets=[[0.0, 0.5, 0.0]])  # fmt: skip
        points = measured_points(sk)
        sides = points.offsets[of(points, 0, "side")] / (SHELL_FRACTION * 1.0)
        assert np.allclose(np.abs(sides), [[0, 0, 1], [1, 0, 0]], atol=1e-6)  # ±Z and ±X, always the same


@pytest.mark.parametrize("chunk", [4096, 7])  # 7: many blocks, the last one short
def test_pose_points_are_each_owners_head_plus_its_turned_offset(monkeypatch, chunk):
    """Every measured point is its bone's world head plus the bone's world rotation applied to its offset,
    in every frame (the points are computed a slot of bones at a time, frames last)."""
    from core.keyframes import error
    from core.kinematics import forward_kinematics
    from tests import rigs

    monkeypatch.setattr(error, "CHUNK", chunk)
    motion = rigs.wiggle(rigs.build("cmu_cgspeed"), n_frames=40, seed=2)
    points = measured_points(motion.skeleton)
    pos, rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    expected = pos[:, points.owner] + quat.rotate(rot[:, points.owner], points.offsets)
    got = pose_points(motion)
    assert got.shape == expected.shape and np.allclose(got, expected, rtol=0, atol=1e-12 * motion.skeleton.size())
    rebuilt = motion.copy()
    rebuilt.rotations[:, 5] = quat.multiply(
        rebuilt.rotations[:, 5], quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.1)
    )
    diff = expected - (lambda p, r: p[:, points.owner] + quat.rotate(r[:, points.owner], points.offsets))(
        *forward_kinematics(motion.skeleton, rebuilt.translations, rebuilt.rotations)
    )
    assert np.allclose(position_errors(motion, rebuilt), np.linalg.norm(diff, axis=-1), atol=1e-12)
