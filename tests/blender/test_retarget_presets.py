"""Bone map presets in Blender's preset menu, and Retarget Batch, driven headless as a user drives them."""

from importlib import import_module
from pathlib import Path
from types import SimpleNamespace

import addon_utils
import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE
from tests.blender.test_jobs import Driven, event, key_snapshot_of, run_modal, stand_in_context
from tests.blender.test_retarget import select_pair
from tests.conftest import shared_file

bvh = import_module(PACKAGE + ".core.io.bvh")
presets = import_module(PACKAGE + ".core.retarget.presets")
mapping_mod = import_module(PACKAGE + ".core.retarget.mapping")
armature = import_module(PACKAGE + ".addon.common.armature")
bone_map_presets = import_module(PACKAGE + ".addon.retarget.bone_map_presets")
animdata = import_module(PACKAGE + ".addon.common.animdata")
retarget_action = import_module(PACKAGE + ".addon.retarget.retarget_action")
jobs = import_module(PACKAGE + ".addon.common.jobs")

SUBDIR = "mocap_workbench/bone_maps"


@pytest.fixture(scope="module")
def short_captures(tmp_path_factory):
    """Short copies of shared captures (the first frames), so each test stays fast."""
    folder = tmp_path_factory.mktemp("short")
    out = {}
    for relative, n_frames in (("mixamo/Walk-In-Circle.bvh", 40), ("cmu_bvh_3dsmax/131_01.bvh", 40),
                               ("cmu_bvh_cgspeed/02_01.bvh", 30), ("cmu_bvh_cgspeed/05_01.bvh", 24),
                               ("cmu_bvh_cgspeed/05_06.bvh", 20)):  # fmt: skip
        path = folder / Path(relative).name
        bvh.write_bvh(bvh.read_bvh(shared_file(relative)).frames(slice(0, n_frames)), path)
        out[Path(relative).stem] = path
    return out


def import_bvh(path):
    addon_utils.enable("io_anim_bvh", default_set=True)
    bpy.ops.import_anim.bvh(filepath=str(path), rotate_mode="QUATERNION")
    return bpy.context.active_object


def make_pair(source, target):
    select_pair(source, target)
    bpy.context.scene.mocap_workbench.retarget.source = source


def shipped(name):
    return str(bone_map_presets.SHIPPED / f"{name}.py")


def bone_map():
    settings = bpy.context.scene.mocap_workbench.retarget
    return {row.target: row.source for row in settings.bone_map if row.source}


# --- presets ----------------------------------------------------------------------------------


def test_menu_registered_and_every_convention_shipped():
    menu = bpy.types.MOCAP_MT_bone_map_presets
    assert menu.preset_subdir == SUBDIR and menu.preset_operator == "mocap.retarget_bone_map_preset"
    assert hasattr(bpy.types, "MOCAP_OT_retarget_bone_map_preset_add")
    assert str(bone_map_presets.SHIPPED) in [str(Path(p).resolve()) for p in bpy.utils.preset_paths(SUBDIR)]
    # The shipped files are exactly what CONVENTIONS generates (one source of truth).
    files = {p.name: p.read_text(encoding="utf-8") for p in bone_map_presets.SHIPPED.glob("*.py")}
    assert files == presets.shipped_presets(), "run scripts/make_bone_map_presets.py"
    conventions = {presets.read_preset(bone_map_presets.SHIPPED / name)["convention"] for name in files}
    assert conventions == set(mapping_mod.CONVENTIONS)
    for name in ("Mixamo", "Character_Creator", "Xsens_MVN", "Perception_Neuron", "Unreal_Mannequin",
                 "Unity_Humanoid", "Rigify", "VRM", "Daz_Genesis", "3ds_Max_Biped", "CMU_cgspeed"):  # fmt: skip
        assert name + ".py" in files


