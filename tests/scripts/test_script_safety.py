"""Issue #14 (3, 5): every script, run as a user runs it, answers a bad argument with one line and
exit status 2, never writes over an input or a file it was not asked to write, writes atomically,
and opens untrusted .blend files without running their Python."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import synthetic
from core.io.asf_amc import write_asf_amc
from core.io.bvh import write_bvh
from core.motion import Motion
from tests.conftest import ROOT, blend_json

SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))
import _package  # noqa: E402

_arguments = _package.command("_arguments")
_files = _package.command("_files")

# Plain Python without Blender, even where the bpy module is installed: hide it (quicker, and the
# checks under test run before Blender is needed).
NO_BPY = "import runpy, sys; sys.modules['bpy'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
# A user whose Blender runs the Python in .blend files (Auto Run Python Scripts on): the scripts
# must turn it off for their run.
AUTORUN = (
    "import runpy, sys, bpy; bpy.context.preferences.filepaths.use_scripts_auto_execute = True; "
    "bpy.ops.wm.read_homefile(use_empty=True); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def run(script: str, *args, cwd: Path, mode: str = "plain", timeout: float = 120) -> subprocess.CompletedProcess:
    """``python scripts/<script>.py ARGS`` from ``cwd``; mode ``plain`` hides bpy, ``blender`` uses it,
    ``autorun`` uses it with Auto Run Python Scripts turned on first."""
    path = str(SCRIPTS / f"{script}.py")
    prefix = {"plain": ["-c", NO_BPY, path], "blender": [path], "autorun": ["-c", AUTORUN, path]}[mode]
    return subprocess.run(
        [sys.executable, *prefix, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` (hidden temporary files included) with its bytes and mtime."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    }


def one_line_error(proc: subprocess.CompletedProcess, prog: str) -> str:
    """The single stderr line of a refused run (no traceback), checked."""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(prog) and ": error: " in lines[0], lines[0]  # "edit.py reverse: error: …"
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """walk.bvh, w2.bvh (a faster walk), tall.bvh (a 1.4× skeleton), map.json and cmu/01.asf + 01_01.amc."""
    write_bvh(synthetic.walk(60), tmp_path / "walk.bvh")
    write_bvh(synthetic.walk(60, speed=1.8, stride_hz=1.2), tmp_path / "w2.bvh")
    write_bvh(Motion.rest(synthetic.humanoid(scale=1.4), 2, 60.0), tmp_path / "tall.bvh")
    (tmp_path / "map.json").write_text("{}")
    (tmp_path / "cmu").mkdir()
    write_asf_amc(synthetic.walk(30), tmp_path / "cmu" / "01.asf", tmp_path / "cmu" / "01_01.amc")
    return tmp_path


BAD_VALUES = [
    ("convert", ["walk.bvh", "o.amc", "--fps", "inf"], "--fps"),
    ("convert", ["walk.bvh", "o.amc", "--fps", "nan"], "--fps"),
    ("convert", ["walk.bvh", "o.amc", "--fps", "0"], "--fps"),
    ("convert", ["walk.bvh", "o.amc", "--fps", "-30"], "--fps"),
    ("edit", ["rotate", "walk.bvh", "o.bvh", "--degrees", "nan"], "--degrees"),
    ("edit", ["rotate", "walk.bvh", "o.bvh", "--degrees", "90", "--pivot", "nan", "0", "0"], "--pivot"),
    ("edit", ["resample", "walk.bvh", "o.bvh", "--fps", "inf"], "--fps"),
    ("edit", ["resample", "walk.bvh", "o.bvh", "--fps", "1e9"], "--fps"),
    ("edit", ["resample", "walk.bvh", "o.bvh", "--factor", "inf"], "--factor"),
    ("edit", ["resample", "walk.bvh", "o.bvh", "--factor", "1e6"], "--factor"),
    ("edit", ["resample", "walk.bvh", "o.bvh", "--factor", "0"], "--factor"),
    ("edit", ["key-edit", "walk.bvh", "o.bvh", "--frame", "99999", "--rotate", "Hips", "0", "0", "9"], "--frame"),
    ("edit", ["key-edit", "walk.bvh", "o.bvh", "--frame", "5", "--rotate", "Hips", "0", "nan", "9"], "--rotate"),
    (
        "edit",
        ["key-edit", "walk.bvh", "o.bvh", "--frame", "5", "--set-rotation", "Hips", "0", "0", "0", "0"],
        "--set-rotation",
    ),
    (
        "edit",
        ["key-edit", "walk.bvh", "o.bvh", "--frame", "5", "--width", "inf", "--rotate", "Hips", "0", "0", "9"],
        "--width",
    ),
    ("edit", ["interpolate", "walk.bvh", "w2.bvh", "o.bvh", "--coefficient", "0.5", "--loop-a", "100000"], "--loop-a"),
    ("edit", ["interpolate", "walk.bvh", "w2.bvh", "o.bvh", "--coefficient", "nan"], "--coefficient"),
    ("edit", ["interpolate", "walk.bvh", "w2.bvh", "o.bvh", "--coefficient", "0.5", "--speed", "1e-9"], "--speed"),
    ("edit", ["interpolate", "walk.bvh", "w2.bvh", "o.bvh", "--coefficient", "0.5", "--speed", "11"], "--speed"),
    ("edit", ["cut", "walk.bvh", "o.bvh", "--start", "10", "--stop", "500"], "--stop"),
    ("edit", ["cut", "walk.bvh", "o.bvh", "--start", "30", "--stop", "20"], "--stop"),
    ("edit", ["paste", "walk.bvh", "w2.bvh", "o.bvh", "--at", "9999"], "--at"),
    ("edit", ["blend", "walk.bvh", "w2.bvh", "o.bvh", "--joint", "LeftArm", "--weight", "1.5"], "--weight"),
    ("edit", ["blend", "walk.bvh", "w2.bvh", "o.bvh", "--joint", "LeftArm", "--offset", "600"], "--offset"),
    ("edit", ["transition", "walk.bvh", "w2.bvh", "o.bvh", "--window", "nan"], "--window"),
    ("edit", ["transition", "walk.bvh", "w2.bvh", "o.bvh", "--frame-a", "700"], "--frame-a"),
    ("edit", ["pca", "walk.bvh", "w2.bvh", "-o", "o.bvh", "--value", "1", "--loops", "0"], "--loops"),
    ("edit", ["pca", "walk.bvh", "w2.bvh", "-o", "o.bvh", "--value", "1", "--loops", "100000000"], "--loops"),
    ("edit", ["--up", "sideways", "reverse", "walk.bvh", "o.bvh"], "--up"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--scale", "nan"], "--scale"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--scale", "inf"], "--scale"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--scale", "0"], "--scale"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--floor-level", "nan"], "--floor-level"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--extract-ratio", "0"], "--extract-ratio"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--extract-threshold", "nan"], "--extract-threshold"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--extract-max-error", "inf"], "--extract-max-error"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--extract-count", "0"], "--extract-count"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--physics", "--target-mass", "-70"], "--target-mass"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--physics", "--stiffness", "inf"], "--stiffness"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--ratio", "1.5"], "--ratio"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--ratio", "0"], "--ratio"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--count", "0"], "--count"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--threshold", "nan"], "--threshold"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--max-error", "inf"], "--max-error"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--grid", "0"], "--grid"),
]


@pytest.mark.parametrize(
    ("script", "args", "option"), BAD_VALUES, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_bad_values_exit_2_with_one_line_and_write_nothing(work, script, args, option):
    before = snapshot(work)
    start = time.perf_counter()
    proc = run(script, *args, cwd=work, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = one_line_error(proc, f"{script}.py")
    assert option in line
    assert time.perf_counter() - start < 30  # refused up front, not after minutes of work
    assert snapshot(work) == before


OVERWRITES = [
    ("convert", ["walk.bvh", "walk.bvh"], "walk.bvh"),
    ("convert", ["cmu/01_01.amc", "cmu/01_01.amc"], "01_01.amc"),
    ("convert", ["cmu/01_01.amc", "cmu/01.amc"], "01.asf"),  # its .asf would be the input's skeleton
    ("convert", ["cmu", "cmu", "--to", "amc"], "01_01.amc"),
    ("edit", ["reverse", "walk.bvh", "walk.bvh"], "walk.bvh"),
    ("edit", ["reverse", "walk.bvh", "./walk.bvh"], "walk.bvh"),
    ("edit", ["--report", "w2.bvh", "reverse", "w2.bvh", "o.bvh"], "w2.bvh"),
    ("edit", ["cut", "walk.bvh", "o.bvh", "--start", "5", "--stop", "9", "--clip", "walk.bvh"], "walk.bvh"),
    ("edit", ["transition", "walk.bvh", "w2.bvh", "w2.bvh"], "w2.bvh"),
    ("edit", ["reverse", "cmu/01_01.amc", "cmu/01.amc"], "01.asf"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "walk.bvh"], "walk.bvh"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "tall.bvh"], "tall.bvh"),
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "map.bvh", "--map", "map.json"], "map.json"),  # its report
    ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--report", "walk.bvh"], "walk.bvh"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--report", "walk.bvh"], "walk.bvh"),
    ("extract_keyframes", ["walk.bvh", "-o", "out", "--plot", "walk.bvh"], "walk.bvh"),
]


@pytest.mark.parametrize(
    ("script", "args", "named"), OVERWRITES, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_an_input_is_never_overwritten(work, script, args, named):
    before = snapshot(work)
    proc = run(script, *args, cwd=work)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = one_line_error(proc, f"{script}.py")
    assert named in line and "is also an input" in line and "--force" in line
    assert snapshot(work) == before


def test_force_allows_replacing_an_input(work):
    original = (work / "walk.bvh").read_bytes()
    proc = run("edit", "reverse", "walk.bvh", "walk.bvh", "--force", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert (work / "walk.bvh").read_bytes() != original
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".")) == []  # no temporary file left


def test_convert_never_replaces_a_different_asf_not_asked_for(work):
    """``convert x.bvh cmu/01.amc`` would replace 01.asf, the skeleton every 01_* take shares."""
    asf = work / "cmu" / "01.asf"
    before = snapshot(work)
    proc = run("convert", "tall.bvh", "cmu/01.amc", cwd=work)
    assert proc.returncode == 2
    assert "would replace cmu/01.asf" in proc.stderr and "--force" in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(work) == before  # neither 01.asf replaced nor 01.amc written
    proc = run("edit", "reverse", "tall.bvh", "cmu/01.amc", cwd=work)  # edit.py writes through the same helper
    assert proc.returncode == 2 and "would replace cmu/01.asf" in one_line_error(proc, "edit.py reverse")
    assert snapshot(work) == before
    # the same skeleton: the .asf would not change, so it is left alone (same bytes, same time stamp)
    stamp = asf.stat().st_mtime_ns
    proc = run("convert", "walk.bvh", "cmu/01.amc", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert asf.stat().st_mtime_ns == stamp and (work / "cmu" / "01.amc").exists()
    proc = run("convert", "tall.bvh", "cmu/01.amc", "--force", cwd=work)
    assert proc.returncode == 0 and asf.read_bytes() != before["cmu/01.asf"][0]


@pytest.mark.parametrize(
    ("script", "args"),
    [
        ("extract_keyframes", ["walk.bvh", "-o", "walk.bvh/sub/x.blend"]),
        ("extract_keyframes", ["walk.bvh", "-o", "walk.bvh/sub"]),
        ("convert", ["walk.bvh", "walk.bvh/sub/x.amc"]),
        ("edit", ["reverse", "walk.bvh", "walk.bvh/sub/x.bvh"]),
        ("edit", ["--report", "cmu", "reverse", "walk.bvh", "o.bvh"]),
        ("retarget", ["walk.bvh", "tall.bvh", "-o", "walk.bvh/sub/x.bvh"]),
        ("retarget", ["walk.bvh", "tall.bvh", "-o", "o.bvh", "--report", "walk.bvh/r.json"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_an_output_path_under_a_file_is_one_line(work, script, args):
    before = snapshot(work)
    proc = run(script, *args, cwd=work)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = one_line_error(proc, f"{script}.py")
    assert "cannot write" in line
    assert snapshot(work) == before


def test_malformed_input_exits_1_with_file_and_line(work):
    (work / "broken.bvh").write_text("HIERARCHY\nROOT a\n{\n  OFFSET 0 zero 0\n")
    before = snapshot(work)
    for script, args, prog in (
        ("edit", ["reverse", "broken.bvh", "o.bvh"], "edit.py reverse"),
        ("retarget", ["broken.bvh", "tall.bvh", "-o", "o.bvh"], None),
        ("extract_keyframes", ["broken.bvh", "-o", "out"], None),
        ("convert", ["broken.bvh", "o.amc"], None),
    ):
        proc = run(script, *args, cwd=work)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "broken.bvh, line 4" in proc.stderr and "Traceback" not in proc.stderr
        if prog:
            one_line_error(proc, prog)
        assert not (work / "o.bvh").exists() and not (work / "o.amc").exists()
    assert snapshot(work) == before


# --- the atomic writer ---------------------------------------------------------------------------


def test_atomic_write_leaves_the_old_file_and_no_temporary_on_failure(tmp_path):
    target = tmp_path / "walk.bvh"
    target.write_text("old")
    with pytest.raises(RuntimeError), _files.atomic(target) as (temp,):
        assert temp.parent == tmp_path and temp.suffix == ".bvh" and temp != target
        temp.write_text("half")
        raise RuntimeError("writer failed")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["walk.bvh"]
    with pytest.raises(OSError, match="was not written"), _files.atomic(tmp_path / "new.bvh"):
        pass  # a writer that produced nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walk.bvh"]
    with _files.atomic(target) as (temp,):
        temp.write_text("new")
    assert target.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["walk.bvh"]


def test_atomic_pair_shares_a_temporary_stem_and_guards_the_skeleton(tmp_path):
    amc, asf = tmp_path / "01.amc", tmp_path / "01.asf"
    asf.write_text("shared skeleton")
    with pytest.raises(_arguments.UsageError, match="would replace"), _files.atomic(amc, asf, guarded=[asf]) as temps:
        assert temps[0].with_suffix(".asf") == temps[1]  # a writer deriving the .asf from the .amc finds it
        temps[0].write_text("motion")
        temps[1].write_text("another skeleton")
    assert asf.read_text() == "shared skeleton" and not amc.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["01.asf"]


def test_output_size_bound():
    _arguments.output_size(1000, 31, "x")
    with pytest.raises(_arguments.UsageError, match="limit"):
        _arguments.output_size(1e12, 31, "--factor 1e9")
    with pytest.raises(_arguments.UsageError, match="unbounded"):
        _arguments.output_size(float("inf"), 31, "--factor")


# --- untrusted .blend files (need Blender's bpy module) ------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path]:
    """(hostile.blend, markers folder): see tests/scripts/hostile.py."""
    pytest.importorskip("bpy")
    folder = tmp_path_factory.mktemp("hostile")
    markers = folder / "markers"
    markers.mkdir()
    blend = folder / "hostile.blend"
    made = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("hostile.py")), str(blend), str(markers)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0 and blend.exists(), made.stdout + made.stderr
    for marker in markers.iterdir():  # the making process evaluated its own drivers
        marker.unlink()
    return blend, markers


def blend_scripts(path: Path) -> dict:
    """Registered state of the Text blocks and the driver expressions of a .blend, read with scripts disabled."""
    return blend_json(
        path,
        "{'texts': {t.name: t.use_module for t in bpy.data.texts}, "
        "'drivers': sorted(d.driver.expression for o in bpy.data.objects if o.animation_data "
        "for d in o.animation_data.drivers)}",
        open_options=", load_ui=False, use_scripts=False",
    )


def assert_not_run(proc: subprocess.CompletedProcess, markers: Path, text: bool = True) -> None:
    """No marker written; the warning names the Python drivers (and the registered Text block when
    ``text``: an armature appended from the file comes without it)."""
    ran = sorted(p.name for p in markers.iterdir())
    for marker in markers.iterdir():  # the folder is shared by the module's tests
        marker.unlink()
    assert ran == [], proc.stdout + proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:") and "not executed" in line]
    assert any("registered Text block 'evil.py'" in w for w in warnings) == text, proc.stderr
    assert any("""["evil"]""" in w and "open(" in w for w in warnings), proc.stderr
    assert any("mark()" in w for w in warnings), proc.stderr
    assert not any("frame * 2" in w for w in warnings)  # a simple expression needs no Python


def assert_noted(report: dict, text: bool = True) -> None:
    noted = report["python_not_run"]
    assert ("registered Text block 'evil.py'" in noted) == text and len(noted) == 2 + text
    assert any("mark()" in n for n in noted) and not any("frame * 2" in n for n in noted)


@pytest.mark.blender
def test_the_hostile_file_is_hostile_when_scripts_may_run(hostile, tmp_path):
    """Control: opened with Auto Run Python Scripts on, its Text block and Python driver do run."""
    blend, markers = hostile
    code = (
        "import bpy, sys; bpy.context.preferences.filepaths.use_scripts_auto_execute = True; "
        "bpy.ops.wm.open_mainfile(filepath=sys.argv[1]); bpy.context.scene.frame_set(3)"
    )
    try:
        subprocess.run([sys.executable, "-c", code, str(blend)], capture_output=True, text=True, timeout=300)
        assert {"text_ran", "driver_ran"} <= {p.name for p in markers.iterdir()}
    finally:
        for marker in markers.iterdir():
            marker.unlink()


@pytest.mark.blender
def test_extract_keyframes_does_not_run_the_python_of_a_blend(hostile, tmp_path):
    blend, markers = hostile
    before = snapshot(blend.parent)
    proc = run(
        "extract_keyframes",
        blend,
        "-o",
        tmp_path / "out.blend",
        "--count",
        5,
        cwd=tmp_path,
        mode="autorun",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_not_run(proc, markers)
    report = json.loads((tmp_path / "out.json").read_text())
    assert_noted(report)
    assert report["unregistered_texts"] == ["evil.py"]
    saved = blend_scripts(tmp_path / "out.blend")
    assert saved["texts"] == {"evil.py": False}  # kept, no longer run on load
    assert len(saved["drivers"]) == 3  # kept and named in the warning
    assert snapshot(blend.parent) == before
    proc = run("extract_keyframes", blend, "-o", tmp_path / "kept.blend", "--count", 5, "--keep-scripts", cwd=tmp_path,
               mode="blender", timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert_not_run(proc, markers)
    assert blend_scripts(tmp_path / "kept.blend")["texts"] == {"evil.py": True}


@pytest.mark.blender
def test_retarget_does_not_run_the_python_of_source_or_target_blend(hostile, tmp_path):
    blend, markers = hostile
    write_bvh(synthetic.walk(30), tmp_path / "walk.bvh")
    write_bvh(Motion.rest(synthetic.humanoid(scale=1.4), 2, 60.0), tmp_path / "tall.bvh")
    before = snapshot(blend.parent)
    # the source appended from the .blend (bpy.data.libraries.load), onto a BVH skeleton
    proc = run("retarget", blend, "tall.bvh", "-o", "a.blend", cwd=tmp_path, mode="autorun", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_not_run(proc, markers, text=False)
    assert_noted(json.loads((tmp_path / "a.json").read_text()), text=False)
    assert blend_scripts(tmp_path / "a.blend")["texts"] == {}  # the Text block is not appended with the armature
    # the .blend as the target (opened), BVH output
    proc = run("retarget", "walk.bvh", blend, "--target-armature", "Walk", "-o", "b.bvh", cwd=tmp_path, mode="autorun",
               timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_not_run(proc, markers)
    assert_noted(json.loads((tmp_path / "b.json").read_text()))
    assert snapshot(blend.parent) == before


@pytest.mark.blender
def test_convert_does_not_run_the_python_of_a_blend(hostile, tmp_path):
    blend, markers = hostile
    proc = run("convert", blend, tmp_path / "walk.amc", "--armature", "Walk", cwd=tmp_path, mode="autorun", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_not_run(proc, markers)
    assert (tmp_path / "walk.amc").exists() and (tmp_path / "walk.asf").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walk.amc", "walk.asf"]  # no temporary left


@pytest.mark.blender
def test_blend_outputs_never_replace_their_input(hostile, tmp_path):
    """extract … -o the input .blend: refused (--force allows it, but with --replace only
    --overwrite-input does); retarget -o the target .blend: always refused."""
    pytest.importorskip("bpy")
    scene = tmp_path / "scene.blend"
    scene.write_bytes(hostile[0].read_bytes())
    write_bvh(synthetic.walk(30), tmp_path / "walk.bvh")
    before = snapshot(tmp_path)
    for args in (["--replace"], ["--replace", "--force"], []):
        proc = run("extract_keyframes", scene, "-o", scene, "--count", 5, *args, cwd=tmp_path, mode="blender")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        line = one_line_error(proc, "extract_keyframes.py")
        assert ("--overwrite-input" if args else "--force") in line
    # ``blender -b scene.blend -P extract_keyframes.py -- -o scene.blend --replace``: the open file is the input
    opened = (
        "import bpy, runpy, sys; bpy.ops.wm.open_mainfile(filepath=sys.argv[1], load_ui=False, use_scripts=False); "
        "sys.argv = ['blender', '-b', sys.argv[1], '-P', sys.argv[2], '--', *sys.argv[3:]]; "
        "runpy.run_path(sys.argv[4], run_name='__main__')"
    )
    script = str(SCRIPTS / "extract_keyframes.py")
    proc = subprocess.run([sys.executable, "-c", opened, str(scene), script, "-o", str(scene), "--replace", "--count", "5"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 2 and "--overwrite-input" in proc.stderr, proc.stdout + proc.stderr
    proc = run("retarget", "walk.bvh", scene, "--target-armature", "Walk", "-o", scene, "--force", cwd=tmp_path,
               mode="blender")  # fmt: skip
    assert proc.returncode == 2 and "is the target .blend" in one_line_error(proc, "retarget.py")
    assert snapshot(tmp_path) == before
    proc = run("extract_keyframes", scene, "-o", scene, "--count", 5, "--replace", "--overwrite-input", cwd=tmp_path,
               mode="blender", timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert scene.read_bytes() != before["scene.blend"][0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.blend", "scene.json", "walk.bvh"]
