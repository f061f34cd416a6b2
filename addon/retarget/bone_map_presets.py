"""Bone map presets in Blender's preset menu (Retarget › Bone Map): apply, add (+), remove (−).

A preset is the bone map document of :mod:`core.retarget.presets` in a ``.py`` file, read as
data, never run. The presets shipped with the extension (one per naming convention, generated
from ``CONVENTIONS``: :func:`core.retarget.presets.shipped_presets`) live in
``presets/mocap_workbench/bone_maps`` beside this module, a folder registered with
``bpy.utils.register_preset_path`` as bundled add-ons ship theirs: read-only, listed together
with the user's own presets, which the + button writes to Blender's user preset folder
(``scripts/presets/mocap_workbench/bone_maps``).

Applying a preset maps by names onto the **active armature** (the target), as
:func:`core.retarget.presets.resolve_preset` says: a convention preset ("Mixamo") finds the
target's bones by that convention's names, namespace and case aside (``mixamorig7:Hips`` too),
and pairs each with the source armature's bone of the same body part by the source's own
labelling; a saved preset pairs its rows by name keys, so it applies to a rig with another
namespace. The JSON files of Load/Save Bone Map hold the same document.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import bpy
from bl_operators.presets import AddPresetBase
from bpy.props import StringProperty
from bpy.types import Menu, Operator

from ..common.guard import reported_errors
from ..common.poll import poll_result, target_armature_message

SUBDIR = "mocap_workbench/bone_maps"
PRESET_ROOT = Path(__file__).resolve().parent  # holds presets/<SUBDIR> (register_preset_path's layout)
SHIPPED = PRESET_ROOT / "presets" / SUBDIR


def is_shipped(path: str | os.PathLike) -> bool:
    """Whether ``path`` is one of the presets shipped with the extension (never removed)."""
    try:
        return Path(path).resolve().parent == SHIPPED
    except OSError:
        return False


def apply_document(operator: Any, context: Any, document: dict) -> set[str]:
    """Fill the Retarget panel's bone map for the active armature from a preset document
    (:func:`core.retarget.presets.resolve_preset`, on a control rig its body), reporting on ``operator``;
    the source is the panel's (or the other selected) armature, optional for a preset of bone names."""
    from ...core.retarget.presets import resolve_preset
    from ..common.armature import skeleton_from_armature
    from .operators import core_body_missing, find_source
    from .retarget_action import fill_bone_map, target_skeleton

    target = context.active_object
    source = find_source(context)
    mapping, missing = resolve_preset(
        document, skeleton_from_armature(source) if source is not None else None, target_skeleton(target)
    )
    if not mapping:
        operator.report({"ERROR"}, f"The preset maps no bone of '{target.name}'" + (
            f" (not found: {', '.join(missing[:3])})" if missing else ""))  # fmt: skip
        return {"CANCELLED"}
    settings = context.scene.mocap_workbench.retarget
    count = fill_bone_map(settings.bone_map, target, mapping)
    settings.bone_map_target = target.name
    if missing:
        operator.report({"WARNING"}, f"{len(missing)} bones of the preset are not in these armatures: "
                                     f"{', '.join(missing[:3])}")  # fmt: skip
    text = f"Mapped {count} of {len(target.data.bones)} bones of '{target.name}'"
    lacking = core_body_missing(source, target, mapping) if source is not None else ""
    if lacking:
        operator.report({"WARNING"}, f"{text}; not mapped: {lacking} (map them before Retarget)")
    else:
        operator.report({"INFO"}, text)
    return {"FINISHED"}


def _target_poll(cls: Any, context: Any) -> bool:
    return poll_result(cls, target_armature_message(context.active_object))


class MOCAP_MT_bone_map_presets(Menu):
    """Bone maps: one per naming convention, and your own"""

    bl_label = "Bone Map Presets"
    preset_subdir = SUBDIR
    preset_operator = "mocap.retarget_bone_map_preset"
    preset_extensions = {".py"}
    draw = Menu.draw_preset


