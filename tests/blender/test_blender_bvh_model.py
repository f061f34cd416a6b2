"""core.io.blender_bvh against Blender's own BVH importer: the same armature and the same keys, on real captures."""

from importlib import import_module

import addon_utils
import bpy
import numpy as np
import pytest
from mathutils import Euler, Matrix

from tests.blender.conftest import PACKAGE
from tests.conftest import shared_file

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
blender_bvh = import_module(PACKAGE + ".core.io.blender_bvh")
bvh = import_module(PACKAGE + ".core.io.bvh")
quat = import_module(PACKAGE + ".core.quaternion")
channels = import_module(PACKAGE + ".core.channels")

FILES = (
    "cmu_bvh_cgspeed/01_01.bvh",
    "cmu_bvh_cgspeed/02_01.bvh",
    "cmu_bvh_cgspeed/05_06.bvh",
    "cmu_bvh_3dsmax/131_01.bvh",
    "bandai_namco_1/dataset-1_dash_normal_001.bvh",
    "bandai_namco_1/dataset-1_kick_normal_001.bvh",
    "mixamo/Walk-In-Circle.bvh",
    "iclone_cc/005_06.bvh",
)
MODES = ("NATIVE", "QUATERNION")


def import_with_blender(path, mode, scale=1.0):
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(
        filepath=str(path), rotate_mode=mode, global_scale=scale, update_scene_fps=True, update_scene_duration=True
    )
    obj = bpy.context.active_object
    values, frames = {}, None
    for fcurve in animdata.object_channels(obj).fcurves:
        keys = animdata.read_keys(fcurve)
        bone, prop = armature._PATH.match(fcurve.data_path).groups()
        values[(bpy.utils.unescape_identifier(bone), prop, fcurve.array_index)] = keys[:, 1]
        frames = keys[:, 0] if frames is None else frames
        assert np.array_equal(keys[:, 0], frames)
    moving = {bone for bone, prop, _ in values if prop == "location"}
    modes = {b.name: b.rotation_mode for b in obj.pose.bones}
    return obj, armature.skeleton_from_armature(obj, moving), modes, values, frames


def rotation_angle(a, b):
    return quat.angle(quat.multiply(quat.inverse(a), b))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("relative", FILES)
def test_model_matches_blender_import(relative, mode):
    check_against_blender(relative, mode)


@pytest.mark.parametrize("scale", [0.01, 2.5])
def test_model_matches_blender_import_scaled(scale):
    check_against_blender("cmu_bvh_cgspeed/02_01.bvh", "NATIVE", scale)


def check_against_blender(relative, mode, scale=1.0):
    path = shared_file(relative)
    motion = bvh.read_bvh(path)
    obj, skeleton, modes, values, frames = import_with_blender(path, mode, scale)
    ours, our_modes, our_values = blender_bvh.blender_bvh_import(motion, mode, scale, bpy.app.version[:2])

    size = skeleton.size()
    assert ours.names == skeleton.names
    np.testing.assert_array_equal(ours.parents, skeleton.parents)
    assert ours.channels == skeleton.channels
    np.testing.assert_array_equal(ours.end_site_parents, skeleton.end_site_parents)
    diff = {
        "rest_translation": np.abs(ours.rest_translations - skeleton.rest_translations).max() / size,
        "rest_rotation": rotation_angle(ours.rest_rotations, skeleton.rest_rotations).max(),
        "end_site": np.abs(ours.end_site_offsets - skeleton.end_site_offsets).max() / size,
    }
    assert diff["rest_translation"] < 1e-4 and diff["end_site"] < 1e-4
    assert diff["rest_rotation"] < 1e-5
    assert our_modes == modes
    assert set(our_values) == set(values)
    np.testing.assert_array_equal(frames, np.arange(1, motion.n_frames + 1))
    for kind in ("location", "rotation_quaternion", "rotation_euler"):
        keys = [k for k in values if k[1] == kind]
        if keys:
            unit = size if kind == "location" else 1.0
            diff[kind] = max(np.abs(our_values[k] - values[k]).max() for k in keys) / unit
    assert diff.get("location", 0.0) < 1e-4
    assert diff.get("rotation_quaternion", 0.0) < 2e-4
    euler = [k[0] for k in values if k[1] == "rotation_euler" and k[2] == 0]
    if euler:
        diff.update(compare_euler(euler, modes, our_values, values))
        assert diff["rotation_euler_outside_gimbal_lock"] < 2e-4
        assert diff["rotation_euler_as_rotation"] < 2e-4
        assert diff["rotation_euler_as_rotation_at_lock_times_cos"] < 1e-6
    print(relative, mode, scale, {k: float(f"{v:.3g}") for k, v in diff.items()})


