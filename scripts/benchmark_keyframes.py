"""Keyframe methods against Blender's own Decimate, inside Blender, at equal stored keys.

    python scripts/benchmark_keyframes.py [--clips a.bvh b.bvh] [--ratios 0.02 0.05 0.1] [--results results/keyframes]

Each clip is imported with Blender's BVH importer (its default Euler mode). For every ratio
and method, Extract Keyframes writes a new action exactly as the operator does; the error
is measured on what Blender plays back (every F-curve evaluated at every frame, joint
positions by FK), in the capture's units. Decimate (``graph.decimate``, RATIO mode, set to
keep the same share of keys on every curve) runs on a copy of the dense action through a
Graph Editor override. Writes a Markdown table and PNG plots to the results folder.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402

SHARED = _package.ROOT.parent / "shared" / "mocap"
DEFAULT_CLIPS = [SHARED / "cmu_bvh_cgspeed" / "05_02.bvh", SHARED / "cmu_bvh_cgspeed" / "01_01.bvh"]


def import_clip(path: Path):
    import addon_utils
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode="NATIVE", update_scene_fps=True, update_scene_duration=True)
    return bpy.context.active_object


def stored_keys(obj, channels) -> int:
    """Keys stored on the bone channels of an action."""
    from mocap_workbench.addon.common.armature import BoneCurves

    curves = BoneCurves.of(channels.fcurves, {b.name for b in obj.data.bones})
    return sum(len(fc.keyframe_points) for fc in curves.by_channel.values())


def playback_errors(clip, channels):
    from mocap_workbench.addon.common.clip import played_motion
    from mocap_workbench.core.keyframes import position_errors

    err = position_errors(clip.motion, played_motion(clip, channels))
    return err, {"mean": err.mean(), "p95": np.percentile(err, 95), "max": err.max()}


def run_method(obj, clip, source, method: str, ratio: float) -> dict:
    from mocap_workbench.addon.common import animdata
    from mocap_workbench.addon.keyframes.extract_action import extract_on_armature

    obj.animation_data.action = source
    start = time.perf_counter()
    report = extract_on_armature(obj, method, {"ratio": ratio}, measure_playback=False)
    seconds = time.perf_counter() - start
    channels = animdata.object_channels(obj)
    err, summary = playback_errors(clip, channels)
    return {"keys": stored_keys(obj, channels), "poses": len(report.keys), "seconds": seconds, "per_frame": err.mean(axis=1),
            "key_frames": report.keys, "core_mean": report.error["position_mean"], **summary}  # fmt: skip


def run_decimate(obj, clip, source, ratio: float) -> dict:
    import bpy

    from mocap_workbench.addon.common import animdata

    copy = source.copy()
    copy.name = f"{source.name}_decimate"
    obj.animation_data.action = copy
    if animdata.SLOTTED:
        obj.animation_data.action_slot = copy.slots[0]
    channels = animdata.object_channels(obj)
    for fc in channels.fcurves:
        fc.select = True
        n = len(fc.keyframe_points)
        fc.keyframe_points.foreach_set("select_control_point", np.ones(n, dtype=bool))
    window = bpy.context.window_manager.windows[0]
    area = window.screen.areas[0]
    area.ui_type = "FCURVES"
    area.spaces.active.dopesheet.show_only_selected = False
    region = next(r for r in area.regions if r.type == "WINDOW")
    start = time.perf_counter()
    with bpy.context.temp_override(window=window, area=area, region=region):
        bpy.ops.graph.decimate(mode="RATIO", factor=1.0 - ratio)
    seconds = time.perf_counter() - start
    err, summary = playback_errors(clip, channels)
    return {
        "keys": stored_keys(obj, channels),
        "poses": None,
        "seconds": seconds,
        "per_frame": err.mean(axis=1),
        **summary,
    }


def write_table(rows: list[dict], path: Path) -> str:
    lines = [
        "| clip | ratio | method | stored keys | poses | mean | p95 | max | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        poses = "per curve" if r["poses"] is None else str(r["poses"])
        lines.append(
            f"| {r['clip']} | {r['ratio']:.0%} | {r['method']} | {r['keys']:,} | {poses} | {r['mean']:.4f} | {r['p95']:.4f} | {r['max']:.3f} | {r['seconds']:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    return text


def plot(rows: list[dict], results: Path, default: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for clip in sorted({r["clip"] for r in rows}):
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
        for method in sorted({r["method"] for r in rows}):
            sel = sorted((r for r in rows if r["clip"] == clip and r["method"] == method), key=lambda r: r["ratio"])
            ax.plot([100 * r["ratio"] for r in sel], [r["mean"] for r in sel], "o-", label=method)
        ax.set(xlabel="keys kept (% of frames)", ylabel="mean joint error, Blender playback", title=clip, yscale="log")
        ax.legend()
        fig.tight_layout()
        fig.savefig(results / f"{Path(clip).stem}_error_vs_ratio.png")
        plt.close(fig)
        pick = [r for r in rows if r["clip"] == clip and r["method"] == default and abs(r["ratio"] - 0.05) < 1e-9]
        dec = [
            r for r in rows if r["clip"] == clip and r["method"] == "Blender Decimate" and abs(r["ratio"] - 0.05) < 1e-9
        ]
        if pick:
            fig, ax = plt.subplots(figsize=(11, 4), dpi=120)
            r = pick[0]
            ax.plot(r["per_frame"], lw=1, label=f"{default} ({r['poses']} poses)")
            if dec:
                ax.plot(dec[0]["per_frame"], lw=1, alpha=0.7, label="Blender Decimate")
            ax.plot(r["key_frames"], r["per_frame"][r["key_frames"]], "o", ms=3, color="tab:red", label="keyframes")
            ax.set(xlabel="frame", ylabel="mean joint error, Blender playback", title=f"{clip}, 5 % keys")
            ax.legend()
            fig.tight_layout()
            fig.savefig(results / f"{Path(clip).stem}_per_frame.png")
            plt.close(fig)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clips", nargs="*", type=Path, default=DEFAULT_CLIPS)
    p.add_argument("--ratios", nargs="*", type=float, default=[0.02, 0.05, 0.10])
    p.add_argument("--methods", nargs="*", help="keyframe methods (default: all)")
    p.add_argument("--no-decimate", action="store_true")
    p.add_argument("--results", type=Path, default=_package.ROOT / "results" / "keyframes")
    args = p.parse_args(_package.script_args())
    _package.load()
    from mocap_workbench.addon.common.clip import read_clip
    from mocap_workbench.core.keyframes import METHODS

    methods = args.methods or ["hybrid", *METHODS]
    args.results.mkdir(parents=True, exist_ok=True)
    rows = []
    for path in args.clips:
        if not path.exists():
            print(f"skipped (not found): {path}")
            continue
        obj = import_clip(path)
        source = obj.animation_data.action
        source.use_fake_user = True
        clip = read_clip(obj)
        for ratio in args.ratios:
            runs = {m: run_method(obj, clip, source, m, ratio) for m in methods}
            if not args.no_decimate:
                runs["Blender Decimate"] = run_decimate(obj, clip, source, ratio)
            for method, r in runs.items():
                rows.append({"clip": path.name, "ratio": ratio, "method": method, **r})
                print(
                    f"{path.name} {ratio:.0%} {method:<18} keys {r['keys']:>8,}  mean {r['mean']:.4f}  p95 {r['p95']:.4f}  max {r['max']:.3f}  {r['seconds']:.2f} s",
                    flush=True,
                )
    print(write_table(rows, args.results / "keyframes.md"))
    plot(rows, args.results, methods[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
