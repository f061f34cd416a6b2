"""The Retarget operator refuses a bone map that cannot work (issue 13): an ERROR naming what is
missing or crossed, nothing written, unless Allow Partial Map is on."""

from importlib import import_module

import bpy
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_retarget import build_rigify_rig, select_pair, walk_armature
from tests.blender.test_safety import state

retarget_action = import_module(PACKAGE + ".addon.retarget.retarget_action")
RetargetOptions = import_module(PACKAGE + ".core.retarget").RetargetOptions


def _edit_map(settings, **rows):
    for row in settings.bone_map:
        if row.target in rows:
            row.source = rows[row.target]


@pytest.fixture
def pair():
    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    assert bpy.ops.mocap.retarget_auto_map() == {"FINISHED"}
    return source, target, bpy.context.scene.mocap_workbench.retarget


def test_a_map_missing_the_core_body_is_refused_unless_allowed(pair):
    source, target, settings = pair
    _edit_map(settings, **{"DEF-spine.006": "", "DEF-foot.L": ""})
    before = state()
    with pytest.raises(RuntimeError, match=r"core body unmapped: head, left foot \(.*Allow Partial Map\)"):
        bpy.ops.mocap.retarget(plant_feet=False)
    assert state() == before and target.animation_data is None
    assert bpy.ops.mocap.retarget(plant_feet=False, allow_partial=True) == {"FINISHED"}
    assert target.animation_data.action is not None
    mapping = retarget_action.bone_map_of(settings.bone_map)
    options = RetargetOptions(plant_feet=False, allow_partial=True)
    report = retarget_action.retarget_armatures(source, target, mapping, options)
    assert "partial map, not mapped: head, left foot" in report.notes  # the operator's WARNING


def test_a_map_crossing_sides_or_limbs_is_refused(pair):
    source, target, settings = pair
    _edit_map(settings, **{"DEF-foot.L": "RightFoot", "DEF-foot.R": "LeftFoot"})
    before = state()
    with pytest.raises(RuntimeError, match=r"crosses sides or limbs: 'DEF-foot.L' \(left foot\) ← 'RightFoot'"):
        bpy.ops.mocap.retarget(plant_feet=False, allow_partial=True)
    assert state() == before
    _edit_map(settings, **{"DEF-foot.L": "LeftFoot", "DEF-foot.R": "RightFoot", "DEF-hand.L": "LeftFoot"})
    with pytest.raises(RuntimeError, match=r"'DEF-hand.L' \(left hand\) ← 'LeftFoot' \(left foot\)"):
        bpy.ops.mocap.retarget(plant_feet=False)
    assert state() == before
