"""Biovision BVH: read and write any channel layout, End Sites, mixed line endings.

Rotation channels follow BVH's convention: read left to right, each rotation is about the
axes already turned by the previous ones (intrinsic), angles in degrees. Position channels
replace the joint's OFFSET for that frame.
"""

from __future__ import annotations

import os
import re
from array import array
from pathlib import Path

import numpy as np

from .. import quaternion as quat
from ..motion import Motion, change_rest
from ..skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Skeleton, rest_world
from .errors import MocapFormatError, MocapWriteError
from .names import bvh_name_problem
from .reading import (
    ROWS_AT_ONCE,
    BadNumber,
    check_frame_time,
    check_motion_size,
    parse_number,
    parse_rows,
    read_lines,
    representable,
    shown,
    whole,
)

KNOWN_CHANNELS = POSITION_CHANNELS + ROTATION_CHANNELS
MAX_INDENT = 64  # tabs; deeper joints are not indented further (a file's size stays linear in its depth)
_TOKEN = re.compile(r"[{}]|[^\s{}]+")


class _Tokens:
    """Hierarchy tokens with their 1-based line numbers."""

    def __init__(self, path: str, lines: list[str], first: int = 1) -> None:
        self.path = path
        self.items: list[tuple[str, int]] = []
        self.motion_line = None
        for number, line in enumerate(lines, start=first):
            if line.strip().upper() == "MOTION":
                self.motion_line = number
                break
            self.items.extend((tok, number) for tok in _TOKEN.findall(line))
        self.pos = 0

    def error(self, problem: str, line: int | None = None) -> MocapFormatError:
        if line is None:
            line = self.items[min(self.pos, len(self.items) - 1)][1] if self.items else 1
        return MocapFormatError(self.path, line, problem)

    def peek(self) -> tuple[str, int]:
        if self.pos >= len(self.items):
            raise self.error("unexpected end of the hierarchy (unbalanced braces?)", self.motion_line)
        return self.items[self.pos]

    def take(self, expected: str | None = None) -> tuple[str, int]:
        tok, line = self.peek()
        if expected is not None and tok.upper() != expected.upper():
            raise self.error(f"expected {expected!r}, found {shown(tok)}", line)
        self.pos += 1
        return tok, line

    def rest_of_line(self, line: int) -> str:
        words = []
        while self.pos < len(self.items) and self.items[self.pos][1] == line and self.items[self.pos][0] != "{":
            words.append(self.items[self.pos][0])
            self.pos += 1
        if not words:
            raise self.error("joint has no name", line)
        return " ".join(words)

    def floats(self, count: int) -> np.ndarray:
        values = []
        for _ in range(count):
            tok, line = self.take()
            try:
                values.append(parse_number(tok))
            except BadNumber as bad:
                raise self.error(bad.problem, line) from None
        return np.array(values)


def _open_joint(tokens: _Tokens, name: str, parent: int, out: dict, line: int) -> int:
    """Read a joint's ``{``, OFFSET and CHANNELS (its name is on ``line``); returns its index."""
    index = len(out["names"])
    out["names"].append(name)
    out["lines"].append(line)
    out["parents"].append(parent)
    tokens.take("{")
    tokens.take("OFFSET")
    out["offsets"].append(tokens.floats(3))
    channels: tuple[str, ...] = ()
    tok, line = tokens.peek()
    if tok.upper() == "CHANNELS":
        tokens.take()
        count_tok, line = tokens.take()
        count = whole(count_tok)
        if count is None:
            raise tokens.error(f"CHANNELS count must be a whole number, found {shown(count_tok)}", line)
        if count > len(KNOWN_CHANNELS):
            raise tokens.error(
                f"CHANNELS count must be at most {len(KNOWN_CHANNELS)} (each channel once), found {shown(count_tok)}",
                line,
            )
        names = []
        for _ in range(count):
            ch, ch_line = tokens.take()
            canonical = next((k for k in KNOWN_CHANNELS if k.lower() == ch.lower()), None)
            if canonical is None:
                raise tokens.error(f"unknown channel {shown(ch)} on joint {shown(name)}", ch_line)
            if canonical in names:
                raise tokens.error(f"channel {ch!r} repeated on joint {shown(name)}", ch_line)
            names.append(canonical)
        channels = tuple(names)
    out["channels"].append(channels)
    return index