def test_mixamo_preset_maps_the_core_body_of_a_namespaced_rig(short_captures):
    target = import_bvh(short_captures["Walk-In-Circle"])  # mixamorig7:Hips ...
    source = import_bvh(short_captures["131_01"])  # CMU 3ds Max names: LeftHip is the thigh, LeftShoulder the arm
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("Mixamo")) == {"FINISHED"}
    got = bone_map()
    expected = {"Hips": "Hips", "Head": "Head", "LeftUpLeg": "LeftHip", "LeftLeg": "LeftKnee", "LeftFoot": "LeftAnkle",
                "RightUpLeg": "RightHip", "RightLeg": "RightKnee", "RightFoot": "RightAnkle",
                "LeftArm": "LeftShoulder", "LeftForeArm": "LeftElbow", "LeftHand": "LeftWrist",
                "RightArm": "RightShoulder", "RightForeArm": "RightElbow", "RightHand": "RightWrist"}  # fmt: skip
    for t, s in expected.items():
        assert got.get(f"mixamorig7:{t}") == s, t
    missing = mapping_mod.map_labels(got, armature.skeleton_from_armature(source),
                                     armature.skeleton_from_armature(target), allow_partial=True)[2]  # fmt: skip
    assert missing == []
    assert bpy.context.scene.mocap_workbench.retarget.bone_map_target == target.name
    assert bpy.types.MOCAP_MT_bone_map_presets.bl_label == "Mixamo"
    # A convention the rig does not follow maps nothing: an error, the map left as it was.
    with pytest.raises(RuntimeError, match="maps no bone"):
        bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("VRM"))
    assert bone_map() == got


def test_saved_preset_round_trips_across_namespaces_and_is_removed(short_captures):
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_auto_map() == {"FINISHED"}
    settings = bpy.context.scene.mocap_workbench.retarget
    settings.bone_map[0].source = "LowerBack"  # a hand edit the preset must keep (the hips follow LowerBack)
    saved = bone_map()
    assert bpy.ops.mocap.retarget_bone_map_preset_add(name="My Rig") == {"FINISHED"}
    path = bpy.utils.preset_find("My_Rig", SUBDIR)
    try:
        assert path and not bone_map_presets.is_shipped(path)
        assert presets.read_preset(path)["map"] == saved
        bpy.ops.mocap.retarget_clear_map()
        assert bone_map() == {}
        assert bpy.ops.mocap.retarget_bone_map_preset(filepath=path) == {"FINISHED"}
        assert bone_map() == saved
        # Another namespace on the target: the rows are found by name keys, not literal names.
        for bone in target.data.bones:
            bone.name = bone.name.replace("mixamorig7:", "mixamorig:")
        bpy.ops.mocap.retarget_clear_map()
        assert bpy.ops.mocap.retarget_bone_map_preset(filepath=path) == {"FINISHED"}
        assert bone_map() == {t.replace("mixamorig7:", "mixamorig:"): s for t, s in saved.items()}
        # The − button removes the preset last applied.
        assert bpy.types.MOCAP_MT_bone_map_presets.bl_label == "My Rig"
        assert bpy.ops.mocap.retarget_bone_map_preset_add(remove_active=True) == {"FINISHED"}
        assert not Path(path).exists() and bpy.utils.preset_find("My_Rig", SUBDIR) is None
    finally:
        if path and Path(path).exists():
            Path(path).unlink()


def test_presets_named_with_odd_characters_are_added_and_removed_by_the_minus_button(short_captures):
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_auto_map() == {"FINISHED"}
    folder = Path(bpy.utils.user_resource("SCRIPTS", path=f"presets/{SUBDIR}", create=True))
    before = set(folder.iterdir())
    for name in ("walk v2.final", "My/Rig: *ü*", "lowercase"):  # Blender title-cases lowercase file names
        assert bpy.ops.mocap.retarget_bone_map_preset_add(name=name) == {"FINISHED"}
        (made,) = set(folder.iterdir()) - before
        assert presets.read_preset(made)["map"] == bone_map()
        assert bpy.ops.mocap.retarget_bone_map_preset_add(remove_active=True) == {"FINISHED"}, name
        assert set(folder.iterdir()) == before
    for name in ("..", "?!", "***"):  # nothing left for a file name: refused, no hidden ".py" written
        with pytest.raises(RuntimeError, match="no letters or digits"):
            bpy.ops.mocap.retarget_bone_map_preset_add(name=name)
        assert set(folder.iterdir()) == before


