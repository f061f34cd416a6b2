"""Load the repository as the ``mocap_workbench`` package, so scripts use the same relative
imports as the installed extension (plain Python or ``blender -b -P``)."""

from __future__ import annotations

import importlib
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


def command(name: str) -> ModuleType:
    """The command module ``cli/<name>.py`` of the package (loaded first)."""
    load()
    return importlib.import_module(f"{NAME}.cli.{name}")


def run(name: str, prog: str) -> None:
    """Run command ``name`` as a script's ``__main__``: its status, one-line errors, exit."""
    command("_arguments").run(command(name).main, prog)


def script_args(argv: list[str] | None = None) -> list[str]:
    """Arguments meant for a script (see ``cli/_arguments.py``)."""
    return command("_arguments").script_args(argv)


def have_bpy() -> bool:
    return importlib.util.find_spec("bpy") is not None
