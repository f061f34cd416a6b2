"""Motion editing operators (thin): settings in, :mod:`.editing` does the work, figures reported.

Every operator writes a new action (Smoothed Pose Edit can replace keys in place when asked)
and is undoable. Invoked from a menu or a panel, an operator takes the Edit panel's settings for
every option it was not given; when the action it needs is not chosen there it asks in a dialog.
"""

from __future__ import annotations

import fnmatch
import math

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ..common import animdata
from ..common.armature import scene_fps, set_scene_fps
from ..common.guard import reported_errors
from ..common.library import linked_message
from ..common.poll import poll_result
from ..common.settings import take_unset

PIVOT_ITEMS = [
    ("FIRST_FRAME", "First Frame Root", "The vertical through the root bone at the action's first frame"),
    ("ORIGIN", "Armature Origin", "The vertical through the armature object's origin"),
    ("CURSOR", "3D Cursor", "The vertical through the 3D cursor"),
]
OUTPUT_ITEMS = [
    ("ACTION", "New Action", "Bake the transition into a new action"),
    (
        "NLA",
        "NLA Strips",
        "The first action and the second, moved to continue it, on two NLA tracks blending over the window",
    ),
]
SHAPE_ITEMS = [
    ("SMOOTHERSTEP", "Smootherstep", "No velocity or acceleration jump where the change starts and ends"),
    ("SMOOTHSTEP", "Smoothstep", "No velocity jump where the change starts and ends"),
    ("LINEAR", "Linear", "The change fades linearly (a velocity kink where it starts and ends)"),
]
RANGE_ITEMS = [
    ("ACTION", "Whole Action", "Every frame of the active action"),
    ("PREVIEW", "Preview Range", "The scene's preview range"),
    ("CUSTOM", "Custom", "The frames from Start to End"),
]
SCALE_ITEMS = [
    ("FACTOR", "Time Scale", "Play the frames this many times as long at the scene's frame rate"),
    ("FRAME_RATE", "Frame Rate", "Resample the whole action from the scene's frame rate to another one"),
]
PCA_SOURCE_ITEMS = [
    ("LIST", "List", "The actions in the list"),
    ("FILTER", "Name Filter", "Every action of the armature whose name matches the filter"),
]
PARAMETER_ITEMS = [
    ("SPEED", "Speed", "Each cycle's root speed"),
    ("PROPERTY", "Custom Property", "A number kept in each action's custom property"),
]


def rotate_properties() -> dict:
    return {
        "angle": FloatProperty(
            name="Angle",
            default=math.radians(90.0),
            subtype="ANGLE",
            description="Turn about the world's vertical axis, counter-clockwise seen from above",
        ),
        "pivot": EnumProperty(name="Pivot", items=PIVOT_ITEMS, default="FIRST_FRAME", description="Axis of the turn"),
    }


def transition_properties() -> dict:
    return {
        "window": FloatProperty(
            name="Window",
            default=0.5,
            min=0.02,
            soft_max=3.0,
            subtype="TIME_ABSOLUTE",
            unit="TIME_ABSOLUTE",
            description="Length of the blend between the two actions",
        ),
        "search_join": BoolProperty(
            name="Search Best Join",
            default=True,
            description="Join where the two actions' poses match best, else the end of the first blends into the "
            "start of the second",
        ),
        "clean_feet": BoolProperty(
            name="Clean Up Feet",
            default=True,
            description="Pin the feet that touch the ground near the blend with leg IK (new action only)",
        ),
        "output": EnumProperty(
            name="Output", items=OUTPUT_ITEMS, default="ACTION", description="Where the result goes"
        ),
    }


