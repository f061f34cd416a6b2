"""Extract keyframes headless: a BVH, a .blend or .fbx armature, a folder of BVH files, or the demo clip.

    python scripts/extract_keyframes.py clip.bvh -o out/ --ratio 0.05 --report out/clip.json
    blender -b scene.blend -P scripts/extract_keyframes.py -- --armature Rig -o out/scene.blend --count 40
    python scripts/extract_keyframes.py captures/ -o out/ --max-error 0.5

With Blender (the bpy module or ``blender -b``) the result is a .blend holding the sparse
action, and the report includes the error of Blender's playback. Without bpy, BVH inputs
are processed by the core alone (use --bvh to write the rebuilt motion). An .fbx is read with
Blender's FBX importer (its animated armature, or --armature).

Exit status: 0 done, 1 an input or a write failed, 2 a bad argument (a value out of range, an
output that is an input: ``--force`` allows it, except ``--replace`` over the input .blend,
which would leave its action with only the keyframes: that needs ``--overwrite-input``).
Outputs are written atomically. A .blend input is opened with its Python disabled; registered
Text blocks and Python drivers are named in a warning and in the report (``python_not_run``),
and the output .blend gets the Text blocks unregistered (``--keep-scripts`` keeps them).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

from . import _arguments, _blend, _files, _keyframe_options
from ._arguments import UsageError, have_bpy, package, script_args


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = _arguments.Parser(prog="extract_keyframes.py", description=__doc__.split("\n")[0])
    p.add_argument("input", nargs="?", help="a .bvh, .fbx or .blend file, or a folder of .bvh files")
    p.add_argument("--demo", action="store_true", help="use the built-in procedural clip (walk, turn, jump)")
    p.add_argument(
        "--armature", help="armature object in the .blend (default: the active one, else the first animated one)"
    )
    p.add_argument("-o", "--output", required=True, help="output .blend (single input) or folder")
    _keyframe_options.add_arguments(p, method_default=None)
    p.add_argument(
        "--rotate-mode", default="NATIVE", choices=["NATIVE", "QUATERNION"], help="Blender BVH import rotation mode"
    )
    p.add_argument(
        "--replace", action="store_true", help="replace the keys of the action in place instead of adding a new action"
    )
    p.add_argument("--report", help="JSON report path (single input; default OUTPUT beside the .blend)")
    p.add_argument("--plot", help="PNG plot of the per-frame error with the keyframes marked (needs matplotlib)")
    p.add_argument("--bvh", action="store_true", help="also write the rebuilt motion as BVH")
    p.add_argument("--sheet", help="PNG contact sheet of the keyframe poses (single input; a summary beyond 24)")
    p.add_argument("--no-blender", action="store_true", help="core only, even when bpy is available")
    p.add_argument("--force", action="store_true", help="allow an output to replace an input file")
    p.add_argument("--overwrite-input", action="store_true",
                   help="with --replace: allow -o to be the input .blend (its action keeps only the keyframes)")  # fmt: skip
    p.add_argument("--keep-scripts", action="store_true",
                   help="keep registered Text blocks registered in the output .blend (never run here)")  # fmt: skip
    args = p.parse_args(argv)
    if args.bvh and args.replace:
        p.error("--bvh needs the original action; do not combine it with --replace")
    if not args.input and not args.demo and not (have_bpy() and _blend_loaded()):
        p.error("give an input file or folder, or --demo")
    return args


def _blend_loaded() -> bool:
    import bpy

    return bool(bpy.data.filepath)


def _plan(args: argparse.Namespace, inputs: list[str | None], use_blender: bool):
    """(source, .blend path, report path) per input, and whether it is a batch; checks that no
    output replaces an input (UsageError)."""
    out = Path(args.output)
    batch = len(inputs) > 1 or bool(args.input and Path(args.input).is_dir())
    jobs, outputs, reads = [], [], []
    for source in inputs:
        stem = "demo" if source is None else Path(source).stem
        folder = batch or out.suffix.lower() != ".blend"
        if folder:
            _files.ensure_folder(out)
        blend_path = out / f"{stem}.blend" if folder else out
        report_path = Path(args.report) if args.report and not batch else blend_path.with_suffix(".json")
        jobs.append((source, blend_path, report_path))
        read = bpy_filepath() if source == "" else source
        reads.append(read)
        outputs += [blend_path if use_blender else None, report_path]
        outputs.append(blend_path.with_name(blend_path.stem + "_keys.bvh") if args.bvh else None)
        if args.replace and use_blender and read and _files.same_file(blend_path, read) and not args.overwrite_input:
            raise UsageError(
                f"--replace with -o {blend_path} would replace the input's action by its keyframes in the file "
                "itself; write to another path, or pass --overwrite-input"
            )
    if args.sheet and batch:
        raise UsageError("--sheet draws one clip; with a folder, draw each with 'library sheet'")
    outputs.append(Path(args.plot) if args.plot and not batch else None)
    outputs.append(Path(args.sheet) if args.sheet else None)
    outputs.append(out / "summary.json" if batch else None)
    _files.check_outputs(outputs, reads, args.force or args.overwrite_input)
    return jobs, batch


def bpy_filepath() -> str:
    """The .blend Blender has open (``blender -b scene.blend -P …``), or ''."""
    if not have_bpy():
        return ""
    import bpy

    return bpy.data.filepath


def main(argv: list[str] | None = None) -> int:
    args = parse_args(script_args(argv))
    pkg = package()
    use_blender = have_bpy() and not args.no_blender
    explicit_method = args.method
    inputs = _inputs(args)
    jobs, batch = _plan(args, inputs, use_blender)
    out = Path(args.output)
    results, failures = [], 0
    for source, blend_path, report_path in jobs:
        stem = "demo" if source is None else Path(source).stem
        args.method = explicit_method  # the default may differ per file
        try:
            report = run_one(pkg, args, source, blend_path, use_blender)
            _files.write_json(report_path, report)
            if args.plot and not batch:
                write_plot(report, Path(args.plot))
        except Exception as exc:  # one bad file must not stop a batch
            failures += 1
            known = (ValueError, OSError, RuntimeError, ImportError, UsageError)
            detail = " ".join(str(exc).split()) if isinstance(exc, known) else traceback.format_exc()
            print(f"FAILED {detail}" if str(source) in detail else f"FAILED {source}: {detail}", file=sys.stderr)
            results.append({"input": str(source), "error": str(exc)})
            continue
        results.append(report)
        e = report["error"]
        line = f"{stem}: {kept_phrase(report)}, position mean {e['position_mean']:.4g} max {e['position_max']:.4g}"
        if "playback" in e:
            line += (
                f", Blender playback mean {e['playback']['position_mean']:.4g} max {e['playback']['position_max']:.4g}"
            )
        w = report["worst"]
        line += f", worst {w['bone']} {w['point']} at frame {w.get('scene_frame', w['frame']):g} ({w['error']:.4g})"
        a = e.get("playback", e)
        line += f", worst rotation {a['angle_worst_bone']} {a['angle_max']:.3g}°"
        print(line + f", {report['seconds']:.2f} s")
    if batch:
        return _files.finish_batch("extract_keyframes.py", out, results, failures)
    return 1 if failures else 0


def kept_phrase(report: dict) -> str:
    """What was kept: the hybrid's keys per channel (a mean over channels for a Max Error or Max Angle
    target) on its pose grid, or a whole-pose method's keys."""
    n, poses = report["frames"], len(report["keyframes"])
    per_channel = report["params"].get("keys_per_channel")
    if per_channel is None:
        return f"{poses}/{n} pose keys ({poses / n:.1%})"
    mean = " on average" if report["target"].keys() & {"max_error", "max_angle"} else ""
    return f"{per_channel:g}/{n} keys per channel{mean} ({per_channel / n:.1%}) on {poses} poses"


