"""Operators that fail or must not run: any exception is an ERROR report with the file as it was,
data from libraries is refused with a poll message, bad keys are refused before anything is written."""

from importlib import import_module

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_retarget import select_pair

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
guard = import_module(PACKAGE + ".addon.common.guard")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
retarget_action = import_module(PACKAGE + ".addon.retarget.retarget_action")
edit_actions = import_module(PACKAGE + ".addon.editing.edit_actions")
acclaim = import_module(PACKAGE + ".addon.acclaim.armature_io")
synthetic = import_module(PACKAGE + ".core.synthetic")


def make_rig(name="Mocap", motion=None, mode="QUATERNION"):
    motion = motion or synthetic.walk(60)
    obj = armature.create_animated_armature(motion, name, bpy.context.scene.collection, rotation_mode=mode)
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    bpy.context.view_layer.update()  # the pose as the action plays it, as after any operator
    return obj


def state() -> dict:
    """Everything a failed operator must leave as it was: every action's keys (all key data), custom
    properties and fake user, every object with its active action, NLA tracks and pose."""
    actions = {}
    for action in bpy.data.actions:
        curves = {}
        for fcurves in animdata.curve_lists(action):
            for fc in fcurves:
                n = len(fc.keyframe_points)
                data = []
                for name, width, dtype in animdata._KEY_PROPERTIES:
                    buffer = np.empty(n * width, dtype=dtype)
                    fc.keyframe_points.foreach_get(name, buffer)
                    data.append(buffer.tobytes())
                curves[(fc.data_path, fc.array_index)] = tuple(data)
        props = {k: (v.to_dict() if hasattr(v, "to_dict") else v) for k, v in action.items()}
        actions[action.name_full] = (curves, repr(props), action.use_fake_user)
    objects = {}
    for obj in bpy.data.objects:
        anim = obj.animation_data
        pose = None
        if obj.pose is not None:
            pose = tuple(
                tuple(getattr(b, p)) for b in obj.pose.bones for p in ("location", "rotation_quaternion", "scale")
            )
        objects[obj.name_full] = (
            anim.action.name_full if anim and anim.action else None,
            [t.name for t in anim.nla_tracks] if anim else None,
            pose,
        )
    return {"actions": actions, "objects": objects, "armatures": sorted(a.name for a in bpy.data.armatures),
            "images": sorted(i.name for i in bpy.data.images)}  # fmt: skip


def raising(kind):
    def fail(*args, **kwargs):
        raise kind("boom")

    return fail


def assert_refused_unchanged(call, before, text="Internal error: ZeroDivisionError: boom (see the console)"):
    with pytest.raises(RuntimeError, match=text.replace("(", r"\(").replace(")", r"\)")):
        call()
    assert state() == before


# --- the guard ------------------------------------------------------------------------------


def test_every_operator_of_the_extension_is_guarded():
    ours = [cls for cls in bpy.types.Operator.__subclasses__() if cls.__module__.startswith(PACKAGE)]
    assert len(ours) >= 20
    unguarded = [cls.__name__ for cls in ours if not getattr(cls.execute, "reported_errors", False)]
    assert not unguarded


@pytest.mark.parametrize("replace", [False, True])
def test_extract_failure_after_writing_leaves_the_file_as_it_was(monkeypatch, capsys, replace):
    make_rig()
    bpy.context.view_layer.update()
    before = state()
    monkeypatch.setattr(extract, "evaluate", raising(ZeroDivisionError))  # measuring playback, after the write
    assert_refused_unchanged(lambda: bpy.ops.mocap.extract_keyframes(replace=replace), before)
    assert "ZeroDivisionError: boom" in capsys.readouterr().err  # the traceback is on the console
    monkeypatch.undo()
    assert bpy.ops.mocap.extract_keyframes(replace=replace) == {"FINISHED"}
    assert len(bpy.data.actions) == 1 + (not replace)


def test_extract_index_error_in_the_core_is_an_internal_error(monkeypatch):
    make_rig()
    before = state()
    monkeypatch.setattr(extract, "extract_channels", raising(IndexError))
    assert_refused_unchanged(lambda: bpy.ops.mocap.extract_keyframes(), before,
                             "Internal error: IndexError: boom (see the console)")  # fmt: skip