def blend_properties() -> dict:
    return {
        "bone": StringProperty(
            name="Bone", description="Bone whose branch (it and every bone below it) comes from the other action"
        ),
        "frame_offset": IntProperty(
            name="Frame Offset", default=0, min=0, description="Frames into the other action where its use starts"
        ),
        "weight": FloatProperty(
            name="Weight", default=1.0, min=0.0, max=1.0, subtype="FACTOR", description="How much of the other action"
        ),
        "soft_edge": FloatProperty(
            name="Soft Edge",
            default=0.5,
            min=0.0,
            max=1.0,
            subtype="FACTOR",
            description="Share of the weight given to the bone's parent, so the seam bends with the branch",
        ),
        "take_root": BoolProperty(
            name="Take Root",
            default=False,
            description="Take the root's lean and sway from the other action too (never its path or heading)",
        ),
        "fit_length": BoolProperty(
            name="Fit Length",
            default=False,
            description="Stretch the other action from the offset onto the active action's length, else frame by frame",
        ),
    }


def interpolate_properties() -> dict:
    return {
        "coefficient": FloatProperty(
            name="Coefficient",
            default=0.5,
            min=-0.5,
            max=1.5,
            subtype="FACTOR",
            description="0 gives the active action, 1 the other one; a little beyond either end extrapolates",
        ),
        "speed": FloatProperty(
            name="Speed",
            default=1.0,
            min=0.1,
            max=10.0,
            description="Time-scale factor of the result (2 plays twice as fast)",
        ),
    }


def pca_properties() -> dict:
    return {
        "pca_source": EnumProperty(
            name="Actions", items=PCA_SOURCE_ITEMS, default="LIST", description="Actions to learn from"
        ),
        "name_filter": StringProperty(
            name="Filter",
            default="",
            description="Action names to use (wildcards * and ?; plain text matches anywhere)",
        ),
        "parameter": EnumProperty(
            name="Parameter", items=PARAMETER_ITEMS, default="SPEED", description="What the slider controls"
        ),
        "property_name": StringProperty(
            name="Property",
            default="parameter",
            description="Custom property of each action holding its parameter value",
        ),
        "use_range_position": BoolProperty(
            name="Relative",
            default=True,
            description="Set the parameter as a position in the range the cycles cover (else as a value)",
        ),
        "position": FloatProperty(
            name="Parameter",
            default=0.5,
            min=-0.5,
            max=1.5,
            subtype="FACTOR",
            description="0 is the lowest value among the cycles, 1 the highest; up to half the range beyond extrapolates",
        ),
        "value": FloatProperty(name="Value", default=1.0, description="Parameter value of the new motion"),
        "cycles": IntProperty(name="Cycles", default=4, min=1, soft_max=50, description="Cycles to generate"),
        "components": IntProperty(
            name="Components", default=0, min=0, soft_max=20, description="Principal components to use (0 uses all)"
        ),
    }


def pose_edit_properties() -> dict:
    return {
        "falloff": IntProperty(
            name="Falloff Frames",
            default=10,
            min=0,
            soft_max=120,
            description="Frames on each side of the current frame over which the change fades out",
        ),
        "falloff_shape": EnumProperty(
            name="Shape", items=SHAPE_ITEMS, default="SMOOTHERSTEP", description="How the change fades"
        ),
        "in_place": BoolProperty(
            name="Replace Keys",
            default=False,
            description="Rewrite the keys of the active action instead of making a new action",
        ),
    }


def range_properties() -> dict:
    return {
        "frame_range": EnumProperty(
            name="Frames", items=RANGE_ITEMS, default="ACTION", description="Frames to work on"
        ),
        "frame_start": IntProperty(name="Start", default=1, description="First frame of the range"),
        "frame_end": IntProperty(name="End", default=100, description="Last frame of the range"),
    }


def time_scale_properties() -> dict:
    return {
        "scale_mode": EnumProperty(name="Mode", items=SCALE_ITEMS, default="FACTOR", description="What changes"),
        "factor": FloatProperty(
            name="Factor",
            default=2.0,
            min=0.01,
            max=100.0,
            description="Duration factor (2 plays half as fast, 0.5 twice as fast)",
        ),
        "fps": FloatProperty(name="FPS", default=30.0, min=1.0, max=1000.0, description="New frame rate"),
        "update_scene_fps": BoolProperty(
            name="Update Scene FPS", default=False, description="Set the scene's frame rate to the new rate"
        ),
    }


