"""Acclaim ASF (skeleton) and AMC (motion): read, write, and how they map onto our model.

ASF in brief: every bone has a ``direction`` (unit vector in the global rest frame), a
``length``, an ``axis`` (Euler angles and order, e.g. ``axis 0 0 20 XYZ``: the bone's local
frame C in global coordinates) and ``dof`` tokens (``rx ry rz tx ty tz``). A bone starts
where its parent ends (the root's children start at the root). The AMC stores, per frame
and bone, the dof values in ``dof`` order; the bone's motion is L = C·M·C⁻¹ in global axes,
M the dof rotations applied about fixed axes in the listed order (``rx ry rz``: M = Rz·Ry·Rx),
so the world rotation of a bone is W̃ = W̃_parent·C·M·C⁻¹ and its end is at its start plus
length·W̃·direction.

Our model (:class:`Skeleton`/:class:`Motion`): joint j is the START (head) of bone j, like
a BVH joint; leaf bones' ends become End Sites; the root is joint 0, named ``root``. We give
joint j the frame W_j = W̃_j·C_j (the bone's own axes), which makes everything constant or
plain dof values:

- rest rotation of joint j: C_parent⁻¹·C_j (the root's children use C_parent = I); the
  root's rest rotation is its ``orientation`` O (pre-set rotation that offsets the whole
  capture, applied about its ``axis`` order);
- rotation of joint j: M_j itself (quaternion of the AMC values);
- rest translation of joint j: C_parent⁻¹·direction_parent·length_parent (0 under the root,
  the root's own is its ``position``);
- translation dofs (``tx ty tz``, root or bone) are a displacement in the bone's axis frame
  added to the rest offset: translation_j = rest_translation_j + rest_rotation_j·t.

Then W_j = W_parent·rest_j·M_j reproduces exactly the ASF/AMC world positions (see
``tests/core/test_asf_amc.py`` for the check against the W̃ chain built with scipy).

Channels: the dof tokens map to BVH channel names (``rx`` → ``Xrotation``, ``tx`` →
``Xposition``) with the rotation tokens in reverse order, because an ASF rotation is
extrinsic in dof order and a BVH channel list is intrinsic: ``dof rx ry rz`` becomes
``Zrotation Yrotation Xrotation`` and the AMC numbers read as those channels are the same
rotation. Limits are kept per channel (degrees for rotations, file units for translations).

Units: lengths stay in file units (the ``length`` multiplier is kept in
``skeleton.meta["asf_units"]`` and written back, never applied, like the CMU BVH
conversions); angles in ``deg`` or ``rad`` (an AMC ``:RADIANS``/``:DEGREES`` line wins).
Not supported: the ``l`` (bone stretch) dof, more than one root. Unknown ``:sections`` and
unknown bone fields (``bodymass``, ``cofmass``, ...) are skipped. Direction vectors are
normalised. AMC files carry no frame rate: ``fps`` defaults to 120 (CMU), or to the rate our
own writer notes in a ``# Mocap Workbench fps`` comment.
"""

from __future__ import annotations

import os
import re
from array import array
from pathlib import Path

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from ..skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Skeleton, rest_world
from .bvh import check_finite_motion, euler_by_order, text_float
from .errors import MocapFormatError, MocapWriteError
from .names import asf_name_problem, escape_asf_name, unescape_name
from .reading import (
    MAX_FPS,
    MAX_MAGNITUDE,
    ROWS_AT_ONCE,
    BadNumber,
    check_motion_size,
    is_number,
    parse_number,
    parse_rows,
    read_lines,
    representable,
    shown,
    whole,
)

DOF_CHANNELS = {
    "tx": "Xposition",
    "ty": "Yposition",
    "tz": "Zposition",
    "rx": "Xrotation",
    "ry": "Yrotation",
    "rz": "Zrotation",
}
CHANNEL_DOFS = {v: k for k, v in DOF_CHANNELS.items()}
DEFAULT_FPS = 120.0
FPS_NOTE = "# Mocap Workbench fps"
ROOT_NOTE = "# Mocap Workbench root"  # the name the root had before to_asf_layout called it "root"
ADDED_NOTE = "# Mocap Workbench added"  # the fixed bones to_asf_layout added (_link, _end)
_SEPARATORS = re.compile(r"[(),]")


# --- dof tokens <-> channels -------------------------------------------------------------


def _reverse_rotations(items: tuple[str, ...], is_rotation) -> tuple[str, ...]:
    """Reverse the rotation entries in place, leaving translations where they are."""
    slots = [i for i, item in enumerate(items) if is_rotation(item)]
    out = list(items)
    for slot, item in zip(slots, reversed([items[i] for i in slots])):
        out[slot] = item
    return tuple(out)


def dofs_to_channels(dofs: tuple[str, ...]) -> tuple[str, ...]:
    """BVH channel names of ASF dof tokens (rotations reversed: extrinsic → intrinsic order)."""
    return _reverse_rotations(tuple(DOF_CHANNELS[d.lower()] for d in dofs), lambda c: c in ROTATION_CHANNELS)


def channels_to_dofs(channels: tuple[str, ...]) -> tuple[str, ...]:
    """ASF dof tokens of BVH channel names, the inverse of :func:`dofs_to_channels`."""
    return _reverse_rotations(tuple(CHANNEL_DOFS[c] for c in channels), lambda d: d[0] == "r")


# --- ASF reading -------------------------------------------------------------------------


