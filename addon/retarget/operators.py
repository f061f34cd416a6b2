"""Retarget operators: the retarget itself, its batch and the bone-map editor's buttons (thin: settings in, core out)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..common import jobs
from ..common.guard import reported_errors
from ..common.library import linked_message
from ..common.poll import poll_result, target_armature_message
from ..common.settings import take_unset

BODY_MODEL_ITEMS = [
    ("MALE", "Male", "Segment masses and inertia of an average adult man (de Leva, 1996)"),
    ("FEMALE", "Female", "Segment masses and inertia of an average adult woman (de Leva, 1996)"),
]
SCALE_ITEMS = [
    ("AUTO", "Leg Length", "Scale the root motion by the ratio of the target's leg length to the source's"),
    ("RATIO", "Ratio", "Scale the root motion by a chosen ratio"),
]


def use_bone_map_property():
    """Retarget's and Retarget Batch's choice of the panel's bone map."""
    return BoolProperty(
        name="Use Bone Map",
        default=True,
        description="Use the Retarget panel's bone map when it was made for this target (else map automatically)",
    )


def retarget_properties() -> dict:
    """The retarget options, shared by the scene's Retarget settings and the operator."""
    return {
        "root_scale": EnumProperty(
            name="Root Scale", items=SCALE_ITEMS, default="AUTO", description="How the root motion is scaled"
        ),
        "scale_ratio": FloatProperty(
            name="Ratio", default=1.0, min=1e-4, soft_max=10.0, precision=3, description="Root motion scale factor"
        ),
        "in_place": BoolProperty(
            name="In Place", default=False, description="Remove the horizontal travel of the root, keep its sway"
        ),
        "root_motion": BoolProperty(
            name="Root Motion",
            default=False,
            description="Carry the horizontal travel and the heading on the bone above the pelvis, at the floor, "
            "as game engines expect",
        ),
        "on_floor": BoolProperty(
            name="Keep on Floor", default=False, description="Move the root up or down so the feet stand on the floor"
        ),
        "plant_feet": BoolProperty(
            name="Plant Feet",
            default=True,
            description="Keep the source's foot contacts on the target with leg IK, blended in and out",
        ),
        "distribute_twist": BoolProperty(
            name="Distribute Twist",
            default=True,
            description="Spread the twist over unmapped target bones between mapped ones, such as extra spine or "
            "twist bones",
        ),
        "allow_partial": BoolProperty(
            name="Allow Partial Map",
            default=False,
            description="Retarget even when the bone map leaves part of the body (hips, spine, head, legs, arms) "
            "unmapped",
        ),
        "extract_keyframes": BoolProperty(
            name="Extract Keyframes",
            default=False,
            description="Reduce the result to keyframes with the Keyframe Extraction settings",
        ),
        **physics_properties(),
    }


def physics_properties() -> dict:
    """The Physics section's options (part of :func:`retarget_properties`)."""
    return {
        "use_physics": BoolProperty(
            name="Physics",
            default=False,
            description="Make the result physically plausible for the target's body: balance, joint torque limits "
            "and momentum in flight",
        ),
        "target_mass": FloatProperty(
            name="Target Mass",
            default=70.0,
            min=1.0,
            soft_max=200.0,
            precision=1,
            unit="MASS",
            description="Body mass of the target character",
        ),
        "target_height": FloatProperty(
            name="Target Height",
            default=0.0,
            min=0.0,
            soft_max=3.0,
            precision=3,
            subtype="DISTANCE",
            unit="LENGTH",
            description="Standing height of the target character (0 measures it from the armature)",
        ),
        "source_mass": FloatProperty(
            name="Source Mass",
            default=60.0,
            min=1.0,
            soft_max=200.0,
            precision=1,
            unit="MASS",
            description="Body mass of the performer, for the capture's own figures in the report",
        ),
        "body_model": EnumProperty(
            name="Body Model",
            items=BODY_MODEL_ITEMS,
            default="MALE",
            description="Table of segment masses and inertia used for both bodies",
        ),
        "use_balance": BoolProperty(
            name="Balance",
            default=True,
            description="Keep the body's zero moment point inside the area the feet on the ground support",
        ),
        "use_torque_limits": BoolProperty(
            name="Torque Limits",
            default=True,
            description="Keep the hip, knee, ankle and spine torques within the strength of the target's body",
        ),
        "use_momentum": BoolProperty(
            name="Momentum",
            default=True,
            description="In flight, move the center of mass on a ballistic path and keep the angular momentum",
        ),
        "stiffness": FloatProperty(
            name="Stiffness",
            default=1.0,
            min=0.01,
            max=100.0,
            soft_min=0.1,
            soft_max=10.0,
            precision=2,
            description="How closely the result keeps to the retargeted motion: higher stays closer, lower "
            "follows the physics goals further",
        ),
        "plot_physics": BoolProperty(
            name="Plot Report",
            default=True,
            description="Plot the balance and the joint torques, before and after, into the image 'Physics "
            "Report' (needs matplotlib)",
        ),
    }


