"""scripts/retarget.py on game rigs (--root-motion), rigs in other units, and inputs as users have them."""

import json

import numpy as np
import pytest

from core import synthetic
from core.io.bvh import read_bvh, write_bvh
from core.motion import Motion
from tests import rigs
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