def settings_properties() -> dict:
    """Every option of the Edit operators, kept with the scene for the sidebar."""
    return {
        **rotate_properties(),
        **transition_properties(),
        **blend_properties(),
        **interpolate_properties(),
        **pca_properties(),
        **pose_edit_properties(),
        **range_properties(),
        **time_scale_properties(),
    }


def operator_properties(properties: dict) -> dict:
    """The same properties for an operator, not remembered between runs (SKIP_SAVE): invoking takes
    the Edit panel's settings for every option it is not given."""
    out = {}
    for name, deferred in properties.items():
        keywords = dict(deferred.keywords)
        keywords["options"] = set(keywords.get("options", set())) | {"SKIP_SAVE"}
        out[name] = deferred.function(**keywords)
    return out


def edit_poll_message(context, need_action: bool = True, need_other: bool = False, writes: bool = True) -> str | None:
    """Why an Edit operator cannot run, or None when it can (writes: it gives the armature a new action)."""
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        return "Select an armature with motion capture animation"
    linked = linked_message(obj) if writes else None
    if linked:
        return linked
    if context.mode not in {"OBJECT", "POSE"}:
        return "Switch to Object or Pose Mode"
    anim = obj.animation_data
    if anim is not None and anim.use_tweak_mode:
        return "Leave NLA tweak mode first"
    if need_action and (anim is None or anim.action is None):
        return f"'{obj.name}' has no action to edit"
    if not len(obj.data.bones):
        return f"'{obj.name}' has no bones"
    if need_other:
        active = anim.action if anim else None
        if not any(a != active and animdata.animates_bones(a, obj.data.bones) for a in bpy.data.actions):
            return f"No other action animates the bones of '{obj.name}': import or make one"
    return None


def matching_actions(obj, pattern: str) -> list:
    """Actions that animate ``obj``'s bones and whose names match ``pattern`` (case-insensitive;
    wildcards * and ?, plain text matches anywhere), sorted by name."""
    pattern = pattern.lower()
    if not any(c in pattern for c in "*?["):
        pattern = f"*{pattern}*"
    return sorted(
        (
            a
            for a in bpy.data.actions
            if fnmatch.fnmatchcase(a.name.lower(), pattern) and animdata.animates_bones(a, obj.data.bones)
        ),
        key=lambda a: a.name,
    )


def frame_range_of(op, context) -> tuple[int | None, int | None]:
    """(start, end) scene frames of the operator's range, (None, None) for the whole action."""
    if op.frame_range == "PREVIEW":
        scene = context.scene
        if not scene.use_preview_range:
            raise ValueError("The scene has no preview range: turn it on, or choose other frames")
        return scene.frame_preview_start, scene.frame_preview_end
    if op.frame_range == "CUSTOM":
        return op.frame_start, op.frame_end
    return None, None


def _action(name: str, what: str):
    if not name:
        raise ValueError(f"Choose the {what} in the Edit panel (Mocap tab)")
    action = bpy.data.actions.get(name)
    if action is None:
        raise ValueError(f"There is no action '{name}'")
    return action


