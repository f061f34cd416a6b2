"""The library's speed: batch throughput on 0 (a plain loop), 1 and 2 local Dask workers, and search
by pose over 10,000 clips.

    python scripts/benchmark_library.py [--folder ../shared/mocap] [--copies 4] [--clips 10000]

Batch: ``library process`` over the folder, and over a larger set made of ``--copies`` links to each of
its clips, with no earlier outputs (cold), on a plain loop in this process (the baseline) and on local
clusters of 1 and 2 worker processes; clips per minute, the scaling efficiency (rate with 2 workers /
twice the rate with 1) and the overhead per clip against the plain loop (cluster start-up included).
Search: a library of ``--clips`` clips whose keyframe poses are the real clips' poses, turned a little
at random; the time to find the best 10 (exactly) for a clip query and for a single pose (median of 7), and to
rank every clip.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402

SHARED = _package.ROOT.parent / "shared" / "mocap"


def larger_set(folder: Path, copies: int, into: Path) -> Path:
    """``copies`` links to every clip of ``folder`` (and its .asf files) under ``into``."""
    for k in range(copies):
        for clip in folder.rglob("*"):
            if clip.suffix.lower() in (".bvh", ".amc", ".asf"):
                target = into / f"copy{k}" / clip.relative_to(folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(clip.resolve(), target)
    return into


def time_batch(folder: Path, workers: int) -> tuple[float, int]:
    from mocap_workbench.cli import library

    out = Path(tempfile.mkdtemp(prefix="library-bench-"))
    try:
        start = time.perf_counter()
        library.command(["process", str(folder), "-o", str(out), "--workers", str(workers)])
        seconds = time.perf_counter() - start
        return seconds, len(list(out.rglob("*.json"))) - 1  # minus summary.json
    finally:
        shutil.rmtree(out, ignore_errors=True)


def batch_table(folder: Path, label: str) -> list[str]:
    rows = {}
    for workers in (0, 1, 2):
        seconds, clips = time_batch(folder, workers)
        rows[workers] = (seconds, clips, clips / seconds * 60.0)
    plain = rows[0]
    lines = [f"\n{label}: {plain[1]} clips", "| workers | seconds | clips/min | overhead per clip vs plain loop |",
             "|---|---|---|---|"]  # fmt: skip
    for workers, (seconds, clips, rate) in rows.items():
        overhead = "—" if workers == 0 else f"{(seconds * workers - plain[0]) / clips * 1000:+.0f} ms"
        name = "plain loop" if workers == 0 else str(workers)
        lines.append(f"| {name} | {seconds:.1f} | {rate:.1f} | {overhead} |")
    lines.append(f"scaling efficiency 1 → 2 workers: {rows[2][2] / (2 * rows[1][2]):.2f}")
    return lines


def search_table(folder: Path, n_clips: int) -> list[str]:
    from mocap_workbench.core import quaternion as quat
    from mocap_workbench.core.io.convert import load_motion
    from mocap_workbench.core.library.catalogue import describe_clip
    from mocap_workbench.core.library.search import PoseLibrary

    real = []
    for clip in sorted(folder.rglob("*.bvh")):
        poses = describe_clip(load_motion(clip), str(clip)).pose_array()
        if poses is not None:
            real.append(poses)
    rng = np.random.default_rng(0)
    names, poses = [], []
    for i in range(n_clips):
        base = real[i % len(real)]
        turn = quat.from_axis_angle(rng.normal(size=(*base.shape[:2], 3)), rng.uniform(0, 0.1, base.shape[:2]))
        poses.append(quat.rotate(turn, base).astype(np.float32))
        names.append(f"clip{i:05d}")
    start = time.perf_counter()
    library = PoseLibrary.build(names, poses)
    build = time.perf_counter() - start
    query = real[0]

    def median(single: bool) -> float:
        times = []
        for _ in range(7):
            t = time.perf_counter()
            library.rank(query[[0]] if single else query, single_pose=single, top=10)
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    return [f"\nsearch over {n_clips} clips ({len(library.poses)} keyframe poses; built in {build:.2f} s):",
            f"- like a clip ({len(query)} poses): {median(False) * 1000:.0f} ms",
            f"- like one pose: {median(True) * 1000:.0f} ms"]  # fmt: skip


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--folder", type=Path, default=SHARED)
    p.add_argument("--copies", type=int, default=4)
    p.add_argument("--clips", type=int, default=10000)
    p.add_argument("--no-batch", action="store_true")
    args = p.parse_args()
    _package.load()
    lines = []
    if not args.no_batch:
        lines += batch_table(args.folder, str(args.folder))
        with tempfile.TemporaryDirectory() as tmp:
            lines += batch_table(larger_set(args.folder, args.copies, Path(tmp)), f"{args.copies} copies")
    lines += search_table(args.folder, args.clips)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
