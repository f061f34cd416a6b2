"""File › Import/Export › Acclaim (.asf/.amc): the operators, drag and drop, and the bridge to the core
(``armature_io``: check every file, then build the armature and its actions; export)."""

from __future__ import annotations

from ..common.registration import feature_registration
from . import operators

register, unregister = feature_registration(operators.classes, operators.MENUS)


def scene_settings() -> dict:
    return {}
