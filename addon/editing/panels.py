"""Motion editing UI: the scene's Edit settings, the sidebar Edit panel (Mocap tab) with one sub-panel
per operation in the 3D Viewport, Dope Sheet and Graph Editor, the PCA action list, and the
Motion Editing menu (Key menus, Object › Animation)."""

from __future__ import annotations

import bpy
from bpy.props import CollectionProperty, IntProperty, PointerProperty, StringProperty

from ..common import animdata
from ..common.guard import reported_errors
from ..common.panels import Sidebar, draw_report
from ..common.poll import poll_result
from .operators import (
    MOCAP_OT_blend_body_part,
    MOCAP_OT_copy_range,
    MOCAP_OT_cut_range,
    MOCAP_OT_interpolate_actions,
    MOCAP_OT_paste_range,
    MOCAP_OT_pca_synthesis,
    MOCAP_OT_reverse_motion,
    MOCAP_OT_rotate_motion,
    MOCAP_OT_smoothed_pose_edit,
    MOCAP_OT_time_scale_motion,
    MOCAP_OT_transition,
    edit_poll_message,
    matching_actions,
    settings_properties,
)


def _animates_active(_self, action) -> bool:
    """Action pickers list the actions that animate bones of the active armature."""
    obj = bpy.context.active_object
    return obj is not None and obj.type == "ARMATURE" and animdata.animates_bones(action, obj.data.bones)


def _action_pointer(name: str, description: str) -> PointerProperty:
    return PointerProperty(name=name, type=bpy.types.Action, poll=_animates_active, description=description)


class MOCAP_PG_action_item(bpy.types.PropertyGroup):
    """One row of the PCA action list"""

    __annotations__ = {"action": _action_pointer("Action", "Action to learn from")}


class MOCAP_PG_editing(bpy.types.PropertyGroup):
    """Edit settings kept with the scene, shown in the sidebar"""

    __annotations__ = {
        **settings_properties(),
        "transition_from": _action_pointer("From", "Action to start with (empty: the active action)"),
        "transition_to": _action_pointer("To", "Action to blend into"),
        "blend_from": _action_pointer("From", "Action the body part comes from"),
        "interpolate_with": _action_pointer("With", "Action at coefficient 1 (the active action is at 0)"),
        "pca_actions": CollectionProperty(type=MOCAP_PG_action_item),
        "pca_index": IntProperty(name="Active Action", default=0),
        "clipboard": PointerProperty(type=bpy.types.Action, name="Copied", description="Action of the copied range"),
        "clipboard_start": IntProperty(name="Copied Start", default=1),
        "clipboard_end": IntProperty(name="Copied End", default=1),
        "last_report": StringProperty(name="Last Result", default=""),
    }


class MOCAP_UL_actions(bpy.types.UIList):
    """Actions PCA Synthesis learns from"""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        layout.prop(item, "action", text="", emboss=True)


class _ArmatureActionsOperator:
    """Mixin of the PCA list operators that list the active armature's actions: greyed out, saying why,
    without one."""

    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return poll_result(cls, edit_poll_message(context, need_action=False, writes=False))


class MOCAP_OT_pca_list_add(_ArmatureActionsOperator, bpy.types.Operator):
    """Add a row to the PCA action list (the next action of the armature not in it yet)"""

    bl_idname = "mocap.pca_list_add"
    bl_label = "Add Action"

    @reported_errors
    def execute(self, context):
        settings = context.scene.mocap_workbench.editing
        listed = {item.action for item in settings.pca_actions}
        candidates = matching_actions(context.active_object, "")
        item = settings.pca_actions.add()
        item.action = next((a for a in candidates if a not in listed), None)
        settings.pca_index = len(settings.pca_actions) - 1
        return {"FINISHED"}


class MOCAP_OT_pca_list_remove(bpy.types.Operator):
    """Remove the selected row from the PCA action list"""

    bl_idname = "mocap.pca_list_remove"
    bl_label = "Remove Action"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        empty = not len(context.scene.mocap_workbench.editing.pca_actions)
        return poll_result(cls, "The list is empty" if empty else None)

    @reported_errors
    def execute(self, context):
        settings = context.scene.mocap_workbench.editing
        settings.pca_actions.remove(settings.pca_index)
        settings.pca_index = max(0, min(settings.pca_index, len(settings.pca_actions) - 1))
        return {"FINISHED"}