def _parse_joint(tokens: _Tokens, name: str, parent: int, out: dict, line: int) -> None:
    """A joint and everything nested in it, with an explicit stack (no recursion per level)."""
    open_joints = [(_open_joint(tokens, name, parent, out, line), name)]
    while open_joints:
        index, name = open_joints[-1]
        tok, line = tokens.take()
        upper = tok.upper()
        if tok == "}":
            open_joints.pop()
        elif upper == "JOINT":
            child = tokens.rest_of_line(line)
            open_joints.append((_open_joint(tokens, child, index, out, line), child))
        elif upper == "END":
            tokens.take("Site")
            tokens.take("{")
            tokens.take("OFFSET")
            out["end_parents"].append(index)
            out["end_offsets"].append(tokens.floats(3))
            tokens.take("}")
        else:
            raise tokens.error(f"expected JOINT, End Site or '}}' in joint {shown(name)}, found {shown(tok)}", line)


def _header_value(path: str, lines: list[str], number: int, key: str) -> tuple[float, int]:
    while number <= len(lines) and not lines[number - 1].strip():
        number += 1
    if number > len(lines):
        raise MocapFormatError(path, max(len(lines), 1), f"file ends before '{key}'")
    line = lines[number - 1].strip()
    if not line.lower().startswith(key.lower()):
        raise MocapFormatError(path, number, f"expected '{key}', found {shown(line)}")
    text = line[len(key) :].strip()
    try:
        value = parse_number(text)
    except BadNumber as bad:
        problem = f"'{key}' needs a number, found {shown(text)}" if bad.syntax else f"'{key}' {bad.problem}"
        raise MocapFormatError(path, number, problem) from None
    return value, number + 1


def read_bvh(path: str | os.PathLike) -> Motion:
    """Read a BVH file into a :class:`Motion` (angles converted to quaternions).

    Raises :class:`MocapFormatError` naming the file, line and problem for malformed input,
    and for input the model cannot hold (numbers beyond ±1e12, frame rates beyond a
    megahertz, motions far larger in memory than the file: see :mod:`.reading`).
    """
    name = str(path)
    lines, size = read_lines(path)
    first = next((i for i, line in enumerate(lines, 1) if line.strip()), None)
    if first is None:
        raise MocapFormatError(name, 1, "file is empty")
    if lines[first - 1].strip().upper() != "HIERARCHY":
        raise MocapFormatError(name, first, "expected 'HIERARCHY' at the start of a BVH file")
    tokens = _Tokens(name, lines[first:], first + 1)
    out: dict = {
        "names": [],
        "lines": [],
        "parents": [],
        "offsets": [],
        "channels": [],
        "end_parents": [],
        "end_offsets": [],
    }
    while tokens.pos < len(tokens.items):
        tok, line = tokens.take()
        if tok.upper() != "ROOT":
            raise tokens.error(f"expected ROOT, found {shown(tok)}", line)
        _parse_joint(tokens, tokens.rest_of_line(line), -1, out, line)
    if not out["names"]:
        raise MocapFormatError(name, first, "hierarchy has no ROOT joint")
    if tokens.motion_line is None:
        raise MocapFormatError(name, max(len(lines), 1), "no MOTION section")
    seen: set[str] = set()
    for joint, line in zip(out["names"], out["lines"]):
        if joint in seen:
            raise MocapFormatError(name, line, f"joint name {shown(joint)} is used twice")
        seen.add(joint)

    n_frames, number = _header_value(name, lines, tokens.motion_line + 1, "Frames:")
    if n_frames != int(n_frames) or n_frames < 1:
        raise MocapFormatError(name, number - 1, f"'Frames:' must be a positive whole number, found {n_frames:g}")
    frames_line = number - 1
    frame_time, number = _header_value(name, lines, number, "Frame Time:")
    check_frame_time(name, number - 1, frame_time, "'Frame Time:'")
    # Which lines hold frames, and whether they back the declared count, before any allocation.
    frame_lines = array("q", (i for i in range(number, len(lines) + 1) if lines[i - 1].strip()))
    n_frames = int(n_frames)
    if len(frame_lines) < n_frames:
        last = frame_lines[-1] if frame_lines else max(len(lines), 1)
        raise MocapFormatError(
            name, last, f"motion is truncated: 'Frames:' says {n_frames}, file has {len(frame_lines)} frame lines"
        )
    if len(frame_lines) > n_frames:
        raise MocapFormatError(name, frame_lines[n_frames], f"more frame lines than 'Frames:' ({n_frames}) announces")
    check_motion_size(name, frames_line, n_frames, len(out["names"]), size)

    skeleton = Skeleton(
        out["names"],
        out["parents"],
        np.array(out["offsets"]),
        channels=out["channels"],
        end_site_parents=np.array(out["end_parents"], dtype=int),
        end_site_offsets=np.array(out["end_offsets"]).reshape(-1, 3),
    )
    values = _read_motion_values(name, lines, frame_lines, sum(len(c) for c in out["channels"]))
    return _motion_from_channels(skeleton, values, 1.0 / frame_time)