def _inputs(args: argparse.Namespace) -> list[str | None]:
    if args.demo:
        return [None]
    if not args.input:
        return [""]  # the .blend Blender already opened
    path = Path(args.input)
    if path.is_dir():
        files = sorted(str(p) for p in path.iterdir() if p.suffix.lower() == ".bvh")
        if not files:
            raise UsageError(f"no .bvh files in {path}")
        return files
    if not path.exists():
        raise UsageError(f"input not found: {path}")
    return [str(path)]


def run_one(pkg, args: argparse.Namespace, source: str | None, blend_path: Path, use_blender: bool) -> dict:
    """Process one input; returns the JSON report."""
    start = time.perf_counter()
    if use_blender:
        report = _run_blender(pkg, args, source, blend_path)
    else:
        report = _run_core(pkg, args, source, blend_path)
    report["seconds"] = time.perf_counter() - start
    return report


def _run_core(pkg, args: argparse.Namespace, source: str | None, blend_path: Path) -> dict:
    """The Blender path's extraction without Blender: a BVH becomes the channels Blender's BVH importer
    would write (:mod:`core.io.blender_bvh`), so every method, the hybrid included, keeps the same keys."""
    from ..core.channels import ChannelLayout, motion_from_values, pose_values
    from ..core.io.bvh import read_bvh, write_bvh
    from ..core.keyframes.channel_keys import extract_channels
    from ..core.synthetic import demo_clip

    if source and not source.lower().endswith(".bvh"):
        raise ValueError(f"{source}: without Blender only BVH input is supported (.fbx and .blend need Blender)")
    if source is None:  # the demo clip on its own skeleton, quaternion channels
        motion, layout = demo_clip(), ChannelLayout({})
        values = pose_values(motion, layout)
    else:
        from ..core.io.blender_bvh import blender_bvh_import

        capture = read_bvh(source)
        skeleton, modes, values = blender_bvh_import(capture, args.rotate_mode)
        layout = ChannelLayout(modes)
        motion = motion_from_values(skeleton, layout, values, capture.n_frames, capture.fps)
    options = _keyframe_options.options_of(args)
    args.method = options["method"]
    result = extract_channels(motion, layout, values, **options)
    shape = (motion.n_frames, motion.fps, motion.skeleton.n_joints)
    report = _report_base(source, shape, args.method, result.params, result.keys, result.error, result.per_frame_error,
                          _keyframe_options.target_of(args))  # fmt: skip
    if args.bvh:
        path = blend_path.with_name(blend_path.stem + "_keys.bvh")
        with _files.atomic(path) as (temp,):
            write_bvh(result.played, temp)
        report["outputs"] = {"bvh": str(path)}
    write_sheet(args, report, motion, result.keys)
    return report


