"""Bone map presets: one document, kept as JSON (the exchange file) or as a Blender preset (.py).

A preset is a ``dict`` document::

    {"format": "mocap_workbench.bone_map", "version": 1, "source": "", "target": "",
     "convention": "mixamo", "map": {"mixamorig:Hips": "Hips", ...}}

- ``map``: rows target bone → source bone, as the user's bone map holds them;
- ``convention`` (optional, a key of :data:`.mapping.CONVENTIONS`): the target follows that
  naming convention; its rows are found when the preset is applied, not stored, so the
  shipped presets (one per convention, :func:`shipped_presets`) are generated from the
  convention tables and stay their single source of truth;
- ``source``, ``target`` (optional): the armatures the map was made on (information only).

A ``.json`` file holds the document as JSON; a ``.py`` file (Blender's preset menus list
Python files) holds it as the literal ``BONE_MAP = {...}``, which :func:`read_preset` reads
with :func:`ast.literal_eval` — a preset file is never run.

Applying a preset (:func:`resolve_preset`) never relies on literal bone names; names are
compared by :func:`.mapping.name_key` (no case, no namespace: ``mixamorig:``, ``mixamorig7_``;
``Bip001`` read as ``Bip01``):

- a ``map`` row pairs the target bone whose key equals the row's target with the source bone
  whose key equals the row's source (``mixamorig:Hips`` saved on one Mixamo rig applies to
  ``mixamorig7:Hips`` on another);
- a ``convention`` names the target's bones by that convention's table
  (:func:`.mapping.convention_labels`: canonical joint → bone, candidates in order) and pairs
  each with the source bone of the same canonical joint in the source's own labelling
  (:func:`.mapping.label_skeleton`: its naming convention, synonyms, then its topology);
- a ``map`` row wins over a convention row for the same target bone.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

from ..skeleton import Skeleton
from .mapping import CONVENTIONS, PRESET_FORMAT, _by_key, convention_labels, label_skeleton, name_key

VERSION = 1
PYTHON_NAME = "BONE_MAP"  # the variable a .py preset assigns the document to

# The name of each convention's shipped preset (its file name, as Blender's preset menu shows it).
CONVENTION_LABELS = {
    "cmu_cgspeed": "CMU cgspeed",
    "cmu_3dsmax": "CMU 3ds Max",
    "cmu_asf": "CMU ASF",
    "bandai_namco": "Bandai Namco",
    "mixamo": "Mixamo",
    "rigify": "Rigify",
    "unreal": "Unreal Mannequin",
    "character_creator": "Character Creator",
    "xsens_mvn": "Xsens MVN",
    "perception_neuron": "Perception Neuron",
    "unity_humanoid": "Unity Humanoid",
    "vrm": "VRM",
    "daz_genesis": "Daz Genesis",
    "3dsmax_biped": "3ds Max Biped",
}


def preset_document(
    mapping: dict[str, str] | None = None, convention: str | None = None, source: str = "", target: str = ""
) -> dict:
    """A preset document (module notes) of a bone map target → source and/or a target convention."""
    if convention is not None and convention not in CONVENTIONS:
        raise ValueError(f"unknown naming convention {convention!r}: one of {', '.join(CONVENTIONS)}")
    document = {"format": PRESET_FORMAT, "version": VERSION}
    document.update({key: name for key, name in (("source", source), ("target", target)) if name})
    if convention is not None:
        document["convention"] = convention
    document["map"] = dict(mapping or {})
    return document


def check_document(data: object, where: str) -> dict:
    """The preset document ``data`` read from ``where`` (a plain JSON object target → source is
    taken as its map); ValueError naming ``where`` when it is not a bone map."""
    if isinstance(data, dict) and data.get("format") == PRESET_FORMAT:
        document = dict(data)
    else:
        document = {"format": PRESET_FORMAT, "version": VERSION, "map": data}
    mapping, convention = document.get("map", {}), document.get("convention")
    if not isinstance(mapping, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise ValueError(f"{where}: a bone map is a JSON object of target bone names to source bone names")
    if convention is not None and (not isinstance(convention, str) or convention not in CONVENTIONS):
        raise ValueError(f"{where}: unknown naming convention {convention!r}")
    document["map"] = dict(mapping)
    return document


def preset_text(document: dict, path: str | os.PathLike) -> str:
    """The file text of ``document`` for ``path``: a Python preset for ``.py``, else JSON."""
    if not str(path).lower().endswith(".py"):
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    compact = f"{PYTHON_NAME} = {json.dumps(document, ensure_ascii=False)}"
    body = compact if len(compact) <= 120 else f"{PYTHON_NAME} = {json.dumps(document, indent=4, ensure_ascii=False)}"
    return f"# Mocap Workbench bone map preset: read as data by Retarget › Bone Map, never run.\n{body}\n"


def write_preset(path: str | os.PathLike, document: dict) -> None:
    """Write ``document`` to ``path`` (:func:`preset_text`)."""
    Path(path).write_text(preset_text(document, path), encoding="utf-8")


def read_preset(path: str | os.PathLike) -> dict:
    """The document of a ``.json`` or ``.py`` preset (module notes; the .py is parsed, not run).

    Raises ValueError naming the file when it is not a bone map preset.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte-order mark (Windows editors) aside
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read bone map ({exc})") from None
    try:
        if not str(path).lower().endswith(".py"):
            try:
                return check_document(json.loads(text), str(path))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: cannot read bone map ({exc})") from None
        tree = ast.parse(text, filename=str(path))
        value = next(  # the last assignment, as Python would leave it
            node.value
            for node in reversed(tree.body)
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == PYTHON_NAME for t in node.targets)
        )
        return check_document(ast.literal_eval(value), str(path))
    except (SyntaxError, StopIteration, ValueError, TypeError, RecursionError, MemoryError) as exc:
        if isinstance(exc, ValueError) and str(exc).startswith(str(path)):
            raise
        if isinstance(exc, (RecursionError, MemoryError)):  # nested beyond any bone map
            raise ValueError(f"{path}: not a bone map (nested too deeply)") from None
        raise ValueError(f"{path}: not a bone map preset (a {PYTHON_NAME} = {{...}} literal)") from None