def compare_euler(bones, modes, ours, theirs, tol=2e-4, lock=1e-3):
    """Euler keys compared as values and as the rotations they describe.

    Within ``lock`` (cosine of the middle angle) of gimbal lock the first and last angles
    depend on matrix elements of size ~cos, so Blender's float32 matrices leave them (and the
    rotation its keys describe) uncertain by ~1e-7 / cos, and a ±π angle may round to the
    other side (a whole turn, which later keys then follow). There our keys only have to
    describe the same rotation within 1e-6 / cos.
    """
    worst = dict.fromkeys(("value", "outside", "rotation", "rotation_at_lock_times_cos"), 0.0)
    explained = 0
    for bone in bones:
        mode = modes[bone]
        a = np.stack([ours[(bone, "rotation_euler", i)] for i in range(3)], axis=1).astype(float)
        b = np.stack([theirs[(bone, "rotation_euler", i)] for i in range(3)], axis=1)
        d = np.abs(a - b).max(axis=1)
        cos = np.abs(np.cos(b[:, "XYZ".index(mode[1])]))
        near_lock = cos < lock
        turns = (a - b) / (2 * np.pi)
        whole_turns = np.all(np.abs(turns - np.round(turns)) * 2 * np.pi < tol, axis=1)
        inherited = whole_turns & (np.cumsum(near_lock) > 0)
        rotation = rotation_angle(channels.rotation_to_quaternion(mode, a), channels.rotation_to_quaternion(mode, b))
        explained += int(np.sum((d >= tol) & (near_lock | inherited)))
        worst["value"] = max(worst["value"], d.max())
        worst["outside"] = max(worst["outside"], d[~near_lock & ~inherited].max(initial=0.0))
        worst["rotation"] = max(worst["rotation"], rotation[~near_lock].max(initial=0.0))
        worst["rotation_at_lock_times_cos"] = max(
            worst["rotation_at_lock_times_cos"], (rotation * cos)[near_lock].max(initial=0.0)
        )
    return {
        "rotation_euler": worst["value"],
        "rotation_euler_outside_gimbal_lock": worst["outside"],
        "rotation_euler_as_rotation": worst["rotation"],
        "rotation_euler_as_rotation_at_lock_times_cos": worst["rotation_at_lock_times_cos"],
        "rotation_euler_keys_differing_at_gimbal_lock": explained,
    }


def test_axis_conversion_is_the_importers_default():
    from bpy_extras.io_utils import axis_conversion

    expected = np.array(axis_conversion(from_forward="-Z", from_up="Y"))
    np.testing.assert_array_equal(blender_bvh.Y_UP_TO_Z_UP, expected)


def test_rest_orientation_is_blenders_bone_matrix():
    """vec_roll_to_mat3_normalized against edit bones made by Blender, near −Y included."""
    rng = np.random.default_rng(3)
    directions = np.concatenate(
        (
            np.eye(3),
            -np.eye(3),
            rng.normal(size=(40, 3)),
            [[1e-5, -1.0, 0.0], [3e-4, -1.0, 2e-4], [2e-4, -1.0, 1e-4], [0.05, -1.0, 0.02], [1e-3, -1.0, -2e-3]],
        )
    )
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    data = bpy.data.armatures.new("Dirs")
    obj = bpy.data.objects.new("Dirs", data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    rolls = np.where(np.arange(len(directions)) % 2 == 1, rng.uniform(-3.0, 3.0, len(directions)), 0.0)
    for n, d in enumerate(directions):
        bone = data.edit_bones.new(f"b{n}")
        bone.head = (0.0, 0.0, 0.0)
        bone.tail = tuple(d)
        bone.roll = rolls[n]
    bpy.ops.object.mode_set(mode="OBJECT")
    blender = np.array([np.array(data.bones[f"b{n}"].matrix_local.to_3x3()) for n in range(len(directions))])
    tails = np.array([np.array(data.bones[f"b{n}"].tail_local) for n in range(len(directions))], dtype=np.float32)
    ours = blender_bvh.vec_roll_to_mat3_normalized(tails / np.linalg.norm(tails, axis=1, keepdims=True), rolls)
    assert np.abs(ours - blender).max() < 1e-6


def test_compatible_euler_is_mathutils_to_euler():
    """The compatible-Euler scan against Matrix.to_euler(order, previous) on a spinning, wrapping rotation."""
    rng = np.random.default_rng(7)
    steps = quat.exp(rng.normal(scale=0.35, size=(400, 4, 3)))
    q = np.empty_like(steps)
    q[0] = steps[0]
    for t in range(1, len(q)):
        q[t] = quat.multiply(steps[t], q[t - 1])
    m = quat.to_matrix(q)
    for order in blender_bvh.EULER_ORDERS:
        ours = blender_bvh.compatible_euler_sequence(m, order)
        for c in range(m.shape[1]):
            prev = None
            for t in range(len(m)):
                mat = Matrix(m[t, c].tolist())
                prev = mat.to_euler(order, prev if prev is not None else Euler((0.0, 0.0, 0.0)))
                np.testing.assert_allclose(ours[t, c], np.array(prev), atol=2e-5, err_msg=f"{order} {c} {t}")
