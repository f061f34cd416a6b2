"""scripts/benchmark_keyframes.py on real captures, as a user runs it: the table, equal stored keys, the
Decimate cache and a clip too short for the ratio."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from tests.conftest import ROOT, shared_file

SCRIPT = ROOT / "scripts" / "benchmark_keyframes.py"


def run(results, *args):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--results", str(results), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_decimate_factor_leaves_the_wanted_keys():
    sys.path.insert(0, str(ROOT / "scripts"))
    from benchmark_keyframes import decimate_factor

    for n in (20, 224, 1124, 2752):
        for wanted in range(2, n, max(1, n // 37)):
            assert math.ceil(n - decimate_factor(n, wanted) * n) == wanted  # Decimate's RATIO rule


def test_table_equal_keys_cache_and_short_clips(tmp_path):
    shared_file("bandai_namco_1/dataset-1_punch_normal_001.bvh")
    shared_file("bandai_namco_1/dataset-1_dash_normal_001.bvh")
    args = (
        "--clips",
        "dataset-1_punch_normal_001",
        "dataset-1_dash_normal_001",
        "--modes",
        "NATIVE",
        "--ratios",
        "0.1",
    )
    out = run(tmp_path, *args)
    table = (tmp_path / "keyframes.md").read_text()
    assert table.splitlines()[2] in out  # printed as written
    rows = json.loads((tmp_path / "keyframes.json").read_text())
    punch, dash = rows
    assert "too short" in dash["note"] and "too short" in table  # 10 % of 20 frames: 2 keys a curve
    ours, decimate = punch["ours"], punch["decimate"]
    assert ours["keys"] == decimate["keys"] and ours["keys"] % 22 == 0  # 22 keys (10 % of 224 frames) a curve
    assert 0 < ours["mean"] <= ours["max"] and 0 < decimate["mean"] <= decimate["max"]
    assert len(ours["runs"]) == 3 and ours["seconds"] == sorted(ours["runs"])[1]  # the median of three runs
    assert ours["cpu"] > 0 and decimate["cpu"] > 0
    line = next(r for r in table.splitlines() if "punch" in r)
    assert f"{ours['mean'] / decimate['mean']:.2f}" in line and f"{ours['max'] / decimate['max']:.2f}" in line
    cached = list((tmp_path / "decimate_cache").glob("*_NATIVE_0.1000_*.json"))
    assert len(cached) == 1
    # a re-run takes Decimate from the cache: its time as stored, its figures re-measured from the stored keys
    run(tmp_path, *args)
    again = json.loads((tmp_path / "keyframes.json").read_text())[0]["decimate"]
    assert again["seconds"] == decimate["seconds"] and again["cpu"] == decimate["cpu"]
    assert again["keys"] == decimate["keys"]
    assert again["mean"] == pytest.approx(decimate["mean"], rel=1e-6)
    assert again["max"] == pytest.approx(decimate["max"], rel=1e-6)
