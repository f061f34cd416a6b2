"""Speed of keyframe extraction: the core pass on a ≥100,000-frame clip, and Blender's bulk key I/O.

    python scripts/benchmark_extract.py [--clip path.bvh] [--frames 100000] [--keys 1000000]

Core: a capture (default CMU 05_02 from ../shared/mocap, else the procedural demo) is tiled
to the requested length; it times the threshold walk at a fixed δ, the exact-count search,
the slerp rebuild and the error pass, and prints frames per second. Baseline in the same
run: Algorithm 1 as a plain per-frame loop on a slice, extrapolated.
Blender (when bpy is importable): writing and reading 1,000,000 keys with foreach_set /
foreach_get against keyframe_points.insert per key on a sample, extrapolated.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402

DEFAULT_CLIP = _package.ROOT.parent / "shared" / "mocap" / "cmu_bvh_cgspeed" / "05_02.bvh"


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def tiled_clip(clip: str | None, frames: int):
    from mocap_workbench.core.io.bvh import read_bvh
    from mocap_workbench.core.motion import Motion
    from mocap_workbench.core.synthetic import demo_clip

    path = Path(clip) if clip else DEFAULT_CLIP
    motion = read_bvh(path) if path.exists() else demo_clip()
    name = path.name if path.exists() else "procedural demo"
    reps = int(np.ceil(frames / motion.n_frames))
    trans = np.concatenate([motion.translations] * reps)[:frames]
    rot = np.concatenate([motion.rotations] * reps)[:frames]
    return Motion(motion.skeleton, trans, rot, motion.fps), name


def naive_threshold(motion, metric, delta: float, limit: int) -> float:
    """Seconds per frame of Algorithm 1 as a per-frame Python loop (the obvious implementation)."""
    rot, trans = motion.rotations, motion.translations
    last = 0
    start = time.perf_counter()
    for t in range(1, limit):
        if metric(rot[t], trans[t], rot[last], trans[last]) > delta:
            last = t
    return (time.perf_counter() - start) / limit


def bench_core(args) -> None:
    from mocap_workbench.core.keyframes import PoseMetric, evaluate, evaluate_keys, extract_keyframes, reconstruct
    from mocap_workbench.core.keyframes.threshold import threshold_keys

    motion, name = tiled_clip(args.clip, args.frames)
    n, j = motion.n_frames, motion.skeleton.n_joints
    print(f"Core: {name} tiled to {n:,} frames × {j} joints")
    metric = PoseMetric.for_motion(motion)
    count = round(0.05 * n)
    result, t_count = timed(extract_keyframes, motion, "threshold", count=count, metric=metric)
    delta = result.params["threshold"]
    keys, t_walk = timed(threshold_keys, motion, metric, delta)
    original, t_fk = timed(motion.world_positions)
    rebuilt, t_rebuild = timed(reconstruct, motion, keys)
    (summary, _), t_error = timed(evaluate, motion, rebuilt, metric)
    (fused, _), t_fused = timed(evaluate_keys, motion, keys, metric)
    assert abs(fused["position_mean"] - summary["position_mean"]) <= 1e-9 * summary["position_mean"]
    core_pass = t_walk + t_fused
    rows = [
        ("threshold walk at fixed δ", t_walk),
        (f"exact count search ({count:,} keys)", t_count),
        ("slerp/lerp rebuild", t_rebuild),
        ("error pass (2 FK + pose distance)", t_error),
        ("forward kinematics alone", t_fk),
        ("rebuild + error, block by block", t_fused),
        ("core pass: walk + blockwise rebuild/error", core_pass),
        ("core pass with exact count", t_count + t_fused),
    ]
    for label, seconds in rows:
        print(f"  {label:<38} {seconds:8.3f} s  {n / seconds:12,.0f} frames/s")
    naive = naive_threshold(motion, metric, delta, min(n, 5000))
    print(
        f"  baseline per-frame loop walk          {naive * n:8.3f} s (extrapolated)  → windowed walk is {naive * n / t_walk:.0f}× faster"
    )
    print(
        f"  keys {len(keys):,} ({len(keys) / n:.1%}), position mean {summary['position_mean']:.4g}, max {summary['position_max']:.4g}"
    )
    print(f"  target: core pass < 1 s for 100k frames → {'met' if core_pass < 1.0 else 'NOT met'} ({core_pass:.2f} s)")


def bench_blender(args) -> None:
    if not _package.have_bpy():
        print("Blender: bpy not importable, skipped")
        return
    import bpy

    from mocap_workbench.addon.common import animdata

    bpy.ops.wm.read_homefile(use_empty=True)
    obj = bpy.data.objects.new("Bench", None)
    bpy.context.scene.collection.objects.link(obj)
    channels = animdata.new_action_for(obj, "Bench")
    n_curves = 100
    per_curve = args.keys // n_curves
    frames = np.arange(per_curve, dtype=float)
    values = np.sin(frames / 50.0)
    curves = [animdata.new_fcurve(channels, "location", i % 3, f"g{i}") for i in range(3)]
    curves += [animdata.new_fcurve(channels, f'["p{i}"]', 0) for i in range(n_curves - 3)]
    start = time.perf_counter()
    for fc in curves:
        animdata.write_keys(fc, frames, values)
    t_write = time.perf_counter() - start
    start = time.perf_counter()
    total = sum(len(animdata.read_keys(fc)) for fc in curves)
    t_read = time.perf_counter() - start
    sample = 2000
    fc = animdata.new_fcurve(channels, '["slow"]', 0)
    start = time.perf_counter()
    for f in range(sample):
        fc.keyframe_points.insert(f, 0.0, options={"FAST"})
    t_insert = (time.perf_counter() - start) / sample
    print(f"Blender {bpy.app.version_string}: {total:,} keys in {n_curves} F-curves")
    print(f"  bulk write (add + foreach_set + update) {t_write:8.3f} s  {total / t_write:14,.0f} keys/s")
    print(f"  bulk read (foreach_get)                 {t_read:8.3f} s  {total / t_read:14,.0f} keys/s")
    print(
        f"  baseline keyframe_points.insert          {t_insert * total:8.1f} s (extrapolated from {sample:,}) → bulk write is {t_insert * total / t_write:.0f}× faster"
    )
    print(f"  target: 1M keys written < 1 s → {'met' if t_write < 1.0 else 'NOT met'}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clip", help="BVH capture to tile (default: CMU 05_02 from ../shared/mocap)")
    p.add_argument("--frames", type=int, default=100_000)
    p.add_argument("--keys", type=int, default=1_000_000)
    args = p.parse_args(_package.script_args())
    _package.load()
    bench_core(args)
    bench_blender(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
