"""The Blender side of Mocap Workbench: everything that imports bpy, one folder a feature.

Each feature folder registers its own classes and menu entries; this module only calls them in
order, then registers the scene settings they contribute to (``scene.mocap_workbench``) and the
add-on preferences holding the defaults of some of them (``preference_settings()``).
"""

from __future__ import annotations

from . import acclaim, editing, keyframes, retarget
from .common import preferences, settings

FEATURES = (retarget, editing, keyframes, acclaim)


def register() -> None:
    for feature in FEATURES:
        feature.register()
    settings.register({name: prop for feature in FEATURES for name, prop in feature.scene_settings().items()})
    preferences.register(
        {name: prop for feature in FEATURES for name, prop in getattr(feature, "preference_settings", dict)().items()}
    )


def unregister() -> None:
    preferences.unregister()
    settings.unregister()
    for feature in reversed(FEATURES):
        feature.unregister()
