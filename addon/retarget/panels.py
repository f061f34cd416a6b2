"""Retarget: its scene settings and bone map, the sidebar panels (Retarget, Bone Map, Physics) and menu entry."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, CollectionProperty, IntProperty, PointerProperty, StringProperty

from ..common.panels import Sidebar, draw_report
from .bone_map_presets import draw_preset_row
from .operators import (
    MOCAP_OT_retarget,
    MOCAP_OT_retarget_batch,
    batch_properties,
    draw_physics_options,
    draw_retarget_options,
    find_source,
    retarget_properties,
)


class MOCAP_PG_bone_pair(bpy.types.PropertyGroup):
    """One row of the bone map: a target bone and the source bone it follows"""

    __annotations__ = {
        "target": StringProperty(name="Target Bone", description="Bone of the active armature"),
        "source": StringProperty(
            name="Source Bone",
            description="Bone of the source armature whose motion this bone follows (empty: keep the rest pose)",
        ),
    }


def _is_armature(_self, obj) -> bool:
    return obj.type == "ARMATURE"


class MOCAP_PG_retarget(bpy.types.PropertyGroup):
    """Retarget settings and bone map kept with the scene"""

    __annotations__ = {
        **retarget_properties(),
        **batch_properties(),
        "batch_action_index": IntProperty(name="Active Batch Action", default=0),
        "source": PointerProperty(
            name="Source",
            type=bpy.types.Object,
            poll=_is_armature,
            description="Armature whose action is retargeted onto the active armature",
        ),
        "bone_map": CollectionProperty(type=MOCAP_PG_bone_pair),
        "bone_map_index": IntProperty(name="Active Bone Pair", default=0),
        "bone_map_target": StringProperty(name="Mapped Armature", description="Armature the bone map was made for"),
        "show_unmapped": BoolProperty(
            name="Show Unmapped", default=True, description="List target bones that have no source bone too"
        ),
        "last_report": StringProperty(name="Last Result", default=""),
        "last_physics_image": StringProperty(
            name="Physics Report", default="", description="Image with the last physics report's plot"
        ),
    }


class MOCAP_UL_bone_map(bpy.types.UIList):
    """Target bones and the source bones they follow"""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        source = find_source(context)
        row = layout.row(align=True)
        row.label(text=item.target, icon="BONE_DATA")
        if source is not None:
            row.prop_search(item, "source", source.data, "bones", text="", icon="BLANK1")
        else:
            row.prop(item, "source", text="")

    def filter_items(self, context, data, propname):
        items = getattr(data, propname)
        flags = [self.bitflag_filter_item] * len(items)
        if self.filter_name:
            flags = bpy.types.UI_UL_list.filter_items_by_name(
                self.filter_name, self.bitflag_filter_item, items, "target"
            )
        if not data.show_unmapped:
            flags = [f if item.source else 0 for f, item in zip(flags, items)]
        return flags, []


class _RetargetPanel(Sidebar):
    """Mixin of the Retarget panel and its sub-panels: the 3D Viewport's sidebar."""

    bl_space_type = "VIEW_3D"


class _RetargetSubPanel(_RetargetPanel):
    """Mixin of the Retarget panel's sub-panels, closed until opened."""

    bl_parent_id = "MOCAP_PT_retarget"
    bl_options = {"DEFAULT_CLOSED"}


class MOCAP_PT_retarget(_RetargetPanel, bpy.types.Panel):
    bl_label = "Retarget"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings = context.scene.mocap_workbench.retarget
        layout.prop(settings, "source")
        target = context.active_object
        row = layout.row()
        row.enabled = False
        row.label(
            text=target.name if target and target.type == "ARMATURE" else "(active armature)", icon="ARMATURE_DATA"
        )
        draw_retarget_options(layout, settings)
        layout.operator(MOCAP_OT_retarget.bl_idname, icon="ARMATURE_DATA")
        draw_report(layout, settings.last_report.splitlines())