def test_shipped_presets_are_never_removed(short_captures):
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("Mixamo")) == {"FINISHED"}
    assert bpy.ops.mocap.retarget_bone_map_preset_add(remove_active=True) == {"CANCELLED"}
    assert Path(shipped("Mixamo")).exists()


def test_json_file_is_the_same_document(short_captures, tmp_path):
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    bpy.ops.mocap.retarget_bone_map_preset(filepath=shipped("Mixamo"))
    saved = bone_map()
    path = tmp_path / "map.json"
    assert bpy.ops.mocap.retarget_save_map(filepath=str(path)) == {"FINISHED"}
    bpy.ops.mocap.retarget_clear_map()
    assert bpy.ops.mocap.retarget_load_map(filepath=str(path)) == {"FINISHED"}
    assert bone_map() == saved
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(RuntimeError, match="bad.json"):
        bpy.ops.mocap.retarget_load_map(filepath=str(tmp_path / "bad.json"))
    assert bone_map() == saved


# --- batch ------------------------------------------------------------------------------------


def cmu_sources(short_captures):
    """Three CMU captures (one bone naming): the first is the source armature, all three its actions."""
    return [import_bvh(short_captures[name]) for name in ("02_01", "05_01", "05_06")]


def data_state():
    return ({a.as_pointer() for a in bpy.data.actions}, {o.as_pointer() for o in bpy.data.objects},
            {a.as_pointer() for a in bpy.data.armatures}, bpy.context.scene.render.fps)  # fmt: skip


