"""Bone map presets in the core: one document as JSON or a Python preset (read, never run), matched by name."""

import json

import pytest

from core import synthetic
from core.retarget.mapping import CONVENTIONS, load_preset, save_preset
from core.retarget.presets import (
    CONVENTION_LABELS,
    preset_document,
    preset_text,
    read_preset,
    resolve_preset,
    shipped_presets,
)
from core.skeleton import Skeleton


def renamed(skeleton: Skeleton, rename) -> Skeleton:
    return Skeleton([rename(n) for n in skeleton.names], skeleton.parents, skeleton.rest_translations,
                    skeleton.rest_rotations, skeleton.channels, skeleton.end_site_parents,
                    skeleton.end_site_offsets)  # fmt: skip


@pytest.fixture
def pair():
    """The synthetic humanoid (cgspeed names, the source) and a Mixamo-named copy with a namespace."""
    source = synthetic.humanoid()
    return source, renamed(source, lambda n: f"mixamorig7:{n}")


def test_every_convention_has_a_shipped_preset_named_for_people():
    assert set(CONVENTION_LABELS) == set(CONVENTIONS)
    names = shipped_presets()
    assert len(names) == len(CONVENTIONS) and "Mixamo.py" in names and "3ds_Max_Biped.py" in names
    assert all(len(line) <= 120 for text in names.values() for line in text.splitlines())


def test_json_and_python_hold_the_same_document(tmp_path):
    document = preset_document({"mixamorig:Hips": "Hips"}, convention="mixamo", source="walk", target="rig")
    for name in ("map.json", "map.py"):
        (tmp_path / name).write_text(preset_text(document, name))
        assert read_preset(tmp_path / name) == document
    assert json.loads((tmp_path / "map.json").read_text()) == document
    save_preset(tmp_path / "saved.py", {"a": "b"})  # the mapping module's writer: the same document
    assert load_preset(tmp_path / "saved.py") == {"a": "b"}
    (tmp_path / "Mixamo.py").write_text(shipped_presets()["Mixamo.py"])
    with pytest.raises(ValueError, match="naming-convention preset"):  # no bone names to hand a script
        load_preset(tmp_path / "Mixamo.py")


def test_a_python_preset_is_read_never_run(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "hostile.py"
    path.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
                    'BONE_MAP = {"format": "mocap_workbench.bone_map", "version": 1, "map": {"Hips": "Hips"}}\n')  # fmt: skip
    assert read_preset(path)["map"] == {"Hips": "Hips"} and not marker.exists()
    path.write_text("BONE_MAP = dict(Hips='Hips')\n")  # not a literal: refused, not evaluated
    with pytest.raises(ValueError, match="not a bone map preset"):
        read_preset(path)
    path.write_text('BONE_MAP = {"format": "mocap_workbench.bone_map", "convention": "klingon", "map": {}}\n')
    with pytest.raises(ValueError, match="unknown naming convention 'klingon'"):
        read_preset(path)


def test_rows_match_by_name_keys_across_namespaces_and_case(pair):
    source, target = pair
    document = preset_document({"mixamorig:hips": "HIPS", "mixamorig:LeftFoot": "LeftFoot", "Nothing": "Hips"})
    mapping, missing = resolve_preset(document, source, target)
    assert mapping == {"mixamorig7:Hips": "Hips", "mixamorig7:LeftFoot": "LeftFoot"}
    assert missing == ["Nothing"]
    mapping, _ = resolve_preset(document, None, target)  # no source: its names as written
    assert mapping["mixamorig7:Hips"] == "HIPS"


def test_a_convention_names_the_target_and_the_source_labels_its_own_bones(pair):
    source, target = pair
    anonymous = renamed(source, lambda n: f"j{source.names.index(n)}")  # names that say nothing: its topology
    mapping, missing = resolve_preset(preset_document(convention="mixamo"), anonymous, target)
    assert missing == []
    for name in ("Hips", "LeftUpLeg", "RightLeg", "LeftFoot", "RightArm", "LeftForeArm", "Head"):
        assert mapping[f"mixamorig7:{name}"] == f"j{source.names.index(name)}", name
    # A row of the map wins over the convention's for its target bone.
    document = preset_document({"mixamorig7:Head": "j0"}, convention="mixamo")
    assert resolve_preset(document, anonymous, target)[0]["mixamorig7:Head"] == "j0"
    with pytest.raises(ValueError, match="choose the source armature"):
        resolve_preset(preset_document(convention="mixamo"), None, target)


@pytest.mark.parametrize(
    "name, text",
    [
        ("deep.json", "[" * 100_000 + "]" * 100_000),  # beyond the JSON decoder's recursion
        ("listed.json", '{"format": "mocap_workbench.bone_map", "convention": ["mixamo"], "map": {}}'),
        ("keyed.json", '{"format": "mocap_workbench.bone_map", "convention": {}, "map": {}}'),
        ("negated.py", "BONE_MAP = " + "-" * 100_000 + "1"),  # beyond the parser's
        ("listed.py", 'BONE_MAP = {"format": "mocap_workbench.bone_map", "convention": ["mixamo"], "map": {}}'),
    ],
)
def test_hand_edited_presets_fail_with_one_clear_error(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=f"^{path}: "):
        read_preset(path)


def test_presets_saved_by_windows_editors_and_edited_by_hand_read_as_python_would(tmp_path):
    document = preset_document({"Hips": "Hips"})
    for name in ("bom.json", "bom.py"):  # a UTF-8 byte-order mark, as Notepad writes
        (tmp_path / name).write_text("\ufeff" + preset_text(document, name), encoding="utf-8")
        assert read_preset(tmp_path / name) == document
    path = tmp_path / "twice.py"  # a corrected map appended: Python would keep the last
    path.write_text("BONE_MAP = {'Hips': 'Spine'}\nBONE_MAP = {'Hips': 'Hips'}\n")
    assert read_preset(path)["map"] == {"Hips": "Hips"}
