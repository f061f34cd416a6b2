"""scripts/convert.py run as a separate process, the way users and batch jobs call it."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core import synthetic
from core.io.asf_amc import read_asf_amc, write_asf_amc
from core.io.bvh import read_bvh, write_bvh
from tests.conftest import ROOT, shared_file

SCRIPT = ROOT / "scripts" / "convert.py"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the script from an unrelated folder: it must find the repository by itself."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def walk_bvh(tmp_path: Path) -> Path:
    path = tmp_path / "in" / "walk.bvh"
    path.parent.mkdir()
    write_bvh(synthetic.walk(40), path)
    return path


def test_bvh_file_to_amc_writes_the_asf_next_to_it(tmp_path, walk_bvh):
    result = run(walk_bvh, tmp_path / "out" / "walk.amc", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "converted 1 of 1" in result.stdout
    back = read_asf_amc(tmp_path / "out" / "walk.asf", tmp_path / "out" / "walk.amc")
    src = read_bvh(walk_bvh)
    idx = [0] + [back.skeleton.index(n) for n in src.skeleton.names[1:]]
    assert np.abs(back.world_positions()[:, idx] - src.world_positions()).max() < 1e-6
    assert np.isclose(back.fps, src.fps)


def test_amc_to_bvh_finds_the_asf_by_name_prefix_and_takes_fps(tmp_path):
    folder = tmp_path / "cmu"
    folder.mkdir()
    motion = synthetic.walk(20)
    write_asf_amc(motion, folder / "07.asf", folder / "07_01.amc")
    (folder / "unrelated.asf").write_text(":version 1.10\n")
    result = run(folder / "07_01.amc", tmp_path / "x.bvh", "--fps", "30", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = read_bvh(tmp_path / "x.bvh")
    assert np.isclose(out.fps, 30) and out.n_frames == 20
    result = run(folder / "07_01.amc", tmp_path / "y.bvh", "--asf", folder / "unrelated.asf", cwd=tmp_path)
    assert result.returncode == 1 and "unrelated.asf" in result.stderr


def test_folder_batch_reports_failures_and_converts_the_rest(tmp_path, walk_bvh):
    source = walk_bvh.parent
    write_bvh(synthetic.walk(10), source / "short.bvh")
    (source / "broken.bvh").write_text("HIERARCHY\nROOT a\n{\n  OFFSET 0 zero 0\n")
    (source / "notes.txt").write_text("not a motion")
    result = run(source, tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 1
    assert "broken.bvh" in result.stderr and "line 4" in result.stderr and "expected a number" in result.stderr
    assert "converted 2 of 3 file(s), 1 failed" in result.stdout
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["short.amc", "short.asf", "walk.amc", "walk.asf"]


def test_folder_batch_of_amc_to_bvh(tmp_path):
    source = tmp_path / "amc"
    source.mkdir()
    for take, n in (("01_01", 12), ("01_02", 7)):
        write_asf_amc(synthetic.walk(n), tmp_path / "skel.asf", source / f"{take}.amc")
    (tmp_path / "skel.asf").rename(source / "01.asf")
    result = run(source, tmp_path / "bvh", "--to", "bvh", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [read_bvh(tmp_path / "bvh" / f"{t}.bvh").n_frames for t in ("01_01", "01_02")] == [12, 7]


def test_blender_argv_is_ignored_before_double_dash(tmp_path, walk_bvh, monkeypatch, capsys):
    """``blender -b -P scripts/convert.py -- IN OUT``: Blender's own arguments come first."""
    argv = ["blender", "-b", "--factory-startup", "-P", str(SCRIPT), "--", str(walk_bvh), str(tmp_path / "o.amc")]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as info:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert info.value.code == 0
    assert "converted 1 of 1" in capsys.readouterr().out and (tmp_path / "o.asf").exists()


def test_usage_errors_exit_with_2(tmp_path):
    assert run(tmp_path / "missing.bvh", tmp_path / "o.amc", cwd=tmp_path).returncode == 2
    assert run(cwd=tmp_path).returncode == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run(empty, tmp_path / "o", cwd=tmp_path)
    assert result.returncode == 2 and "no .bvh or .amc" in result.stderr


def test_real_cmu_amc_to_bvh(tmp_path):
    amc = shared_file("cmu_asf_amc/01_01.amc")
    result = run(amc, tmp_path / "01_01.bvh", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = read_bvh(tmp_path / "01_01.bvh")
    src = read_asf_amc(shared_file("cmu_asf_amc/01.asf"), amc)
    assert out.n_frames == 2751 and np.isclose(out.fps, 120)
    assert np.abs(out.world_positions() - src.world_positions()).max() < 1e-6


MAKE_BLEND = """
import sys
sys.path.insert(0, {scripts!r})
import _package, bpy
_package.load()
from mocap_workbench.addon.acclaim import armature_io as acclaim
from mocap_workbench.core.io.convert import load_acclaim
bpy.ops.wm.read_homefile(use_empty=True)
takes = load_acclaim([{asf!r}, {amc!r}])
acclaim.import_takes(bpy.context, takes, acclaim.ImportOptions(scale=0.5, rotation_mode="ZXY"))
bpy.ops.wm.save_as_mainfile(filepath={blend!r})
"""


@pytest.mark.blender
def test_blend_input_through_blender(tmp_path):
    """A .blend holding an armature imported from ASF/AMC (scaled, Euler keys) converts back to
    ASF/AMC and to BVH with the source's world positions (import scale and turn undone)."""
    pytest.importorskip("bpy")
    motion = synthetic.walk(30)
    write_asf_amc(motion, tmp_path / "walk.asf", tmp_path / "walk.amc")
    blend = tmp_path / "scene.blend"
    code = MAKE_BLEND.format(
        scripts=str(ROOT / "scripts"), asf=str(tmp_path / "walk.asf"), amc=str(tmp_path / "walk.amc"), blend=str(blend)
    )
    made = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0 and blend.exists(), made.stderr
    source = read_asf_amc(tmp_path / "walk.asf", tmp_path / "walk.amc")
    size = source.skeleton.size()
    result = run(blend, tmp_path / "out" / "back.amc", "--fps", "30", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    back = read_asf_amc(tmp_path / "out" / "back.asf", tmp_path / "out" / "back.amc")
    assert back.skeleton.names == source.skeleton.names and back.skeleton.channels == source.skeleton.channels
    assert back.fps == 30 and np.abs(back.world_positions() - source.world_positions()).max() < 1e-5 * size
    result = run(blend, tmp_path / "out" / "back.bvh", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    bvh = read_bvh(tmp_path / "out" / "back.bvh")
    idx = [motion.skeleton.index(n) for n in bvh.skeleton.names]  # the walk's own bones: no ASF root, no links
    assert np.abs(bvh.world_positions() - motion.world_positions()[:, idx]).max() < 1e-5 * size
    result = run(blend, tmp_path / "x.amc", "--armature", "Nope", cwd=tmp_path)
    assert result.returncode == 1 and "no armature called 'Nope'" in result.stderr
