"""Retarget with Physics, run the way a user runs it: a real CMU walk imported with Blender's BVH
importer onto a 1.4× copy (the paper's setting: 60 kg source, 90 kg and 1.99 m target), the
figures checked against the core's own measure of what Blender plays back; the Physics
sub-panel, the redo panel's section and the plot without matplotlib."""

import sys
from importlib import import_module

import addon_utils
import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_retarget import FakeLayout, build_rigify_rig, key_snapshot, select_pair, walk_armature
from tests.conftest import shared_file

retarget_addon = import_module(PACKAGE + ".addon.retarget.retarget_action")
operators = import_module(PACKAGE + ".addon.retarget.operators")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
clips = import_module(PACKAGE + ".addon.common.clip")
apply = import_module(PACKAGE + ".core.physics.apply")
body_mod = import_module(PACKAGE + ".core.physics.body")
metrics = import_module(PACKAGE + ".core.physics.metrics")
contacts_mod = import_module(PACKAGE + ".core.contacts")
planting = import_module(PACKAGE + ".core.physics.planting")
overlay = import_module(PACKAGE + ".addon.retarget.physics_overlay")
bvh = import_module(PACKAGE + ".core.io.bvh")
synthetic = import_module(PACKAGE + ".core.synthetic")

WALK = "cmu_bvh_cgspeed/02_01.bvh"


def import_walk(scale=1.0):
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(shared_file(WALK)), global_scale=scale, update_scene_fps=True,
                            update_scene_duration=True)  # fmt: skip
    return bpy.context.active_object


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def played_figures(target, geometric, physical, settings):
    """ZMP-inside share and deviation of what Blender plays back from the two written actions,
    measured by the core like the operator measures them (the jump-free stretch after frame 1)."""
    target.animation_data.action = geometric
    before = clips.read_clip(target).motion.frames(slice(1, None))
    target.animation_data.action = physical
    after = clips.read_clip(target).motion.frames(slice(1, None))
    up = np.array([0.0, 0.0, 1.0])
    unit = settings["target_height_m"] / body_mod.standing_height(before.skeleton, up)
    body = body_mod.body_model(before.skeleton, settings["target_mass_kg"], unit=unit, up=up)
    contacts = planting.with_toes(before, contacts_mod.detect_contacts(before, up=up))
    an_before = metrics.analyse(before, contacts, body)
    an_after = metrics.analyse(after, contacts, body, ground=an_before.support.ground)
    return metrics.report(an_before, body, before), metrics.report(an_after, body, after, source=before)


