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


def test_auto_map_warns_when_the_core_body_is_not_mapped():
    armature = import_module(PACKAGE + ".addon.common.armature")
    operators = import_module(PACKAGE + ".addon.retarget.operators")
    core = import_module(PACKAGE + ".core")
    sk = core.synthetic.humanoid()
    keep = [j for j, n in enumerate(sk.names) if n == "Hips" or "Leg" in n or "Foot" in n or "Toe" in n]
    legs = core.skeleton.Skeleton(tuple(sk.names[j] for j in keep), [-1] + [keep.index(sk.parents[j]) for j in keep[1:]],
                                  sk.rest_translations[keep])  # fmt: skip
    target = armature.create_animated_armature(
        core.motion.Motion.rest(legs, 2, 60.0), "Legs", bpy.context.scene.collection
    )
    source = walk_armature()
    rigify = build_rigify_rig()
    for tgt in (target, rigify):
        select_pair(source, tgt)
        assert bpy.ops.mocap.retarget_auto_map() == {"FINISHED"}
    # what Auto-Map's report names (a WARNING when not empty, else INFO)
    missing = operators.core_body_missing(source, target, retarget_action.auto_bone_map(source, target))
    assert missing == "spine, head, left upper arm, left forearm, left hand, right upper arm, right forearm, right hand"
    assert operators.core_body_missing(source, rigify, retarget_action.auto_bone_map(source, rigify)) == ""
