"""Extract keyframes headless: a BVH, a .blend armature, a folder of BVH files, or the demo clip.

    python scripts/extract_keyframes.py clip.bvh -o out/ --ratio 0.05 --report out/clip.json
    blender -b scene.blend -P scripts/extract_keyframes.py -- --armature Rig -o out/scene.blend --count 40
    python scripts/extract_keyframes.py captures/ -o out/ --max-error 0.5

With Blender (the bpy module or ``blender -b``) the result is a .blend holding the sparse
action, and the report includes the error of Blender's playback. Without bpy, BVH inputs
are processed by the core alone (use --bvh to write the rebuilt motion).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="extract_keyframes.py", description=__doc__.split("\n")[0])
    p.add_argument("input", nargs="?", help="a .bvh file, a .blend file, or a folder of .bvh files")
    p.add_argument("--demo", action="store_true", help="use the built-in procedural clip (walk, turn, jump)")
    p.add_argument(
        "--armature", help="armature object in the .blend (default: the active one, else the first animated one)"
    )
    p.add_argument("-o", "--output", required=True, help="output .blend (single input) or folder")
    p.add_argument(
        "--method",
        default=None,
        help="hybrid (Blender only), optimal, activity, simplify, threshold or uniform "
        "(default: hybrid with Blender; without it optimal, or simplify beyond 5,000 frames)",
    )
    p.add_argument(
        "--grid", type=float, default=4.0, help="hybrid: whole-pose keys per key kept on each channel (default 4)"
    )
    p.add_argument(
        "--linear", action="store_true", help="write LINEAR keys instead of Bezier keys fitted to the slerp rebuild"
    )
    target = p.add_mutually_exclusive_group()
    target.add_argument("--count", type=int, help="exact number of keyframes")
    target.add_argument("--ratio", type=float, help="share of frames to keep, 0-1 (default 0.05)")
    target.add_argument("--max-error", type=float, help="largest joint position error allowed (scene units)")
    target.add_argument("--threshold", type=float, help="the threshold rule's pose distance δ")
    p.add_argument(
        "--weights", default="HIERARCHY", choices=["HIERARCHY", "UNIFORM", "MAIN"], help="joint weight preset"
    )
    p.add_argument(
        "--rotate-mode", default="NATIVE", choices=["NATIVE", "QUATERNION"], help="Blender BVH import rotation mode"
    )
    p.add_argument(
        "--replace", action="store_true", help="replace the keys of the action in place instead of adding a new action"
    )
    p.add_argument("--report", help="JSON report path (single input; default OUTPUT beside the .blend)")
    p.add_argument("--plot", help="PNG plot of the per-frame error with the keyframes marked (needs matplotlib)")
    p.add_argument("--bvh", action="store_true", help="also write the rebuilt motion as BVH")
    p.add_argument("--no-blender", action="store_true", help="core only, even when bpy is available")
    args = p.parse_args(argv)
    if args.bvh and args.replace:
        p.error("--bvh needs the original action; do not combine it with --replace")
    if not args.input and not args.demo and not (_package.have_bpy() and _blend_loaded()):
        p.error("give an input file or folder, or --demo")
    return args


def _blend_loaded() -> bool:
    import bpy

    return bool(bpy.data.filepath)


CORE_OPTIMAL_LIMIT = 5000  # frames; the exact optimum's tables grow with the clip


def target_of(args: argparse.Namespace) -> dict:
    for key in ("count", "ratio", "max_error", "threshold"):
        if getattr(args, key) is not None:
            return {key: getattr(args, key)}
    return {"ratio": 0.05}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(_package.script_args(argv))
    pkg = _package.load()
    use_blender = _package.have_bpy() and not args.no_blender
    explicit_method = args.method
    inputs = _inputs(args)
    out = Path(args.output)
    batch = len(inputs) > 1 or (args.input and Path(args.input).is_dir())
    results, failures = [], 0
    for source in inputs:
        stem = "demo" if source is None else Path(source).stem
        if batch or out.suffix.lower() != ".blend":
            out.mkdir(parents=True, exist_ok=True)
            blend_path = out / f"{stem}.blend"
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            blend_path = out
        report_path = Path(args.report) if args.report and not batch else blend_path.with_suffix(".json")
        args.method = explicit_method  # the default may differ per file
        try:
            report = run_one(pkg, args, source, blend_path, use_blender)
        except Exception as exc:  # one bad file must not stop a batch
            failures += 1
            detail = str(exc) if isinstance(exc, (ValueError, OSError, RuntimeError)) else traceback.format_exc()
            print(f"FAILED {detail}" if str(source) in detail else f"FAILED {source}: {detail}", file=sys.stderr)
            results.append({"input": str(source), "error": str(exc)})
            continue
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(report, indent=2))
        if args.plot and not batch:
            write_plot(report, Path(args.plot))
        results.append(report)
        e = report["error"]
        kept = report["params"].get("keys_per_channel", len(report["keyframes"]))
        line = f"{stem}: {kept}/{report['frames']} keys per channel ({kept / report['frames']:.1%}) on {len(report['keyframes'])} poses, position mean {e['position_mean']:.4g} max {e['position_max']:.4g}"
        if "playback" in e:
            line += (
                f", Blender playback mean {e['playback']['position_mean']:.4g} max {e['playback']['position_max']:.4g}"
            )
        print(line + f", {report['seconds']:.2f} s")
    if batch:
        summary = {"processed": len(results) - failures, "failed": failures, "results": results}
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
        print(
            f"Processed {len(results) - failures} of {len(results)} files, {failures} failed; summary in {out / 'summary.json'}"
        )
    return 1 if failures else 0


def _inputs(args: argparse.Namespace) -> list[str | None]:
    if args.demo:
        return [None]
    if not args.input:
        return [""]  # the .blend Blender already opened
    path = Path(args.input)
    if path.is_dir():
        files = sorted(str(p) for p in path.iterdir() if p.suffix.lower() == ".bvh")
        if not files:
            raise SystemExit(f"no .bvh files in {path}")
        return files
    if not path.exists():
        raise SystemExit(f"input not found: {path}")
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
    from mocap_workbench.core.io.bvh import read_bvh, write_bvh
    from mocap_workbench.core.keyframes import PoseMetric, evaluate, extract_keyframes, reconstruct
    from mocap_workbench.core.synthetic import demo_clip

    if source and not source.lower().endswith(".bvh"):
        raise ValueError(f"{source}: without Blender only BVH input is supported")
    if args.method == "hybrid":
        raise ValueError("the hybrid method writes F-curves: it needs Blender (bpy)")
    motion = demo_clip() if source is None else read_bvh(source)
    args.method = args.method or ("optimal" if motion.n_frames <= CORE_OPTIMAL_LIMIT else "simplify")
    metric = PoseMetric.for_motion(motion, args.weights)
    result = extract_keyframes(motion, args.method, metric=metric, weights=args.weights, **target_of(args))
    rebuilt = reconstruct(motion, result.keys)
    error, per_frame = evaluate(motion, rebuilt, metric)
    shape = (motion.n_frames, motion.fps, motion.skeleton.n_joints)
    report = _report_base(source, shape, args.method, result.params, result.keys, error, per_frame)
    if args.bvh:
        path = blend_path.with_name(blend_path.stem + "_keys.bvh")
        write_bvh(rebuilt, path)
        report["outputs"] = {"bvh": str(path)}
    return report


def _plain(value):
    """A JSON-ready parameter value: numpy integers to int, other numbers to float."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, int | np.integer):
        return int(value)
    return float(value)


