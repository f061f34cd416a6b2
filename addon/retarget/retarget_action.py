"""Retargeting between two armatures: read the source action, call the core, bake a new action.

Shared by the operators and the headless script, so both produce the same result.

Spaces: the core works in armature space. The rotation from the source armature's space to
the target's comes from the two objects' world orientations (scale removed), so what the user
sees in the viewport decides the axes: an armature made by Blender's BVH importer (Z-up) and a
rig built in Blender line up with no setting.

Physics (optional, :mod:`core.physics.apply`): runs on the retargeted motion before it is
written, so the new action holds the physically plausible result and the retarget figures are
measured on it. Metres per armature unit: the scene's Unit Scale times the object's scale
(or the target height the user gives); an armature that this makes no human size is read in the
unit its size says, noted (a Mixamo or Character Creator BVH imported at scale 1 is 200 units
tall: in a metre scene its physics took the body as 200 m tall and did nothing, ZMP inside 12 %
→ 12 % of contact frames on CMU 02_01, 343 → 343 frames over a torque limit; read in
centimetres, 99.4 % → 100 %, 0 → 0, as at scale 0.01). The figures go on the new action as a custom property
(``mocap_workbench`` › ``physics``); the plot (when matplotlib is importable in Blender's
Python) becomes an image datablock "Physics Report – <action>", packed into the file.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import bpy
import numpy as np

from ...core import channels as core_channels
from ...core.keyframes.channel_keys import extract_channels
from ...core.physics.apply import PhysicsSettings, apply_physics
from ...core.physics.apply import summary_lines as physics_lines
from ...core.physics.errors import PhysicsError
from ...core.retarget import RetargetOptions, auto_map, retarget, retarget_metrics
from ..common import animdata, jobs, record, units
from ..common.armature import BoneCurves, channel_layout, skeleton_from_armature, write_values
from ..common.clip import ArmatureClip, read_clip
from ..common.library import refuse_linked
from ..common.spaces import metres_per_unit, object_alignment, vertical
from . import control_rigs


@dataclass
class RetargetReport:
    """What Retarget did, with the figures the user sees."""

    source: str
    target: str
    source_action: str
    result_action: str
    frames: np.ndarray
    mapped: int
    target_bones: int
    scale: float
    figures: dict = field(default_factory=dict)
    mapping: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    extraction: Any = None  # the ExtractionReport when the result was distilled into keyframes
    seconds: float = 0.0
    physics: dict = field(default_factory=dict)  # core.physics.apply figures (empty: no physics)
    physics_series: dict = field(default_factory=dict)  # "before"/"after" PhysicsSeries, for plots
    physics_image: str = ""  # name of the plot's image datablock
    physics_plot_note: str = ""  # why there is no plot
    speed: Any = None  # writes a speed in the target's armature units per second (the scene's units)
    kilograms: Any = None  # writes a mass in kg in the scene's units
    metres: Any = None  # writes a length in metres in the scene's units
    controls: dict = field(default_factory=dict)  # control_rigs.key_controls figures (empty: bones keyed)

    def lines(self) -> list[str]:
        """The report as rows: what was retargeted, foot skating, the action written, physics, keyframes."""
        rows = [
            f"Retargeted {len(self.frames)} frames of '{self.source_action}' onto '{self.target}': "
            f"{self.mapped} of {self.target_bones} bones mapped, root scale {self.scale:.3g}"
        ]
        if "skating_before" in self.figures:
            speed = self.speed or (lambda v: f"{units.figure(v)} per s")
            before, after = (speed(self.figures[k]) for k in ("skating_before", "skating_after"))
            rows.append(f"foot skating {before} → {after}")
        rows.append(f"new action '{self.result_action}'")
        if self.controls:
            rows.append(control_rigs.summary(self.controls))
        if self.physics:
            rows.extend(physics_lines(self.physics, self.kilograms, self.metres))
        if self.physics_image:
            rows.append(f"plot in image '{self.physics_image}'")
        if self.extraction is not None:
            rows.extend(self.extraction.lines()[:2])
        return rows

    def summary(self) -> str:
        return "; ".join(self.lines())


def target_skeleton(target: Any) -> Any:
    """The skeleton of ``target`` a bone map names: its own, or on a control rig the body Retarget
    solves on (:mod:`.control_rigs`: a Rigify rig's ORG bones, never its controls)."""
    rig = control_rigs.read_control_rig(target)
    return skeleton_from_armature(target) if rig is None else rig.skeleton


def auto_bone_map(source: Any, target: Any) -> dict[str, str]:
    """Automatic bone map target bone → source bone of two armature objects (:func:`target_skeleton`)."""
    return auto_map(skeleton_from_armature(source), target_skeleton(target))


def fill_bone_map(collection: Any, target: Any, mapping: dict[str, str]) -> int:
    """Fill a collection of (target, source) rows with one row per target bone; returns the mapped count."""
    collection.clear()
    for bone in target.data.bones:
        row = collection.add()
        row.target = bone.name
        row.source = mapping.get(bone.name, "")
    return sum(1 for row in collection if row.source)


def bone_map_of(collection: Any) -> dict[str, str]:
    """The bone map target → source held by a collection of rows (empty sources left out)."""
    return {row.target: row.source for row in collection if row.source}


def _held_channels(obj: Any, bones: set[str] | None = None) -> dict[tuple[str, str, int], float]:
    """Rest values of the location and scale channels of ``bones`` (default all) the target's current
    action animates, so the new action holds at rest those it does not move."""
    channels = animdata.object_channels(obj)
    if channels is None:
        return {}
    curves = BoneCurves.of(channels.fcurves, {b.name for b in obj.data.bones} if bones is None else bones)
    held = {}
    for bone, prop, index in curves.by_channel:
        if prop in ("scale", "location"):
            held[(bone, prop, index)] = 1.0 if prop == "scale" else 0.0
    return held


def _reset_pose(obj: Any, bones: set[str]) -> None:
    """Put the location and scale of ``bones`` at rest (channels the new action does not key)."""
    for pose_bone in obj.pose.bones:
        if pose_bone.name in bones:
            pose_bone.location = (0.0, 0.0, 0.0)
            pose_bone.scale = (1.0, 1.0, 1.0)


def _copy_other_bones(target: Any, previous: Any, channels: animdata.Channels, keyed: set[str]) -> None:
    """Copy the previous action's curves of the bones the retarget does not animate into the new
    action, so their animation is untouched."""
    if previous is None:
        return
    others = {b.name for b in target.data.bones} - keyed
    for fcurve in BoneCurves.of(previous.fcurves, others).by_channel.values():
        animdata.copy_fcurve(fcurve, channels)


def result_values(motion: Any, layout: Any, held: dict) -> dict:
    """Channel values (T,) that play ``motion`` on a layout (:func:`..common.armature.channel_layout`),
    with the ``held`` channels (:func:`_held_channels`) at rest where the motion does not move them."""
    values = core_channels.pose_values(motion, layout)
    for key, rest in held.items():
        values.setdefault(key, np.full(motion.n_frames, rest))
    return values


def write_result(
    target: Any, motion: Any, frames: np.ndarray, name: str, values: dict | None = None, keyed: set[str] | None = None
) -> tuple[animdata.Channels, dict]:
    """Bake ``motion`` (on the target's skeleton) as a new action keyed on every frame and assign it;
    the target's previous action is kept (fake user). values: the channels' values when already
    computed (:func:`result_values`); keyed: the bones to animate (default all), the others keep
    the curves they had in the previous action. Returns the action's channels and the values written."""
    keyed = {b.name for b in target.data.bones} if keyed is None else set(keyed)
    if values is None:
        values = result_values(motion, channel_layout(target), _held_channels(target, keyed))
    values = {key: v for key, v in values.items() if key[0] in keyed}
    previous = animdata.object_channels(target)
    channels = animdata.new_action_for(target, name)
    write_values(channels, values, frames)
    _copy_other_bones(target, previous, channels, keyed)
    if previous is not None:
        animdata.keep(previous.action)
    _reset_pose(target, keyed)
    animdata.assign(target, channels)
    return channels, values


def _record(action: Any, source: Any, source_action: str, result: Any, figures: dict, physics: dict) -> None:
    """Keep where the action came from and its figures in the action's record (:mod:`..common.record`)."""
    record.write(action, "retarget", {
        "source_armature": source.name,
        "source_action": source_action,
        "mapped_bones": len(result.pairs[0]),
        "scale": result.scale,
        **{k: v for k, v in figures.items() if k.startswith(("skating", "position_error", "contact"))},
    })  # fmt: skip
    if physics:
        record.write(action, "physics", physics)


def _standing_height(obj: Any, skeleton: Any) -> float:
    """Standing height of ``skeleton`` (``obj``'s, or its control rig's body) in armature units, upright
    along the world's up axis as the retarget's physics stands it: the rest pose's own up axis made a
    Character Creator BVH (rest pose folded along one axis) 133-135 units tall instead of its 177."""
    from ...core.physics.body import standing_height

    return standing_height(skeleton, vertical(obj))


def measured_height(obj: Any) -> float | None:
    """Standing height of a target armature in metres (armature units × :func:`metres_per_unit`), of the body
    the physics stands (:func:`target_skeleton`: a Rigify rig's ORG bones, 1.976 m, not its controls, 1.980 m),
    or None when it is not a humanoid the body model understands."""
    try:
        return _standing_height(obj, target_skeleton(obj)) * metres_per_unit(obj)
    except (ValueError, IndexError, StopIteration):
        return None


def size_unit(obj: Any, what: str = "target") -> tuple[float, str, float] | None:
    """(metres per unit, unit name, height in metres) the physics reads an armature in when the scene's Unit
    Scale times its scale (:func:`metres_per_unit`) makes it no human size but a unit of
    :func:`core.physics.units.likely_unit` does (a BVH in centimetres or CMU's units imported at scale 1);
    else None. what: "source" or "target" (:func:`target_skeleton`: a control rig's body)."""
    from ...core.physics.units import likely_unit, plausible

    try:
        height = _standing_height(obj, target_skeleton(obj) if what == "target" else skeleton_from_armature(obj))
    except (ValueError, IndexError, StopIteration):
        return None
    found = likely_unit(height)
    if plausible(height * metres_per_unit(obj)) or found is None:
        return None
    return found[0], found[1], height * found[0]


def _body_unit(obj: Any, what: str, notes: list[str]) -> float:
    """Metres per unit of an armature for its body model: the scene's Unit Scale times its scale
    (:func:`metres_per_unit`) when that makes it human-sized, else the unit its size says (:func:`size_unit`),
    noted. what: "source" or "target" (a target's height, when given, sets its unit in the core instead)."""
    unit = metres_per_unit(obj)
    read = size_unit(obj, what)
    if read is None:
        return unit
    metres, name, height = read
    fix = "; give the target height to set it" if what == "target" else ""
    notes.append(f"{what} height measured as {height / metres * unit:.3g} m in the scene ('{obj.name}'), not "
                 f"human-sized: its physics takes its units as {name} ({height:.3g} m){fix}")  # fmt: skip
    return metres


def _physics_args(source: Any, target: Any, clip: Any, units: tuple, notes: list[str], settings: Any) -> dict:
    """What the core's physics reads from Blender: the metres per unit of the target and of the
    source (units: (source, target) given by the caller, None: :func:`_body_unit`; the target's is
    the scene's when its height is given), the first frame (module notes)."""
    source_unit = _body_unit(source, "source", notes) if units[0] is None else units[0]
    target_unit = units[1]
    if target_unit is None:
        given = settings.target_height is not None
        target_unit = metres_per_unit(target) if given else _body_unit(target, "target", notes)
    return {"unit": target_unit, "source_unit": source_unit, "first_frame": int(clip.frames[0])}


def _physics(motion: Any, result: Any, settings: PhysicsSettings, args: dict, step) -> Any:
    """The core's physics on the retargeted motion (module notes); its errors are PhysicsError ("Physics: …")."""
    try:
        return apply_physics(result.motion, settings, up=result.up, source=motion, progress=step,
                             labels=result.target_labels, **args)  # fmt: skip
    except ValueError as exc:
        raise PhysicsError(f"Physics: {exc}") from exc


def physics_image(report: RetargetReport, folder: str | None = None) -> Any:
    """Plot the physics report into a PNG in ``folder`` (default Blender's temporary folder), load
    it as the image "Physics Report – <action>" (packed into the file) and name it on the action.

    Returns the image, or None with ``report.physics_plot_note`` saying why (matplotlib missing).
    """
    from ...core.physics import plot

    if not report.physics_series:
        return None
    if not plot.available():
        report.physics_plot_note = (
            "no plot: matplotlib is not installed in Blender's Python (the figures are in the report "
            "and on the action's 'mocap_workbench' property)"
        )
        return None
    import tempfile
    from pathlib import Path

    name = f"Physics Report – {report.result_action}"
    folder = Path(folder or bpy.app.tempdir or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in report.result_action)
    path = plot.plot_report(folder / f"physics_report_{safe}.png", name, report.physics_series["before"],
                            report.physics_series["after"])  # fmt: skip
    image = bpy.data.images.load(str(path), check_existing=False)
    image.name = name
    image.pack()
    report.physics_image = image.name
    action = bpy.data.actions.get(report.result_action)
    if action is not None:
        record.write(action, "physics", {"image": image.name}, merge=True)
    return image


@dataclass
class RetargetOutcome:
    """The core's part of a retarget (:meth:`PreparedRetarget.work`): no Blender data in it."""

    result: Any  # core.retarget RetargetResult, physics applied
    figures: dict
    physics: Any = None  # core.physics.apply outcome (None: no physics)
    values: dict | None = None  # the target's channel values (T,) (with keyframes to extract)
    keys: Any = None  # core.keyframes ChannelExtraction of the result (None: a key on every frame)
    controls: Any = None  # control_rigs.ControlPlan on a control rig (None: the bones are keyed)


@dataclass
class PreparedRetarget:
    """A retarget after its reads (:func:`prepare_retarget`): :meth:`work` is the core's part (no
    Blender data touched: it may run in a worker thread), :meth:`write` bakes its result."""

    source: Any
    target: Any
    clip: ArmatureClip
    skeleton: Any
    mapping: dict[str, str] | None
    options: RetargetOptions | None
    alignment: np.ndarray
    physics: PhysicsSettings | None
    physics_args: dict
    extract: dict | None
    plot: bool
    start: float
    layout: Any = None  # the target's channel layout and held channels (with keyframes to extract)
    held: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # found while reading, for the report
    controls: Any = None  # control_rigs.ControlRig of a control rig (Rigify's), else None
    driven: dict = field(default_factory=dict)  # bones constraints drive on any other rig (control_rigs)

    def work(self, progress: Callable[[float], None] | None = None) -> RetargetOutcome:
        """Retarget, then the physics when asked, then the figures; progress: share done, 0–1."""
        step = progress or (lambda _x: None)
        motion = self.clip.motion
        options, root_motion = self.options, self.options is not None and self.options.root_motion
        if self.controls is not None and root_motion:  # a control rig's root control carries it (plan_controls)
            options = dataclasses.replace(options, root_motion=False)
        result = retarget(motion, self.skeleton, self.mapping, options, alignment=self.alignment)
        result.notes[:0] = self.notes
        if self.controls is None:
            control_rigs.refuse_driven(result, self.driven)  # before anything is written
        step(0.3)
        outcome = None
        if self.physics is not None:
            outcome = _physics(motion, result, self.physics, self.physics_args, lambda x: step(0.3 + 0.6 * x))
            result.motion = outcome.motion
            result.notes.extend(outcome.notes)
        step(0.9)
        figures = retarget_metrics(motion, result)
        done = RetargetOutcome(result, figures, outcome)
        if self.controls is not None:
            floor = self.options.floor_level if root_motion and self.options.on_floor else None
            done.controls = control_rigs.plan_controls(self.controls, result, root_motion, floor)
        elif self.extract is not None:  # distil the motion in memory, not the curves to be written
            keyed = {self.skeleton.names[j] for j in result.keyed}  # the others keep their own curves
            values = result_values(result.motion, self.layout, self.held)
            done.values = {key: v for key, v in values.items() if key[0] in keyed}
            every = {k: np.arange(motion.n_frames, dtype=float) for k in done.values}  # as they are written
            done.keys = extract_channels(result.motion, self.layout, done.values, key_frames=every, **self.extract)
        step(1.0)
        return done

    def write(self, done: RetargetOutcome, progress: Callable[[float], None] | None = None) -> RetargetReport:
        """Bake the retargeted motion as the target's new action, with its record, overlay, plot and keys."""
        return jobs.drain(self.write_steps(done), progress)

    def write_steps(self, done: RetargetOutcome) -> Generator[float, None, RetargetReport]:
        """:meth:`write` in steps (yielding the share written): a control rig's fit a pass a step."""
        source, target, clip, skeleton = self.source, self.target, self.clip, self.skeleton
        result, figures, outcome = done.result, done.figures, done.physics
        root = skeleton.names[result.root]
        if target.data.bones[root].use_connect:
            result.notes.append(f"root bone '{root}' is connected to its parent: its location is ignored by Blender")
        keyed = {skeleton.names[j] for j in result.keyed} if len(result.keyed) else set(skeleton.names)
        name = f"{clip.channels.action.name}_{target.name}"
        controlled = {}
        if done.controls is not None:  # a control rig: an action for the controls, keyed on Blender's evaluation
            keyed = set(done.controls.controls) | set(done.controls.switches)
            channels, values = write_result(target, result.motion, clip.frames, name, {}, keyed)
            fit = control_rigs.key_controls(target, self.controls, done.controls, channels, clip.frames)
            controlled = yield from jobs.scaled(fit, 0.0, 0.4)
            result.notes.extend(control_rigs.notes(done.controls, controlled, self.extract is not None))
        else:
            channels, values = write_result(target, result.motion, clip.frames, name, done.values, keyed)
        _record(channels.action, source, clip.channels.action.name, result, figures,
                outcome.figures if outcome else {})  # fmt: skip
        if done.controls is not None:  # a step (one timer tick, Esc between) only after work that took time
            yield 0.4
        report = RetargetReport(source.name, target.name, clip.channels.action.name, channels.action.name,
                                clip.frames, len(result.pairs[0]), len(skeleton.names), result.scale, figures,
                                result.mapping, result.notes, controls=controlled)  # fmt: skip
        scene = bpy.context.scene
        report.speed = lambda v: units.armature_speed(target, v if abs(v) > 1e-9 else 0.0)  # rounding noise as 0
        report.kilograms, report.metres = (lambda kg: units.kilograms(scene, kg)), (lambda m: units.metres(scene, m))
        if outcome is not None:
            from ...core.physics.apply import ground_drawing
            from .physics_overlay import store

            store(channels.action, ground_drawing(outcome.series["after"]), int(clip.frames[0]))
            report.physics, report.physics_series = outcome.figures, outcome.series
            if self.plot:
                physics_image(report)
        if done.keys is not None:  # the keys the work chose, written over the curves just written
            yield 0.6
            from ..keyframes.extract_action import PreparedExtraction

            written = ArmatureClip(target, channels, BoneCurves.of(channels.fcurves, keyed),
                                   clip.frames, values, result.motion, self.layout)  # fmt: skip
            extraction = PreparedExtraction(target, written, {"method": self.extract["method"]}, True, True, None,
                                            time.perf_counter())  # fmt: skip
            report.extraction = extraction.write(done.keys)
        report.seconds = time.perf_counter() - self.start
        return report


def prepare_retarget(
    source: Any,
    target: Any,
    mapping: dict[str, str] | None = None,
    options: RetargetOptions | None = None,
    extract: dict | None = None,
    physics: PhysicsSettings | None = None,
    plot: bool = False,
    source_unit: float | None = None,
    target_unit: float | None = None,
    clip: ArmatureClip | None = None,
) -> PreparedRetarget:
    """Check the pair and read what the retarget needs from Blender; writes nothing. Arguments as
    :func:`retarget_armatures`'s; clip: the source's action already read (default its active action)."""
    start = time.perf_counter()
    if source == target:
        raise ValueError("the source and the target must be two different armatures")
    refuse_linked(target)  # its new action would be lost on reload
    clip = read_clip(source) if clip is None else clip
    controls = control_rigs.read_control_rig(target)  # a control rig: retarget onto its body, key its controls
    skeleton = skeleton_from_armature(target) if controls is None else controls.skeleton
    mapping = mapping if controls is None else control_rigs.body_map(mapping, controls)
    alignment = object_alignment(source, target)
    notes: list[str] = []
    physics_args = _physics_args(source, target, clip, (source_unit, target_unit), notes, physics) if physics else {}
    prepared = PreparedRetarget(source, target, clip, skeleton, mapping, options, alignment, physics, physics_args,
                                extract, plot, start, notes=notes, controls=controls,
                                driven=control_rigs.driving_constraints(target))  # fmt: skip
    if extract is not None:
        prepared.layout, prepared.held = channel_layout(target), _held_channels(target)
    return prepared


def retarget_armatures(
    source: Any,
    target: Any,
    mapping: dict[str, str] | None = None,
    options: RetargetOptions | None = None,
    extract: dict | None = None,
    progress: Callable[[float], None] | None = None,
    physics: PhysicsSettings | None = None,
    plot: bool = False,
    source_unit: float | None = None,
    target_unit: float | None = None,
) -> RetargetReport:
    """Retarget ``source``'s active action onto ``target`` as a new action.

    mapping: target bone → source bone (default automatic); extract: keyword arguments of
    :func:`.extract.extract_on_armature` to distil the result into keyframes (None: keep a
    key on every frame); physics: make the result physically plausible (module notes); plot:
    also make the physics report image (:func:`physics_image`); source_unit, target_unit: metres
    per unit of the two armatures for the physics (default the scene's Unit Scale times the
    object's scale, :func:`metres_per_unit`, or the unit its size says when that is not
    human-sized, :func:`_body_unit`; the scripts give the units of the files they came from). Raises ValueError before
    anything is written when the retarget or the physics cannot run. The three steps (read,
    core, write) are :func:`prepare_retarget`, :meth:`PreparedRetarget.work` and
    :meth:`PreparedRetarget.write`, which the operator runs apart (:mod:`..common.jobs`).
    """
    step = progress or (lambda _x: None)
    prepared = prepare_retarget(source, target, mapping, options, extract, physics, plot, source_unit, target_unit)
    step(0.2)
    done = prepared.work(lambda x: step(0.2 + 0.65 * x))
    step(0.85)
    return prepared.write(done, lambda x: step(0.85 + 0.15 * x))
