"""Retarget motion capture onto another skeleton headless: BVH/AMC or .blend armatures, one file or a folder.

    python scripts/retarget.py walk.bvh bandai.bvh -o out/walk_on_bandai.bvh
    python scripts/retarget.py walk.bvh rig.blend --target-armature Rig -o out/walk.blend --map rig_map.json
    python scripts/retarget.py captures/ rig.blend --target-armature Rig -o out/ --in-place
    python scripts/retarget.py walk.bvh tall.bvh -o out/tall.bvh --physics --target-mass 90 --target-height 1.99 --plot out/tall.png
    blender -b -P scripts/retarget.py -- walk.bvh rig.blend --target-armature Rig -o out/walk.blend

SOURCE: a .bvh or .amc file (its ASF found beside it), an .fbx or a .blend with an animated
armature (--source-armature), or a folder of .bvh/.amc/.fbx files; several SOURCEs (files or
folders) make one batch. TARGET: a .blend or .fbx
armature (--target-armature) or a .bvh/.asf file whose skeleton is used. FBX files are read with
Blender's FBX importer (needs Blender). OUT: a .blend (needs Blender:
the bpy module or ``blender -b``; the target gets a new action keyed on every frame) or a .bvh
(plain Python when both inputs are files, else through Blender); a folder for a batch (--format).
Each output gets a JSON report beside it; a batch also writes summary.json and exits with 1
if any file failed.

--physics makes the result physically plausible for the target's body (core/physics/apply.py,
the operator's Physics section): balance, torque limits and momentum in flight, each with a
--no-… switch; masses in kg, --target-height in metres (default: measured, the skeleton's
standing height in file or scene units taken as metres — × the scene's Unit Scale in a .blend),
--stiffness (1: default filter noise; higher keeps closer to the retargeted motion). The report
gets the figures under "physics"; --plot writes the ZMP/torque plot (needs matplotlib; in a
batch PATH is a folder for <name>_physics.png).

--map takes a bone map preset: the JSON of --save-map (or of Save Bone Map in Blender) or a
Blender preset (.py, e.g. a naming convention's shipped with the extension), matched to each
source and the target by name as the Retarget panel's presets are (core/retarget/presets.py).
The bone map (automatic or --map) must pair the core body — hips, spine, head, both upper and
lower legs, feet, upper arms, forearms and hands — and never a left bone with a right one or a
leg with an arm; otherwise the file fails with a message naming what is missing or crossed
(--force-partial retargets a partial map anyway).

Exit status: 0 done, 1 an input or a write failed (in a batch: any file), 2 a bad argument (a
value that is not finite or out of range, an output that is an input — ``--force`` allows it —
-o the target .blend, which would also receive the imported source armature, or --physics onto a
.bvh/.asf target whose skeleton is no whole body: pelvis and legs only, no trunk or head). Outputs are
written atomically. .blend inputs are opened and appended with their Python disabled; registered
Text blocks and Python drivers are named in a warning and in the report (``python_not_run``),
and an output .blend gets the Text blocks unregistered (``--keep-scripts`` keeps them).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

from . import _arguments as A
from . import _blend, _files, _keyframe_options
from ._arguments import UsageError, have_bpy, script_args

MOTION_SUFFIXES = (".bvh", ".amc")
BLENDER_SUFFIXES = (".fbx",)  # read through Blender's importer


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = A.Parser(prog="retarget.py", description=__doc__.split("\n")[0])
    p.add_argument("source", nargs="+", metavar="SOURCE",
                   help="a .bvh/.amc/.fbx file, a .blend file, or a folder of .bvh/.amc/.fbx files; several make a batch")  # fmt: skip
    p.add_argument("target", help="a .blend or .fbx file (with --target-armature) or a .bvh/.asf skeleton")
    p.add_argument("-o", "--output", required=True, help="output .blend or .bvh (single source) or folder (batch)")
    p.add_argument("--source-armature", help="armature object in the source .blend (default: the animated one)")
    p.add_argument("--target-armature", help="armature object in the target .blend (default: the only armature)")
    p.add_argument("--map", help="bone map preset (.json or a Blender preset .py); default automatic")
    p.add_argument("--save-map", help="write the bone map used (single source) as a JSON preset")
    p.add_argument("--scale", type=A.positive, help="root motion scale (default: leg-length ratio)")
    p.add_argument("--in-place", action="store_true", help="remove the horizontal root travel")
    p.add_argument("--root-motion", action="store_true",
                   help="carry the travel and heading on the bone above the pelvis, at the floor (game rigs)")  # fmt: skip
    p.add_argument("--on-floor", action="store_true", help="move the root so the feet stand on the floor")
    p.add_argument("--floor-level", type=A.finite, default=0.0, help="floor height for --on-floor (target units)")
    p.add_argument("--no-plant", action="store_true", help="do not pin the source's foot contacts with IK")
    p.add_argument("--rigid-twist", action="store_true", help="keep unmapped in-between bones rigid")
    p.add_argument("--force-partial", action="store_true",
                   help="retarget even when the bone map leaves part of the core body unmapped")  # fmt: skip
    p.add_argument("--format", choices=["blend", "bvh"], help="output format of a batch (default blend with Blender)")
    p.add_argument(
        "--rotate-mode", default="NATIVE", choices=["NATIVE", "QUATERNION"], help="Blender BVH import rotation mode"
    )
    p.add_argument("--report", help="JSON report path (single source; default beside the output)")
    p.add_argument("--force", action="store_true", help="allow an output to replace an input file")
    p.add_argument("--keep-scripts", action="store_true",
                   help="keep registered Text blocks registered in the output .blend (never run here)")  # fmt: skip
    _keyframe_options.add_arguments(p, "extract-", method_default=None)
    g = p.add_argument_group("physics")
    g.add_argument("--physics", action="store_true", help="make the result physically plausible for the target's body")
    g.add_argument("--target-mass", type=A.positive, default=70.0, help="target body mass in kg (default 70)")
    g.add_argument("--target-height", type=A.positive, help="target standing height in m (default: measured)")
    g.add_argument("--source-mass", type=A.positive, default=60.0, help="performer's body mass in kg (default 60)")
    g.add_argument("--body-model", choices=["male", "female"], default="male", help="de Leva's column (default male)")
    g.add_argument("--no-balance", action="store_true", help="do not keep the ZMP inside the support polygon")
    g.add_argument("--no-torque", action="store_true", help="do not keep joint torques within their limits")
    g.add_argument("--no-momentum", action="store_true", help="do not correct the CoM path and momentum in flight")
    g.add_argument("--stiffness", type=A.positive, default=1.0, help="how firmly the result holds to the retargeted motion (default 1)")  # fmt: skip
    g.add_argument("--plot", help="PNG of the physics report (ZMP over the support polygons, torques vs limits)")
    return p.parse_args(argv)


def physics_of(args: argparse.Namespace):
    """The core's PhysicsSettings from the arguments, or None without --physics."""
    if not args.physics:
        return None
    from ..core.physics.apply import PhysicsSettings
    from ..core.physics.errors import PhysicsError

    try:
        return PhysicsSettings(target_mass=args.target_mass, target_height=args.target_height,
                               source_mass=args.source_mass, sex=args.body_model, balance=not args.no_balance,
                               torques=not args.no_torque, momentum=not args.no_momentum,
                               stiffness=args.stiffness)  # fmt: skip
    except PhysicsError as exc:
        raise UsageError(f"--physics: {exc}") from None


