"""Retarget Batch against one Retarget per source, in the same process (needs the bpy module).

    python scripts/benchmark_retarget_batch.py [--frames N] [--json out.json]

Sources: three CMU cgspeed captures of ../shared/mocap (02_01, 05_01, 05_06; the first N frames
of each, all by default), imported with Blender's BVH importer; target: the Mixamo rig of
``mixamo/Walk-In-Circle.bvh``. Baseline: ``mocap.retarget`` once per action (the source's action
switched between runs). Then ``mocap.retarget_batch`` on the same three actions, and on a folder
holding the three files (imported, read and removed by the batch itself). Prints seconds, the
ratios against the baseline and the largest key difference between the batch's actions and the
baseline's (the same retarget: 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402

MOCAP = _package.ROOT.parent / "shared" / "mocap"
SOURCES = ("cmu_bvh_cgspeed/02_01.bvh", "cmu_bvh_cgspeed/05_01.bvh", "cmu_bvh_cgspeed/05_06.bvh")
TARGET = "mixamo/Walk-In-Circle.bvh"


def keys(action) -> dict:
    """Every key (frame, value) of an action, by channel."""
    from mocap_workbench.addon.common import animdata

    out = {}
    for curves in animdata.curve_lists(action):
        for fc in curves:
            co = np.empty(2 * len(fc.keyframe_points))
            fc.keyframe_points.foreach_get("co", co)
            out[(fc.data_path, fc.array_index)] = co
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=0, help="first N frames of each capture (default all)")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--profile", action="store_true", help="also profile the folder's batch")
    args = parser.parse_args(_package.script_args(argv))
    import bpy  # first: addon_utils is importable once bpy is

    package = _package.load()
    package.register()
    from mocap_workbench.core.io.bvh import read_bvh, write_bvh

    folder = Path(tempfile.mkdtemp(prefix="retarget-batch-"))
    files = []
    for relative in SOURCES:
        motion = read_bvh(MOCAP / relative)
        path = folder / Path(relative).name
        write_bvh(motion.frames(slice(0, args.frames or motion.n_frames)), path)
        files.append(path)
    import addon_utils

    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.render.fps = 120  # the captures' rate: every frame of theirs a frame of the scene
    addon_utils.enable("io_anim_bvh", default_set=False)
    sources = []
    for path in files:
        bpy.ops.import_anim.bvh(filepath=str(path), use_fps_scale=True)
        sources.append(bpy.context.active_object)
    bpy.ops.import_anim.bvh(filepath=str(MOCAP / TARGET), use_fps_scale=True)
    target = bpy.context.active_object
    source, actions = sources[0], [o.animation_data.action for o in sources]
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in (source, target))
    bpy.context.view_layer.objects.active = target
    bpy.context.scene.mocap_workbench.retarget.source = source
    frames = sum(round(a.frame_range[1] - a.frame_range[0]) + 1 for a in actions)

    start = time.perf_counter()
    baseline = {}
    for action in actions:
        source.animation_data.action = action
        bpy.ops.mocap.retarget()
        baseline[action.name] = target.animation_data.action
    single = time.perf_counter() - start
    source.animation_data.action = actions[0]
    for result in baseline.values():
        result.name = f"single {result.name}"

    start = time.perf_counter()
    bpy.ops.mocap.retarget_batch(batch_source="ACTIONS", actions=[{"name": a.name} for a in actions])
    of_actions = time.perf_counter() - start
    difference = 0.0
    for action in actions:
        ours, theirs = keys(bpy.data.actions[f"{action.name}_{target.name}"]), keys(baseline[action.name])
        difference = max([difference, *(float(np.abs(ours[k] - theirs[k]).max()) for k in ours)])
        bpy.data.actions[f"{action.name}_{target.name}"].name = f"batch {action.name}"

    start = time.perf_counter()
    bpy.ops.mocap.retarget_batch(batch_source="FILES", batch_folder=str(folder))
    of_files = time.perf_counter() - start

    figures = {
        "sources": len(actions),
        "frames": frames,
        "one_retarget_per_action_s": single,
        "batch_of_actions_s": of_actions,
        "batch_of_files_s": of_files,
        "batch_of_actions_ratio": of_actions / single,
        "batch_of_files_ratio": of_files / single,
        "max_key_difference": difference,
    }
    print(f"{len(actions)} sources, {frames} frames onto '{target.name}'")
    print(f"one Retarget per action: {single:.2f} s (baseline)")
    print(f"Retarget Batch, actions: {of_actions:.2f} s ({of_actions / single:.2f}× the baseline)")
    print(f"Retarget Batch, folder:  {of_files:.2f} s ({of_files / single:.2f}× the baseline, imports included)")
    print(f"largest key difference, batch vs one by one: {difference:.3g}")
    if args.profile:
        import cProfile
        import pstats

        cProfile.runctx(
            "bpy.ops.mocap.retarget_batch(batch_source='FILES', batch_folder=str(folder))",
            globals(),
            locals(),
            str(folder / "profile"),
        )
        pstats.Stats(str(folder / "profile")).sort_stats("cumulative").print_stats(25)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