class _Lines:
    """Non-empty ASF lines as (1-based number, tokens), comments and ``(),`` removed."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.items = []
        for number, line in enumerate(lines, start=1):
            tokens = _SEPARATORS.sub(" ", line.split("#", 1)[0]).split()
            if tokens:
                self.items.append((number, tokens))
        self.pos = 0
        self.last = max(len(lines), 1)

    def error(self, line: int | None, problem: str) -> MocapFormatError:
        return MocapFormatError(self.path, line, problem)

    def more(self) -> bool:
        return self.pos < len(self.items)

    def peek(self) -> tuple[int, list[str]]:
        return self.items[self.pos]

    def take(self, what: str) -> tuple[int, list[str]]:
        if not self.more():
            raise self.error(self.last, f"file ends inside {what}")
        self.pos += 1
        return self.items[self.pos - 1]

    def section_lines(self):
        """Yield the lines up to the next ``:section`` keyword."""
        while self.more() and not self.peek()[1][0].startswith(":"):
            yield self.take("a section")


def _float(lines: _Lines, line: int, token: str, what: str, allow_inf: bool = False) -> float:
    try:
        return parse_number(token, allow_inf)
    except BadNumber as bad:
        raise lines.error(line, f"{what}: {bad.problem}") from None


def _floats(lines: _Lines, line: int, tokens: list[str], count: int, what: str) -> np.ndarray:
    if len(tokens) != count:
        raise lines.error(line, f"{what}: expected {count} numbers, found {len(tokens)}")
    return np.array([_float(lines, line, t, what) for t in tokens])


def _order(lines: _Lines, line: int, token: str, what: str) -> str:
    order = token.upper()
    if order not in quat.EULER_ORDERS:
        raise lines.error(line, f"{what}: rotation order must be a permutation of XYZ, found {shown(token)}")
    return order


def _dofs(lines: _Lines, line: int, tokens: list[str], what: str) -> tuple[str, ...]:
    dofs = []
    for token in tokens:
        dof = token.lower()
        if dof == "l":
            raise lines.error(line, f"{what}: dof 'l' (bone stretch) is not supported")
        if dof not in DOF_CHANNELS:
            raise lines.error(line, f"{what}: unknown dof {shown(token)} (expected tx ty tz rx ry rz)")
        if dof in dofs:
            raise lines.error(line, f"{what}: dof {shown(token)} is repeated")
        dofs.append(dof)
    return tuple(dofs)


def _read_units(lines: _Lines) -> dict:
    units = {"mass": 1.0, "length": 1.0, "angle": "deg"}
    for line, tokens in lines.section_lines():
        key = tokens[0].lower()
        if len(tokens) != 2:
            raise lines.error(line, f"units: expected {shown(tokens[0])} and one value, found {len(tokens) - 1} values")
        if key == "angle":
            if tokens[1].lower() not in ("deg", "rad"):
                raise lines.error(line, f"unknown angle unit {shown(tokens[1])} (expected deg or rad)")
            units["angle"] = tokens[1].lower()
        elif key in ("mass", "length"):
            value = _float(lines, line, tokens[1], f"units {key}")
            if value <= 0:
                raise lines.error(line, f"units {key} must be positive, found {shown(tokens[1])}")
            if value < 1.0 / MAX_MAGNITUDE:  # a scale whose reciprocal stays within the bound
                raise lines.error(line, f"units {key} must be at least {1 / MAX_MAGNITUDE:g}, found {shown(tokens[1])}")
            units[key] = value
        else:
            raise lines.error(line, f"unknown unit {shown(tokens[0])} (expected mass, length or angle)")
    return units


def _read_root(lines: _Lines, start: int) -> dict:
    root = {"order": None, "axis": "XYZ", "position": np.zeros(3), "orientation": np.zeros(3), "line": start}
    for line, tokens in lines.section_lines():
        key, args = tokens[0].lower(), tokens[1:]
        if key == "order":
            root["order"] = _dofs(lines, line, args, "root order")
        elif key == "axis":
            if len(args) != 1:
                raise lines.error(line, "root axis: expected one rotation order token such as XYZ")
            root["axis"] = _order(lines, line, args[0], "root axis")
        elif key in ("position", "orientation"):
            root[key] = _floats(lines, line, args, 3, f"root {key}")
        else:
            raise lines.error(line, f"unknown root field {shown(tokens[0])}")
    if root["order"] is None:
        raise lines.error(start, "the :root section has no 'order' line")
    return root


def _read_limits(lines: _Lines, line: int, tokens: list[str], n_dofs: int, what: str) -> list:
    values = [(token, line) for token in tokens]  # each with the line it is on
    while len(values) < 2 * n_dofs and lines.more() and is_number(lines.peek()[1][0]):
        more, more_tokens = lines.take("limits")
        values += [(token, more) for token in more_tokens]
    if len(values) != 2 * n_dofs:
        raise lines.error(line, f"{what}: expected {n_dofs} (min max) pairs, one per dof, found {len(values)} values")
    pairs = []
    for (lo, lo_line), (hi, hi_line) in zip(values[::2], values[1::2]):
        pair = (_float(lines, lo_line, lo, what, True), _float(lines, hi_line, hi, what, True))
        if pair[0] > pair[1]:
            raise lines.error(hi_line, f"{what}: minimum {shown(lo)} is above maximum {shown(hi)}")
        pairs.append(pair)
    return pairs


def _read_bone(lines: _Lines, begin: int) -> dict:
    bone = {"line": begin, "dof": (), "limits": None}
    while True:
        line, tokens = lines.take("a bone (missing 'end')")
        key, args = tokens[0].lower(), tokens[1:]
        what = f"bone {shown(bone.get('name', '?'))}"
        if key == "end":
            break
        if key.startswith(":") or key == "begin":
            raise lines.error(line, f"{what} has no 'end' before {shown(tokens[0])}")
        if key == "name":
            if len(args) != 1:
                raise lines.error(line, "bone name: expected one word")
            bone["name"], bone["name_line"] = args[0], line
        elif key == "direction":
            bone["direction"] = _floats(lines, line, args, 3, f"{what} direction")
        elif key == "length":
            bone["length"] = _floats(lines, line, args, 1, f"{what} length")[0]
            if bone["length"] < 0:
                raise lines.error(line, f"{what} length must not be negative")
        elif key == "axis":
            if len(args) != 4:
                raise lines.error(line, f"{what} axis: expected three angles and an order such as XYZ")
            bone["axis"] = _floats(lines, line, args[:3], 3, f"{what} axis")
            bone["axis_order"] = _order(lines, line, args[3], f"{what} axis")
        elif key == "dof":
            bone["dof"] = _dofs(lines, line, args, what)
        elif key == "limits":
            if not bone["dof"]:
                raise lines.error(line, f"{what}: 'limits' needs a 'dof' line before it")
            bone["limits"] = _read_limits(lines, line, args, len(bone["dof"]), f"{what} limits")
        # id, bodymass, cofmass and vendor fields carry nothing we use
    for field in ("name", "direction", "length", "axis"):
        if field not in bone:
            raise lines.error(begin, f"bone {shown(bone.get('name', '?'))} has no '{field}'")
    if bone["limits"] is not None and len(bone["limits"]) != len(bone["dof"]):
        raise lines.error(begin, f"bone {shown(bone['name'])}: 'limits' must follow its 'dof' line")
    direction = bone["direction"]
    scale = np.abs(direction).max()
    if scale > 0:  # scaled first, so that tiny components (1e-200) do not underflow in the norm
        direction = direction / scale
        bone["direction"] = direction / np.linalg.norm(direction)
    elif bone["length"] > 0:
        raise lines.error(begin, f"bone {shown(bone['name'])} has a zero direction")
    return bone


def _read_bonedata(lines: _Lines) -> list[dict]:
    bones = []
    seen: set[str] = set()
    for line, tokens in lines.section_lines():
        if tokens[0].lower() != "begin":
            raise lines.error(line, f"expected 'begin' of a bone, found {shown(tokens[0])}")
        bone = _read_bone(lines, line)
        if bone["name"].lower() == "root":
            raise lines.error(bone["name_line"], "bone name 'root' is reserved for the root")
        if bone["name"] in seen:
            raise lines.error(bone["name_line"], f"bone name {shown(bone['name'])} is used twice")
        seen.add(bone["name"])
        bones.append(bone)
    return bones


def _read_hierarchy(lines: _Lines, start: int) -> list[tuple[int, list[str]]]:
    links = []
    items = list(lines.section_lines())
    if not items or items[0][1][0].lower() != "begin":
        raise lines.error(items[0][0] if items else start, "the :hierarchy section must start with 'begin'")
    for line, tokens in items[1:]:
        if tokens[0].lower() == "end":
            return links
        if len(tokens) < 2:
            raise lines.error(line, f"hierarchy line names a parent ({shown(tokens[0])}) but no children")
        links.append((line, tokens))
    raise lines.error(items[-1][0], "the :hierarchy section has no 'end'")


def _layout_notes(raw: list[str]) -> dict:
    """What our writer noted about the skeleton :func:`to_asf_layout` started from (``asf_origin``)."""
    origin: dict = {}
    for line in raw:
        text = line.strip()
        if text.startswith(ROOT_NOTE) and len(text.split()) == len(ROOT_NOTE.split()) + 1:
            origin["root"] = text.split()[-1]
        elif text.startswith(ADDED_NOTE):
            origin.setdefault("added", []).extend(text.split()[len(ADDED_NOTE.split()) :])
    if origin:
        origin.setdefault("added", [])
        origin.setdefault("root", "root")
    return {"asf_origin": origin} if origin else {}


def _parse_asf(path: str) -> tuple[dict, dict, list[dict], list, _Lines]:
    raw = read_lines(path)[0]
    lines = _Lines(path, raw)
    if not lines.items:
        raise MocapFormatError(path, 1, "file is empty")
    meta = {"asf_units": {"mass": 1.0, "length": 1.0, "angle": "deg"}, **_layout_notes(raw)}
    root = bones = links = None
    while lines.more():
        line, tokens = lines.take("the file")
        keyword = tokens[0].lower()
        if not keyword.startswith(":"):
            raise lines.error(line, f"expected a ':keyword' section, found {shown(tokens[0])}")
        if keyword == ":units":
            meta["asf_units"] = _read_units(lines)
        elif keyword == ":root":
            root = _read_root(lines, line)
        elif keyword == ":bonedata":
            bones = _read_bonedata(lines)
        elif keyword == ":hierarchy":
            links = _read_hierarchy(lines, line)
        else:
            if keyword == ":name" and len(tokens) > 1:
                meta["asf_name"] = " ".join(tokens[1:])
            list(lines.section_lines())  # :version, :documentation, vendor sections
    for value, name in ((root, ":root"), (bones, ":bonedata"), (links, ":hierarchy")):
        if value is None:
            raise MocapFormatError(path, lines.last, f"no {name} section")
    return meta, root, bones, links, lines


def _lookup(names: dict[str, int], lower: dict[str, int], name: str) -> int | None:
    found = names.get(name)
    return lower.get(name.lower()) if found is None else found


def _topology(lines: _Lines, bones: list[dict], links: list) -> tuple[list[int], list[int]]:
    """Depth-first order of the bones (root = -1 first) and each one's parent, both as bone indices."""
    names = {b["name"]: i for i, b in enumerate(bones)}
    names["root"] = -1
    lower = {n.lower(): i for n, i in names.items()}
    children: dict[int, list[int]] = {}
    parent_of: dict[int, int] = {}
    for line, tokens in links:
        parent = _lookup(names, lower, tokens[0])
        if parent is None:
            raise lines.error(line, f"hierarchy names unknown bone {shown(tokens[0])}")
        for name in tokens[1:]:
            child = _lookup(names, lower, name)
            if child is None:
                raise lines.error(line, f"hierarchy names unknown bone {shown(name)}")
            if child == -1 or child in parent_of:
                raise lines.error(line, f"bone {shown(name)} is given a second parent")
            parent_of[child] = parent
            children.setdefault(parent, []).append(child)
    order, stack = [], [-1]
    while stack:
        bone = stack.pop()
        order.append(bone)
        stack.extend(reversed(children.get(bone, [])))
    reached = set(order)
    missing = [i for i in range(len(bones)) if i not in reached]
    if missing:
        bone = bones[missing[0]]
        raise lines.error(bone["line"], f"bone {shown(bone['name'])} is not connected to the root in :hierarchy")
    return order, [parent_of.get(b, -2) for b in order]


