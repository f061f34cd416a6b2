import itertools

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from core import quaternion as quat

ORDERS = ["".join(p) for p in itertools.permutations("XYZ")]


def scipy_wxyz(r: Rotation) -> np.ndarray:
    xyzw = r.as_quat()
    return np.concatenate((xyzw[..., 3:], xyzw[..., :3]), axis=-1)


def same_rotation(a, b, atol=1e-9):
    return np.allclose(np.abs(np.sum(a * b, axis=-1)), 1.0, atol=atol)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_multiply_and_rotate_match_scipy(rng):
    ra, rb = Rotation.random(200, random_state=1), Rotation.random(200, random_state=2)
    a, b = scipy_wxyz(ra), scipy_wxyz(rb)
    assert same_rotation(quat.multiply(a, b), scipy_wxyz(ra * rb))
    v = rng.normal(size=(200, 3))
    assert np.allclose(quat.rotate(a, v), ra.apply(v))
    assert np.allclose(quat.rotate(quat.inverse(a), quat.rotate(a, v)), v)


def test_multiply_broadcasts_over_frames_and_joints(rng):
    a = quat.normalize(rng.normal(size=(5, 3, 4)))
    b = quat.normalize(rng.normal(size=(3, 4)))
    out = quat.multiply(a, b)
    assert out.shape == (5, 3, 4)
    assert np.allclose(out[2, 1], quat.multiply(a[2, 1], b[1]))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("extrinsic", [True, False])
def test_euler_round_trip_against_scipy(order, extrinsic, rng):
    angles = rng.uniform(-np.pi, np.pi, (500, 3))
    angles[:, 1] = rng.uniform(-1.5, 1.5, 500)
    q = quat.from_euler(angles, order, extrinsic)
    # scipy: lower case = extrinsic, upper case = intrinsic
    ref = Rotation.from_euler(order.lower() if extrinsic else order, angles)
    assert same_rotation(q, scipy_wxyz(ref))
    assert np.allclose(quat.to_euler(q, order, extrinsic), angles, atol=1e-9)


@pytest.mark.parametrize("order", ORDERS)
def test_euler_gimbal_lock_still_round_trips_the_rotation(order):
    angles = np.array([[0.3, np.pi / 2, -0.7], [1.0, -np.pi / 2, 0.4]])
    q = quat.from_euler(angles, order)
    assert same_rotation(quat.from_euler(quat.to_euler(q, order), order), q)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("off", [3e-5, 1e-7, 1e-9])
def test_euler_near_gimbal_lock_keeps_the_rotation_to_float_precision(order, off):
    # the middle angle 3e-5 rad from 90°: the lock's shortcut (the last angle zeroed) had been taken within 4.5e-5 and
    # missed the rotation by |c|·cos b, 6e-5 rad here (an ASF bone's rest direction 5e-4 units off after a round trip)
    angles = np.array([[0.3, np.pi / 2 - off, 2.0], [-1.2, -np.pi / 2 + off, -2.5]])
    q = quat.from_euler(angles, order)
    back = quat.from_euler(quat.to_euler(q, order), order)
    turn = 2.0 * np.arccos(np.clip(np.abs(np.sum(back * q, axis=-1)), 0.0, 1.0))  # radians between the two
    assert turn.max() < 1e-7


def test_blender_xyz_mode_applies_x_first():
    # Blender's 'XYZ' mode: q = qz · qy · qx (hand-computed composition).
    x, y, z = 0.4, -0.2, 1.1
    qx = quat.from_axis_angle(np.array([1.0, 0, 0]), x)
    qy = quat.from_axis_angle(np.array([0, 1.0, 0]), y)
    qz = quat.from_axis_angle(np.array([0, 0, 1.0]), z)
    expected = quat.multiply(qz, quat.multiply(qy, qx))
    assert same_rotation(quat.from_euler(np.array([x, y, z]), "XYZ"), expected)


def test_matrix_conversion_matches_scipy():
    r = Rotation.random(300, random_state=3)
    q = scipy_wxyz(r)
    assert np.allclose(quat.to_matrix(q), r.as_matrix())
    back = quat.from_matrix(r.as_matrix())
    assert same_rotation(back, q)
    assert np.all(back[:, 0] >= 0)


def test_slerp_matches_scipy_and_takes_short_arc():
    r = Rotation.random(2, random_state=4)
    t = np.linspace(0, 1, 11)
    ref = scipy_wxyz(Slerp([0, 1], r)(t))
    q = scipy_wxyz(r)
    assert same_rotation(quat.slerp(q[0], q[1], t), ref)
    # the same result when the end quaternion is given with the opposite sign
    assert same_rotation(quat.slerp(q[0], -q[1], t), ref)
    # nearly identical rotations interpolate without dividing by zero
    tiny = quat.slerp(q[0], q[0], 0.5)
    assert np.all(np.isfinite(tiny)) and same_rotation(tiny, q[0])


def test_log_exp_are_inverse_and_match_rotvec(rng):
    r = Rotation.random(300, random_state=5)
    q = scipy_wxyz(r)
    v = quat.log(q)
    assert np.allclose(2 * v, r.as_rotvec(), atol=1e-9)
    assert same_rotation(quat.exp(v), q)
    assert np.allclose(quat.exp(np.zeros(3)), [1, 0, 0, 0])