class MOCAP_OT_pca_list_fill(_ArmatureActionsOperator, bpy.types.Operator):
    """Fill the PCA action list with every action of the armature whose name matches the filter"""

    bl_idname = "mocap.pca_list_fill"
    bl_label = "Add Matching Actions"

    @reported_errors
    def execute(self, context):
        settings = context.scene.mocap_workbench.editing
        settings.pca_actions.clear()
        found = matching_actions(context.active_object, settings.name_filter)
        for action in found:
            settings.pca_actions.add().action = action
        self.report({"INFO"}, f"Listed {len(found)} actions")
        return {"FINISHED"}


# --- panels ------------------------------------------------------------------------------------


def _prepare(layout):
    layout.use_property_split = True
    layout.use_property_decorate = False
    return layout


def draw_edit(self, context):
    layout = _prepare(self.layout)
    message = edit_poll_message(context, need_action=False)
    if message:
        layout.label(text=message, icon="INFO")
    draw_report(layout, context.scene.mocap_workbench.editing.last_report.splitlines())


def draw_rotate(self, context):
    layout = _prepare(self.layout)
    settings = context.scene.mocap_workbench.editing
    layout.prop(settings, "angle")
    layout.prop(settings, "pivot")
    layout.operator(MOCAP_OT_rotate_motion.bl_idname, icon="DRIVER_ROTATIONAL_DIFFERENCE")


def draw_transition(self, context):
    layout = _prepare(self.layout)
    settings = context.scene.mocap_workbench.editing
    layout.prop(settings, "transition_from")
    layout.prop(settings, "transition_to")
    layout.prop(settings, "window")
    layout.prop(settings, "search_join")
    row = layout.row()
    row.active = settings.output == "ACTION"
    row.prop(settings, "clean_feet")
    layout.prop(settings, "output")
    layout.operator(MOCAP_OT_transition.bl_idname, icon="NLA" if settings.output == "NLA" else "ACTION")


def draw_blend(self, context):
    layout = _prepare(self.layout)
    settings = context.scene.mocap_workbench.editing
    layout.prop(settings, "blend_from")
    obj = context.active_object
    if obj is not None and obj.type == "ARMATURE":
        layout.prop_search(settings, "bone", obj.data, "bones")
    else:
        layout.prop(settings, "bone")
    for name in ("frame_offset", "weight", "soft_edge", "take_root", "fit_length"):
        layout.prop(settings, name)
    layout.operator(MOCAP_OT_blend_body_part.bl_idname, icon="BONE_DATA")


def draw_interpolate(self, context):
    layout = _prepare(self.layout)
    settings = context.scene.mocap_workbench.editing
    layout.prop(settings, "interpolate_with")
    layout.prop(settings, "coefficient", slider=True)
    layout.prop(settings, "speed")
    layout.operator(MOCAP_OT_interpolate_actions.bl_idname, icon="IPO_EASE_IN_OUT")


def draw_pca(self, context):
    layout = _prepare(self.layout)
    settings = context.scene.mocap_workbench.editing
    layout.prop(settings, "pca_source")
    if settings.pca_source == "LIST":
        row = layout.row()
        row.template_list("MOCAP_UL_actions", "", settings, "pca_actions", settings, "pca_index", rows=4)
        column = row.column(align=True)
        column.operator(MOCAP_OT_pca_list_add.bl_idname, text="", icon="ADD")
        column.operator(MOCAP_OT_pca_list_remove.bl_idname, text="", icon="REMOVE")
        column.separator()
        column.operator(MOCAP_OT_pca_list_fill.bl_idname, text="", icon="FILTER")
    layout.prop(settings, "name_filter")
    layout.prop(settings, "parameter")
    if settings.parameter == "PROPERTY":
        layout.prop(settings, "property_name")
    layout.prop(settings, "use_range_position")
    layout.prop(settings, "position" if settings.use_range_position else "value", slider=True)
    layout.prop(settings, "cycles")
    layout.prop(settings, "components")
    layout.operator(MOCAP_OT_pca_synthesis.bl_idname, icon="MOD_WAVE")


def draw_pose_edit(self, context):
    layout = _prepare(self.layout)
    settings = context.scene.mocap_workbench.editing
    layout.label(text="Pose bones at the current frame, then spread the change", icon="POSE_HLT")
    layout.prop(settings, "falloff")
    layout.prop(settings, "falloff_shape")
    layout.prop(settings, "in_place")
    layout.operator(MOCAP_OT_smoothed_pose_edit.bl_idname, icon="SMOOTHCURVE")


