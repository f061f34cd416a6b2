"""Retarget run the way a user runs it: BVH-imported armatures and a Rigify-style rig made in Blender."""

from importlib import import_module

import addon_utils
import bpy
import numpy as np
import pytest

from tests import rigs
from tests.blender.conftest import PACKAGE
from tests.conftest import shared_file

armature = import_module(PACKAGE + ".addon.common.armature")
animdata = import_module(PACKAGE + ".addon.common.animdata")
retarget_addon = import_module(PACKAGE + ".addon.retarget.retarget_action")
operators = import_module(PACKAGE + ".addon.retarget.operators")
synthetic = import_module(PACKAGE + ".core.synthetic")
skeleton_mod = import_module(PACKAGE + ".core.skeleton")


def import_bvh(relative, rotate_mode):
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(shared_file(relative)), rotate_mode=rotate_mode, update_scene_fps=True)
    return bpy.context.active_object


def select_pair(source, target):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    source.select_set(True)
    target.select_set(True)
    bpy.context.view_layer.objects.active = target


def heads(obj, frames):
    """(F, B, 3) pose-bone heads in armature space as Blender evaluates them."""
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(int(frame))
        out.append([np.array(b.head) for b in obj.pose.bones])
    return np.array(out)


def direction_errors(source, target, mapping, frames, skip=()):
    """Angles (degrees) between each mapped target bone (parent to child) and its source bone,
    as Blender evaluates both armatures; both in world space."""
    hs, ht = heads(source, frames), heads(target, frames)
    ms = np.array(source.matrix_world)[:3, :3]
    mt = np.array(target.matrix_world)[:3, :3]
    names_s = [b.name for b in source.pose.bones]
    names_t = [b.name for b in target.pose.bones]
    angles = []
    for child, src_child in mapping.items():
        parent = target.pose.bones[child].parent
        while parent is not None and parent.name not in mapping:
            parent = parent.parent
        if parent is None or child in skip:
            continue
        vt = (ht[:, names_t.index(child)] - ht[:, names_t.index(parent.name)]) @ mt.T
        vs = (hs[:, names_s.index(src_child)] - hs[:, names_s.index(mapping[parent.name])]) @ ms.T
        if np.linalg.norm(vt, axis=-1).min() < 1e-4 or np.linalg.norm(vs, axis=-1).min() < 1e-4:
            continue
        cross = np.linalg.norm(np.cross(vt, vs), axis=-1)
        angles.append(np.degrees(np.arctan2(cross, np.sum(vt * vs, axis=-1))))
    return np.array(angles)


def key_snapshot(action_obj):
    channels = animdata.object_channels(action_obj)
    return {(fc.data_path, fc.array_index): animdata.read_keys(fc).copy() for fc in channels.fcurves}


@pytest.mark.parametrize("modes", [("NATIVE", "QUATERNION"), ("QUATERNION", "NATIVE")])
def test_operator_on_bvh_imported_armatures(modes):
    target = import_bvh("cmu_bvh_3dsmax/131_01.bvh", modes[1])
    source = import_bvh("cmu_bvh_cgspeed/02_01.bvh", modes[0])
    original = target.animation_data.action
    before = key_snapshot(target)
    select_pair(source, target)
    assert bpy.ops.mocap.retarget("INVOKE_DEFAULT", plant_feet=False) == {"FINISHED"}
    result = target.animation_data.action
    assert result != original and original.name in bpy.data.actions and original.use_fake_user
    curves = armature.BoneCurves.of(animdata.object_channels(target).fcurves, {b.name for b in target.data.bones})
    assert {len(fc.keyframe_points) for fc in curves.by_channel.values()} == {344}
    assert {b for b, p, _ in curves.by_channel if p == "location"} == {"Hips"}
    mapping = retarget_addon.auto_bone_map(source, target)
    assert len(mapping) == 31
    angles = direction_errors(source, target, mapping, [1, 90, 200, 344])
    assert len(angles) >= 18 and angles.max() < 0.05
    summary = bpy.context.scene.mocap_workbench.retarget.last_report
    assert "344 frames" in summary and "31 of 31 bones mapped" in summary and "skating" not in summary
    assert result["mocap_workbench"]["retarget"]["source_action"] == source.animation_data.action.name
    target.animation_data.action = original  # the original is untouched
    after = key_snapshot(target)
    assert after.keys() == before.keys() and all(np.array_equal(before[k], after[k]) for k in before)


