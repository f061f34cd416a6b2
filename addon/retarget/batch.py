"""Retarget Batch: several actions of the source armature, or the motion files of a folder, onto one target.

Like Retarget, in three steps (:mod:`..common.jobs`):

1. read, on the main thread: each action of the source armature into the core
   (:func:`.retarget_action.prepare_retarget` with that action's clip). A file is imported with
   Blender's own importer (BVH, FBX; AMC with Import Acclaim, its .asf found beside it), its frames
   spread to the scene's frame rate (*Scale FPS*), read, and everything the import made is removed
   again at once (:class:`..common.guard.Changes`, the selection put back), so only plain data is
   kept and the file is as it was; files are the job's reads, one a timer tick, with progress and
   Esc between them;
2. work, in the worker thread: each source's retarget in turn, the progress over the whole batch;
   a source that fails (its map does not fit, a malformed file) is named in the report and the
   others go on;
   The Retarget panel's bone map applies to a file by name (as a preset does); a file of another
   rig, lacking bones it names, is mapped automatically, noted in the report;
3. write, at the end on the main thread: one new action per source, named after it
   (``<action or file name>_<target>``); the target's earlier actions are kept (fake users).

Cancelled, or failed as a whole, nothing is written.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import bpy

from ..common import animdata, jobs, record
from ..common.guard import Changes

MOTION_SUFFIXES = (".bvh", ".amc", ".fbx")
_IMPORTERS = {".bvh": ("IMPORT_ANIM_OT_bvh", "io_anim_bvh"), ".fbx": ("IMPORT_SCENE_OT_fbx", "io_scene_fbx")}


@dataclass
class BatchItem:
    """One source of the batch: its name, its retarget once read (None: it could not be read), why it failed."""

    name: str
    prepared: Any = None  # .retarget_action.PreparedRetarget
    error: str = ""


@dataclass
class BatchReport:
    """What Retarget Batch did: each source's RetargetReport (None where it failed), with figures."""

    target: str
    items: list[BatchItem]
    reports: list[Any] = field(default_factory=list)  # RetargetReport or None, in the items' order
    seconds: float = 0.0

    @property
    def done(self) -> list[Any]:
        return [r for r in self.reports if r is not None]

    def lines(self) -> list[str]:
        """A summary row, one row per new action, one per failure."""
        done = self.done
        frames = sum(len(r.frames) for r in done)
        rows = [f"Retargeted {len(done)} of {len(self.items)} sources onto '{self.target}' "
                f"({frames} frames) in {self.seconds:.1f} s"]  # fmt: skip
        for report in done:
            row = (f"'{report.result_action}': {len(report.frames)} frames, {report.mapped} of "
                   f"{report.target_bones} bones mapped, root scale {report.scale:.3g}")  # fmt: skip
            if "skating_before" in report.figures and report.speed is not None:
                before, after = (report.speed(report.figures[k]) for k in ("skating_before", "skating_after"))
                row += f", foot skating {before} → {after}"
            rows.append(row)
        rows.extend(f"failed: {item.name}: {item.error}" for item in self.items if item.error)
        return rows

    def summary(self) -> str:
        return self.lines()[0]


def is_source_action(action: Any, source: Any, target: Any = None) -> bool:
    """Whether ``action`` is one of ``source``'s motions: most of the bones it animates are the
    source's (another rig's action that shares a few names, ``Hips``, ``Head``, is not), and it is
    not the target's own (its active action or an NLA strip's)."""
    if target is not None and target.animation_data is not None:
        anim = target.animation_data
        if action == anim.action or any(s.action == action for t in anim.nla_tracks for s in t.strips):
            return False
    animated = animdata.animated_bones(action)
    return 2 * len(animated & set(source.data.bones.keys())) > len(animated)


def source_actions(source: Any, target: Any = None) -> list[Any]:
    """The actions a batch retargets from ``source`` onto ``target``: those ticked for the batch, else
    every action of the source (:func:`is_source_action`), except Retarget's own results (named in
    the action's record)."""
    matching = [a for a in bpy.data.actions if is_source_action(a, source, target)]
    ticked = [a for a in matching if getattr(a, "mocap_batch", False)]
    return ticked or [a for a in matching if record.section(a, "retarget") is None]


def motion_files(folder: str | Path) -> list[Path]:
    """The .bvh, .amc and .fbx files of ``folder``, by name; ValueError when there are none."""
    path = Path(bpy.path.abspath(str(folder))) if str(folder) else None
    if path is None or not path.is_dir():
        raise ValueError(f"Choose a folder of motion files (not found: '{folder}')" if folder else "Choose a folder")
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in MOTION_SUFFIXES)
    if not files:
        raise ValueError(f"No .bvh, .amc or .fbx files in {path}")
    return files


def _importer_ready(suffix: str) -> None:
    """Enable Blender's bundled importer for ``suffix`` when it is not (without saving preferences)."""
    name, module = _IMPORTERS.get(suffix, (None, None))
    if name is not None and not hasattr(bpy.types, name):
        import addon_utils

        addon_utils.enable(module, default_set=False)


