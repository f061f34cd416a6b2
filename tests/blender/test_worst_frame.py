"""The error measure in Blender: every bone's head, tip and sides, evaluated by Blender itself; the
report's worst bone and frame, and Go to Worst Frame."""

from importlib import import_module

import bpy
import numpy as np
import pytest
from mathutils import Vector

from tests.blender.conftest import PACKAGE

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
clips = import_module(PACKAGE + ".addon.common.clip")
synthetic = import_module(PACKAGE + ".core.synthetic")
keyframes = import_module(PACKAGE + ".core.keyframes")


def make_rig(mode="QUATERNION"):
    motion = synthetic.demo_clip()
    obj = armature.create_animated_armature(motion, "Mocap", bpy.context.scene.collection, rotation_mode=mode)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj, motion


def blender_points(obj, action, frames, points, names):
    """(T, P, 3) the measured points as Blender poses ``action``: pose-bone matrix × offset; the leaf
    tips also checked against Blender's own bone tails."""
    animdata.assign(obj, animdata.action_channels(obj, action))
    scene = bpy.context.scene
    out = []
    for frame in frames:
        scene.frame_set(int(frame))
        bones = [obj.pose.bones[names[j]] for j in points.owner]
        row = [np.array(b.matrix @ Vector(o)) for b, o in zip(bones, points.offsets)]
        for b, k, p in zip(bones, points.kinds, row):
            if k == "tip":
                assert np.allclose(p, b.tail, atol=1e-5)
            elif k == "head":
                assert np.allclose(p, b.head, atol=1e-6)
        out.append(row)
    return np.array(out)


def test_reported_error_is_blenders_playback_on_heads_tips_and_sides():
    obj, motion = make_rig("QUATERNION")
    source = obj.animation_data.action
    report = extract.extract_on_armature(obj, "threshold", {"ratio": 0.08})
    result = obj.animation_data.action
    skeleton = clips.read_clip(obj).motion.skeleton  # the armature's bones, in their own frames
    points = keyframes.measured_points(skeleton)
    assert {"head", "tip", "side"} == set(points.kinds)
    original = blender_points(obj, source, report.frames, points, skeleton.names)
    played = blender_points(obj, result, report.frames, points, skeleton.names)
    err = np.linalg.norm(played - original, axis=-1)
    assert report.playback_error["position_mean"] == pytest.approx(err.mean(), rel=1e-3)
    assert report.playback_error["position_max"] == pytest.approx(err.max(), rel=1e-3)
    # the worst bone and frame hold the largest error (the demo's left and right sides nearly tie)
    worst = report.playback_error
    owned = points.owner == skeleton.index(worst["worst_bone"])
    kinds = np.array(points.kinds)[owned]
    assert err[worst["worst_frame"], owned].max() == pytest.approx(err.max(), rel=1e-3)
    assert kinds[np.argmax(err[worst["worst_frame"], owned])] == worst["worst_point"]
    assert err.max() > err[:, : skeleton.n_joints].max()  # the heads alone miss the worst point
    per_bone = report.playback_error["per_bone_max"]
    assert per_bone[report.playback_error["worst_bone"]] == pytest.approx(err.max(), rel=1e-3)


def test_report_names_the_worst_bone_and_frame_in_scene_units():
    obj, _ = make_rig("QUATERNION")
    scene = bpy.context.scene
    scene.unit_settings.system = "METRIC"
    scene.unit_settings.length_unit = "CENTIMETERS"
    assert bpy.ops.mocap.extract_keyframes(method="UNIFORM", target="COUNT", count=12) == {"FINISHED"}
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    bone, point, frame, error = info["worst_bone"], info["worst_point"], info["worst_frame"], info["worst_error"]
    assert bone in obj.data.bones and point in {"head", "tip", "side"} and 1 <= frame <= 390
    report = scene.mocap_workbench.last_report.splitlines()
    worst = [line for line in report if line.startswith("worst:")]
    assert worst == [f"worst: {bone} {point} at frame {frame:g}, {error * 100:.4g} cm"]
    assert error >= info["position_max"] * 0.9  # playback's worst, close to the core's


def test_go_to_worst_frame_sets_the_frame_and_selects_the_bone():
    obj, _ = make_rig("QUATERNION")
    assert not bpy.ops.mocap.goto_worst_frame.poll()
    assert bpy.ops.mocap.extract_keyframes(method="UNIFORM", target="COUNT", count=12) == {"FINISHED"}
    info = obj.animation_data.action["mocap_workbench"]["keyframes"]
    scene = bpy.context.scene
    scene.frame_set(1)
    assert bpy.ops.mocap.goto_worst_frame.poll()
    assert bpy.ops.mocap.goto_worst_frame() == {"FINISHED"}
    assert scene.frame_current == int(info["worst_frame"])
    assert obj.data.bones.active.name == info["worst_bone"]
    selected = [b.name for b in obj.pose.bones if (b.select if hasattr(b, "select") else b.bone.select)]
    assert selected == [info["worst_bone"]]
    # an action without the record: the button is greyed out, with the reason
    obj.animation_data.action = bpy.data.actions.new("Plain")
    assert not bpy.ops.mocap.goto_worst_frame.poll()


class _RecordingLayout:
    """Stands in for a panel's layout: records the operators drawn."""

    def __init__(self, drawn):
        object.__setattr__(self, "drawn", drawn)

    def __getattr__(self, name):
        def draw(*args, **_kw):
            if name == "operator":
                self.drawn.append(args[0])
            return self

        return draw

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


def test_the_panel_shows_the_button():
    make_rig()
    panels = import_module(PACKAGE + ".addon.keyframes.panels")
    for panel in panels.classes:
        drawn = []
        panel.draw(type("Drawn", (), {"layout": _RecordingLayout(drawn)})(), bpy.context)
        assert drawn[-2:] == ["mocap.extract_keyframes", "mocap.goto_worst_frame"]