def test_batch_of_actions_makes_one_new_action_each_as_retarget_would(short_captures):
    sources = cmu_sources(short_captures)
    target = import_bvh(short_captures["Walk-In-Circle"])
    make_pair(sources[0], target)
    names = [o.animation_data.action.name for o in sources]
    original = target.animation_data.action
    assert bpy.ops.mocap.retarget_batch(batch_source="ACTIONS") == {"FINISHED"}
    made = {n: bpy.data.actions.get(f"{n}_{target.name}") for n in names}
    assert all(made.values()), made
    for name, src in zip(names, sources):
        keys = key_snapshot_of(made[name])
        assert any(path.startswith('pose.bones["mixamorig7:LeftUpLeg"]') for path, _ in keys)
        start, end = src.animation_data.action.frame_range
        limbs = [
            f'pose.bones["mixamorig7:{b}"]' for b in ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftArm", "LeftForeArm")
        ]
        mapped = [v for path, v in keys.items() if path[0].rsplit(".", 1)[0] in limbs]
        assert len(mapped) >= 20 and {len(v) // 2 for v in mapped} == {round(end - start) + 1}  # a key a frame
    assert original.use_fake_user and all(made[n].users for n in names)
    report = bpy.context.scene.mocap_workbench.retarget.last_report.splitlines()
    assert report[0].startswith(f"Retargeted 3 of 3 sources onto '{target.name}'")
    assert all(any(f"'{made[n].name}'" in row and "bones mapped" in row for row in report) for n in names)
    # The same keys as Retarget on that action alone (the first source's own action).
    batch_keys = key_snapshot_of(made[names[0]])
    made[names[0]].name = "batch result"
    assert bpy.ops.mocap.retarget() == {"FINISHED"}
    single = key_snapshot_of(bpy.data.actions[f"{names[0]}_{target.name}"])
    assert single.keys() == batch_keys.keys()
    assert all(np.allclose(single[k], batch_keys[k], atol=1e-5) for k in single)


def test_batch_takes_the_ticked_actions_or_the_named_ones(short_captures):
    sources = cmu_sources(short_captures)
    target = import_bvh(short_captures["Walk-In-Circle"])
    make_pair(sources[0], target)
    first, second, third = (o.animation_data.action for o in sources)
    second.mocap_batch = True
    before = set(bpy.data.actions)
    assert bpy.ops.mocap.retarget_batch() == {"FINISHED"}
    assert [a.name for a in set(bpy.data.actions) - before] == [f"{second.name}_{target.name}"]
    before = set(bpy.data.actions)
    assert bpy.ops.mocap.retarget_batch(actions=[{"name": first.name}, {"name": third.name}]) == {"FINISHED"}
    assert {a.name for a in set(bpy.data.actions) - before} == {
        f"{first.name}_{target.name}",
        f"{third.name}_{target.name}",
    }
    with pytest.raises(RuntimeError, match="No action called 'nothing'"):
        bpy.ops.mocap.retarget_batch(actions=[{"name": "nothing"}])


@pytest.mark.parametrize("kind", ["RETARGET", "BATCH"])
def test_a_bone_map_left_aside_for_another_armature_is_said(short_captures, kind):
    """A map made for the target before it was renamed is not used (it names another armature), and
    the report says so rather than mapping automatically in silence."""
    target = import_bvh(short_captures["Walk-In-Circle"])
    source = import_bvh(short_captures["02_01"])
    make_pair(source, target)
    assert bpy.ops.mocap.retarget_auto_map() == {"FINISHED"}
    bpy.context.scene.mocap_workbench.retarget.bone_map[0].source = "LowerBack"  # a hand edit
    target.name = "Hero"
    cls = bpy.types.MOCAP_OT_retarget if kind == "RETARGET" else bpy.types.MOCAP_OT_retarget_batch
    op = Driven(cls, **({"actions": [], "batch_source": "ACTIONS"} if kind == "BATCH" else {}))
    task = op.prepare(stand_in_context())
    assert jobs.drain(task.finish(bpy.context, task.work(lambda _x: None))) == {"FINISHED"}
    warnings = [text for level, text in op.reports if level == "WARNING"]
    assert any("bone map in the Retarget panel is for 'Walk-In-Circle', not 'Hero'" in w for w in warnings), warnings


def test_batch_never_takes_the_targets_own_action_for_the_sources(short_captures):
    source = import_bvh(short_captures["02_01"])  # CMU cgspeed names
    target = import_bvh(short_captures["131_01"])  # CMU 3ds Max names: Hips, Neck, Head… shared with the source
    other = import_bvh(short_captures["05_01"])  # another take of the source's skeleton: one of its actions
    make_pair(source, target)
    ui_list = bpy.types.MOCAP_UL_batch_actions
    fake = SimpleNamespace(filter_name="", bitflag_filter_item=1 << 30)
    flags, _ = ui_list.filter_items(fake, bpy.context, bpy.data, "actions")
    listed = {a.name for a, f in zip(bpy.data.actions, flags) if f}
    assert listed == {source.animation_data.action.name, other.animation_data.action.name}
    own = target.animation_data.action
    assert bpy.ops.mocap.retarget_batch(batch_source="ACTIONS") == {"FINISHED"}
    made = {a.name for a in bpy.data.actions if a.get("mocap_workbench")}
    assert made == {f"{n}_{target.name}" for n in listed} and f"{own.name}_{target.name}" not in made
    for obj in (source, other):  # the source's skeleton animated by no action: nothing to take
        bpy.data.actions.remove(obj.animation_data.action)
    for action in [a for a in bpy.data.actions if a.get("mocap_workbench")]:
        bpy.data.actions.remove(action)
    target.animation_data.action = own
    state = data_state()
    with pytest.raises(RuntimeError, match=f"No action animates the bones of '{source.name}'"):
        bpy.ops.mocap.retarget_batch(batch_source="ACTIONS")
    assert data_state() == state and target.animation_data.action == own


def test_batch_of_a_folder_names_the_actions_after_the_files_and_leaves_no_import(short_captures, tmp_path):
    folder = tmp_path / "takes"
    folder.mkdir()
    for name in ("02_01", "05_01"):
        (folder / f"{name}.bvh").write_bytes(short_captures[name].read_bytes())
    (folder / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    asf_amc = shared_file("cmu_asf_amc/01_01.amc")  # an Acclaim take, its first 30 frames, its .asf beside it
    lines = asf_amc.read_text().splitlines()
    (folder / "01_01.amc").write_text("\n".join(lines[: lines.index("31")]) + "\n")
    (folder / "01.asf").write_bytes((asf_amc.parent / "01.asf").read_bytes())
    (folder / "notes.txt").write_text("not a capture")
    addon_utils.enable("io_scene_fbx", default_set=True)  # an .fbx as an exporter writes it, then a fresh file
    import_bvh(short_captures["05_06"])
    assert bpy.ops.export_scene.fbx(filepath=str(folder / "05_06.fbx"), add_leaf_bones=False, bake_anim=True,
                                    use_selection=True) == {"FINISHED"}  # fmt: skip
    bpy.ops.wm.read_homefile(use_empty=True)
    target = import_bvh(short_captures["Walk-In-Circle"])
    bpy.context.view_layer.objects.active = target
    settings = bpy.context.scene.mocap_workbench.retarget  # a map made with a source of 3ds Max names
    retarget_action.fill_bone_map(
        settings.bone_map, target, {"mixamorig7:Hips": "Hips", "mixamorig7:LeftUpLeg": "LeftHip"}
    )
    settings.bone_map_target = target.name
    objects, fps = set(bpy.data.objects), bpy.context.scene.render.fps
    before, meshes = set(bpy.data.actions), set(bpy.data.meshes)
    assert bpy.ops.mocap.retarget_batch(batch_source="FILES", batch_folder=str(folder)) == {"FINISHED"}
    made = {a.name for a in set(bpy.data.actions) - before}
    assert made == {f"{n}_{target.name}" for n in ("02_01", "05_01", "01_01", "05_06")}
    for name in made:  # the files lack LeftHip: each mapped automatically, the core body and more
        assert len(key_snapshot_of(bpy.data.actions[name])) > 50
        assert bpy.data.actions[name]["mocap_workbench"]["retarget"]["mapped_bones"] > 20
    assert set(bpy.data.objects) == objects and set(bpy.data.meshes) == meshes
    assert bpy.context.scene.render.fps == fps
    assert bpy.context.view_layer.objects.active == target
    report = bpy.context.scene.mocap_workbench.retarget.last_report
    assert report.startswith(f"Retargeted 4 of 5 sources onto '{target.name}'")
    assert "failed: broken.bvh:" in report
    with pytest.raises(RuntimeError, match="No .bvh, .amc or .fbx files"):
        bpy.ops.mocap.retarget_batch(batch_source="FILES", batch_folder=str(tmp_path))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    actions = set(bpy.data.actions)
    with pytest.raises(RuntimeError, match="Nothing to retarget: broken.bvh: .*line"):
        bpy.ops.mocap.retarget_batch(batch_source="FILES", batch_folder=str(broken))
    assert set(bpy.data.actions) == actions and set(bpy.data.objects) == objects


def test_batch_progress_covers_every_source(short_captures, tmp_path):
    sources = cmu_sources(short_captures)
    target = import_bvh(short_captures["Walk-In-Circle"])
    make_pair(sources[0], target)
    op = Driven(bpy.types.MOCAP_OT_retarget_batch, batch_source="ACTIONS", actions=[])
    task = op.prepare(stand_in_context())
    assert task.label == "Retargeting 3 actions"
    fractions = []
    outcomes = task.work(fractions.append)
    assert all(b >= a for a, b in zip(fractions, fractions[1:])) and fractions[-1] == 1.0
    assert [min(f for f in fractions if f >= k / 3 - 1e-9) for k in (1, 2, 3)] == pytest.approx([1 / 3, 2 / 3, 1])
    assert len([f for f in fractions if 0 < f < 1]) > 6  # inside each source's retarget too
    assert jobs.drain(task.finish(bpy.context, outcomes)) == {"FINISHED"}


@pytest.mark.parametrize("kind", ["ACTIONS", "FILES"])
def test_cancelling_a_batch_leaves_the_file_as_it_was(short_captures, tmp_path, kind, monkeypatch):
    import threading

    sources = cmu_sources(short_captures)
    target = import_bvh(short_captures["Walk-In-Circle"])
    make_pair(sources[0], target)
    for name in ("02_01", "05_01"):
        (tmp_path / f"{name}.bvh").write_bytes(short_captures[name].read_bytes())
    before, keys = data_state(), {a.name: key_snapshot_of(a) for a in bpy.data.actions}
    go, work = threading.Event(), retarget_action.PreparedRetarget.work
    monkeypatch.setattr(retarget_action.PreparedRetarget, "work", lambda self, p=None: go.wait(60) and work(self, p))
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_retarget_batch, batch_source=kind, batch_folder=str(tmp_path), actions=[])
    reads = [event("TIMER")] * 3 if kind == "FILES" else []  # two files read, then the work starts
    results = run_modal(op, context, [*reads, event("TIMER"), event("ESC", "PRESS")])
    go.set()
    assert results[-1] == {"CANCELLED"} and op._job.wait(120) and op._job.cancelled
    assert data_state() == before
    assert {a.name: key_snapshot_of(a).keys() for a in bpy.data.actions} == {n: k.keys() for n, k in keys.items()}
    label = "Reading and retargeting 2 files" if kind == "FILES" else "Retargeting 3 actions"
    assert op.reports == [("WARNING", f"{label} cancelled: nothing changed")]


def test_a_folder_is_read_a_file_a_step_with_progress_and_esc_between_files(short_captures, tmp_path):
    """Blender's importers run on the main thread: one file a timer tick, the bar moving, Esc between
    files stops the reads (what the imports made removed) before any retarget starts."""
    sources = cmu_sources(short_captures)
    target = import_bvh(short_captures["Walk-In-Circle"])
    make_pair(sources[0], target)
    for name in ("02_01", "05_01", "Walk-In-Circle"):
        (tmp_path / f"{name}.bvh").write_bytes(short_captures[name].read_bytes())
    before, objects = data_state(), set(bpy.data.objects)
    context = stand_in_context()
    op = Driven(bpy.types.MOCAP_OT_retarget_batch, batch_source="FILES", batch_folder=str(tmp_path), actions=[])
    results = run_modal(op, context, [event("TIMER"), event("TIMER"), event("ESC", "PRESS")])
    assert results[-1] == {"CANCELLED"} and op._job.thread is None  # the retargets never started
    updates = [u[1] for u in context.window_manager.progress if u[0] == "update"]
    assert updates == [16, 33]  # two of three files read: the reads fill half the bar
    assert data_state() == before and set(bpy.data.objects) == objects
    assert op.reports == [("WARNING", "Reading and retargeting 3 files cancelled: nothing changed")]


# --- the script: several sources, a preset as --map -------------------------------------------


def test_script_takes_several_sources_and_a_shipped_preset(short_captures, tmp_path):
    import json

    cli_retarget = import_module(PACKAGE + ".cli.retarget")
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "05_06.bvh").write_bytes(short_captures["05_06"].read_bytes())
    out = tmp_path / "out"
    argv = ["retarget.py", str(short_captures["02_01"]), str(short_captures["05_01"]), str(folder),
            str(short_captures["Walk-In-Circle"]), "-o", str(out), "--format", "bvh", "--map", shipped("Mixamo")]  # fmt: skip
    assert cli_retarget.main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["processed"] == 3 and summary["failed"] == 0
    for name in ("02_01", "05_01", "05_06"):
        report = json.loads((out / f"{name}.json").read_text())
        assert report["mapping"]["mixamorig7:LeftUpLeg"] == "LeftUpLeg"
        assert report["mapping"]["mixamorig7:RightForeArm"] == "RightForeArm"
        assert bvh.read_bvh(out / f"{name}.bvh").skeleton.names[0] == "mixamorig7:Hips"
    twice = ["retarget.py", str(short_captures["02_01"]), str(short_captures["02_01"]), str(short_captures["Walk-In-Circle"]),
             "-o", str(tmp_path / "x")]  # fmt: skip
    arguments = import_module(PACKAGE + ".cli._arguments")
    assert arguments.status(lambda: cli_retarget.main(twice), "retarget.py") == 2  # one output for both