def _read_motion_values(path: str, lines: list[str], numbers: array, n_channels: int) -> np.ndarray:
    """(frames, n_channels) floats from the MOTION lines, checking counts and values per line."""
    values = np.empty((len(numbers), n_channels))
    for start in range(0, len(numbers), ROWS_AT_ONCE):
        part = numbers[start : start + ROWS_AT_ONCE]
        rows = [lines[i - 1].split() for i in part]
        for i, row in zip(part, rows):
            if len(row) != n_channels:
                raise MocapFormatError(path, i, f"expected {n_channels} values (one per channel), found {len(row)}")
        values[start : start + len(part)] = parse_rows(path, part, rows, n_channels)
    return values


def _motion_from_channels(skeleton: Skeleton, values: np.ndarray, fps: float) -> Motion:
    n_frames = values.shape[0]
    motion = Motion.rest(skeleton, n_frames, fps)
    column = 0
    for j, channels in enumerate(skeleton.channels):
        rotation = None
        for c, channel in enumerate(channels):
            v = values[:, column + c]
            if channel in POSITION_CHANNELS:
                motion.translations[:, j, POSITION_CHANNELS.index(channel)] = v
            else:
                axis_q = quat.from_axis_angle(np.eye(3)["XYZ".index(channel[0])], np.radians(v))
                rotation = axis_q if rotation is None else quat.multiply(rotation, axis_q)
        if rotation is not None:
            motion.rotations[:, j] = rotation
        column += len(channels)
    return motion


def euler_by_order(rotations: np.ndarray, orders: list[str], extrinsic: bool) -> list[np.ndarray]:
    """Per joint, its (T, k) Euler angles in degrees about ``orders[j]``, unwrapped over time.

    rotations: (T, J, 4). Joints sharing an order are converted together (one call per
    order, not per joint), so deep skeletons cost a handful of array operations.
    """
    out: list[np.ndarray] = [np.zeros((rotations.shape[0], 0))] * len(orders)
    groups: dict[str, list[int]] = {}
    for j, order in enumerate(orders):
        if order:
            groups.setdefault(order, []).append(j)
    for order, joints in groups.items():
        euler = quat.to_euler_axes(rotations[:, joints], order, extrinsic=extrinsic)
        euler = np.degrees(np.unwrap(euler, axis=0))
        for i, j in enumerate(joints):
            out[j] = euler[:, i]
    return out


def motion_channel_values(motion: Motion) -> np.ndarray:
    """(T, C) BVH channel values of a motion (degrees, Euler angles unwrapped over time)."""
    skeleton = motion.skeleton
    orders = ["".join(c[0] for c in channels if c in ROTATION_CHANNELS) for channels in skeleton.channels]
    eulers = euler_by_order(motion.rotations, orders, extrinsic=False)
    columns = []
    for j, channels in enumerate(skeleton.channels):
        for channel in channels:
            if channel in POSITION_CHANNELS:
                columns.append(motion.translations[:, j, POSITION_CHANNELS.index(channel)])
            else:
                columns.append(eulers[j][:, orders[j].index(channel[0])])
    return np.stack(columns, axis=-1) if columns else np.zeros((motion.n_frames, 0))


