"""Measure variants of the activity method's parameters on CMU captures (how its defaults were chosen).

Each variant is ActivityParams() with some fields changed (JSON). For every clip and key
ratio the method's position_mean is divided by that of uniform keys at the same count;
the score is the geometric mean of these ratios (lower is better), with the worst case and
the natural key count (steps 1-2 alone) over the target count.

    python scripts/tune_activity.py '[{}, {"signal": "change"}, {"refine": false}]'
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.io.bvh import read_bvh  # noqa: E402
from core.keyframes import PoseMetric, evaluate, reconstruct  # noqa: E402
from core.keyframes.activity import ActivityParams, activity_keys  # noqa: E402
from core.keyframes.baselines import uniform_keys  # noqa: E402

CAPTURES = ROOT.parent / "shared" / "mocap" / "cmu_bvh_cgspeed"
# the CMU clips that the tests do not use, so the defaults are not fitted to the test clips
TUNING_CLIPS = "02_01,05_01,05_06,05_18,06_12,06_14,01_14"


def position_mean(motion, keys, metric) -> float:
    return evaluate(motion, reconstruct(motion, keys), metric)[0]["position_mean"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="?", default="[{}]", help="JSON list of ActivityParams changes")
    parser.add_argument("--clips", default=TUNING_CLIPS)
    parser.add_argument("--ratios", default="0.02,0.05,0.10")
    args = parser.parse_args(argv)
    ratios = [float(r) for r in args.ratios.split(",")]
    clips = {name: read_bvh(CAPTURES / f"{name}.bvh") for name in args.clips.split(",")}
    metrics = {name: PoseMetric.for_motion(m) for name, m in clips.items()}
    base = {
        (name, r): position_mean(m, uniform_keys(m.n_frames, round(r * m.n_frames)), metrics[name])
        for name, m in clips.items()
        for r in ratios
    }
    for changes in json.loads(args.variants):
        params = replace(ActivityParams(), **changes)
        rel, natural, start = [], [], time.perf_counter()
        for name, m in clips.items():
            for r in ratios:
                count = round(r * m.n_frames)
                keys, info = activity_keys(m, metrics[name], count, params)
                rel.append(position_mean(m, keys, metrics[name]) / base[name, r])
                natural.append(info["natural_count"] / count)
        print(
            f"{json.dumps(changes):45} score {np.exp(np.mean(np.log(rel))):.3f}  worst {max(rel):.3f}"
            f"  natural/target {min(natural):.2f}-{max(natural):.2f}  {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