class _EditOperator:
    """Shared behaviour: poll with a reason, settings taken from the Edit panel, figures reported."""

    bl_options = {"REGISTER", "UNDO"}
    properties_of = staticmethod(dict)  # the options shared with the Edit panel's settings
    need_action = True
    need_other = False
    writes = True  # gives the armature a new action

    @classmethod
    def poll(cls, context):
        return poll_result(cls, edit_poll_message(context, cls.need_action, cls.need_other, cls.writes))

    def fill(self, context) -> None:
        """Take the Edit panel's settings for every option and input the operator was not given."""
        settings = context.scene.mocap_workbench.editing
        take_unset(self, settings, self.properties_of())
        self.take_settings(context, settings)

    def invoke(self, context, event):
        self.fill(context)
        if self.missing(context):
            return context.window_manager.invoke_props_dialog(self)
        return self.execute(context)

    def take_settings(self, context, settings) -> None:
        """Fill the operator's own inputs (actions, frames) from the panel's when not given."""

    def missing(self, context) -> bool:
        """Whether an input must still be chosen (then invoking asks in a dialog)."""
        return False

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        self.draw_inputs(layout, context)
        for name in self.properties_of():
            layout.prop(self, name)

    def draw_inputs(self, layout, context) -> None:
        pass

    @reported_errors
    def execute(self, context):
        self.fill(context)
        wm = context.window_manager
        wm.progress_begin(0, 100)
        try:
            report = self.run(context)
        finally:
            wm.progress_end()
        context.scene.mocap_workbench.editing.last_report = "\n".join(report.lines())
        self.report({"INFO"}, report.summary())
        return {"FINISHED"}


def _pick(self, settings, prop: str, pointer: str) -> None:
    """Set the operator's action name ``prop`` from the settings' action ``pointer`` when not given."""
    if not self.properties.is_property_set(prop):
        action = getattr(settings, pointer)
        setattr(self, prop, action.name if action else "")


def _chosen(self, context, prop: str, pointer: str, what: str):
    """The action named by the operator's ``prop``, else the one chosen in the Edit panel."""
    name = getattr(self, prop)
    if not name:
        action = getattr(context.scene.mocap_workbench.editing, pointer)
        name = action.name if action else ""
    return _action(name, what)


class MOCAP_OT_rotate_motion(_EditOperator, bpy.types.Operator):
    """Turn the whole motion about the vertical axis (root path and orientation together) into a new action"""

    bl_idname = "mocap.rotate_motion"
    bl_label = "Rotate Motion"
    properties_of = staticmethod(rotate_properties)
    __annotations__ = operator_properties(rotate_properties())

    def run(self, context):
        from .edit_actions import rotate_action

        return rotate_action(context.active_object, self.angle, self.pivot, tuple(context.scene.cursor.location))


class MOCAP_OT_transition(_EditOperator, bpy.types.Operator):
    """Blend from one action of the armature into another with root alignment, as a new action or NLA strips"""

    bl_idname = "mocap.transition"
    bl_label = "Transition"
    properties_of = staticmethod(transition_properties)
    need_other = True
    __annotations__ = operator_properties(
        {
            "action_from": StringProperty(name="From", description="Action to start with (default: the active action)"),
            "action_to": StringProperty(name="To", description="Action to blend into"),
            **transition_properties(),
        }
    )

    def take_settings(self, context, settings):
        _pick(self, settings, "action_from", "transition_from")
        _pick(self, settings, "action_to", "transition_to")

    def missing(self, context):
        return not self.action_to

    def draw_inputs(self, layout, context):
        layout.prop_search(self, "action_from", bpy.data, "actions")
        layout.prop_search(self, "action_to", bpy.data, "actions")

    def run(self, context):
        from .edit_actions import active_action, transition_actions

        obj = context.active_object
        settings = context.scene.mocap_workbench.editing
        if self.action_from or settings.transition_from:
            first = _chosen(self, context, "action_from", "transition_from", "action to start with")
        else:
            first = active_action(obj)
        second = _chosen(self, context, "action_to", "transition_to", "action to blend into")
        return transition_actions(obj, first, second, self.window, self.search_join, self.clean_feet, self.output)