def read_asf(path: str | os.PathLike) -> Skeleton:
    """Read an ASF skeleton (see the module docstring for the mapping onto our model).

    Raises :class:`MocapFormatError` naming the file, line and problem for malformed input.
    """
    name = str(path)
    meta, root, bones, links, lines = _parse_asf(name)
    order, parent_bones = _topology(lines, bones, links)
    to_rad = np.pi / 180.0 if meta["asf_units"]["angle"] == "deg" else 1.0
    index = {b: j for j, b in enumerate(order)}
    n = len(order)
    listed = [bones[b] for b in order[1:]]
    parent = np.array([0] + [index[p] for p in parent_bones[1:]], dtype=int)  # the root's own is unused
    axes = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))  # C_j; the root's children see C = I
    for axis_order in {bone["axis_order"] for bone in listed}:  # vectorised per Euler order
        rows = np.array([j for j, bone in enumerate(listed, start=1) if bone["axis_order"] == axis_order])
        angles = np.array([listed[j - 1]["axis"] for j in rows])
        axes[rows] = quat.from_euler(angles[:, ["XYZ".index(a) for a in axis_order]] * to_rad, axis_order)
    bone_vectors = np.array([np.zeros(3)] + [bone["direction"] * bone["length"] for bone in listed])
    tails = quat.rotate(quat.inverse(axes), bone_vectors)  # bone vector in the joint's own frame
    tails[0] = 0.0
    rest_rot = quat.multiply(quat.inverse(axes[parent]), axes)
    rest_rot[0] = _euler(root["orientation"], root["axis"], to_rad)
    rest_t = tails[parent]
    rest_t[0] = root["position"]
    channels = [dofs_to_channels(root["order"])] + [dofs_to_channels(bone["dof"]) for bone in listed]
    limits = [None] + [_limits_to_channels(bone, meta["asf_units"]["angle"]) for bone in listed]
    parents = [-1] + [index[p] for p in parent_bones[1:]]
    has_child = set(parents)
    leaves = [j for j in range(1, n) if j not in has_child]
    return Skeleton(
        ("root", *(bones[b]["name"] for b in order[1:])),
        parents,
        rest_t,
        rest_rot,
        tuple(channels),
        end_site_parents=np.array(leaves, dtype=int),
        end_site_offsets=tails[leaves].reshape(-1, 3),
        limits=tuple(limits) if any(x is not None for x in limits) else None,
        meta=meta,
    )


def _euler(xyz: np.ndarray, order: str, to_rad: float) -> np.ndarray:
    """Quaternion of ASF angles given as (x, y, z) and applied about fixed axes in ``order``."""
    return quat.from_euler(xyz[["XYZ".index(a) for a in order]] * to_rad, order, extrinsic=True)


