"""Motion editing operators run the way a user runs them: generated armatures and a real CMU transition."""

from importlib import import_module

import addon_utils
import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_retarget import FakeLayout
from tests.conftest import shared_file

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
editing = import_module(PACKAGE + ".addon.editing.edit_actions")
edit_ops = import_module(PACKAGE + ".addon.editing.operators")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
clips = import_module(PACKAGE + ".addon.common.clip")
synthetic = import_module(PACKAGE + ".core.synthetic")
quat = import_module(PACKAGE + ".core.quaternion")

OPERATORS = ("rotate_motion", "transition", "blend_body_part", "interpolate_actions", "pca_synthesis",
             "smoothed_pose_edit", "reverse_motion", "time_scale_motion", "cut_range", "copy_range", "paste_range")  # fmt: skip


def settings():
    return bpy.context.scene.mocap_workbench.editing


def make_rig(motion, name="Walk", mode="QUATERNION"):
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = int(motion.fps), 1.0
    obj = armature.create_animated_armature(motion, name, scene.collection, rotation_mode=mode)
    activate(obj)
    return obj


def activate(obj):
    for other in bpy.context.scene.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


def add_action(obj, motion, name, mode="QUATERNION"):
    """An action made for another armature with the same bones (like a second BVH import), kept
    with a fake user after that armature is deleted."""
    other = armature.create_animated_armature(motion, name, bpy.context.scene.collection, rotation_mode=mode)
    action = other.animation_data.action
    action.use_fake_user = True
    bpy.data.objects.remove(other)
    bpy.data.armatures.remove(bpy.data.armatures[name])
    bpy.context.view_layer.update()
    activate(obj)
    return action


def snapshot(obj, action):
    channels = animdata.action_channels(obj, action)
    return {(fc.data_path, fc.array_index): animdata.read_keys(fc).copy() for fc in channels.fcurves}


def same_keys(before, after):
    return before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)


def heads(obj, frames):
    """(F, B, 3) world positions of the pose bones' heads as Blender evaluates them."""
    matrix = np.array(obj.matrix_world)
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(int(frame))
        local = np.array([list(b.head) for b in obj.pose.bones])
        out.append(local @ matrix[:3, :3].T + matrix[:3, 3])
    return np.array(out)


def world(obj, motion, frames):
    """(F, J, 3) world joint positions of a core motion on the armature, in pose-bone order."""
    matrix = np.array(obj.matrix_world)
    order = [motion.skeleton.index(b.name) for b in obj.pose.bones]
    pos = motion.frames(np.asarray(frames)).world_positions()[:, order]
    return pos @ matrix[:3, :3].T + matrix[:3, 3]


