"""Figures as the user reads them: in the scene's unit system, with their units.

Values stored in Blender units (a length property with ``unit='LENGTH'``, a mass with ``unit='MASS'``)
are shown by Blender times the scene's Unit Scale (a mass times its cube); :func:`scale` gives that
factor, so the core gets metres and kilograms. Armature-space figures (the core's) become Blender
units through the armature object's scale (:func:`armature_length`).
"""

from __future__ import annotations

from typing import Any

import bpy

POWERS = {"LENGTH": 1, "VELOCITY": 1, "MASS": 3}


def figure(x: float) -> str:
    """Three significant digits; rounding noise (below 1e-9) shows as 0."""
    return f"{x:.3g}" if abs(x) > 1e-9 else "0"


def scale(scene: Any, kind: str = "LENGTH") -> float:
    """Metres (kilograms, metres per second) per Blender unit, as Blender shows values of this kind."""
    units = scene.unit_settings
    if units.system == "NONE":
        return 1.0
    return float(units.scale_length) ** POWERS[kind]


def _to_string(scene: Any, kind: str, value: float, precision: int) -> str:
    units = scene.unit_settings
    if units.system == "NONE":
        return f"{value:.{precision}g}"
    return bpy.utils.units.to_string(units.system, kind, value * scale(scene, kind), precision=precision,
                                     split_unit=units.use_separate, compatible_unit=False)  # fmt: skip


def length(scene: Any, value: float, precision: int = 3) -> str:
    """A distance in Blender units as Blender writes it in the scene's units, e.g. '2.1 cm'."""
    return _to_string(scene, "LENGTH", value, precision)


def speed(scene: Any, value: float, precision: int = 3) -> str:
    """A speed in Blender units per second in the scene's units, e.g. '1.3 m/s' ('1.3 per s' without units)."""
    text = _to_string(scene, "VELOCITY", value, precision)
    return text + " per s" if scene.unit_settings.system == "NONE" else text


def mass(scene: Any, value: float, precision: int = 3) -> str:
    """A mass in Blender units (a ``unit='MASS'`` property's value) in the scene's units, e.g. '90 kg'."""
    return _to_string(scene, "MASS", value, precision)


def kilograms(scene: Any, value: float, precision: int = 3) -> str:
    """A mass in kilograms (the core's physics figures) in the scene's units, e.g. '90 kg'."""
    return mass(scene, value / scale(scene, "MASS"), precision)


def metres(scene: Any, value: float, precision: int = 3) -> str:
    """A distance in metres (the core's physics figures) in the scene's units."""
    return length(scene, value / scale(scene, "LENGTH"), precision)


def armature_length(obj: Any, value: float, precision: int = 3) -> str:
    """A distance in the armature's own units (the core's figures) in the scene's units."""
    from .spaces import world_scale

    return length(bpy.context.scene, value * world_scale(obj), precision)


def armature_speed(obj: Any, value: float, precision: int = 3) -> str:
    """A speed in armature units per second in the scene's units."""
    from .spaces import world_scale

    return speed(bpy.context.scene, value * world_scale(obj), precision)
