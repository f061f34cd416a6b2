"""The ending every edit that writes a new action shares: its record on the new action and the report's
last line naming it, checked for all eight such edits (the operator tests check each one's own lines)."""

from importlib import import_module

import bpy
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_editing_operators import add_action, make_rig

editing = import_module(PACKAGE + ".addon.editing.edit_actions")
synthetic = import_module(PACKAGE + ".core.synthetic")


def rotate(obj):
    return editing.rotate_action(obj, 0.5), ["Walk"], "rotate", "Walk_rotated"


def blend(obj):
    jump = add_action(obj, synthetic.jump(120), "Jump")
    return editing.blend_actions(obj, jump, "LeftArm"), ["Walk", "Jump"], "blend", "Walk_LeftArm"


def interpolate(obj):
    fast = add_action(obj, synthetic.walk(240, speed=1.8, stride_hz=1.1), "Fast")
    return editing.interpolate_actions(obj, fast), ["Walk", "Fast"], "interpolate", None


def pca(obj):
    actions = [obj.animation_data.action]
    actions += [add_action(obj, synthetic.walk(240, speed=s, stride_hz=h), n)
                for s, h, n in ((1.4, 0.95, "Mid"), (1.8, 1.1, "Fast"))]  # fmt: skip
    return editing.pca_actions(obj, actions, cycles=2), ["Walk", "Mid", "Fast"], "pca", None


def reverse(obj):
    return editing.reverse_action(obj, 11, 60), ["Walk"], "reverse", "Walk_reversed"


def time_scale(obj):
    return editing.time_scale_action(obj, factor=1.5), ["Walk"], "time_scale", "Walk_scaled"


def cut(obj):
    return editing.cut_range(obj, 41, 80), ["Walk"], "cut", "Walk_cut"


def paste(obj):
    source = obj.animation_data.action
    return editing.paste_range(obj, source, 100, 41, 80), ["Walk", "Walk"], "paste", "Walk_pasted"


@pytest.mark.parametrize("edit", [rotate, blend, interpolate, pca, reverse, time_scale, cut, paste])
def test_an_edit_records_itself_on_its_new_action_and_names_it_last(edit):
    obj = make_rig(synthetic.walk(240, speed=1.0, stride_hz=0.8))
    source = obj.animation_data.action
    report, sources, operation, name = edit(obj)
    action = obj.animation_data.action
    assert action != source and report.action == action.name and (name is None or action.name == name)
    assert len(report.parts) >= 2 and report.parts[-1] == f"new action '{action.name}'"
    assert all("new action" not in part for part in report.parts[:-1])
    assert report.summary().endswith(f"; new action '{action.name}'") and report.seconds > 0
    info = action["mocap_workbench"]["edit"]
    assert info["operation"] == operation and list(info["sources"]) == sources
    scalars = {k: v for k, v in report.figures.items() if isinstance(v, (bool, int, float, str))}
    assert scalars and all(info[k] == pytest.approx(v) for k, v in scalars.items())
    assert source.get("mocap_workbench", {}).get("edit") is None  # the source action is not recorded on
    assert len({a.name for a in bpy.data.actions}) == len(bpy.data.actions)
