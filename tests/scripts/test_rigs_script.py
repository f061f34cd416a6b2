"""scripts/retarget.py on game rigs (--root-motion), rigs in other units, and inputs as users have them."""

import numpy as np

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