def test_expected_errors_keep_their_own_text(monkeypatch):
    make_rig()
    before = state()
    monkeypatch.setattr(extract, "evaluate", raising(ValueError))
    with pytest.raises(RuntimeError, match=r"Error: boom\n") as failure:
        bpy.ops.mocap.extract_keyframes()
    assert "Internal" not in str(failure.value) and state() == before


def test_retarget_failure_after_writing_restores_the_action_and_the_pose(monkeypatch):
    source = make_rig("Source")
    target = make_rig("Target", synthetic.walk(30))
    target.pose.bones["LeftArm"].location = (0.1, 0.2, 0.3)  # unkeyed channels Retarget resets before it writes
    target.pose.bones["Hips"].scale = (1.0, 2.0, 1.0)
    select_pair(source, target)
    bpy.context.view_layer.update()
    before = state()
    monkeypatch.setattr(retarget_action, "_record", raising(ZeroDivisionError))
    assert_refused_unchanged(lambda: bpy.ops.mocap.retarget(), before)


def test_retarget_with_extraction_failing_at_the_end(monkeypatch):
    source = make_rig("Source")
    target = make_rig("Target", synthetic.walk(30))
    select_pair(source, target)
    before = state()
    monkeypatch.setattr(extract.record, "write", raising(ZeroDivisionError))
    assert_refused_unchanged(lambda: bpy.ops.mocap.retarget(extract_keyframes=True), before)


@pytest.mark.parametrize("operator", ["rotate_motion", "reverse_motion", "time_scale_motion"])
def test_edit_failure_after_writing_leaves_the_file_as_it_was(monkeypatch, operator):
    make_rig()
    before = state()
    monkeypatch.setattr(edit_actions, "_record", raising(ZeroDivisionError))
    assert_refused_unchanged(lambda: getattr(bpy.ops.mocap, operator)(), before)


def test_transition_as_nla_strips_failing_removes_the_tracks(monkeypatch):
    obj = make_rig("Walk")
    other = make_rig("Run", synthetic.walk(60, speed=2.0))
    run = other.animation_data.action
    run.use_fake_user = True
    bpy.data.objects.remove(other)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    before = state()
    monkeypatch.setattr(edit_actions, "_record", raising(ZeroDivisionError))
    assert_refused_unchanged(lambda: bpy.ops.mocap.transition(action_to="Run", output="NLA"), before)


@pytest.mark.parametrize("in_place", [False, True])
def test_smoothed_pose_edit_failing_puts_the_keys_back(monkeypatch, in_place):
    obj = make_rig()
    bpy.context.scene.frame_set(30)
    bone = obj.pose.bones["LeftArm"]
    bone.rotation_quaternion = (0.8, 0.6, 0.0, 0.0)
    before = state()
    monkeypatch.setattr(edit_actions, "_record", raising(ZeroDivisionError))
    assert_refused_unchanged(lambda: bpy.ops.mocap.smoothed_pose_edit(in_place=in_place), before)


def test_acclaim_export_and_import_report_internal_errors(monkeypatch, tmp_path):
    make_rig()
    io_ops = import_module(PACKAGE + ".addon.acclaim.operators")
    before = state()
    monkeypatch.setattr(acclaim, "write_asf_amc", raising(ZeroDivisionError))
    assert_refused_unchanged(lambda: bpy.ops.export_anim.acclaim(filepath=str(tmp_path / "a.amc")), before)
    monkeypatch.undo()
    assert bpy.ops.export_anim.acclaim(filepath=str(tmp_path / "a.amc")) == {"FINISHED"}
    before = state()
    monkeypatch.setattr(acclaim, "store_meta", raising(ZeroDivisionError))
    assert io_ops is not None
    assert_refused_unchanged(
        lambda: bpy.ops.import_anim.acclaim(directory=str(tmp_path), files=[{"name": "a.asf"}, {"name": "a.amc"}]),
        before,
    )


def test_bone_map_files_that_cannot_be_read_or_written_are_reported(tmp_path):
    make_rig()
    with pytest.raises(RuntimeError, match="No such file or directory"):
        bpy.ops.mocap.retarget_load_map(filepath=str(tmp_path / "missing.json"))
    bpy.context.scene.mocap_workbench.retarget.bone_map.add().target = "Hips"
    with pytest.raises(RuntimeError, match="No such file or directory"):
        bpy.ops.mocap.retarget_save_map(filepath=str(tmp_path / "no" / "such" / "map.json"))


