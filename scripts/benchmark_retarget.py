"""Retargeting benchmark on the real captures in ../shared/mocap (plain Python; Blender timing when bpy is there).

    python scripts/benchmark_retarget.py [--json out.json] [--no-blender]

Cases: CMU cgspeed → the same skeleton under CMU 3ds Max names (must be exact); → the real
CMU 3ds Max skeleton of subject 131 (other proportions, arms down in its rest pose); → the
Bandai Namco skeleton (22 joints, folded rest pose, centimetres); → the cgspeed skeleton
scaled 1.4×. Prints a Markdown table: normalised joint-position error (of the rotation
transfer and of the final result), bone-direction error, foot skating (naive rotation copy,
before and after planting; in body heights per second), contact preservation and speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.contacts import foot_skating  # noqa: E402
from core.io.bvh import read_bvh  # noqa: E402
from core.motion import Motion  # noqa: E402
from core.retarget import copy_rotations, label_skeleton, retarget, retarget_metrics  # noqa: E402
from core.retarget.mapping import CONVENTIONS, _expand  # noqa: E402
from core.skeleton import Skeleton  # noqa: E402

MOCAP = ROOT.parent / "shared" / "mocap"
CLIPS = ("cmu_bvh_cgspeed/02_01.bvh", "cmu_bvh_cgspeed/05_01.bvh", "cmu_bvh_cgspeed/01_01.bvh")


def renamed(skeleton: Skeleton, convention: str) -> Skeleton:
    """The same skeleton with its labelled joints renamed to another convention's names."""
    labels, _ = label_skeleton(skeleton)
    names = dict(_expand(CONVENTIONS[convention]))
    new = list(skeleton.names)
    for canonical, j in labels.items():
        new[j] = names[canonical][0]
    return Skeleton(new, skeleton.parents, skeleton.rest_translations, skeleton.rest_rotations, skeleton.channels,
                    skeleton.end_site_parents, skeleton.end_site_offsets)  # fmt: skip


def targets(cgspeed: Skeleton) -> dict[str, tuple[Skeleton, str | None, bool]]:
    """name → (target skeleton, its up axis, whether a naive rotation copy is meaningful) for a
    source on the cgspeed skeleton ``cgspeed``."""
    return {
        "→ same skeleton, 3ds Max names": (renamed(cgspeed, "cmu_3dsmax"), "y", True),
        "→ CMU 3ds Max skeleton (subject 131)": (read_bvh(MOCAP / "cmu_bvh_3dsmax/131_01.bvh").skeleton, "y", False),
        "→ Bandai Namco skeleton": (
            read_bvh(MOCAP / "bandai_namco_1/dataset-1_walk_normal_001.bvh").skeleton,
            "y",
            False,
        ),
        "→ cgspeed skeleton × 1.4": (cgspeed.scaled(1.4), "y", True),
    }


def measure(source: Motion, target: Skeleton, up: str | None, naive: bool) -> dict:
    start = time.perf_counter()
    result = retarget(source, target, target_up=up)
    seconds = time.perf_counter() - start
    figures = retarget_metrics(source, result)
    height = figures["height"]
    row = {
        "frames": source.n_frames,
        "mapped": int(figures["mapped_bones"]),
        "scale": result.scale,
        "transfer_error_pct": 100 * figures["position_error_unplanted_mean_h"],
        "final_error_pct": 100 * figures["position_error_mean_h"],
        "direction_error_deg": figures["direction_error_mean_deg"],
        "skating_source": figures["skating_source_scaled"] / height,
        "skating_before": figures["skating_before"] / height,
        "skating_after": figures["skating_after"] / height,
        "contacts_kept_before": figures["contact_preservation_before"],
        "contacts_kept_after": figures["contact_preservation_after"],
        "frames_per_s": source.n_frames / seconds,
    }
    if naive:
        copy = copy_rotations(source, target, result.mapping)
        row["skating_naive"] = foot_skating(copy, result.contacts).total_rate / height
    return row


def throughput(source: Motion, target: Skeleton, up: str, repeats: int = 10) -> dict:
    """Frames per second of the whole core retarget (planting included) on a long clip."""
    long = Motion(source.skeleton, np.tile(source.translations, (repeats, 1, 1)),
                  np.tile(source.rotations, (repeats, 1, 1)), source.fps)  # fmt: skip
    start = time.perf_counter()
    retarget(long, target, target_up=up)
    return {"frames": long.n_frames, "seconds": time.perf_counter() - start}


def blender_timing() -> dict | None:
    """Seconds for Retarget inside Blender (bpy) on BVH imports of 02_01 → Bandai walk, import excluded."""
    try:
        sys.path.insert(0, str(ROOT / "scripts"))
        import _package

        if not _package.have_bpy():
            return None
        _package.load()
        import bpy  # noqa: I001  (bpy first: addon_utils exists only once bpy is imported)
        import addon_utils

        from mocap_workbench.addon.retarget.retarget_action import retarget_armatures
    except ImportError:
        return None
    bpy.ops.wm.read_homefile(use_empty=True)
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(MOCAP / "bandai_namco_1/dataset-1_walk_normal_001.bvh"))
    target = bpy.context.active_object
    bpy.ops.import_anim.bvh(filepath=str(MOCAP / CLIPS[0]), update_scene_fps=True)
    source = bpy.context.active_object
    start = time.perf_counter()
    report = retarget_armatures(source, target)
    return {"frames": len(report.frames), "seconds": time.perf_counter() - start, "mapped": report.mapped}


def table(rows: list[dict]) -> str:
    head = ("| case | clip | frames | mapped | scale | position error (transfer / final, % height) | "
            "direction error (°) | skating naive copy / before / after plant (heights/s) | contacts kept "
            "(before → after) | frames/s |")  # fmt: skip
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        naive = f"{r['skating_naive']:.4f}" if "skating_naive" in r else "—"
        lines.append(
            f"| {r['case']} | {r['clip']} | {r['frames']} | {r['mapped']} | {r['scale']:.3f} | "
            f"{r['transfer_error_pct']:.3f} / {r['final_error_pct']:.3f} | {r['direction_error_deg']:.2g} | "
            f"{naive} / {r['skating_before']:.4f} / {r['skating_after']:.1e} | "
            f"{r['contacts_kept_before']:.0%} → {r['contacts_kept_after']:.0%} | {r['frames_per_s']:,.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-blender", action="store_true")
    args = parser.parse_args()
    if not MOCAP.exists():
        raise SystemExit(f"real captures not found in {MOCAP}")
    rows = []
    for clip in CLIPS:
        source = read_bvh(MOCAP / clip)
        cases = targets(source.skeleton)
        for case, (target, up, naive) in cases.items():
            rows.append({"case": case, "clip": Path(clip).stem, **measure(source, target, up, naive)})
    print(table(rows))
    bandai, up, _ = cases["→ Bandai Namco skeleton"]
    speed = throughput(read_bvh(MOCAP / CLIPS[2]), bandai, up)
    print(f"\nThroughput: {speed['frames']:,} frames (01_01 tiled) → Bandai in {speed['seconds']:.2f} s = "
          f"{speed['frames'] / speed['seconds']:,.0f} frames/s (core, planting included)")  # fmt: skip
    blender = None if args.no_blender else blender_timing()
    if blender:
        print(f"Blender: Retarget of {blender['frames']} frames onto the imported Bandai armature "
              f"({blender['mapped']} bones, new action written, metrics): {blender['seconds']:.2f} s")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "throughput": speed, "blender": blender}, indent=2))


if __name__ == "__main__":
    main()
