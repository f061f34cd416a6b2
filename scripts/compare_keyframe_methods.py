"""Compare the keyframe methods of the core on real captures (no Blender).

For each clip and key ratio, every method's keys are rebuilt by the core (slerp/lerp) and
measured: the position error of every bone's measured points (heads, leaf tips, side points;
core/keyframes/error.py), mean / 95th percentile / max (scene units), and the time the method
took (wall clock and CPU time of this process). Every method chooses with that same measure
(the threshold method with the patent's pose distance). "optimal" minimises the summed error
(the quality limit; core/keyframes/optimal.py says what each answer is optimal among); its
column "gap×" is its longest gap over the mean gap.

    python scripts/compare_keyframe_methods.py                      # 05_02 and 01_01 at 2/5/10 %
    python scripts/compare_keyframe_methods.py --clips 02_01 --ratios 0.05 --methods uniform,optimal
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.io.bvh import read_bvh  # noqa: E402
from core.keyframes import METHODS, PoseMetric, evaluate, extract_keyframes, reconstruct  # noqa: E402
from core.keyframes.optimal import clear_cache  # noqa: E402

CAPTURES = ROOT.parent / "shared" / "mocap" / "cmu_bvh_cgspeed"
ORDER = ("uniform", "threshold", "simplify", "activity", "optimal")


def compare(path: Path, ratios: list[float], methods: list[str]) -> list[dict]:
    """One row per (ratio, method): figures and seconds."""
    motion = read_bvh(path)
    metric = PoseMetric.for_motion(motion)
    rows = []
    for ratio in ratios:
        for method in methods:
            clear_cache()  # time every optimum from scratch
            start, cpu = time.perf_counter(), time.process_time()
            result = extract_keyframes(motion, method, ratio=ratio, metric=metric)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            summary, _ = evaluate(motion, reconstruct(motion, result.keys), metric)
            gaps = np.diff(result.keys)
            mean_gap = (motion.n_frames - 1) / (len(result.keys) - 1)
            rows.append(
                {
                    "clip": path.stem,
                    "frames": motion.n_frames,
                    "ratio": ratio,
                    "method": method,
                    "keys": len(result.keys),
                    **summary,
                    "seconds": seconds,
                    "cpu_seconds": cpu,
                    "gap_ratio": gaps.max() / mean_gap,
                }
            )
    return rows


def print_rows(rows: list[dict]) -> None:
    print(
        f"{'clip':6} {'ratio':>5} {'keys':>5} {'method':10} {'mean':>7} {'p95':>7} {'max':>7}"
        f" {'wall s':>7} {'cpu s':>7} {'gap×':>5}"
    )
    for r in rows:
        print(
            f"{r['clip']:6} {r['ratio']:5.0%} {r['keys']:5d} {r['method']:10} {r['position_mean']:7.4f}"
            f" {r['position_p95']:7.3f} {r['position_max']:7.3f} {r['seconds']:7.2f} {r['cpu_seconds']:7.2f}"
            f" {r['gap_ratio']:5.2f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", default="05_02,01_01", help="CMU cgspeed clip names (comma separated)")
    parser.add_argument("--ratios", default="0.02,0.05,0.10", help="key ratios (comma separated)")
    parser.add_argument("--methods", default=",".join(m for m in ORDER if m in METHODS))
    args = parser.parse_args(argv)
    ratios = [float(r) for r in args.ratios.split(",")]
    methods = args.methods.split(",")
    for name in args.clips.split(","):
        path = CAPTURES / f"{name}.bvh"
        if not path.exists():
            print(f"skipped {name}: {path} not found")
            continue
        print_rows(compare(path, ratios, methods))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
