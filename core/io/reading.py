"""What every reader shares: a file's lines as an editor shows them, strict numbers, and limits.

Readers refuse what they cannot represent with :class:`MocapFormatError`; these helpers
hold the rules that are the same for BVH, ASF and AMC:

- text: UTF-8, with or without a byte-order mark (UTF-16 and UTF-32 files with a BOM are
  decoded too); bytes that are not UTF-8 become U+FFFD and are refused where a number or
  keyword is expected; NUL bytes are refused (a binary file, or UTF-16 without its BOM).
  Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only, as in an editor (``str.splitlines``
  also breaks at vertical tab, form feed, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and
  U+2029, which made error messages name the wrong line).
- numbers: ASCII decimal notation only (``-1``, ``2.5``, ``.5``, ``1e-3``). Python's
  ``float``/``int`` also accept ``1_000``, ``١٢`` (Arabic-Indic digits), surrounding
  Unicode spaces, ``nan`` and ``infinity``; none of those is a number in a mocap file.
  Magnitudes above :data:`MAX_MAGNITUDE` are refused: no capture needs them, and an offset
  of 1e308 overflows to inf as soon as two are added (world positions, bone lengths,
  squared errors), so every value a reader accepts keeps every later sum finite.
- memory: a motion costs :data:`BYTES_PER_JOINT_FRAME` per joint and frame whatever the
  file spends on them; a joint with no channels costs nothing per frame in the file, so a
  small file can describe a motion of gigabytes. :func:`check_motion_size` refuses motions
  larger than :data:`MEMORY_FACTOR` × the file's size plus :data:`MEMORY_ALLOWANCE`
  before anything of that size is allocated (real captures need 1-2.5× their size).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from .errors import MocapFormatError

MAX_MAGNITUDE = 1e12


def representable(values: np.ndarray) -> np.ndarray:
    """Which values the readers accept back: finite and within ±:data:`MAX_MAGNITUDE` (the writers' check)."""
    values = np.asarray(values, dtype=float)
    return np.isfinite(values) & (np.abs(np.nan_to_num(values, nan=np.inf)) <= MAX_MAGNITUDE)


"""Largest absolute value accepted for any number in a motion file (file units, degrees, seconds)."""

MAX_FPS = 1e6
"""Frame rates above a megahertz (frame times below a microsecond) are refused.

A frame time of 1e-310 is positive and finite but its reciprocal is inf, and rates far beyond
any capture system (high-speed cameras top out well below a megahertz) only overflow
velocities (∝ fps) and accelerations (∝ fps²) downstream. The same bound applies the other
way to frame rates (a frame rate below 1e-6, one frame in 11 days, is refused)."""

BYTES_PER_JOINT_FRAME = 56
"""Memory of one joint in one frame of a Motion: a translation (3 floats) and a quaternion (4 floats)."""

MEMORY_FACTOR = 64
MEMORY_ALLOWANCE = 64 * 2**20
"""A reader refuses a motion needing more than MEMORY_FACTOR × file size + MEMORY_ALLOWANCE bytes."""

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_WHOLE = re.compile(r"[0-9]+")
# Characters a block of numbers may hold: anything else (letters, '_', Unicode digits or
# spaces) sends the block through the per-token check that names the culprit.
NOT_NUMERIC = re.compile(r"[^0-9eE+\-. \t\f\v]")
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def shown(token: str, limit: int = 40) -> str:
    """``repr(token)``, shortened for messages when the token is long (a 5,000-digit number)."""
    if len(token) <= limit:
        return repr(token)
    return f"{token[:limit]!r}… ({len(token)} characters)"


class BadNumber(ValueError):
    """A token that is not an acceptable number: ``reason`` says why ("is not a number", "is not finite", ...);
    ``syntax`` is False when it is written as a number but its value is out of range."""

    def __init__(self, token: str, reason: str, syntax: bool) -> None:
        self.token, self.reason, self.syntax = token, reason, syntax
        self.problem = f"expected a number, found {shown(token)}" if syntax else f"value {shown(token)} {reason}"
        super().__init__(self.problem)


def parse_number(token: str, allow_inf: bool = False) -> float:
    """The value of a strict decimal token, |x| ≤ MAX_MAGNITUDE; ``inf``/``-inf`` too when allowed.

    Raises :class:`BadNumber` with a message naming the token and the problem.
    """
    if _NUMBER.fullmatch(token):
        value = float(token)
        if abs(value) <= MAX_MAGNITUDE:
            return value
        if value in (float("inf"), float("-inf")):
            raise BadNumber(token, "is not finite (overflows)", False)
        raise BadNumber(token, f"is beyond ±{MAX_MAGNITUDE:g}", False)
    if _NON_FINITE.fullmatch(token):
        value = float(token)
        if allow_inf and value == value:
            return value
        raise BadNumber(token, "is not finite", False)
    raise BadNumber(token, "is not a number", True)


def is_number(token: str) -> bool:
    """True for tokens written as numbers (strict decimal, or nan/inf spelled out), whatever their value."""
    return bool(_NUMBER.fullmatch(token) or _NON_FINITE.fullmatch(token))


def whole(token: str, max_digits: int = 15) -> int | None:
    """A non-negative ASCII integer of at most ``max_digits`` significant digits, else None.

    ``int()`` accepts Unicode digits and ``_``, and refuses more than 4,300 digits with a
    ValueError; a count or frame number beyond 10**15 is never meant.
    """
    if not _WHOLE.fullmatch(token) or len(token.lstrip("0")) > max_digits:
        return None
    return int(token)


def data_problem(row: list[str], owner: str = "") -> str | None:
    """Why a row of motion values is not all acceptable numbers (None when it is).

    owner: words placed after the value, e.g. " for bone 'lfemur'"."""
    for column, token in enumerate(row, start=1):
        try:
            parse_number(token)
        except BadNumber as bad:
            return f"value {shown(token)}{owner} {bad.reason} (column {column})"
    return None


ROWS_AT_ONCE = 4096
"""Motion lines are split into tokens this many at a time: Python strings cost ~50 bytes per
number, so splitting a whole file at once would hold tens of bytes per byte of file."""


def parse_rows(path: str, line_numbers, rows: list[list[str]], width: int, owner: str = "") -> np.ndarray:
    """(len(rows), width) floats of rows of tokens (each ``width`` long), every token a strict
    number within ±MAX_MAGNITUDE; else MocapFormatError naming the first bad token's line."""
    if not NOT_NUMERIC.search(" ".join(" ".join(row) for row in rows)):  # the usual case, in bulk
        try:
            values = np.array(rows, dtype=float).reshape(len(rows), width)
        except ValueError:  # a token of number characters that is no number ("1e", "+-1")
            values = None
        if values is not None and not (np.abs(values) > MAX_MAGNITUDE).any():
            return values
    for line, row in zip(line_numbers, rows):
        problem = data_problem(row, owner)
        if problem is not None:
            raise MocapFormatError(path, int(line), problem)
    return np.array(rows, dtype=float).reshape(len(rows), width)  # every token passed the strict check


def read_lines(path: str | os.PathLike) -> tuple[list[str], int]:
    """The lines of a text file as an editor numbers them, and the file's size in bytes."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise MocapFormatError(str(path), None, f"cannot read file ({exc.strerror or exc})") from None
    encoding = "utf-8"
    for bom, name in _BOMS:
        if data.startswith(bom):
            data, encoding = data[len(bom) :], name
            break
    text = data.decode(encoding, errors="replace")
    size = len(data)
    del data
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return [], size
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise MocapFormatError(
            str(path), line, "file holds NUL bytes: not a text file (UTF-16 without a byte-order mark?)"
        )
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines, size


def check_frame_time(path: str, line: int, frame_time: float, what: str) -> None:
    """Refuse frame times whose rate would not be finite or sane (see :data:`MAX_FPS`)."""
    if not frame_time > 0:
        raise MocapFormatError(path, line, f"{what} must be positive, found {frame_time:g}")
    if frame_time < 1.0 / MAX_FPS or frame_time > MAX_FPS:
        raise MocapFormatError(
            path,
            line,
            f"{what} {frame_time:g} s is outside {1 / MAX_FPS:g}-{MAX_FPS:g} s (over a million frames a second, or under one in 11 days)",
        )


def check_motion_size(path: str, line: int | None, n_frames: int, n_joints: int, file_size: int) -> None:
    """Refuse a motion whose arrays would be far larger than what the file's content backs.

    Called before the motion is allocated; see :data:`MEMORY_FACTOR`.
    """
    need = n_frames * n_joints * BYTES_PER_JOINT_FRAME
    budget = MEMORY_FACTOR * file_size + MEMORY_ALLOWANCE
    if need > budget:
        raise MocapFormatError(
            path,
            line,
            f"{n_joints} joints × {n_frames} frames would need {need / 2**20:,.0f} MiB of memory, more than a "
            f"{file_size:,}-byte file can describe (limit {MEMORY_FACTOR}× the file size + "
            f"{MEMORY_ALLOWANCE // 2**20} MiB; joints without channels cost memory in every frame but no text)",
        )
