"""Retarget: the operators (Retarget, its batch, bone maps and their presets), their settings and panels, the
physics report and viewport overlay, and the bridge to the core (``retarget_action``)."""

from __future__ import annotations

import bpy
from bpy.props import PointerProperty

from ..common.registration import feature_registration
from . import bone_map_presets, operators, panels, physics_overlay

_register, _unregister = feature_registration(
    (*panels.property_classes, *operators.classes, *bone_map_presets.classes, *panels.classes), panels.MENUS
)


def scene_settings() -> dict:
    return {"retarget": PointerProperty(type=panels.MOCAP_PG_retarget)}


def register() -> None:
    _register()
    for name, prop in panels.ACTION_PROPERTIES.items():
        setattr(bpy.types.Action, name, prop)
    bone_map_presets.register()
    physics_overlay.register()


def unregister() -> None:
    physics_overlay.unregister()
    bone_map_presets.unregister()
    for name in panels.ACTION_PROPERTIES:
        delattr(bpy.types.Action, name)
    _unregister()
