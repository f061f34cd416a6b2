"""The keyframe extraction options the scripts share, named as in Blender's Extract Keyframes panel.

``extract_keyframes.py`` takes them as they are (``--method``, ``--ratio``…), ``retarget.py`` with an
``extract-`` prefix (``--extract-method``, ``--extract-ratio``…); both turn them into the same keyword
arguments the add-on uses, so a script and the operator with the same settings write the same keys.
"""

from __future__ import annotations

import argparse

import numpy as np

from . import _arguments as A

TARGETS = ("count", "ratio", "max_error", "max_angle", "threshold")


def default_method(target: dict) -> str:
    """The method when none is given, as in Blender's panel: the hybrid, which takes every target
    but the threshold rule's own."""
    return "threshold" if "threshold" in target else "hybrid"


def degrees(text: str) -> float:
    """An angle in degrees, in (0, 180)."""
    value = A.positive(text)
    if not value < 180:
        raise argparse.ArgumentTypeError(f"must be below 180 degrees, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser, prefix: str = "", method_default: str | None = "hybrid") -> None:
    """Add the extraction options to ``parser`` (``--<prefix>method`` …); one target at most.
    method_default None: the method follows the target (:func:`default_method`)."""
    from ..core.keyframes import METHODS
    from ..core.keyframes.channel_keys import HYBRID_GRID

    g = parser.add_argument_group("keyframe extraction" if not prefix else "keyframe extraction of the result")
    g.add_argument(f"--{prefix}method", choices=("hybrid", *METHODS), default=method_default,
                   help=f"how keyframes are chosen (default {method_default or 'hybrid; threshold with --threshold'})")  # fmt: skip
    target = g.add_mutually_exclusive_group()
    target.add_argument(f"--{prefix}count", type=A.count,
                        help="exact number of keyframes (hybrid: keys on each channel)")  # fmt: skip
    target.add_argument(f"--{prefix}ratio", type=A.ratio,
                        help="share of frames to keep, in (0, 1] (hybrid: on each channel; default 0.05)")  # fmt: skip
    target.add_argument(f"--{prefix}max-error", type=A.positive,
                        help="the fewest keys holding every bone's head, tip and sides within this distance at "
                        "every frame (scene units as Blender shows them: the scene's Unit Scale and the "
                        "armature's scale applied; > 0)")  # fmt: skip
    target.add_argument(f"--{prefix}max-angle", type=degrees, metavar="DEGREES",
                        help="the fewest keys holding every bone's rotation within this angle of the original "
                        "at every frame (degrees, in (0, 180))")  # fmt: skip
    target.add_argument(f"--{prefix}threshold", type=A.positive, help="the threshold rule's pose distance (> 0)")
    g.add_argument(f"--{prefix}weights", default="HIERARCHY", choices=["HIERARCHY", "UNIFORM", "MAIN"],
                   help="joint weight preset (default HIERARCHY)")  # fmt: skip
    g.add_argument(f"--{prefix}linear", action="store_true",
                   help="LINEAR keys instead of Bezier keys fitted to the slerp rebuild")  # fmt: skip
    g.add_argument(f"--{prefix}grid", type=A.at_least(1), default=HYBRID_GRID,
                   help=f"hybrid: whole-pose keys per key kept on each channel (default {HYBRID_GRID:g})")  # fmt: skip


def _get(args: argparse.Namespace, prefix: str, name: str):
    return getattr(args, (prefix + name).replace("-", "_"))


def target_of(args: argparse.Namespace, prefix: str = "") -> dict:
    """The core's target from the options (default a ratio of 5 %)."""
    for key in TARGETS:
        value = _get(args, prefix, key)
        if value is not None:
            return {key: value}
    return {"ratio": 0.05}


def given(args: argparse.Namespace, prefix: str) -> bool:
    """Whether any extraction option with ``prefix`` was given on the command line."""
    return any(_get(args, prefix, k) is not None for k in TARGETS) or (_get(args, prefix, "method") is not None)


def options_of(args: argparse.Namespace, prefix: str = "") -> dict:
    """Keyword arguments of ``extract_on_armature`` / ``extract_channels``: method, target, weights, fitted, grid."""
    target = target_of(args, prefix)
    return {
        "method": _get(args, prefix, "method") or default_method(target),
        "target": target,
        "weights": _get(args, prefix, "weights"),
        "fitted": not _get(args, prefix, "linear"),
        "grid": _get(args, prefix, "grid"),
    }


def plain(value):
    """A JSON-ready parameter value: numpy integers to int, other numbers to float, dicts and lists item by item."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [plain(v) for v in value]
    if isinstance(value, int | np.integer):
        return int(value)
    return float(value)
