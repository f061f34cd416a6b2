"""Acclaim ASF/AMC in Blender: one armature from an ASF, one action per AMC, and back again.

Import: the core reads and checks every file first (nothing is created for a malformed
one); the capture is then turned and scaled into Blender's world (:func:`transform_world`,
Y-up to Z-up by default like Blender's BVH importer, baked into the bones, the object keeps
an identity transform), an armature is built with one bone per ASF bone (head at the bone's
start, tail at its end, roll matched to the ASF bone axes; an ASF our writer made from another
skeleton comes back on that skeleton, without the ``_link`` and ``_end`` bones it added) and every
AMC becomes an action written in bulk. What export needs to give the file back its own axes, dofs, limits and
units is kept in the armature's ``acclaim`` custom property.

Export: the active action is read densely (:func:`extract.read_clip`), laid back into the
file's frame (the import scale undone), moved onto Acclaim bone axes (the stored ones, else
world-aligned axes like the core's BVH conversion) and written with the stored dofs, widened
where the animation needs more (:func:`fit_dofs`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...core import quaternion as quat
from ...core.io.asf_amc import (
    CHANNEL_DOFS,
    DEFAULT_FPS,
    DOF_CHANNELS,
    channels_to_dofs,
    dofs_to_channels,
    fit_dofs,
    from_asf_layout,
    write_asf_amc,
)
from ...core.io.convert import AcclaimTakes
from ...core.motion import Motion, change_rest, rest_world_rotations, transform_world, with_rest_orientations
from ...core.skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Skeleton
from ..common import animdata
from ..common.armature import (
    build_armature,
    pose_values,
    scene_fps,
    set_scene_fps,
    skeleton_from_armature,
    write_values,
)
from ..common.guard import Changes

META = "acclaim"  # custom property of the armature datablock
Y_UP_TO_Z_UP = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)  # Blender's BVH default
MAX_NAME_BYTES = 63  # Blender's bone names
LAYOUT_TOLERANCE = 1e-5  # × body size: bone ends and child heads closer than this are one point


@dataclass
class ImportOptions:
    """How the files become an armature and actions (the operator's settings)."""

    scale: float = 1.0
    rotation: np.ndarray = field(default_factory=lambda: Y_UP_TO_Z_UP.copy())  # file → Blender
    rotation_mode: str = "QUATERNION"
    frame_start: int = 1
    use_fps_scale: bool = False
    update_scene_fps: bool = False
    update_scene_frame_range: bool = False


@dataclass
class ImportResult:
    obj: Any
    actions: list[Any]
    frames: int
    seconds: float

    def summary(self) -> str:
        if not self.actions:
            return f"Imported skeleton '{self.obj.name}' ({len(self.obj.data.bones)} bones, rest pose)"
        names = ", ".join(f"'{a.name}'" for a in self.actions)
        return (
            f"Imported '{self.obj.name}' ({len(self.obj.data.bones)} bones) with "
            f"{len(self.actions)} action{'s' if len(self.actions) > 1 else ''} ({names}; "
            f"{self.frames} frames) in {self.seconds:.2f} s"
        )


def _file_motions(takes: AcclaimTakes) -> list[Motion]:
    """The motions (or the rest pose alone) in the file's frame, on the skeleton the file was made from.

    An ASF our writer made from another skeleton (a BVH's, an armature's) notes the fixed bones it added
    (``<child>_link`` where a child does not start at its parent's end, ``<joint>_end`` for extra End Sites)
    and the root's name: they are taken away again (:func:`from_asf_layout`, as ``load_motion`` does), since a
    Blender bone may start anywhere. Other files (CMU's, any other tool's) keep every bone they have."""
    motions = takes.motions or [Motion.rest(takes.skeleton, 1, DEFAULT_FPS)]
    return [from_asf_layout(m) for m in motions]


def _key_frames(motion: Motion, options: ImportOptions, fps: float) -> np.ndarray:
    """Frame of every capture frame: one per frame, or spread to the scene's rate."""
    step = fps / motion.fps if options.use_fps_scale else 1.0
    return options.frame_start + step * np.arange(motion.n_frames)


def _animated_values(obj: Any, motion: Motion, moving: set[str]) -> dict:
    """Pose-bone channel values playing ``motion``, only for bones the capture animates."""
    rotating = {n for n, c in zip(motion.skeleton.names, motion.skeleton.channels) if set(c) & set(ROTATION_CHANNELS)}
    on_bones = change_rest(motion, skeleton_from_armature(obj, moving))
    return {
        key: v
        for key, v in pose_values(obj, on_bones).items()
        if key[1] == "location" or key[0] in rotating or key[0] in moving
    }


def import_takes(context: Any, takes: AcclaimTakes, options: ImportOptions) -> ImportResult:
    """Build one armature for ``takes`` (already read and checked by the core) with one action per AMC.

    The first action is assigned; the others get a fake user so saving keeps them. Anything
    created is removed again if building fails, so a failure leaves the file as it was.
    """
    start = time.perf_counter()
    scene = context.scene
    in_file = _file_motions(takes)
    too_long = [n for n in in_file[0].skeleton.names if len(n.encode()) > MAX_NAME_BYTES]
    if too_long:
        raise ValueError(f"bone name '{too_long[0]}' is longer than Blender allows ({MAX_NAME_BYTES} bytes)")
    motions = [transform_world(m, options.rotation, options.scale) for m in in_file]
    fps = motions[0].fps if options.update_scene_fps and takes.motions else scene_fps(scene)
    skeleton = motions[0].skeleton
    changes = Changes(context)
    try:
        obj = build_armature(
            skeleton, takes.asf.stem, context.collection, options.rotation_mode, rest_world_rotations(skeleton)
        )
        moving = {n for n, m in zip(skeleton.names, skeleton.has_position_channels) if m}
        made = []
        for amc, motion in zip(takes.amcs, motions):
            channels = animdata.new_action_for(obj, amc.stem)
            write_values(channels, _animated_values(obj, motion, moving), _key_frames(motion, options, fps))
            made.append(channels)
        if made:
            context.view_layer.update()
            animdata.assign(obj, made[0])
            for channels in made[1:]:
                channels.action.use_fake_user = True  # kept when the file is saved, though unassigned
        actions = [c.action for c in made]
        store_meta(obj, in_file[0].skeleton, options)
    except BaseException:
        changes.undo()
        raise
    if options.update_scene_fps and takes.motions:
        set_scene_fps(scene, motions[0].fps)
    if options.update_scene_frame_range and actions:
        last = _key_frames(motions[0], options, fps)[-1]
        scene.frame_start = options.frame_start
        scene.frame_end = max(options.frame_start, math.ceil(last - 1e-6))
    for other in context.view_layer.objects:
        if other.select_get() and other != obj:
            other.select_set(False)
    obj.select_set(True)
    context.view_layer.objects.active = obj
    frames = motions[0].n_frames if takes.motions else 0
    return ImportResult(obj, actions, frames, time.perf_counter() - start)


# --- what export needs to give an Acclaim file back its own skeleton ---------------------


def store_meta(obj: Any, skeleton: Skeleton, options: ImportOptions) -> None:
    """Keep the ASF's bone axes, dofs, limits and units, and the import's scale, on the armature."""
    frames = rest_world_rotations(skeleton)  # in the file's frame
    limits = skeleton.limits or (None,) * skeleton.n_joints
    bones = {}
    for j, name in enumerate(skeleton.names):
        dofs = channels_to_dofs(skeleton.channels[j])
        entry = {"axis": [float(x) for x in frames[j]], "dof": " ".join(dofs)}
        if limits[j] is not None:
            by_channel = dict(zip(skeleton.channels[j], limits[j]))
            entry["limits"] = [float(v) for d in dofs for v in by_channel[DOF_CHANNELS[d]]]  # in dof order
        bones[name] = entry
    units = skeleton.meta.get("asf_units", {})
    obj.data[META] = {
        "scale": float(options.scale),
        "name": str(skeleton.meta.get("asf_name", obj.name)),
        "units": {"mass": float(units.get("mass", 1.0)), "length": float(units.get("length", 1.0))},
        "bones": bones,
    }


def _meta(obj: Any) -> dict:
    stored = obj.data.get(META)
    return stored.to_dict() if stored is not None else {}


def acclaim_skeleton(motion: Motion, meta: dict, animated: set[str]) -> Motion:
    """``motion`` (in the file's frame) on Acclaim bone axes with Acclaim dofs, ready for the writer.

    Bones the armature got from an ASF (``meta``) take back its axes, dofs and limits; other
    bones get world-aligned axes (``axis 0 0 0``), ``rx ry rz`` when their rotation is keyed
    (``animated``) and ``tx ty tz`` when their location is. :func:`fit_dofs` then adds dofs
    wherever the animation leaves the kept ones.
    """
    sk = motion.skeleton
    stored = meta.get("bones", {})
    frames = np.array([stored[n]["axis"] if n in stored else [1.0, 0.0, 0.0, 0.0] for n in sk.names])
    moved = change_rest(motion, with_rest_orientations(sk, frames))
    channels, limits = [], []
    for j, name in enumerate(sk.names):
        if name in stored:
            dofs = tuple(stored[name]["dof"].split())
            channels.append(dofs_to_channels(dofs))
            flat = stored[name].get("limits")
            if flat is None:
                limits.append(None)
            else:
                by_dof = {d: (flat[2 * i], flat[2 * i + 1]) for i, d in enumerate(dofs)}
                limits.append(tuple(by_dof[CHANNEL_DOFS[c]] for c in channels[-1]))  # in channel order
            continue
        positions = POSITION_CHANNELS if sk.parents[j] < 0 or sk.has_position_channels[j] else ()
        rotations = dofs_to_channels(("rx", "ry", "rz")) if sk.parents[j] < 0 or name in animated else ()
        channels.append(positions + rotations)
        limits.append(None)
    units = {"mass": 1.0, "length": 1.0, "angle": "deg", **meta.get("units", {})}
    skeleton = Skeleton(
        sk.names,
        sk.parents,
        moved.skeleton.rest_translations,
        moved.skeleton.rest_rotations,
        tuple(channels),
        moved.skeleton.end_site_parents,
        moved.skeleton.end_site_offsets,
        tuple(limits) if any(x is not None for x in limits) else None,
        {"asf_units": units, "asf_name": meta.get("name", "MocapWorkbench")},
    )
    return fit_dofs(Motion(skeleton, moved.translations, moved.rotations, motion.fps))


@dataclass
class ExportResult:
    asf: Path
    amc: Path
    motion: Motion  # as written

    def summary(self) -> str:
        sk = self.motion.skeleton
        return (
            f"Wrote {self.asf.name} ({sk.n_joints - 1} bones) and {self.amc.name} "
            f"({self.motion.n_frames} frames at {self.motion.fps:g} fps)"
        )


@dataclass
class ArmatureMotion:
    """An armature's active action in a file's frame and units, with what export needs to know."""

    motion: Motion
    meta: dict  # the ``acclaim`` property: ASF axes, dofs, limits, units (empty if not imported from ASF)
    animated: set[str]  # bones whose rotation is keyed


def armature_motion(
    obj: Any, rotation: np.ndarray | None = None, scale: float = 1.0, fps: float | None = None
) -> ArmatureMotion:
    """``obj``'s active action laid into a file's frame: every integer frame of the action's range.

    rotation: Blender → file turn (default Z-up to Y-up, the inverse of the import's);
    scale multiplies lengths after the scale the armature was imported with is undone;
    fps: the rate to record (default the scene's). Armature space is used (the object's own
    transform is not), like Blender's BVH exporter. Raises ValueError without bone animation.
    """
    from ..common.clip import read_clip

    clip = read_clip(obj)
    meta = _meta(obj)
    turn = quat.inverse(Y_UP_TO_Z_UP) if rotation is None else rotation
    motion = transform_world(clip.motion, turn, scale / meta.get("scale", 1.0))
    if fps is not None:
        motion.fps = float(fps)
    animated = {bone for bone, prop, _ in clip.curves.by_channel if prop.startswith("rotation")}
    return ArmatureMotion(motion, meta, animated)


def export_armature(
    obj: Any, amc_path: str | Path, rotation: np.ndarray | None = None, scale: float = 1.0, fps: float | None = None
) -> ExportResult:
    """Write ``obj``'s active action as ``amc_path`` and its skeleton as the .asf beside it
    (arguments as :func:`armature_motion`). Raises ValueError when the armature cannot be
    written (no bone animation, several root bones)."""
    source = armature_motion(obj, rotation, scale, fps)
    motion = source.motion
    if np.count_nonzero(motion.skeleton.parents < 0) != 1:
        raise ValueError(f"'{obj.name}' has several root bones; Acclaim files hold one root")
    shaped = acclaim_skeleton(motion, source.meta, source.animated)
    amc = Path(amc_path)
    asf = amc.with_suffix(".asf")
    written = write_asf_amc(shaped, asf, amc, LAYOUT_TOLERANCE * motion.skeleton.size())
    return ExportResult(asf, amc, written)
