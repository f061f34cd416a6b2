"""Keyframe Extraction: sidebar panels, Key menu entries and the Dope Sheet header button."""

from __future__ import annotations

import bpy

from ..common.panels import Sidebar, draw_report
from .operators import MOCAP_OT_extract_keyframes, draw_settings


class _KeyframesPanel(Sidebar):
    bl_label = "Keyframe Extraction"

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings = context.scene.mocap_workbench
        draw_settings(layout, settings)
        layout.operator(MOCAP_OT_extract_keyframes.bl_idname, icon="KEYFRAME_HLT")
        draw_report(layout, settings.last_report.splitlines())


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


classes = (MOCAP_PT_keyframes_dopesheet, MOCAP_PT_keyframes_graph, MOCAP_PT_keyframes_view3d)
MENUS = (
    (bpy.types.DOPESHEET_MT_key, draw_key_menu),
    (bpy.types.GRAPH_MT_key, draw_key_menu),
    (bpy.types.DOPESHEET_HT_header, draw_dopesheet_header),
)