def physics_settings_of(settings, scene=None):
    """The core's PhysicsSettings from the settings, or None when Physics is off. Masses and the height
    are kept in Blender units (shown in the scene's units): the core gets kilograms and metres."""
    if not settings.use_physics:
        return None
    from ...core.physics.apply import PhysicsSettings
    from ..common.units import scale

    scene = scene or bpy.context.scene
    kg, m = scale(scene, "MASS"), scale(scene, "LENGTH")
    return PhysicsSettings(
        target_mass=settings.target_mass * kg,
        target_height=settings.target_height * m or None,
        source_mass=settings.source_mass * kg,
        sex=settings.body_model.lower(),
        balance=settings.use_balance,
        torques=settings.use_torque_limits,
        momentum=settings.use_momentum,
        stiffness=settings.stiffness,
    )


def options_of(settings):
    """The core's RetargetOptions from the settings."""
    from ...core.retarget import RetargetOptions

    return RetargetOptions(
        scale=settings.scale_ratio if settings.root_scale == "RATIO" else None,
        in_place=settings.in_place,
        on_floor=settings.on_floor,
        plant_feet=settings.plant_feet,
        distribute_twist=settings.distribute_twist,
        root_motion=settings.root_motion,
        allow_partial=settings.allow_partial,
    )


def _armature(obj) -> bool:
    return obj is not None and obj.type == "ARMATURE"


def find_source(context, name: str = ""):
    """The source armature: ``name``, else the Retarget panel's source, else the other selected armature."""
    target = context.active_object
    if name:
        obj = bpy.data.objects.get(name)
        return obj if _armature(obj) else None
    chosen = context.scene.mocap_workbench.retarget.source
    if _armature(chosen) and chosen != target:
        return chosen
    others = [o for o in context.selected_objects if _armature(o) and o != target]
    return others[0] if others else None


def target_poll_message(context, writes: bool = True) -> str | None:
    """Why the active object cannot take a retargeted action, or None when it can (writes: a new
    action goes onto it)."""
    target = context.active_object
    message = target_armature_message(target)
    if message:
        return message
    linked = linked_message(target) if writes else None
    if linked:
        return linked
    if context.mode not in {"OBJECT", "POSE"}:
        return "Switch to Object or Pose Mode"
    if target.animation_data is not None and target.animation_data.use_tweak_mode:
        return f"Leave NLA tweak mode on '{target.name}' first"
    return None


def pair_poll_message(context, name: str = "", need_action: bool = True, writes: bool = True) -> str | None:
    """Why retargeting cannot run on the current selection, or None when it can (writes: a new action
    goes onto the target)."""
    message = target_poll_message(context, writes)
    if message:
        return message
    source = find_source(context, name)
    if source is None:
        return "Choose a source armature in the Retarget panel, or select it together with the active target"
    if not len(source.data.bones):
        return f"Source '{source.name}' has no bones"
    if need_action and (source.animation_data is None or source.animation_data.action is None):
        return f"Source '{source.name}' has no action to retarget"
    return None