def test_physics_operator_on_a_real_walk_onto_a_taller_heavier_copy():
    source = import_walk()
    target = import_walk(1.4)
    original = target.animation_data.action
    source_keys, target_keys = key_snapshot(source), key_snapshot(target)
    select_pair(source, target)
    # the geometric result first (the reference for the measured check below)
    assert bpy.ops.mocap.retarget(plant_feet=True) == {"FINISHED"}
    geometric = target.animation_data.action
    actions = set(bpy.data.actions)
    assert bpy.ops.mocap.retarget(use_physics=True, target_mass=90.0, target_height=1.99, source_mass=60.0) == {
        "FINISHED"
    }
    result = target.animation_data.action
    assert set(bpy.data.actions) - actions == {result} and result.name.startswith("02_01_02_01.0")
    assert geometric.use_fake_user and original.use_fake_user
    # source and the target's earlier actions untouched
    assert _same(key_snapshot(source), source_keys)
    target.animation_data.action = original
    assert _same(key_snapshot(target), target_keys)
    # figures: in the report, on the action, and what Blender plays back agrees with them
    settings = bpy.context.scene.mocap_workbench.retarget
    summary = settings.last_report
    assert "physics (90 kg, 1.99 m): ZMP inside" in summary and "torque-limit frames" in summary
    physics = result["mocap_workbench"]["physics"].to_dict()
    before, after = physics["before"], physics["after"]
    skating = result["mocap_workbench"]["retarget"].to_dict()  # the feet the retarget planted stay planted
    assert skating["skating_after"] < 0.03 * skating["skating_before"]  # 0.11 of it with the toes let go
    parts = summary.splitlines()  # the sidebar shows one line a row
    assert "no flight" in parts and any(part.startswith("deviation ") for part in parts)
    assert f"torque-limit frames {before['torque_violation_frames']} → {after['torque_violation_frames']}" in parts
    assert after["zmp_inside_share"] >= before["zmp_inside_share"] + 0.2 and after["zmp_inside_share"] > 0.95
    assert after["deviation"] < 0.02 and physics["frames_solved"] == 343 and list(physics["stretches"][0]) == [1, 344]
    # the source is measured on its own body (CMU's units, from its size: it is imported at scale 1)
    assert physics["target_height_m"] == pytest.approx(1.99) and physics["source_height_m"] == pytest.approx(
        1.99 / 1.4, rel=0.005
    )
    assert physics["target_height_measured"] == 0 and physics["body_model"] == "male"
    assert f"{100 * before['zmp_inside_share']:.1f}% → {100 * after['zmp_inside_share']:.1f}%" in summary
    played_before, played_after = played_figures(target, geometric, result, physics)
    assert played_before["zmp_inside_share"] == pytest.approx(before["zmp_inside_share"], abs=0.01)
    assert played_after["zmp_inside_share"] == pytest.approx(after["zmp_inside_share"], abs=0.01)
    assert played_after["deviation"] == pytest.approx(after["deviation"], rel=0.05)
    # the plot, where matplotlib is importable (not in the Blender wheels' own Python)
    name = f"Physics Report – {result.name}"
    if have_matplotlib():
        image = bpy.data.images[name]
        assert image.packed_file is not None and tuple(image.size)[0] > 500
        assert result["mocap_workbench"]["physics"]["image"] == name == settings.last_physics_image
        assert f"plot in image '{name}'" in summary
    else:
        assert name not in bpy.data.images and settings.last_physics_image == ""
    data = result["mocap_workbench"]["physics_overlay"]
    assert data["frame_start"] == 1 and len(data["offsets"]) == 345 and len(data["zmp"]) == 3 * 344


def test_overlay_switch_adds_and_removes_its_draw_handler():
    wm = bpy.context.window_manager
    assert not overlay.is_enabled()
    wm.mocap_physics_overlay = True
    assert overlay.is_enabled()
    overlay.draw()  # background mode: no GPU, draws nothing
    wm.mocap_physics_overlay = False
    assert not overlay.is_enabled()
    assert overlay.overlay_geometry(None, 1) is None