def test_script_sources_whose_outputs_would_collide_or_a_bad_map_write_nothing(short_captures, tmp_path):
    cli_retarget = import_module(PACKAGE + ".cli.retarget")
    arguments = import_module(PACKAGE + ".cli._arguments")
    for folder, name in (("a", "walk.bvh"), ("b", "WALK.bvh")):  # one file on Windows and macOS
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_bytes(short_captures["02_01"].read_bytes())
    target, out = str(short_captures["Walk-In-Circle"]), tmp_path / "out"
    argv = ["retarget.py", str(tmp_path / "a" / "walk.bvh"), str(tmp_path / "b" / "WALK.bvh"), target, "-o", str(out)]
    assert arguments.status(lambda: cli_retarget.main(argv), "retarget.py") == 2
    assert not out.exists()
    bad = tmp_path / "bad.json"
    bad.write_text("[" * 100_000 + "]" * 100_000)
    argv = ["retarget.py", str(short_captures["02_01"]), str(short_captures["05_01"]), target, "-o", str(out),
            "--map", str(bad)]  # fmt: skip
    assert arguments.status(lambda: cli_retarget.main(argv), "retarget.py") == 1
    assert not out.exists()  # the map is read before any output (or its folder) is made
    notes = tmp_path / "notes.txt"  # not a motion: a bad argument, before anything is done
    notes.write_text("not a capture")
    argv = ["retarget.py", str(short_captures["02_01"]), str(notes), target, "-o", str(out)]
    assert arguments.status(lambda: cli_retarget.main(argv), "retarget.py") == 2
    assert not out.exists()


