"""Benchmark of physics on a long clip: solved whole against solved in windows, in one process.

    python scripts/benchmark_physics_long.py [--minutes 2] [--window 60] [--fps 120] [--windows-only]

The synthetic walk (:func:`core.synthetic.walk`, 90 kg) of ``--minutes`` through :func:`core.physics.apply.
apply_physics` (the operator's and the CLI's path) twice: whole (the baseline) and in windows of ``--window``
seconds (:mod:`core.physics.windows`). Prints for each the peak traced memory (tracemalloc: numpy's arrays
included) per frame and in all, frames per CPU second, and the figures after; then the ratios windows / whole.
``--windows-only`` skips the whole solve (a ten-minute clip solved whole needs several GB).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core (set before numpy loads)

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import synthetic  # noqa: E402
from core.physics.apply import PhysicsSettings, apply_physics  # noqa: E402

SHOWN = ("zmp_inside_share", "torque_violation_frames", "torque_worst_ratio", "jerk_m_s3", "deviation")


def run(motion, window: float) -> dict:
    """One solve through ``apply_physics``: peak traced bytes, CPU seconds and the figures after."""
    settings = PhysicsSettings(target_mass=90.0, source_mass=60.0)
    tracemalloc.start()
    cpu = time.process_time()
    try:
        outcome = apply_physics(motion, settings, unit=1.0, window_seconds=window)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    cpu = time.process_time() - cpu
    return {"peak": peak, "cpu": cpu, "after": outcome.figures["after"], "windows": outcome.figures["windows"]}


def line(name: str, frames: int, r: dict) -> str:
    figures = ", ".join(f"{k} {r['after'][k]:.4g}" for k in SHOWN)
    return (f"{name:8s} peak {r['peak'] / 1e6:7.0f} MB ({r['peak'] / frames / 1e3:5.1f} kB a frame), "
            f"{frames / r['cpu']:5.0f} frames per CPU second; {figures}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--window", type=float, default=60.0, help="seconds (the default of apply_physics)")
    parser.add_argument("--fps", type=float, default=120.0)
    parser.add_argument("--windows-only", action="store_true")
    args = parser.parse_args(argv)
    if not (args.minutes > 0 and args.window > 0 and args.fps > 0):
        parser.error("--minutes, --window and --fps must be positive")
    frames = int(args.minutes * 60 * args.fps)
    motion = synthetic.walk(frames, fps=args.fps)
    print(f"synthetic walk, {frames} frames at {args.fps:g} fps ({args.minutes:g} min), 90 kg, windows of "
          f"{args.window:g} s, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    windows = run(motion, args.window)
    print(line("windows", frames, windows), f"({windows['windows']})", flush=True)
    if args.windows_only:
        return 0
    whole = run(motion, float("inf"))
    print(line("whole", frames, whole))
    print(f"windows / whole: peak memory ×{windows['peak'] / whole['peak']:.2f}, "
          f"speed ×{whole['cpu'] / windows['cpu']:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
