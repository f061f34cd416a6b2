"""Reading and writing actions: the only module that knows Blender's animation API versions.

4.2: ``Action.fcurves``, ``fcurves.new(data_path, index, action_group)``.
4.4/4.5: slotted actions, layers → strips → ``strip.channelbag(slot)``;
``channelbag.fcurves.new(data_path, index)`` (a legacy ``Action.fcurves`` proxy remains).
5.0: ``Action.fcurves`` is gone; ``channelbag.fcurves.new(data_path, index, group_name)``.
Keys are always read with ``foreach_get`` and written with ``add`` + ``foreach_set``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np

SLOTTED = bpy.app.version >= (4, 4, 0)
GROUP_NAME_IN_NEW = bpy.app.version >= (5, 0, 0)
INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}
HANDLE_FREE = 0  # BezTriple handle types: FREE 0, AUTO 1, VECTOR 2, ALIGNED 3, AUTO_CLAMPED 4


@dataclass
class Channels:
    """Where an object's F-curves live: the action, its slot (4.4+) and the F-curve container."""

    action: Any
    slot: Any
    fcurves: Any
    groups: Any


def _channelbag(action: Any, slot: Any, create: bool) -> Any:
    if slot is None:
        return None
    if create:
        layer = action.layers[0] if len(action.layers) else action.layers.new("Layer")
        strip = layer.strips[0] if len(layer.strips) else layer.strips.new(type="KEYFRAME")
        return strip.channelbag(slot, ensure=True)
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            if bag is not None:
                return bag
    return None


def object_channels(obj: Any) -> Channels | None:
    """The F-curves that animate ``obj`` through its active action, or None without one."""
    anim = obj.animation_data
    action = anim.action if anim else None
    if action is None:
        return None
    if not SLOTTED:
        return Channels(action, None, action.fcurves, action.groups)
    slot = anim.action_slot
    if slot is None and len(action.slots):
        slot = action.slots[0]
    bag = _channelbag(action, slot, create=False)
    if bag is None:
        return Channels(action, slot, [], None)
    return Channels(action, slot, bag.fcurves, bag.groups)


def _slot_for(obj: Any, action: Any) -> Any:
    """The slot of ``action`` meant for ``obj``: the one it uses, the one named after it, else the
    first object slot that has F-curves."""
    anim = obj.animation_data
    if anim is not None and anim.action == action and anim.action_slot is not None:
        return anim.action_slot
    slots = [s for s in action.slots if s.target_id_type in {"OBJECT", "UNSPECIFIED"}]
    for slot in slots:
        if slot.name_display == obj.name:
            return slot
    for slot in slots:
        bag = _channelbag(action, slot, create=False)
        if bag is not None and len(bag.fcurves):
            return slot
    return slots[0] if slots else None


def action_channels(obj: Any, action: Any) -> Channels:
    """The F-curves of ``action`` as they would animate ``obj``, without assigning it."""
    anim = obj.animation_data
    if anim is not None and anim.action == action:
        return object_channels(obj)
    if not SLOTTED:
        return Channels(action, None, action.fcurves, action.groups)
    slot = _slot_for(obj, action)
    bag = _channelbag(action, slot, create=False)
    if bag is None:
        return Channels(action, slot, [], None)
    return Channels(action, slot, bag.fcurves, bag.groups)


def data_paths(action: Any) -> Any:
    """Every F-curve data path of an action (all slots), lazily."""
    if not SLOTTED:
        return (fc.data_path for fc in action.fcurves)
    return (fc.data_path for layer in action.layers for strip in layer.strips
            for bag in strip.channelbags for fc in bag.fcurves)  # fmt: skip


_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]')


def animated_bones(action: Any) -> set[str]:
    """Names of the bones ``action`` has curves on (any slot)."""
    found = set()
    for path in data_paths(action):
        m = _BONE_PATH.match(path)
        if m:
            found.add(bpy.utils.unescape_identifier(m.group(1)))
    return found


def animates_bones(action: Any, bones: Any) -> bool:
    """Whether ``action`` has a curve on one of ``bones`` (names, or an armature's bones), any slot."""
    for path in data_paths(action):
        m = _BONE_PATH.match(path)
        if m and bpy.utils.unescape_identifier(m.group(1)) in bones:
            return True
    return False


