"""Cold speed, peak memory and total error of the exact keyframe optimum, against the old implementation.

    python scripts/benchmark_optimal.py [--clips 05_02,01_01] [--counts 2,10,0.02,0.05,0.1,1000] [--budget 60]

For every CMU capture and every count (an integer is a key count, a fraction a ratio of the
frames) it runs :func:`core.keyframes.optimal.optimal_keys` cold (``clear_cache`` first) and
prints wall and CPU seconds, the peak memory traced by ``tracemalloc`` during the call, the
total error and the longest gap; then the same for the old implementation (kept below, as it
was before the ``kf-optimal`` branch: the same table and screening with 8,192-frame batches
and no short cut for two keys) and the ratio old / new of the CPU seconds.

Both are O(T·G²) table builds (G = 4× the mean gap), so a run whose predicted CPU time, from
the frames per CPU second measured on that clip, exceeds ``--budget`` seconds is skipped
and its prediction printed instead ("~"). The machine may be shared: CPU seconds are the
fairer figure; the load average is printed.
"""

from __future__ import annotations

import argparse
import math
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


def old_optimal_keys(motion, count: int) -> tuple[np.ndarray, dict]:
    """The optimum as implemented before this branch (same table and screening, 8,192-frame batches)."""
    saved = optimal.CHUNK
    optimal.CHUNK = 8192
    try:
        n = motion.n_frames
        gap, table = optimal._prepare(motion, count, None)
        table.screen(optimal.SCREEN_FACTOR * table.max_gap)
        while True:
            keys, total = optimal.solve(table.mixed(), count)
            if table.settle(keys):
                continue
            if np.diff(keys).max() < table.reach or table.reach >= n - 1:
                break
            table.screen(2 * table.reach)
        return keys, {"total_error": total}
    finally:
        optimal.CHUNK = saved


def table_frames(n: int, count: int, old: bool, gap: int | None = None) -> float:
    """Rebuilt frames of the exact table the run needs (its dominant cost)."""
    if count == 2 and not old:
        return float(n)
    if gap is None:
        gap = min(n - 1, max(optimal.default_max_gap(n, count), math.ceil((n - 1) / max(count - 1, 1))))
    g = np.arange(2, gap + 1, dtype=float)
    return float(((n - g) * (g - 1)).sum())


def calibrate(motion, chunk: int) -> float:
    """Table frames per CPU second of this clip: the exact columns for gaps 2..24."""
    errors = optimal.SegmentErrors(motion, chunk=chunk)
    n, cpu = motion.n_frames, time.process_time()
    for g in range(2, 25):
        errors.gap_errors(np.arange(n - g), g)
    return table_frames(n, 0, True, 24) / (time.process_time() - cpu)


def run(fn, motion, count: int) -> dict:
    optimal.clear_cache()
    tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    keys, info = fn(motion, count)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    optimal.clear_cache()
    return {"wall": wall, "cpu": cpu, "mb": peak, "error": info["total_error"], "gap": int(np.diff(keys).max())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", default="05_02,01_01")
    parser.add_argument("--counts", default="2,10,0.02,0.05,0.1,1000")
    parser.add_argument("--budget", type=float, default=60.0, help="skip runs predicted over this many CPU seconds")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    head = f"{'clip':6} {'frames':>6} {'keys':>5} | {'new wall':>8} {'cpu':>7} {'MB':>6} {'error':>10} {'gap':>4}"
    print(head + f" | {'old wall':>8} {'cpu':>7} {'MB':>6} {'error':>10} | {'old/new cpu':>11}")
    for name in args.clips.split(","):
        motion = read_bvh(CAPTURES / f"{name}.bvh")
        n = motion.n_frames
        rate = {False: calibrate(motion, optimal.CHUNK), True: calibrate(motion, 8192)}  # frames per CPU second
        for spec in args.counts.split(","):
            count = int(round(float(spec) * n)) if "." in spec else int(spec)
            count = min(max(count, 2), n)
            cells = []
            for old in (False, True):
                frames = table_frames(n, count, old)
                guess = frames / rate[old]
                if guess > args.budget:
                    cells.append(None)
                    cells.append(guess)
                    continue
                r = run(old_optimal_keys if old else optimal.optimal_keys, motion, count)
                if frames > 1e6:  # the whole run, screening included, per table frame
                    rate[old] = frames / max(r["cpu"], 1e-3)
                cells += [r, r["cpu"]]
            new, new_cpu, old, old_cpu = cells

            def show(r, cpu_guess):
                if r is None:
                    return f"{'skipped':>8} ~{cpu_guess:6.0f} {'':>6} {'':>10}"
                return f"{r['wall']:8.2f} {r['cpu']:7.2f} {r['mb']:6.0f} {r['error']:10.4f}"

            gap = f"{new['gap']:4d}" if new else f"{'':>4}"
            ratio = old_cpu / new_cpu if new_cpu else float("nan")
            approx = "~" if new is None or old is None else " "
            print(
                f"{name:6} {n:6d} {count:5d} | {show(new, new_cpu)} {gap} | {show(old, old_cpu)} | {approx}{ratio:10.1f}"
            )
            if new and old and not math.isclose(new["error"], old["error"], rel_tol=1e-9, abs_tol=1e-9):
                print(f"       total errors differ: new {new['error']:.9f}, old {old['error']:.9f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
