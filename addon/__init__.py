"""The Blender side of Mocap Workbench: everything that imports bpy."""

from __future__ import annotations

import bpy


def _classes():
    from . import editing_operators, editing_ui, io_acclaim, operators, retarget_operators, ui

    return (
        *editing_ui.property_classes,
        *ui.classes,
        *operators.classes,
        *io_acclaim.classes,
        *retarget_operators.classes,
        *editing_operators.classes,
        *editing_ui.classes,
    )


def register() -> None:
    from . import physics_overlay, ui

    for cls in _classes():
        bpy.utils.register_class(cls)
    ui.register_ui()
    physics_overlay.register()


def unregister() -> None:
    from . import physics_overlay, ui

    physics_overlay.unregister()
    ui.unregister_ui()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