def write_sheet(args: argparse.Namespace, report: dict, motion, keys, first_frame: int = 0) -> None:
    """The keyframe poses' contact sheet at ``--sheet`` (numbers in the clip's frames), atomically."""
    if not args.sheet:
        return
    from ..core.contact_sheet import contact_sheet, sheet_frames
    from ..core.io.png import png_bytes

    frames = sheet_frames(motion, keys)
    _files.write_bytes(args.sheet, png_bytes(contact_sheet(motion, frames, frame_numbers=frames + first_frame)))
    report.setdefault("outputs", {})["sheet"] = str(args.sheet)


WORST_FIELDS = ("worst_bone", "worst_point", "worst_frame")


def split_error(error: dict) -> tuple[dict, dict, dict]:
    """A core summary (:func:`core.keyframes.error.summarize`) as the report writes it: the figures,
    the per-bone max (bone → error) and the worst point {bone, point, frame (0-based), error}."""
    figures = {k: v for k, v in error.items() if k not in WORST_FIELDS and k != "per_bone_max"}
    worst = {"bone": error["worst_bone"], "point": error["worst_point"], "frame": int(error["worst_frame"]),
             "error": float(error["position_max"])}  # fmt: skip
    return figures, dict(error["per_bone_max"]), worst


def _report_base(source, shape: tuple[int, float, int], method, params, keys, error, per_frame, target) -> dict:
    """The report's common fields; shape is (frames, fps, joints). The errors are the measure of
    :mod:`core.keyframes.error` (every bone's head, tip and sides): ``error`` the figures (with
    ``angle_max``, the worst bone rotation error in degrees, its bone and frame), ``per_frame_error``
    the mean per frame, ``per_bone_error`` each bone's max, ``worst`` the worst point (frame 0-based,
    like ``keyframes``). ``target`` is the target as given (Max Error in scene units); ``count_means``
    says what a count is: keys on each channel for the hybrid, whole-pose keys otherwise."""
    frames, fps, joints = shape
    figures, per_bone, worst = split_error(error)
    return {
        "input": "demo (procedural walk, turn and jump)" if source is None else str(source),
        "frames": int(frames),
        "fps": float(fps),
        "joints": int(joints),
        "method": method,
        "target": {k: _keyframe_options.plain(v) for k, v in target.items()},
        "count_means": "keys per channel" if method == "hybrid" else "whole-pose keys",
        "params": {k: _keyframe_options.plain(v) for k, v in params.items()},
        "keyframes": [int(k) for k in keys],
        "error": figures,
        "per_frame_error": [float(x) for x in per_frame],
        "per_bone_error": per_bone,
        "worst": worst,
    }


