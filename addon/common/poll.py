"""A poll that says why: the one way an operator or panel turns its reason into Blender's answer."""

from __future__ import annotations

from typing import Any


def poll_result(cls: Any, message: str | None) -> bool:
    """Blender's answer to ``poll`` for ``message``, the reason ``cls`` cannot run (None: it can).

    The reason goes to ``cls.poll_message_set`` (Blender ≥ 3.0): the greyed-out button's tooltip, and the
    error of a script that calls the operator anyway."""
    if message is None:
        return True
    cls.poll_message_set(message)
    return False


def target_armature_message(obj: Any) -> str | None:
    """Why ``obj`` (the active object) cannot be the armature an operator writes to, or None when it can."""
    if obj is None or obj.type != "ARMATURE":
        return "Make the target armature active"
    if not len(obj.data.bones):
        return f"'{obj.name}' has no bones"
    return None
