"""Extract Keyframes: the operator, its settings, panels and menu entries, and the bridge to the core
(``extract_action``: read the action, extract, write the sparse action, measure playback)."""

from __future__ import annotations

from bpy.props import StringProperty

from ..common.registration import feature_registration
from . import operators, panels

register, unregister = feature_registration((*operators.classes, *panels.classes), panels.MENUS)


def scene_settings() -> dict:
    """Extraction settings kept at the top of ``scene.mocap_workbench``."""
    return {**operators.settings_properties(), "last_report": StringProperty(name="Last Result", default="")}
