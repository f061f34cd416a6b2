"""``library`` (cli/library.py, scripts/library.py): batches in a plain loop and on a local Dask
cluster (127.0.0.1), failures reported, resumable, the index, search by pose, contact sheets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, shared_file

sys.path.insert(0, str(ROOT / "scripts"))
import _package  # noqa: E402

_package.load()
from mocap_workbench.cli import library  # noqa: E402

mpimg = pytest.importorskip("matplotlib.image")
CLIPS = ("cmu_bvh_cgspeed/02_01.bvh", "bandai_namco_1/dataset-1_walk_normal_001.bvh", "cmu_bvh_cgspeed/06_14.bvh")


@pytest.fixture
def folder(tmp_path):
    """Three real clips, one in a sub-folder, and a broken BVH."""
    src = tmp_path / "clips"
    (src / "sub").mkdir(parents=True)
    for i, rel in enumerate(CLIPS):
        shutil.copy(shared_file(rel), src / ("sub" if i == 2 else "") / Path(rel).name)
    (src / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 zero\n}\n")
    return src


def run(*args: str) -> int:
    return library.command([str(a) for a in args])


def test_a_batch_writes_every_clip_and_reports_the_broken_one(folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert run("process", folder, "-o", out, "--workers", "0") == 1  # one clip failed
    text = capsys.readouterr().out
    assert "FAILED" in text and "broken.bvh" in text and "line 4" in text
    for stem in ("02_01", "dataset-1_walk_normal_001", "sub/06_14"):
        record = json.loads((out / f"{stem}.json").read_text())
        entry = record["entry"]
        assert entry["keyframes"][0] == 0 and entry["keyframes"][-1] == entry["frames"] - 1
        sheet = mpimg.imread(out / f"{stem}.png")
        assert sheet.shape[0] > 100 and sheet.std() > 0.05  # something is drawn
    assert not (out / "broken.json").exists() and not list(out.rglob("*.tmp"))
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert len(index) == 3 and all(len(e["poses"]) == len(e["keyframes"]) for e in index)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failed"] == 1 and summary["failures"][0]["file"].endswith("broken.bvh")


def test_a_batch_resumes_where_it_stopped(folder, tmp_path, capsys):
    out = tmp_path / "out"
    run("process", folder, "-o", out, "--workers", "0")
    before = (out / "02_01.json").stat().st_mtime_ns
    (out / "sub" / "06_14.json").unlink()  # as if killed before this clip
    capsys.readouterr()
    run("process", folder, "-o", out, "--workers", "0")
    err = capsys.readouterr().err
    assert "4 clips, 2 up to date, 2 to process" in err  # the missing one and the broken one
    assert (out / "02_01.json").stat().st_mtime_ns == before and (out / "sub" / "06_14.json").exists()
    os.utime(folder / "02_01.bvh")  # the clip changed: processed again
    run("process", folder, "-o", out, "--workers", "0")
    assert "1 up to date" not in capsys.readouterr().err
    run("process", folder, "-o", out, "--workers", "0", "--count", "5")  # other options: all again
    assert "0 up to date, 4 to process" in capsys.readouterr().err
    assert len(json.loads((out / "02_01.json").read_text())["entry"]["keyframes"]) == 5


def test_dask_gives_the_plain_loops_results(folder, tmp_path):
    plain, dask_out = tmp_path / "plain", tmp_path / "dask"
    run("process", folder, "-o", plain, "--workers", "0")
    assert run("process", folder, "-o", dask_out, "--workers", "2") == 1
    for stem in ("02_01", "dataset-1_walk_normal_001", "sub/06_14"):
        a = json.loads((plain / f"{stem}.json").read_text())["entry"]
        b = json.loads((dask_out / f"{stem}.json").read_text())["entry"]
        assert a["keyframes"] == b["keyframes"] and np.isclose(a["error_mean"], b["error_mean"])


def _dies_first_time(marker: str, name: str) -> dict:
    """A task that kills its worker the first time it runs (the marker file remembers), then succeeds."""
    if not os.path.exists(marker):
        Path(marker).write_text("died")
        os._exit(1)
    return {"entry": {"file": name}}


def _always_dies(marker: str, name: str) -> dict:
    os._exit(1)


def test_a_dead_worker_is_retried_and_then_reported(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import this test module by name
    tasks = [(str(tmp_path / "marker"), "a")]
    progress = library.Progress(1)
    out = library.run_batch(tasks, 2, None, 3, progress, function=_dies_first_time)
    assert out == [{"entry": {"file": "a"}}]  # retried on a new worker, succeeded
    out = library.run_batch([(str(tmp_path / "m2"), "b")], 1, None, 1, library.Progress(1), function=_always_dies)
    assert "error" in out[0] and "KilledWorker" in out[0]["error"]


def test_index_and_search_by_pose(folder, tmp_path, capsys):
    out = tmp_path / "out"
    run("process", folder, "-o", out, "--workers", "0")
    index = tmp_path / "index.jsonl"
    assert run("index", out, "-o", index) == 0
    capsys.readouterr()
    assert run("search", index, "--like", folder / "02_01.bvh", "--top", "3") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and not any(line.endswith("02_01.bvh") for line in lines)  # the query is no answer
    # the other walk (a Bandai walk) is more like the CMU walk than the CMU run is
    assert lines[0].split()[-1].endswith("dataset-1_walk_normal_001.bvh")
    copy = tmp_path / "copy_of_06_14.bvh"
    shutil.copy(folder / "sub" / "06_14.bvh", copy)
    assert run("search", index, "--like", copy, "--frame", "100") == 0  # a file outside the index
    assert capsys.readouterr().out.splitlines()[0].split()[-1].endswith("06_14.bvh")  # its keyframe poses nearest
    assert run("search", index, "--like", "06_14.bvh", "--frame", "100") == 0  # a clip of the index by name
    assert run("search", index, "--like", folder / "02_01.bvh", "--frame", "100000") == 2


def test_index_of_a_raw_folder_and_a_sheet(folder, tmp_path):
    index = tmp_path / "raw.jsonl"
    assert run("index", folder, "-o", index) == 0
    assert len(index.read_text().splitlines()) == 3
    png = tmp_path / "sheet.png"
    assert run("sheet", folder / "02_01.bvh", "-o", png, "--count", "6") == 0
    assert mpimg.imread(png).ndim == 3


def test_bad_arguments_are_one_line_and_status_2(folder, tmp_path):
    script = ROOT / "scripts" / "library.py"
    for args in (["process", str(folder), "-o", str(folder)], ["process", str(folder), "-o", "x", "--ratio", "2"],
                 ["search", "nothing.jsonl"], ["frobnicate"]):  # fmt: skip
        r = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "error" in r.stderr


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_killed_batch_leaves_whole_files_and_resumes(tmp_path, workers):
    """The batch process killed (SIGKILL) once some clips are done, in a plain loop or with a local
    cluster of 2 workers: every file it wrote is whole, no worker outlives it, the next run skips those
    clips and finishes the rest."""
    import signal
    import time

    psutil = pytest.importorskip("psutil")
    if workers != "0":
        pytest.importorskip("distributed")

    src = tmp_path / "clips"
    src.mkdir()
    for i in range(20):
        shutil.copy(shared_file("cmu_bvh_cgspeed/02_01.bvh"), src / f"walk{i:02d}.bvh")
    out = tmp_path / "out"
    cmd = [sys.executable, str(ROOT / "scripts" / "library.py"), "process", str(src), "-o", str(out), "--workers",
           workers]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and len(list(out.glob("*.json"))) < 2 and proc.poll() is None:
        time.sleep(0.05)
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children or workers == "0"  # the cluster's worker processes
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    gone, alive = psutil.wait_procs(children, timeout=60)
    assert not alive, f"{len(alive)} worker processes outlived the killed batch"
    done = sorted(out.glob("walk*.json"))
    assert 2 <= len(done) < 20, "the batch should have been killed part way"
    for path in done:
        json.loads(path.read_text())  # whole JSON
        assert mpimg.imread(path.with_suffix(".png")).ndim == 3  # whole PNG
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"20 clips, {len(done)} up to date, {20 - len(done)} to process" in r.stderr
    assert len(list(out.glob("walk*.json"))) == 20 and not list(out.rglob(".*.tmp*"))


def test_a_batch_retargets_every_clip_onto_one_skeleton(folder, tmp_path, capsys):
    """``--retarget-onto``: every clip played by the target's skeleton (its joints in the written BVH);
    a clip whose body cannot be mapped fails loudly and the others go on."""
    from mocap_workbench.core.io.bvh import read_bvh

    target = shared_file("bandai_namco_1/dataset-1_walk_tired_001.bvh")
    (folder / "two_bones.bvh").write_text(
        "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n JOINT B\n {\n"
        "  OFFSET 0 1 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\n"
        "MOTION\nFrames: 3\nFrame Time: 0.0333\n0 0 0 0 0 0\n0 0 0 5 0 0\n0 0 0 9 0 0\n"
    )
    out = tmp_path / "out"
    assert run("process", folder, "-o", out, "--workers", "0", "--retarget-onto", target, "--bvh", "--count", "4") == 1
    text = capsys.readouterr().out
    assert "FAILED" in text and "broken.bvh" in text
    failed = {Path(f["file"]).name: f["error"] for f in json.loads((out / "summary.json").read_text())["failures"]}
    assert set(failed) == {"broken.bvh", "two_bones.bvh"} and "map" in failed["two_bones.bvh"]
    names = read_bvh(target).skeleton.names
    for stem in ("02_01", "sub/06_14"):
        played = read_bvh(out / f"{stem}_keys.bvh")
        assert played.skeleton.names == names
    assert run("process", folder, "-o", out, "--retarget-onto", tmp_path / "nothing.bvh") == 2


def test_blend_outputs_hold_the_sparse_action(tmp_path):
    """``--blend``: each clip's .blend as Extract Keyframes writes it (Blender's importer, a new sparse
    action); checked by opening the file in a separate Blender process."""
    pytest.importorskip("bpy")
    src = tmp_path / "clips"
    src.mkdir()
    shutil.copy(shared_file("cmu_bvh_cgspeed/02_01.bvh"), src / "walk.bvh")
    out = tmp_path / "out"
    assert run("process", src, "-o", out, "--workers", "0", "--count", "6", "--blend") == 0
    record = json.loads((out / "walk.json").read_text())
    assert record["options"]["blend"] and len(record["entry"]["keyframes"]) == 6
    check = (  # every F-curve of the new action (Blender 4.4+ keeps them in the layered action's channel bags)
        "import bpy, sys; bpy.ops.wm.open_mainfile(filepath=sys.argv[1], load_ui=False, use_scripts=False); "
        "a = bpy.data.actions.get('walk_keys'); "
        "fcs = ([] if a is None else list(a.fcurves) if hasattr(a, 'fcurves') and len(a.fcurves) else "
        "[f for layer in a.layers for strip in layer.strips for bag in strip.channelbags for f in bag.fcurves]); "
        "print('KEYS', -1 if a is None else max(len(f.keyframe_points) for f in fcs))"
    )
    r = subprocess.run([sys.executable, "-c", check, str(out / "walk.blend")], capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    keys = int(r.stdout.split("KEYS")[-1].split()[0])
    assert 6 <= keys <= 6 + 3  # the sparse action: the 6 keyframes (and a few rotation keys following the slerp)
    blend_report = json.loads((out / "walk_blend.json").read_text())
    assert blend_report["method"] == "simplify" and len(blend_report["keyframes"]) == 6


def test_a_running_cluster_takes_the_batch_by_its_address(folder, tmp_path):
    """``--scheduler ADDRESS``: a Dask cluster started elsewhere (here a LocalCluster on 127.0.0.1, as
    dask-jobqueue or Kubernetes would run one) loads the package on its workers and runs every clip."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:  # fmt: skip
        code = run("process", folder, "-o", tmp_path / "out", "--scheduler", cluster.scheduler_address)
        assert code == 1  # the broken clip
        assert len(list((tmp_path / "out").rglob("*.png"))) == 3
        with distributed.Client(cluster.scheduler_address) as client:  # the cluster is still up for others
            assert client.submit(sum, [1, 2]).result() == 3