def angle(a, b):
    """Angle (radians) between rotations, accurate near zero."""
    return editing.rotation_angle(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


def last_report():
    return settings().last_report


# --- registration ------------------------------------------------------------------------------


def test_operators_menus_and_panels_are_registered():
    for name in OPERATORS:
        cls = getattr(bpy.types, "MOCAP_OT_" + name)
        assert cls.bl_options == {"REGISTER", "UNDO"}, name
        assert hasattr(bpy.ops.mocap, name)
    for menu in ("DOPESHEET_MT_key", "GRAPH_MT_key", "VIEW3D_MT_object_animation"):
        funcs = getattr(bpy.types, menu).draw._draw_funcs
        assert any(f.__module__.startswith(PACKAGE) and f.__name__ == "draw_menu" for f in funcs), menu
    calls = []
    bpy.types.MOCAP_MT_motion_editing.draw(type("Menu", (), {"layout": FakeLayout(calls)})(), bpy.context)
    assert [c[1] for c in calls if c[0] == "operator"] == ["mocap." + n for n in OPERATORS]
    panels = {p.__name__: p for p in bpy.types.Panel.__subclasses__() if p.__name__.startswith("MOCAP_PT_edit")}
    for suffix, space in (("view3d", "VIEW_3D"), ("dopesheet", "DOPESHEET_EDITOR"), ("graph", "GRAPH_EDITOR")):
        parent = panels[f"MOCAP_PT_edit_{suffix}"]
        assert parent.bl_space_type == space and parent.bl_category == "Mocap" and parent.bl_label == "Edit"
        children = [p for p in panels.values() if getattr(p, "bl_parent_id", "") == parent.__name__]
        assert {p.bl_label for p in children} == {"Rotate", "Transition", "Blend Body Part", "Interpolate",
                                                  "PCA Synthesis", "Smoothed Pose Edit", "Clip"}  # fmt: skip


def test_panels_draw_everything_they_name():
    obj = make_rig(synthetic.walk(60))
    s = settings()
    drawn = []
    for options in (
        {},
        {"pca_source": "FILTER", "parameter": "PROPERTY", "frame_range": "CUSTOM", "scale_mode": "FRAME_RATE"},
    ):
        for key, value in options.items():
            setattr(s, key, value)
        s.clipboard = obj.animation_data.action
        for name in [n for n in dir(bpy.types) if n.startswith("MOCAP_PT_edit") and n.endswith("_view3d")]:
            calls = []
            getattr(bpy.types, name).draw(type("Panel", (), {"layout": FakeLayout(calls)})(), bpy.context)
            drawn += calls
    names = {c[1] for c in drawn}
    assert {"mocap." + n for n in OPERATORS} <= names
    assert {"transition_to", "bone", "pca_actions", "property_name", "frame_start", "fps"} <= names


def test_poll_explains_why_the_buttons_are_grey():
    message = edit_ops.edit_poll_message
    assert not bpy.ops.mocap.rotate_motion.poll()
    assert "Select an armature" in message(bpy.context)
    data = bpy.data.armatures.new("Rig")
    empty = bpy.data.objects.new("Rig", data)
    bpy.context.scene.collection.objects.link(empty)
    bpy.context.view_layer.update()
    activate(empty)
    assert "'Rig' has no action" in message(bpy.context)
    assert not bpy.ops.mocap.reverse_motion.poll() and not bpy.ops.mocap.pca_synthesis.poll()
    obj = make_rig(synthetic.walk(60))
    assert bpy.ops.mocap.rotate_motion.poll() and bpy.ops.mocap.pca_synthesis.poll()
    assert "No other action animates the bones of 'Walk'" in message(bpy.context, need_other=True)
    assert not bpy.ops.mocap.transition.poll() and not bpy.ops.mocap.blend_body_part.poll()
    add_action(obj, synthetic.jump(60), "Jump")
    assert bpy.ops.mocap.transition.poll() and bpy.ops.mocap.interpolate_actions.poll()
    bpy.context.scene.frame_set(200)
    assert not bpy.ops.mocap.smoothed_pose_edit.poll()
    # the pickers only offer actions that animate the armature's bones
    ui = import_module(PACKAGE + ".addon.editing.panels")
    activate(obj)
    assert ui._animates_active(None, obj.animation_data.action)
    assert not ui._animates_active(None, bpy.data.actions.new("Camera move"))


# --- rotate --------------------------------------------------------------------------------------


@pytest.mark.parametrize("pivot", ["FIRST_FRAME", "CURSOR"])
def test_rotate_turns_the_played_motion_about_the_vertical(pivot):
    motion = synthetic.turn(synthetic.walk(120), 30, 80, 60.0)
    obj = make_rig(motion)
    source = obj.animation_data.action
    before = snapshot(obj, source)
    frames = [1, 40, 120]
    original = heads(obj, frames)
    bpy.context.scene.cursor.location = (0.4, -0.3, 0.0)
    assert bpy.ops.mocap.rotate_motion(angle=np.radians(90.0), pivot=pivot) == {"FINISHED"}
    result = obj.animation_data.action
    assert result != source and result.name == "Walk_rotated" and source.use_fake_user
    pivot_point = original[0, 0] if pivot == "FIRST_FRAME" else np.array([0.4, -0.3, 0.0])
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # +90° about world Z
    expected = (original - pivot_point) @ turn.T + pivot_point
    expected[..., 2] = original[..., 2]
    assert np.abs(heads(obj, frames) - expected).max() < 1e-4
    assert same_keys(before, snapshot(obj, source))
    assert "Rotated 120 frames of 'Walk' by 90°" in last_report()
    assert result["mocap_workbench"]["edit"]["operation"] == "rotate"


# --- transition --------------------------------------------------------------------------------


def transition_rig(mode="QUATERNION"):
    walk = synthetic.walk(150)
    obj = make_rig(walk, mode=mode)
    jump = add_action(obj, synthetic.jump(120), "Jump", mode)
    settings().transition_to = jump
    return obj, obj.animation_data.action, jump


def test_transition_makes_a_new_action_and_reports_the_join():
    obj, walk, jump = transition_rig()
    before = [snapshot(obj, walk), snapshot(obj, jump)]
    assert bpy.ops.mocap.transition("INVOKE_DEFAULT", window=0.4) == {"FINISHED"}
    result = obj.animation_data.action
    assert result.name == "Walk_Jump" and walk.use_fake_user
    info = result["mocap_workbench"]["edit"]
    assert info["window"] == 24 and info["sources"] == ["Walk", "Jump"]
    a, b = info["frame_a"], info["frame_b"]
    assert info["frames"] == (a - 1) + (120 - (b - 1))
    assert int(result.frame_range[1]) == info["frames"]
    assert info["pose_step_ratio"] < info["hard_cut_pose_step_ratio"]
    assert info["joint_jump_ratio"] < info["hard_cut_joint_jump_ratio"]
    summary = last_report()
    assert f"'Walk' frame {a} → 'Jump' frame {b}" in summary and "24-frame window (best join)" in summary
    assert "feet slide" in summary and "hard cut" in summary
    assert same_keys(before[0], snapshot(obj, walk)) and same_keys(before[1], snapshot(obj, jump))
    # what Blender plays is the core's transition
    clip = clips.read_clip(obj)
    assert len(clip.frames) == info["frames"]


@pytest.mark.parametrize("mode", ["QUATERNION", "ZXY"])
def test_transition_as_nla_strips_plays_the_crossfade(mode):
    obj, walk, jump = transition_rig(mode)
    before = snapshot(obj, jump)
    original = heads(obj, [1, 100])
    assert bpy.ops.mocap.transition(action_to="Jump", window=0.3, output="NLA", search_join=False) == {"FINISHED"}
    anim = obj.animation_data
    assert anim.action is None and len(anim.nla_tracks) == 2
    lower, upper = (track.strips[0] for track in anim.nla_tracks)
    assert lower.action == walk and upper.action.name == "Jump_aligned"
    assert upper.blend_in == 18 and lower.blend_out == 0
    assert lower.frame_start == 1 and lower.frame_end == 150 and upper.frame_start == 133
    assert same_keys(before, snapshot(obj, jump))
    info = upper.action["mocap_workbench"]["edit"]
    assert info["output"] == "NLA" and info["frame_a"] == 133 and info["frame_b"] == 1 and info["window"] == 18
    assert "strips 'Walk' and 'Jump' on the NLA" in last_report()
    # Blender's NLA plays A, then both mixed channel by channel, then the aligned B
    frames = np.array([100, 133, 140, 149, 150, 151, 200, 252])
    played = heads(obj, frames)
    assert np.abs(heads(obj, [1, 100]) - original).max() < 1e-5
    a, b = editing.read_actions(obj, [walk, upper.action])
    mix = editing.crossfade(a, b.values, 132, 18, 149)
    n = len(next(iter(mix.values())))
    assert n == 252
    predicted = armature.motion_from_values(obj, a.motion.skeleton, mix, n, a.motion.fps)
    assert np.abs(played - world(obj, predicted, frames - 1)).max() < 1e-4
    # B continues where the walk was: no jump of the root at the end of the window
    hips = [b.name for b in obj.pose.bones].index("Hips")
    step = np.linalg.norm(np.diff(heads(obj, [149, 150, 151, 152])[:, hips], axis=0), axis=-1)
    assert step.max() < 3 * np.linalg.norm(original[1, hips] - heads(obj, [99])[0, hips]) + 1e-3


# --- blend, interpolate, PCA -------------------------------------------------------------------


def test_blend_body_part_takes_the_branch_from_the_other_action():
    walk = synthetic.walk(120)
    obj = make_rig(walk, mode="XYZ")
    jump_motion = synthetic.jump(120)
    jump = add_action(obj, jump_motion, "Jump")
    s = settings()
    s.blend_from, s.bone, s.soft_edge = jump, "LeftArm", 0.0
    assert bpy.ops.mocap.blend_body_part("INVOKE_DEFAULT") == {"FINISHED"}
    result = clips.read_clip(obj)
    assert result.channels.action.name == "Walk_LeftArm" and len(result.frames) == 120
    sk = result.motion.skeleton
    source_a, source_b = editing.read_actions(obj, [bpy.data.actions["Walk"], jump])
    for bone, expected in (
        ("LeftArm", source_b),
        ("LeftHand", source_b),
        ("RightArm", source_a),
        ("LeftUpLeg", source_a),
    ):
        j = sk.index(bone)
        assert angle(result.motion.rotations[:, j], expected.motion.rotations[:, j]).max() < 1e-5, bone
    info = result.channels.action["mocap_workbench"]["edit"]
    assert info["bones"] == 3 and info["max_degrees"] > 10
    assert "Blended 'LeftArm' and 2 bones below it from 'Jump'" in last_report()


def test_interpolate_reports_matched_events_and_lands_between():
    obj = make_rig(synthetic.walk(300, speed=1.0, stride_hz=0.8))
    fast = add_action(obj, synthetic.walk(300, speed=1.8, stride_hz=1.1), "Fast")
    settings().interpolate_with = fast
    assert bpy.ops.mocap.interpolate_actions("INVOKE_DEFAULT", coefficient=0.5) == {"FINISHED"}
    info = obj.animation_data.action["mocap_workbench"]["edit"]
    assert info["events"] >= 4 and len(info["events_a"]) == len(info["events_b"]) == info["events"]
    slow_speed, speed, fast_speed = info["pelvis_speeds"]
    assert slow_speed < speed < fast_speed
    assert f"{info['events']} key events matched" in last_report()


def test_pca_synthesis_from_a_list_reports_explained_variance():
    obj = make_rig(synthetic.walk(240, speed=1.0, stride_hz=0.8), "Walk_slow")
    add_action(obj, synthetic.walk(240, speed=1.4, stride_hz=0.95), "Walk_mid")
    add_action(obj, synthetic.walk(240, speed=1.8, stride_hz=1.1), "Walk_fast")
    s = settings()
    s.name_filter = "walk_"
    assert bpy.ops.mocap.pca_list_fill() == {"FINISHED"}
    assert [item.action.name for item in s.pca_actions] == ["Walk_fast", "Walk_mid", "Walk_slow"]
    assert bpy.ops.mocap.pca_synthesis("INVOKE_DEFAULT", position=0.5, cycles=3) == {"FINISHED"}
    info = obj.animation_data.action["mocap_workbench"]["edit"]
    explained = info["explained_variance"]
    assert info["actions"] == 3 and info["cycles_found"] >= 6
    assert explained[-1] == pytest.approx(1.0) and all(np.diff(explained) >= -1e-12)
    lo, hi = info["parameter_range"]
    assert info["parameter"] == pytest.approx((lo + hi) / 2)
    assert abs(info["generated_speed"] - info["parameter"]) < 0.05 * info["parameter"]
    assert "% of the variance" in last_report()
    # the same actions by name, the parameter a number kept on each action
    for action, value in (("Walk_slow", 1.0), ("Walk_mid", 2.0), ("Walk_fast", 3.0)):
        bpy.data.actions[action]["style"] = value
    s.pca_actions.clear()
    bpy.data.actions.remove(obj.animation_data.action)
    assert bpy.ops.mocap.pca_synthesis(pca_source="FILTER", name_filter="WALK_*", parameter="PROPERTY",
                                       property_name="style", use_range_position=False, value=2.5) == {"FINISHED"}  # fmt: skip
    info = obj.animation_data.action["mocap_workbench"]["edit"]
    assert list(info["parameter_range"]) == [1.0, 3.0] and info["parameter"] == 2.5
    assert "'style' 2.5 (cycles 1–3" in last_report()
    assert list(info["sources"]) == ["Walk_fast", "Walk_mid", "Walk_slow"]


# --- smoothed pose edit -----------------------------------------------------------------------


@pytest.mark.parametrize("in_place", [False, True])
def test_smoothed_pose_edit_spreads_the_posed_bone(in_place):
    obj = make_rig(synthetic.walk(120))
    source = obj.animation_data.action
    before = snapshot(obj, source)
    original = clips.read_clip(obj).motion
    scene = bpy.context.scene
    scene.frame_set(60)
    with pytest.raises(RuntimeError, match="no keyed bone is posed away from 'Walk' at frame 60"):
        bpy.ops.mocap.smoothed_pose_edit()
    bone = obj.pose.bones["LeftArm"]
    new = quat.multiply(np.array(bone.rotation_quaternion), quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.6))
    bone.rotation_quaternion = new
    assert bpy.ops.mocap.smoothed_pose_edit(falloff=10, in_place=in_place) == {"FINISHED"}
    assert (obj.animation_data.action == source) == in_place
    if not in_place:
        assert same_keys(before, snapshot(obj, source))
    edited = clips.read_clip(obj).motion
    j = edited.skeleton.index("LeftArm")
    assert angle(edited.rotations[59, j], new) < 1e-5
    changed = np.flatnonzero(angle(edited.rotations[:, j], original.rotations[:, j]) > 1e-5)
    assert changed[0] == 59 - 9 and changed[-1] == 59 + 9
    others = np.delete(np.arange(edited.skeleton.n_joints), j)
    assert angle(edited.rotations[:, others], original.rotations[:, others]).max() < 1e-5
    assert "Spread the pose of 1 bone (LeftArm) at frame 60 over frames 51–69 (19 frames)" in last_report()
    scene.frame_set(61)
    assert angle(np.array(bone.rotation_quaternion), edited.rotations[60, j]) < 1e-5


