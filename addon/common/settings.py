"""The scene's settings (``scene.mocap_workbench``), gathered from the features that keep settings there.

Keyframe extraction's settings sit at the top (``scene.mocap_workbench.method``…), Retarget's and the
Edit operators' in their own groups (``.retarget``, ``.editing``): the paths files saved by earlier
versions use.
"""

from __future__ import annotations

import bpy

_settings_class: type | None = None


def register(annotations: dict) -> None:
    """Register the scene settings group holding ``annotations`` (name → property) and ``Scene.mocap_workbench``."""
    global _settings_class
    _settings_class = type(
        "MOCAP_PG_settings",
        (bpy.types.PropertyGroup,),
        {"__annotations__": annotations, "__doc__": "Mocap Workbench settings kept with the scene"},
    )
    bpy.utils.register_class(_settings_class)
    bpy.types.Scene.mocap_workbench = bpy.props.PointerProperty(type=_settings_class)


def unregister() -> None:
    global _settings_class
    del bpy.types.Scene.mocap_workbench
    if _settings_class is not None:
        bpy.utils.unregister_class(_settings_class)
        _settings_class = None


def take_unset(operator: bpy.types.Operator, settings: bpy.types.PropertyGroup, names) -> None:
    """Give ``operator`` the panel's ``settings`` for every property in ``names`` the caller did not set
    (a script, a keymap item, a preset keep theirs)."""
    for name in names:
        if not operator.properties.is_property_set(name):
            setattr(operator, name, getattr(settings, name))