def test_planted_feet_on_bvh_imports_reduce_skating():
    target = import_bvh("bandai_namco_1/dataset-1_walk_normal_001.bvh", "NATIVE")
    source = import_bvh("cmu_bvh_cgspeed/02_01.bvh", "QUATERNION")
    select_pair(source, target)
    report = retarget_addon.retarget_armatures(source, target)
    assert report.mapped == 21 and 5 < report.scale < 6
    assert report.figures["skating_after"] * 10 < report.figures["skating_before"]
    info = target.animation_data.action["mocap_workbench"]["retarget"]
    assert info["skating_after"] == pytest.approx(report.figures["skating_after"])
    # Bandai's importer keys location on every bone: the new action holds them at rest
    curves = armature.BoneCurves.of(animdata.object_channels(target).fcurves, {b.name for b in target.data.bones})
    located = {b for b, p, _ in curves.by_channel if p == "location"}
    assert located == {b.name for b in target.data.bones}


def build_rigify_rig(name="Rig", a_pose=45.0, seed=3):
    """A Rigify-style deform rig made with edit bones: DEF- names, twist segments, A-pose arms,
    connected chains and random bone rolls (Blender's Z-up, facing -Y)."""
    sk = rigs.build("rigify", a_pose=a_pose, z_up=True)
    pos = skeleton_mod.rest_positions(sk)
    tips = {int(p): pos[p] + o for p, o in zip(sk.end_site_parents, sk.end_site_offsets)}
    rng = np.random.default_rng(seed)
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.context.view_layer.update()
    bpy.ops.object.mode_set(mode="EDIT")
    bones = []
    for j, bone_name in enumerate(sk.names):
        bone = data.edit_bones.new(bone_name)
        bone.head = pos[j]
        p = sk.parents[j]
        reference = pos[j] - pos[p] if p >= 0 else np.array([0.0, 0.0, 1.0])
        children = [int(c) for c in sk.children(j)]
        if children:
            tail = pos[
                max(children, key=lambda c: np.dot(pos[c] - pos[j], reference) / np.linalg.norm(pos[c] - pos[j]))
            ]
        elif j in tips:
            tail = tips[j]
        else:
            tail = pos[j] + 0.05 * reference / np.linalg.norm(reference)
        bone.tail = tail
        bone.roll = rng.uniform(-np.pi, np.pi)
        if p >= 0:
            bone.parent = bones[p]
            bone.use_connect = bool(np.allclose(bones[p].tail, bone.head))
        bones.append(bone)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.update()
    return obj


def walk_armature():
    motion = synthetic.walk(150)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.0
    return armature.create_animated_armature(motion, "Walk", scene.collection)


def test_operator_on_a_rigify_style_rig():
    source = walk_armature()
    target = build_rigify_rig()
    assert any(b.use_connect for b in target.data.bones)
    select_pair(source, target)
    assert bpy.ops.mocap.retarget(plant_feet=False) == {"FINISHED"}
    action = target.animation_data.action
    assert action is not None and action["mocap_workbench"]["retarget"]["mapped_bones"] == 21
    mapping = retarget_addon.auto_bone_map(source, target)
    assert mapping["DEF-thigh.L"] == "LeftUpLeg" and mapping["DEF-spine"] == "Hips"
    frames = [1, 40, 75, 150]
    # the chest-to-collar offsets differ between the two bodies; every other bone points like the source's
    angles = direction_errors(source, target, mapping, frames, skip={"DEF-shoulder.L", "DEF-shoulder.R"})
    assert len(angles) >= 16 and angles.max() < 0.05
    # twist segments only twist: the elbow sits on the upper arm's line
    h = heads(target, frames)
    names = [b.name for b in target.pose.bones]
    up, mid, el = (h[:, names.index(n)] for n in ("DEF-upper_arm.L", "DEF-upper_arm.L.001", "DEF-forearm.L"))
    assert np.linalg.norm(np.cross(mid - up, el - up), axis=-1).max() < 1e-5
    # the hips travel like the source's, scaled by the leg-length ratio
    hips_t = h[:, names.index("DEF-spine")] @ np.array(target.matrix_world)[:3, :3].T
    hs = heads(source, frames)
    hips_s = hs[:, [b.name for b in source.pose.bones].index("Hips")] @ np.array(source.matrix_world)[:3, :3].T
    scale = action["mocap_workbench"]["retarget"]["scale"]
    assert f"root scale {scale:.3g}" in bpy.context.scene.mocap_workbench.retarget.last_report
    assert np.allclose(np.diff(hips_t, axis=0), float(scale) * np.diff(hips_s, axis=0), atol=2e-3)


