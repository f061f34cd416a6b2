"""Sidebar panels, menu entries and the Dope Sheet header button."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

from .operators import MOCAP_OT_extract_keyframes, draw_settings, settings_properties


class MOCAP_PG_settings(bpy.types.PropertyGroup):
    """Extraction settings kept with the scene, shown in the sidebar."""

    __annotations__ = {**settings_properties(), "last_report": StringProperty(name="Last Result", default="")}


class _KeyframesPanel:
    bl_region_type = "UI"
    bl_category = "Mocap"
    bl_label = "Keyframe Extraction"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings = context.scene.mocap_workbench
        draw_settings(layout, settings)
        layout.operator(MOCAP_OT_extract_keyframes.bl_idname, icon="KEYFRAME_HLT")
        if settings.last_report:
            box = layout.box()
            for part in settings.last_report.split("; "):
                box.label(text=part)


class MOCAP_PT_keyframes_dopesheet(_KeyframesPanel, bpy.types.Panel):
    bl_space_type = "DOPESHEET_EDITOR"


class MOCAP_PT_keyframes_graph(_KeyframesPanel, bpy.types.Panel):
    bl_space_type = "GRAPH_EDITOR"


class MOCAP_PT_keyframes_view3d(_KeyframesPanel, bpy.types.Panel):
    bl_space_type = "VIEW_3D"


def draw_key_menu(self, context):
    self.layout.separator()
    self.layout.operator(MOCAP_OT_extract_keyframes.bl_idname, icon="KEYFRAME_HLT")


def draw_dopesheet_header(self, context):
    self.layout.operator(MOCAP_OT_extract_keyframes.bl_idname, text="", icon="KEYFRAME_HLT")


classes = (MOCAP_PG_settings, MOCAP_PT_keyframes_dopesheet, MOCAP_PT_keyframes_graph, MOCAP_PT_keyframes_view3d)
MENUS = (
    (bpy.types.DOPESHEET_MT_key, draw_key_menu),
    (bpy.types.GRAPH_MT_key, draw_key_menu),
    (bpy.types.DOPESHEET_HT_header, draw_dopesheet_header),
)


def _menus():
    from . import io_acclaim

    return (*MENUS, *io_acclaim.MENUS)


def register_ui() -> None:
    bpy.types.Scene.mocap_workbench = bpy.props.PointerProperty(type=MOCAP_PG_settings)
    for menu, draw in _menus():
        menu.append(draw)


def unregister_ui() -> None:
    for menu, draw in _menus():
        menu.remove(draw)
    del bpy.types.Scene.mocap_workbench