def _load_armature(args: argparse.Namespace, source: str | None):
    import addon_utils
    import bpy

    from ..addon.common.armature import create_animated_armature
    from ..core.synthetic import demo_clip

    if source is None:
        bpy.ops.wm.read_homefile(use_empty=True)
        motion = demo_clip()
        scene = bpy.context.scene
        scene.render.fps, scene.render.fps_base = int(round(motion.fps)), 1.0
        scene.frame_start, scene.frame_end = 1, motion.n_frames
        return create_animated_armature(motion, "Demo", scene.collection)
    if source.lower().endswith(".bvh"):
        from ..core.io.bvh import read_bvh

        read_bvh(source)  # a malformed file fails here with its line and problem, not in the importer
        bpy.ops.wm.read_homefile(use_empty=True)
        addon_utils.enable("io_anim_bvh", default_set=True)
        bpy.ops.import_anim.bvh(
            filepath=source, rotate_mode=args.rotate_mode, update_scene_fps=True, update_scene_duration=True
        )
        return bpy.context.active_object
    if source.lower().endswith(".fbx"):  # Blender's FBX importer
        bpy.ops.wm.read_homefile(use_empty=True)
        return _blend.import_fbx(source, args.armature)
    if source.lower().endswith(".blend"):
        _blend.open_untrusted(source)
    elif source:
        raise ValueError(f"{source}: expected a .bvh, .fbx or .blend file")
    if args.armature:
        obj = bpy.data.objects.get(args.armature)
        if obj is None or obj.type != "ARMATURE":
            raise ValueError(f"no armature called '{args.armature}' in {source or bpy.data.filepath}")
        return obj
    active = bpy.context.view_layer.objects.active
    if active is not None and active.type == "ARMATURE" and active.animation_data and active.animation_data.action:
        return active
    found = [o for o in bpy.data.objects if o.type == "ARMATURE" and o.animation_data and o.animation_data.action]
    if not found:
        raise ValueError(f"no animated armature in {source or bpy.data.filepath}")
    return found[0]


