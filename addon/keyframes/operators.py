"""Operators: gather settings, call the shared extraction code, report the figures."""

from __future__ import annotations

import math

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty

from ..common import jobs
from ..common.library import linked_message
from ..common.poll import poll_result
from ..common.settings import take_unset

HYBRID_GRID_DEFAULT = 8.0

METHOD_ITEMS = [
    ("HYBRID", "Hybrid", "Whole-pose keys as a grid, then each channel keeps only the keys it needs (most accurate)"),
    (
        "OPTIMAL",
        "Optimal Poses",
        "The whole-pose keys with the least total error over every bone, by dynamic programming",
    ),
    ("ACTIVITY", "Motion Activity", "Keys at the peaks of the body's motion activity, refined by local search"),
    ("SIMPLIFY", "Curve Simplification", "Keys where the paths of the bones bend most"),
    ("THRESHOLD", "Threshold Rule", "A frame becomes a key when the pose drifts past the threshold from the last key"),
    ("UNIFORM", "Uniform", "Keys spread evenly over the clip"),
]
TARGET_ITEMS = [
    ("RATIO", "Ratio", "Keep this share of the frames (Hybrid: on each channel)"),
    ("COUNT", "Count", "Keep exactly this many keyframes (Hybrid: keys on each channel)"),
    (
        "MAX_ERROR",
        "Max Error",
        "Keep the fewest keys that hold every bone's head, tip and sides within this distance at every frame",
    ),
    (
        "MAX_ANGLE",
        "Max Angle",
        "Keep the fewest keys that hold every bone's rotation within this angle of the original at every frame",
    ),
    ("THRESHOLD", "Threshold", "Pose distance of the Threshold Rule (that method only)"),
]
INTERPOLATION_ITEMS = [
    ("FITTED", "Fitted Bezier", "Bezier keys whose handles are fitted so playback follows the rebuilt motion"),
    ("LINEAR", "Linear", "Linear keys; each channel is interpolated on its own"),
]
WEIGHT_ITEMS = [
    ("HIERARCHY", "Hierarchy", "Joints that move more of the body weigh more"),
    ("UNIFORM", "Uniform", "Every joint weighs the same"),
    ("MAIN", "Main Joints", "Hierarchy weights without hands and fingers"),
]


def settings_properties() -> dict:
    """The extraction settings, shared by the scene's sidebar settings and the operator."""
    return {
        "method": EnumProperty(
            name="Method", items=METHOD_ITEMS, default="HYBRID", description="How keyframes are chosen"
        ),
        "target": EnumProperty(
            name="Target", items=TARGET_ITEMS, default="RATIO", description="What the result must meet"
        ),
        "count": IntProperty(
            name="Keyframes",
            default=50,
            min=2,
            soft_max=1000,
            description="Number of keyframes to keep, first and last frames included (Hybrid: keys on each channel)",
        ),
        "ratio": FloatProperty(
            name="Ratio",
            default=5.0,
            min=0.01,
            max=100.0,
            subtype="PERCENTAGE",
            precision=1,
            description="Share of frames to keep as keyframes (Hybrid: keys on each channel)",
        ),
        "max_error": FloatProperty(
            name="Max Error",
            default=0.02,
            min=1e-6,
            soft_max=1.0,
            subtype="DISTANCE",
            unit="LENGTH",
            precision=4,
            description="Largest distance any bone's head, tip or side may move from the original, in the scene",
        ),
        "max_angle": FloatProperty(
            name="Max Angle",
            default=math.radians(1.0),
            min=math.radians(0.001),
            max=math.radians(179.0),
            soft_max=math.radians(10.0),
            subtype="ANGLE",
            precision=2,
            description="Largest angle any bone's rotation may turn from the original's",
        ),
        "threshold": FloatProperty(
            name="Threshold",
            default=0.05,
            min=0.0,
            soft_max=0.5,
            precision=4,
            description="Pose distance from the last key past which a frame becomes a key",
        ),
        "weights": EnumProperty(
            name="Joint Weights",
            items=WEIGHT_ITEMS,
            default="HIERARCHY",
            description="How much each joint counts in the pose distance",
        ),
        "interpolation": EnumProperty(
            name="Interpolation",
            items=INTERPOLATION_ITEMS,
            default="FITTED",
            description="How Blender interpolates between the extracted keys",
        ),
        "grid": FloatProperty(
            name="Pose Grid",
            # core.keyframes.channel_keys.HYBRID_GRID, written out so registering the add-on does not
            # import the core (it loads when an operator runs); a test checks that they agree
            default=HYBRID_GRID_DEFAULT,
            min=1.0,
            soft_max=8.0,
            precision=1,
            description="Hybrid only: whole-pose keys per key kept on each channel (denser is more accurate and slower)",
        ),
        "replace": BoolProperty(
            name="Replace Keys",
            default=False,
            description="Rewrite the keys of the active action instead of making a new action",
        ),
        "measure_playback": BoolProperty(
            name="Measure Playback",
            default=True,
            description="Evaluate the written keys in Blender and report their error too",
        ),
    }


