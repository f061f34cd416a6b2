"""Mocap Workbench: turn dense motion capture into sparse, editable keyframes.

Extension entry point. It stays thin: the add-on (``addon/``) and the command line (``cli/``,
``blender -c mocap_workbench …``) are registered when Blender registers the extension; the numpy
core (``core/``) is imported only when an operator or a command runs.
"""


def register() -> None:
    from . import addon, cli

    addon.register()
    cli.register()


def unregister() -> None:
    from . import addon, cli

    cli.unregister()
    addon.unregister()