class MOCAP_OT_blend_body_part(_EditOperator, bpy.types.Operator):
    """Take a bone and the bones below it from another action, the rest of the body from the active action"""

    bl_idname = "mocap.blend_body_part"
    bl_label = "Blend Body Part"
    properties_of = staticmethod(blend_properties)
    need_other = True
    __annotations__ = operator_properties(
        {
            "source_action": StringProperty(name="From", description="Action the body part comes from"),
            **blend_properties(),
        }
    )

    def take_settings(self, context, settings):
        _pick(self, settings, "source_action", "blend_from")

    def missing(self, context):
        return not self.source_action or not self.bone

    def draw_inputs(self, layout, context):
        layout.prop_search(self, "source_action", bpy.data, "actions")

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        self.draw_inputs(layout, context)
        obj = context.active_object
        for name in self.properties_of():
            if name == "bone" and obj is not None and obj.type == "ARMATURE":
                layout.prop_search(self, "bone", obj.data, "bones")
            else:
                layout.prop(self, name)

    def run(self, context):
        from .edit_actions import blend_actions

        if not self.bone:
            raise ValueError("Choose the bone whose branch comes from the other action")
        source = _chosen(self, context, "source_action", "blend_from", "action to blend from")
        return blend_actions(context.active_object, source, self.bone, self.weight, self.frame_offset,
                             self.soft_edge, self.take_root, self.fit_length)  # fmt: skip


class MOCAP_OT_interpolate_actions(_EditOperator, bpy.types.Operator):
    """Make a motion between the active action and another one, time-aligned on their foot strikes"""

    bl_idname = "mocap.interpolate_actions"
    bl_label = "Interpolate Two Actions"
    properties_of = staticmethod(interpolate_properties)
    need_other = True
    __annotations__ = operator_properties(
        {
            "other_action": StringProperty(name="With", description="Action at coefficient 1"),
            **interpolate_properties(),
        }
    )

    def take_settings(self, context, settings):
        _pick(self, settings, "other_action", "interpolate_with")

    def missing(self, context):
        return not self.other_action

    def draw_inputs(self, layout, context):
        layout.prop_search(self, "other_action", bpy.data, "actions")

    def run(self, context):
        from .edit_actions import interpolate_actions

        other = _chosen(self, context, "other_action", "interpolate_with", "action to interpolate with")
        return interpolate_actions(context.active_object, other, self.coefficient, self.speed)


class MOCAP_PG_action_name(bpy.types.PropertyGroup):
    """An action named by an operator (its name)"""


class MOCAP_OT_pca_synthesis(_EditOperator, bpy.types.Operator):
    """Learn the gait cycles of similar actions with PCA and make a new cyclic motion for a parameter value"""

    bl_idname = "mocap.pca_synthesis"
    bl_label = "PCA Synthesis"
    properties_of = staticmethod(pca_properties)
    need_action = False
    __annotations__ = operator_properties(
        {
            "actions": CollectionProperty(
                type=MOCAP_PG_action_name, name="Actions", description="Actions to learn from"
            ),
            **pca_properties(),
        }
    )

    @classmethod
    def poll(cls, context):
        message = edit_poll_message(context, need_action=False)
        obj = context.active_object
        if message is None and not any(animdata.animates_bones(a, obj.data.bones) for a in bpy.data.actions):
            message = f"No action animates the bones of '{obj.name}'"
        return poll_result(cls, message)

    def take_settings(self, context, settings):
        if not len(self.actions):
            for action in self.chosen(context, settings):
                self.actions.add().name = action.name

    def chosen(self, context, settings) -> list:
        if self.pca_source == "FILTER":
            return matching_actions(context.active_object, self.name_filter)
        return [item.action for item in settings.pca_actions if item.action is not None]

    def missing(self, context):
        return not len(self.actions)

    def draw_inputs(self, layout, context):
        if len(self.actions):
            layout.label(text=", ".join(item.name for item in self.actions), icon="ACTION")

    def run(self, context):
        from .edit_actions import pca_actions

        names = [item.name for item in self.actions]
        actions = [_action(n, "actions") for n in names] or self.chosen(context, context.scene.mocap_workbench.editing)
        if not actions:
            raise ValueError("Choose the actions to learn from: add them to the list, or use a name filter")
        position, value = (self.position, None) if self.use_range_position else (None, self.value)
        return pca_actions(context.active_object, actions, self.parameter, self.property_name, position, value,
                           self.cycles, self.components)  # fmt: skip


