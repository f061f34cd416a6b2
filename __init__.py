"""Mocap Workbench: turn dense motion capture into sparse, editable keyframes.

Extension entry point. It stays thin: the add-on (``addon/``) is imported when Blender
registers the extension, and the numpy core (``core/``) only when an operator runs.
"""


def register() -> None:
    from . import addon

    addon.register()


def unregister() -> None:
    from . import addon

    addon.unregister()
