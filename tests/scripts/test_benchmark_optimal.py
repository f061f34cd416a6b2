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
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("05_02")]
    assert len(rows) == 2
    assert "full" in rows[0] and "skipped" not in rows[0]  # two keys: one key set, no table
    assert float(rows[0].split("|")[1].split()[3]) > 0  # the one key set's total error (its value: tests/core)
    # 90 % keys: the full table is cheap, so the default takes it and the baseline is the same run
    assert "full" in rows[1] and float(rows[1].split("|")[3].split()[1]) == 1.0