class _PairOperator:
    @classmethod
    def poll(cls, context):
        return poll_result(cls, pair_poll_message(context, need_action=cls.need_action, writes=False))


class MOCAP_OT_retarget(jobs.JobOperator, bpy.types.Operator):
    """Bake the source armature's action onto the active armature as a new action, bone by bone in world space"""

    bl_idname = "mocap.retarget"
    bl_label = "Retarget"
    bl_options = {"REGISTER", "UNDO", "PRESET"}
    __annotations__ = {
        **retarget_properties(),
        "source": StringProperty(
            name="Source",
            default="",
            options={"SKIP_PRESET"},  # a preset names no object of a file
            description="Source armature (default: the Retarget panel's source, else the other selected armature)",
        ),
        "use_bone_map": use_bone_map_property(),
    }

    @classmethod
    def poll(cls, context):
        return poll_result(cls, pair_poll_message(context))

    def invoke(self, context, event):
        take_unset(self, context.scene.mocap_workbench.retarget, retarget_properties())
        return jobs.start(self, context)  # modal with a window: progress in the status bar, Esc cancels

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        draw_retarget_options(layout, self)
        layout.prop(self, "use_bone_map")
        header, body = layout.panel("MOCAP_OT_retarget_physics", default_closed=not self.use_physics)
        header.use_property_split = False
        header.prop(self, "use_physics")
        if body is not None:
            draw_physics_options(body, self, context.active_object)

    def prepare(self, context):
        """Check the pair and read both armatures (:mod:`..common.jobs`: execute and the modal run both use it)."""
        from ..keyframes.operators import extraction_options
        from .retarget_action import prepare_retarget

        source, target = find_source(context, self.source), context.active_object
        if source is None or source == target:
            self.report({"ERROR"}, pair_poll_message(context, self.source) or "Choose another source armature")
            return {"CANCELLED"}
        settings = context.scene.mocap_workbench
        mapping, aside = panel_bone_map(self, settings.retarget, target)
        extract = None
        if self.extract_keyframes:
            extract = extraction_options(settings, target)
        try:
            physics = physics_settings_of(self, context.scene)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        prepared = prepare_retarget(source, target, mapping, options_of(self), extract, physics, self.plot_physics)
        prepared.notes.extend(aside)

        def work(progress):
            try:
                return prepared.work(progress)
            except ValueError as exc:
                raise ValueError(explained(exc, mapping)) from exc

        def finish(context, done):
            report = yield from prepared.write_steps(done)  # a control rig's fit: a pass a step, Esc between
            settings = context.scene.mocap_workbench
            settings.retarget.last_report = "\n".join(report.lines())
            settings.retarget.last_physics_image = report.physics_image
            for note in report.notes:
                self.report({"WARNING"}, note)
            if report.physics_plot_note:
                self.report({"WARNING"}, report.physics_plot_note)
            self.report({"INFO"}, report.summary())
            return {"FINISHED"}

        label = "Retargeting with physics" if physics is not None else "Retargeting"
        return jobs.Task(work, finish, label, write_share=0.5 if prepared.controls is not None else 0.05)


def panel_bone_map(operator, settings, target) -> tuple[dict[str, str] | None, list[str]]:
    """The Retarget panel's bone map for ``target`` when the operator uses it (None: automatic), and
    a note when a map made for another armature (or for this one before a rename) is left aside."""
    from .retarget_action import bone_map_of

    mapping = (bone_map_of(settings.bone_map) or None) if operator.use_bone_map else None
    if mapping is None or settings.bone_map_target == target.name:
        return mapping, []
    return None, [f"the bone map in the Retarget panel is for '{settings.bone_map_target}', not '{target.name}': "
                  "mapped automatically (Auto-Map or apply a preset with this armature active)"]  # fmt: skip


