"""What a batch worker needs first: this package, loaded by path under the client's name for it.

Dask sends a task's function to the workers by reference (module and name). This package is
imported under Blender's name for the extension (``bl_ext.<repo>.mocap_workbench``) or, from the
scripts, by path as ``mocap_workbench`` — neither importable on a fresh worker process. A
:class:`PackageLoader` plugin, sent **by value** (``cloudpickle.register_pickle_by_value``), loads
the package from its folder on every worker as it starts (restarted workers included), under the
same name, so the tasks' references resolve. Workers need the folder (the same machine, a shared
disk or the same checkout), not an installation.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin


def load_package(root: str, name: str) -> None:
    """Import the package at ``root`` as ``name`` (its missing parents as empty packages) unless loaded."""
    if name in sys.modules:
        return
    parts = name.split(".")
    for i in range(1, len(parts)):
        parent = ".".join(parts[:i])
        if parent not in sys.modules:
            sys.modules[parent] = types.ModuleType(parent)
            sys.modules[parent].__path__ = []
    spec = importlib.util.spec_from_file_location(name, Path(root) / "__init__.py", submodule_search_locations=[root])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


class PackageLoader(WorkerPlugin):
    """Loads the package on each worker when the worker starts."""

    name = "mocap-workbench-package"

    def __init__(self, root: str, package: str):
        self.root, self.package = root, package

    def setup(self, worker) -> None:
        load_package(self.root, self.package)