def _limits_to_channels(bone: dict, angle: str) -> tuple | None:
    """A bone's limits in channel order, rotations in degrees; None when absent or all open."""
    pairs = bone["limits"]
    if pairs is None or all(np.isinf(v) for pair in pairs for v in pair):
        return None
    scale = [180.0 / np.pi if d[0] == "r" and angle == "rad" else 1.0 for d in bone["dof"]]
    by_dof = {d: (lo * s, hi * s) for d, (lo, hi), s in zip(bone["dof"], pairs, scale)}
    return tuple(by_dof[CHANNEL_DOFS[c]] for c in dofs_to_channels(bone["dof"]))


# --- AMC reading -------------------------------------------------------------------------


def motion_from_dof_values(
    skeleton: Skeleton, values: list[np.ndarray | None], fps: float, angle: str = "deg"
) -> Motion:
    """A :class:`Motion` from per-joint AMC values.

    values[j]: (T, D_j) numbers of joint j in ASF dof order (``channels_to_dofs``), angles
    in ``angle`` units ("deg" or "rad"), translations in file units; None for joints without
    channels.
    """
    n_frames = next(v.shape[0] for v in values if v is not None)
    to_rad = np.pi / 180.0 if angle == "deg" else 1.0
    motion = Motion.rest(skeleton, n_frames, fps)
    for j, channels in enumerate(skeleton.channels):
        if not channels:
            continue
        rotation, shift = None, np.zeros((n_frames, 3))
        for column, dof in enumerate(channels_to_dofs(channels)):
            axis = "xyz".index(dof[1])
            if dof[0] == "t":
                shift[:, axis] = values[j][:, column]
                continue
            q = quat.from_axis_angle(np.eye(3)[axis], values[j][:, column] * to_rad)
            rotation = q if rotation is None else quat.multiply(q, rotation)  # about fixed axes
        if rotation is not None:
            motion.rotations[:, j] = rotation
        if any(c in POSITION_CHANNELS for c in channels):
            motion.translations[:, j] = skeleton.rest_translations[j] + quat.rotate(skeleton.rest_rotations[j], shift)
    return motion


class _AmcData:
    """Lines of an AMC file sorted per joint, checked for names, counts and frame order."""

    def __init__(self, path: str, skeleton: Skeleton) -> None:
        self.path = path
        self.skeleton = skeleton
        self.angle = skeleton.meta.get("asf_units", {}).get("angle", "deg")
        self.fps_note: float | None = None
        # Compact int64 arrays: a bone line costs 16 bytes here, its numbers are split again
        # (a few thousand lines at a time) only when its joint's values are built.
        self.frame_lines = array("q")
        self.frame_numbers = array("q")
        j = skeleton.n_joints
        self.lines: list[str] = []
        self.row_lines = [array("q") for _ in range(j)]
        self.row_frames = [array("q") for _ in range(j)]
        self.names = {n: i for i, n in enumerate(skeleton.names)}
        self.lower = {n.lower(): i for i, n in reversed(list(enumerate(skeleton.names)))}
        self.names.setdefault("root", 0)  # the AMC always calls the root "root"
        self.counts = [len(c) for c in skeleton.channels]

    def error(self, line: int | None, problem: str) -> MocapFormatError:
        return MocapFormatError(self.path, line, problem)

    def read(self, lines: list[str]) -> None:
        self.lines = lines
        names, counts, row_lines, row_frames = self.names, self.counts, self.row_lines, self.row_frames
        for number, raw in enumerate(lines, start=1):
            if "#" in raw:
                if raw.lstrip().startswith("#"):
                    self._comment(number, raw.lstrip())
                    continue
                raw = raw.split("#", 1)[0]
            tokens = raw.split()
            if len(tokens) > 1 and self.frame_lines:  # the common case: a well-formed bone line
                j = names.get(tokens[0])
                if j is not None and len(tokens) - 1 == counts[j]:
                    row_lines[j].append(number)
                    row_frames[j].append(len(self.frame_lines) - 1)
                    continue
            if not tokens:
                continue
            if tokens[0].startswith(":"):
                self._keyword(number, tokens[0])
            elif len(tokens) == 1 and tokens[0].isascii() and tokens[0].isdigit():
                frame = whole(tokens[0])
                if frame is None:
                    raise self.error(number, f"frame number {shown(tokens[0])} is too large")
                self._frame(number, frame)
            else:
                self._bone(number, tokens)
        if not self.frame_lines:
            raise self.error(max(len(lines), 1), "no frames (no frame-number lines)")

    def _comment(self, number: int, raw: str) -> None:
        if raw.startswith(FPS_NOTE):
            text = raw[len(FPS_NOTE) :].strip()
            try:
                fps = parse_number(text)
            except BadNumber as bad:
                problem = f"frame-rate note needs a number, found {shown(text)}" if bad.syntax else bad.problem
                raise self.error(number, problem) from None
            if not fps > 0:
                raise self.error(number, f"frame rate must be positive, found {shown(text)}")
            if not 1.0 / MAX_FPS <= fps <= MAX_FPS:  # see MAX_FPS: 1/fps must stay finite and sane
                raise self.error(number, f"frame rate {fps:g} is outside {1 / MAX_FPS:g}-{MAX_FPS:g} frames a second")
            self.fps_note = fps

    def _keyword(self, number: int, token: str) -> None:
        if self.frame_lines:
            raise self.error(number, f"header keyword {shown(token)} after the first frame")
        if token.upper() == ":RADIANS":
            self.angle = "rad"
        elif token.upper() == ":DEGREES":
            self.angle = "deg"

    def _frame(self, number: int, frame: int) -> None:
        if self.frame_numbers and frame != self.frame_numbers[-1] + 1:
            raise self.error(number, f"frame number {frame} follows frame {self.frame_numbers[-1]}")
        self.frame_lines.append(number)
        self.frame_numbers.append(frame)

    def _bone(self, number: int, tokens: list[str]) -> None:
        if not self.frame_lines:
            raise self.error(number, f"values for {shown(tokens[0])} before the first frame number")
        j = self.names.get(tokens[0])
        if j is None:
            j = self.lower.get(tokens[0].lower())
        if j is None:
            raise self.error(number, f"bone {shown(tokens[0])} is not in the skeleton (ASF)")
        if len(tokens) - 1 != self.counts[j]:
            raise self.error(
                number, f"bone {shown(tokens[0])} needs {self.counts[j]} values (one per dof), found {len(tokens) - 1}"
            )
        self.row_lines[j].append(number)
        self.row_frames[j].append(len(self.frame_lines) - 1)

    def values(self) -> list[np.ndarray | None]:
        """(T, D_j) float arrays per joint (None without channels), after the frame checks."""
        return [self._joint_values(j) if self.counts[j] else None for j in range(self.skeleton.n_joints)]

    def _joint_values(self, j: int) -> np.ndarray:
        n_frames = len(self.frame_lines)
        frames = np.asarray(self.row_frames[j], dtype=int)
        repeated = np.flatnonzero(np.diff(frames) == 0)
        name = self.skeleton.names[j]
        if len(repeated):
            line = self.row_lines[j][repeated[0] + 1]
            raise self.error(
                line, f"bone {shown(name)} appears twice in frame {self.frame_numbers[frames[repeated[0]]]}"
            )
        missing = np.flatnonzero(np.bincount(frames, minlength=n_frames) == 0)
        if len(missing):
            f = missing[0]
            raise self.error(self.frame_lines[f], f"frame {self.frame_numbers[f]} has no values for bone {shown(name)}")
        values = np.empty((n_frames, self.counts[j]))
        numbers, owner = self.row_lines[j], f" for bone {shown(name)}"
        for start in range(0, n_frames, ROWS_AT_ONCE):
            part = numbers[start : start + ROWS_AT_ONCE]
            rows = [self.lines[i - 1].split("#", 1)[0].split()[1:] for i in part]
            values[start : start + len(part)] = parse_rows(self.path, part, rows, self.counts[j], owner)
        return values


