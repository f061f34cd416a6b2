"""Blender tests: the bpy wheel (or pytest-blender's Blender) with the extension enabled
the way Blender enables it, from a local extensions repository, in a throwaway profile."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROFILE = Path(tempfile.mkdtemp(prefix="mocap-workbench-profile-"))
os.environ.setdefault("BLENDER_USER_RESOURCES", str(PROFILE / "user"))

bpy = pytest.importorskip("bpy", reason="Blender tests need the bpy module (pip install bpy)")
import addon_utils  # noqa: E402  (Blender's module, importable once bpy is)

REPO_MODULE = "mocap_tests"
PACKAGE = f"bl_ext.{REPO_MODULE}.mocap_workbench"


def _enable_extension():
    repo_dir = PROFILE / "repo"
    repo_dir.mkdir(parents=True, exist_ok=True)
    link = repo_dir / "mocap_workbench"
    if not link.exists():
        link.symlink_to(ROOT, target_is_directory=True)
    repos = bpy.context.preferences.extensions.repos
    if repos.get(REPO_MODULE) is None:
        repos.new(name=REPO_MODULE, module=REPO_MODULE, custom_directory=str(repo_dir), source="USER")
    mod = addon_utils.enable(PACKAGE, default_set=True, handle_error=None)
    if mod is None:
        raise RuntimeError(f"Blender could not enable {PACKAGE}")
    return sys.modules[PACKAGE]


EXTENSION = _enable_extension()


@pytest.fixture
def ext():
    """The enabled extension package (bl_ext.<repo>.mocap_workbench)."""
    return EXTENSION


@pytest.fixture(autouse=True)
def empty_scene():
    """Every test starts from an empty file; add-on stays enabled."""
    bpy.ops.wm.read_homefile(use_empty=True)
    if not hasattr(bpy.context.scene, "mocap_workbench"):
        raise RuntimeError("extension lost after loading the empty file")
    yield


# Blender 4.2 and 4.5 cannot end the interpreter once Rigify has been enabled: 4.2 crashes (SIGSEGV) and
# 4.5 hangs while Python finalises, after every test has run and reported (5.0+ exit cleanly). A test that
# needs Rigify there marks the run (an environment variable: test modules may import this file under
# another name than pytest's), which then leaves with its own status before pytest's and Python's clean-up.
UNCLEAN_EXIT = "MOCAP_TESTS_UNCLEAN_EXIT"
_EXIT_STATUS: list[int] = []


def exit_without_finalising(reason: str) -> None:
    """Leave the test process without Python's finalisation (see above) when Blender needs it."""
    if bpy.app.version < (5, 0, 0):
        os.environ[UNCLEAN_EXIT] = reason


def pytest_sessionfinish(session, exitstatus):
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(tryfirst=True)  # before pytest's own clean-up (its garbage collection is where 4.2 crashes)
def pytest_unconfigure(config):
    if os.environ.get(UNCLEAN_EXIT) and _EXIT_STATUS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT_STATUS[-1])
