"""How each feature folder registers itself: its classes (``bpy.utils.register_classes_factory``,
as Blender's pose_library does) and its menu entries."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import bpy


def feature_registration(classes: Sequence[type], menus: Sequence[tuple[type, Callable]] = ()) -> tuple:
    """``(register, unregister)`` for a feature: classes in order, then its draw functions appended to menus."""
    register_classes, unregister_classes = bpy.utils.register_classes_factory(tuple(classes))

    def register() -> None:
        register_classes()
        for menu, draw in menus:
            menu.append(draw)

    def unregister() -> None:
        for menu, draw in reversed(menus):
            menu.remove(draw)
        unregister_classes()

    return register, unregister