def _turned(q: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """(...,) bool: quaternions that are not the identity rotation."""
    return 1.0 - np.abs(np.asarray(q)[..., 0]) > tol


def _bvh_channels(channels: tuple[str, ...], turned: bool, parent_turned: bool) -> tuple[str, ...]:
    """Channels able to carry a joint's motion once its rest rotation is baked in."""
    positions = tuple(c for c in channels if c in POSITION_CHANNELS)
    rotations = tuple(c for c in channels if c in ROTATION_CHANNELS)
    if positions and (turned or parent_turned) and len(positions) < 3:
        positions = POSITION_CHANNELS
    if rotations and turned and len(rotations) < 3:
        rotations = ("Zrotation", "Yrotation", "Xrotation")
    return positions + rotations


def to_bvh_layout(motion: Motion) -> Motion:
    """The same motion with identity rest rotations, as BVH needs; world positions unchanged.

    With R_j the world rest rotation of joint j: rotation q → R_j·q·R_j⁻¹, translation
    t → R_parent·t, End Site offsets e → R_j·e. Channels are widened where the baked
    rotation no longer fits the original ones; limits survive only on joints whose rest
    frame (and parent's) was already world-aligned.
    """
    sk = motion.skeleton
    _, rest_rot = rest_world(sk)
    turned = _turned(rest_rot)
    if not turned.any():
        return motion
    parent_world = np.where((sk.parents >= 0)[:, None], rest_rot[np.maximum(sk.parents, 0)], quat.identity())
    parent_turned = _turned(parent_world)
    channels = tuple(_bvh_channels(c, t, pt) for c, t, pt in zip(sk.channels, turned, parent_turned))
    limits = None
    if sk.limits is not None:
        limits = tuple(None if (t or pt) else lim for lim, t, pt in zip(sk.limits, turned, parent_turned))
    skeleton = Skeleton(
        sk.names,
        sk.parents,
        quat.rotate(parent_world, sk.rest_translations),
        None,
        channels,
        sk.end_site_parents,
        quat.rotate(rest_rot[sk.end_site_parents], sk.end_site_offsets),
        limits,
        sk.meta,
    )
    return change_rest(motion, skeleton)


def text_float(x: float) -> str:
    """The shortest text that reads back as exactly ``x``: a Python float's repr (never numpy's,
    which numpy 2 writes as ``np.float64(...)``), ``30`` for ``30.0``, ``0`` for ``-0.0``."""
    text = repr(float(x) + 0.0)
    return text[:-2] if text.endswith(".0") else text


def bvh_text(motion: Motion, path: str | os.PathLike = "<bvh>", precision: int | None = None) -> str:
    """The BVH file :func:`write_bvh` writes for ``motion``, as text (nothing is written).

    Raises :class:`MocapWriteError` (a ValueError) naming the joint for anything the BVH
    reader would not read back unchanged: names BVH cannot hold (see
    :func:`.names.bvh_name_problem`: words separated by single spaces, no ``{``, ``}`` only
    as a word of its own, not empty; names are never changed), non-finite offsets or values, no frames, no channels
    at all (empty frame lines), a frame rate that is not positive and finite.
    """
    skeleton = motion.skeleton
    for name in skeleton.names:
        problem = bvh_name_problem(name)
        if problem:
            raise MocapWriteError(
                str(path), f"{problem}; rename it (core.io.names.escape_bvh_name gives a reversible name)", name
            )
    fps = float(motion.fps)
    if not (np.isfinite(fps) and fps > 0 and np.isfinite(1.0 / fps)):
        raise MocapWriteError(str(path), f"the frame rate must be positive and finite, found {motion.fps!r}")
    if motion.n_frames < 1:
        raise MocapWriteError(str(path), "a BVH file needs at least one frame")
    if not any(skeleton.channels):
        raise MocapWriteError(str(path), "no joint has channels: BVH frame lines would be empty")
    check_finite_motion(str(path), motion)
    motion = to_bvh_layout(motion)
    skeleton = motion.skeleton
    values = motion_channel_values(motion)
    _check_finite(str(path), skeleton, values)
    children = [[] for _ in range(skeleton.n_joints)]
    for j, p in enumerate(skeleton.parents):
        if p >= 0:
            children[p].append(j)
    ends = [[] for _ in range(skeleton.n_joints)]
    for p, offset in zip(skeleton.end_site_parents, skeleton.end_site_offsets):
        ends[p].append(offset)
    number = text_float if precision is None else f"{{:.{precision}f}}".format

    def vec(v: np.ndarray) -> str:
        return " ".join(number(float(x) + 0.0) for x in v)

    lines = ["HIERARCHY"]
    # An explicit stack instead of recursion: ("open", joint, depth) writes the joint's head
    # and pushes its closing brace, End Sites and children (in reverse, so they pop in order).
    stack: list[tuple[str, int, int]] = [("open", int(r), 0) for r in reversed(np.flatnonzero(skeleton.parents < 0))]
    while stack:
        kind, j, depth = stack.pop()
        pad = "\t" * min(depth, MAX_INDENT)
        if kind == "close":
            lines.append(pad + "}")
            continue
        if kind == "ends":
            for offset in ends[j]:
                lines.extend([f"{pad}\tEnd Site", f"{pad}\t{{", f"{pad}\t\tOFFSET {vec(offset)}", f"{pad}\t}}"])
            continue
        keyword = "ROOT" if skeleton.parents[j] < 0 else "JOINT"
        lines.append(f"{pad}{keyword} {skeleton.names[j]}")
        lines.append(pad + "{")
        lines.append(f"{pad}\tOFFSET {vec(skeleton.rest_translations[j])}")
        channels = skeleton.channels[j]
        lines.append(f"{pad}\tCHANNELS {len(channels)}" + "".join(" " + c for c in channels))
        stack.append(("close", j, depth))
        stack.append(("ends", j, depth))
        stack.extend(("open", c, depth + 1) for c in reversed(children[j]))
    lines += ["MOTION", f"Frames: {motion.n_frames}", f"Frame Time: {text_float(1.0 / fps)}"]
    lines += [" ".join(number(x) for x in row) for row in (values + 0.0).tolist()]
    return "\n".join(lines) + "\n"


def check_finite_motion(path: str, motion: Motion) -> None:
    """MocapWriteError naming the first joint whose translations or rotations are not finite."""
    for what, values in (("translations", motion.translations), ("rotations", motion.rotations)):
        bad = ~representable(values).all(axis=(0, 2))
        if bad.any():
            raise MocapWriteError(
                path, f"its {what} are not finite or beyond ±1e12", motion.skeleton.names[int(np.argmax(bad))]
            )


def _check_finite(path: str, skeleton: Skeleton, values: np.ndarray) -> None:
    """MocapWriteError naming the first joint whose offset, End Site or channel values are not finite."""
    bad = ~representable(skeleton.rest_translations).all(axis=1)
    if bad.any():
        j = int(np.argmax(bad))
        raise MocapWriteError(path, "its rest offset is not finite or beyond ±1e12", skeleton.names[j])
    bad = ~representable(skeleton.end_site_offsets).all(axis=1)
    if bad.any():
        j = int(skeleton.end_site_parents[np.argmax(bad)])
        raise MocapWriteError(path, "its End Site offset is not finite or beyond ±1e12", skeleton.names[j])
    bad = ~representable(values).all(axis=0)
    if bad.any():
        owner = [j for j, channels in enumerate(skeleton.channels) for _ in channels]
        raise MocapWriteError(
            path, "its channel values are not finite or beyond ±1e12", skeleton.names[owner[int(np.argmax(bad))]]
        )


def write_bvh(motion: Motion, path: str | os.PathLike, precision: int | None = None) -> None:
    """Write a motion as BVH with the skeleton's channel layout (LF line endings).

    Rest rotations (Blender bones, ASF axes) are baked in first (:func:`to_bvh_layout`).
    precision: decimals of every number; None (default) for the shortest text that reads
    back exactly (rotations compound down the hierarchy, so rounding grows with depth).
    Joints are indented by their depth, up to MAX_INDENT tabs (indentation carries no
    meaning; unbounded, a 5,000-deep chain would need 75 million tabs).
    Names are written verbatim; the whole file is built in memory and written in one call,
    after every check, so a refusal (:class:`MocapWriteError`, see :func:`bvh_text`) leaves
    no file behind.
    """
    text = bvh_text(motion, path, precision)
    Path(path).write_bytes(text.encode("utf-8"))