def test_planting_and_extraction_on_the_rigify_rig():
    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    settings = bpy.context.scene.mocap_workbench
    settings.method, settings.target, settings.ratio = "OPTIMAL", "RATIO", 10.0
    assert bpy.ops.mocap.retarget(extract_keyframes=True) == {"FINISHED"}
    report = settings.retarget.last_report
    assert "Kept 15 of 150 frames" in report
    figures = target.animation_data.action["mocap_workbench"]["retarget"]
    assert figures["skating_after"] * 10 < figures["skating_before"]
    assert "foot skating " in report and "/s" in report.split("foot skating ")[1]  # a speed in the scene's units
    curves = armature.BoneCurves.of(animdata.object_channels(target).fcurves, {b.name for b in target.data.bones})
    assert {len(fc.keyframe_points) for fc in curves.by_channel.values()} == {15}


def test_bone_map_editor_presets_and_edited_maps(tmp_path):
    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    settings = bpy.context.scene.mocap_workbench.retarget
    assert bpy.ops.mocap.retarget_auto_map() == {"FINISHED"}
    rows = {row.target: row.source for row in settings.bone_map}
    assert list(rows) == [b.name for b in target.data.bones] and settings.bone_map_target == target.name
    assert rows["DEF-toe.R"] == "RightToeBase" and rows["DEF-breast.L"] == ""
    next(r for r in settings.bone_map if r.target == "DEF-toe.R").source = ""  # the user unmaps a bone
    path = tmp_path / "map.json"
    assert bpy.ops.mocap.retarget_save_map(filepath=str(path)) == {"FINISHED"}
    assert bpy.ops.mocap.retarget_clear_map() == {"FINISHED"} and not len(settings.bone_map)
    assert not bpy.ops.mocap.retarget_save_map.poll()
    assert bpy.ops.mocap.retarget_load_map(filepath=str(path)) == {"FINISHED"}
    edited = {row.target: row.source for row in settings.bone_map}
    assert edited == {**rows, "DEF-toe.R": ""}
    assert bpy.ops.mocap.retarget(plant_feet=False) == {"FINISHED"}
    q = [animdata.read_keys(fc)[:, 1] for fc in animdata.object_channels(target).fcurves
         if fc.data_path == 'pose.bones["DEF-toe.R"].rotation_quaternion']  # fmt: skip
    assert not q  # unmapped: not keyed (it keeps its own animation, none here)
    assert "20 of 39 bones mapped" in settings.last_report


def test_ui_is_registered():
    for cls in ("MOCAP_OT_retarget", "MOCAP_OT_retarget_auto_map", "MOCAP_OT_retarget_load_map",
                "MOCAP_OT_retarget_save_map", "MOCAP_OT_retarget_clear_map"):  # fmt: skip
        assert hasattr(bpy.types, cls), cls
    assert bpy.types.MOCAP_OT_retarget.bl_options == {"REGISTER", "UNDO", "PRESET"}
    assert hasattr(bpy.types, "MOCAP_UL_bone_map")
    panels = {p.__name__: p for p in bpy.types.Panel.__subclasses__() if p.__name__.startswith("MOCAP_PT_retarget")}
    assert panels["MOCAP_PT_retarget"].bl_space_type == "VIEW_3D" and panels["MOCAP_PT_retarget"].bl_category == "Mocap"
    assert panels["MOCAP_PT_retarget_bone_map"].bl_parent_id == "MOCAP_PT_retarget"
    draw_funcs = bpy.types.VIEW3D_MT_object_animation.draw._draw_funcs
    assert any(f.__module__.startswith(PACKAGE) for f in draw_funcs)
    assert hasattr(bpy.context.scene.mocap_workbench.retarget, "bone_map")