def read_amc(
    path: str | os.PathLike, skeleton: Skeleton, fps: float | None = None, default_fps: float = DEFAULT_FPS
) -> Motion:
    """Read an AMC motion for ``skeleton`` (usually from :func:`read_asf`).

    fps: the frame rate to record (AMC stores none); None takes the rate our writer notes in
    the file, else ``default_fps`` (120, CMU's capture rate). Raises :class:`MocapFormatError` naming the
    file, line and problem (unknown bone, wrong value count, bad numbers, missing bones in a
    frame, frame numbers out of order, truncated file).
    """
    name = str(path)
    data = _AmcData(name, skeleton)
    lines, size = read_lines(path)
    data.read(lines)
    check_motion_size(name, data.frame_lines[-1], len(data.frame_lines), skeleton.n_joints, size)
    values = data.values()
    if all(v is None for v in values):
        values = [np.zeros((len(data.frame_lines), 0))] + values[1:]
    rate = fps if fps is not None else data.fps_note or default_fps
    return motion_from_dof_values(skeleton, values, rate, data.angle)


def read_asf_amc(asf_path: str | os.PathLike, amc_path: str | os.PathLike, fps: float | None = None) -> Motion:
    """Read an ASF skeleton and an AMC motion into one :class:`Motion`."""
    return read_amc(amc_path, read_asf(asf_path), fps)


# --- writing -----------------------------------------------------------------------------


def dof_values(motion: Motion) -> list[np.ndarray | None]:
    """Per joint, the (T, D_j) AMC numbers in dof order (degrees, Euler angles unwrapped over time)."""
    skeleton = motion.skeleton
    dofs = [channels_to_dofs(channels) for channels in skeleton.channels]
    orders = ["".join(d[1].upper() for d in ds if d[0] == "r") for ds in dofs]
    eulers = euler_by_order(motion.rotations, orders, extrinsic=True)
    delta = motion.translations - skeleton.rest_translations
    shifts = quat.rotate(quat.inverse(skeleton.rest_rotations), delta)  # (T, J, 3) in the bone's axes
    out: list[np.ndarray | None] = []
    for j, ds in enumerate(dofs):
        if not ds:
            out.append(None)
            continue
        columns = [
            eulers[j][:, orders[j].index(d[1].upper())] if d[0] == "r" else shifts[:, j, "xyz".index(d[1])] for d in ds
        ]
        out.append(np.stack(columns, axis=-1))
    return out


def fit_dofs(motion: Motion, tol: float = 1e-5) -> Motion:
    """The motion with dofs added where its joints' AMC numbers could not carry it.

    A joint keeps its dofs when writing and reading them back reproduces its rotation within
    ``tol`` radians and its translation within ``tol`` × the body size; otherwise its
    rotations become ``rx ry rz`` and/or its translations ``tx ty tz`` (e.g. a knee with only
    ``rx`` that an animator bent sideways), and its limits are dropped. Joints that fit are
    unchanged, so a motion read from an AMC keeps its file's dofs.
    """
    sk = motion.skeleton
    values = dof_values(motion)
    if all(v is None for v in values):
        values = [np.zeros((motion.n_frames, 0))] + values[1:]
    back = motion_from_dof_values(sk, values, motion.fps)
    turn = quat.angle(quat.multiply(quat.inverse(back.rotations), motion.rotations)).max(axis=0)
    gap = np.linalg.norm(back.translations - motion.translations, axis=-1).max(axis=0)
    rotate = turn > tol
    move = gap > tol * sk.size()
    if not (rotate.any() or move.any()):
        return motion
    channels, limits = list(sk.channels), list(sk.limits or (None,) * sk.n_joints)
    for j in np.flatnonzero(rotate | move):
        positions = tuple(c for c in channels[j] if c in POSITION_CHANNELS)
        rotations = tuple(c for c in channels[j] if c in ROTATION_CHANNELS)
        channels[j] = (POSITION_CHANNELS if move[j] else positions) + (
            dofs_to_channels(("rx", "ry", "rz")) if rotate[j] else rotations
        )
        limits[j] = None
    skeleton = Skeleton(
        sk.names,
        sk.parents,
        sk.rest_translations,
        sk.rest_rotations,
        tuple(channels),
        sk.end_site_parents,
        sk.end_site_offsets,
        tuple(limits) if any(x is not None for x in limits) else None,
        sk.meta,
    )
    return Motion(skeleton, motion.translations, motion.rotations, motion.fps)


def _tails(skeleton: Skeleton) -> np.ndarray:
    """(J, 3) bone vector of each joint in its own frame: where its children (or End Site) sit."""
    tails = np.zeros((skeleton.n_joints, 3))
    tails[skeleton.end_site_parents] = skeleton.end_site_offsets
    children = skeleton.parents >= 0
    tails[skeleton.parents[children]] = skeleton.rest_translations[children]
    tails[skeleton.parents < 0] = 0.0
    return tails