def explained(exc: ValueError, mapping: dict[str, str] | None) -> str:
    """A retarget's error with what the user can do about it (map the bones, or Auto-Map again)."""
    from ...core.physics.errors import PhysicsError
    from ...core.retarget import MappingError

    if isinstance(exc, MappingError) and "unmapped" in str(exc):
        return f"{exc} (map those bones in the Retarget panel, or enable Allow Partial Map)"
    if mapping and not isinstance(exc, PhysicsError):
        return f"{exc} (the bone map in the Retarget panel does not fit: Auto-Map again)"
    return str(exc)


BATCH_SOURCE_ITEMS = [
    ("ACTIONS", "Actions", "The source armature's actions ticked in the list, else every action of its bones"),
    ("FILES", "Folder", "The .bvh, .amc and .fbx files of a folder"),
]


def batch_properties() -> dict:
    """What Retarget Batch reads, shared by the scene's Retarget settings and the operator."""
    return {
        "batch_source": EnumProperty(
            name="Sources", items=BATCH_SOURCE_ITEMS, default="ACTIONS", description="What the batch retargets"
        ),
        "batch_folder": StringProperty(
            name="Folder", subtype="DIR_PATH", default="", description="Folder of motion files to retarget"
        ),
    }


class MOCAP_OT_retarget_batch(jobs.JobOperator, bpy.types.Operator):
    """Retarget several actions of the source armature, or a folder of motion files, onto the active armature"""

    bl_idname = "mocap.retarget_batch"
    bl_label = "Retarget Batch"
    bl_options = {"REGISTER", "UNDO"}
    __annotations__ = {
        **retarget_properties(),
        **batch_properties(),
        "actions": CollectionProperty(
            type=bpy.types.PropertyGroup,
            name="Actions",
            options={"HIDDEN", "SKIP_SAVE"},
            description="Names of the source actions (default: those ticked in the list, else every action of "
            "the source's bones)",
        ),
        "use_bone_map": use_bone_map_property(),
    }

    @classmethod
    def poll(cls, context):
        return poll_result(cls, target_poll_message(context))

    def invoke(self, context, event):
        take_unset(self, context.scene.mocap_workbench.retarget, (*retarget_properties(), *batch_properties()))
        return jobs.start(self, context)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "batch_source")
        if self.batch_source == "FILES":
            layout.prop(self, "batch_folder")
        draw_retarget_options(layout, self)
        layout.prop(self, "use_bone_map")
        layout.prop(self, "use_physics")

    def prepare(self, context):
        """Read every source (:mod:`.batch`); the work retargets them in turn, the finish writes them all."""
        import time

        from ..keyframes.operators import extraction_options
        from . import batch
        from .retarget_action import prepare_retarget

        start = time.perf_counter()
        target = context.active_object
        settings = context.scene.mocap_workbench
        mapping, aside = panel_bone_map(self, settings.retarget, target)
        extract = extraction_options(settings, target) if self.extract_keyframes else None
        try:
            physics = physics_settings_of(self, context.scene)
        except ValueError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        options = options_of(self)

        def prepare(source, clip):
            used, notes = mapping, []
            if mapping and self.batch_source == "FILES":  # a file's rig may not be the panel's source
                used, notes = batch.map_for_file(mapping, source, target)
            prepared = prepare_retarget(source, target, used, options, extract, physics, self.plot_physics, clip=clip)
            prepared.notes.extend(notes)
            return prepared

        items, reads = [], None
        if self.batch_source == "FILES":  # Blender's importers run on the main thread: the job's reads
            files = batch.motion_files(self.batch_folder)
            reads = batch.read_files(context, files, prepare, items)
        else:
            source = find_source(context)
            message = pair_poll_message(context, need_action=False)
            if message or source is None:
                self.report({"ERROR"}, message or "Choose a source armature")
                return {"CANCELLED"}
            names = [item.name for item in self.actions]
            unknown = [n for n in names if n not in bpy.data.actions]
            if unknown:
                self.report({"ERROR"}, f"No action called {', '.join(map(repr, unknown[:3]))}")
                return {"CANCELLED"}
            actions = [bpy.data.actions[n] for n in names] if names else batch.source_actions(source, target)
            if not actions:
                self.report({"ERROR"}, f"No action animates the bones of '{source.name}'")
                return {"CANCELLED"}
            items = batch.read_actions(source, actions, prepare)
            if not any(item.prepared for item in items):
                self.report({"ERROR"}, "Nothing to retarget: " + "; ".join(f"{i.name}: {i.error}" for i in items[:3]))
                return {"CANCELLED"}

        def finish(context, outcomes):
            report = yield from batch.write_batch(target, items, outcomes, start)
            lines = report.lines()
            context.scene.mocap_workbench.retarget.last_report = "\n".join(lines)
            if not report.done:
                raise ValueError("Nothing retargeted: " + "; ".join(lines[1:4]))
            for note in aside:
                self.report({"WARNING"}, note)
            for line in lines[1:]:
                if line.startswith("failed: "):
                    self.report({"WARNING"}, line)
            for done in report.done:
                for note in done.notes:
                    self.report({"WARNING"}, f"{done.source_action}: {note}")
            self.report({"INFO"}, "; ".join(lines))
            return {"FINISHED"}

        if reads is not None:
            label = f"Reading and retargeting {len(files)} files"
            return jobs.Task(batch.batch_work(items, explained), finish, label, reads=reads, read_share=0.5,
                             write_share=0.1)  # fmt: skip
        return jobs.Task(batch.batch_work(items, explained), finish, f"Retargeting {len(items)} actions",
                         write_share=0.1)  # fmt: skip


