"""Retargeting between skeletons: bone maps, rest-pose alignment, scaled root motion, planted feet."""

from .mapping import (
    CANONICAL,
    CONVENTIONS,
    CORE,
    MappingError,
    auto_map,
    label_skeleton,
    load_preset,
    map_labels,
    mapping_pairs,
    save_preset,
)
from .metrics import copy_rotations, retarget_metrics
from .pipeline import RetargetOptions, RetargetResult, retarget

__all__ = [
    "CANONICAL",
    "CONVENTIONS",
    "CORE",
    "MappingError",
    "RetargetOptions",
    "RetargetResult",
    "auto_map",
    "copy_rotations",
    "label_skeleton",
    "load_preset",
    "map_labels",
    "mapping_pairs",
    "retarget",
    "retarget_metrics",
    "save_preset",
]
