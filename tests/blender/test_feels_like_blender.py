"""The extension follows Blender's conventions (issue #11 item 5, "Feels like Blender"): UPPER_CASE
enum identifiers that still open old files, tooltips in Blender's voice, units, the Dope Sheet header
button, a compact sidebar, add-on preferences, operator presets, poll messages, a lean zip."""

from importlib import import_module

import bpy
import pytest

from tests.blender.conftest import PACKAGE

armature = import_module(PACKAGE + ".addon.common.armature")
synthetic = import_module(PACKAGE + ".core.synthetic")

# Extract Keyframes' methods in the order of the identifiers files saved before they became UPPER_CASE
# ('hybrid', 'optimal', …): a .blend stores an enum as its item's index, so this order must not change.
OLD_METHODS = ("hybrid", "optimal", "activity", "simplify", "threshold", "uniform")
OLD_SHAPES = ("smootherstep", "smoothstep", "linear")


def make_rig(motion=None):
    motion = motion or synthetic.demo_clip()
    obj = armature.create_animated_armature(motion, "Mocap", bpy.context.scene.collection)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def extension_classes() -> list[type]:
    """Every class the extension registered (operators, panels, menus, lists, property groups…)."""
    bases = (bpy.types.Operator, bpy.types.Panel, bpy.types.Menu, bpy.types.UIList, bpy.types.PropertyGroup,
             bpy.types.AddonPreferences, bpy.types.FileHandler)  # fmt: skip
    found, stack = [], list(bases)
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith(PACKAGE) and getattr(sub, "is_registered", False):
                found.append(sub)
    return sorted(set(found), key=lambda c: c.__name__)


def own_properties(cls) -> list:
    return [p for p in cls.bl_rna.properties if p.identifier != "rna_type"]


def stored_settings(scene):
    """The raw ID properties behind ``scene.mocap_workbench`` (5.0 keeps bpy.props apart from custom ones)."""
    holder = scene.bl_system_properties_get() if hasattr(scene, "bl_system_properties_get") else scene
    return holder["mocap_workbench"]


# --- 1. enum identifiers -----------------------------------------------------------------------


def test_every_enum_identifier_is_upper_case():
    enums = [(cls.__name__, p) for cls in extension_classes() for p in own_properties(cls) if p.type == "ENUM"]
    assert len(enums) >= 15
    for owner, prop in enums:
        for item in prop.enum_items:
            assert item.identifier == item.identifier.upper(), (owner, prop.identifier, item.identifier)


def test_items_keep_the_order_old_files_stored():
    settings = bpy.context.scene.mocap_workbench
    methods = settings.bl_rna.properties["method"].enum_items
    assert [i.identifier for i in methods] == [m.upper() for m in OLD_METHODS]
    shapes = settings.editing.bl_rna.properties["falloff_shape"].enum_items
    assert [i.identifier for i in shapes] == [s.upper() for s in OLD_SHAPES]


def test_a_file_saved_with_the_old_identifiers_opens_with_its_settings(tmp_path):
    """Scene settings (a PointerProperty's PropertyGroup) keep an enum as its item's index: a file saved
    when the 4th method was 'simplify' (index 3) opens with 'SIMPLIFY'."""
    scene = bpy.context.scene
    scene.mocap_workbench.method = "SIMPLIFY"
    scene.mocap_workbench.editing.falloff_shape = "LINEAR"
    raw = stored_settings(scene)
    assert raw["method"] == OLD_METHODS.index("simplify") and isinstance(raw["method"], int)
    raw["method"] = OLD_METHODS.index("threshold")  # what a file of the lowercase days holds for 'threshold'
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.context.scene.mocap_workbench.method != "THRESHOLD"
    bpy.ops.wm.open_mainfile(filepath=path)
    settings = bpy.context.scene.mocap_workbench
    assert settings.method == "THRESHOLD" and settings.editing.falloff_shape == "LINEAR"


def test_python_callers_pass_upper_case_identifiers():
    """Decision: Python callers and presets use the new identifiers; the old lowercase ones are refused
    with Blender's own error naming the valid ones (there were no operator presets before this version)."""
    make_rig()
    assert bpy.ops.mocap.extract_keyframes(method="HYBRID", target="COUNT", count=12) == {"FINISHED"}
    with pytest.raises(TypeError, match="HYBRID"):
        bpy.ops.mocap.extract_keyframes(method="hybrid", target="COUNT", count=12)