def check_physics_target(args: argparse.Namespace) -> None:
    """UsageError (exit 2, nothing written) when --physics cannot run on a .bvh/.asf target's skeleton: a body
    the physics' body model refuses (core.physics.body.check_whole: a rig of pelvis and legs only). A target that
    cannot be read is reported per file; .blend and .fbx targets are checked when read (exit 1)."""
    if args.physics_settings is None or not args.target.lower().endswith((".bvh", ".asf")):
        return
    from ..core.physics.body import body_model
    from ..core.physics.errors import PhysicsError

    try:
        skeleton, up = _target_skeleton(args.target)
        body_model(skeleton, args.physics_settings.target_mass, sex=args.physics_settings.sex, up=up)
    except PhysicsError as exc:
        raise UsageError(f"--physics: target {Path(args.target).name}: {exc}") from None
    except (OSError, ValueError):
        return


def options_of(args: argparse.Namespace):
    from ..core.retarget import RetargetOptions

    return RetargetOptions(scale=args.scale, in_place=args.in_place, on_floor=args.on_floor,
                           floor_level=args.floor_level, plant_feet=not args.no_plant,
                           distribute_twist=not args.rigid_twist, root_motion=args.root_motion,
                           allow_partial=args.force_partial)  # fmt: skip


def _plan(args: argparse.Namespace, sources: list[str], out: Path, batch: bool, suffix: str) -> list[tuple]:
    """(source, output, report, plot) per source; UsageError when an output would replace an input
    (unless --force) or the target .blend (always: it would also receive the source armature)."""
    from ..core.io.convert import find_asf

    jobs, outputs = [], [args.save_map if not batch else None, out / "summary.json" if batch else None]
    reads = [*sources, args.target, args.map]
    reads += [_asf_of(s, find_asf) for s in sources if s.lower().endswith(".amc")]
    if batch:
        _files.ensure_folder(out)
    for source in sources:
        path = out / f"{Path(source).stem}{suffix}" if batch else out
        report_path = Path(args.report) if args.report and not batch else path.with_suffix(".json")
        plot = None
        if args.plot:
            plot = Path(args.plot) / f"{Path(source).stem}_physics.png" if batch else Path(args.plot)
        if args.target.lower().endswith(".blend") and _files.same_file(path, args.target):
            raise UsageError(
                f"-o {path} is the target .blend: the result would also save the imported source armature "
                "into the rig's file; write to another path"
            )
        jobs.append((source, path, report_path, plot))
        outputs += [path, report_path, plot]
    _files.check_outputs(outputs, reads, args.force)
    return jobs


