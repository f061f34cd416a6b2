"""Motion editing: the Edit operators, their settings, panels and menu, and the bridge to the core
(``edit_actions``: read actions, edit with ``core.editing``, write new actions or NLA strips)."""

from __future__ import annotations

from bpy.props import PointerProperty

from ..common.registration import feature_registration
from . import operators, panels

register, unregister = feature_registration(
    (*panels.property_classes, *operators.classes, *panels.classes), panels.MENUS
)


def scene_settings() -> dict:
    return {"editing": PointerProperty(type=panels.MOCAP_PG_editing)}