def asf_layout_problem(skeleton: Skeleton, tol: float = 1e-9) -> str | None:
    """Why ``skeleton`` cannot be written as ASF as it is (None when it can).

    ASF needs one root whose children start at it, all children of a bone starting at that
    bone's end, at most one End Site per leaf and none on inner joints, and bone names the
    ASF and AMC readers read back unchanged (:func:`.names.asf_name_problem`).
    :func:`to_asf_layout` fixes all of these (names by a reversible escape).
    """
    parents = skeleton.parents
    if np.count_nonzero(parents < 0) != 1 or parents[0] != -1:
        return f"ASF holds one root, the skeleton has {np.count_nonzero(parents < 0)}"
    has_child = np.bincount(parents[parents >= 0], minlength=skeleton.n_joints) > 0
    for j in range(1, skeleton.n_joints):
        name = skeleton.names[j]
        problem = asf_name_problem(name, bool(has_child[j]))
        if problem:
            return f"joint {name!r}: {problem}"
    tails = _tails(skeleton)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite offsets are the writers' to refuse
        child_gap = np.linalg.norm(skeleton.rest_translations - tails[np.maximum(parents, 0)], axis=1)
    if np.any(child_gap[1:] > tol):
        j = int(np.argmax(np.where(np.arange(len(parents)) > 0, child_gap, 0)))
        return f"joint {skeleton.names[j]!r} does not start at the end of its parent's bone"
    counts = np.bincount(skeleton.end_site_parents, minlength=skeleton.n_joints)
    if np.any(counts > 1) or np.any((counts > 0) & has_child) or counts[0] > 0:
        return "End Sites must be single and on leaf joints other than the root"
    return None


def _number_format(precision: int | None, style: str = "g"):
    """Text of one float: the shortest that reads back exactly (None), else ``precision`` digits."""
    if precision is None:
        return text_float
    return f"{{:.{precision}{style}}}".format


def _asf_title(name) -> str:
    """The ``:name`` text as the ASF reader reads it back: words, no comment or separators."""
    words = _SEPARATORS.sub(" ", str(name).split("#", 1)[0]).split()
    return " ".join(words) or "MocapWorkbench"


def _check_asf_numbers(path: str, skeleton: Skeleton, bones: np.ndarray, units: dict) -> None:
    """MocapWriteError for any number the ASF reader would refuse (non-finite, bad limits or units)."""
    for key in ("mass", "length"):
        value = units[key]
        if not (isinstance(value, (int, float, np.floating)) and np.isfinite(value) and value > 0):
            raise MocapWriteError(path, f"units {key} must be a positive finite number, found {value!r}")
    lengths = np.linalg.norm(bones, axis=1) if len(bones) else np.zeros(0)
    checks = [
        (representable(skeleton.rest_translations[0]).all(), 0, "its position is not finite or beyond ±1e12"),
        (representable(skeleton.rest_rotations).all(axis=1), None, "its rest rotation is not finite or beyond ±1e12"),
        (representable(skeleton.rest_translations).all(axis=1), None, "its rest offset is not finite or beyond ±1e12"),
        (
            representable(skeleton.end_site_offsets).all(axis=1),
            "end",
            "its End Site offset is not finite or beyond ±1e12",
        ),
        (representable(bones).all(axis=1) & representable(lengths), None, "its bone length is not finite (overflow)"),
    ]
    for ok, owner, problem in checks:
        ok = np.atleast_1d(ok)
        if ok.all():
            continue
        k = int(np.argmin(ok))
        j = 0 if owner == 0 else int(skeleton.end_site_parents[k]) if owner == "end" else k
        raise MocapWriteError(path, problem, "root" if j == 0 else skeleton.names[j])
    for j, pairs in enumerate(skeleton.limits or ()):
        for lo, hi in pairs or ():
            if np.isnan(lo) or np.isnan(hi) or lo > hi:
                raise MocapWriteError(
                    path, f"its limits ({lo!r}, {hi!r}) are not a (min, max) range", skeleton.names[j]
                )


def asf_text(skeleton: Skeleton, path: str | os.PathLike = "<asf>", precision: int | None = None) -> str:
    """The ASF file :func:`write_asf` writes for ``skeleton``, as text (nothing is written).

    Raises :class:`MocapWriteError` (a ValueError) when the skeleton has no ASF layout
    (:func:`asf_layout_problem`, including bone names ASF cannot hold; names are never
    changed here) or holds numbers the reader refuses (non-finite positions, rotations or
    lengths, e.g. a bone length that overflows; NaN or reversed limits; units that are not
    positive).
    """
    problem = asf_layout_problem(skeleton)
    if problem:
        raise MocapWriteError(str(path), f"{problem} (convert with to_asf_layout first)")
    _, world = rest_world(skeleton)
    axes = quat.multiply(quat.inverse(skeleton.rest_rotations[0]), world)  # C_j, in the root's pre-set frame
    with np.errstate(over="ignore", invalid="ignore"):
        bones = quat.rotate(axes, _tails(skeleton))
    units = {"mass": 1.0, "length": 1.0, **skeleton.meta.get("asf_units", {})}
    with np.errstate(over="ignore", invalid="ignore"):
        _check_asf_numbers(str(path), skeleton, bones, units)
    number = _number_format(precision)

    def vec(v) -> str:
        return " ".join(number(x) for x in v)

    def euler(q) -> str:
        return vec(np.degrees(quat.to_euler(q, "XYZ", extrinsic=True)))

    root_dofs = " ".join(d.upper() for d in channels_to_dofs(skeleton.channels[0]))
    origin = skeleton.meta.get("asf_origin") if skeleton.meta else None
    notes = []
    if origin:
        notes.append(f"{ROOT_NOTE} {origin['root']}")
        added = [n for n in origin["added"] if n in skeleton.names]
        notes += [f"{ADDED_NOTE} " + " ".join(added[i : i + 8]) for i in range(0, len(added), 8)]
    out = [
        "# ASF written by Mocap Workbench",
        *notes,
        ":version 1.10",
        f":name {_asf_title(skeleton.meta.get('asf_name', 'MocapWorkbench'))}",
        ":units",
        f"  mass {text_float(units['mass'])}",
        f"  length {text_float(units['length'])}",
        "  angle deg",
        ":root",
        f"  order {root_dofs}",
        "  axis XYZ",
        f"  position {vec(skeleton.rest_translations[0])}",
        f"  orientation {euler(skeleton.rest_rotations[0])}",
        ":bonedata",
    ]
    axis_angles = np.degrees(quat.to_euler(axes, "XYZ", extrinsic=True))  # all bones at once
    lengths = np.linalg.norm(bones, axis=1)
    for j in range(1, skeleton.n_joints):
        out += _bone_lines(skeleton, j, bones[j], lengths[j], vec(axis_angles[j]), vec)
    out += [":hierarchy", "  begin"]
    children: list[list[int]] = [[] for _ in range(skeleton.n_joints)]
    for j, p in enumerate(skeleton.parents):
        if p >= 0:
            children[p].append(j)
    for j, kids in enumerate(children):
        if kids:
            parent = "root" if j == 0 else skeleton.names[j]
            out.append(f"    {parent} " + " ".join(skeleton.names[k] for k in kids))
    out.append("  end")
    return "\n".join(out) + "\n"


def write_asf(skeleton: Skeleton, path: str | os.PathLike, precision: int | None = None) -> None:
    """Write ``skeleton`` as an ASF file (angles in degrees, lengths in scene units).

    The skeleton must already have ASF's layout (``asf_layout_problem`` is None; use
    :func:`to_asf_layout` or :func:`write_asf_amc`), otherwise :class:`MocapWriteError` (a
    ValueError), as for non-finite numbers (see :func:`asf_text`). precision: significant
    digits, None (default) for the shortest text that reads back exactly — the AMC's root and
    bone translations are displacements from these offsets, so any rounding here moves the
    whole motion. The text is built in memory and written in one call, after every check.
    """
    text = asf_text(skeleton, path, precision)
    Path(path).write_bytes(text.encode("utf-8"))


