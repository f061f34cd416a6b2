"""The command line inside the extension: ``blender -c mocap_workbench <command> …``.

Blender (4.2+) runs a command registered with ``bpy.utils.register_cli_command`` when started as
``blender -c mocap_workbench …``; :func:`run` dispatches to the command's module, imported only
then. The same modules back ``scripts/*.py`` (plain Python or ``blender -b -P``).
"""

from __future__ import annotations

import importlib
import sys

COMMAND_ID = "mocap_workbench"
# command → (module in this package, one-line description)
COMMANDS = {
    "extract": ("extract", "extract keyframes from .bvh/.blend files or a folder (Extract Keyframes, headless)"),
    "retarget": ("retarget", "retarget clips onto another skeleton, with physics (Retarget, headless)"),
    "convert": ("convert", "convert BVH ⇄ ASF/AMC, one file or a folder"),
    "edit": ("edit", "edit motion files: cut, rotate, transitions, blends, interpolation, PCA"),
    "library": ("library", "process a folder of clips (Dask), index it, search it by pose, draw contact sheets"),
}
_handle = None


def usage() -> str:
    lines = [f"usage: blender -c {COMMAND_ID} COMMAND [options]   (COMMAND --help for its options)", "", "commands:"]
    lines += [f"  {name:<10} {text}" for name, (_, text) in COMMANDS.items()]
    return "\n".join(lines)


def run(argv: list[str]) -> int:
    """Run ``COMMAND args…``; 0 on success, 1 on failure, 2 on a usage error."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], list(argv[1:])
    if name not in COMMANDS:
        print(f"{COMMAND_ID}: error: unknown command {name!r}; choose from {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f".{COMMANDS[name][0]}", __name__)
    arguments = importlib.import_module("._arguments", __name__)
    # the scripts' rules: a usage error is one line and status 2, never a traceback
    return arguments.status(lambda: module.main([name, *rest]), f"{COMMAND_ID} {name}")


def register() -> None:
    """Register the command with Blender (4.2+); a no-op where the API is missing."""
    global _handle
    import bpy

    if _handle is None and hasattr(bpy.utils, "register_cli_command"):
        _handle = bpy.utils.register_cli_command(COMMAND_ID, run)


def unregister() -> None:
    global _handle
    import bpy

    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
