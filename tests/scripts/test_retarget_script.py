"""scripts/retarget.py run as a user runs it (a subprocess): plain Python, through Blender, batches."""

import json
import subprocess
import sys

import numpy as np
import pytest

from core import synthetic
from core.io.bvh import read_bvh, write_bvh
from core.motion import Motion
from tests.conftest import ROOT, blend_json, shared_file

SCRIPT = ROOT / "scripts" / "retarget.py"
# Plain Python without Blender, even where the bpy module is installed: hide it.
NO_BPY = "import runpy, sys; sys.modules['bpy'] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"


def run(*args, check=True, blender=True):
    prefix = [sys.executable, str(SCRIPT)] if blender else [sys.executable, "-c", NO_BPY, str(SCRIPT)]
    proc = subprocess.run([*prefix, *map(str, args)], capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(proc.stdout + proc.stderr)
    return proc


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A walk BVH (source) and a 1.4× humanoid BVH (target skeleton)."""
    folder = tmp_path_factory.mktemp("retarget_inputs")
    walk = synthetic.walk(120)
    write_bvh(walk, folder / "walk.bvh")
    write_bvh(Motion.rest(synthetic.humanoid(scale=1.4), 2, 60.0), folder / "tall.bvh")
    return folder, walk


def test_plain_python_bvh_to_bvh(files, tmp_path):
    folder, walk = files
    out = tmp_path / "walk_tall.bvh"
    run(folder / "walk.bvh", folder / "tall.bvh", "-o", out, "--save-map", tmp_path / "map.json", blender=False)
    result = read_bvh(out)
    assert result.skeleton.names == walk.skeleton.names and result.n_frames == 120 and result.fps == pytest.approx(60.0)
    hips = walk.skeleton.index("Hips")
    # the scaled root path; planting moves the pelvis only vertically and a little (the feet stood on
    # the floor in the target's flat stance, lowered where a planted foot is out of reach)
    moved = result.translations[:, hips] - 1.4 * walk.translations[:, hips]
    assert np.allclose(moved[:, [0, 2]], 0.0, atol=1e-5) and np.abs(moved[:, 1]).max() < 0.05
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["mapped_bones"] == 21 and report["scale"] == pytest.approx(1.4)
    figures = report["figures"]
    assert figures["skating_after"] * 10 < figures["skating_before"]
    assert figures["position_error_unplanted_mean_h"] < 1e-6
    preset = json.loads((tmp_path / "map.json").read_text())
    assert preset["map"]["LeftFoot"] == "LeftFoot"
    run(folder / "walk.bvh", folder / "tall.bvh", "-o", tmp_path / "again.bvh", "--map", tmp_path / "map.json",
        "--in-place", "--no-plant", blender=False)  # fmt: skip
    again = read_bvh(tmp_path / "again.bvh")
    assert np.ptp(again.translations[:, hips, 2]) < 0.05 < np.ptp(result.translations[:, hips, 2])


def test_plain_python_refuses_blend_output_clearly(files, tmp_path):
    folder, _ = files
    proc = run(folder / "walk.bvh", folder / "tall.bvh", "-o", tmp_path / "x.blend", check=False, blender=False)
    assert proc.returncode == 1 and "needs Blender" in proc.stderr


def test_batch_folder_survives_a_bad_file(files, tmp_path):
    folder, walk = files
    batch = tmp_path / "in"
    batch.mkdir()
    write_bvh(walk.frames(slice(0, 60)), batch / "a.bvh")
    write_bvh(walk.frames(slice(60, 120)), batch / "b.bvh")
    (batch / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0\n")
    proc = run(batch, folder / "tall.bvh", "-o", tmp_path / "out", "--format", "bvh", check=False, blender=False)
    assert proc.returncode == 1 and "broken.bvh, line 4" in proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["processed"] == 2 and summary["failed"] == 1
    assert read_bvh(tmp_path / "out" / "b.bvh").n_frames == 60


def blend_contents(path):
    """Armatures, their actions and key counts in a .blend, read by Blender in a subprocess."""
    return blend_json(
        path,
        "{o.name: [o.animation_data.action.name, "
        "len(o.animation_data.action.fcurves) if hasattr(o.animation_data.action, 'fcurves') else -1] "
        "for o in bpy.data.objects if o.type == 'ARMATURE' and o.animation_data and o.animation_data.action}",
    )


@pytest.mark.blender
def test_blender_bvh_to_blend_then_blend_target(files, tmp_path):
    pytest.importorskip("bpy")
    folder, _ = files
    out = tmp_path / "walk.blend"
    run(folder / "walk.bvh", folder / "tall.bvh", "-o", out, "--rotate-mode", "QUATERNION")
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["armature"] == "tall" and report["result_action"] == "walk_tall" and report["frames"] == 120
    assert report["figures"]["skating_after"] * 10 < report["figures"]["skating_before"]
    assert blend_contents(out)["tall"][0] == "walk_tall"
    # that .blend as the target (named armature), a real capture as the source, keyframes extracted
    source = shared_file("cmu_bvh_cgspeed/02_01.bvh")
    again = tmp_path / "again.blend"
    run(source, out, "--target-armature", "tall", "-o", again, "--extract-ratio", 0.1, "--report", tmp_path / "r.json")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["frames"] == 344 and report["mapped_bones"] == 21
    extraction = report["extraction"]  # the operator's defaults: the hybrid, 34 keys per channel, fitted Bezier
    assert extraction["method"] == "hybrid" and extraction["params"]["keys_per_channel"] == 34
    assert extraction["playback_error"]["position_mean"] == pytest.approx(
        extraction["error"]["position_mean"], rel=0.02
    )
    proc = run(source, out, "-o", tmp_path / "x.blend", check=False)
    assert proc.returncode == 1 and "armatures found; name one with --target-armature" in proc.stderr


@pytest.mark.blender
def test_blender_blend_source_to_bvh(files, tmp_path):
    pytest.importorskip("bpy")
    folder, walk = files
    run(folder / "walk.bvh", folder / "tall.bvh", "-o", tmp_path / "walk.blend")
    out = tmp_path / "back.bvh"
    run(tmp_path / "walk.blend", folder / "walk.bvh", "--source-armature", "tall", "-o", out, "--no-plant")
    back = read_bvh(out)  # the tall walk retargeted back onto the walk's skeleton (Blender's Z-up axes)
    assert back.n_frames == 120 and back.skeleton.n_joints == 21
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["scale"] == pytest.approx(1.0 / 1.4, rel=1e-4) and report["figures"]["direction_error_max_deg"] < 0.01


def test_physics_on_a_real_walk_plain_python(tmp_path):
    """--physics with the paper's setting: CMU 02_01 (60 kg) onto its skeleton 1.4× (90 kg, 1.99 m)."""
    source = shared_file("cmu_bvh_cgspeed/02_01.bvh")
    walk = read_bvh(source)
    tall = walk.skeleton.scaled(1.4)
    write_bvh(Motion.rest(tall, 2, walk.fps), tmp_path / "tall.bvh")
    out, plot = tmp_path / "walk_tall.bvh", tmp_path / "plots" / "walk_tall.png"
    proc = run(source, tmp_path / "tall.bvh", "-o", out, "--physics", "--target-mass", 90, "--target-height", 1.99,
               "--source-mass", 60, "--plot", plot, blender=False)  # fmt: skip
    assert "physics (90 kg, 1.99 m): ZMP inside" in proc.stdout
    report = json.loads(out.with_suffix(".json").read_text())
    physics = report["physics"]
    before, after = physics["before"], physics["after"]
    assert after["zmp_inside_share"] > before["zmp_inside_share"] + 0.2 and after["deviation"] < 0.02
    # the source measured on its own body: CMU's file units (1/0.45 inch, found from its size), not the target's
    assert physics["stretches"] == [[1, 344]] and physics["source_height_m"] == pytest.approx(1.99 / 1.4, rel=0.005)
    assert physics["balance"] and physics["torques"] and physics["momentum"] and physics["stiffness"] == 1.0
    assert any("frames 0 kept as retargeted" in n for n in report["notes"])
    assert read_bvh(out).n_frames == 344
    if report.get("physics_plot"):  # matplotlib available in this Python
        assert plot.read_bytes()[:4] == b"\x89PNG"


def test_physics_switches_and_no_matplotlib(files, tmp_path):
    folder, _ = files
    out = tmp_path / "walk.bvh"
    hide = NO_BPY.replace("sys.modules['bpy'] = None", "sys.modules['bpy'] = sys.modules['matplotlib'] = None")
    proc = subprocess.run(
        [sys.executable, "-c", hide, str(SCRIPT), str(folder / "walk.bvh"), str(folder / "tall.bvh"), "-o", str(out),
         "--physics", "--no-torque", "--no-momentum", "--stiffness", "3", "--body-model", "female",
         "--plot", str(tmp_path / "p.png")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "matplotlib is not installed" in proc.stderr and not (tmp_path / "p.png").exists()
    report = json.loads(out.with_suffix(".json").read_text())
    physics = report["physics"]
    assert physics["balance"] and not physics["torques"] and not physics["momentum"]
    assert physics["stiffness"] == 3.0 and physics["body_model"] == "female" and physics["target_height_measured"]
    assert any("matplotlib" in n for n in report["notes"])
    bad = run(folder / "walk.bvh", folder / "tall.bvh", "-o", out, "--physics", "--stiffness", "0", check=False,
              blender=False)  # fmt: skip
    assert bad.returncode == 2 and "argument --stiffness: must be greater than 0" in bad.stderr


def test_a_target_height_in_centimetres_is_an_argument_error(files, tmp_path):
    """``--target-height 180`` (centimetres meant; the option is in metres) exits 2 with one line naming the
    problem and writes nothing: before, a 180 m body was solved and written (every frame over a torque limit)."""
    folder, _ = files
    out = tmp_path / "walk.bvh"
    bad = run(folder / "walk.bvh", folder / "tall.bvh", "-o", out, "--physics", "--target-height", "180", check=False,
              blender=False)  # fmt: skip
    assert bad.returncode == 2, bad.stderr
    assert "--physics: target height 180 m is not a human stature" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert not out.exists() and not out.with_suffix(".json").exists()


@pytest.mark.blender
def test_physics_through_blender(files, tmp_path):
    pytest.importorskip("bpy")
    folder, _ = files
    out = tmp_path / "walk.blend"
    run(folder / "walk.bvh", folder / "tall.bvh", "-o", out, "--physics", "--target-mass", 80, "--plot",
        tmp_path / "walk.png")  # fmt: skip
    report = json.loads(out.with_suffix(".json").read_text())
    physics = report["physics"]
    assert physics["target_mass_kg"] == 80.0 and physics["target_height_measured"]
    assert physics["target_height_m"] == pytest.approx(
        1.4 * 1.7, rel=0.01
    )  # the humanoid's 1.7 units × 1.4, Unit Scale 1
    assert physics["after"]["zmp_inside_share"] >= physics["before"]["zmp_inside_share"]
    assert blend_contents(out)["tall"][0] == "walk_tall"
    if report.get("physics_plot"):
        assert (tmp_path / "walk.png").stat().st_size > 0


def test_a_map_missing_the_core_body_exits_1_unless_forced(files, tmp_path):
    folder, walk = files
    legs = {n: n for n in walk.skeleton.names if "Leg" in n or "Foot" in n or n == "Hips"}
    (tmp_path / "map_legs.json").write_text(json.dumps(legs))
    out = tmp_path / "legs.bvh"
    proc = run(folder / "walk.bvh", folder / "tall.bvh", "-o", out, "--map", tmp_path / "map_legs.json",
               check=False, blender=False)  # fmt: skip
    assert proc.returncode == 1 and not out.exists()
    message = proc.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "core body unmapped: spine, head, left upper arm, left forearm, left hand" in message
    assert message.endswith("(--force-partial retargets anyway)")
    run(folder / "walk.bvh", folder / "tall.bvh", "-o", out, "--map", tmp_path / "map_legs.json", "--force-partial",
        blender=False)  # fmt: skip
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["mapped_bones"] == len(legs) and any("partial map" in n for n in report["notes"])
    crossed = {**{n: n for n in walk.skeleton.names}, "LeftFoot": "RightFoot", "RightFoot": "LeftFoot"}
    (tmp_path / "map_crossed.json").write_text(json.dumps(crossed))
    proc = run(folder / "walk.bvh", folder / "tall.bvh", "-o", tmp_path / "x.bvh", "--map", tmp_path / "map_crossed.json",
               "--force-partial", check=False, blender=False)  # fmt: skip
    assert proc.returncode == 1 and "crosses sides or limbs: 'LeftFoot' (left foot) ← 'RightFoot'" in proc.stderr


def test_physics_onto_a_rig_of_legs_only_exits_2_naming_what_is_missing(files, tmp_path):
    """A target of pelvis and legs (retargeted with --force-partial): physics ran on its 1.33 m legs (0.92 m at
    scale 1) as if they were a body. Now the run stops before writing anything, one line naming what is missing;
    without --physics the same partial retarget still runs."""
    from tests.rigs import pruned

    folder, _ = files
    tall = read_bvh(folder / "tall.bvh")
    legs, keep = pruned(tall.skeleton, ["Spine"], tips=True)
    write_bvh(Motion(legs, tall.translations[:, keep], tall.rotations[:, keep], tall.fps), tmp_path / "legs.bvh")
    out = tmp_path / "out.bvh"
    proc = run(folder / "walk.bvh", tmp_path / "legs.bvh", "-o", out, "--physics", "--force-partial", check=False,
               blender=False)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = proc.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "--physics: target legs.bvh: physics needs a whole body and this skeleton has no trunk or head" in message
    assert not out.exists() and not out.with_suffix(".json").exists()
    run(folder / "walk.bvh", tmp_path / "legs.bvh", "-o", out, "--force-partial", blender=False)
    assert read_bvh(out).skeleton.names == legs.names


def test_an_asf_target_our_writer_made_keeps_its_own_bones(files, tmp_path):
    """An .asf target made by our writer from a BVH whose joints start away from their parent's bone end (the
    writer adds ``_link`` bones) is retargeted onto as that BVH's skeleton, in plain Python and through Blender:
    the output has the BVH's bone names, no ``_link`` or ``_end`` bones."""
    from core.io.convert import bvh_to_asf_amc

    folder, walk = files
    bandai = shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh")
    bvh_to_asf_amc(bandai, tmp_path / "bandai.asf", tmp_path / "bandai.amc")
    names = read_bvh(bandai).skeleton.names
    run(folder / "walk.bvh", tmp_path / "bandai.asf", "-o", tmp_path / "plain.bvh", blender=False)
    assert read_bvh(tmp_path / "plain.bvh").skeleton.names == names
    run(folder / "walk.bvh", tmp_path / "bandai.asf", "-o", tmp_path / "blender.bvh")
    assert read_bvh(tmp_path / "blender.bvh").skeleton.names == names
