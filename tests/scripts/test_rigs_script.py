"""scripts/retarget.py on game rigs (--root-motion), rigs in other units, and inputs as users have them."""

import json
import subprocess
import sys

import numpy as np
import pytest

from core import synthetic
from core.io.bvh import read_bvh, write_bvh
from core.motion import Motion
from tests import rigs
from tests.conftest import ROOT
from tests.scripts.test_retarget_script import run


def test_root_motion_plain_python(tmp_path):
    walk = synthetic.turn(synthetic.walk(150), 30, 120, 90.0)
    write_bvh(walk, tmp_path / "walk.bvh")
    write_bvh(Motion.rest(rigs.build("unreal"), 2, 60.0), tmp_path / "ue.bvh")
    run(tmp_path / "walk.bvh", tmp_path / "ue.bvh", "-o", tmp_path / "plain.bvh", blender=False)
    run(tmp_path / "walk.bvh", tmp_path / "ue.bvh", "-o", tmp_path / "root.bvh", "--root-motion", blender=False)
    plain, root = read_bvh(tmp_path / "plain.bvh"), read_bvh(tmp_path / "root.bvh")
    sk = root.skeleton
    pelvis, top = sk.index("pelvis"), sk.index("root")
    assert np.abs(root.world_positions()[:, pelvis] - plain.world_positions()[:, pelvis]).max() < 1e-6
    path = root.world_positions()[:, top]
    assert np.abs(path[:, 1]).max() < 1e-6  # on the floor (Y-up file)
    assert np.linalg.norm(path[-1] - path[0]) > 1.5
    assert np.ptp(plain.world_positions()[:, top], axis=0).max() < 1e-9


PHYSICS_QUICK = ("--physics", "--no-balance", "--no-torque", "--no-momentum")


def test_physics_on_a_centimetre_file_is_in_metres_and_a_giant_is_a_warning(tmp_path):
    walk = synthetic.walk(90)
    write_bvh(walk, tmp_path / "walk.bvh")
    write_bvh(Motion.rest(rigs.build("unreal", scale=100.0), 2, 60.0), tmp_path / "ue_cm.bvh")
    proc = run(tmp_path / "walk.bvh", tmp_path / "ue_cm.bvh", "-o", tmp_path / "out.bvh", *PHYSICS_QUICK, blender=False)
    report = json.loads((tmp_path / "out.json").read_text())
    f = report["physics"]
    assert 1.4 < f["target_height_m"] < 2.0 and 1.4 < f["source_height_m"] < 2.0
    assert "target file read in centimetres" in proc.stderr and "not human-sized" not in proc.stderr
    write_bvh(Motion.rest(rigs.build("unreal", scale=3000.0), 2, 60.0), tmp_path / "giant.bvh")
    proc = run(tmp_path / "walk.bvh", tmp_path / "giant.bvh", "-o", tmp_path / "giant_out.bvh", *PHYSICS_QUICK,
               blender=False)  # fmt: skip
    assert proc.returncode == 0
    warning = [line for line in proc.stderr.splitlines() if "not human-sized" in line]
    assert warning and warning[0].startswith("warning: walk.bvh: target height measured as")


def test_physics_through_blender_reads_file_units(tmp_path):
    pytest.importorskip("bpy")
    write_bvh(synthetic.walk(90), tmp_path / "walk.bvh")
    write_bvh(Motion.rest(rigs.build("unreal", scale=100.0), 2, 60.0), tmp_path / "ue_cm.bvh")
    proc = run(tmp_path / "walk.bvh", tmp_path / "ue_cm.bvh", "-o", tmp_path / "out.blend", *PHYSICS_QUICK)
    f = json.loads((tmp_path / "out.json").read_text())["physics"]
    assert 1.4 < f["target_height_m"] < 2.0 and 1.4 < f["source_height_m"] < 2.0
    assert "target file read in centimetres" in proc.stderr