def _same(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_physics_on_a_rig_made_in_blender_measures_its_height():
    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    calls = []
    settings = apply.PhysicsSettings(target_mass=55.0, sex="female", torques=False, momentum=False, stiffness=2.0)
    report = retarget_addon.retarget_armatures(source, target, physics=settings, progress=calls.append)
    assert np.all(np.diff(calls) > -1e-12) and calls[-1] == 1.0 and len(calls) > 10
    f = report.physics
    assert f["target_height_measured"] and f["target_height_m"] == pytest.approx(1.74, abs=0.01)
    assert f["source_height_m"] == pytest.approx(1.7, abs=0.01) and f["body_model"] == "female"
    assert not f["torques"] and not f["momentum"] and f["stiffness"] == 2.0
    assert f["after"]["zmp_inside_share"] >= f["before"]["zmp_inside_share"]
    assert "1.74 m measured" in report.summary() and not report.physics_image
    stored = target.animation_data.action["mocap_workbench"]["physics"]
    assert stored["torques"] == 0 and stored["target_mass_kg"] == 55.0
    check_overlay(target, report)


def check_overlay(target, report):
    """The viewport overlay's geometry: on the floor, the ZMP inside the polygon where the figures say so."""
    series = report.physics_series["after"]
    checked = 0
    for frame in report.frames[:: max(1, len(report.frames) // 40)]:
        g = overlay.overlay_geometry(target, int(frame))
        t = int(frame - report.frames[0])
        assert g.inside == bool(series.inside[t]) and len(g.path) > 0.9 * len(report.frames)
        if len(g.polygon) < 3 or g.zmp is None:
            continue
        normal = np.array(target.matrix_world)[:3, :3] @ series.up
        heights = np.concatenate((g.polygon @ normal, [g.zmp @ normal]))
        assert np.ptp(heights) < 1e-6
        edges = np.roll(g.polygon, -1, axis=0) - g.polygon
        sides = np.cross(edges, g.zmp - g.polygon) @ normal
        assert (sides.min() > -1e-9) == g.inside
        checked += 1
    assert checked > 10


def test_without_matplotlib_the_report_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    report = retarget_addon.RetargetReport("s", "t", "a", "a_t", np.arange(3), 1, 1, 1.0,
                                           physics={"x": 1}, physics_series={"before": None})  # fmt: skip
    images = len(bpy.data.images)
    assert retarget_addon.physics_image(report) is None and len(bpy.data.images) == images
    assert "matplotlib is not installed" in report.physics_plot_note


def test_physics_ui_is_registered():
    panel = bpy.types.MOCAP_PT_retarget_physics
    assert panel.bl_parent_id == "MOCAP_PT_retarget" and panel.bl_space_type == "VIEW_3D"
    assert panel.bl_category == "Mocap" and panel.bl_label == "Physics"
    op_props = bpy.ops.mocap.retarget.get_rna_type().properties
    settings = bpy.context.scene.mocap_workbench.retarget
    for name in ("use_physics", "target_mass", "target_height", "source_mass", "body_model", "use_balance",
                 "use_torque_limits", "use_momentum", "stiffness", "plot_physics"):  # fmt: skip
        assert name in op_props and name in settings.bl_rna.properties, name
    assert op_props["source_mass"].default == 60.0 and op_props["target_height"].default == 0.0
    assert op_props["body_model"].default == "MALE" and not op_props["use_physics"].default
    assert bpy.types.MOCAP_OT_retarget.bl_options == {"REGISTER", "UNDO", "PRESET"}


class PanelLayout(FakeLayout):
    """FakeLayout with collapsible sections (layout.panel, as the redo panel uses)."""

    def panel(self, idname, default_closed=False):
        self.calls.append(("panel", idname))
        return PanelLayout(self.calls), PanelLayout(self.calls)

    def column(self, heading=""):
        return PanelLayout(self.calls)

    row = box = column


def test_physics_panel_draws_its_options_and_the_measured_height():
    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    calls = []
    panel = type("Panel", (), {"layout": PanelLayout(calls)})()
    bpy.types.MOCAP_PT_retarget_physics.draw_header(panel, bpy.context)
    bpy.types.MOCAP_PT_retarget_physics.draw(panel, bpy.context)
    assert calls[0] == ("prop", "use_physics") and ("prop", "stiffness") in calls
    assert ("prop", "mocap_physics_overlay") in calls
    assert ("label", "Measured: 1.74 m") in calls
    settings = bpy.context.scene.mocap_workbench.retarget
    settings.target_height = 1.8
    calls.clear()
    operators.draw_physics_options(PanelLayout(calls), settings, target)
    assert not any(c[0] == "label" for c in calls) and ("prop", "plot_physics") in calls
    # a target that is not human-sized is flagged
    target.scale = (20.0, 20.0, 20.0)
    bpy.context.view_layer.update()
    settings.target_height = 0.0
    calls.clear()
    operators.draw_physics_options(PanelLayout(calls), settings, target)
    assert ("label", "Measured: 34.8 m (not human-sized: set the height)") in calls
    assert ("label", "Physics reads it in metres: 1.74 m") in calls  # what Retarget takes: the armature units


def test_redo_panel_has_a_physics_section():
    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    calls = []
    settings = bpy.context.scene.mocap_workbench.retarget

    class Redo:
        layout = PanelLayout(calls)
        use_bone_map = True

        def __getattr__(self, name):
            return getattr(settings, name)

    Redo.bl_rna = bpy.ops.mocap.retarget.get_rna_type()
    bpy.types.MOCAP_OT_retarget.draw(Redo(), bpy.context)
    assert ("panel", "MOCAP_OT_retarget_physics") in calls and ("prop", "use_physics") in calls
    assert ("prop", "target_mass") in calls and ("prop", "root_scale") in calls


def test_poll_messages_with_physics_on():
    settings = bpy.context.scene.mocap_workbench.retarget
    settings.use_physics = True
    assert not bpy.ops.mocap.retarget.poll()
    assert "Make the target armature active" in operators.pair_poll_message(bpy.context)
    target = build_rigify_rig()
    other = build_rigify_rig("Other")
    select_pair(other, target)
    assert "'Other' has no action" in operators.pair_poll_message(bpy.context)


def test_physics_that_cannot_run_writes_nothing():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    synthetic = import_module(PACKAGE + ".core.synthetic")
    armature = import_module(PACKAGE + ".addon.common.armature")
    source = armature.create_animated_armature(synthetic.walk(20), "Short", scene.collection)  # 1/3 s
    target = build_rigify_rig()
    select_pair(source, target)
    actions = set(bpy.data.actions)
    with pytest.raises(RuntimeError, match="Physics: no stretch of at least 0.5 s"):  # the operator's ERROR report
        bpy.ops.mocap.retarget(use_physics=True)
    assert set(bpy.data.actions) == actions and target.animation_data is None
    with pytest.raises(ValueError, match="^Physics: no stretch of at least 0.5 s"):
        retarget_addon.retarget_armatures(source, target, physics=apply.PhysicsSettings())


def test_physics_onto_a_rig_of_legs_only_is_refused_and_writes_nothing():
    """A target armature of pelvis and legs, retargeted with Allow Partial Map: physics ran on its legs (a 0.92 m
    stature) as if they were a body. Now the operator reports what is missing and the scene is left as it was."""
    from tests.rigs import pruned

    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    synthetic = import_module(PACKAGE + ".core.synthetic")
    armature = import_module(PACKAGE + ".addon.common.armature")
    source = armature.create_animated_armature(synthetic.walk(120), "Walk", scene.collection)
    legs = armature.build_armature(pruned(synthetic.humanoid(1.4), ["Spine"], tips=True)[0], "Legs", scene.collection)
    bpy.context.view_layer.update()
    select_pair(source, legs)
    actions = set(bpy.data.actions)
    with pytest.raises(
        RuntimeError, match="Physics: physics needs a whole body and this skeleton has no trunk or head"
    ):
        bpy.ops.mocap.retarget(use_physics=True, allow_partial=True)
    assert set(bpy.data.actions) == actions and legs.animation_data is None
    assert bpy.ops.mocap.retarget(allow_partial=True) == {"FINISHED"}  # without physics the partial map runs


def test_the_measured_height_is_the_one_the_physics_uses_on_a_folded_rest_pose():
    """The Character Creator BVH's rest pose lies folded along one axis: the panel measured it upright along that
    axis (1.35 m at scale 0.01) while the physics stands it along the world's up (1.77 m, the CC base body's)."""
    source = import_walk()
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(shared_file("iclone_cc/005_06.bvh")), global_scale=0.01)
    target = bpy.context.active_object
    select_pair(source, target)
    measured = retarget_addon.measured_height(target)
    assert 1.7 < measured < 1.85
    quick = apply.PhysicsSettings(balance=False, torques=False, momentum=False)
    report = retarget_addon.retarget_armatures(source, target, physics=quick)
    assert report.physics["target_height_m"] == pytest.approx(measured, rel=1e-6)


def test_physics_on_a_walk_imported_into_a_24_fps_scene():
    """CMU 02_01 imported with the BVH importer's Scale FPS into a 24 fps scene (70 frames, its T-pose the
    first) onto the Mixamo rig: the T-pose step is cut off and the walk balanced within the torque limits.
    Before, the T-pose went undetected below 60 fps and the 5-frame derivative window extrapolated at the clip
    ends: ZMP inside 94.1 % -> 92.6 % of contact frames, torque-limit frames 6 -> 6, worst 3.55 -> 3.53 (30 fps:
    98.8 % -> 88.1 %, 3 -> 3; 25 fps: 97.2 % -> 78.9 %, 5 -> 4, deviation 3.1 %); now 95.7 % -> 100 %, 2 -> 0,
    worst 1.13 -> 0.92 (30 fps: 100 %, 0 -> 0; 25 fps: 100 %, 2 -> 0, deviation 0.25 %)."""
    addon_utils.enable("io_anim_bvh", default_set=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    options = {"rotate_mode": "QUATERNION", "use_fps_scale": True}
    bpy.ops.import_anim.bvh(filepath=str(shared_file("mixamo/Walk-In-Circle.bvh")), global_scale=0.01, **options)
    target = bpy.context.active_object
    bpy.ops.import_anim.bvh(filepath=str(shared_file(WALK)), update_scene_duration=True, **options)
    select_pair(bpy.context.active_object, target)
    assert bpy.ops.mocap.retarget(use_physics=True, target_mass=90.0, plot_physics=False) == {"FINISHED"}
    physics = target.animation_data.action["mocap_workbench"]["physics"].to_dict()
    assert physics["frames"] == 70 and physics["frames_solved"] == 69  # the T-pose kept as retargeted
    after = physics["after"]
    assert after["torque_violation_frames"] == 0 and after["torque_worst_ratio"] < 1.0
    assert after["zmp_inside_share"] > 0.99 and after["deviation"] < 0.015


def test_physics_on_a_clip_longer_than_a_window_is_solved_in_windows_and_plays_on(tmp_path):
    """A 62 s walk (the procedural walk at 30 fps, 1,860 frames, written as BVH) onto a 1.4× copy: Retarget with
    Physics solves it in two windows of at most 60 s (core/physics/windows.py), says so in its record and report, and what the action plays accelerates no more across the cut than around it."""
    path = tmp_path / "long_walk.bvh"
    bvh.write_bvh(synthetic.walk(1860, fps=30.0), path)
    addon_utils.enable("io_anim_bvh", default_set=True)
    rigs = []
    for scale in (1.0, 1.4):
        bpy.ops.import_anim.bvh(filepath=str(path), global_scale=scale, update_scene_fps=True,
                                update_scene_duration=True)  # fmt: skip
        rigs.append(bpy.context.active_object)
    select_pair(*rigs)
    options = {"use_physics": True, "target_mass": 90.0, "source_mass": 60.0, "plot_physics": False}
    assert bpy.ops.mocap.retarget(**options) == {"FINISHED"}
    target = rigs[1]
    physics = target.animation_data.action["mocap_workbench"]["physics"].to_dict()
    (start, stop), = [list(s) for s in physics["stretches"]]  # fmt: skip
    (a, cut), (cut_too, b) = [list(w) for w in physics["windows"]]  # fmt: skip
    assert (a, b) == (start, stop) and cut == cut_too and stop - start > 60 * 30 >= max(cut - a, b - cut)
    assert physics["after"]["zmp_inside_share"] >= physics["before"]["zmp_inside_share"]
    assert "solved in 2 windows of up to 60 s" in bpy.context.scene.mocap_workbench.retarget.last_report.splitlines()
    played = clips.read_clip(target).motion.world_positions()
    acc = np.linalg.norm(np.diff(played, 2, axis=0), axis=-1).max(axis=1)  # frame k is frame k + 1's
    half = int(round(0.25 * 30))  # the crossfade's half, frames
    around = np.r_[cut - 30 : cut - half - 2, cut + half + 1 : cut + 30]
    assert acc[cut - half - 2 : cut + half + 1].max() < 1.25 * acc[around].max()
