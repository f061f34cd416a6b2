"""How far the physics solve's outcome moves under millimetre perturbations (a measurement, not shipped).

    python scripts/perturb_physics.py [--clips jump_01_01 bandai_punch ...] [--caps 0.998 0.999 1 1.001 1.002]
                                      [--sway-mm 1] [--json OUT]

Each benchmark row (:mod:`benchmark_physics`: the capture 1.4× onto 90 kg) is solved by
:func:`core.physics.solve.physics_retarget` once per perturbation:

- ``cap×f``: planting's knee cap (:func:`core.ik.plant._limb_reach`, 0.985 of the leg's reach) multiplied by
  f; 0.998–1.002 is ±1–2 mm of a 1 m leg and moves the first planting's joints by at most about 3 mm;
- ``sway±d``: the input's root moved up / down by d·sin(π t / T) mm (``--sway-mm``; 0 leaves these out): zero at
  both ends, d in the middle (a constant lift changes nothing: the ground is read from the motion).

Per row it prints every run and then the median and range (min–max) over the runs of the issue-16
figures after the solve: frames over a torque limit, the worst |τ|/limit, the ZMP inside the support
polygon (share of contact frames), the deviation (mean joint displacement / stature) and the jerk (after /
before), and how many runs keep every bar of the README's rows (ZMP ≥ 99 %, no frame over a limit, worst
ratio ≤ the input's, jerk ≤ ×1.05, deviation ≤ 1.5 %). A solve whose figures hold only for some of these
runs sits at its noise floor: a result that flips on 2 mm is not a result. CPU seconds per run are printed too.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent


def _args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clips", nargs="*", default=["jump_01_01", "bandai_punch", "shoot_06_14"])
    p.add_argument("--caps", nargs="*", type=float, default=[0.998, 0.999, 1.0, 1.001, 1.002])
    p.add_argument("--sway-mm", type=float, default=1.0)
    p.add_argument("--mocap", type=Path, default=HERE.parents[1] / "shared" / "mocap")
    p.add_argument("--json", type=Path, default=None)
    return p.parse_args(argv)


def _bars(after: dict, before: dict) -> bool:
    """Every bar of the README's rows."""
    return (
        after["zmp_inside_share"] >= 0.99
        and after["torque_violation_frames"] == 0
        and after["torque_worst_ratio"] <= max(before["torque_worst_ratio"], 1.0)
        and after["jerk_m_s3"] <= 1.05 * before["jerk_m_s3"]
        and after["deviation"] <= 0.015
    )


def main(argv=None) -> int:
    args = _args(argv)
    sys.path.insert(0, str(HERE))
    import benchmark_physics as bp

    import core.ik.plant as plant
    from core.contacts import detect_contacts
    from core.physics.body import body_model
    from core.physics.solve import physics_retarget

    reach = plant._limb_reach

    class Setting:
        scale, source_mass, target_mass = 1.4, 60.0, 90.0

    runs = [(f"cap×{f:g}", f, 0.0) for f in args.caps]
    if args.sway_mm:
        runs += [(f"sway{s:+g}mm", 1.0, s) for s in (args.sway_mm, -args.sway_mm)]
    table = {}
    for name in args.clips:
        motion, _, unit, _ = bp.prepare(bp.CLIPS[name], args.mocap, Setting)
        up = detect_contacts(motion).up
        rows = []
        for tag, factor, lift in runs:
            m = motion
            if lift:
                tr = motion.translations.copy()
                bump = np.sin(np.pi * np.arange(motion.n_frames) / max(motion.n_frames - 1, 1))
                tr[:, 0] += bump[:, None] * up * lift / 1000.0 / unit
                m = replace(motion, translations=tr)
            plant._limb_reach = lambda pos, leg, softness, f=factor: f * reach(pos, leg, softness)
            contacts = detect_contacts(m)
            body = body_model(m.skeleton, Setting.target_mass, unit=unit, up=contacts.up)
            cpu = time.process_time()
            _, rep = physics_retarget(m, contacts, body)
            cpu = time.process_time() - cpu
            a, b = rep["after"], rep["before"]
            row = {
                "run": tag,
                "frames_over": a["torque_violation_frames"],
                "worst": a["torque_worst_ratio"],
                "zmp": 100 * a["zmp_inside_share"],
                "deviation": 100 * a["deviation"],
                "jerk": a["jerk_m_s3"] / b["jerk_m_s3"],
                "bars": _bars(a, b),
                "cpu_s": cpu,
                "fps_cpu": m.n_frames / cpu,
            }
            rows.append(row)
            print(
                f"{name:14s} {tag:10s} over {row['frames_over']:3d}  worst {row['worst']:.2f}  ZMP {row['zmp']:5.1f} %  "
                f"dev {row['deviation']:.2f} %  jerk ×{row['jerk']:.3f}  bars {'yes' if row['bars'] else 'no '}  "
                f"{cpu:.1f} s CPU ({row['fps_cpu']:.0f} frames/s)",
                flush=True,
            )
        plant._limb_reach = reach
        table[name] = rows
        cells = []
        for key, fmt in (
            ("frames_over", "{:.0f}"),
            ("worst", "{:.2f}"),
            ("zmp", "{:.1f}"),
            ("deviation", "{:.2f}"),
            ("jerk", "{:.3f}"),
        ):
            v = np.array([r[key] for r in rows], float)
            cells.append(f"{key} {fmt.format(np.median(v))} [{fmt.format(v.min())}–{fmt.format(v.max())}]")
        held = sum(r["bars"] for r in rows)
        print(
            f"{name:14s} MEDIAN [RANGE] "
            + "  ".join(cells)
            + f"  bars held {held}/{len(rows)}  load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
