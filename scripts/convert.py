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
rest are converted; the exit status is 1 when any file failed, 2 for usage errors.

Where Blender's ``bpy`` module is available, IN may also be a .blend file: the active action
of ``--armature`` (default: the active object when it is an animated armature, else the only
animated armature) is written the way File › Export › Acclaim does (armature space turned
from Z-up to Y-up, the import scale undone, ASF axes and dofs kept for armatures imported
from ASF); without ``--to`` or an output extension it becomes ASF/AMC; ``--fps`` overrides
the scene's frame rate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "scripts") not in sys.path:
    sys.path.append(str(ROOT / "scripts"))  # for _package

import _package  # noqa: E402

from core.io.convert import MOTION_SUFFIXES, load_motion, save_motion  # noqa: E402

TARGETS = {".bvh": ".amc", ".amc": ".bvh", ".blend": ".amc"}


def script_args(argv: list[str]) -> list[str]:
    """The script's own arguments: those after ``--`` when present (Blender passes its own first)."""
    return argv[argv.index("--") + 1 :] if "--" in argv else argv[1:]


def parse_args(args: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="convert.py", description="Convert BVH <-> ASF/AMC (files or folders).")
    parser.add_argument("input", type=Path, help="a .bvh or .amc file, or a folder of them")
    parser.add_argument("output", type=Path, help="output file (.bvh or .amc) or folder")
    parser.add_argument("--to", choices=["bvh", "amc"], help="output format for folders (default: the other one)")
    parser.add_argument("--asf", type=Path, help="skeleton for .amc input (default: found next to the .amc)")
    parser.add_argument("--fps", type=float, help="frame rate of AMC input (default 120); overrides a BVH's")
    parser.add_argument("--armature", help="armature object of a .blend input (default: the active or only one)")
    parsed = parser.parse_args(args)
    if parsed.fps is not None and not parsed.fps > 0:
        parser.error("--fps must be positive")
    return parsed


def plan(args: argparse.Namespace) -> list[tuple[Path, Path]]:
    """(input, output) pairs; raises ValueError for unusable arguments."""
    source, target = args.input, args.output
    if source.is_dir():
        inputs = sorted(p for p in source.iterdir() if p.is_file() and p.suffix.lower() in MOTION_SUFFIXES)
        if not inputs:
            raise ValueError(f"no .bvh or .amc files in {source}")
        if target.suffix.lower() in MOTION_SUFFIXES:
            raise ValueError(f"input is a folder, so the output must be a folder too, not {target}")
        return [(p, _in_folder(p, target, args.to)) for p in inputs]
    if not source.exists():
        raise ValueError(f"input not found: {source}")
    if source.suffix.lower() == ".blend" and not _package.have_bpy():
        raise ValueError(f"{source.name}: reading a .blend needs Blender's bpy module (or run under blender -b)")
    if source.suffix.lower() not in (*MOTION_SUFFIXES, ".blend"):
        raise ValueError(f"{source.name}: expected a .bvh, .amc or .blend file (for ASF/AMC, pass the .amc)")
    if target.suffix.lower() in MOTION_SUFFIXES:
        return [(source, target)]
    return [(source, _in_folder(source, target, args.to))]


def _in_folder(source: Path, folder: Path, to: str | None) -> Path:
    suffix = f".{to}" if to else TARGETS[source.suffix.lower()]
    return folder / (source.stem + suffix)


def _from_blend(source: Path, target: Path, args: argparse.Namespace):
    """Write the armature's action of a .blend as ``target``; returns (motion written, files)."""
    import bpy

    _package.load()
    from mocap_workbench.addon.acclaim import armature_io as acclaim
    from mocap_workbench.core.io.convert import save_motion as save

    bpy.ops.wm.open_mainfile(filepath=str(source.resolve()))
    obj = _blend_armature(bpy, args.armature, source)
    if target.suffix.lower() == ".amc":
        result = acclaim.export_armature(obj, target, fps=args.fps)
        return result.motion, [result.asf, result.amc]
    motion = acclaim.armature_motion(obj, fps=args.fps).motion
    return motion, save(motion, target)


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
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.suffix.lower() == ".blend":
        motion, written = _from_blend(source, target, args)
    else:
        motion = load_motion(source, asf=args.asf, fps=args.fps)
        written = save_motion(motion, target)
    names = ", ".join(str(p) for p in written)
    return f"ok      {source} -> {names} ({motion.n_frames} frames, {motion.fps:g} fps)"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(script_args(sys.argv if argv is None else argv))
    try:
        jobs = plan(args)
    except ValueError as exc:
        print(f"convert.py: error: {exc}", file=sys.stderr)
        return 2
    failed = []
    for source, target in jobs:
        try:
            print(convert_one(source, target, args), flush=True)
        except Exception as exc:  # one bad file must not stop a batch
            failed.append(source)
            kind = "" if isinstance(exc, (ValueError, OSError)) else f"{type(exc).__name__}: "
            print(f"FAILED  {source}: {kind}{exc}", file=sys.stderr, flush=True)
    print(f"converted {len(jobs) - len(failed)} of {len(jobs)} file(s), {len(failed)} failed")
    for source in failed:
        print(f"  failed: {source}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