def scope_properties() -> dict:
    """What the operator re-keys (the operator's own, as Decimate works on the selected keys)."""
    return {
        "keep_sparse": BoolProperty(
            name="Keep Sparse Keys",
            default=True,
            description="Leave curves with fewer keys than frames (hand-set keys) exactly as they are",
        ),
        "only_selected": BoolProperty(
            name="Only Selected Bones",
            default=False,
            description="Re-key only the bones selected in Pose Mode and leave the others as they are",
        ),
        "use_frame_range": BoolProperty(
            name="Frame Range",
            default=False,
            description="Re-key only the frames from Start to End and keep the keys outside",
        ),
        # not remembered between runs: each run starts on the preview range or the action's frames
        "frame_start": IntProperty(name="Start", default=1, options={"SKIP_SAVE"}, description="First frame to re-key"),
        "frame_end": IntProperty(name="End", default=250, options={"SKIP_SAVE"}, description="Last frame to re-key"),
    }


def selected_bones(obj) -> set:
    """Names of ``obj``'s selected bones (Blender 5.0 keeps the selection on the pose bone, earlier on the bone)."""
    return {pb.name for pb in obj.pose.bones if (pb.select if hasattr(pb, "select") else pb.bone.select)}


def default_frame_range(context) -> tuple[int, int]:
    """The scene's preview range when set, else the active action's frames (else the scene's)."""
    scene = context.scene
    if scene.use_preview_range:
        return scene.frame_preview_start, scene.frame_preview_end
    obj = context.active_object
    action = obj.animation_data.action if obj is not None and obj.animation_data is not None else None
    if action is None:
        return scene.frame_start, scene.frame_end
    start, end = action.frame_range
    return int(round(start)), int(round(end))


def fill_frame_range(operator, context) -> None:
    """Start and End the caller did not pass: the preview range when set, else the action's frames."""
    start, end = default_frame_range(context)
    if not operator.properties.is_property_set("frame_start"):
        operator.frame_start = start
    if not operator.properties.is_property_set("frame_end"):
        operator.frame_end = end


# Settings whose defaults for new files are add-on preferences.
PREFERENCE_SETTINGS = ("method", "target", "ratio", "count", "interpolation")


def armature_distance(distance: float, obj=None) -> float:
    """A distance in Blender units (as a length property stores it) in ``obj``'s armature units: the
    core measures in those, Blender plays them back scaled by the object's scale."""
    from ..common.spaces import world_scale

    return distance / (world_scale(obj) if obj is not None else 1.0)


def target_of(settings, obj=None) -> dict:
    """The core's target argument from the settings (:mod:`core.keyframes.targets`). Max Error is a
    distance in the scene (Blender units, which Blender shows times the scene's Unit Scale): the core
    measures in ``obj``'s armature units, so it is divided by the object's scale. Max Angle is stored
    in radians, the core takes degrees."""
    if settings.target == "COUNT":
        return {"count": settings.count}
    if settings.target == "MAX_ERROR":
        return {"max_error": armature_distance(settings.max_error, obj)}
    if settings.target == "MAX_ANGLE":
        return {"max_angle": math.degrees(settings.max_angle)}
    if settings.target == "THRESHOLD":
        return {"threshold": settings.threshold}
    return {"ratio": settings.ratio / 100.0}


def extraction_options(settings, obj=None) -> dict:
    """Every extraction setting (the scene's or an operator's) for the armature ``obj`` as keyword
    arguments of :func:`.extract_action.extract_on_armature`: Extract Keyframes and Retarget › Extract
    both use it. The core names its methods in lower case."""
    return {
        "method": settings.method.lower(),
        "target": target_of(settings, obj),
        "weights": settings.weights,
        "fitted": settings.interpolation == "FITTED",
        "grid": settings.grid,
    }