# --- data from libraries ----------------------------------------------------------------------


@pytest.fixture
def library(tmp_path):
    """A saved file holding the armature 'Mocap' with its action 'Mocap' (and the action 'Other'
    for the same bones); the current file is empty again."""
    obj = make_rig()
    other = make_rig("Other", synthetic.walk(40, speed=2.0))
    other.animation_data.action.use_fake_user = True
    bpy.data.objects.remove(other)
    path = tmp_path / "lib.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    assert obj.name == "Mocap"
    bpy.ops.wm.read_homefile(use_empty=True)
    return path


def link_rig(path, override=False):
    with bpy.data.libraries.load(str(path), link=True) as (_, into):
        into.objects = ["Mocap"]
        into.actions = ["Other"]
    obj = into.objects[0]
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    if override:
        assert bpy.ops.object.make_override_library() == {"FINISHED"}
        obj = bpy.context.active_object
        assert obj.override_library is not None and obj.animation_data.action.library is not None
    bpy.context.view_layer.update()
    return obj


LINKED_OBJECT = "Object 'Mocap' is linked from library 'lib.blend': make it local first"
LINKED_ACTION = "Action 'Mocap' is linked from library 'lib.blend': make it local first"


@pytest.mark.parametrize("operator", ["extract_keyframes", "rotate_motion", "reverse_motion", "smoothed_pose_edit",
                                      "transition", "cut_range", "time_scale_motion"])  # fmt: skip
def test_a_linked_armature_is_refused_with_a_poll_message(library, operator):
    link_rig(library)
    before = state()
    op = getattr(bpy.ops.mocap, operator)
    assert not op.poll()
    with pytest.raises(RuntimeError, match=LINKED_OBJECT):
        op()
    assert state() == before
    assert bpy.ops.mocap.copy_range.poll()  # reads only


def test_retarget_onto_a_linked_armature_is_refused_from_a_linked_source_allowed(library):
    linked = link_rig(library)
    local = make_rig("Local", synthetic.walk(30))
    select_pair(local, linked)
    assert not bpy.ops.mocap.retarget.poll()
    with pytest.raises(RuntimeError, match=LINKED_OBJECT):
        bpy.ops.mocap.retarget()
    assert bpy.ops.mocap.retarget_auto_map.poll()  # fills the bone map only
    select_pair(linked, local)
    assert bpy.ops.mocap.retarget() == {"FINISHED"}
    assert local.animation_data.action.library is None


def test_script_path_refuses_linked_data_too(library):
    obj = link_rig(library)
    with pytest.raises(ValueError, match=LINKED_OBJECT):
        extract.extract_on_armature(obj)
    with pytest.raises(ValueError, match=LINKED_OBJECT):
        edit_actions.rotate_action(obj, 1.0)
    assert [a.name for a in bpy.data.actions] == ["Mocap", "Other"]


def test_an_override_takes_a_new_action_but_its_linked_keys_are_not_replaced(library):
    obj = link_rig(library, override=True)
    linked = obj.animation_data.action
    assert bpy.ops.mocap.extract_keyframes.poll()
    before = state()
    with pytest.raises(RuntimeError, match=LINKED_ACTION):
        bpy.ops.mocap.extract_keyframes(replace=True)
    assert state() == before
    scene = bpy.context.scene
    scene.frame_set(30)
    obj.pose.bones["LeftArm"].rotation_quaternion = (0.8, 0.6, 0.0, 0.0)
    before = state()
    with pytest.raises(RuntimeError, match=LINKED_ACTION):
        bpy.ops.mocap.smoothed_pose_edit(in_place=True)
    assert state() == before
    assert bpy.ops.mocap.extract_keyframes(replace=False) == {"FINISHED"}
    result = obj.animation_data.action
    assert result.library is None and result != linked and linked.library is not None
    assert "mocap_workbench" not in linked and not linked.use_fake_user  # kept by its library


# --- armatures without bones -------------------------------------------------------------------