class MOCAP_PT_retarget_bone_map(_RetargetSubPanel, bpy.types.Panel):
    bl_label = "Bone Map"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.mocap_workbench.retarget
        target = context.active_object
        if settings.bone_map_target and target and settings.bone_map_target != target.name:
            layout.label(text=f"Made for '{settings.bone_map_target}': Auto-Map again", icon="ERROR")
        elif not len(settings.bone_map):
            layout.label(text="Empty: Retarget maps the bones automatically", icon="INFO")
        draw_preset_row(layout)
        row = layout.row()
        row.template_list("MOCAP_UL_bone_map", "", settings, "bone_map", settings, "bone_map_index", rows=8)
        column = row.column(align=True)
        column.operator("mocap.retarget_auto_map", text="", icon="AUTO")
        column.operator("mocap.retarget_load_map", text="", icon="FILEBROWSER")
        column.operator("mocap.retarget_save_map", text="", icon="FILE_TICK")
        column.operator("mocap.retarget_clear_map", text="", icon="X")
        column.separator()
        column.prop(settings, "show_unmapped", text="", icon="HIDE_OFF" if settings.show_unmapped else "HIDE_ON")


# Registered on bpy.types.Action: the tick of the Batch list (an action's own flag, like an object's selection).
ACTION_PROPERTIES = {
    "mocap_batch": BoolProperty(
        name="Batch", default=False, description="Retarget this action when retargeting a batch of actions"
    ),
}


class MOCAP_UL_batch_actions(bpy.types.UIList):
    """The source armature's actions, each ticked or not for Retarget Batch"""

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "mocap_batch", text="")
        row.label(text=item.name, icon="ACTION")

    def filter_items(self, context, data, propname):
        from .batch import is_source_action

        items = getattr(data, propname)
        source, target = find_source(context), context.active_object
        flags = [self.bitflag_filter_item] * len(items)
        if self.filter_name:
            flags = bpy.types.UI_UL_list.filter_items_by_name(self.filter_name, self.bitflag_filter_item, items, "name")
        if source is None:
            return [0] * len(items), []
        return [f if f and is_source_action(item, source, target) else 0 for f, item in zip(flags, items)], []


class MOCAP_PT_retarget_batch(_RetargetSubPanel, bpy.types.Panel):
    bl_label = "Batch"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings = context.scene.mocap_workbench.retarget
        layout.row().prop(settings, "batch_source", expand=True)
        if settings.batch_source == "FILES":
            layout.prop(settings, "batch_folder")
        elif find_source(context) is None:
            layout.label(text="Choose the source armature", icon="INFO")
        else:
            layout.label(text="Ticked actions (none: all of them)")
            layout.template_list("MOCAP_UL_batch_actions", "", bpy.data, "actions", settings, "batch_action_index",
                                 rows=4)  # fmt: skip
        layout.operator(MOCAP_OT_retarget_batch.bl_idname, icon="ARMATURE_DATA")


class MOCAP_PT_retarget_physics(_RetargetSubPanel, bpy.types.Panel):
    bl_label = "Physics"

    def draw_header(self, context):
        self.layout.prop(context.scene.mocap_workbench.retarget, "use_physics", text="")

    def draw(self, context):
        layout = self.layout
        layout.use_property_decorate = False
        settings = context.scene.mocap_workbench.retarget
        draw_physics_options(layout, settings, context.active_object)
        layout.prop(context.window_manager, "mocap_physics_overlay", icon="OVERLAY")
        name = settings.last_physics_image
        if name and name in bpy.data.images:
            box = layout.box()
            box.label(text=f"Plot: '{name}'", icon="IMAGE_DATA")
            box.label(text="Open it in an Image Editor")


def draw_animation_menu(self, context):
    self.layout.separator()
    self.layout.operator(MOCAP_OT_retarget.bl_idname, icon="ARMATURE_DATA")
    self.layout.operator(MOCAP_OT_retarget_batch.bl_idname, icon="ARMATURE_DATA")


property_classes = (MOCAP_PG_bone_pair, MOCAP_PG_retarget)
classes = (MOCAP_UL_bone_map, MOCAP_UL_batch_actions, MOCAP_PT_retarget, MOCAP_PT_retarget_bone_map,
           MOCAP_PT_retarget_batch, MOCAP_PT_retarget_physics)  # fmt: skip
MENUS = ((bpy.types.VIEW3D_MT_object_animation, draw_animation_menu),)
