"""Keyframe Extraction: sidebar panels, Key menu entries and the Dope Sheet header button."""

from __future__ import annotations

import bpy

from ..common.panels import Sidebar, draw_report
from .operators import MOCAP_OT_extract_keyframes, draw_settings
from .worst_frame import MOCAP_OT_goto_worst_frame


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
        layout.operator(MOCAP_OT_goto_worst_frame.bl_idname, icon="VIEWZOOM")


class MOCAP_PT_keyframes_dopesheet(_KeyframesPanel, bpy.types.Panel):
    bl_space_type = "DOPESHEET_EDITOR"


class MOCAP_PT_keyframes_graph(_KeyframesPanel, bpy.types.Panel):
    bl_space_type = "GRAPH_EDITOR"


class MOCAP_PT_keyframes_view3d(_KeyframesPanel, bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_options = {"DEFAULT_CLOSED"}  # the Mocap tab opens compact: Retarget first, the rest on demand


def draw_key_menu(self, context):
    self.layout.separator()
    self.layout.operator(MOCAP_OT_extract_keyframes.bl_idname, icon="KEYFRAME_HLT")


# Dope Sheet modes whose channels are the active object's action. Blender draws DOPESHEET_HT_header for the
# Timeline too (4.2 and 5.0: the Timeline is the Dope Sheet editor in mode 'TIMELINE'), and for Shape Key,
# Grease Pencil, Mask and Cache File modes, where the button has no place.
HEADER_MODES = {"DOPESHEET", "ACTION"}


def draw_dopesheet_header(self, context):
    space, area = context.space_data, context.area
    if getattr(space, "mode", None) not in HEADER_MODES or (area is not None and area.ui_type == "TIMELINE"):
        return
    self.layout.operator(MOCAP_OT_extract_keyframes.bl_idname, text="", icon="KEYFRAME_HLT")


classes = (MOCAP_PT_keyframes_dopesheet, MOCAP_PT_keyframes_graph, MOCAP_PT_keyframes_view3d)
MENUS = (
    (bpy.types.DOPESHEET_MT_key, draw_key_menu),
    (bpy.types.GRAPH_MT_key, draw_key_menu),
    (bpy.types.DOPESHEET_HT_header, draw_dopesheet_header),
)