def test_batch_panel_lists_the_source_actions_with_their_ticks(short_captures, tmp_path):
    from types import SimpleNamespace

    from tests.blender.test_retarget import FakeLayout

    sources = cmu_sources(short_captures)
    target = import_bvh(short_captures["Walk-In-Circle"])
    make_pair(sources[0], target)
    settings = bpy.context.scene.mocap_workbench.retarget
    panel = bpy.types.MOCAP_PT_retarget_batch
    for kind, shown in (("ACTIONS", ("list", "actions")), ("FILES", ("prop", "batch_folder"))):
        settings.batch_source = kind
        calls = []
        panel.draw(type("Panel", (), {"layout": FakeLayout(calls)})(), bpy.context)
        assert shown in calls and ("operator", "mocap.retarget_batch") in calls
    ui_list = bpy.types.MOCAP_UL_batch_actions
    fake = SimpleNamespace(filter_name="", bitflag_filter_item=1 << 30)
    flags, _ = ui_list.filter_items(fake, bpy.context, bpy.data, "actions")
    listed = {a.name for a, f in zip(bpy.data.actions, flags) if f}
    assert listed == {o.animation_data.action.name for o in sources}  # not the Mixamo rig's own action
    calls = []
    ui_list.draw_item(fake, bpy.context, FakeLayout(calls), bpy.data, sources[1].animation_data.action, 0, None, "", 0)
    assert calls == [("prop", "mocap_batch"), ("label", sources[1].animation_data.action.name)]
    menu = []  # Object › Animation: Retarget, then Retarget Batch
    draw = next(d for d in bpy.types.VIEW3D_MT_object_animation._dyn_ui_initialize() if "retarget" in d.__module__)
    draw(type("Menu", (), {"layout": FakeLayout(menu)})(), bpy.context)
    assert [c for c in menu if c[0] == "operator"] == [
        ("operator", "mocap.retarget"),
        ("operator", "mocap.retarget_batch"),
    ]