# --- clip operations ---------------------------------------------------------------------------


def test_reverse_and_time_scale_make_new_actions():
    obj = make_rig(synthetic.walk(100))
    source = obj.animation_data.action
    frames = np.array([1, 30, 100])
    original = heads(obj, frames)
    assert bpy.ops.mocap.reverse_motion(frame_range="ACTION") == {"FINISHED"}
    assert np.abs(heads(obj, 101 - frames) - original).max() < 1e-5
    obj.animation_data.action = source
    assert bpy.ops.mocap.time_scale_motion(scale_mode="FACTOR", factor=2.0) == {"FINISHED"}
    assert clips.read_clip(obj).motion.n_frames == 199
    assert np.abs(heads(obj, 2 * frames - 1) - original).max() < 1e-5
    assert "×2" in last_report() and "100 → 199 frames" in last_report()
    obj.animation_data.action = source
    assert bpy.ops.mocap.time_scale_motion(scale_mode="FRAME_RATE", fps=30.0) == {"FINISHED"}
    assert clips.read_clip(obj).motion.n_frames == 50 and "play it at 30 fps" in last_report()


def test_cut_then_paste_back_gives_the_original():
    obj = make_rig(synthetic.turn(synthetic.walk(140), 20, 120, 120.0))
    source = obj.animation_data.action
    frames = np.arange(1, 141, 7)
    original = heads(obj, frames)
    scene = bpy.context.scene
    scene.use_preview_range, scene.frame_preview_start, scene.frame_preview_end = True, 41, 80
    assert bpy.ops.mocap.cut_range(frame_range="PREVIEW") == {"FINISHED"}
    cut = obj.animation_data.action
    assert cut.name == "Walk_cut" and clips.read_clip(obj).motion.n_frames == 100
    assert "Cut frames 41–80 (40 frames) out of 'Walk'" in last_report()
    s = settings()
    assert s.clipboard == source and (s.clipboard_start, s.clipboard_end) == (41, 80)
    scene.frame_set(41)
    assert bpy.ops.mocap.paste_range("INVOKE_DEFAULT") == {"FINISHED"}
    assert obj.animation_data.action.name == "Walk_cut_pasted"
    assert np.abs(heads(obj, frames) - original).max() < 1e-4
    assert "Pasted frames 41–80 of 'Walk' (40 frames) before frame 41 of 'Walk_cut'" in last_report()