class MOCAP_OT_smoothed_pose_edit(_EditOperator, bpy.types.Operator):
    """Spread the pose set at the current frame (bones posed away from the action) over the frames around it"""

    bl_idname = "mocap.smoothed_pose_edit"
    bl_label = "Smoothed Pose Edit"
    properties_of = staticmethod(pose_edit_properties)
    __annotations__ = operator_properties(pose_edit_properties())

    @classmethod
    def poll(cls, context):
        message = edit_poll_message(context)
        if message is None:
            action = context.active_object.animation_data.action
            start, end = action.frame_range
            frame = context.scene.frame_current
            if not start - 1e-6 <= frame <= end + 1e-6:
                message = f"Frame {frame} is outside '{action.name}' (frames {start:g}–{end:g})"
        return poll_result(cls, message)

    def in_place_actions(self, context):
        return [context.active_object.animation_data.action] if self.in_place else []

    def run(self, context):
        from .edit_actions import spread_pose

        return spread_pose(context.active_object, context.scene.frame_current, self.falloff, self.falloff_shape.lower(),
                           self.in_place)  # fmt: skip


class _RangeOperator(_EditOperator):
    def draw_range(self, layout):
        layout.prop(self, "frame_range")
        if self.frame_range == "CUSTOM":
            layout.prop(self, "frame_start")
            layout.prop(self, "frame_end")


class MOCAP_OT_reverse_motion(_RangeOperator, bpy.types.Operator):
    """Play the motion (or a range of it) backwards, as a new action"""

    bl_idname = "mocap.reverse_motion"
    bl_label = "Reverse Motion"
    properties_of = staticmethod(range_properties)
    __annotations__ = operator_properties(range_properties())

    def run(self, context):
        from .edit_actions import reverse_action

        return reverse_action(context.active_object, *frame_range_of(self, context))


class MOCAP_OT_time_scale_motion(_RangeOperator, bpy.types.Operator):
    """Slow down or speed up the motion (or a range of it), or resample it to another frame rate, as a new action"""

    bl_idname = "mocap.time_scale_motion"
    bl_label = "Time Scale Motion"
    properties_of = staticmethod(lambda: {**range_properties(), **time_scale_properties()})
    __annotations__ = operator_properties({**range_properties(), **time_scale_properties()})

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(self, "scale_mode")
        if self.scale_mode == "FACTOR":
            self.draw_range(layout)
            layout.prop(self, "factor")
        else:
            layout.prop(self, "fps")
            layout.prop(self, "update_scene_fps")

    def run(self, context):
        from .edit_actions import time_scale_action

        obj = context.active_object
        if self.scale_mode == "FACTOR":
            return time_scale_action(obj, self.factor, None, *frame_range_of(self, context))
        report = time_scale_action(obj, fps=self.fps)
        if self.update_scene_fps:
            set_scene_fps(context.scene, self.fps)
            report.parts.append(f"scene frame rate set to {self.fps:.4g}")
        else:
            report.parts.append(f"play it at {self.fps:.4g} fps (the scene runs at {scene_fps(context.scene):.4g})")
        return report


def _store_clipboard(context, action, start: int, end: int) -> None:
    settings = context.scene.mocap_workbench.editing
    settings.clipboard = action
    settings.clipboard_start, settings.clipboard_end = start, end


