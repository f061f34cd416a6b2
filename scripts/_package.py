"""Load the repository as the ``mocap_workbench`` package, so scripts use the same relative
imports as the installed extension (plain Python or ``blender -b -P``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
NAME = "mocap_workbench"


def load() -> ModuleType:
    """The extension package (imported once; its add-on classes are not registered)."""
    if NAME in sys.modules:
        return sys.modules[NAME]
    spec = importlib.util.spec_from_file_location(NAME, ROOT / "__init__.py", submodule_search_locations=[str(ROOT)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module
    spec.loader.exec_module(module)
    return module


def script_args(argv: list[str] | None = None) -> list[str]:
    """Arguments meant for the script: everything after ``--`` under Blender, else argv[1:]."""
    argv = sys.argv if argv is None else argv
    if "--" in argv:
        return argv[argv.index("--") + 1 :]
    return argv[1:]


def have_bpy() -> bool:
    return importlib.util.find_spec("bpy") is not None
