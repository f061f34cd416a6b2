"""Cold speed, peak memory and total error of the keyframe optimum, against the full table.

    python scripts/benchmark_optimal.py [--clips 05_02,01_01] [--counts 2,3,10,0.02,0.05,0.1,1000] [--budget 60]

For every CMU capture and every count (an integer is a key count, a fraction a ratio of the
frames) it runs :func:`core.keyframes.optimal.optimal_keys` cold (``clear_cache`` first), as the
add-on does (the path picked by the default: full resolution when cheap, else coarse to fine),
and prints wall and CPU seconds, the peak memory traced by ``tracemalloc`` during the call, the
total error (Σ over frames of the mean error of every bone's measured points, scene units) and
the path; then the same for the baseline, the full-resolution table (``exact=True``: exact
costs up to 4× the mean gap, screened beyond), and the ratios baseline / default of the CPU
seconds and default / baseline of the total error (1.000 = the same answer's quality).

The baseline is an O(T·G²) table build, so a baseline run whose predicted CPU time, from the
frames per CPU second measured on that clip, exceeds ``--budget`` seconds is skipped and its
prediction printed instead ("~"). The machine may be shared: CPU seconds are the fairer figure;
the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.io.bvh import read_bvh  # noqa: E402
from core.keyframes import optimal  # noqa: E402

CAPTURES = ROOT.parent / "shared" / "mocap" / "cmu_bvh_cgspeed"


def calibrate(motion) -> float:
    """Table frames per CPU second of this clip: the exact columns for gaps 2..24."""
    errors = optimal.SegmentErrors(motion, chunk=optimal.CHUNK)
    n, cpu = motion.n_frames, time.process_time()
    for g in range(2, 25):
        errors.gap_errors(np.arange(n - g), g)
    return float(sum((n - g) * (g - 1) for g in range(2, 25))) / (time.process_time() - cpu)


def run(motion, count: int, exact: bool | None) -> dict:
    optimal.clear_cache()
    tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    keys, info = optimal.optimal_keys(motion, count, exact=exact)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    optimal.clear_cache()
    return {"wall": wall, "cpu": cpu, "mb": peak, "error": info["total_error"], "path": info["path"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", default="05_02,01_01")
    parser.add_argument("--counts", default="2,3,10,0.02,0.05,0.1,1000")
    parser.add_argument("--budget", type=float, default=60.0, help="skip baseline runs predicted over this many CPU s")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    head = f"{'clip':6} {'frames':>6} {'keys':>5} | {'wall':>6} {'cpu':>6} {'MB':>5} {'error':>10} {'path':>14}"
    print(head + f" | {'full wall':>9} {'cpu':>7} {'MB':>5} {'error':>10} | {'cpu ratio':>9} {'error ratio':>11}")
    for name in args.clips.split(","):
        motion = read_bvh(CAPTURES / f"{name}.bvh")
        n = motion.n_frames
        rate = calibrate(motion)
        for spec in args.counts.split(","):
            count = int(round(float(spec) * n)) if "." in spec else int(spec)
            count = min(max(count, 2), n)
            new = run(motion, count, None)
            row = f"{name:6} {n:6d} {count:5d} | {new['wall']:6.2f} {new['cpu']:6.2f} {new['mb']:5.0f} "
            row += f"{new['error']:10.4f} {new['path']:>14}"
            guess = optimal.table_work(n, count) / rate
            if new["path"] == "full":
                base, approx = new, " "
            elif guess > args.budget:
                base, approx = None, "~"
            else:
                base, approx = run(motion, count, True), " "
            if base is None:
                row += (
                    f" | {'skipped':>9} ~{guess:6.0f} {'':>5} {'':>10} | ~{guess / max(new['cpu'], 1e-3):8.1f} {'':>11}"
                )
            else:
                ratio = base["cpu"] / max(new["cpu"], 1e-3)
                quality = new["error"] / base["error"] if base["error"] > 0 else 1.0
                row += f" | {base['wall']:9.2f} {base['cpu']:7.2f} {base['mb']:5.0f} {base['error']:10.4f}"
                row += f" | {approx}{ratio:8.1f} {quality:11.4f}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