MAKE_FBX = """
import sys
import bpy
import addon_utils
bpy.ops.wm.read_homefile(use_empty=True)
addon_utils.enable("io_anim_bvh", default_set=True)
addon_utils.enable("io_scene_fbx", default_set=True)
bpy.ops.import_anim.bvh(filepath=sys.argv[1], update_scene_fps=True, update_scene_duration=True)
assert bpy.ops.export_scene.fbx(filepath=sys.argv[2], add_leaf_bones=False, bake_anim=True) == {"FINISHED"}
"""


@pytest.fixture(scope="module")
def fbx_walk(tmp_path_factory):
    """A walk as BVH and as the FBX Blender's exporter makes of it (centimetres, armature scaled 0.01)."""
    pytest.importorskip("bpy")
    folder = tmp_path_factory.mktemp("fbx")
    write_bvh(synthetic.walk(90), folder / "walk.bvh")
    subprocess.run([sys.executable, "-c", MAKE_FBX, folder / "walk.bvh", folder / "walk.fbx"], check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    write_bvh(Motion.rest(rigs.build("unreal"), 2, 60.0), folder / "ue.bvh")
    return folder


def test_fbx_source_and_target(fbx_walk, tmp_path):
    d = fbx_walk
    run(d / "walk.bvh", d / "ue.bvh", "-o", tmp_path / "from_bvh.blend")
    run(d / "walk.fbx", d / "ue.bvh", "-o", tmp_path / "from_fbx.blend")
    a, b = (json.loads((tmp_path / f"from_{k}.json").read_text()) for k in ("bvh", "fbx"))
    assert a["mapping"] == b["mapping"] and a["frames"] == b["frames"] == 90
    assert b["scale"] == pytest.approx(a["scale"], rel=1e-3)  # the FBX armature's 0.01 scale is no unit change
    fa, fb = a["figures"], b["figures"]
    assert fb["position_error_mean_h"] == pytest.approx(fa["position_error_mean_h"], abs=0.002)
    run(d / "walk.bvh", d / "walk.fbx", "-o", tmp_path / "onto_fbx.blend")
    report = json.loads((tmp_path / "onto_fbx.json").read_text())
    assert (
        report["mapped_bones"] == read_bvh(d / "walk.bvh").skeleton.n_joints
        and report["figures"]["position_error_unplanted_mean_h"] < 0.01  # the transfer: the same skeleton
        and report["figures"]["position_error_mean_h"] < 0.02  # planting puts the walk's floating heels down
    )


def test_fbx_without_blender_is_one_clear_error(fbx_walk, tmp_path):
    proc = run(fbx_walk / "walk.fbx", fbx_walk / "ue.bvh", "-o", tmp_path / "x.bvh", check=False, blender=False)
    assert proc.returncode == 1 and "needs Blender" in proc.stderr and "Traceback" not in proc.stderr


def test_convert_fbx_to_bvh(fbx_walk, tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "convert.py"), fbx_walk / "walk.fbx",
                           tmp_path / "walk.bvh"], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    walk, back = read_bvh(fbx_walk / "walk.bvh"), read_bvh(tmp_path / "walk.bvh")
    assert back.skeleton.names == walk.skeleton.names and back.n_frames == walk.n_frames
    assert np.abs(back.world_positions() - walk.world_positions()).max() < 0.005 * walk.skeleton.size()


def test_extract_keyframes_from_fbx(fbx_walk, tmp_path):
    script = ROOT / "scripts" / "extract_keyframes.py"
    proc = subprocess.run([sys.executable, str(script), fbx_walk / "walk.fbx", "-o", tmp_path / "walk.blend",
                           "--count", "6"], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "walk.json").read_text())
    # the hybrid: 6 keys per channel on a pose grid of 8 × 6 (plus bone jumps), fewer than the 90 frames
    assert report["frames"] == 90 and report["fps"] == 60 and 0 < len(report["keyframes"]) < 90
    assert report["params"]["keys_per_channel"] == 6