def new_action_for(obj: Any, name: str) -> Channels:
    """A new, empty action with a slot for ``obj`` (not yet assigned)."""
    action = bpy.data.actions.new(name)
    if not SLOTTED:
        return Channels(action, None, action.fcurves, action.groups)
    slot = action.slots.new(id_type="OBJECT", name=obj.name)
    bag = _channelbag(action, slot, create=True)
    return Channels(action, slot, bag.fcurves, bag.groups)


def keep(action: Any) -> None:
    """Give an action about to be unassigned a fake user, so saving keeps it (linked actions are
    kept by their library)."""
    if action.library is None:
        action.use_fake_user = True


def assign(obj: Any, channels: Channels) -> None:
    """Make ``channels.action`` (and its slot) the active action of ``obj``."""
    if obj.animation_data is None:
        obj.animation_data_create()
    obj.animation_data.action = channels.action
    if SLOTTED and channels.slot is not None:
        obj.animation_data.action_slot = channels.slot


def new_fcurve(channels: Channels, data_path: str, index: int, group: str = "") -> Any:
    """Create an F-curve, in the named group when given (created as needed)."""
    if GROUP_NAME_IN_NEW:
        return channels.fcurves.new(data_path, index=index, group_name=group)
    if not SLOTTED:
        return channels.fcurves.new(data_path, index=index, action_group=group)
    fcurve = channels.fcurves.new(data_path, index=index)
    if group:
        grp = channels.groups.get(group) or channels.groups.new(group)
        fcurve.group = grp
    return fcurve


def remove_fcurve(channels: Channels, fcurve: Any) -> None:
    channels.fcurves.remove(fcurve)


