"""Cold speed, peak memory and total error of the keyframe optimum: the default path against the exact optimum.

    python scripts/benchmark_optimal.py [--clips 05_02,01_01] [--counts 2,3,10,0.02,...,T-1] [--no-exact]
                                        [--exact-cache FILE]

For every CMU capture and every count (an integer is a key count, a fraction a ratio of the
frames, ``T-1`` every frame but one) it runs, cold (``clear_cache`` first), :func:`core.keyframes.optimal.optimal_keys` as the
add-on does (the path picked by the default: full resolution when cheap, else coarse to fine) and
:func:`core.keyframes.exact.exact_keys`, the least total error over every key set with that count
(proved, see its module notes). For each it prints wall and CPU seconds, the peak memory traced by
``tracemalloc`` during the call, and the total error (Σ over frames of the mean error of every
bone's measured points, scene units); then the ratios default / exact of the total error (1.000 =
the default found the optimum; above 1, how far from it) and exact / default of the CPU seconds.
The seconds come from untraced runs (tracing every allocation slows numpy down by up to 2×), the
fastest of ``--repeat`` (3) for the default path, the peak memory from another, traced run. The machine may be shared: CPU seconds are the fairer
figure; the load average is printed. ``--exact-cache FILE`` keeps the exact optimum's rows (total,
seconds, MB) in a JSON file and reuses them: it costs minutes a row.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.io.bvh import read_bvh  # noqa: E402
from core.keyframes import exact as exact_optimum  # noqa: E402
from core.keyframes import optimal  # noqa: E402

CAPTURES = ROOT.parent / "shared" / "mocap" / "cmu_bvh_cgspeed"


def run(solve, motion, count: int, repeat: int = 1) -> dict:
    """``solve(motion, count)`` cold: wall and CPU seconds of the fastest of ``repeat`` untraced runs, peak
    MB of a traced one, total error, path."""
    best = None
    for _ in range(repeat):  # the least of a few runs: a shared machine only ever adds time
        optimal.clear_cache()
        wall, cpu = time.perf_counter(), time.process_time()
        keys, info = solve(motion, count)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        best = (wall, cpu) if best is None or cpu < best[1] else best
    wall, cpu = best
    optimal.clear_cache()
    tracemalloc.start()
    solve(motion, count)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    optimal.clear_cache()
    return {"wall": wall, "cpu": cpu, "mb": peak, "error": info["total_error"], "path": info["path"]}


def key_count(spec: str, n_frames: int) -> int:
    """``spec``: a key count, a ratio of the frames (with a dot) or ``T-1``; clamped to 2..T."""
    if spec.upper() == "T-1":
        count = n_frames - 1
    else:
        count = int(round(float(spec) * n_frames)) if "." in spec else int(spec)
    return min(max(count, 2), n_frames)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", default="05_02,01_01")
    parser.add_argument("--counts", default="2,3,10,0.02,0.05,0.1,0.25,0.5,1000,T-1")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact optimum (the default path only)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of the default path (the fastest counts)")
    parser.add_argument("--exact-cache", type=Path, help="JSON file keeping the exact optimum's rows between runs")
    args = parser.parse_args(argv)
    cache = json.loads(args.exact_cache.read_text()) if args.exact_cache and args.exact_cache.exists() else {}
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    head = f"{'clip':6} {'frames':>6} {'keys':>5} | {'wall':>6} {'cpu':>6} {'MB':>5} {'error':>10} {'path':>14}"
    print(head + f" | {'exact wall':>10} {'cpu':>7} {'MB':>5} {'error':>10} | {'error ratio':>11} {'cpu ratio':>9}")
    for name in args.clips.split(","):
        motion = read_bvh(CAPTURES / f"{name}.bvh")
        n = motion.n_frames
        for spec in args.counts.split(","):
            count = key_count(spec, n)
            new = run(optimal.optimal_keys, motion, count, args.repeat)
            row = f"{name:6} {n:6d} {count:5d} | {new['wall']:6.2f} {new['cpu']:6.2f} {new['mb']:5.0f} "
            row += f"{new['error']:10.4f} {new['path']:>14}"
            if not args.no_exact:
                best = cache.get(f"{name}:{n}:{count}") or run(exact_optimum.exact_keys, motion, count)
                if args.exact_cache:
                    cache[f"{name}:{n}:{count}"] = best
                    args.exact_cache.write_text(json.dumps(cache, indent=1))
                quality = new["error"] / best["error"] if best["error"] > 0 else 1.0
                row += f" | {best['wall']:10.2f} {best['cpu']:7.2f} {best['mb']:5.0f} {best['error']:10.4f}"
                row += f" | {quality:11.4f} {best['cpu'] / max(new['cpu'], 1e-3):9.1f}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