def test_copy_range_needs_a_preview_range():
    make_rig(synthetic.walk(60))
    bpy.context.scene.use_preview_range = False
    with pytest.raises(RuntimeError, match="The scene has no preview range"):
        bpy.ops.mocap.copy_range(frame_range="PREVIEW")
    assert bpy.ops.mocap.copy_range(frame_range="CUSTOM", frame_start=10, frame_end=20) == {"FINISHED"}
    assert "Copied frames 10–20 of 'Walk' (11 frames)" in last_report()


# --- a real capture ----------------------------------------------------------------------------


def import_bvh(relative):
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(shared_file(relative)), update_scene_fps=True)
    return bpy.context.active_object


def test_cmu_walk_to_dance_transition():
    dance = import_bvh("cmu_bvh_cgspeed/05_02.bvh")
    walk = import_bvh("cmu_bvh_cgspeed/02_01.bvh")
    walk_action, dance_action = walk.animation_data.action, dance.animation_data.action
    before = [snapshot(walk, walk_action), snapshot(dance, dance_action)]
    activate(walk)
    settings().transition_to = dance_action
    assert bpy.ops.mocap.transition("INVOKE_DEFAULT", window=0.5) == {"FINISHED"}
    result = walk.animation_data.action
    assert result.name == "02_01_05_02" and result not in (walk_action, dance_action)
    assert same_keys(before[0], snapshot(walk, walk_action)) and same_keys(before[1], snapshot(dance, dance_action))
    info = result["mocap_workbench"]["edit"]
    assert info["skating_after"] < 0.1 * info["skating_before"]
    for measure in ("pose_step", "joint_jump"):
        assert info[f"{measure}_ratio"] < 0.5 * info[f"hard_cut_{measure}_ratio"], measure
    summary = last_report()
    assert "Transition '02_01' frame" in summary and "feet slide" in summary
    # independent check on Blender's playback: the largest frame-to-frame turn of any bone across the
    # window is smaller than the jump of a hard cut between the two actions' poses at the join
    a = info["frame_a"]
    window = info["window"]
    clip = clips.read_clip(walk)
    rot = clip.motion.rotations
    body = [j for j in range(clip.motion.skeleton.n_joints) if clip.motion.skeleton.parents[j] >= 0]
    steps = angle(rot[a - 2 : a + window, body], rot[a - 1 : a + window + 1, body]).max()
    walk_clip, dance_clip = editing.read_actions(walk, [walk_action, dance_action])
    b = info["frame_b"]
    cut = angle(walk_clip.motion.rotations[a - 1, body], dance_clip.motion.rotations[b - 1, body]).max()
    assert steps < 0.5 * cut, (steps, cut)