def core_body_missing(source, target, mapping: dict[str, str]) -> str:
    """The parts of the core body (hips, spine, head, legs, arms) a bone map leaves unmapped, in
    words ("head, left foot"), or "" when it maps them all."""
    from ...core.retarget import map_labels
    from ...core.retarget.mapping import describe
    from ..common.armature import skeleton_from_armature

    if not mapping:
        return "everything"
    missing = map_labels(mapping, skeleton_from_armature(source), skeleton_from_armature(target), allow_partial=True)[2]
    return ", ".join(map(describe, missing))


class MOCAP_OT_retarget_auto_map(_PairOperator, bpy.types.Operator):
    """Map the active armature's bones to the source armature's bones by their names, or by the hierarchy"""

    bl_idname = "mocap.retarget_auto_map"
    bl_label = "Auto-Map"
    bl_options = {"REGISTER", "UNDO"}
    need_action = False

    @reported_errors
    def execute(self, context):
        from .retarget_action import auto_bone_map, fill_bone_map

        source, target = find_source(context), context.active_object
        settings = context.scene.mocap_workbench.retarget
        mapping = auto_bone_map(source, target)
        count = fill_bone_map(settings.bone_map, target, mapping)
        settings.bone_map_target = target.name
        text = f"Mapped {count} of {len(target.data.bones)} bones of '{target.name}' to '{source.name}'"
        missing = core_body_missing(source, target, mapping)
        if missing:
            self.report({"WARNING"}, f"{text}; not mapped: {missing} (map them before Retarget)")
        else:
            self.report({"INFO"}, text)
        return {"FINISHED"}


class MOCAP_OT_retarget_load_map(bpy.types.Operator, ImportHelper):
    """Load a bone map (JSON) for the active armature, its bones found by name as a preset's are"""

    bl_idname = "mocap.retarget_load_map"
    bl_label = "Load Bone Map"
    bl_options = {"REGISTER", "UNDO"}
    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return poll_result(cls, target_armature_message(context.active_object))

    @reported_errors
    def execute(self, context):
        from ...core.retarget.presets import read_preset
        from .bone_map_presets import apply_document

        return apply_document(self, context, read_preset(self.filepath))  # a bad file: ValueError naming it


