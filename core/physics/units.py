"""Metres per unit of a skeleton that says nothing about its units: the BVH files users bring.

BVH carries no unit; capture tools write metres (Bandai Namco at 0.01 scale in cm), centimetres
(Mixamo, Character Creator, Unreal exports), millimetres, inches, or the CMU conversions' units
(CMU's ASF says ``length 0.45``: a file unit is 1/0.45 inch). A body model
needs metres, so :func:`likely_unit` picks, among these units, the one that makes the skeleton's
standing height (file units) the most human: closest to :data:`TYPICAL_HEIGHT` on a log scale
and inside :data:`PLAUSIBLE_HEIGHT`. Blender objects never need this: their metres per unit are
the scene's Unit Scale times the object's scale.
"""

from __future__ import annotations

import numpy as np

PLAUSIBLE_HEIGHT = (0.5, 3.0)  # metres; a measured stature outside this range gets a warning
# kg: a body mass outside this range is no body of PLAUSIBLE_HEIGHT's statures (grams or tonnes meant)
PLAUSIBLE_MASS = (2.0, 1000.0)
TYPICAL_HEIGHT = 1.7  # metres
UNITS = {  # metres per file unit
    "metres": 1.0,
    "centimetres": 0.01,
    "millimetres": 0.001,
    "inches": 0.0254,
    "CMU units (inches / 0.45)": 0.0254 / 0.45,
}


def plausible(height_m: float) -> bool:
    """Whether a stature in metres is human-sized (:data:`PLAUSIBLE_HEIGHT`)."""
    return bool(PLAUSIBLE_HEIGHT[0] <= height_m <= PLAUSIBLE_HEIGHT[1])


def likely_unit(height: float) -> tuple[float, str] | None:
    """(metres per unit, unit name) making a standing ``height`` in file units human-sized, or None
    when no unit of :data:`UNITS` does (e.g. a height of 0)."""
    if not (np.isfinite(height) and height > 0):
        return None
    fits = [(abs(np.log(height * m / TYPICAL_HEIGHT)), m, name) for name, m in UNITS.items() if plausible(height * m)]
    if not fits:
        return None
    _, metres, name = min(fits)
    return metres, name


def height_warning(what: str, height_m: float, how: str, fix: str) -> str | None:
    """The warning for a measured stature that is not human-sized, or None when it is.
    what: whose height ("target", "source"); how: how the metres were found; fix: what to do."""
    if plausible(height_m):
        return None
    return f"{what} height measured as {height_m:.3g} m ({how}), not human-sized: {fix}"