def read_keys(fcurve: Any) -> np.ndarray:
    """(n, 2) frame and value of every key of an F-curve."""
    n = len(fcurve.keyframe_points)
    co = np.empty(2 * n, dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return co.reshape(n, 2).astype(float)


def sample(fcurve: Any, frames: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
    """Values of an F-curve at integer ``frames``: its keys directly when it has exactly one
    key per frame there, else ``fcurve.evaluate`` (which honours interpolation and modifiers).
    keys: its :func:`read_keys`, when already read."""
    keys = read_keys(fcurve) if keys is None else keys
    if len(keys) == len(frames) and not len(fcurve.modifiers) and np.array_equal(keys[:, 0], frames.astype(np.float32)):
        return keys[:, 1]
    evaluate = fcurve.evaluate
    return np.fromiter((evaluate(f) for f in frames.tolist()), dtype=float, count=len(frames))


_PLAYED = (("co", 2, np.float32), ("handle_left", 2, np.float32), ("handle_right", 2, np.float32),
           ("interpolation", 1, np.int32))  # fmt: skip


def play(fcurves: list[Any], frames: np.ndarray, written: list | None = None) -> np.ndarray:
    """Values (T, C) of F-curves at ``frames`` as Blender plays them, computed in numpy from their keys
    read in bulk (:func:`core.keyframes.bezier.play_curves`: Blender's interpolation and
    extrapolation), or by ``fcurve.evaluate`` for a curve the core does not play (modifiers, easing
    interpolations). Equal to :func:`sample` to float rounding, without a Python call per frame.
    written: for each curve, its keys as just written by :func:`write_curves` (not read again), or None."""
    from ...core.keyframes import bezier  # not at registration: core.keyframes is imported on first use

    frames = np.asarray(frames)
    out = np.empty((len(frames), len(fcurves)))
    played, keys = [], []
    for c, fcurve in enumerate(fcurves):
        known = None if written is None else written[c]
        if known is not None and not len(fcurve.modifiers):
            played.append(c)
            keys.append(known)
            continue
        k = _key_arrays(fcurve.keyframe_points, _PLAYED)
        if len(fcurve.modifiers) or not bezier.plays(k["interpolation"]):
            evaluate = fcurve.evaluate
            out[:, c] = np.fromiter((evaluate(f) for f in frames.tolist()), dtype=float, count=len(frames))
            continue
        played.append(c)
        keys.append(bezier.CurveKeys(k["co"], k["handle_left"], k["handle_right"], k["interpolation"][:, 0],
                                     fcurve.extrapolation == "LINEAR"))  # fmt: skip
    if played:
        out[:, played] = bezier.play_curves(keys, frames)
    return out


def write_keys(
    fcurve: Any,
    frames: np.ndarray,
    values: np.ndarray,
    interpolation: str = "LINEAR",
    handles: tuple[np.ndarray, np.ndarray] | None = None,
) -> None:
    """Replace an F-curve's keys with (frames, values) in one bulk write.

    handles: (h1, h2), each (n−1,): the values of the right handle of keys 0..n−2 and of
    the left handle of keys 1..n−1, placed at the thirds of each segment; the keys become
    BEZIER with FREE handles, so Blender keeps them as given.
    """
    points = fcurve.keyframe_points
    if len(points):
        points.clear()
    n = len(frames)
    points.add(n)
    co = np.empty((n, 2), dtype=np.float32)
    co[:, 0] = frames
    co[:, 1] = values
    points.foreach_set("co", co.ravel())
    if handles is not None and n > 1:
        left, right = _free_handles(co, handles)
        points.foreach_set("handle_left_type", np.full(n, HANDLE_FREE, dtype=np.int32))
        points.foreach_set("handle_right_type", np.full(n, HANDLE_FREE, dtype=np.int32))
        points.foreach_set("handle_left", left.astype(np.float32).ravel())
        points.foreach_set("handle_right", right.astype(np.float32).ravel())
        interpolation = "BEZIER"
    points.foreach_set("interpolation", np.full(n, INTERPOLATION[interpolation], dtype=np.int32))
    fcurve.update()


def write_curves(fcurves: list[Any], frames: list[np.ndarray], values: list[np.ndarray],
                 handles: list[tuple[np.ndarray, np.ndarray]]) -> list:  # fmt: skip
    """:func:`write_keys` with ``handles`` on many F-curves (each its frames (n,), values (n,) and
    handles): the handles of all computed at once, each curve written with one ``foreach_set`` a
    property. Returns each curve's keys as written (:class:`core.keyframes.bezier.CurveKeys`, what
    Blender stores and plays: :func:`play` takes them), None for a curve of one key (written LINEAR)."""
    from ...core.keyframes.bezier import CurveKeys

    written: list = [None] * len(fcurves)
    many = [c for c in range(len(fcurves)) if len(frames[c]) > 1]
    for c in range(len(fcurves)):
        if len(frames[c]) <= 1:
            write_keys(fcurves[c], frames[c], values[c])
    if not many:
        return written
    sizes = np.array([len(frames[c]) for c in many])
    ends = np.cumsum(sizes)
    starts = ends - sizes
    co = np.empty((int(ends[-1]), 2), dtype=np.float32)
    co[:, 0] = np.concatenate([frames[c] for c in many])
    co[:, 1] = np.concatenate([values[c] for c in many])
    left, right = _free_handles(co, (np.concatenate([handles[c][0] for c in many]),
                                     np.concatenate([handles[c][1] for c in many])), starts)  # fmt: skip
    left, right = left.astype(np.float32), right.astype(np.float32)
    free = np.full(int(sizes.max()), HANDLE_FREE, dtype=np.int32)
    bezier = np.full(int(sizes.max()), INTERPOLATION["BEZIER"], dtype=np.int32)
    for c, a, b in zip(many, starts.tolist(), ends.tolist()):
        fcurve, n = fcurves[c], b - a
        points = fcurve.keyframe_points
        if len(points):
            points.clear()
        points.add(n)
        points.foreach_set("co", co[a:b].ravel())
        points.foreach_set("handle_left_type", free[:n])
        points.foreach_set("handle_right_type", free[:n])
        points.foreach_set("handle_left", left[a:b].ravel())
        points.foreach_set("handle_right", right[a:b].ravel())
        points.foreach_set("interpolation", bezier[:n])
        fcurve.update()
        written[c] = CurveKeys(co[a:b], left[a:b], right[a:b], bezier[:n], fcurve.extrapolation == "LINEAR")
    return written


def _free_handles(
    co: np.ndarray, handles: tuple[np.ndarray, np.ndarray], starts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(left, right) handle positions (n, 2) of keys ``co`` (n, 2) from the handle values (h1, h2) of
    :func:`write_keys`, at the thirds of each segment; the outer handles continue the end segments.
    starts: the first key of each curve when ``co`` holds several laid end to end (each at least 2 keys;
    h1, h2 then hold each curve's segments in turn)."""
    h1, h2 = handles
    n = len(co)
    starts = np.zeros(1, dtype=int) if starts is None else np.asarray(starts)
    firsts = np.zeros(n, dtype=bool)
    firsts[starts] = True
    lasts = np.roll(firsts, -1)  # the key before each curve's first, and the very last
    left = co.astype(float)
    right = left.copy()
    third = np.diff(left[:, 0]) / 3.0
    inner = ~firsts[1:]  # segments inside a curve (not from one curve's last key to the next's first)
    third = third[inner]
    before, after = np.flatnonzero(~lasts), np.flatnonzero(~firsts)
    right[before, 0] += third
    right[before, 1] = h1
    left[after, 0] -= third
    left[after, 1] = h2
    ends = np.flatnonzero(lasts)
    left[starts] = 2 * left[starts] - right[starts]
    right[ends] = 2 * right[ends] - left[ends]
    return left, right


_KEY_PROPERTIES = (("co", 2, np.float32), ("handle_left", 2, np.float32), ("handle_right", 2, np.float32),
                   ("interpolation", 1, np.int32), ("easing", 1, np.int32), ("type", 1, np.int32),
                   ("handle_left_type", 1, np.int32), ("handle_right_type", 1, np.int32))  # fmt: skip


def copy_fcurve(source: Any, target: Channels) -> Any:
    """Copy an F-curve with all its keys and handles into ``target`` (modifiers are not copied)."""
    group = source.group.name if source.group else ""
    fcurve = new_fcurve(target, source.data_path, source.array_index, group)
    fcurve.keyframe_points.add(len(source.keyframe_points))
    for name, values in _key_arrays(source.keyframe_points, _KEY_PROPERTIES).items():
        fcurve.keyframe_points.foreach_set(name, values.ravel())
    fcurve.extrapolation = source.extrapolation
    fcurve.update()
    return fcurve


def add_strip(obj: Any, track_name: str, start: int, channels: Channels) -> Any:
    """A new NLA track on top of ``obj``'s stack holding one strip of ``channels.action`` at frame
    ``start`` (its slot for ``obj`` on 4.4+)."""
    if obj.animation_data is None:
        obj.animation_data_create()
    track = obj.animation_data.nla_tracks.new()
    track.name = track_name
    strip = track.strips.new(channels.action.name, int(start), channels.action)
    if SLOTTED and channels.slot is not None and strip.action_slot != channels.slot:
        strip.action_slot = channels.slot
    return strip


def _key_arrays(points: Any, properties: tuple) -> dict[str, np.ndarray]:
    """Every key's ``properties`` ((name, width, dtype) each) read in bulk: name → (n, width)."""
    n = len(points)
    out = {}
    for name, width, dtype in properties:
        buffer = np.empty(n * width, dtype=dtype)
        points.foreach_get(name, buffer)
        out[name] = buffer.reshape(n, width)
    return out


def _write_spliced(fcurve: Any, old: dict, keep: np.ndarray, new: dict) -> None:
    """Rewrite ``fcurve``'s keys as the ``keep`` rows of ``old`` plus ``new`` (:data:`_KEY_PROPERTIES`' name →
    (n, width) each), in frame order, in bulk: the one write both splices end with."""
    points = fcurve.keyframe_points
    merged = {name: np.concatenate((old[name][keep], new[name].astype(dtype))) for name, _, dtype in _KEY_PROPERTIES}
    order = np.argsort(merged["co"][:, 0], kind="stable")
    points.clear()
    points.add(len(order))
    for name, _, dtype in _KEY_PROPERTIES:
        points.foreach_set(name, np.ascontiguousarray(merged[name][order], dtype=dtype).ravel())
    fcurve.update()


def splice_keys(fcurve: Any, frames: np.ndarray, values: np.ndarray) -> None:
    """Replace the keys of an F-curve from ``frames[0]`` to ``frames[-1]`` with LINEAR keys
    (frames, values); keys outside keep everything (values, handles, interpolation, easing, type)."""
    points = fcurve.keyframe_points
    old = _key_arrays(points, _KEY_PROPERTIES)
    keep = (old["co"][:, 0] < frames[0] - 1e-3) | (old["co"][:, 0] > frames[-1] + 1e-3)
    m = len(frames)
    new = {
        "co": np.stack((frames, values), axis=1),
        "handle_left": np.stack((frames - 1.0 / 3.0, values), axis=1),
        "handle_right": np.stack((frames + 1.0 / 3.0, values), axis=1),
        "interpolation": np.full((m, 1), INTERPOLATION["LINEAR"]),
        "easing": np.zeros((m, 1)),  # AUTO
        "type": np.zeros((m, 1)),  # KEYFRAME
        "handle_left_type": np.full((m, 1), 4),  # AUTO_CLAMPED
        "handle_right_type": np.full((m, 1), 4),
    }
    _write_spliced(fcurve, old, keep, new)


def replace_span_keys(
    fcurve: Any, frames: np.ndarray, values: np.ndarray, handles: tuple[np.ndarray, np.ndarray] | None = None
) -> None:
    """Replace the keys of an F-curve from ``frames[0]`` to ``frames[-1]`` with (frames, values) — FREE
    Bezier keys with ``handles`` as in :func:`write_keys`, else LINEAR — so the curve outside plays as
    before: keys outside keep everything, and a key the curve already had at either end stays (its
    frame, value and outer handle; at the last frame, its interpolation onwards too)."""
    points = fcurve.keyframe_points
    old = _key_arrays(points, _KEY_PROPERTIES)
    at = old["co"][:, 0]
    keep = (at < frames[0] - 1e-3) | (at > frames[-1] + 1e-3)
    m = len(frames)
    co = np.stack((np.asarray(frames, dtype=float), np.asarray(values, dtype=float)), axis=1)
    if handles is not None and m > 1:
        left, right = _free_handles(co, handles)
        mode = INTERPOLATION["BEZIER"]
    else:
        left, right = co - [1.0 / 3.0, 0.0], co + [1.0 / 3.0, 0.0]
        mode = INTERPOLATION["LINEAR"]
    new = {
        "co": co,
        "handle_left": left,
        "handle_right": right,
        "interpolation": np.full((m, 1), mode),
        "easing": np.zeros((m, 1)),
        "type": np.zeros((m, 1)),  # KEYFRAME
        "handle_left_type": np.full((m, 1), HANDLE_FREE),
        "handle_right_type": np.full((m, 1), HANDLE_FREE),
    }
    first = np.flatnonzero(np.abs(at - frames[0]) <= 1e-3)
    if len(first):
        new["co"][0], new["handle_left"][0] = old["co"][first[0]], old["handle_left"][first[0]]
    last = np.flatnonzero(np.abs(at - frames[-1]) <= 1e-3)
    before = np.flatnonzero(at < frames[-1] - 1e-3)  # the key whose segment ran on past the span
    if len(last):
        new["co"][-1], new["handle_right"][-1] = old["co"][last[0]], old["handle_right"][last[0]]
        new["interpolation"][-1] = old["interpolation"][last[0]]
    elif len(before):
        new["interpolation"][-1] = old["interpolation"][before[-1]]
    _write_spliced(fcurve, old, keep, new)


def curve_lists(action: Any) -> list[Any]:
    """Every F-curve container of an action: ``Action.fcurves`` (4.2), else each channelbag's."""
    if not SLOTTED:
        return [action.fcurves]
    return [bag.fcurves for layer in action.layers for strip in layer.strips for bag in strip.channelbags]


def restore_keys(action: Any, copy: Any) -> None:
    """Put back the keys of ``action`` from ``copy`` (made by ``action.copy()`` before the keys
    changed): every key, handle, interpolation, easing and type, and the custom properties."""
    for fcurves, saved in zip(curve_lists(action), curve_lists(copy)):
        by_channel = {(fc.data_path, fc.array_index): fc for fc in saved}
        for fcurve in list(fcurves):
            source = by_channel.get((fcurve.data_path, fcurve.array_index))
            if source is None:
                fcurves.remove(fcurve)
                continue
            points = fcurve.keyframe_points
            points.clear()
            points.add(len(source.keyframe_points))
            for name, values in _key_arrays(source.keyframe_points, _KEY_PROPERTIES).items():
                points.foreach_set(name, values.ravel())
            fcurve.update()
    for key in list(action.keys()):
        del action[key]
    for key, value in copy.items():
        action[key] = value.to_dict() if hasattr(value, "to_dict") else value
