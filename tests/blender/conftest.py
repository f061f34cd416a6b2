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
