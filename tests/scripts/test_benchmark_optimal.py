"""scripts/benchmark_optimal.py on one real capture, as a separate process: a row per count."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT, shared_file


def test_benchmark_optimal_prints_a_row_per_count(tmp_path):
    shared_file("cmu_bvh_cgspeed/05_02.bvh")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "benchmark_optimal.py"), "--clips", "05_02", "--counts", "2,0.9"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("05_02")]
    assert len(rows) == 2
    default, exact, ratios = (rows[0].split("|")[i].split() for i in (1, 2, 3))
    assert "full" in default and float(default[3]) > 0  # two keys: one key set, no table
    assert float(exact[3]) == float(default[3]) and float(ratios[0]) == 1.0  # the exact optimum agrees
    # 90 % keys: the default's full table against the exact optimum: never below it
    default, exact, ratios = (rows[1].split("|")[i].split() for i in (1, 2, 3))
    assert float(ratios[0]) >= 1.0 - 1e-9 and float(exact[3]) <= float(default[3]) + 1e-9
