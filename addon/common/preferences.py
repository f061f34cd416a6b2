"""Add-on Preferences (Edit › Preferences › Add-ons › Mocap Workbench): the defaults new files start from.

Features contribute settings of the scene (``scene.mocap_workbench``) whose defaults the user may want
to change once for every file; Extract Keyframes gives its Method, Target, Ratio, Count and
Interpolation. A scene whose setting was never set (a new file, or a file saved before that setting
was touched) takes the preference's value when a file is loaded and when the operator is invoked;
a setting the scene already holds is never overwritten. So the sidebar shows what will run, and
changing a preference affects new files, not the ones already made.
"""

from __future__ import annotations

import bpy
from bpy.app.handlers import persistent


def package_name(package: str | None = __package__) -> str:
    """The extension's package (``bl_ext.<repo>.mocap_workbench``, the add-on's id in Blender), from the
    package of this module, two levels below it (``….addon.common``)."""
    parts = (package or "").split(".")
    return ".".join(parts[:-2]) or "mocap_workbench"


PACKAGE = package_name()
_class: type | None = None


def _draw(self, context) -> None:
    layout = self.layout
    layout.use_property_split = True
    layout.use_property_decorate = False
    layout.label(text="Defaults of new files (a scene keeps its own settings once set)")
    column = layout.column(heading="Extract Keyframes")
    for name in self.__annotations__:
        column.prop(self, name)


def register(annotations: dict) -> None:
    """Register the preferences holding ``annotations`` (name → property, named as in the scene settings)."""
    global _class
    _class = type(
        "MOCAP_AP_preferences",
        (bpy.types.AddonPreferences,),
        {
            "bl_idname": PACKAGE,
            "__annotations__": dict(annotations),
            "__doc__": "Defaults of Mocap Workbench's settings in new files",
            "draw": _draw,
        },
    )
    bpy.utils.register_class(_class)
    bpy.app.handlers.load_post.append(seed_scenes)


def unregister() -> None:
    global _class
    if seed_scenes in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(seed_scenes)
    if _class is not None:
        bpy.utils.unregister_class(_class)
        _class = None


def preferences():
    """The add-on's preferences, or None when it is not enabled as ``PACKAGE``."""
    addon = bpy.context.preferences.addons.get(PACKAGE)
    return addon.preferences if addon is not None else None


def seed(scene) -> None:
    """Give ``scene``'s settings the preferences' values for every setting it does not hold yet."""
    prefs, settings = preferences(), getattr(scene, "mocap_workbench", None)
    if prefs is None or settings is None or _class is None:
        return
    for name in _class.__annotations__:
        if not settings.is_property_set(name):
            setattr(settings, name, getattr(prefs, name))


@persistent
def seed_scenes(*_args) -> None:
    """After a file (or the startup file) is loaded: seed every scene."""
    for scene in bpy.data.scenes:
        seed(scene)
