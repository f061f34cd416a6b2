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
