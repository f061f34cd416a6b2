"""Convert motion files between BVH and ASF/AMC, one file or a whole folder.

    python scripts/convert.py IN OUT [--to bvh|amc] [--asf SKELETON.asf] [--fps 120]
    python scripts/convert.py scene.blend OUT [--armature Rig]      # needs the bpy module
    blender -b -P scripts/convert.py -- IN OUT [options]

IN is a .bvh, an .amc (its skeleton: ``--asf``, else the .asf of the same name, the only
.asf in its folder, or the one whose name starts the AMC's: 01.asf for 01_01.amc) or a
folder of them. OUT is a file (its extension picks the format) or a folder (created if
needed; each input gets ``<name>.<format>``). Without ``--to`` a BVH becomes ASF/AMC and an
AMC becomes BVH. An .amc output is written with its .asf next to it. ``--fps`` sets the
frame rate of AMC input (AMC stores none: default 120, or the rate this tool noted when it
wrote the file) and overrides a BVH's. In a folder, a file that fails is reported and the
rest are converted; the exit status is 1 when any file failed, 2 for usage errors (a bad
value, an output that is an input, an .asf beside an .amc output that would replace a different
existing one — the skeleton other takes share; ``--force`` allows both). Outputs are written
atomically (a temporary file in the same folder, then moved into place).

Where Blender's ``bpy`` module is available, IN may also be a .blend file: the active action
of ``--armature`` (default: the active object when it is an animated armature, else the only
animated armature) is written the way File › Export › Acclaim does (armature space turned
from Z-up to Y-up, the import scale undone, ASF axes and dofs kept for armatures imported
from ASF); without ``--to`` or an output extension it becomes ASF/AMC; ``--fps`` overrides
the scene's frame rate. The .blend is opened with its Python disabled (registered Text blocks,
Python drivers); what it holds is named in a warning. IN may also be an .fbx, read with Blender's
FBX importer (its animated armature, or ``--armature``); without an output extension it becomes BVH.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.io.convert import MOTION_SUFFIXES, find_asf, load_motion
from . import _arguments, _blend, _files
from ._arguments import UsageError, have_bpy, script_args

TARGETS = {".bvh": ".amc", ".amc": ".bvh", ".blend": ".amc", ".fbx": ".bvh"}
SCENE_SUFFIXES = (".blend", ".fbx")  # read through Blender


def parse_args(args: list[str]) -> argparse.Namespace:
    parser = _arguments.Parser(prog="convert.py", description="Convert BVH <-> ASF/AMC (files or folders).")
    parser.add_argument("input", type=Path, help="a .bvh or .amc file, or a folder of them")
    parser.add_argument("output", type=Path, help="output file (.bvh or .amc) or folder")
    parser.add_argument("--to", choices=["bvh", "amc"], help="output format for folders (default: the other one)")
    parser.add_argument("--asf", type=Path, help="skeleton for .amc input (default: found next to the .amc)")
    parser.add_argument(
        "--fps", type=_arguments.positive, help="frame rate of AMC input (default 120); overrides a BVH's"
    )
    parser.add_argument("--armature", help="armature object of a .blend input (default: the active or only one)")
    parser.add_argument("--force", action="store_true",
                        help="replace an input or a different .asf beside an .amc output")  # fmt: skip
    return parser.parse_args(args)


def plan(args: argparse.Namespace) -> list[tuple[Path, Path]]:
    """(input, output) pairs, checked: no output replaces an input (unless --force) or another output."""
    jobs = _pairs(args)
    outputs, inputs = [], [args.asf]
    for source, target in jobs:
        outputs += [target, target.with_suffix(".asf")] if target.suffix.lower() == ".amc" else [target]
        inputs.append(source)
        if source.suffix.lower() == ".amc" and args.asf is None:
            try:
                inputs.append(find_asf(source))
            except OSError:
                pass  # reported when the file is converted
    _files.check_outputs(outputs, inputs, args.force)
    return jobs


def _pairs(args: argparse.Namespace) -> list[tuple[Path, Path]]:
    """(input, output) pairs; raises UsageError for unusable arguments."""
    source, target = args.input, args.output
    if source.is_dir():
        inputs = sorted(p for p in source.iterdir() if p.is_file() and p.suffix.lower() in MOTION_SUFFIXES)
        if not inputs:
            raise UsageError(f"no .bvh or .amc files in {source}")
        if target.suffix.lower() in MOTION_SUFFIXES:
            raise UsageError(f"input is a folder, so the output must be a folder too, not {target}")
        return [(p, _in_folder(p, target, args.to)) for p in inputs]
    if not source.exists():
        raise UsageError(f"input not found: {source}")
    suffix = source.suffix.lower()
    if suffix in SCENE_SUFFIXES and not have_bpy():
        raise UsageError(f"{source.name}: reading a {suffix} needs Blender's bpy module (or run under blender -b)")
    if suffix not in (*MOTION_SUFFIXES, *SCENE_SUFFIXES):
        raise UsageError(f"{source.name}: expected a .bvh, .amc, .fbx or .blend file (for ASF/AMC, pass the .amc)")
    if target.suffix.lower() in MOTION_SUFFIXES:
        return [(source, target)]
    return [(source, _in_folder(source, target, args.to))]


def _in_folder(source: Path, folder: Path, to: str | None) -> Path:
    suffix = f".{to}" if to else TARGETS[source.suffix.lower()]
    return folder / (source.stem + suffix)


def _from_blend(source: Path, target: Path, args: argparse.Namespace):
    """Write the armature's action of a .blend or an .fbx (Blender's FBX importer) as ``target``;
    returns (motion written, files)."""
    import bpy

    from ..addon.acclaim import armature_io as acclaim

    if source.suffix.lower() == ".fbx":
        _blend.disable_scripts()
        bpy.ops.wm.read_homefile(use_empty=True)
        obj = _blend.import_fbx(source, args.armature)
    else:
        _blend.open_untrusted(source)
        _blend.warn(_blend.python_in_file(), source.name)
        obj = _blend_armature(bpy, args.armature, source)
    if target.suffix.lower() == ".amc":
        asf = target.with_suffix(".asf")
        with _files.atomic(target, asf, guarded=[asf], force=args.force) as (temp, _):
            result = acclaim.export_armature(obj, temp, fps=args.fps)  # writes the .asf beside it
        return result.motion, [asf, target]
    motion = acclaim.armature_motion(obj, fps=args.fps).motion
    return motion, _files.save_motion(motion, target)


def _blend_armature(bpy, name: str | None, source: Path):
    if name:
        obj = bpy.data.objects.get(name)
        if obj is None or obj.type != "ARMATURE":
            raise ValueError(f"no armature called '{name}' in {source.name}")
        return obj
    animated = [o for o in bpy.data.objects if o.type == "ARMATURE" and o.animation_data and o.animation_data.action]
    active = bpy.context.view_layer.objects.active
    if active in animated:
        return active
    if len(animated) != 1:
        found = ", ".join(o.name for o in animated) or "none"
        raise ValueError(f"{source.name}: pick the armature with --armature (animated armatures: {found})")
    return animated[0]


def convert_one(source: Path, target: Path, args: argparse.Namespace) -> str:
    """Convert one file; returns a one-line report."""
    if source.suffix.lower() in SCENE_SUFFIXES:
        motion, written = _from_blend(source, target, args)
    else:
        motion = load_motion(source, asf=args.asf, fps=args.fps)
        written = _files.save_motion(motion, target, force=args.force)
    names = ", ".join(str(p) for p in written)
    return f"ok      {source} -> {names} ({motion.n_frames} frames, {motion.fps:g} fps)"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(script_args(sys.argv if argv is None else argv))
    jobs = plan(args)  # UsageError: exit 2
    failed, refused = [], False
    for source, target in jobs:
        try:
            print(convert_one(source, target, args), flush=True)
        except Exception as exc:  # one bad file must not stop a batch
            failed.append(source)
            refused |= isinstance(exc, UsageError)
            kind = "" if isinstance(exc, (ValueError, OSError, UsageError)) else f"{type(exc).__name__}: "
            text = " ".join(str(exc).split())
            print(f"FAILED  {source}: {kind}{text}", file=sys.stderr, flush=True)
    print(f"converted {len(jobs) - len(failed)} of {len(jobs)} file(s), {len(failed)} failed")
    for source in failed:
        print(f"  failed: {source}")
    return 2 if refused else 1 if failed else 0