class MOCAP_OT_retarget_bone_map_preset(Operator):
    """Map the active armature's bones to the source armature's with this preset"""

    bl_idname = "mocap.retarget_bone_map_preset"
    bl_label = "Apply Bone Map Preset"
    bl_options = {"REGISTER", "UNDO"}

    filepath: StringProperty(subtype="FILE_PATH", options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context):
        return _target_poll(cls, context)

    @reported_errors
    def execute(self, context):
        from ...core.retarget.presets import read_preset

        document = read_preset(self.filepath)  # ValueError naming the file
        result = apply_document(self, context, document)
        if "FINISHED" in result:  # the menu shows the preset last applied, as Blender's own do
            MOCAP_MT_bone_map_presets.bl_label = bpy.path.display_name(Path(self.filepath).name, title_case=False)
        return result


class MOCAP_OT_retarget_bone_map_preset_add(AddPresetBase, Operator):
    """Add the bone map as a preset, or remove the preset chosen in the menu"""

    bl_idname = "mocap.retarget_bone_map_preset_add"
    bl_label = "Add Bone Map Preset"
    preset_menu = "MOCAP_MT_bone_map_presets"
    preset_subdir = SUBDIR

    @classmethod
    def poll(cls, context):
        return _target_poll(cls, context)

    @reported_errors
    def execute(self, context):
        removing = self.remove_active or self.remove_name
        if removing:
            name = MOCAP_MT_bone_map_presets.bl_label if self.remove_active else self.name
            found = bpy.utils.preset_find(name, SUBDIR) or bpy.utils.preset_find(name, SUBDIR, display_name=True)
            if found and is_shipped(found):
                self.report({"WARNING"}, f"'{name}' is shipped with Mocap Workbench and cannot be removed")
                return {"CANCELLED"}
        elif self.name.strip():
            if not len(context.scene.mocap_workbench.retarget.bone_map):
                self.report({"ERROR"}, "The bone map is empty: use Auto-Map or a preset first")
                return {"CANCELLED"}
            if not self.as_filename(self.name):  # Blender would write a hidden ".py" no menu shows
                self.report({"ERROR"}, f"'{self.name.strip()}' has no letters or digits to name a preset file")
                return {"CANCELLED"}
        result = super().execute(context)
        if not removing and "FINISHED" in result and self.name.strip():
            # As applying a preset names the menu (Blender's add title-cases a lowercase name, which
            # the − button then cannot find).
            name = bpy.path.display_name(self.as_filename(self.name), has_ext=False, title_case=False)
            MOCAP_MT_bone_map_presets.bl_label = name
        return result

    def add(self, context, filepath):
        """Write the Retarget panel's bone map as a preset document (AddPresetBase's hook)."""
        from ...core.retarget.presets import preset_document, write_preset
        from .retarget_action import bone_map_of

        settings = context.scene.mocap_workbench.retarget
        source = settings.source.name if settings.source else ""
        write_preset(filepath, preset_document(bone_map_of(settings.bone_map), source=source,
                                               target=settings.bone_map_target))  # fmt: skip


def draw_preset_row(layout: Any) -> None:
    """The preset menu with its + and − buttons, as Blender's own panels show them."""
    row = layout.row(align=True)
    row.menu(MOCAP_MT_bone_map_presets.__name__, text=MOCAP_MT_bone_map_presets.bl_label)
    row.operator(MOCAP_OT_retarget_bone_map_preset_add.bl_idname, text="", icon="ADD")
    row.operator(MOCAP_OT_retarget_bone_map_preset_add.bl_idname, text="", icon="REMOVE").remove_active = True


def register() -> None:
    bpy.utils.register_preset_path(str(PRESET_ROOT))


def unregister() -> None:
    bpy.utils.unregister_preset_path(str(PRESET_ROOT))


classes = (MOCAP_MT_bone_map_presets, MOCAP_OT_retarget_bone_map_preset, MOCAP_OT_retarget_bone_map_preset_add)
