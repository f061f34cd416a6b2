"""Extract Keyframes: the operator, its settings, panels and menu entries, and the bridge to the core
(``extract_action``: read the action, extract, write the sparse action, measure playback); Go to Worst
Frame (``worst_frame``); Mark as Motion Asset (``motion_asset``: the keyframe contact sheet as preview)."""

from __future__ import annotations

from bpy.props import StringProperty

from ..common.registration import feature_registration
from . import motion_asset, operators, panels, worst_frame

register, unregister = feature_registration(
    (*operators.classes, *worst_frame.classes, *motion_asset.classes, *panels.classes),
    (*panels.MENUS, *motion_asset.MENUS),
)


def scene_settings() -> dict:
    """Extraction settings kept at the top of ``scene.mocap_workbench``."""
    return {**operators.settings_properties(), "last_report": StringProperty(name="Last Result", default="")}


def preference_settings() -> dict:
    """Settings whose defaults for new files are add-on preferences (:mod:`..common.preferences`)."""
    properties = operators.settings_properties()
    return {name: properties[name] for name in operators.PREFERENCE_SETTINGS}
