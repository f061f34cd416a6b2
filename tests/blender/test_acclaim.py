"""File › Import/Export › Acclaim (.asf/.amc), run the way a user runs them, checked against the core.

Playback is measured on what Blender evaluates: ``scene.frame_set`` and the pose bones'
world-space heads, compared with the core's forward kinematics of the files (turned from
Y-up to Z-up and scaled the way the importer is asked to).
"""

import time
from importlib import import_module
from pathlib import Path

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.conftest import shared_file

acclaim = import_module(PACKAGE + ".addon.acclaim.armature_io")
animdata = import_module(PACKAGE + ".addon.common.animdata")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
clips = import_module(PACKAGE + ".addon.common.clip")
asf_amc = import_module(PACKAGE + ".core.io.asf_amc")
kinematics = import_module(PACKAGE + ".core.kinematics")
skeleton_mod = import_module(PACKAGE + ".core.skeleton")
keyframes = import_module(PACKAGE + ".core.keyframes")
motion_mod = import_module(PACKAGE + ".core.motion")
quat = import_module(PACKAGE + ".core.quaternion")
synthetic = import_module(PACKAGE + ".core.synthetic")

MODES = ["QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
# Playback tolerance: the largest distance between a bone head Blender plays and the core's
# joint position, as a share of the body size (CMU 01 is ~30 units tall; measured ~4e-7).
PLAYBACK_TOLERANCE = 2e-6


def import_files(folder: Path, *names: str, **options) -> set:
    files = [{"name": n} for n in names]
    return bpy.ops.import_anim.acclaim(directory=str(folder), files=files, **options)


def data_counts() -> dict:
    kinds = ("objects", "armatures", "actions", "collections", "meshes", "materials")
    return {k: len(getattr(bpy.data, k)) for k in kinds}


def expected_positions(asf: Path, amc: Path, scale: float = 1.0, **kw):
    """Core FK of the files in Blender's frame: joints (T, J, 3) and End Sites (T, E, 3), on the skeleton
    the file was made from (the bones our writer added taken away; a file without its notes as it is)."""
    in_file = asf_amc.from_asf_layout(asf_amc.read_asf_amc(asf, amc, **kw))
    motion = motion_mod.transform_world(in_file, acclaim.Y_UP_TO_Z_UP, scale)
    pos, rot = kinematics.forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    return motion, pos, kinematics.end_site_positions(motion.skeleton, pos, rot)


def played_heads(obj, frames) -> np.ndarray:
    """(T, B, 3) world-space heads of the pose bones, as Blender evaluates them frame by frame."""
    scene = bpy.context.scene
    n = len(obj.pose.bones)
    world = np.array(obj.matrix_world)
    out = np.empty((len(frames), n, 3))
    buffer = np.empty(3 * n, dtype=np.float32)
    for i, frame in enumerate(frames):
        scene.frame_set(int(frame))
        obj.pose.bones.foreach_get("head", buffer)
        out[i] = buffer.reshape(n, 3)
    return out @ world[:3, :3].T + world[:3, 3]


def played_tails(obj) -> np.ndarray:
    n = len(obj.pose.bones)
    buffer = np.empty(3 * n, dtype=np.float32)
    obj.pose.bones.foreach_get("tail", buffer)
    return buffer.reshape(n, 3)


def generated_walk():
    """The take walk_files writes as walk.amc: hips, shoulders and thighs start away from their parent's end."""
    return synthetic.walk(60, fps=30.0)


@pytest.fixture
def walk_files(tmp_path):
    """A generated take written as ASF/AMC (no real capture needed): walk.asf, walk.amc, turn.amc."""
    walk = generated_walk()
    asf_amc.write_asf_amc(walk, tmp_path / "walk.asf", tmp_path / "walk.amc")
    shaped = asf_amc.to_asf_layout(synthetic.turn(synthetic.walk(45, fps=30.0), 5, 40))
    asf_amc.write_amc(shaped, tmp_path / "turn.amc")
    return tmp_path


# --- menus and registration --------------------------------------------------------------


@pytest.mark.parametrize(("menu", "idname"), [("TOPBAR_MT_file_import", "import"), ("TOPBAR_MT_file_export", "export")])
def test_operators_are_in_the_file_menus(menu, idname):
    ours = [f for f in getattr(bpy.types, menu).draw._draw_funcs if f.__module__.startswith(PACKAGE)]
    assert len(ours) == 1 and ours[0].__name__ == f"draw_{idname}_menu"
    assert "UNDO" in bpy.types.IMPORT_ANIM_OT_acclaim.bl_options
    assert hasattr(bpy.ops.import_anim, "acclaim") and hasattr(bpy.ops.export_anim, "acclaim")
    handler = bpy.types.MOCAP_FH_acclaim  # drag and drop of .asf/.amc files
    assert handler.bl_import_operator == "import_anim.acclaim" and handler.bl_file_extensions == ".asf;.amc"


def test_export_poll_explains_what_is_missing():
    assert not bpy.ops.export_anim.acclaim.poll()
    io_acclaim = import_module(PACKAGE + ".addon.acclaim.operators")
    assert io_acclaim.export_poll_message(bpy.context) == "Select an armature with an action"


# --- import ------------------------------------------------------------------------------


def test_cmu_import_plays_the_amc_exactly():
    """CMU 01.asf + 01_01.amc (2,751 frames): every bone head at every frame, as Blender plays
    it, within PLAYBACK_TOLERANCE × body size of the core's FK; leaf tails on the End Sites."""
    asf = shared_file("cmu_asf_amc/01.asf")
    start = time.perf_counter()
    assert import_files(asf.parent, "01.asf", "01_01.amc") == {"FINISHED"}
    seconds = time.perf_counter() - start
    obj = bpy.context.active_object
    assert obj.type == "ARMATURE" and obj.name == "01" and len(obj.data.bones) == 31
    assert tuple(obj.matrix_world.to_translation()) == (0, 0, 0) and obj.rotation_euler[0] == 0
    action = obj.animation_data.action
    assert action.name == "01_01" and tuple(action.frame_range) == (1.0, 2751.0)
    motion, pos, ends = expected_positions(asf, shared_file("cmu_asf_amc/01_01.amc"))
    names = [b.name for b in obj.pose.bones]
    idx = [motion.skeleton.index(n) for n in names]
    heads = played_heads(obj, range(1, 2752))
    err = np.linalg.norm(heads - pos[:, idx], axis=-1)
    size = motion.skeleton.size()
    assert err.max() < PLAYBACK_TOLERANCE * size, err.max()
    # Leaf bones end on their End Sites (last frame evaluated)
    leaves = [names.index(motion.skeleton.names[j]) for j in motion.skeleton.end_site_parents]
    assert np.abs(played_tails(obj)[leaves] - ends[-1]).max() < PLAYBACK_TOLERANCE * size
    # Y-up capture stands up in Z-up: the head is above the feet
    head, foot = names.index("head"), names.index("ltoes")
    assert np.all(heads[:, head, 2] > heads[:, foot, 2] + 0.5 * size)
    # read_clip (the path Extract Keyframes and export take) sees the same motion
    clip = clips.read_clip(obj)
    assert np.abs(clip.motion.world_positions() - pos[:, idx]).max() < PLAYBACK_TOLERANCE * size
    print(f"\nCMU 01_01 import: {seconds:.2f} s; playback max error {err.max():.2e} units (size {size:.1f})")


def test_cmu_bones_follow_the_asf_axes():
    """Bone rolls match the ASF axes: the knee (dof rx) turns about the bone's own X axis only."""
    asf = shared_file("cmu_asf_amc/01.asf")
    import_files(asf.parent, "01.asf", "01_01.amc", rotate_mode="XYZ")
    obj = bpy.context.active_object
    channels = animdata.object_channels(obj)
    curves = {(fc.data_path, fc.array_index): fc for fc in channels.fcurves}
    amc = asf_amc.read_asf_amc(asf, shared_file("cmu_asf_amc/01_01.amc"))
    rx = np.radians(asf_amc.dof_values(amc)[amc.skeleton.index("ltibia")][:, 0])
    x, y, z = (animdata.read_keys(curves[('pose.bones["ltibia"].rotation_euler', i)])[:, 1] for i in range(3))
    assert np.abs(y).max() < 1e-5 and np.abs(z).max() < 1e-5
    assert np.abs(np.abs(x) - np.abs(rx)).max() < 1e-5
    # bones without dofs get no curves; the root gets location and rotation
    bones = {path.split('"')[1] for path, _ in curves}
    assert "lhipjoint" not in bones and "rhipjoint" not in bones and len(bones) == 29
    assert ('pose.bones["root"].location', 0) in curves


@pytest.mark.parametrize("mode", MODES)
def test_rotation_modes(walk_files, mode):
    assert import_files(walk_files, "walk.asf", "walk.amc", rotate_mode=mode, global_scale=2.0) == {"FINISHED"}
    obj = bpy.context.active_object
    assert {b.rotation_mode for b in obj.pose.bones} == {mode}
    prop = "rotation_quaternion" if mode == "QUATERNION" else "rotation_euler"
    paths = {fc.data_path.rsplit(".", 1)[1] for fc in animdata.object_channels(obj).fcurves}
    assert paths == {"location", prop}
    motion, pos, _ = expected_positions(walk_files / "walk.asf", walk_files / "walk.amc", scale=2.0)
    idx = [motion.skeleton.index(b.name) for b in obj.pose.bones]
    heads = played_heads(obj, range(1, motion.n_frames + 1))
    assert np.abs(heads - pos[:, idx]).max() < PLAYBACK_TOLERANCE * motion.skeleton.size()
    if mode == "QUATERNION":  # keys stay in one hemisphere, bone by bone
        curves = animdata.object_channels(obj).fcurves
        for bone in obj.pose.bones:
            path = bone.path_from_id("rotation_quaternion")
            found = [fc for fc in curves if fc.data_path == path]
            if found:
                q = np.stack([animdata.read_keys(fc)[:, 1] for fc in sorted(found, key=lambda f: f.array_index)], -1)
                assert np.all(np.sum(q[1:] * q[:-1], -1) >= 0)


def test_several_motions_make_several_actions(walk_files):
    before = data_counts()
    # only motions selected: the skeleton is found next to them (walk.asf)
    assert import_files(walk_files, "walk.amc", "turn.amc") == {"FINISHED"}
    after = data_counts()
    assert after["objects"] == before["objects"] + 1 and after["actions"] == before["actions"] + 2
    obj = bpy.context.active_object
    walk, turn = bpy.data.actions["walk"], bpy.data.actions["turn"]
    assert obj.animation_data.action == walk and not walk.use_fake_user and turn.use_fake_user
    assert tuple(walk.frame_range) == (1, 60) and tuple(turn.frame_range) == (1, 45)
    if animdata.SLOTTED:
        for action in (walk, turn):
            assert len(action.slots) == 1 and action.slots[0].target_id_type == "OBJECT"
        assert obj.animation_data.action_slot == walk.slots[0]
    # the second action plays its own file when assigned
    obj.animation_data.action = turn
    if animdata.SLOTTED:
        obj.animation_data.action_slot = turn.slots[0]
    motion, pos, _ = expected_positions(walk_files / "walk.asf", walk_files / "turn.amc")
    idx = [motion.skeleton.index(b.name) for b in obj.pose.bones]
    heads = played_heads(obj, range(1, 46))
    assert np.abs(heads - pos[:, idx]).max() < PLAYBACK_TOLERANCE * motion.skeleton.size()


def test_skeleton_alone_imports_in_rest_pose(walk_files):
    assert import_files(walk_files, "walk.asf") == {"FINISHED"}
    obj = bpy.context.active_object
    assert obj.animation_data is None or obj.animation_data.action is None
    skeleton = generated_walk().skeleton
    rest = motion_mod.transform_world(motion_mod.Motion.rest(skeleton, 1), acclaim.Y_UP_TO_Z_UP)
    names = [b.name for b in obj.data.bones]
    assert sorted(names) == sorted(skeleton.names)
    heads = np.array([b.head_local for b in obj.data.bones])
    expected = skeleton_mod.rest_positions(rest.skeleton)[[skeleton.index(n) for n in names]]
    assert np.abs(heads - expected).max() < 1e-5


def test_our_own_asf_comes_back_on_the_skeleton_it_was_made_from(walk_files, tmp_path):
    """walk.asf holds fixed ``<child>_link`` bones (children that do not start at their parent's end) and
    a root called ``root``, with our writer's notes: the armature has the generated walk's own bones,
    names and hierarchy instead, so no ``_link`` bone is offered where bones are picked (bone map,
    body part), and plays the walk; exported again, the files hold the links and come back the same."""
    source = generated_walk()
    in_file = asf_amc.read_asf(walk_files / "walk.asf").names
    assert "root" in in_file and sum(n.endswith("_link") for n in in_file) == 5
    import_files(walk_files, "walk.asf", "walk.amc")
    obj = bpy.context.active_object
    sk = source.skeleton
    bones = obj.data.bones
    assert sorted(b.name for b in bones) == sorted(sk.names)
    for j, name in enumerate(sk.names):
        parent = bones[name].parent
        assert (parent.name if parent else None) == (sk.names[sk.parents[j]] if sk.parents[j] >= 0 else None)
    expected = motion_mod.transform_world(source, acclaim.Y_UP_TO_Z_UP)
    heads = played_heads(obj, range(1, source.n_frames + 1))
    idx = [sk.index(b.name) for b in obj.pose.bones]
    assert np.abs(heads - expected.world_positions()[:, idx]).max() < PLAYBACK_TOLERANCE * sk.size()
    assert bpy.ops.export_anim.acclaim(filepath=str(tmp_path / "again.amc")) == {"FINISHED"}
    assert sum(n.endswith("_link") for n in asf_amc.read_asf(tmp_path / "again.asf").names) == 5
    import_files(tmp_path, "again.asf", "again.amc")
    assert sorted(b.name for b in bpy.context.active_object.data.bones) == sorted(sk.names)


def test_frame_rate_options(walk_files):
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    # the generated AMC notes 30 fps (our writer's comment), which wins over the 120 default
    import_files(walk_files, "walk.asf", "walk.amc", use_fps_scale=True, frame_start=10)
    keys = animdata.read_keys(animdata.object_channels(bpy.context.active_object).fcurves[0])[:, 0]
    assert np.allclose(keys, 10 + np.arange(60) * 24 / 30, atol=1e-4)
    assert (scene.render.fps, scene.frame_end) == (24, 250)  # the scene is left alone
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    import_files(walk_files, "walk.asf", "walk.amc", use_fps_scale=True, update_scene_fps=True)
    assert scene.render.fps == 30 and scene.render.fps_base == 1.0  # 1:1 once the scene plays at 30
    keys = animdata.read_keys(animdata.object_channels(bpy.context.active_object).fcurves[0])[:, 0]
    assert np.array_equal(keys, np.arange(1, 61))
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    text = (walk_files / "walk.amc").read_text().replace("# Mocap Workbench fps 30\n", "")
    (walk_files / "plain.amc").write_text(text)
    import_files(walk_files, "walk.asf", "plain.amc", fps=59.94, update_scene_fps=True, update_scene_frame_range=True)
    assert scene.render.fps == 60 and scene.render.fps / scene.render.fps_base == pytest.approx(59.94)
    assert (scene.frame_start, scene.frame_end) == (1, 60)


# --- failures leave nothing behind -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "old", "new", "match"),
    [
        (
            "bad.amc",
            "\nSpine ",
            "\nSpine 1 ",
            r"bad\.amc, line 7: bone 'Spine' needs 3 values \(one per dof\), found 4",
        ),
        ("bad.amc", "\n5\n", "\n5\nnobody 1 2 3\n", r"bad\.amc, line \d+: bone 'nobody' is not in the skeleton"),
        ("bad.asf", ":hierarchy", ":hierarchy\n  begin\n    ghost walk\n  end\n:junk", r"bad\.asf, line \d+"),
    ],
)
def test_malformed_files_are_refused_with_nothing_left_behind(walk_files, name, old, new, match):
    source = walk_files / ("walk.asf" if name.endswith(".asf") else "walk.amc")
    text = source.read_text()
    assert old in text
    (walk_files / name).write_text(text.replace(old, new, 1))
    files = ["walk.asf", "walk.amc", name] if name.endswith(".amc") else [name, "walk.amc"]
    before = data_counts()
    fps = bpy.context.scene.render.fps
    with pytest.raises(RuntimeError, match=match):
        import_files(walk_files, *files, update_scene_fps=True, update_scene_frame_range=True)
    assert data_counts() == before and bpy.context.scene.render.fps == fps