class MOCAP_OT_cut_range(_RangeOperator, bpy.types.Operator):
    """Cut a range of frames out of the motion into a new action, closing the gap with root continuity"""

    bl_idname = "mocap.cut_range"
    bl_label = "Cut Range"
    properties_of = staticmethod(range_properties)
    __annotations__ = operator_properties(range_properties())

    def run(self, context):
        from .edit_actions import cut_range

        obj = context.active_object
        source = obj.animation_data.action
        start, end = frame_range_of(self, context)
        if start is None:
            raise ValueError("Cutting the whole action leaves nothing: choose the preview range or custom frames")
        report = cut_range(obj, start, end)
        _store_clipboard(context, source, *report.figures["range"])
        return report


class MOCAP_OT_copy_range(_RangeOperator, bpy.types.Operator):
    """Remember a range of frames of the active action for Paste Range"""

    bl_idname = "mocap.copy_range"
    bl_label = "Copy Range"
    writes = False
    properties_of = staticmethod(range_properties)
    __annotations__ = operator_properties(range_properties())

    def run(self, context):
        from .edit_actions import EditReport, frame_span, read_clip

        obj = context.active_object
        clip = read_clip(obj)
        s, e = frame_span(clip, *frame_range_of(self, context))
        first = int(clip.frames[0])
        _store_clipboard(context, clip.channels.action, first + s, first + e - 1)
        return EditReport(
            [f"Copied frames {first + s}–{first + e - 1} of '{clip.channels.action.name}' ({e - s} frames)"]
        )


class MOCAP_OT_paste_range(_EditOperator, bpy.types.Operator):
    """Insert a range of another action (the copied one by default) before the current frame, as a new action"""

    bl_idname = "mocap.paste_range"
    bl_label = "Paste Range"
    __annotations__ = operator_properties(
        {
            "source_action": StringProperty(
                name="From", description="Action to paste from (default: the copied range's)"
            ),
            "whole_source": BoolProperty(name="Whole Action", default=False, description="Paste every frame of it"),
            "source_start": IntProperty(name="Start", default=1, description="First frame to paste"),
            "source_end": IntProperty(name="End", default=100, description="Last frame to paste"),
            "frame": IntProperty(
                name="Before Frame", default=1, description="Frame of the active action the range goes before"
            ),
        }
    )

    def take_settings(self, context, settings):
        if not self.properties.is_property_set("source_action"):
            clipboard = settings.clipboard
            self.source_action = clipboard.name if clipboard else ""
            self.source_start, self.source_end = settings.clipboard_start, settings.clipboard_end
        if not self.properties.is_property_set("frame"):
            self.frame = context.scene.frame_current

    def missing(self, context):
        return not self.source_action

    def draw_inputs(self, layout, context):
        layout.prop_search(self, "source_action", bpy.data, "actions")
        layout.prop(self, "whole_source")
        if not self.whole_source:
            layout.prop(self, "source_start")
            layout.prop(self, "source_end")
        layout.prop(self, "frame")

    def run(self, context):
        from .edit_actions import paste_range

        settings = context.scene.mocap_workbench.editing
        if self.source_action:
            span = (None, None) if self.whole_source else (self.source_start, self.source_end)
        else:  # the copied range
            span = (settings.clipboard_start, settings.clipboard_end)
        source = _chosen(
            self, context, "source_action", "clipboard", "action to paste from (Copy Range or Cut Range first)"
        )
        frame = self.frame if self.properties.is_property_set("frame") else context.scene.frame_current
        return paste_range(context.active_object, source, frame, *span)


EDIT_OPERATORS = (
    MOCAP_OT_rotate_motion,
    MOCAP_OT_transition,
    MOCAP_OT_blend_body_part,
    MOCAP_OT_interpolate_actions,
    MOCAP_OT_pca_synthesis,
    MOCAP_OT_smoothed_pose_edit,
    MOCAP_OT_reverse_motion,
    MOCAP_OT_time_scale_motion,
    MOCAP_OT_cut_range,
    MOCAP_OT_copy_range,
    MOCAP_OT_paste_range,
)
classes = (MOCAP_PG_action_name, *EDIT_OPERATORS)