def _asf_of(amc: str, find_asf) -> str | None:
    try:
        return str(find_asf(amc))
    except OSError:
        return None  # reported when the file is read


def main(argv: list[str] | None = None) -> int:
    args = parse_args(script_args(argv))
    args.physics_settings = physics_of(args)
    check_physics_target(args)
    sources, out = _sources(args), Path(args.output)
    batch = len(args.source) > 1 or Path(args.source[0]).is_dir()
    suffix = _output_suffix(args, out, batch)
    try:
        preset = _load_map(args.map)  # before any output (or its folder) is made
    except ValueError as exc:
        return A.fail("retarget.py", exc, 1)
    jobs = _plan(args, sources, out, batch, suffix)
    results, failures = [], 0
    for source, path, report_path, plot in jobs:
        try:
            report = run_one(args, source, path, preset, plot)
            _files.write_json(report_path, report)
            if args.save_map and not batch:
                from ..core.retarget import save_preset

                with _files.atomic(args.save_map) as (temp,):
                    save_preset(temp, report["mapping"], source=str(source), target=str(args.target))
        except Exception as exc:  # one bad file must not stop a batch
            failures += 1
            known = (ValueError, OSError, RuntimeError, UsageError)
            detail = " ".join(str(exc).split()) if isinstance(exc, known) else traceback.format_exc()
            if type(exc).__name__ == "MappingError" and "unmapped" in detail:
                detail += " (--force-partial retargets anyway)"
            print(f"FAILED {detail}" if str(source) in detail else f"FAILED {source}: {detail}", file=sys.stderr)
            results.append({"input": str(source), "error": str(exc)})
            continue
        results.append(report)
        print(_line(report))
        for note in report["notes"]:
            print(f"warning: {Path(source).name}: {note}", file=sys.stderr)
    if batch:
        return _files.finish_batch("retarget.py", out, results, failures)
    return 1 if failures else 0