def test_distance_is_half_angle_and_sign_blind():
    a = quat.from_axis_angle(np.array([0, 0, 1.0]), 0.0)
    b = quat.from_axis_angle(np.array([0, 0, 1.0]), 1.2)
    assert np.isclose(quat.distance(a, b), 0.6)
    assert np.isclose(quat.distance(a, -b), 0.6)
    assert np.isclose(quat.angle(b), 1.2)


def test_axis_angle_round_trip():
    axis = np.array([[1.0, 2.0, -0.5]])
    q = quat.from_axis_angle(axis, np.array([2.5]))
    ax, ang = quat.to_axis_angle(q)
    assert np.allclose(ax, axis / np.linalg.norm(axis)) and np.allclose(ang, 2.5)


def test_make_continuous_removes_sign_flips(rng):
    q = scipy_wxyz(Rotation.from_rotvec(np.outer(np.linspace(0, 6 * np.pi, 200), [0, 0, 1.0])))
    flipped = q * rng.choice([-1.0, 1.0], size=(200, 1))
    smooth = quat.make_continuous(flipped)
    assert np.all(np.sum(smooth[1:] * smooth[:-1], axis=-1) >= 0)
    assert same_rotation(smooth, q)
    # along another axis (joints in columns)
    two = np.stack((flipped, -flipped), axis=1)
    assert np.all(np.sum(quat.make_continuous(two)[1:] * quat.make_continuous(two)[:-1], -1) >= 0)


def test_normalize_handles_zero():
    out = quat.normalize(np.array([[0.0, 0, 0, 0], [2.0, 0, 0, 0]]))
    assert np.allclose(out, [[1, 0, 0, 0], [1, 0, 0, 0]])


def test_to_euler_axes_recovers_one_and_two_axis_rotations_over_the_full_range():
    """With fewer than three channels a middle angle beyond ±90° must not fold into a dropped axis."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(4)
    angles = rng.uniform(-np.pi, np.pi, (200, 2))
    for axes in ("ZX", "XY", "YZ", "ZY"):
        for extrinsic in (True, False):
            q = quat.from_euler(np.c_[angles, np.zeros(200)], axes + next(a for a in "XYZ" if a not in axes), extrinsic)
            got = quat.to_euler_axes(q, axes, extrinsic)
            assert np.allclose(got, angles, atol=1e-9)
            seq = axes.lower() if extrinsic else axes
            ref = Rotation.from_euler(seq, got).as_quat()
            assert np.allclose(np.abs(np.sum(q * np.c_[ref[:, 3], ref[:, :3]], -1)), 1)
    one = quat.from_axis_angle([0, 1, 0], angles[:, 0])
    assert np.allclose(quat.to_euler_axes(one, "Y")[:, 0], angles[:, 0])
    assert quat.to_euler_axes(one, "").shape == (200, 0)
    three = quat.from_euler(rng.uniform(-1, 1, (5, 3)), "ZXY", False)
    assert np.allclose(quat.to_euler_axes(three, "ZXY", False), quat.to_euler(three, "ZXY", False))


@pytest.mark.parametrize("shapes", [((5, 3), (5, 3)), ((3,), (7, 3)), ((4, 6, 3), (4, 6, 3)), ((2, 1, 3), (1, 5, 3))])
def test_cross_is_numpys_vector_product(shapes):
    rng = np.random.default_rng(len(shapes[0]))
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    assert np.array_equal(quat.cross(a, b), np.cross(a, b))
    assert np.allclose(np.einsum("...c,...c->...", quat.cross(a, b), np.broadcast_to(a, quat.cross(a, b).shape)), 0)


@pytest.mark.parametrize("shapes", [((5, 3), (5, 3)), ((3,), (7, 3)), ((4, 6, 2), (4, 6, 2)), ((2, 1, 4), (1, 5, 4))])
def test_length_and_inner_are_numpys_norm_and_dot(shapes):
    """Summed component by component in numpy's own order: the same values, broadcast as numpy broadcasts."""
    rng = np.random.default_rng(len(shapes[0]) + shapes[0][-1])
    a, b = rng.normal(size=shapes[0]) * 1e3, rng.normal(size=shapes[1])
    assert np.array_equal(quat.inner(a, b), np.sum(a * b, axis=-1))
    assert np.array_equal(quat.length(a), np.linalg.norm(a, axis=-1))
    assert np.array_equal(quat.length(a[..., ::-1]), np.linalg.norm(a[..., ::-1], axis=-1))  # strided


@pytest.mark.parametrize("shapes", [((5, 1), (5, 3)), ((2, 3), (1,)), ((4, 0), (4, 0)), ((0, 3), (0, 3))])
def test_inner_and_length_at_the_edges_of_numpys_broadcast(shapes):
    """A component axis broadcast (one component against three), vectors of no components and no vectors at all:
    numpy's dot products and norms, as the docstring promises."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    assert np.array_equal(quat.inner(a, b), np.sum(a * b, axis=-1))
    assert np.array_equal(quat.inner(b, a), np.sum(b * a, axis=-1))
    assert np.array_equal(quat.length(a), np.linalg.norm(a, axis=-1))