def resolve_preset(document: dict, source: Skeleton | None, target: Skeleton) -> tuple[dict[str, str], list[str]]:
    """(bone map target → source in the two skeletons' own names, names of the preset found on neither).

    Names are matched as the module notes say. source: None keeps the map's source names as
    written (a convention then needs a source: ValueError).
    """
    target_keys = _by_key(target)
    source_keys = _by_key(source) if source is not None else None
    mapping: dict[str, str] = {}
    convention = document.get("convention")
    if convention is not None:
        if source is None:
            raise ValueError("choose the source armature first: a naming convention preset pairs the target's "
                             "bones with the source's")  # fmt: skip
        labels = label_skeleton(source)[0]
        for canonical, k in convention_labels(target, convention).items():
            if canonical in labels:
                mapping[target.names[k]] = source.names[labels[canonical]]
    missing = []
    for t, s in document.get("map", {}).items():
        k = target_keys.get(name_key(t))
        if k is None:
            missing.append(t)
            continue
        if not s:
            continue
        if source_keys is None:
            mapping[target.names[k]] = s
        elif (j := source_keys.get(name_key(s))) is not None:
            mapping[target.names[k]] = source.names[j]
        else:
            missing.append(s)
    return {t: mapping[t] for t in target.names if t in mapping}, missing


def file_name(label: str) -> str:
    """A preset's file name (without ``.py``) for the name its menu shows: spaces as underscores, as
    Blender's preset operators name them."""
    return label.strip().replace(" ", "_")


def shipped_presets() -> dict[str, str]:
    """File name → text of the presets shipped with the extension: one per naming convention."""
    return {
        f"{file_name(label)}.py": preset_text(preset_document(convention=convention), "preset.py")
        for convention, label in CONVENTION_LABELS.items()
    }