def _run_blender(pkg, args: argparse.Namespace, source: str | None, blend_path: Path) -> dict:
    import bpy

    from ..addon.common.armature import scene_fps
    from ..addon.keyframes.extract_action import extract_on_armature

    _blend.disable_scripts()
    obj = _load_armature(args, source)
    python = _blend.python_in_file()
    _blend.warn(python, Path(source or bpy.data.filepath).name)
    options = _keyframe_options.options_of(args)
    args.method = options["method"]
    if "max_error" in options["target"]:  # scene units as Blender shows them → the armature's units
        from ..addon.common import units
        from ..addon.keyframes.operators import armature_distance

        scene_units = options["target"]["max_error"]
        options["target"] = {"max_error": armature_distance(scene_units / units.scale(bpy.context.scene), obj)}
    report = extract_on_armature(obj, replace=args.replace, **options)
    shape = (len(report.frames), scene_fps(bpy.context.scene), len(obj.data.bones))
    out = _report_base(source, shape, args.method, report.params, report.keys, report.error, report.per_frame_error,
                       _keyframe_options.target_of(args))  # fmt: skip
    if report.playback_error:  # what the user sees: Blender's playback, the worst point of that
        out["error"]["playback"], out["per_bone_playback_error"], out["worst"] = split_error(report.playback_error)
        out["worst"]["source"] = "playback"
        out["per_frame_playback_error"] = [float(x) for x in report.per_frame_playback_error]
    out["worst"]["scene_frame"] = float(report.frames[out["worst"]["frame"]])
    out.update(armature=obj.name, source_action=report.source_action, result_action=report.result_action,
               first_frame=int(report.frames[0]), blender=bpy.app.version_string)  # fmt: skip
    if python:
        out["python_not_run"] = python
    if not args.keep_scripts:
        unregistered = _blend.unregister_texts()
        if unregistered:
            out["unregistered_texts"] = unregistered
    _files.save_blend(blend_path)
    out["outputs"] = {"blend": str(blend_path)}
    if args.bvh or args.sheet:  # both from the source action's dense motion, read once
        from ..addon.common import animdata
        from ..addon.common.clip import read_clip

        dense = read_clip(obj, animdata.action_channels(obj, bpy.data.actions[report.source_action])).motion
    if args.bvh:
        from ..core.io.bvh import write_bvh
        from ..core.keyframes import reconstruct

        path = blend_path.with_name(blend_path.stem + "_keys.bvh")
        with _files.atomic(path) as (temp,):
            write_bvh(reconstruct(dense, report.keys), temp)
        out["outputs"]["bvh"] = str(path)
    if args.sheet:
        write_sheet(args, out, dense, report.keys, int(report.frames[0]))
    return out


def write_plot(report: dict, path: Path) -> None:
    """Per-frame mean position error (every bone's head, tip and sides), keyframes marked (matplotlib, headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = range(report["frames"])
    fig, ax = plt.subplots(figsize=(11, 4), dpi=120)
    ax.plot(frames, report["per_frame_error"], lw=1.2, label="core rebuild (slerp)")
    if "per_frame_playback_error" in report:
        ax.plot(frames, report["per_frame_playback_error"], lw=1.0, ls="--", label="Blender playback")
    for k in report["keyframes"]:
        ax.axvline(k, color="0.75", lw=0.6, zorder=0)
    keys = report["keyframes"]
    ax.plot(
        keys,
        [report["per_frame_error"][k] for k in keys],
        "o",
        ms=3.5,
        color="tab:red",
        label=f"keyframes ({len(keys)})",
    )
    e = report["error"]
    per_channel = report["params"].get("keys_per_channel")
    kept = (
        f"{per_channel}/{report['frames']} keys per channel on {len(keys)} poses"
        if per_channel
        else f"{len(keys)}/{report['frames']} keys"
    )
    ax.set_title(
        f"{Path(report['input']).name}: {kept}, {report['method']}, mean {e['position_mean']:.4g}, max {e['position_max']:.4g}"
    )
    ax.set_xlabel("frame (0-based)")
    ax.set_ylabel("mean error of bone heads, tips, sides (scene units)")
    ax.legend(loc="upper right")
    fig.tight_layout()
    with _files.atomic(path) as (temp,):
        fig.savefig(temp)
    plt.close(fig)
