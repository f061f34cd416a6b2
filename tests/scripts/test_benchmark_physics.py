"""scripts/benchmark_physics.py on one real walk, as a separate process: summary and plots written."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT, shared_file


def test_benchmark_physics_writes_summary_and_plots(tmp_path):
    mocap = shared_file("cmu_bvh_cgspeed/02_01.bvh").parents[1]
    out = tmp_path / "results"
    script = ROOT / "scripts" / "benchmark_physics.py"
    done = subprocess.run(
        [sys.executable, str(script), str(out), "--mocap", str(mocap), "--clips", "walk_02_01"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())["walk_02_01"]
    assert summary["after"]["zmp_inside_share"] > summary["before"]["zmp_inside_share"]
    assert summary["target_height_m"] / summary["source_height_m"] > 1.39
    for name in ("summary.md", "walk_02_01_zmp.png", "walk_02_01_torques.png"):
        assert (out / name).stat().st_size > 0
