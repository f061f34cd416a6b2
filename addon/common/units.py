"""Figures as the user reads them: in the scene's unit system, with their units."""

from __future__ import annotations

from typing import Any

import bpy


def figure(x: float) -> str:
    """Three significant digits; rounding noise (below 1e-9) shows as 0."""
    return f"{x:.3g}" if abs(x) > 1e-9 else "0"


def length(scene: Any, value: float, precision: int = 3) -> str:
    """A distance in scene units (Blender units × the scene's Unit Scale) as Blender writes it, e.g. '2.1 cm'."""
    units = scene.unit_settings
    if units.system == "NONE":
        return f"{value:.{precision}g}"
    return bpy.utils.units.to_string(units.system, "LENGTH", value * units.scale_length, precision=precision,
                                     split_unit=units.use_separate, compatible_unit=False)  # fmt: skip