def _line(report: dict) -> str:
    f = report["figures"]
    text = (f"{Path(report['input']).name} → {Path(report['output']).name}: {report['frames']} frames, "
            f"{report['mapped_bones']} bones mapped, scale {report['scale']:.4g}, "
            f"position error {f['position_error_mean_h']:.2%} of height")  # fmt: skip
    if "skating_before" in f:
        after = f"{f['skating_after']:.3g}" if f["skating_after"] > 1e-9 else "0"
        text += f", foot skating {f['skating_before']:.3g} → {after} per s"
    if "physics" in report:
        from ..core.physics.apply import summary

        text += f", {summary(report['physics'])}"
    return text + f", {report['seconds']:.2f} s"


def _sources(args: argparse.Namespace) -> list[str]:
    """The source files: each SOURCE file, and the .bvh/.amc/.fbx files of each SOURCE folder."""
    sources = []
    for given in args.source:
        path = Path(given)
        if path.is_dir():
            files = sorted(str(p) for p in path.iterdir() if p.suffix.lower() in (*MOTION_SUFFIXES, *BLENDER_SUFFIXES))
            if not files:
                raise UsageError(f"no .bvh, .amc or .fbx files in {path}")
            sources += files
        elif not path.exists():
            raise UsageError(f"source not found: {path}")
        elif path.suffix.lower() not in (*MOTION_SUFFIXES, *BLENDER_SUFFIXES, ".blend"):
            raise UsageError(f"{path}: expected a .bvh, .amc, .fbx or .blend source (or a folder of them)")
        else:
            sources.append(str(path))
    if not Path(args.target).exists():
        raise UsageError(f"target not found: {args.target}")
    stems = [Path(s).stem.casefold() for s in sources]  # one output file where case does not count
    twice = sorted({Path(s).stem for s, k in zip(sources, stems) if stems.count(k) > 1})
    if len(sources) > 1 and twice:
        raise UsageError(f"two sources are named {twice[0]!r}: their outputs would be the same file")
    return sources


def _output_suffix(args: argparse.Namespace, out: Path, batch: bool) -> str:
    if batch:
        return "." + (args.format or ("blend" if have_bpy() else "bvh"))
    if out.suffix.lower() not in (".blend", ".bvh"):
        raise UsageError(f"output must be a .blend or .bvh file (or a folder for a batch), got {out}")
    return out.suffix.lower()


def _load_map(path: str | None) -> dict | None:
    """The --map preset's document (core/retarget/presets.py), or None."""
    if not path:
        return None
    from ..core.retarget.presets import read_preset

    return read_preset(path)  # ValueError naming the file


def _resolved(preset: dict | None, source, target, notes: list[str]) -> dict | None:
    """The --map preset matched to a source and target skeleton (None: automatic); names it does not
    find are noted."""
    if preset is None:
        return None
    from ..core.retarget.presets import resolve_preset

    mapping, missing = resolve_preset(preset, source, target)
    if missing:
        notes.append(f"{len(missing)} bones of the bone map are not in these skeletons: {', '.join(missing[:5])}")
    return mapping


def _files_only(source: str, target: str) -> bool:
    return Path(source).suffix.lower() in MOTION_SUFFIXES and Path(target).suffix.lower() in (".bvh", ".asf")


def run_one(args: argparse.Namespace, source: str, out: Path, preset: dict | None, plot: Path | None = None) -> dict:
    """Retarget one source (preset: the --map preset's document); returns the JSON report."""
    start = time.perf_counter()
    if out.suffix == ".bvh" and _files_only(source, args.target):
        report, series = _run_core(args, source, out, preset)
    elif have_bpy():
        report, series = _run_blender(args, source, out, preset)
    else:
        raise ValueError(f"{source}: .blend or .fbx input or output needs Blender (the bpy module or blender -b)")
    if series and plot is not None:
        _plot(report, series, plot)
    report["seconds"] = time.perf_counter() - start
    return report


