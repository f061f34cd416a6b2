"""The action's record: what made an action and its figures, kept as its custom property.

One writer for every feature. The record is ``action["mocap_workbench"]``, a dictionary with one
section per step that made the action, each naming its own input, so steps compose (a retarget
result distilled into keyframes keeps its physics figures and overlay):

- ``"retarget"``: ``source_armature``, ``source_action``, ``mapped_bones``, ``scale`` and the
  retarget figures (``skating_*``, ``position_error*``, ``contact*``; scene units, per second);
- ``"physics"``: the figures of :func:`core.physics.apply.apply_physics` and ``image``, the name of
  the plot's image datablock when there is one;
- ``"physics_overlay"``: the viewport overlay's data (:mod:`addon.retarget.physics_overlay`);
- ``"keyframes"``: ``source_action``, ``method``, ``keyframes``, ``stored_keys``, ``frames``,
  ``position_mean``, ``position_max`` (armature units; the measure of :mod:`core.keyframes.error`:
  heads, tips and sides of every bone), and the worst point of Blender's playback (of the core's
  rebuild when playback is not measured): ``worst_bone``, ``worst_point`` (head / tip / side),
  ``worst_frame`` (the scene frame), ``worst_error``;
- ``"edit"``: ``operation``, ``sources`` and that operation's figures.

Writing a section merges it into the record; other sections stay.
"""

from __future__ import annotations

from typing import Any

import numpy as np

KEY = "mocap_workbench"
SECTIONS = ("retarget", "physics", "physics_overlay", "keyframes", "edit")


def id_property(value: Any) -> Any:
    """A JSON-like value as ID properties accept it (booleans as 0/1, tuples as lists, numpy as Python)."""
    if isinstance(value, dict):
        return {str(k): id_property(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [id_property(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def read(action: Any) -> dict:
    """The action's whole record as plain Python (empty when it has none)."""
    stored = action.get(KEY) if action is not None else None
    if stored is None:
        return {}
    return stored.to_dict() if hasattr(stored, "to_dict") else dict(stored)


def section(action: Any, name: str) -> Any:
    """One section of the action's record as stored (a mapping; ``.to_dict()`` for plain Python), or None."""
    stored = action.get(KEY) if action is not None else None
    return stored.get(name) if stored is not None else None


def write(action: Any, name: str, data: dict, merge: bool = False) -> None:
    """Set section ``name`` of the action's record to ``data`` (or update it with ``merge``), keeping the others."""
    if name not in SECTIONS:
        raise KeyError(f"unknown record section '{name}'")
    if action.get(KEY) is None:
        action[KEY] = {}
    stored = action[KEY]
    if merge and stored.get(name) is not None:
        stored[name].update(id_property(data))
    else:
        stored[name] = id_property(data)


def inherit(action: Any, source: Any) -> None:
    """Give a new action the record of the action it was made from (before adding its own section)."""
    record = read(source)
    if record:
        action[KEY] = id_property(record)