def test_selection_problems_are_refused(walk_files, tmp_path):
    before = data_counts()
    (walk_files / "other.asf").write_text((walk_files / "walk.asf").read_text())
    with pytest.raises(RuntimeError, match="select one skeleton"):
        import_files(walk_files, "walk.asf", "other.asf", "walk.amc")
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "x.amc").write_text((walk_files / "walk.amc").read_text())
    with pytest.raises(RuntimeError, match=r"no unambiguous \.asf"):
        import_files(lone, "x.amc")
    long_name = "Left" * 17  # 68 bytes: Blender would cut it short
    for suffix in ("asf", "amc"):
        text = (walk_files / f"walk.{suffix}").read_text().replace("LeftFoot", long_name)
        (lone / f"long.{suffix}").write_text(text)
    with pytest.raises(RuntimeError, match=f"Cannot import long.asf: bone name '{long_name}' is longer"):
        import_files(lone, "long.asf", "long.amc")
    assert data_counts() == before


def test_a_single_file_path_works_too(walk_files):
    assert bpy.ops.import_anim.acclaim(filepath=str(walk_files / "turn.amc")) == {"FINISHED"}
    obj = bpy.context.active_object
    assert obj.name == "walk" and obj.animation_data.action.name == "turn"


@pytest.mark.parametrize("where", ["build_armature", "write_values", "store_meta"])
def test_a_failure_while_building_removes_what_was_made(walk_files, monkeypatch, where):
    """Even past the readers (an unexpected error inside the armature build, while writing the
    second action, or at the very end), nothing is left and the active object is restored."""
    keep = bpy.data.objects.new("Keep", None)
    bpy.context.scene.collection.objects.link(keep)
    bpy.context.view_layer.objects.active = keep
    before = data_counts()
    calls = []
    original = getattr(acclaim, where)

    def failing(*args, **kwargs):
        calls.append(1)
        if where != "write_values" or len(calls) == 2:
            original(*args, **kwargs)  # the work is done (the datablocks exist) before it fails
            raise RuntimeError("disk on fire")
        return original(*args, **kwargs)

    monkeypatch.setattr(acclaim, where, failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        import_files(walk_files, "walk.asf", "walk.amc", "turn.amc")
    assert data_counts() == before and bpy.context.view_layer.objects.active == keep


# --- export ------------------------------------------------------------------------------


def all_positions(motion):
    pos, rot = kinematics.forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    return pos, kinematics.end_site_positions(motion.skeleton, pos, rot)


@pytest.mark.parametrize("scale", [1.0, 0.0564])
def test_cmu_export_round_trip(tmp_path, scale):
    """Import CMU 01/01_01 (optionally scaled to metres), export, read back with the core: the
    same world joint and End Site positions within 1e-4 of the body size (measured ~2e-7),
    and the file's own bone axes, dofs, limits, units and AMC numbers."""
    asf, amc = shared_file("cmu_asf_amc/01.asf"), shared_file("cmu_asf_amc/01_01.amc")
    import_files(asf.parent, "01.asf", "01_01.amc", global_scale=scale)
    start = time.perf_counter()
    assert bpy.ops.export_anim.acclaim(filepath=str(tmp_path / "take.amc")) == {"FINISHED"}
    seconds = time.perf_counter() - start
    original = asf_amc.read_asf_amc(asf, amc)
    back = asf_amc.read_asf_amc(tmp_path / "take.asf", tmp_path / "take.amc")
    sk, bsk = original.skeleton, back.skeleton
    assert bsk.names == sk.names and bsk.channels == sk.channels and bsk.limits == sk.limits
    assert bsk.meta == sk.meta  # units (length 0.45) and name
    assert np.abs(quat.dot(bsk.rest_rotations, sk.rest_rotations)).min() > 1 - 1e-12  # ASF axes
    assert back.n_frames == original.n_frames and back.fps == bpy.context.scene.render.fps
    pa, ea = all_positions(original)
    pb, eb = all_positions(back)
    size = sk.size()
    err = max(np.abs(pa - pb).max(), np.abs(ea - eb).max())
    assert err < 1e-4 * size, err
    values = [(a, b) for a, b in zip(asf_amc.dof_values(original), asf_amc.dof_values(back)) if a is not None]
    assert max(np.abs(a - b).max() for a, b in values) < 1e-3  # degrees (and root units)
    print(f"\nCMU round trip (scale {scale}): max position error {err:.2e} units (size {size:.1f}), {seconds:.2f} s")


def test_export_of_an_armature_not_made_from_acclaim(tmp_path):
    """A generated Y-up walk on an armature (bones with Blender's default rolls, hips starting
    away from the root): world-aligned axes, ``_link`` bones where needed, positions kept."""
    armature = import_module(PACKAGE + ".addon.common.armature")
    motion = synthetic.walk(40, fps=30.0)
    motion = motion_mod.transform_world(motion, acclaim.Y_UP_TO_Z_UP)  # Z-up armature space
    obj = armature.create_animated_armature(motion, "Walker", bpy.context.scene.collection, "XYZ", y_up=False)
    bpy.context.view_layer.objects.active = obj
    obj.pose.bones["Head"].rotation_euler = (0.3, 0.0, 0.0)  # posed but not keyed: still exported
    assert bpy.ops.export_anim.acclaim(filepath=str(tmp_path / "walker.amc"), global_scale=10.0) == {"FINISHED"}
    back = asf_amc.read_asf_amc(tmp_path / "walker.asf", tmp_path / "walker.amc")
    assert np.allclose(back.fps, bpy.context.scene.render.fps)
    assert np.allclose(back.skeleton.rest_rotations[1:], [1, 0, 0, 0])  # axis 0 0 0 (root: orientation 0 0 0)
    clip = clips.read_clip(obj)
    expected = motion_mod.transform_world(clip.motion, quat.inverse(acclaim.Y_UP_TO_Z_UP), 10.0)
    pa, ea = all_positions(expected)
    pb, eb = all_positions(back)
    names = [n if i else "root" for i, n in enumerate(expected.skeleton.names)]
    idx = [back.skeleton.index(n) for n in names]
    size = expected.skeleton.size()
    assert np.abs(pb[:, idx] - pa).max() < 1e-5 * size and np.abs(eb - ea).max() < 1e-5 * size
    head = back.skeleton.index("Head")
    assert back.skeleton.channels[head] == ("Zrotation", "Yrotation", "Xrotation")


def test_export_refuses_several_roots(tmp_path):
    armature = import_module(PACKAGE + ".addon.common.armature")
    obj = armature.create_animated_armature(synthetic.walk(5), "Rig", bpy.context.scene.collection)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones["Spine"].parent = None
    bpy.ops.object.mode_set(mode="OBJECT")
    with pytest.raises(RuntimeError, match="several root bones"):
        bpy.ops.export_anim.acclaim(filepath=str(tmp_path / "x.amc"))
    assert not (tmp_path / "x.amc").exists()


# --- Extract Keyframes on the imported armature ------------------------------------------


def test_extract_keyframes_on_an_imported_cmu_armature():
    asf, amc = shared_file("cmu_asf_amc/01.asf"), shared_file("cmu_asf_amc/01_01.amc")
    import_files(asf.parent, "01.asf", "01_01.amc")
    obj = bpy.context.active_object
    count = round(0.05 * 2751)
    assert bpy.ops.mocap.extract_keyframes(method="THRESHOLD", target="COUNT", count=count) == {"FINISHED"}
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    assert info["keyframes"] == count and bpy.data.actions["01_01"].use_fake_user
    curves = animdata.object_channels(obj).fcurves
    keys = np.array(animdata.read_keys(curves[0])[:, 0], dtype=int) - 1
    assert len(keys) == count and keys[0] == 0 and keys[-1] == 2750
    # independent: the core's rebuild of the file from the same keys
    original = asf_amc.read_asf_amc(asf, amc)
    rebuilt = keyframes.reconstruct(original, keys)
    err = np.linalg.norm(original.world_positions() - rebuilt.world_positions(), axis=-1)
    # the measure counts every bone's head, tip and sides on the armature's bones: the source action
    # as the core reads it, rebuilt from the same keys; its heads are the file's joints
    clip = clips.read_clip(obj, animdata.action_channels(obj, bpy.data.actions["01_01"]))
    measured = keyframes.position_errors(clip.motion, keyframes.reconstruct(clip.motion, keys))
    assert measured[:, : err.shape[1]].mean() == pytest.approx(err.mean(), rel=0.01)
    assert info["position_mean"] == pytest.approx(measured.mean(), rel=0.01)
    assert "Blender playback" in bpy.context.scene.mocap_workbench.last_report


def test_extract_keyframes_on_an_imported_generated_take(walk_files):
    import_files(walk_files, "walk.asf", "walk.amc", rotate_mode="ZXY")
    assert bpy.ops.mocap.extract_keyframes(method="OPTIMAL", target="COUNT", count=8) == {"FINISHED"}
    assert bpy.context.active_object.animation_data.action["mocap_workbench"]["keyframes"]["keyframes"] == 8