def _plot(report: dict, series: dict, path: Path) -> None:
    """The physics report's plot at ``path``, or a note (and a warning) when matplotlib is missing."""
    from ..core.physics import plot

    if not plot.available():
        note = f"no plot: {plot.MISSING} (the figures are in the report)"
        report["notes"].append(note)
        print(f"warning: {note}", file=sys.stderr)
        return
    title = f"Physics Report – {Path(report['input']).stem} on {Path(report['target']).stem}"
    with _files.atomic(path) as (temp,):
        plot.plot_report(temp, title, series["before"], series["after"])
    report["physics_plot"] = str(path)


def _target_skeleton(path: str):
    """A target file's skeleton and the up axis of its space (from its motion when it has one)."""
    from ..core.io.bvh import read_bvh
    from ..core.io.convert import load_asf_skeleton
    from ..core.limbs import detect_up

    if path.lower().endswith(".asf"):
        return load_asf_skeleton(path), None
    motion = read_bvh(path)
    positions = motion.world_positions()[:: max(1, motion.n_frames // 50)]
    return motion.skeleton, detect_up(motion.skeleton, positions)


def _run_core(args: argparse.Namespace, source: str, out: Path, preset: dict | None) -> dict:
    from ..core.io.bvh import write_bvh
    from ..core.io.convert import load_motion
    from ..core.retarget import retarget, retarget_metrics

    motion = load_motion(source)
    skeleton, up = _target_skeleton(args.target)
    notes: list[str] = []
    mapping = _resolved(preset, motion.skeleton, skeleton, notes)
    result = retarget(motion, skeleton, mapping, options_of(args), target_up=up)
    result.notes[:0] = notes
    extra, series = {}, {}
    if args.physics_settings is not None:
        from ..core.physics.apply import apply_physics

        target_unit, source_unit = (
            file_unit(skeleton, result.up, result.notes, "target"),
            file_unit(motion.skeleton, up_of(motion), result.notes, "source"),
        )
        outcome = apply_physics(result.motion, args.physics_settings, up=result.up, unit=target_unit or 1.0,
                                source=motion, source_unit=source_unit, labels=result.target_labels)  # fmt: skip
        result.motion = outcome.motion
        result.notes.extend(outcome.notes)
        extra["physics"], series = outcome.figures, outcome.series
    figures = retarget_metrics(motion, result)
    written = result.motion
    if _keyframe_options.given(args, "extract-"):  # the keys a quaternion rig would get; the BVH holds what they play
        from ..core.channels import ChannelLayout, pose_values
        from ..core.keyframes.channel_keys import extract_channels

        layout = ChannelLayout({})
        keys = extract_channels(
            written, layout, pose_values(written, layout), **_keyframe_options.options_of(args, "extract-")
        )
        extra["extraction"] = _extraction(
            keys.keys, keys.params, keys.error, _keyframe_options.options_of(args, "extract-")
        )
        written = keys.played
    with _files.atomic(out) as (temp,):
        write_bvh(written, temp)
    report = _report(source, args.target, out, motion.n_frames, motion.fps, result.mapping, result.scale, figures,
                     result.notes, **extra)  # fmt: skip
    return report, series


def up_of(motion):
    """The up axis of a motion's space (detected on its poses)."""
    from ..core.limbs import detect_up

    return detect_up(motion.skeleton, motion.world_positions()[:: max(1, motion.n_frames // 50)])


def file_unit(skeleton, up, notes: list[str], what: str) -> float | None:
    """Metres per unit of a skeleton read from a file (files carry no unit): the unit that makes its
    standing height human-sized (core.physics.units), noted in ``notes``; None when none does."""
    from ..core.limbs import standing_height
    from ..core.physics.units import likely_unit

    height = standing_height(skeleton, up)
    found = likely_unit(height)
    if found is None:
        notes.append(f"{what} units unknown: its standing height ({height:.3g} units) is human-sized in no unit")
        return None
    metres, name = found
    notes.append(f"{what} file read in {name} (its standing height is then {height * metres:.3g} m)")
    return metres


def _extraction(keys, params, error, options: dict) -> dict:
    """The report's ``extraction`` part: method, target, pose keys (0-based), params, error of what the keys play."""
    return {"method": options["method"], "target": options["target"], "keyframes": [int(k) for k in keys],
            "params": {k: _keyframe_options.plain(v) for k, v in params.items()},
            "error": _keyframe_options.plain(dict(error))}  # fmt: skip


def _report(source, target, out, frames, fps, mapping, scale, figures, notes, **extra) -> dict:
    return {"input": str(source), "target": str(target), "output": str(out), "frames": int(frames),
            "fps": float(fps), "mapped_bones": len(mapping), "scale": float(scale), "mapping": dict(mapping),
            "figures": {k: float(v) for k, v in figures.items()}, "notes": list(notes), **extra}  # fmt: skip


def _armature_in(path: str, name: str | None, animated: bool):
    """An armature object of the open file: ``name``, else the only (animated) one."""
    import bpy

    if name:
        obj = bpy.data.objects.get(name)
        if obj is None or obj.type != "ARMATURE":
            raise ValueError(f"no armature called '{name}' in {path}")
        return obj
    found = [o for o in bpy.data.objects if o.type == "ARMATURE" and (not animated or _has_action(o))]
    if len(found) != 1:
        what = "animated armature" if animated else "armature"
        raise ValueError(f"{path}: {len(found)} {what}s found; name one with --{'source' if animated else 'target'}-armature")  # fmt: skip
    return found[0]


def _has_action(obj) -> bool:
    return obj.animation_data is not None and obj.animation_data.action is not None


def _append_armature(path: str, name: str | None):
    """Append the (named, else the only animated) armature object of another .blend file."""
    import bpy

    _blend.disable_scripts()  # appended drivers are evaluated with the open file's auto-run setting
    with bpy.data.libraries.load(path, link=False) as (data_from, data_to):
        data_to.objects = [n for n in data_from.objects if not name or n == name]
    objects = [o for o in data_to.objects if o is not None and o.type == "ARMATURE"]
    picked = [o for o in objects if _has_action(o)] if not name else objects
    if len(picked) != 1:
        raise ValueError(f"{path}: {len(picked)} animated armatures found; name one with --source-armature")
    bpy.context.scene.collection.objects.link(picked[0])
    return picked[0]


def _import_bvh(path: str, rotate_mode: str):
    import addon_utils
    import bpy

    from ..core.io.bvh import read_bvh

    read_bvh(path)  # a malformed file fails here with its line and problem, not in the importer
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=path, rotate_mode=rotate_mode, update_scene_fps=True,
                            update_scene_duration=True)  # fmt: skip
    return bpy.context.active_object


def _load_target(args: argparse.Namespace):
    import bpy

    target = args.target
    _blend.disable_scripts()
    if target.lower().endswith(".blend"):
        _blend.open_untrusted(target)
        return _armature_in(target, args.target_armature, animated=False)
    bpy.ops.wm.read_homefile(use_empty=True)
    if target.lower().endswith(".bvh"):
        return _import_bvh(str(Path(target).resolve()), args.rotate_mode)
    if target.lower().endswith(".asf"):
        from ..addon.common.armature import build_armature
        from ..core.io.convert import load_asf_skeleton

        obj = build_armature(load_asf_skeleton(target), Path(target).stem, bpy.context.scene.collection)
        obj.rotation_euler = (1.5707963267948966, 0.0, 0.0)  # Y-up file in Blender's Z-up world
        return obj
    if target.lower().endswith(".fbx"):
        return _blend.import_fbx(target, args.target_armature, False, "--target-armature")
    raise ValueError(f"{target}: expected a .blend, .fbx, .bvh or .asf target")


def _load_source(args: argparse.Namespace, source: str):
    import bpy

    path = str(Path(source).resolve())
    if source.lower().endswith(".bvh"):
        return _import_bvh(path, args.rotate_mode)
    if source.lower().endswith(".amc"):
        from ..addon.common.armature import create_animated_armature
        from ..core.io.convert import load_motion

        motion = load_motion(path)
        scene = bpy.context.scene
        scene.render.fps, scene.render.fps_base = round(motion.fps), 1.0
        return create_animated_armature(motion, Path(source).stem, scene.collection)
    if source.lower().endswith(".blend"):
        if Path(source).resolve() == Path(args.target).resolve():
            return _armature_in(source, args.source_armature, animated=True)
        return _append_armature(path, args.source_armature)
    if source.lower().endswith(".fbx"):
        return _blend.import_fbx(path, args.source_armature, True, "--source-armature")
    raise ValueError(f"{source}: expected a .bvh, .amc, .fbx or .blend source")


def _blender_units(args: argparse.Namespace, source: str, source_obj, target) -> tuple[dict, list[str]]:
    """Metres per unit of armatures made from files (.bvh, .amc, .asf: from their size, see
    :func:`file_unit`), for retarget_armatures; those from a .blend keep the scene's and object's."""
    from ..addon.common.armature import skeleton_from_armature
    from ..addon.common.spaces import vertical

    units, notes = {}, []
    for key, path, obj, what in (("source_unit", source, source_obj, "source"),
                                 ("target_unit", args.target, target, "target")):  # fmt: skip
        if not path.lower().endswith((".blend", ".fbx")):  # an FBX's armature has its units in its scale
            metres = file_unit(skeleton_from_armature(obj), vertical(obj), notes, what)
            if metres is not None:
                units[key] = metres  # the armature's units are the file's
    return units, notes


def _run_blender(args: argparse.Namespace, source: str, out: Path, preset: dict | None) -> dict:
    import bpy

    from ..addon.common.armature import scene_fps
    from ..addon.retarget.retarget_action import retarget_armatures

    target = _load_target(args)
    source_obj = _load_source(args, source)
    python = _blend.python_in_file()
    blends = [Path(p).name for p in (source, args.target) if p.lower().endswith(".blend")]
    _blend.warn(python, " and ".join(dict.fromkeys(blends)) or "input")
    extract = _keyframe_options.options_of(args, "extract-") if _keyframe_options.given(args, "extract-") else None
    units, notes = _blender_units(args, source, source_obj, target) if args.physics_settings else ({}, [])
    if preset is not None:
        from ..addon.common.armature import skeleton_from_armature
        from ..addon.retarget.retarget_action import target_skeleton  # a Rigify rig: its body

        mapping = _resolved(preset, skeleton_from_armature(source_obj), target_skeleton(target), notes)
    else:
        mapping = None
    report = retarget_armatures(source_obj, target, mapping, options_of(args), extract,
                                physics=args.physics_settings, **units)  # fmt: skip
    report.notes[:0] = notes
    if out.suffix == ".bvh":
        from ..addon.common.clip import read_clip
        from ..core.io.bvh import write_bvh

        with _files.atomic(out) as (temp,):
            write_bvh(read_clip(target).motion, temp)
    extra = {"physics": report.physics} if report.physics else {}
    if python:
        extra["python_not_run"] = python
    if out.suffix != ".bvh":
        if not args.keep_scripts and (unregistered := _blend.unregister_texts()):
            extra["unregistered_texts"] = unregistered
        _files.save_blend(out)
    if report.extraction is not None:
        e = report.extraction
        extra["extraction"] = _extraction(e.keys, e.params, e.error, extract)
        extra["extraction"]["playback_error"] = _keyframe_options.plain(dict(e.playback_error))
    out_report = _report(source, args.target, out, len(report.frames), scene_fps(bpy.context.scene), report.mapping,
                         report.scale, report.figures, report.notes, armature=target.name,
                         source_armature=source_obj.name, result_action=report.result_action,
                         blender=bpy.app.version_string, **extra)  # fmt: skip
    return out_report, report.physics_series
