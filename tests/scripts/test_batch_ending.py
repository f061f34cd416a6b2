"""How a batch of either script ends (summary.json, the tally line, the exit code), the paths the
subprocess tests do not take: every file fine, and a summary that cannot be written."""

import json
import sys

import pytest

from core import synthetic
from core.io.bvh import write_bvh
from core.motion import Motion
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import _package  # noqa: E402

_files = _package.command("_files")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Two short walk BVHs in a folder, and a 1.4× humanoid BVH (the retarget target) beside it."""
    root = tmp_path_factory.mktemp("batch_inputs")
    walk = synthetic.walk(120)
    (root / "in").mkdir()
    write_bvh(walk.frames(slice(0, 60)), root / "in" / "a.bvh")
    write_bvh(walk.frames(slice(60, 120)), root / "in" / "b.bvh")
    write_bvh(Motion.rest(synthetic.humanoid(scale=1.4), 2, 60.0), root / "tall.bvh")
    return root


def batch_args(command, folder, out):
    """The command line of a batch of the folder into ``out`` (after ``--``, as under Blender)."""
    if command == "retarget":
        return ["--", str(folder / "in"), str(folder / "tall.bvh"), "-o", str(out), "--format", "bvh"]
    return ["--", str(folder / "in"), "-o", str(out), "--no-blender", "--count", "6"]


PROGS = {"retarget": "retarget.py", "extract": "extract_keyframes.py"}


@pytest.mark.parametrize("command", ["retarget", "extract"])
def test_a_clean_batch_exits_0_with_its_tally_and_summary(command, folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert _package.command(command).main(batch_args(command, folder, out)) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["processed"] == 2 and summary["failed"] == 0 and len(summary["results"]) == 2
    stdout = capsys.readouterr().out
    assert f"Processed 2 of 2 files, 0 failed; summary in {out / 'summary.json'}" in stdout.splitlines()


@pytest.mark.parametrize("command", ["retarget", "extract"])
def test_a_summary_that_cannot_be_written_is_one_error_line_and_exit_1(command, folder, tmp_path, capsys, monkeypatch):
    write_json = _files.write_json

    def refuse_summary(path, data):
        if str(path).endswith("summary.json"):
            raise PermissionError(13, "Permission denied", str(path))
        return write_json(path, data)

    monkeypatch.setattr(_files, "write_json", refuse_summary)
    out = tmp_path / "out"
    assert _package.command(command).main(batch_args(command, folder, out)) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "summary" in line]
    assert errors == [
        f"{PROGS[command]}: error: cannot write the summary: [Errno 13] Permission denied: '{out / 'summary.json'}'"
    ]
    assert "Processed" not in captured.out and not (out / "summary.json").exists()
    assert (out / "a.json").exists() and (out / "b.json").exists()  # the per-file reports were written
