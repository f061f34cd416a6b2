"""Bone map presets in Blender's preset menu, and Retarget Batch, driven headless as a user drives them."""

from importlib import import_module
from pathlib import Path

import addon_utils
import bpy
import pytest

from tests.blender.conftest import PACKAGE
from tests.conftest import shared_file

bvh = import_module(PACKAGE + ".core.io.bvh")
presets = import_module(PACKAGE + ".core.retarget.presets")
mapping_mod = import_module(PACKAGE + ".core.retarget.mapping")
armature = import_module(PACKAGE + ".addon.common.armature")
bone_map_presets = import_module(PACKAGE + ".addon.retarget.bone_map_presets")

SUBDIR = "mocap_workbench/bone_maps"


@pytest.fixture(scope="module")
def short_captures(tmp_path_factory):
    """Short copies of shared captures (the first frames), so each test stays fast."""
    folder = tmp_path_factory.mktemp("short")
    out = {}
    for relative, n_frames in (("mixamo/Walk-In-Circle.bvh", 40), ("cmu_bvh_3dsmax/131_01.bvh", 40),
                               ("cmu_bvh_cgspeed/02_01.bvh", 30), ("cmu_bvh_cgspeed/05_01.bvh", 24)):  # fmt: skip
        path = folder / Path(relative).name
        bvh.write_bvh(bvh.read_bvh(shared_file(relative)).frames(slice(0, n_frames)), path)
        out[Path(relative).stem] = path
    return out


def import_bvh(path):
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode="QUATERNION")
    return bpy.context.active_object


def make_pair(source, target):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    source.select_set(True)
    target.select_set(True)
    bpy.context.view_layer.objects.active = target
    bpy.context.scene.mocap_workbench.retarget.source = source


def shipped(name):
    return str(bone_map_presets.SHIPPED / f"{name}.py")


def bone_map():
    settings = bpy.context.scene.mocap_workbench.retarget
    return {row.target: row.source for row in settings.bone_map if row.source}


# --- presets ----------------------------------------------------------------------------------


def test_menu_registered_and_every_convention_shipped():
    menu = bpy.types.MOCAP_MT_bone_map_presets
    assert menu.preset_subdir == SUBDIR and menu.preset_operator == "mocap.retarget_bone_map_preset"
    assert hasattr(bpy.types, "MOCAP_OT_retarget_bone_map_preset_add")
    assert str(bone_map_presets.SHIPPED) in [str(Path(p).resolve()) for p in bpy.utils.preset_paths(SUBDIR)]
    # The shipped files are exactly what CONVENTIONS generates (one source of truth).
    files = {p.name: p.read_text(encoding="utf-8") for p in bone_map_presets.SHIPPED.glob("*.py")}
    assert files == presets.shipped_presets()
    conventions = {presets.read_preset(bone_map_presets.SHIPPED / name)["convention"] for name in files}
    assert conventions == set(mapping_mod.CONVENTIONS)
    for name in ("Mixamo", "Character_Creator", "Xsens_MVN", "Perception_Neuron", "Unreal_Mannequin",
                 "Unity_Humanoid", "Rigify", "VRM", "Daz_Genesis", "3ds_Max_Biped", "CMU_cgspeed"):  # fmt: skip
        assert name + ".py" in files


def test_mixamo_preset_maps_the_core_body_of_a_namespaced_rig(short_captures):
    target = import_bvh(short_captures["Walk-In-Circle"])  # mixamorig7:Hips ...
    source = import_bvh(short_captures["131_01"])  # CMU 3ds Max names: LeftHip is the thigh, LeftShoulder the arm
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("Mixamo")) == {"FINISHED"}
    got = bone_map()
    expected = {"Hips": "Hips", "Head": "Head", "LeftUpLeg": "LeftHip", "LeftLeg": "LeftKnee", "LeftFoot": "LeftAnkle",
                "RightUpLeg": "RightHip", "RightLeg": "RightKnee", "RightFoot": "RightAnkle",
                "LeftArm": "LeftShoulder", "LeftForeArm": "LeftElbow", "LeftHand": "LeftWrist",
                "RightArm": "RightShoulder", "RightForeArm": "RightElbow", "RightHand": "RightWrist"}  # fmt: skip
    for t, s in expected.items():
        assert got.get(f"mixamorig7:{t}") == s, t
    missing = mapping_mod.map_labels(got, armature.skeleton_from_armature(source),
                                     armature.skeleton_from_armature(target), allow_partial=True)[2]  # fmt: skip
    assert missing == []
    assert bpy.context.scene.mocap_workbench.retarget.bone_map_target == target.name
    assert bpy.types.MOCAP_MT_bone_map_presets.bl_label == "Mixamo"
    # A convention the rig does not follow maps nothing: an error, the map left as it was.
    with pytest.raises(RuntimeError, match="maps no bone"):
        bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("VRM"))
    assert bone_map() == got


def test_saved_preset_round_trips_across_namespaces_and_is_removed(short_captures):
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_auto_map() == {"FINISHED"}
    settings = bpy.context.scene.mocap_workbench.retarget
    settings.bone_map[0].source = "LowerBack"  # a hand edit the preset must keep (the hips follow LowerBack)
    saved = bone_map()
    assert bpy.ops.mocap.retarget_bone_map_preset_add(name="My Rig") == {"FINISHED"}
    path = bpy.utils.preset_find("My_Rig", SUBDIR)
    try:
        assert path and not bone_map_presets.is_shipped(path)
        assert presets.read_preset(path)["map"] == saved
        bpy.ops.mocap.retarget_clear_map()
        assert bone_map() == {}
        assert bpy.ops.mocap.retarget_bone_map_preset(filepath=path) == {"FINISHED"}
        assert bone_map() == saved
        # Another namespace on the target: the rows are found by name keys, not literal names.
        for bone in target.data.bones:
            bone.name = bone.name.replace("mixamorig7:", "mixamorig:")
        bpy.ops.mocap.retarget_clear_map()
        assert bpy.ops.mocap.retarget_bone_map_preset(filepath=path) == {"FINISHED"}
        assert bone_map() == {t.replace("mixamorig7:", "mixamorig:"): s for t, s in saved.items()}
        # The − button removes the preset last applied.
        assert bpy.types.MOCAP_MT_bone_map_presets.bl_label == "My Rig"
        assert bpy.ops.mocap.retarget_bone_map_preset_add(remove_active=True) == {"FINISHED"}
        assert not Path(path).exists() and bpy.utils.preset_find("My_Rig", SUBDIR) is None
    finally:
        if path and Path(path).exists():
            Path(path).unlink()


def test_shipped_presets_are_never_removed(short_captures):
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("Mixamo")) == {"FINISHED"}
    assert bpy.ops.mocap.retarget_bone_map_preset_add(remove_active=True) == {"CANCELLED"}
    assert Path(shipped("Mixamo")).exists()


def test_json_file_is_the_same_document(short_captures, tmp_path):
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("Mixamo"))
    saved = bone_map()
    path = tmp_path / "map.json"
    assert bpy.ops.mocap.retarget_save_map(filepath=str(path)) == {"FINISHED"}
    bpy.ops.mocap.retarget_clear_map()
    assert bpy.ops.mocap.retarget_load_map(filepath=str(path)) == {"FINISHED"}
    assert bone_map() == saved
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(RuntimeError, match="bad.json"):
        bpy.ops.mocap.retarget_load_map(filepath=str(tmp_path / "bad.json"))
    assert bone_map() == saved