def test_poll_explains_what_is_missing():
    assert not bpy.ops.mocap.retarget.poll()
    assert "Make the target armature active" in operators.pair_poll_message(bpy.context)
    target = build_rigify_rig()
    select_pair(target, target)
    assert "Choose a source armature" in operators.pair_poll_message(bpy.context)
    other = build_rigify_rig("Other")
    select_pair(other, target)
    assert "'Other' has no action" in operators.pair_poll_message(bpy.context)
    assert not bpy.ops.mocap.retarget.poll() and bpy.ops.mocap.retarget_auto_map.poll()
    bpy.context.scene.mocap_workbench.retarget.source = other
    select_pair(target, target)
    assert "'Other' has no action" in operators.pair_poll_message(bpy.context)


class FakeLayout:
    """Records what a panel draws and checks every property and operator it names exists."""

    def __init__(self, calls):
        self.calls = calls
        self.use_property_split = self.use_property_decorate = self.enabled = self.active = False

    def _sub(self, *args, **kwargs):
        return FakeLayout(self.calls)

    row = column = box = _sub

    def label(self, text="", icon="NONE"):
        self.calls.append(("label", text))

    def separator(self):
        pass

    def prop(self, data, name, **kwargs):
        assert name in data.bl_rna.properties, name
        self.calls.append(("prop", name))

    def prop_search(self, data, name, search_data, search_name, **kwargs):
        assert name in data.bl_rna.properties and search_name in search_data.bl_rna.properties
        self.calls.append(("prop_search", name))

    def operator(self, idname, **kwargs):
        category, name = idname.split(".")
        assert hasattr(getattr(bpy.ops, category), name), idname
        self.calls.append(("operator", idname))
        return type("OperatorProperties", (), {})()  # the buttons' properties, set by the panel

    def menu(self, menu, **kwargs):
        assert hasattr(bpy.types, menu), menu
        self.calls.append(("menu", menu))

    def template_list(self, list_type, list_id, data, prop, active_data, active_prop, **kwargs):
        assert hasattr(bpy.types, list_type) and prop in data.bl_rna.properties
        assert active_prop in active_data.bl_rna.properties
        self.calls.append(("list", prop))


def test_panels_draw_everything_they_name():
    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    bpy.ops.mocap.retarget_auto_map()
    bpy.context.scene.mocap_workbench.retarget.root_scale = "RATIO"
    for name in ("MOCAP_PT_retarget", "MOCAP_PT_retarget_bone_map"):
        calls = []
        panel = getattr(bpy.types, name)
        panel.draw(type("Panel", (), {"layout": FakeLayout(calls)})(), bpy.context)
        assert calls, name
    assert ("list", "bone_map") in calls and ("operator", "mocap.retarget_save_map") in calls
    assert ("menu", "MOCAP_MT_bone_map_presets") in calls and (
        "operator",
        "mocap.retarget_bone_map_preset_add",
    ) in calls


def test_bone_map_list_filters_unmapped_rows():
    from types import SimpleNamespace

    source = walk_armature()
    target = build_rigify_rig()
    select_pair(source, target)
    bpy.ops.mocap.retarget_auto_map()
    settings = bpy.context.scene.mocap_workbench.retarget
    ui_list = bpy.types.MOCAP_UL_bone_map
    fake = SimpleNamespace(filter_name="", bitflag_filter_item=1 << 30)
    flags, order = ui_list.filter_items(fake, bpy.context, settings, "bone_map")
    assert len(flags) == 39 and all(flags) and order == []
    settings.show_unmapped = False
    flags, _ = ui_list.filter_items(fake, bpy.context, settings, "bone_map")
    assert sum(1 for f in flags if f) == 21
    fake.filter_name = "*thigh*"
    flags, _ = ui_list.filter_items(fake, bpy.context, settings, "bone_map")
    assert sum(1 for f in flags if f) == 2
    calls = []
    ui_list.draw_item(fake, bpy.context, FakeLayout(calls), settings, settings.bone_map[0], 0, settings, "", 0)
    assert calls == [("label", "DEF-spine"), ("prop_search", "source")]