def _report_base(source, shape: tuple[int, float, int], method, params, keys, error, per_frame) -> dict:
    """The report's common fields; shape is (frames, fps, joints)."""
    frames, fps, joints = shape
    return {
        "input": "demo (procedural walk, turn and jump)" if source is None else str(source),
        "frames": int(frames),
        "fps": float(fps),
        "joints": int(joints),
        "method": method,
        "params": {k: _plain(v) for k, v in params.items()},
        "keyframes": [int(k) for k in keys],
        "error": dict(error),
        "per_frame_error": [float(x) for x in per_frame],
    }


def _load_armature(args: argparse.Namespace, source: str | None):
    import addon_utils
    import bpy

    from mocap_workbench.addon.common.armature import create_animated_armature
    from mocap_workbench.core.synthetic import demo_clip

    if source is None:
        bpy.ops.wm.read_homefile(use_empty=True)
        motion = demo_clip()
        scene = bpy.context.scene
        scene.render.fps, scene.render.fps_base = int(round(motion.fps)), 1.0
        scene.frame_start, scene.frame_end = 1, motion.n_frames
        return create_animated_armature(motion, "Demo", scene.collection)
    if source.lower().endswith(".bvh"):
        from mocap_workbench.core.io.bvh import read_bvh

        read_bvh(source)  # a malformed file fails here with its line and problem, not in the importer
        bpy.ops.wm.read_homefile(use_empty=True)
        addon_utils.enable("io_anim_bvh", default_set=True)
        bpy.ops.import_anim.bvh(
            filepath=source, rotate_mode=args.rotate_mode, update_scene_fps=True, update_scene_duration=True
        )
        return bpy.context.active_object
    if source.lower().endswith(".blend"):
        bpy.ops.wm.open_mainfile(filepath=source)
    elif source:
        raise ValueError(f"{source}: expected a .bvh or .blend file")
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

    from mocap_workbench.addon.common.armature import scene_fps
    from mocap_workbench.addon.keyframes.extract_action import extract_on_armature

    obj = _load_armature(args, source)
    args.method = args.method or ("hybrid" if {"count", "ratio"} & set(target_of(args)) else "optimal")
    report = extract_on_armature(
        obj, args.method, target_of(args), args.weights, args.replace, fitted=not args.linear, grid=args.grid
    )
    shape = (len(report.frames), scene_fps(bpy.context.scene), len(obj.data.bones))
    out = _report_base(source, shape, args.method, report.params, report.keys, report.error, report.per_frame_error)
    out["error"]["playback"] = report.playback_error
    out["per_frame_playback_error"] = [float(x) for x in report.per_frame_playback_error]
    out.update(armature=obj.name, source_action=report.source_action, result_action=report.result_action,
               first_frame=int(report.frames[0]), blender=bpy.app.version_string)  # fmt: skip
    bpy.ops.wm.save_as_mainfile(filepath=str(blend_path.resolve()))
    out["outputs"] = {"blend": str(blend_path)}
    if args.bvh:
        from mocap_workbench.addon.common import animdata
        from mocap_workbench.addon.common.clip import read_clip
        from mocap_workbench.core.io.bvh import write_bvh
        from mocap_workbench.core.keyframes import reconstruct

        path = blend_path.with_name(blend_path.stem + "_keys.bvh")
        clip = read_clip(obj, animdata.action_channels(obj, bpy.data.actions[report.source_action]))
        write_bvh(reconstruct(clip.motion, report.keys), path)
        out["outputs"]["bvh"] = str(path)
    return out


def write_plot(report: dict, path: Path) -> None:
    """Per-frame mean joint position error, keyframes marked (matplotlib, headless backend)."""
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
    ax.set_ylabel("mean joint position error (scene units)")
    ax.legend(loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    code = main()
    if "bpy" in sys.modules and "--" in sys.argv:  # under `blender -b -P`, sys.exit would be swallowed
        import os

        os._exit(code)
    sys.exit(code)