def draw_clip(self, context):
    layout = _prepare(self.layout)
    settings = context.scene.mocap_workbench.editing
    layout.prop(settings, "frame_range")
    if settings.frame_range == "CUSTOM":
        layout.prop(settings, "frame_start")
        layout.prop(settings, "frame_end")
    layout.operator(MOCAP_OT_reverse_motion.bl_idname, icon="ARROW_LEFTRIGHT")
    row = layout.row(align=True)
    row.operator(MOCAP_OT_cut_range.bl_idname, icon="X")
    row.operator(MOCAP_OT_copy_range.bl_idname, icon="COPYDOWN")
    layout.operator(MOCAP_OT_paste_range.bl_idname, icon="PASTEDOWN")
    if settings.clipboard:
        layout.label(
            text=f"Copied: '{settings.clipboard.name}' {settings.clipboard_start}–{settings.clipboard_end}",
            icon="ACTION",
        )
    layout.separator()
    layout.prop(settings, "scale_mode")
    if settings.scale_mode == "FACTOR":
        layout.prop(settings, "factor")
    else:
        layout.prop(settings, "fps")
        layout.prop(settings, "update_scene_fps")
    layout.operator(MOCAP_OT_time_scale_motion.bl_idname, icon="TIME")


SUBPANELS = (
    ("rotate", "Rotate", draw_rotate),
    ("transition", "Transition", draw_transition),
    ("blend", "Blend Body Part", draw_blend),
    ("interpolate", "Interpolate", draw_interpolate),
    ("pca", "PCA Synthesis", draw_pca),
    ("pose_edit", "Smoothed Pose Edit", draw_pose_edit),
    ("clip", "Clip", draw_clip),
)
SPACES = (("VIEW_3D", "view3d"), ("DOPESHEET_EDITOR", "dopesheet"), ("GRAPH_EDITOR", "graph"))


def _panels() -> list[type]:
    """The Edit panel and its sub-panels for each editor's sidebar."""
    panels = []
    for space, suffix in SPACES:
        parent = f"MOCAP_PT_edit_{suffix}"
        base = type(f"_EditPanel_{suffix}", (Sidebar,), {"bl_space_type": space})
        panels.append(type(parent, (base, bpy.types.Panel), {"bl_label": "Edit", "draw": draw_edit}))
        sub = type(f"_EditSubPanel_{suffix}", (base,), {"bl_parent_id": parent, "bl_options": {"DEFAULT_CLOSED"}})
        for key, label, draw in SUBPANELS:
            attributes = {"bl_label": label, "draw": draw}
            panels.append(type(f"MOCAP_PT_edit_{key}_{suffix}", (sub, bpy.types.Panel), attributes))
    return panels


class MOCAP_MT_motion_editing(bpy.types.Menu):
    bl_idname = "MOCAP_MT_motion_editing"
    bl_label = "Motion Editing"

    def draw(self, context):
        layout = self.layout
        layout.operator(MOCAP_OT_rotate_motion.bl_idname, icon="DRIVER_ROTATIONAL_DIFFERENCE")
        layout.operator(MOCAP_OT_transition.bl_idname, icon="ACTION")
        layout.operator(MOCAP_OT_blend_body_part.bl_idname, icon="BONE_DATA")
        layout.operator(MOCAP_OT_interpolate_actions.bl_idname, icon="IPO_EASE_IN_OUT")
        layout.operator(MOCAP_OT_pca_synthesis.bl_idname, icon="MOD_WAVE")
        layout.operator(MOCAP_OT_smoothed_pose_edit.bl_idname, icon="SMOOTHCURVE")
        layout.separator()
        layout.operator(MOCAP_OT_reverse_motion.bl_idname, icon="ARROW_LEFTRIGHT")
        layout.operator(MOCAP_OT_time_scale_motion.bl_idname, icon="TIME")
        layout.operator(MOCAP_OT_cut_range.bl_idname, icon="X")
        layout.operator(MOCAP_OT_copy_range.bl_idname, icon="COPYDOWN")
        layout.operator(MOCAP_OT_paste_range.bl_idname, icon="PASTEDOWN")


def draw_menu(self, context):
    self.layout.menu(MOCAP_MT_motion_editing.bl_idname, icon="ACTION")


MENUS = (
    (bpy.types.DOPESHEET_MT_key, draw_menu),
    (bpy.types.GRAPH_MT_key, draw_menu),
    (bpy.types.VIEW3D_MT_object_animation, draw_menu),
)
property_classes = (MOCAP_PG_action_item, MOCAP_PG_editing)
classes = (MOCAP_UL_actions, MOCAP_OT_pca_list_add, MOCAP_OT_pca_list_remove, MOCAP_OT_pca_list_fill,
           MOCAP_MT_motion_editing, *_panels())  # fmt: skip