def armature_poll_message(context) -> str | None:
    """Why extraction cannot run on the current selection, or None when it can."""
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        return "Select an armature with motion capture animation"
    linked = linked_message(obj)
    if linked:
        return linked
    if obj.animation_data is not None and obj.animation_data.use_tweak_mode:
        return "Leave NLA tweak mode first"
    if obj.animation_data is None or obj.animation_data.action is None:
        return f"'{obj.name}' has no action to extract keyframes from"
    if not len(obj.data.bones):
        return f"'{obj.name}' has no bones"
    if context.mode not in {"OBJECT", "POSE"}:
        return "Switch to Object or Pose Mode"
    return None


class MOCAP_OT_extract_keyframes(jobs.JobOperator, bpy.types.Operator):
    """Reduce the active armature's dense motion capture to sparse, editable keyframes"""

    bl_idname = "mocap.extract_keyframes"
    bl_label = "Extract Keyframes"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    __annotations__ = {**settings_properties(), **scope_properties()}

    @classmethod
    def poll(cls, context):
        return poll_result(cls, armature_poll_message(context))

    def invoke(self, context, event):
        from ..common.preferences import seed

        seed(context.scene)  # a scene made in this session has not taken the preferences yet
        # The scene's settings, except those the caller passed (a script, a keymap item, a preset)
        take_unset(self, context.scene.mocap_workbench, settings_properties())
        fill_frame_range(self, context)
        return jobs.start(self, context)  # modal with a window: progress in the status bar, Esc cancels

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        draw_settings(layout, self)
        layout.prop(self, "keep_sparse")
        layout.prop(self, "only_selected")
        layout.prop(self, "use_frame_range")
        col = layout.column(align=True)
        col.active = self.use_frame_range
        col.prop(self, "frame_start")
        col.prop(self, "frame_end")

    def in_place_actions(self, context):
        anim = context.active_object.animation_data
        return [anim.action] if self.replace and anim is not None else []

    def prepare(self, context):
        """Check the settings and read the action (:mod:`..common.jobs`: execute and the modal run both use it)."""
        from .extract_action import prepare_extraction

        if self.target == "THRESHOLD" and self.method != "THRESHOLD":
            self.report({"ERROR"}, "A threshold target applies to the Threshold Rule method only")
            return {"CANCELLED"}
        obj = context.active_object
        bones = selected_bones(obj) if self.only_selected else None
        if bones is not None and not bones:
            self.report({"ERROR"}, "Only Selected Bones is on but no bone is selected")
            return {"CANCELLED"}
        frame_range = None
        if self.use_frame_range:
            fill_frame_range(self, context)  # a script that set one end or none
            if self.frame_end < self.frame_start:
                self.report({"ERROR"}, f"Frame range {self.frame_start}–{self.frame_end} is empty")
                return {"CANCELLED"}
            frame_range = (self.frame_start, self.frame_end)
        prepared = prepare_extraction(
            obj,
            replace=self.replace,
            measure_playback=self.measure_playback,
            keep_sparse=self.keep_sparse,
            bones=bones,
            frame_range=frame_range,
            **extraction_options(self, obj),
        )

        def finish(context, result):
            report = prepared.write(result)
            context.scene.mocap_workbench.last_report = "\n".join(report.lines())
            self.report({"INFO"}, report.summary())
            return {"FINISHED"}

        return jobs.Task(prepared.work, finish, "Extracting keyframes")


def target_label(method: str, field: str) -> str | None:
    """The label of the target's field when it differs from the property's name: the hybrid's Count
    and Ratio are keys on each channel (F-curve), not whole poses."""
    return {"count": "Keys per Channel", "ratio": "Ratio per Channel"}.get(field) if method == "HYBRID" else None


def draw_settings(layout, settings) -> None:
    """The settings as the sidebar and the redo panel show them."""
    layout.prop(settings, "method")
    layout.prop(settings, "target")
    field = {"RATIO": "ratio", "COUNT": "count", "MAX_ERROR": "max_error", "MAX_ANGLE": "max_angle",
             "THRESHOLD": "threshold"}[settings.target]  # fmt: skip
    row = layout.row()
    row.active = settings.target != "THRESHOLD" or settings.method == "THRESHOLD"
    label = target_label(settings.method, field)
    if label:
        row.prop(settings, field, text=label)
    else:
        row.prop(settings, field)
    layout.prop(settings, "weights")
    if settings.method == "HYBRID":
        layout.prop(settings, "grid")
    layout.prop(settings, "interpolation")
    layout.prop(settings, "replace")
    layout.prop(settings, "measure_playback")


classes = (MOCAP_OT_extract_keyframes,)
