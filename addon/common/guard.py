"""What every operator shares when it fails: the error as a report and the file as it was.

:func:`reported_errors` wraps an operator's ``execute``: whatever goes wrong becomes an ERROR
report and ``{'CANCELLED'}``, and :class:`Changes` puts the file back as it was before the call —
datablocks made during it are removed, every object's animation (active action, its slot, NLA
tracks) and the actions' fake users are restored, the keys of actions the operator rewrites in
place are put back from a copy, and so is the active armature's pose. Expected errors
(``ValueError``, ``OSError``) are reported as they are; anything else is a bug, reported as
"Internal error: <type>: <message> (see the console)" with its traceback printed to stderr."""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any

import bpy
import numpy as np

from . import animdata

EXPECTED = (ValueError, OSError)
POSE_PROPERTIES = (("location", 3), ("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4),
                   ("scale", 3))  # fmt: skip


def _collections() -> tuple[Any, ...]:
    return (bpy.data.objects, bpy.data.armatures, bpy.data.actions, bpy.data.images)  # users before what they use


def _animation(obj: Any) -> tuple | None:
    anim = obj.animation_data
    if anim is None:
        return None
    slot = getattr(anim, "action_slot", None)
    return anim.action, slot.handle if slot is not None else None, {t.as_pointer() for t in anim.nla_tracks}


def _pose(obj: Any) -> dict[str, np.ndarray]:
    bones = obj.pose.bones
    out = {}
    for name, width in POSE_PROPERTIES:
        buffer = np.empty(len(bones) * width, dtype=np.float32)
        bones.foreach_get(name, buffer)
        out[name] = buffer
    return out


class Changes:
    """The state an operator may change, taken before it runs, so that :meth:`undo` can put it back.

    in_place: actions whose keys the operator may rewrite (a copy of each local one is kept until
    :meth:`discard` or :meth:`undo`; linked ones are refused before anything is written).
    """

    def __init__(self, context: Any, in_place: Iterable[Any] = ()) -> None:
        self.blocks = [{block.as_pointer() for block in collection} for collection in _collections()]
        self.animation = [(obj, _animation(obj)) for obj in bpy.data.objects]
        self.fake_users = [(action, action.use_fake_user) for action in bpy.data.actions]
        local = dict.fromkeys(a for a in in_place if a is not None and a.library is None)
        self.backups = [(action, action.copy()) for action in local]  # made last: not in the lists above
        view_layer = getattr(context, "view_layer", None)
        self.view_layer = view_layer
        self.active = view_layer.objects.active if view_layer is not None else None
        active = self.active
        self.pose = (active, _pose(active)) if active is not None and active.pose is not None else None
        scene = context.scene
        self.scene = scene
        self.scene_state = (scene.render.fps, scene.render.fps_base, scene.frame_start, scene.frame_end)
        self.settled = False  # undone or discarded: a second call does nothing

    def discard(self) -> None:
        """Forget the copies of the actions rewritten in place (the call succeeded)."""
        self.settled = True
        for _, copy in self.backups:
            bpy.data.actions.remove(copy)
        self.backups = []

    def undo(self) -> None:
        """Put the file back as it was when the changes were taken (once: then it does nothing)."""
        if self.settled:
            return
        for action, copy in self.backups:
            animdata.restore_keys(action, copy)
        self.discard()
        for collection, existing in zip(_collections(), self.blocks):
            for block in [b for b in collection if b.as_pointer() not in existing]:
                collection.remove(block)
        for obj, state in self.animation:
            self._restore_animation(obj, state)
        for action, fake in self.fake_users:
            if action.use_fake_user != fake:
                action.use_fake_user = fake
        if self.view_layer is not None and self.view_layer.objects.active != self.active:
            self.view_layer.objects.active = self.active
        if self.pose is not None:
            obj, values = self.pose
            for name, _ in POSE_PROPERTIES:
                obj.pose.bones.foreach_set(name, values[name])
        scene = self.scene
        scene.render.fps, scene.render.fps_base, scene.frame_start, scene.frame_end = self.scene_state

    @staticmethod
    def _restore_animation(obj: Any, state: tuple | None) -> None:
        anim = obj.animation_data
        if state is None:
            if anim is not None:
                obj.animation_data_clear()
            return
        action, slot_handle, tracks = state
        if anim is None:
            anim = obj.animation_data_create()
        for track in [t for t in anim.nla_tracks if t.as_pointer() not in tracks]:
            anim.nla_tracks.remove(track)
        if anim.action != action:
            anim.action = action
        if action is not None and slot_handle is not None:
            slot = next((s for s in action.slots if s.handle == slot_handle), None)
            if slot is not None and anim.action_slot != slot:
                anim.action_slot = slot


def error_message(exc: BaseException) -> str:
    """What the user reads about ``exc``: its own text when expected, else an internal error
    (with the traceback printed to stderr)."""
    if isinstance(exc, EXPECTED):
        return str(exc)
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    return f"Internal error: {type(exc).__name__}: {exc} (see the console)"


def reported_errors(execute: Callable) -> Callable:
    """Wrap an operator's ``execute``: any exception becomes an ERROR report and ``{'CANCELLED'}``
    with the file as it was (:class:`Changes`); so does a ``{'CANCELLED'}`` the operator returns.

    The operator may define ``in_place_actions(context)``: the actions it will rewrite in place.
    """

    @functools.wraps(execute)
    def guarded(self: Any, context: Any) -> set[str]:
        changes = take_changes(self, context)
        if changes is None:
            return {"CANCELLED"}
        return settle(changes, guarded_call(self, changes, lambda: execute(self, context)))

    guarded.reported_errors = True
    return guarded


def take_changes(operator: Any, context: Any) -> Changes | None:
    """The :class:`Changes` ``operator`` may make (its ``in_place_actions(context)`` too); None after an ERROR
    report when they cannot be taken (nothing is changed yet)."""
    in_place = getattr(operator, "in_place_actions", None)
    try:
        return Changes(context, in_place(context) if in_place is not None else ())
    except Exception as exc:  # noqa: BLE001 (nothing is changed yet)
        operator.report({"ERROR"}, error_message(exc))
        return None


def guarded_call(operator: Any, changes: Changes, call: Callable[[], Any]) -> Any:
    """``call()``'s result; if it raises, the file is put back (``changes``) and the error becomes an ERROR
    report of ``operator`` and ``{'CANCELLED'}`` (a BaseException, such as a cancel, is raised again).
    Used once per operator, or once per step of a modal operator's writes."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 (every failure becomes a report)
        _undo(changes)
        operator.report({"ERROR"}, error_message(exc))
        return {"CANCELLED"}
    except BaseException:
        _undo(changes)
        raise


def settle(changes: Changes, result: set[str]) -> set[str]:
    """The operator's ``result``, its changes kept when it finished and put back when it cancelled."""
    if "CANCELLED" in result:
        _undo(changes)
    else:
        changes.discard()
    return result


def _undo(changes: Changes) -> None:
    try:
        changes.undo()
    except Exception:  # noqa: BLE001 (the original error is the one to report)
        print("Mocap Workbench: could not put everything back after a failure:", file=sys.stderr)
        traceback.print_exc()