def _bone_lines(skeleton: Skeleton, j: int, bone: np.ndarray, length: float, axis: str, vec) -> list[str]:
    length = float(length)
    direction = bone / length if length > 0 else np.array([1.0, 0.0, 0.0])
    lines = ["  begin", f"    id {j}", f"    name {skeleton.names[j]}", f"    direction {vec(direction)}"]
    lines += [f"    length {vec([length])}", f"    axis {axis} XYZ"]
    channels = skeleton.channels[j]
    if channels:
        lines.append("    dof " + " ".join(channels_to_dofs(channels)))
        limits = skeleton.limits[j] if skeleton.limits is not None else None
        by_channel = dict(zip(channels, limits or [(-np.inf, np.inf)] * len(channels)))
        pairs = [by_channel[DOF_CHANNELS[d]] for d in channels_to_dofs(channels)]
        text = [f"({vec([lo])} {vec([hi])})" for lo, hi in pairs]
        lines.append("    limits " + text[0])
        lines += ["           " + t for t in text[1:]]
    lines.append("  end")
    return lines


def amc_text(motion: Motion, path: str | os.PathLike = "<amc>", precision: int | None = None) -> str:
    """The AMC file :func:`write_amc` writes for ``motion``, as text (nothing is written).

    Names and numbers are joined as plain text, never through a format template. Raises
    :class:`MocapWriteError` (a ValueError) when the skeleton has no ASF layout (see
    :func:`asf_text`), for no frames, a frame rate that is not positive and finite, or
    values that are not finite.
    """
    skeleton = motion.skeleton
    problem = asf_layout_problem(skeleton)
    if problem:
        raise MocapWriteError(str(path), f"{problem} (convert with to_asf_layout first)")
    fps = float(motion.fps)
    if not (np.isfinite(fps) and fps > 0):
        raise MocapWriteError(str(path), f"the frame rate must be positive and finite, found {motion.fps!r}")
    if motion.n_frames < 1:
        raise MocapWriteError(str(path), "an AMC file needs at least one frame")
    check_finite_motion(str(path), motion)
    values = dof_values(motion)
    joints = [j for j, v in enumerate(values) if v is not None]
    for j in joints:
        if not representable(values[j]).all():
            raise MocapWriteError(
                str(path), "its values are not finite or beyond ±1e12", "root" if j == 0 else skeleton.names[j]
            )
    number = _number_format(precision, "f")
    columns = [[str(i + 1) for i in range(motion.n_frames)]]
    for j in joints:
        name = "root" if j == 0 else skeleton.names[j]
        columns.append([name + " " + " ".join(number(x) for x in row) for row in (values[j] + 0.0).tolist()])
    header = ["# AMC written by Mocap Workbench", f"{FPS_NOTE} {text_float(fps)}", ":FULLY-SPECIFIED", ":DEGREES"]
    body = ["\n".join(frame) for frame in zip(*columns)]
    return "\n".join(header + body) + "\n"


def write_amc(motion: Motion, path: str | os.PathLike, precision: int | None = None) -> None:
    """Write ``motion`` as AMC (degrees) for the ASF of its skeleton; notes the frame rate in a comment.

    Joints without channels get no lines (like CMU's files). The skeleton must have ASF's
    layout (see :func:`write_asf`); refusals (:class:`MocapWriteError`, see :func:`amc_text`)
    come before the file is touched. precision: decimals, None (default) for the shortest
    text that reads back exactly.
    """
    text = amc_text(motion, path, precision)
    Path(path).write_bytes(text.encode("utf-8"))


def write_asf_amc(
    motion: Motion, asf_path: str | os.PathLike, amc_path: str | os.PathLike, tol: float = 1e-9
) -> Motion:
    """Write ``motion`` as an ASF/AMC pair, converting to ASF's layout first; returns what was written.

    tol: offsets closer than this count as equal when fitting ASF's layout (see
    :func:`to_asf_layout`, which also escapes names ASF cannot hold), e.g. for rest poses read
    from single-precision data. Both files are built and checked before either is written.
    """
    shaped = to_asf_layout(motion, tol)
    asf = asf_text(shaped.skeleton, asf_path)
    amc = amc_text(shaped, amc_path)
    Path(asf_path).write_bytes(asf.encode("utf-8"))
    Path(amc_path).write_bytes(amc.encode("utf-8"))
    return shaped


# --- making any skeleton ASF-shaped ------------------------------------------------------


def _shared_tail(offsets: list[np.ndarray], tol: float) -> np.ndarray:
    """The offset shared by most of ``offsets`` (ties: the first), or zero when there are none."""
    if not offsets:
        return np.zeros(3)
    votes = [sum(np.linalg.norm(o - other) <= tol for other in offsets) for o in offsets]
    return np.asarray(offsets[int(np.argmax(votes))], dtype=float)


class _Builder:
    """Collects joints (names, parents, rest transforms, channels, limits, animation) in order."""

    def __init__(self, n_frames: int, reserved=()) -> None:
        self.n_frames = n_frames
        self.names: list[str] = []
        self.taken: set[str] = {"root", *(n.lower() for n in reserved)}
        self.cols: dict[str, list] = {k: [] for k in ("parents", "rest_t", "rest_r", "channels", "limits", "t", "r")}
        self.end_parents: list[int] = []
        self.end_offsets: list[np.ndarray] = []
        self.added: list[str] = []

    def unique(self, name: str) -> str:
        base, k = name, 2
        while name.lower() in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name.lower())
        return name

    def add(self, name, parent, rest_t, rest_r, channels=(), limits=None, t=None, r=None) -> int:
        self.names.append(name)
        for key, value in zip(self.cols, (parent, rest_t, rest_r, channels, limits)):
            self.cols[key].append(value)
        self.cols["t"].append(np.broadcast_to(rest_t, (self.n_frames, 3)) if t is None else t)
        self.cols["r"].append(quat.identity((self.n_frames,)) if r is None else r)
        return len(self.names) - 1

    def link(self, name: str, parent: int, start: np.ndarray) -> int:
        """A fixed bone (no dof) from ``start`` in ``parent``'s frame: bridges offsets ASF cannot hold."""
        name = self.unique(name)
        self.added.append(name)
        return self.add(name, parent, start, quat.identity())

    def motion(self, skeleton: Skeleton, fps: float, meta: dict | None = None) -> Motion:
        c = self.cols
        limits = tuple(c["limits"]) if any(x is not None for x in c["limits"]) else None
        new = Skeleton(
            self.names,
            c["parents"],
            np.array(c["rest_t"]),
            np.array(c["rest_r"]),
            tuple(c["channels"]),
            np.array(self.end_parents, dtype=int),
            np.array(self.end_offsets).reshape(-1, 3),
            limits,
            skeleton.meta if meta is None else meta,
        )
        return Motion(new, np.stack(c["t"], axis=1), np.stack(c["r"], axis=1), fps)


