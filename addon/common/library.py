"""Data from libraries: what an operator may not write, and why (its poll message).

Linked data (``id.library``) cannot be changed: whatever is written into it is lost when the file
is reloaded. A library override (``id.override_library``) keeps only overridable properties: it can
take a new action or new NLA tracks, not new keys; a system override cannot be edited at all.
"""

from __future__ import annotations

from typing import Any


def linked_message(block: Any, keys: bool = False) -> str | None:
    """Why ``block`` (an object, an armature, an action) cannot be written, or None when it can.

    keys: the keys (or other non-overridable data) of ``block`` itself would be rewritten.
    """
    if block is None:
        return None
    kind = type(block).__name__
    if block.library is not None:
        return f"{kind} '{block.name}' is linked from library '{block.library.name}': make it local first"
    override = block.override_library
    if override is not None and override.is_system_override:
        return f"{kind} '{block.name}' is a system library override: make it editable first"
    if override is not None and keys:
        return f"{kind} '{block.name}' is a library override whose keys cannot be changed: make it local first"
    return None


def refuse_linked(block: Any, keys: bool = False) -> None:
    """Raise ValueError with :func:`linked_message` when ``block`` cannot be written."""
    message = linked_message(block, keys)
    if message:
        raise ValueError(message)
