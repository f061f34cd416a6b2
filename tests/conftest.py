"""Shared test fixtures: the repository root on sys.path and the real captures in ../shared."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_MOCAP = ROOT.parent / "shared" / "mocap"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def shared_file(relative: str) -> Path:
    """A capture from ../shared/mocap, or a clean skip where that folder is absent."""
    path = SHARED_MOCAP / relative
    if not path.exists():
        pytest.skip(f"real capture not available here: {path}")
    return path


def blend_json(path: Path, expression: str, open_options: str = ""):
    """``expression`` (Python over ``bpy``) evaluated on the .blend ``path`` opened in a fresh Python
    (``open_options``: more arguments of ``open_mainfile``), read back as JSON: how tests see a saved file."""
    code = (
        f"import bpy, json, sys; bpy.ops.wm.open_mainfile(filepath=sys.argv[1]{open_options}); "
        f"print(json.dumps({expression}))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def _no_process_exit(monkeypatch):
    """A script run in-process must not end the test run: ``os._exit`` (what the scripts call under a
    Blender executable) raises SystemExit here instead, so a wrong exit path fails its test."""
    import os

    def refuse(code: int) -> None:
        raise SystemExit(f"os._exit({code}) called inside the test run")

    monkeypatch.setattr(os, "_exit", refuse)