def to_asf_layout(motion: Motion, tol: float = 1e-9) -> Motion:
    """The same motion on a skeleton ASF can hold; world positions of all joints unchanged.

    A bone has one end and all its children start there (the root's at the root), so a
    child whose rest offset differs from the parent's bone end (the offset most children
    share) hangs from an added fixed bone ``<child>_link`` from that end to the child; extra
    End Sites get a fixed leaf bone ``<joint>_end``. The root is called ``root``; every
    other name goes through :func:`.names.escape_asf_name`, a reversible percent-escape
    that changes only names ASF cannot hold (``Bip01 L Thigh`` → ``Bip01%20L%20Thigh``,
    ``End`` → ``%45nd``, a non-root ``root`` → ``%72oot``) or that contain ``%`` and two
    hex digits; :func:`.names.unescape_name` gives them back. Added bones take the next
    free ``_2``, ``_3``... suffix, never a joint's name. Joints keep their channels,
    rotations and limits; translations of re-hung joints are shifted by the bridged offset.
    A child within ``tol`` of its parent's bone end is moved onto it exactly (its world
    position changes by less than ``tol``). Raises ValueError for more than one root and
    for names that cannot be escaped (empty, or not encodable as UTF-8).
    """
    sk = motion.skeleton
    if np.count_nonzero(sk.parents < 0) != 1 or sk.parents[0] != -1:
        raise ValueError(f"ASF holds one root, the skeleton has {np.count_nonzero(sk.parents < 0)}")
    if asf_layout_problem(sk) is None and sk.names[0] == "root":
        return motion
    n = sk.n_joints
    ends = [[o for p, o in zip(sk.end_site_parents, sk.end_site_offsets) if p == j] for j in range(n)]
    kids = [np.flatnonzero(sk.parents == j) for j in range(n)]
    tails = [np.zeros(3)] + [
        _shared_tail([sk.rest_translations[k] for k in kids[j]] or ends[j][:1], tol) for j in range(1, n)
    ]
    names = ["root"]
    for name in sk.names[1:]:
        try:
            names.append(escape_asf_name(name))
        except ValueError:
            raise ValueError(f"joint {name!r} cannot be given an ASF name (empty or not UTF-8)") from None
    out = _Builder(motion.n_frames, names)
    new = {}
    limits = sk.limits or (None,) * n
    for j in range(n):
        p = sk.parents[j]
        parent, shift = (new[p], tails[p]) if p >= 0 else (-1, np.zeros(3))
        if p >= 0 and np.linalg.norm(sk.rest_translations[j] - tails[p]) > tol:
            parent = out.link(f"{names[j]}_link", parent, tails[p])
        elif p >= 0:
            shift = sk.rest_translations[j] - tails[p]  # snap onto the bone end
        new[j] = out.add(
            names[j],
            parent,
            sk.rest_translations[j] - shift,
            sk.rest_rotations[j],
            sk.channels[j],
            limits[j],
            motion.translations[:, j] - shift,
            motion.rotations[:, j],
        )
        direct = p >= 0 and not len(kids[j]) and len(ends[j]) == 1  # a leaf bone ending at its End Site
        for offset in ends[j]:
            owner = new[j]
            if not direct:
                owner = out.link(f"{names[j]}_end", new[j], tails[j])
                offset = offset - tails[j]
            out.end_parents.append(owner)
            out.end_offsets.append(offset)
    origin = {"root": escape_asf_name(sk.names[0]), "added": list(out.added)}
    return out.motion(sk, motion.fps, {**(sk.meta or {}), "asf_origin": origin})


def from_asf_layout(motion: Motion) -> Motion:
    """The skeleton :func:`to_asf_layout` started from, for a motion read from an ASF our writer
    made (its ``# Mocap Workbench root/added`` notes, kept in ``skeleton.meta["asf_origin"]``): the
    fixed bones it added (``_link``, ``_end``) removed with their offsets folded into their children
    and End Sites, the root's own name back and every name unescaped
    (:func:`.names.unescape_name`). World positions of the remaining joints and End Sites are
    unchanged. Motions without those notes (CMU's ASF, any other), or whose notes would give two
    joints one name, are returned as they are.
    """
    sk = motion.skeleton
    origin = (sk.meta or {}).get("asf_origin")
    if not origin:
        return motion
    removed = {j for j, name in enumerate(sk.names) if name in set(origin["added"]) and not sk.channels[j] and j > 0}
    keep = [j for j in range(sk.n_joints) if j not in removed]
    index = {j: i for i, j in enumerate(keep)}
    rest_t, rest_r = sk.rest_translations.copy(), sk.rest_rotations.copy()
    t, r = motion.translations.copy(), motion.rotations.copy()
    parents = sk.parents.copy()
    ends_parent, ends_offset = sk.end_site_parents.copy(), sk.end_site_offsets.copy()
    for j in sorted(removed, reverse=True):  # deepest first: a removed bone's own parent is folded later
        p = parents[j]
        frame = quat.multiply(rest_r[j], r[:, j])  # (T, 4) the fixed bone's pose in its parent (constant)
        for c in np.flatnonzero(parents == j):
            rest_t[c] = rest_t[j] + quat.rotate(rest_r[j], rest_t[c])
            rest_r[c] = quat.multiply(rest_r[j], rest_r[c])
            t[:, c] = t[:, j] + quat.rotate(frame, t[:, c])
            parents[c] = p
        mine = ends_parent == j
        ends_offset[mine] = rest_t[j] + quat.rotate(rest_r[j], ends_offset[mine])
        ends_parent[mine] = p
    order = np.argsort([index[p] for p in ends_parent], kind="stable")  # End Sites in joint order, as BVH lists them
    ends_parent, ends_offset = ends_parent[order], ends_offset[order]
    names = [unescape_name(origin["root"] if j == 0 else sk.names[j]) for j in keep]
    if len(set(names)) != len(names):  # notes that do not fit this skeleton (an edited file): keep it as read
        return motion
    limits = tuple(sk.limits[j] for j in keep) if sk.limits is not None else None
    meta = {k: v for k, v in sk.meta.items() if k != "asf_origin"}
    skeleton = Skeleton(names, [index[parents[j]] if parents[j] >= 0 else -1 for j in keep], rest_t[keep], rest_r[keep],
                        tuple(sk.channels[j] for j in keep), np.array([index[p] for p in ends_parent], dtype=int),
                        ends_offset, limits, meta)  # fmt: skip
    return Motion(skeleton, t[:, keep], r[:, keep], motion.fps)
