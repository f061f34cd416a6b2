"""Keyframe extraction: distance, selection methods, reconstruction and error measures.

Modules beyond the suggested layout: ``segments`` is the vectorised rebuild-and-measure
kernel every search method shares (the optimum's table, the activity method's votes, the
local search), and ``local_search`` holds the key moves/insertions/removals reused by
several methods; both are method-independent, so they live apart from the methods.
"""

from .activity import ActivityParams, activity_keys
from .baselines import simplify_keys, uniform_keys
from .distance import PoseMetric, joint_weights
from .error import evaluate, evaluate_keys, measured_points, pose_points, position_errors, rotation_errors, summarize
from .extract import METHODS, KeyframeResult, extract_keyframes, target_count
from .local_search import local_search
from .optimal import optimal_curve, optimal_keys
from .reconstruct import reconstruct
from .segments import SegmentErrors

__all__ = [
    "METHODS",
    "ActivityParams",
    "KeyframeResult",
    "PoseMetric",
    "SegmentErrors",
    "activity_keys",
    "evaluate",
    "evaluate_keys",
    "extract_keyframes",
    "joint_weights",
    "local_search",
    "measured_points",
    "optimal_curve",
    "optimal_keys",
    "pose_points",
    "position_errors",
    "reconstruct",
    "rotation_errors",
    "simplify_keys",
    "summarize",
    "target_count",
    "uniform_keys",
]
