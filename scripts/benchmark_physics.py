"""Benchmark of physics-aware retargeting on real captures (plain Python, no Blender).

    python scripts/benchmark_physics.py RESULTS_DIR [--mocap ../shared/mocap] [--clips walk jump ...]

The paper's setting (Jin et al. 2014): a 60 kg source retargeted to a 1.4× taller, 90 kg
character. Until the geometric retargeter lands, the "retargeted" motion is the capture with
its skeleton offsets and root path scaled by 1.4 (same timing). For each clip it runs
:func:`core.physics.solve.physics_retarget` and writes to RESULTS_DIR:

- ``summary.json`` and ``summary.md``: ZMP-inside share over contact frames, torque-limit
  violations (count, frames, worst ratio), CoM flight-path error, jerk and deviation, before
  and after, with frames per second of the solve on one core (BLAS threads pinned to 1);
- ``<clip>_zmp.png``: the ZMP path over the support polygons, before and after;
- ``<clip>_torques.png``: hip, knee and ankle torque norms against their limits, before and after.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per character (set before numpy loads)

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.contacts import detect_contacts  # noqa: E402
from core.io.bvh import read_bvh  # noqa: E402
from core.physics.apply import FIGURES  # noqa: E402
from core.physics.body import body_model  # noqa: E402
from core.physics.dynamics import torque_ratios  # noqa: E402
from core.physics.metrics import analyse, report  # noqa: E402
from core.physics.plot import plot_torques, plot_zmp  # noqa: E402
from core.physics.solve import PhysicsOptions, physics_retarget, with_toes  # noqa: E402

CMU_UNIT = 0.0254 / 0.45  # metres per CMU scene unit (ASF "length 0.45", inches)
# name: (file, first frame, stop frame); frame 0 of the cgspeed files is a synthetic T-pose.
CLIPS = {
    "walk_02_01": ("cmu_bvh_cgspeed/02_01.bvh", 1, None),
    "walk_05_01": ("cmu_bvh_cgspeed/05_01.bvh", 1, None),
    "jump_01_01": ("cmu_bvh_cgspeed/01_01.bvh", 1, 800),
    "dance_05_02": ("cmu_bvh_cgspeed/05_02.bvh", 1, None),
}


def run_clip(name: str, spec: tuple, mocap: Path, out_dir: Path, args) -> dict:
    rel, first, stop = spec
    source = read_bvh(mocap / rel).frames(slice(first, stop))
    motion = source.scaled(args.scale)
    source_body = body_model(source.skeleton, args.source_mass, unit=CMU_UNIT)
    body = body_model(motion.skeleton, args.target_mass, unit=CMU_UNIT)
    contacts = detect_contacts(motion)
    source_contacts = with_toes(source, detect_contacts(source))
    source_report = report(analyse(source, source_contacts, source_body), source_body, source)
    start = time.perf_counter()
    result, rep = physics_retarget(motion, contacts, body, PhysicsOptions(), series=True)
    total = time.perf_counter() - start
    runs = rep.pop("series")
    plot_zmp(out_dir / f"{name}_zmp.png", name, runs)
    plot_torques(out_dir / f"{name}_torques.png", name, runs)
    after = analyse(result, with_toes(motion, contacts), body, ground=runs["after"].ground)
    ratios = torque_ratios(after.torques, body)
    return {
        "clip": rel,
        "frames": motion.n_frames,
        "fps": motion.fps,
        "source_height_m": source_body.height,
        "target_height_m": body.height,
        "source_60kg": {k: source_report.get(k) for k in FIGURES},
        "before": {k: rep["before"].get(k) for k in FIGURES},
        "after": {k: rep["after"].get(k) for k in FIGURES},
        "solve_seconds": rep["seconds"],
        "frames_per_second": rep["frames_per_second"],
        "frames_per_second_with_metrics": motion.n_frames / total,
        "torque_worse": rep["torque_worse"],
        "after_worst_joint_ratios": {
            body.skeleton.names[j]: float(ratios[:, j].max()) for j in np.flatnonzero(ratios.max(axis=0) > 1.0)
        },
    }


def markdown(results: dict) -> str:
    lines = [
        "| clip | frames | ZMP inside before → after | torque violations (frames) before → after | worst ratio "
        "before → after | flight error m before → after | jerk m/s³ before → after | deviation | frames/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        b, a = r["before"], r["after"]
        lines.append(
            f"| {name} | {r['frames']} | {100 * b['zmp_inside_share']:.1f} % → {100 * a['zmp_inside_share']:.1f} % "
            f"| {b['torque_violation_frames']} → {a['torque_violation_frames']} "
            f"| {b['torque_worst_ratio']:.2f} → {a['torque_worst_ratio']:.2f} "
            f"| {b['flight_error_m']:.4f} → {a['flight_error_m']:.4f} "
            f"| {b['jerk_m_s3']:.0f} → {a['jerk_m_s3']:.0f} | {a['deviation']:.4f} | {r['frames_per_second']:.0f} |"
        )
    for name, r in results.items():
        worse = r.get("torque_worse", [])
        if worse:
            frames = ", ".join(f"{w['frame']} {w['joint']} {w['before']:.2f} → {w['after']:.2f}" for w in worse)
            lines.append(f"\n{name}: over a torque limit and worse than before: {frames}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="folder for summary.json, summary.md and the plots")
    parser.add_argument("--mocap", type=Path, default=ROOT.parent / "shared" / "mocap")
    parser.add_argument("--clips", nargs="*", default=list(CLIPS), choices=list(CLIPS))
    parser.add_argument("--scale", type=float, default=1.4)
    parser.add_argument("--source-mass", type=float, default=60.0)
    parser.add_argument("--target-mass", type=float, default=90.0)
    args = parser.parse_args(argv)
    if not args.mocap.exists():
        print(f"captures not found: {args.mocap}", file=sys.stderr)
        return 1
    args.results.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in args.clips:
        results[name] = run_clip(name, CLIPS[name], args.mocap, args.results, args)
        r = results[name]
        print(
            f"{name}: ZMP inside {100 * r['before']['zmp_inside_share']:.1f} % → {100 * r['after']['zmp_inside_share']:.1f} %, "
            f"torque-violation frames {r['before']['torque_violation_frames']} → {r['after']['torque_violation_frames']}, "
            f"worst {r['before']['torque_worst_ratio']:.2f} → {r['after']['torque_worst_ratio']:.2f}, "
            f"flight error {r['before']['flight_error_m']:.4f} → {r['after']['flight_error_m']:.4f} m, "
            f"deviation {r['after']['deviation']:.4f}, {r['frames_per_second']:.0f} frames/s, "
            f"{len(r['torque_worse'])} joint-frames over a limit and worse than before",
            flush=True,
        )
    (args.results / "summary.json").write_text(json.dumps(results, indent=2))
    (args.results / "summary.md").write_text(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