def import_motion_file(path: Path) -> Any:
    """Import a motion file as a user would (module notes) and return its animated armature; ValueError
    naming the file when it cannot be read."""
    suffix = path.suffix.lower()
    _importer_ready(suffix)
    before = set(bpy.data.objects)
    try:
        if suffix == ".bvh":
            from ...core.io.bvh import read_bvh

            read_bvh(path)  # a malformed file fails here with its line and problem
            bpy.ops.import_anim.bvh(filepath=str(path), use_fps_scale=True, update_scene_fps=False,
                                    update_scene_duration=False)  # fmt: skip
        elif suffix == ".amc":
            bpy.ops.import_anim.acclaim(filepath=str(path), use_fps_scale=True)
        elif suffix == ".fbx":
            bpy.ops.import_scene.fbx(filepath=str(path))
        else:
            raise ValueError(f"{path.name}: expected a .bvh, .amc or .fbx file")
    except RuntimeError as exc:  # the importer's ERROR report
        raise ValueError(f"{path.name}: {' '.join(str(exc).replace('Error:', '').split())}") from None
    found = [o for o in bpy.data.objects if o not in before and o.type == "ARMATURE" and o.animation_data
             and o.animation_data.action is not None]  # fmt: skip
    if len(found) != 1:
        raise ValueError(f"{path.name}: {len(found)} animated armatures in the file, expected one")
    return found[0]


def map_for_file(mapping: dict[str, str], source: Any, target: Any) -> tuple[dict[str, str] | None, list[str]]:
    """The Retarget panel's bone map for an imported file's armature, matched by name as a preset is
    (:func:`core.retarget.presets.resolve_preset`); when the file lacks bones the map names (another
    rig than the panel's source), None — automatic — with a note saying so."""
    from ...core.retarget.presets import preset_document, resolve_preset
    from ..common.armature import skeleton_from_armature
    from .retarget_action import target_skeleton

    resolved, missing = resolve_preset(
        preset_document(mapping), skeleton_from_armature(source), target_skeleton(target)
    )
    if not missing:
        return resolved, []
    shown = ", ".join(missing[:3])
    return None, [f"the bone map names bones this file lacks ({shown}): mapped automatically"]


def read_actions(source: Any, actions: list[Any], prepare: Any) -> list[BatchItem]:
    """Each action of ``source`` read for its retarget (``prepare(source, clip)`` → PreparedRetarget)."""
    from ..common.clip import read_clip

    items = []
    for action in actions:
        item = BatchItem(action.name)
        try:
            item.prepared = prepare(source, read_clip(source, animdata.action_channels(source, action)))
        except ValueError as exc:
            item.error = str(exc)
        items.append(item)
    return items


def read_files(context: Any, files: list[Path], prepare: Any, items: list[BatchItem]) -> Iterator[float]:
    """Each file imported, read for its retarget (``prepare(source, clip)``) into ``items``, and the
    import removed again (module notes): a job's reads (:class:`..common.jobs.Task`), one file a step,
    yielding the share of files read. Closed early (Esc), what the imports made is removed all the same."""
    view_layer = context.view_layer
    selected = [o for o in view_layer.objects if o.select_get()]
    mode, active = context.mode, view_layer.objects.active
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    changes = Changes(context)
    extra = [(c, {b.as_pointer() for b in c}) for c in (bpy.data.meshes, bpy.data.materials)]
    try:
        for i, path in enumerate(files):
            item = BatchItem(path.name)
            try:
                source = import_motion_file(path)
                prepared = prepare(source, None)
                stand_in = SimpleNamespace(name=path.stem)  # the import is removed: the result is named after the file
                prepared.source = stand_in
                prepared.clip = dataclasses.replace(prepared.clip, obj=None, curves=None,
                                                    channels=SimpleNamespace(action=stand_in))  # fmt: skip
                item.prepared = prepared
            except ValueError as exc:
                item.error = str(exc)
            items.append(item)
            yield (i + 1) / len(files)
    finally:
        changes.undo()  # every datablock the imports made, the scene's frame rate and range
        for collection, existing in extra:
            for block in [b for b in collection if b.as_pointer() not in existing and not b.users]:
                collection.remove(block)
        for obj in view_layer.objects:
            obj.select_set(obj in selected)
        view_layer.objects.active = active
        if mode == "POSE" and active is not None:
            bpy.ops.object.mode_set(mode="POSE")


def batch_work(items: list[BatchItem], explain: Any) -> Any:
    """The core's part of a batch: ``work(progress)`` → each item's outcome (None where it failed:
    the item's error says why, ``explain(exc)``); progress over the whole batch."""

    def work(progress):
        if not any(item.prepared for item in items):  # files read during the job: checked once all are
            raise ValueError("Nothing to retarget: " + "; ".join(f"{i.name}: {i.error}" for i in items[:3]))
        outcomes = []
        for i, item in enumerate(items):
            outcome = None
            if item.prepared is not None:
                try:
                    outcome = item.prepared.work(lambda x, i=i: progress((i + x) / len(items)))
                except ValueError as exc:
                    item.error = explain(exc, item.prepared.mapping)
            outcomes.append(outcome)
            progress((i + 1) / len(items))
        return outcomes

    return work


def write_batch(
    target: Any, items: list[BatchItem], outcomes: list[Any], start: float
) -> Generator[float, None, BatchReport]:
    """Write each retargeted source as a new action on ``target`` (main thread), in steps (a generator yielding
    the share written: each action's writes, a control rig's fit a pass a step); returns the report."""
    report = BatchReport(target.name, items)
    for i, (item, outcome) in enumerate(zip(items, outcomes)):
        written = None
        if outcome is not None:
            written = yield from jobs.scaled(item.prepared.write_steps(outcome), i / len(items), (i + 1) / len(items))
        report.reports.append(written)
    report.seconds = time.perf_counter() - start
    return report
