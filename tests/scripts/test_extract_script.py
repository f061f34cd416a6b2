"""The headless entry point, run as a user runs it (a subprocess), with and without Blender."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from core.channels import ChannelLayout, motion_from_values
from core.io.blender_bvh import blender_bvh_import
from core.io.bvh import read_bvh
from core.keyframes import position_errors, reconstruct
from tests.conftest import ROOT, shared_file

SCRIPT = ROOT / "scripts" / "extract_keyframes.py"


def run(*args, check=True):
    proc = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(proc.stdout + proc.stderr)
    return proc


def independent_errors(bvh_path, keys, rotate_mode="NATIVE"):
    """Mean and max of the measure (heads, tips and sides of every bone) on the armature Blender's
    importer makes (the core's model of it), and the old joints-only figures for comparison."""
    capture = read_bvh(bvh_path)
    skeleton, modes, values = blender_bvh_import(capture, rotate_mode)
    motion = motion_from_values(skeleton, ChannelLayout(modes), values, capture.n_frames, capture.fps)
    err = position_errors(motion, reconstruct(motion, np.array(keys)))
    joints = np.linalg.norm(capture.world_positions() - reconstruct(capture, np.array(keys)).world_positions(), axis=-1)
    assert err[:, : skeleton.n_joints] == pytest.approx(joints, rel=1e-3, abs=1e-4 * skeleton.size())
    return err.mean(), err.max()


def test_core_only_demo_writes_report_and_plot(tmp_path):
    run(
        "--demo",
        "-o",
        tmp_path,
        "--report",
        tmp_path / "r.json",
        "--plot",
        tmp_path / "p.png",
        "--count",
        30,
        "--no-blender",
        "--bvh",
    )
    report = json.loads((tmp_path / "r.json").read_text())
    for key in ("input", "frames", "fps", "joints", "method", "params", "keyframes", "error", "seconds"):
        assert key in report
    # the measure per frame, per bone, and its worst point: consistent with the figures
    per_frame, per_bone, worst = report["per_frame_error"], report["per_bone_error"], report["worst"]
    assert len(per_frame) == report["frames"] and np.mean(per_frame) == pytest.approx(report["error"]["position_mean"])
    assert len(per_bone) == report["joints"] == 21 and max(per_bone.values()) == report["error"]["position_max"]
    assert set(worst) == {"bone", "point", "frame", "error"} and worst["error"] == report["error"]["position_max"]
    assert per_bone[worst["bone"]] == worst["error"] and worst["point"] in {"head", "tip", "side"}
    assert per_frame[worst["frame"]] > 0 and "per_bone_max" not in report["error"]
    # the default method, as with Blender: the hybrid, 30 stored keys per channel on a grid of 8 × 30 poses
    assert report["method"] == "hybrid" and report["params"]["keys_per_channel"] == 30
    assert len(report["keyframes"]) == 240 == report["params"]["pose_keys"]
    assert report["keyframes"][0] == 0 and report["keyframes"][-1] == report["frames"] - 1
    assert (tmp_path / "p.png").stat().st_size > 10_000
    rebuilt = read_bvh(tmp_path / "demo_keys.bvh")
    assert rebuilt.n_frames == report["frames"]


@pytest.mark.blender
def test_bvh_through_blender_matches_independent_evaluation(tmp_path):
    pytest.importorskip("bpy")
    path = shared_file("cmu_bvh_cgspeed/02_01.bvh")
    run(path, "-o", tmp_path / "walk.blend", "--count", 20, "--method", "optimal", "--report", tmp_path / "walk.json")
    report = json.loads((tmp_path / "walk.json").read_text())
    assert (tmp_path / "walk.blend").exists() and len(report["keyframes"]) == 20
    mean, worst_core = independent_errors(path, report["keyframes"])
    assert report["error"]["position_mean"] == pytest.approx(mean, rel=0.01)
    assert report["error"]["position_max"] == pytest.approx(worst_core, rel=0.01)
    assert report["error"]["playback"]["position_mean"] > 0
    worst = report["worst"]  # Blender's playback: what the user sees
    assert worst["source"] == "playback" and worst["error"] == report["error"]["playback"]["position_max"]
    assert worst["scene_frame"] == report["first_frame"] + worst["frame"]
    assert report["per_bone_playback_error"][worst["bone"]] == worst["error"]
    assert max(report["per_bone_error"].values()) == pytest.approx(worst_core, rel=0.01)
    assert report["frames"] == 344 and report["joints"] == 31 and report["fps"] == pytest.approx(120, rel=1e-3)


@pytest.mark.blender
def test_folder_batch_survives_a_bad_file(tmp_path):
    pytest.importorskip("bpy")
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(shared_file("bandai_namco_1/dataset-1_run_normal_001.bvh"), folder / "run.bvh")
    (folder / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0\n")
    proc = run(folder, "-o", tmp_path / "out", "--ratio", 0.25, "--method", "threshold", check=False)
    assert proc.returncode == 1
    assert "broken.bvh, line 4: unexpected end of the hierarchy" in proc.stderr  # the core's reader names file and line
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["processed"] == 1 and summary["failed"] == 1
    assert (tmp_path / "out" / "run.blend").exists() and (tmp_path / "out" / "run.json").exists()
    assert len(json.loads((tmp_path / "out" / "run.json").read_text())["keyframes"]) == 6


@pytest.mark.blender
def test_blend_input_with_named_armature(tmp_path):
    pytest.importorskip("bpy")
    run("--demo", "-o", tmp_path / "demo.blend", "--count", 12)
    run(
        tmp_path / "demo.blend",
        "--armature",
        "Demo",
        "-o",
        tmp_path / "again.blend",
        "--max-error",
        0.1,
        "--report",
        tmp_path / "again.json",
    )
    report = json.loads((tmp_path / "again.json").read_text())
    assert report["error"]["position_max"] <= 0.1
    assert report["source_action"] == "Demo" or report["source_action"].startswith("Demo")
    proc = run(tmp_path / "demo.blend", "--armature", "Nope", "-o", tmp_path / "x.blend", check=False)
    assert proc.returncode == 1 and "no armature called 'Nope'" in proc.stderr


@pytest.mark.blender
def test_default_is_the_hybrid_at_the_stored_key_budget(tmp_path):
    pytest.importorskip("bpy")
    run("--demo", "-o", tmp_path / "demo.blend", "--ratio", 0.05, "--report", tmp_path / "demo.json")
    report = json.loads((tmp_path / "demo.json").read_text())
    assert report["method"] == "hybrid" and report["params"]["keys_per_channel"] == round(0.05 * report["frames"])
    assert (
        report["params"]["stored_keys"]
        == report["params"]["keys_per_channel"] * 21 * 4 + 3 * report["params"]["keys_per_channel"]
    )
    assert report["error"]["playback"]["position_mean"] == pytest.approx(report["error"]["position_mean"], rel=0.02)


@pytest.mark.blender
@pytest.mark.parametrize("capture", ["cmu_bvh_cgspeed/02_01.bvh", "mixamo/Walk-In-Circle.bvh"])
def test_hybrid_without_blender_reports_what_blender_reports(tmp_path, capture):
    """The default method with and without Blender: the same pose keys, stored keys and errors."""
    pytest.importorskip("bpy")
    source = shared_file(capture)
    run(source, "-o", tmp_path / "with", "--ratio", 0.05)
    run(source, "-o", tmp_path / "without", "--ratio", 0.05, "--no-blender")
    stem = source.stem
    blender = json.loads((tmp_path / "with" / f"{stem}.json").read_text())
    core = json.loads((tmp_path / "without" / f"{stem}.json").read_text())
    assert core["method"] == blender["method"] == "hybrid"
    assert core["keyframes"] == blender["keyframes"]
    assert core["params"]["stored_keys"] == blender["params"]["stored_keys"]
    for name in ("position_mean", "position_p95"):
        assert core["error"][name] == pytest.approx(blender["error"][name], rel=0.01)
    assert "playback" not in core["error"] and "playback" in blender["error"]


@pytest.mark.blender
@pytest.mark.parametrize("target", [["--max-angle", "3"], ["--max-error", "0.03"]])
def test_bounds_take_the_hybrid_by_default_with_and_without_blender(tmp_path, target):
    """--max-error and --max-angle with no --method: the hybrid, as --help says; the core-only run
    and Blender's reach the same core function with the same target, so they keep the same keys."""
    pytest.importorskip("bpy")
    reports = {}
    for mode in ("core", "blender"):
        extra = ["--no-blender"] if mode == "core" else []
        run("--demo", "-o", tmp_path / mode, *target, *extra)
        reports[mode] = json.loads((tmp_path / mode / "demo.json").read_text())
    core, blender = reports["core"], reports["blender"]
    kind, bound = target[0][2:].replace("-", "_"), float(target[1])
    for report in (core, blender):
        assert report["method"] == "hybrid" and report["count_means"] == "keys per channel"
        assert report["target"] == {kind: bound} and report["params"]["bound_met"]
        figure = report["error"]["angle_max" if kind == "max_angle" else "position_max"]
        assert 0.3 * bound < figure <= bound
    # the same code on the same target; Blender holds the demo's keys in float32, so near-equal choices
    # of the greedy channel pass and of the bound's repair may go the other way (so the two are
    # not bit-identical): both meet the bound, with about as many keys
    assert core["params"]["stored_keys"] == pytest.approx(blender["params"]["stored_keys"], rel=0.2)
    played = blender["error"]["playback"]["angle_max" if kind == "max_angle" else "position_max"]
    assert played <= bound * (1 + 1e-4)  # Blender's float32 playback


def test_contact_sheet_of_the_keyframe_poses(tmp_path):
    """``--sheet``: the keyframes drawn (a summary when there are many), one PNG; refused for a folder."""
    mpimg = pytest.importorskip("matplotlib.image")
    sheet = tmp_path / "s.png"
    run("--demo", "-o", tmp_path, "--method", "simplify", "--count", 8, "--no-blender", "--sheet", sheet)
    report = json.loads((tmp_path / "demo.json").read_text())
    assert report["outputs"]["sheet"] == str(sheet)
    image = mpimg.imread(sheet)
    assert image.ndim == 3 and image.shape[0] >= 180 and image.std() > 0.05
    folder = tmp_path / "clips"
    folder.mkdir()
    for name in ("a.bvh", "b.bvh"):
        shutil.copy(shared_file("cmu_bvh_cgspeed/02_01.bvh"), folder / name)
    proc = run(folder, "-o", tmp_path / "out", "--sheet", tmp_path / "x.png", "--no-blender", check=False)
    assert proc.returncode == 2 and "--sheet" in proc.stderr
