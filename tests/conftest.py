"""Shared test fixtures: the repository root on sys.path and the real captures in ../shared."""

from __future__ import annotations

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


@pytest.fixture(autouse=True)
def _no_process_exit(monkeypatch):
    """A script run in-process must not end the test run: ``os._exit`` (what the scripts call under a
    Blender executable) raises SystemExit here instead, so a wrong exit path fails its test."""
    import os

    def refuse(code: int) -> None:
        raise SystemExit(f"os._exit({code}) called inside the test run")

    monkeypatch.setattr(os, "_exit", refuse)
