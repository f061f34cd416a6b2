"""What every script does with its command line: one-line errors with exit status 2, the shared
value validators (``type=`` of argparse), and the run wrapper that turns user errors into exit
codes without a traceback.

Exit status of every script: 0 done, 1 an input failed (a malformed file, named with its line by
the core's readers) or a write failed, 2 a bad argument (a value out of range, a frame outside the
clip, an output that would replace an input or a file not asked for).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable

# The most joint-frames (frames × joints) an edit may produce: about 45 minutes of a 31-joint
# capture at 120 fps, some 0.6 GB per copy of the motion. Beyond it a typo (``--factor 1e6``)
# would run for minutes and then ask for hundreds of GiB.
MAX_JOINT_FRAMES = 10_000_000


class UsageError(Exception):
    """A bad argument found after parsing (a frame outside the loaded clip, an output that is an
    input): the script prints ``prog: error: message`` and exits with 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, ``prog: error: message`` (usage with --help)."""

    def error(self, message: str):  # noqa: D401 - argparse's name
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def fail(prog: str, message: str, code: int) -> int:
    """Print ``prog: error: message`` on one line of stderr; returns ``code``."""
    text = " ".join(str(message).split()) or "failed"
    print(f"{prog}: error: {text}", file=sys.stderr, flush=True)
    return code


def status(main: Callable[[], int], prog: str) -> int:
    """Run a command's ``main``: its status, user errors as one line on stderr (2), an interrupt 130."""
    try:
        code = main()
    except UsageError as exc:
        code = fail(prog, exc, 2)
    except SystemExit as exc:  # argparse (2) or an explicit exit
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            code = fail(prog, exc.code, 2)
    except KeyboardInterrupt:
        code = fail(prog, "interrupted", 130)
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def run(main: Callable[[], int], prog: str) -> None:
    """Run a script's ``main`` as ``__main__`` (:func:`status`), then exit (``os._exit`` under
    ``blender -b -P``, where ``sys.exit`` would be swallowed)."""
    code = status(main, prog)
    if _inside_blender_executable():
        os._exit(code)
    sys.exit(code)


def _inside_blender_executable() -> bool:
    """Run by a Blender executable (``blender -b -P``), not by Python with the bpy module (whose
    ``binary_path`` is empty): only there must the script end the process itself."""
    bpy = sys.modules.get("bpy")
    return bpy is not None and bool(getattr(bpy.app, "binary_path", "")) and "--" in sys.argv


# --- argparse types ----------------------------------------------------------------------------


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def finite(text: str) -> float:
    """Any finite number (not nan, not inf)."""
    return _number(text)


def positive(text: str) -> float:
    """A finite number > 0."""
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text!r}")
    return value


def non_negative(text: str) -> float:
    """A finite number >= 0."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def ratio(text: str) -> float:
    """A share in (0, 1]."""
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text!r}")
    return value


def between(lo: float, hi: float) -> Callable[[str], float]:
    """A finite number in [lo, hi]."""

    def check(text: str) -> float:
        value = _number(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be in [{lo:g}, {hi:g}], got {text!r}")
        return value

    check.__name__ = f"between {lo:g} and {hi:g}"
    return check


def at_least(lo: float) -> Callable[[str], float]:
    """A finite number >= lo."""

    def check(text: str) -> float:
        value = _number(text)
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo:g}, got {text!r}")
        return value

    return check


def count(text: str) -> int:
    """A whole number >= 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def index(text: str) -> int:
    """A whole number >= 0 (a 0-based frame; its upper end is checked once the clip is loaded)."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


# --- checks once the inputs are loaded -------------------------------------------------------------


def frame_in(value: int | None, n_frames: int, option: str, stop: bool = False) -> None:
    """UsageError unless ``value`` (0-based) lies in the clip: [0, n) for a frame, [0, n] for a stop."""
    if value is None:
        return
    hi = n_frames if stop else n_frames - 1
    if not 0 <= value <= hi:
        raise UsageError(f"argument {option}: frame {value} is outside the clip (0 to {hi}, {n_frames} frames)")


def output_size(frames: float, joints: int, what: str) -> None:
    """UsageError when an output of ``frames`` × ``joints`` would exceed :data:`MAX_JOINT_FRAMES`."""
    if not math.isfinite(frames) or frames * max(joints, 1) > MAX_JOINT_FRAMES:
        shown = f"{frames:,.0f}" if math.isfinite(frames) else "unbounded"
        limit = MAX_JOINT_FRAMES // max(joints, 1)
        raise UsageError(
            f"{what} would make {shown} frames of {joints} joints; the limit is {limit:,} frames "
            f"({MAX_JOINT_FRAMES:,} joint-frames)"
        )


# --- where the command runs ------------------------------------------------------------------------


def script_args(argv: list[str] | None = None) -> list[str]:
    """Arguments meant for the command: everything after ``--`` under Blender, else argv[1:]."""
    argv = sys.argv if argv is None else argv
    if "--" in argv:
        return argv[argv.index("--") + 1 :]
    return argv[1:]


def have_bpy() -> bool:
    """Whether Blender's Python module is importable here."""
    import importlib.util

    return importlib.util.find_spec("bpy") is not None


def package():
    """This extension's root package (``mocap_workbench``, or Blender's ``bl_ext.<repo>.mocap_workbench``)."""
    return sys.modules[__package__.rpartition(".")[0]]