def test_retarget_onto_an_armature_without_bones_is_refused():
    source = make_rig("Source")
    empty = bpy.data.objects.new("Empty", bpy.data.armatures.new("Empty"))
    bpy.context.scene.collection.objects.link(empty)
    select_pair(source, empty)
    assert not bpy.ops.mocap.retarget.poll()
    with pytest.raises(RuntimeError, match="'Empty' has no bones"):
        bpy.ops.mocap.retarget()
    with pytest.raises(ValueError, match="'Empty' has no bones"):
        retarget_action.retarget_armatures(source, empty)
    select_pair(empty, source)
    with pytest.raises(RuntimeError, match="Source 'Empty' has no bones"):
        bpy.ops.mocap.retarget()
    bpy.context.view_layer.objects.active = empty
    bpy.context.view_layer.update()
    empty.animation_data_create().action = source.animation_data.action
    for operator in ("extract_keyframes", "rotate_motion"):
        with pytest.raises(RuntimeError, match="'Empty' has no bones"):
            getattr(bpy.ops.mocap, operator)()


# --- keys that cannot be measured ------------------------------------------------------------


def curve(obj, bone, prop, index):
    path = obj.pose.bones[bone].path_from_id(prop)
    return next(fc for fc in animdata.object_channels(obj).fcurves if fc.data_path == path and fc.array_index == index)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@pytest.mark.parametrize("operator", ["extract_keyframes", "rotate_motion", "reverse_motion"])
def test_keys_that_are_not_numbers_are_refused_naming_bone_and_frame(bad, operator):
    obj = make_rig()
    fc = curve(obj, "LeftArm", "rotation_quaternion", 1)
    co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
    fc.keyframe_points.foreach_get("co", co)
    co[2 * 11 + 1] = bad
    fc.keyframe_points.foreach_set("co", co)  # stored as it is
    fc.update()
    curve(obj, "Head", "rotation_quaternion", 0).keyframe_points[40].co = (41.0, bad)
    before = state()
    expected = (r"action 'Mocap' has keys that are not numbers \(NaN or inf\): bone 'LeftArm' "
                r"\(rotation_quaternion\[1\]\) at frame 12; bone 'Head' \(rotation_quaternion\[0\]\) at frame 41")  # fmt: skip
    with pytest.raises(RuntimeError, match=expected):
        getattr(bpy.ops.mocap, operator)()
    assert state() == before


def test_a_key_on_a_frame_that_is_not_a_number_is_refused():
    obj = make_rig()
    curve(obj, "Hips", "location", 0).keyframe_points[5].co = (float("nan"), 0.0)
    before = state()
    with pytest.raises(RuntimeError, match=r"not numbers \(NaN or inf\): bone 'Hips' \(location\[0\]\) at frame 6"):
        bpy.ops.mocap.extract_keyframes()
    assert state() == before


def add_scale(obj, bone, values):
    channels = animdata.object_channels(obj)
    path = obj.pose.bones[bone].path_from_id("scale")
    frames = np.arange(1, len(values) + 1)
    for index in range(3):
        fc = animdata.new_fcurve(channels, path, index, bone)
        animdata.write_keys(fc, frames, values)


def test_scale_keys_away_from_one_are_refused_by_extract_keyframes():
    obj = make_rig()
    add_scale(obj, "LeftArm", 1.0 + 0.2 * np.sin(np.linspace(0, 3, 60)))
    add_scale(obj, "Head", np.full(60, 2.0))
    bpy.context.view_layer.update()
    before = state()
    with pytest.raises(RuntimeError, match="scale keys on bones 'Head', 'LeftArm': not supported"):
        bpy.ops.mocap.extract_keyframes()
    assert state() == before


def test_scale_keys_at_one_are_keyed_and_measured():
    obj = make_rig()
    add_scale(obj, "LeftArm", np.ones(60))
    assert bpy.ops.mocap.extract_keyframes(target="COUNT", count=12) == {"FINISHED"}
    result = obj.animation_data.action
    assert result.name == "Mocap_keys" and len(curve(obj, "LeftArm", "scale", 0).keyframe_points) <= 60
    assert np.allclose(animdata.read_keys(curve(obj, "LeftArm", "scale", 2))[:, 1], 1.0)