class MOCAP_OT_retarget_save_map(bpy.types.Operator, ExportHelper):
    """Save the bone map as a JSON file, the document a bone map preset holds"""

    bl_idname = "mocap.retarget_save_map"
    bl_label = "Save Bone Map"
    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        empty = not len(context.scene.mocap_workbench.retarget.bone_map)
        return poll_result(cls, "The bone map is empty: use Auto-Map or Load Bone Map first" if empty else None)

    @reported_errors
    def execute(self, context):
        from ...core.retarget import save_preset
        from .retarget_action import bone_map_of

        settings = context.scene.mocap_workbench.retarget
        source = settings.source.name if settings.source else ""
        save_preset(self.filepath, bone_map_of(settings.bone_map), source=source, target=settings.bone_map_target)
        self.report({"INFO"}, f"Saved bone map to {self.filepath}")
        return {"FINISHED"}


class MOCAP_OT_retarget_clear_map(bpy.types.Operator):
    """Clear the bone map, so Retarget maps the bones automatically"""

    bl_idname = "mocap.retarget_clear_map"
    bl_label = "Clear Bone Map"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.mocap_workbench.retarget
        empty = not len(settings.bone_map) and not settings.bone_map_target
        return poll_result(cls, "The bone map is already empty" if empty else None)

    @reported_errors
    def execute(self, context):
        settings = context.scene.mocap_workbench.retarget
        settings.bone_map.clear()
        settings.bone_map_target = ""
        return {"FINISHED"}


def draw_retarget_options(layout, settings) -> None:
    """The options as the sidebar and the redo panel show them."""
    layout.prop(settings, "root_scale")
    if settings.root_scale == "RATIO":
        layout.prop(settings, "scale_ratio")
    layout.prop(settings, "in_place")
    layout.prop(settings, "root_motion")
    layout.prop(settings, "on_floor")
    layout.prop(settings, "plant_feet")
    layout.prop(settings, "distribute_twist")
    layout.prop(settings, "allow_partial")
    layout.prop(settings, "extract_keyframes")


def draw_physics_options(layout, settings, target=None) -> None:
    """The Physics section as the sidebar and the redo panel show it (its checkbox is in the header)."""
    layout.use_property_split = True
    layout.active = settings.use_physics
    column = layout.column()
    column.prop(settings, "target_mass")
    column.prop(settings, "target_height")
    if settings.target_height == 0.0 and target is not None and target.type == "ARMATURE":
        from ...core.physics.units import plausible
        from ..common.units import metres
        from .retarget_action import measured_height, size_unit

        height = measured_height(target)
        text = (
            f"Measured: {metres(bpy.context.scene, height)}" if height is not None else "Not measurable: set the height"
        )
        warn = height is None or not plausible(height)
        column.label(text=text + (" (not human-sized: set the height)" if height and warn else ""),
                     icon="ERROR" if warn else "INFO")  # fmt: skip
        read = size_unit(target) if height and warn else None
        if read is not None:  # what Retarget then takes (a BVH in centimetres imported at scale 1)
            column.label(text=f"Physics reads it in {read[1]}: {metres(bpy.context.scene, read[2])}", icon="INFO")
    column.prop(settings, "source_mass")
    column.prop(settings, "body_model")
    column = layout.column(heading="Constraints")
    column.prop(settings, "use_balance")
    column.prop(settings, "use_torque_limits")
    column.prop(settings, "use_momentum")
    layout.prop(settings, "stiffness")
    layout.prop(settings, "plot_physics")


classes = (
    MOCAP_OT_retarget,
    MOCAP_OT_retarget_batch,
    MOCAP_OT_retarget_auto_map,
    MOCAP_OT_retarget_load_map,
    MOCAP_OT_retarget_save_map,
    MOCAP_OT_retarget_clear_map,
)
