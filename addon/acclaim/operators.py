"""File › Import/Export › Acclaim (.asf/.amc): gather settings, call addon/acclaim.py, report.

No ``from __future__ import annotations`` here: Blender reads the property annotations of
these classes as objects, not strings.
"""

import os

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper, orientation_helper, poll_file_object_drop

from ...core.quaternion import EULER_ORDERS
from ..common.guard import reported_errors
from ..common.poll import poll_result

ROTATION_MODE_ITEMS = [
    ("QUATERNION", "Quaternion", "Convert rotations to quaternions"),
    *((order, f"Euler ({order})", f"Convert rotations to Euler {order}") for order in EULER_ORDERS),
]


def _axis_rotation(matrix):
    """The core quaternion (w, x, y, z) of an axis-conversion matrix."""
    from ...core import quaternion as quat
    from ..common.spaces import matrix_array

    return quat.from_matrix(matrix_array(matrix.to_3x3()))


@orientation_helper(axis_forward="-Z", axis_up="Y")
class IMPORT_ANIM_OT_acclaim(bpy.types.Operator, ImportHelper):
    """Load an Acclaim skeleton (.asf) and its motions (.amc) as one armature with an action per motion"""

    bl_idname = "import_anim.acclaim"
    bl_label = "Import Acclaim"
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filename_ext = ".amc"
    filter_glob: StringProperty(default="*.asf;*.amc", options={"HIDDEN"})
    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    global_scale: FloatProperty(
        name="Scale",
        description="Scale the skeleton and motion by this value",
        min=0.0001,
        max=1000000.0,
        soft_min=0.001,
        soft_max=100.0,
        default=1.0,
    )
    rotate_mode: EnumProperty(
        name="Rotation", items=ROTATION_MODE_ITEMS, default="QUATERNION", description="Rotation conversion"
    )
    fps: FloatProperty(
        name="Frame Rate",
        description="Frame rate of the motion files (AMC stores none; files saved by Mocap Workbench note theirs)",
        min=0.01,
        soft_min=1.0,
        soft_max=1000.0,
        default=120.0,
    )
    frame_start: IntProperty(name="Start Frame", description="Starting frame for the animation", default=1)
    use_fps_scale: BoolProperty(
        name="Scale FPS",
        description="Scale the frame rate of the motion to the scene's, "
        "otherwise each motion frame maps directly to a Blender frame",
        default=False,
    )
    update_scene_fps: BoolProperty(
        name="Update Scene FPS",
        description="Set the scene frame rate to that of the first motion "
        "(this nullifies the 'Scale FPS' option, as the scale will be 1:1)",
        default=False,
    )
    update_scene_frame_range: BoolProperty(
        name="Update Scene Frame Range",
        description="Set the scene's frame range to the first motion's",
        default=False,
    )

    def invoke(self, context, event):
        return self.invoke_popup(context)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        header, body = layout.panel("MOCAP_import_acclaim_transform", default_closed=False)
        header.label(text="Transform")
        if body:
            body.prop(self, "global_scale")
            body.prop(self, "rotate_mode")
            body.prop(self, "axis_forward")
            body.prop(self, "axis_up")
        header, body = layout.panel("MOCAP_import_acclaim_animation", default_closed=False)
        header.label(text="Animation")
        if body:
            body.prop(self, "fps")
            body.prop(self, "frame_start")
            body.prop(self, "use_fps_scale")
            body.prop(self, "update_scene_fps")
            body.prop(self, "update_scene_frame_range")

    def selected_paths(self) -> list[str]:
        names = [f.name for f in self.files if f.name]
        if names and self.directory:
            return [os.path.join(self.directory, name) for name in names]
        return [self.filepath] if self.filepath else []

    @reported_errors
    def execute(self, context):
        from bpy_extras.io_utils import axis_conversion

        from ...core.io.convert import load_acclaim
        from ...core.io.errors import MocapFormatError
        from .armature_io import ImportOptions, import_takes

        try:
            takes = load_acclaim(self.selected_paths(), default_fps=self.fps)
        except MocapFormatError as exc:
            line = f", line {exc.line}" if exc.line is not None else ""
            self.report({"ERROR"}, f"Cannot import {os.path.basename(exc.path)}{line}: {exc.problem}")
            return {"CANCELLED"}
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, f"Cannot import: {exc}")
            return {"CANCELLED"}
        options = ImportOptions(
            scale=self.global_scale,
            rotation=_axis_rotation(axis_conversion(from_forward=self.axis_forward, from_up=self.axis_up)),
            rotation_mode=self.rotate_mode,
            frame_start=self.frame_start,
            use_fps_scale=self.use_fps_scale,
            update_scene_fps=self.update_scene_fps,
            update_scene_frame_range=self.update_scene_frame_range,
        )
        if context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        try:
            result = import_takes(context, takes, options)
        except ValueError as exc:
            self.report({"ERROR"}, f"Cannot import {takes.asf.name}: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, result.summary())
        return {"FINISHED"}


def export_poll_message(context) -> str | None:
    """Why the Acclaim export cannot run, or None when it can."""
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE" or obj.animation_data is None or obj.animation_data.action is None:
        return "Select an armature with an action"
    return None


@orientation_helper(axis_forward="-Z", axis_up="Y")
class EXPORT_ANIM_OT_acclaim(bpy.types.Operator, ExportHelper):
    """Save the active armature's action as an Acclaim motion (.amc) with its skeleton (.asf) beside it"""

    bl_idname = "export_anim.acclaim"
    bl_label = "Export Acclaim"
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".amc"
    filter_glob: StringProperty(default="*.amc;*.asf", options={"HIDDEN"})
    global_scale: FloatProperty(
        name="Scale",
        description="Scale lengths by this value, after undoing the scale the armature was imported with",
        min=0.0001,
        max=1000000.0,
        soft_min=0.001,
        soft_max=100.0,
        default=1.0,
    )

    @classmethod
    def poll(cls, context):
        return poll_result(cls, export_poll_message(context))

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(self, "global_scale")
        layout.prop(self, "axis_forward")
        layout.prop(self, "axis_up")

    @reported_errors
    def execute(self, context):
        from bpy_extras.io_utils import axis_conversion

        from .armature_io import export_armature

        rotation = _axis_rotation(axis_conversion(to_forward=self.axis_forward, to_up=self.axis_up))
        try:
            result = export_armature(context.active_object, self.filepath, rotation, self.global_scale)
        except (ValueError, OSError) as exc:
            self.report({"ERROR"}, f"Cannot export: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, result.summary())
        return {"FINISHED"}


class MOCAP_FH_acclaim(bpy.types.FileHandler):
    """Drop .asf/.amc files on the 3D Viewport to import them"""

    bl_idname = "MOCAP_FH_acclaim"
    bl_label = "Acclaim"
    bl_import_operator = IMPORT_ANIM_OT_acclaim.bl_idname
    bl_file_extensions = ".asf;.amc"

    @classmethod
    def poll_drop(cls, context):
        return poll_file_object_drop(context)


def draw_import_menu(self, context):
    self.layout.operator(IMPORT_ANIM_OT_acclaim.bl_idname, text="Acclaim (.asf/.amc)")


def draw_export_menu(self, context):
    self.layout.operator(EXPORT_ANIM_OT_acclaim.bl_idname, text="Acclaim (.asf/.amc)")


classes = (IMPORT_ANIM_OT_acclaim, EXPORT_ANIM_OT_acclaim, MOCAP_FH_acclaim)
MENUS = ((bpy.types.TOPBAR_MT_file_import, draw_import_menu), (bpy.types.TOPBAR_MT_file_export, draw_export_menu))
