"""Keyframe extraction: distance, selection methods, reconstruction and error measures."""

from .distance import PoseMetric, joint_weights
from .error import evaluate, position_errors, rotation_errors, summarize
from .extract import METHODS, KeyframeResult, extract_keyframes, target_count
from .reconstruct import reconstruct

__all__ = [
    "METHODS",
    "KeyframeResult",
    "PoseMetric",
    "evaluate",
    "extract_keyframes",
    "joint_weights",
    "position_errors",
    "reconstruct",
    "rotation_errors",
    "summarize",
    "target_count",
]
