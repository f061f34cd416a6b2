"""core.io.blender_bvh on cases checked by hand (the comparison with Blender itself is in tests/blender)."""

from pathlib import Path

import numpy as np
import pytest

from core import quaternion as quat
from core.io.blender_bvh import (
    Y_UP_TO_Z_UP,
    blender_bone_names,
    blender_bvh_import,
    bone_geometry,
    compatible_euler,
    compatible_euler_sequence,
    compatible_scan,
    compatible_scan_loop,
    depth_first_order,
    euler_candidates,
    vec_roll_to_mat3_normalized,
)
from core.io.bvh import read_bvh

TWO_JOINTS = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 10 0 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
}
MOTION
Frames: 3
Frame Time: 0.04
1 2 3 30 0 0 0 0 0
0 0 0 0 20 0 0 20 0
0 0 0 0 0 -45 30 0 0
"""


def read_text(tmp_path: Path, text: str):
    path = tmp_path / "clip.bvh"
    path.write_text(text)
    return read_bvh(path)


# --- vec_roll_to_mat3_normalized ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        ((0, 1, 0), np.eye(3)),
        ((1, 0, 0), [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]),  # -90° about Z
        ((-1, 0, 0), [[0, -1, 0], [1, 0, 0], [0, 0, 1]]),  # +90° about Z
        ((0, 0, 1), [[1, 0, 0], [0, 0, -1], [0, 1, 0]]),  # +90° about X
        ((0, 0, -1), [[1, 0, 0], [0, 0, 1], [0, -1, 0]]),  # -90° about X
        ((0, -1, 0), np.diag([-1.0, -1.0, 1.0])),  # the singular case: half turn about Z
    ],
)
def test_bone_matrix_of_axis_directions(direction, expected):
    m = vec_roll_to_mat3_normalized(np.array(direction, dtype=float))
    np.testing.assert_allclose(m, expected, atol=1e-15)


def test_bone_matrix_near_minus_y():
    # Within 2.5e-4 (XZ distance) of -Y: the half turn about Z, whatever the side.
    for d in ((1e-4, -1.0, 0.0), (0.0, -1.0, -2e-4), (1.5e-4, -1.0, 1.5e-4)):
        d = np.array(d) / np.linalg.norm(d)
        np.testing.assert_array_equal(vec_roll_to_mat3_normalized(d), np.diag([-1.0, -1.0, 1.0]))
    # Just outside it, 1 + y < 6.1e-3: 1/(1 + y) comes from the series a/2 + a²/8, a = x² + z².
    x = 0.01
    d = np.array([x, -np.sqrt(1 - x * x), 0.0])
    theta = x * x / 2 + x**4 / 8
    m = vec_roll_to_mat3_normalized(d)
    np.testing.assert_allclose(m[0, 0], 1 - x * x / theta, rtol=1e-12)
    np.testing.assert_allclose(m[0, 0], -0.99995000125, rtol=1e-10)  # 1 - 1e-4 / 5.000125e-5
    assert abs(m[0, 0] - (1 - x * x / (1 + d[1]))) > 1e-9  # not the exact 1 + y, lost in float32
    np.testing.assert_allclose(m[:, 1], d)  # the bone's Y axis is its direction
    np.testing.assert_allclose(m[1], [-x, d[1], 0.0])
    np.testing.assert_allclose(m[2], [0.0, 0.0, 1.0])
    # Far from -Y it is the shortest turn from +Y: a proper rotation.
    rng = np.random.default_rng(0)
    d = rng.normal(size=(50, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    m = vec_roll_to_mat3_normalized(d)
    np.testing.assert_allclose(m @ np.swapaxes(m, 1, 2), np.broadcast_to(np.eye(3), m.shape), atol=1e-12)
    np.testing.assert_allclose(m[:, :, 1], d, atol=1e-15)


def test_bone_matrix_thresholds_in_float32():
    # 1 + y rounds to 0 in float32 here, but x² + z² is above the threshold: the regular branch.
    d = np.array([3e-4, -1.0, 0.0], dtype=np.float32)
    m = vec_roll_to_mat3_normalized(d)
    assert m.dtype == np.float32
    assert m[0, 1] == np.float32(3e-4) and m[0, 0] < -0.99


def test_bone_matrix_roll():
    np.testing.assert_allclose(
        vec_roll_to_mat3_normalized(np.array([0.0, 1.0, 0.0]), np.pi / 2),
        [[0, 0, 1], [0, 1, 0], [-1, 0, 0]],
        atol=1e-15,
    )


# --- compatible Euler --------------------------------------------------------------------------


def test_compatible_euler_moves_by_whole_turns():
    out = compatible_euler(np.array([3.0, 0.0, 0.0]), np.array([-3.0, 0.0, 0.0]))
    np.testing.assert_allclose(out, [3.0 - 2 * np.pi, 0.0, 0.0], atol=1e-6)
    # Differences up to π are kept; several turns are removed at once.
    np.testing.assert_allclose(compatible_euler(np.array([3.0, 0, 0]), np.zeros(3)), [3.0, 0, 0], atol=1e-7)
    np.testing.assert_allclose(
        compatible_euler(np.array([0.5, 0, 0]), np.array([4 * np.pi, 0, 0])), [0.5 + 4 * np.pi, 0, 0], atol=1e-5
    )


def test_euler_keys_continue_across_the_wrap():
    # A turn about Z from 170° to 190° (= -170°): keys go on past 180° instead of jumping.
    angles = np.radians(np.arange(170.0, 191.0, 2.0))
    m = quat.to_matrix(quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), angles))
    keys = compatible_euler_sequence(m, "XYZ")
    assert keys.dtype == np.float32
    np.testing.assert_allclose(keys[:, 2], angles, atol=1e-6)
    np.testing.assert_allclose(keys[:, :2], 0.0, atol=1e-6)
    # The same turn started at 200°: the first key is taken near (0, 0, 0), i.e. -160°.
    m = quat.to_matrix(quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.radians([200.0, 210.0])))
    np.testing.assert_allclose(compatible_euler_sequence(m, "XYZ")[:, 2], np.radians([-160.0, -150.0]), atol=1e-6)


def test_euler_keys_take_the_second_solution_when_nearer():
    # Y from 80° to 100° in mode XYZ: principal angles would become (180°, 80°, 180°) after 90°;
    # Blender keeps (0, y, 0), the solution nearer the previous key.
    y = np.radians([80.0, 85.0, 89.0, 91.0, 95.0, 100.0])
    m = quat.to_matrix(quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), y))
    keys = compatible_euler_sequence(m, "XYZ")
    np.testing.assert_allclose(keys, np.stack([np.zeros_like(y), y, np.zeros_like(y)], axis=1), atol=1e-5)


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_euler_keys_describe_the_rotation(order):
    rng = np.random.default_rng(1)
    q = quat.normalize(rng.normal(size=(30, 2, 4)))
    keys = compatible_euler_sequence(quat.to_matrix(q), order).astype(float)
    back = quat.from_euler(keys[..., ["XYZ".index(a) for a in order]], order)
    assert quat.angle(quat.multiply(quat.inverse(q), back)).max() < 1e-5


# --- the armature and keys of a small file ----------------------------------------------------


def test_two_joint_file(tmp_path):
    motion = read_text(tmp_path, TWO_JOINTS)
    skeleton, modes, values = blender_bvh_import(motion, "NATIVE")
    assert skeleton.names == ("Hips", "Spine")
    np.testing.assert_array_equal(skeleton.parents, [-1, 0])
    # Hips points at Spine (+X): -90° about Z; then the file is stood up, +90° about X.
    hips_rest = Y_UP_TO_Z_UP @ np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(quat.to_matrix(skeleton.rest_rotations[0]), hips_rest, atol=1e-7)
    # Spine points along +Y (its End Site): relative to Hips, +90° about Z; 10 along Hips' Y.
    np.testing.assert_allclose(
        quat.to_matrix(skeleton.rest_rotations[1]), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-7
    )
    np.testing.assert_allclose(skeleton.rest_translations, [[0, 0, 0], [0, 10, 0]], atol=1e-6)
    np.testing.assert_array_equal(skeleton.end_site_parents, [1])
    np.testing.assert_allclose(skeleton.end_site_offsets, [[0, 5, 0]], atol=1e-6)
    assert skeleton.channels[0][:3] == ("Xposition", "Yposition", "Zposition") and len(skeleton.channels[1]) == 3
    assert modes == {"Hips": "ZXY", "Spine": "ZXY"}
    assert set(values) == {("Hips", "location", i) for i in range(3)} | {
        (b, "rotation_euler", i) for b in ("Hips", "Spine") for i in range(3)
    }
    # Location in Hips' rest frame: restᵀ·(1, 2, 3) = (-2, 1, 3).
    loc = np.stack([values[("Hips", "location", i)] for i in range(3)], axis=1)
    np.testing.assert_allclose(loc, [[-2, 1, 3], [0, 0, 0], [0, 0, 0]], atol=1e-6)
    # Hips turns about its rest frame's axes: BVH Z stays Z, BVH X is the bone's Y, BVH Y is the bone's -X.
    hips = np.stack([values[("Hips", "rotation_euler", i)] for i in range(3)], axis=1)
    np.testing.assert_allclose(hips, np.radians([[0, 0, 30], [0, 20, 0], [45, 0, 0]]), atol=1e-6)
    # Spine's rest frame is the world's: the keys are the BVH angles.
    spine = np.stack([values[("Spine", "rotation_euler", i)] for i in range(3)], axis=1)
    np.testing.assert_allclose(spine, np.radians([[0, 0, 0], [20, 0, 0], [0, 0, 30]]), atol=1e-6)


def test_two_joint_file_quaternions_and_scale(tmp_path):
    motion = read_text(tmp_path, TWO_JOINTS)
    skeleton, modes, values = blender_bvh_import(motion, "QUATERNION", global_scale=0.01)
    assert set(modes.values()) == {"QUATERNION"}
    np.testing.assert_allclose(skeleton.rest_translations[1], [0, 0.1, 0], atol=1e-8)
    np.testing.assert_allclose(skeleton.end_site_offsets, [[0, 0.05, 0]], atol=1e-8)
    loc = np.stack([values[("Hips", "location", i)] for i in range(3)], axis=1)
    np.testing.assert_allclose(loc[0], [-0.02, 0.01, 0.03], atol=1e-8)
    hips = np.stack([values[("Hips", "rotation_quaternion", i)] for i in range(4)], axis=1)
    expected = quat.from_axis_angle(np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0]]), np.radians([30, 20, 45]))
    np.testing.assert_allclose(hips, expected, atol=1e-6)
    assert np.all(hips[:, 0] >= 0)


def test_zero_length_bones_and_names(tmp_path):
    text = TWO_JOINTS.replace("JOINT Spine", "JOINT Upper Spine").replace("OFFSET 0 5 0", "OFFSET 0 0 0")
    motion = read_text(tmp_path, text)
    head, tail = bone_geometry(motion.skeleton)
    np.testing.assert_allclose(tail[1] - head[1], [0, 0.1, 0], atol=1e-7)  # +scale/10 in Y
    skeleton, modes, values = blender_bvh_import(motion)
    assert skeleton.names == ("Hips", "Upper_Spine")
    np.testing.assert_allclose(skeleton.end_site_offsets, [[0, 0.1, 0]], atol=1e-6)
    assert blender_bone_names(["a" * 70, "a" * 64]) == ["a" * 63, "a" * 59 + ".001"]


def test_rejects_what_blender_cannot_import(tmp_path):
    text = TWO_JOINTS.replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 2 Zrotation Xrotation")
    text = "\n".join(line.rsplit(" ", 1)[0] if line[:1].isdigit() else line for line in text.split("\n"))
    motion = read_text(tmp_path, text)
    with pytest.raises(ValueError, match="rotation channels"):
        blender_bvh_import(motion)
    with pytest.raises(ValueError, match="rotate_mode"):
        blender_bvh_import(read_text(tmp_path, TWO_JOINTS), "AXIS_ANGLE")


def test_bone_order_is_depth_first():
    np.testing.assert_array_equal(depth_first_order(np.array([-1, 0, 0, 1, 2, 1])), [0, 1, 3, 5, 2, 4])


def test_vectorised_scan_is_the_frame_loop():
    """compatible_scan (composed choices, summed turns) gives Blender's loop bit for bit."""
    rng = np.random.default_rng(5)
    for scale in (0.05, 0.5, 1.5):
        steps = quat.exp(rng.normal(scale=scale, size=(500, 4, 3)))
        q = np.empty_like(steps)
        q[0] = steps[0]
        for t in range(1, len(q)):
            q[t] = quat.multiply(steps[t], q[t - 1])
        for order in ("XYZ", "ZYX", "YZX"):
            candidates = euler_candidates(quat.to_matrix(q), order)
            previous = rng.normal(scale=10.0, size=(4, 3))
            np.testing.assert_array_equal(compatible_scan(candidates), compatible_scan_loop(candidates))
            np.testing.assert_array_equal(
                compatible_scan(candidates, previous), compatible_scan_loop(candidates, previous)
            )
    one = euler_candidates(quat.to_matrix(q[:1]), "XYZ")
    np.testing.assert_array_equal(compatible_scan(one), compatible_scan_loop(one))


def test_importers_before_4_5_leave_the_head_offset_out_of_a_branching_tail():
    """A hand with two fingers either side of it (mean offset 0): Blender 4.5's importer sees a
    zero-length local tail and lifts it by scale/10; 4.2's compared the mean without the hand's own
    offset, missed it, and the edit bone was repaired with the parent's vector instead."""
    from core.io.blender_bvh import bone_geometry
    from core.skeleton import Skeleton

    sk = Skeleton(["Root", "Hand", "F1", "F2"], [-1, 0, 1, 1],
                  [[0, 0, 0], [0, 2, 0], [0.1, 0, 0], [-0.1, 0, 0]])  # fmt: skip
    _, new = bone_geometry(sk, 1.0, head_offset_fix=True)
    _, old = bone_geometry(sk, 1.0, head_offset_fix=False)
    assert np.allclose(new[1], [0, 2.1, 0], atol=1e-6)  # head (0, 2, 0) lifted by 0.1
    assert np.allclose(old[1], [0, 4, 0], atol=1e-6)  # head minus the parent's vector (0, −2, 0)
