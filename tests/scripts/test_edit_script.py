"""scripts/edit.py: every sub-command on files, as a user runs it (a subprocess), plus the in-process
entry point for the quick checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core import synthetic
from core.editing import root
from core.io.asf_amc import read_asf_amc
from core.io.bvh import read_bvh, write_bvh
from tests.conftest import ROOT, shared_file

SCRIPT = ROOT / "scripts" / "edit.py"
sys.path.insert(0, str(ROOT / "scripts"))
import edit  # noqa: E402


def run(*args, cwd: Path) -> subprocess.CompletedProcess:
    """The script in a fresh process, from an unrelated folder."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"walk": tmp_path / "walk.bvh", "jump": tmp_path / "jump.bvh", "fast": tmp_path / "fast.bvh"}
    write_bvh(synthetic.turn(synthetic.walk(200), 60, 120, 60.0), paths["walk"])
    write_bvh(synthetic.jump(120), paths["jump"])
    write_bvh(synthetic.walk(200, speed=1.8, stride_hz=1.2), paths["fast"])
    return paths


def test_cut_then_paste_back_through_files(tmp_path, files):
    rest, clip, back = tmp_path / "rest.bvh", tmp_path / "clip.bvh", tmp_path / "back.bvh"
    result = run("cut", files["walk"], rest, "--start", 50, "--stop", 110, "--clip", clip, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert read_bvh(rest).n_frames == 140 and read_bvh(clip).n_frames == 60
    # Pasting the clip file back cannot know the clip's original entry step; pasting a copied
    # range of the original does.
    result = run("paste", rest, files["walk"], back, "--at", 50, "--start", 50, "--stop", 110, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    original = read_bvh(files["walk"])
    assert np.abs(read_bvh(back).world_positions() - original.world_positions()).max() < 1e-5
    assert "paste: wrote" in result.stdout


def test_blender_style_arguments_and_amc_output(tmp_path, files):
    out = tmp_path / "rev.amc"
    result = run("--", "reverse", files["walk"], out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    back = read_asf_amc(tmp_path / "rev.asf", out)
    original = read_bvh(files["walk"])
    idx = [0] + [back.skeleton.index(n) for n in original.skeleton.names[1:]]
    assert np.abs(back.world_positions()[::-1][:, idx] - original.world_positions()).max() < 1e-5


def test_errors_exit_with_status_and_message(tmp_path, files, capsys):
    out = tmp_path / "x.bvh"
    assert (
        edit.main(
            ["edit.py", "key-edit", str(files["walk"]), str(out), "--frame", "5", "--rotate", "Nope", "0", "0", "9"]
        )
        == 1
    )
    assert "unknown joint 'Nope'" in capsys.readouterr().err
    assert edit.main(["edit.py", "cut", str(files["walk"]), str(out), "--start", "50", "--stop", "500"]) == 2
    with pytest.raises(SystemExit) as exc:
        edit.main(["edit.py", "rotate", str(files["walk"]), str(out)])
    assert exc.value.code == 2


def report_of(tmp_path: Path, *args: str) -> dict:
    report = tmp_path / "report.json"
    assert edit.main(["edit.py", "--report", str(report), *map(str, args)]) == 0
    return json.loads(report.read_text())


def test_resample_rotate_and_key_edit(tmp_path, files):
    out = tmp_path / "out.bvh"
    rep = report_of(tmp_path, "resample", files["walk"], out, "--factor", "2")
    assert rep["frames"] == 399 and read_bvh(out).n_frames == 399
    assert report_of(tmp_path, "resample", files["walk"], out, "--fps", "30")["frames"] == 100
    report_of(tmp_path, "rotate", files["walk"], out, "--degrees", "90", "--pivot", "0", "0", "0")
    turned, original = read_bvh(out), read_bvh(files["walk"])
    assert np.allclose(root.track(turned, "y").headings - root.track(original, "y").headings, np.pi / 2, atol=1e-6)
    rep = report_of(
        tmp_path, "key-edit", files["walk"], out, "--frame", "100", "--rotate", "LeftArm", "0", "0", "30",
        "--translate", "Hips", "0", "-0.1", "0", "--width", "15",
    )  # fmt: skip
    edited = read_bvh(out)
    hips = original.skeleton.index("Hips")
    assert np.allclose(edited.translations[100, hips] - original.translations[100, hips], [0, -0.1, 0], atol=1e-6)
    assert np.allclose(edited.rotations[:85], original.rotations[:85], atol=1e-7)
    assert rep["joints"] == ["Hips", "LeftArm"]


def test_transition_blend_interpolate_and_pca(tmp_path, files):
    out = tmp_path / "out.bvh"
    rep = report_of(tmp_path, "transition", files["walk"], files["jump"], out, "--frame-a", "150", "--frame-b", "5")
    assert rep["blend"] == [150, 180] and rep["frames"] == 150 + 115
    assert {"skating_before", "skating_after", "continuity", "region"} <= set(rep)
    rep = report_of(tmp_path, "blend", files["walk"], files["jump"], out, "--joint", "LeftArm", "--no-stretch")
    assert read_bvh(out).n_frames == 200
    ev_a, ev_b = [str(60 * (0.25 + k) / 0.9) for k in range(3)], [str(60 * (0.25 + k) / 1.2) for k in range(3)]
    rep = report_of(
        tmp_path, "interpolate", files["walk"], files["fast"], out, "--coefficient", "0.5",
        "--events-a", *ev_a, "--events-b", *ev_b,
    )  # fmt: skip
    assert len(rep["events"]) == 3 and rep["frames"] > 100
    rep = report_of(tmp_path, "pca", files["walk"], files["fast"], "-o", out, "--value", "1.4", "--loops", "3")
    assert rep["cycles"] >= 4 and abs(sum(rep["explained_variance_ratio"]) - 1.0) < 1e-9
    assert read_bvh(out).n_frames > 60


def test_transition_of_real_captures_through_the_script(tmp_path):
    a = shared_file("cmu_bvh_cgspeed/02_01.bvh")
    b = shared_file("cmu_bvh_cgspeed/05_02.bvh")
    report = tmp_path / "r.json"
    result = run("--report", report, "transition", a, b, tmp_path / "t.bvh", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rep = json.loads(report.read_text())
    assert rep["skating_after"] < 0.05 * rep["skating_before"]
    assert rep["continuity"]["ratios"]["joint_jump"] < 1.5


@pytest.mark.blender
def test_runs_inside_blender_with_arguments_after_the_double_dash(tmp_path, files):
    pytest.importorskip("bpy")
    out = tmp_path / "r.bvh"
    code = (
        "import sys, runpy, bpy; "
        f"sys.argv = ['blender', '-b', '-P', {str(SCRIPT)!r}, '--', 'reverse', {str(files['walk'])!r}, {str(out)!r}]; "
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert read_bvh(out).n_frames == 200
