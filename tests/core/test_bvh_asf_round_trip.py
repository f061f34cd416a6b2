"""BVH → ASF/AMC → BVH gives back the BVH's skeleton: the bones the ASF layout added are taken away,
the root keeps its name, names come back unescaped; the joints' offsets and motion are the same."""

import numpy as np
import pytest

from core import synthetic
from core.io.asf_amc import from_asf_layout, read_asf, read_asf_amc, to_asf_layout
from core.io.bvh import read_bvh
from core.io.convert import asf_amc_to_bvh, bvh_to_asf_amc, load_motion, save_motion
from core.motion import Motion
from core.skeleton import Skeleton
from tests.conftest import shared_file


def same_motion(a: Motion, b: Motion, tol: float = 1e-9) -> None:
    sa, sb = a.skeleton, b.skeleton
    assert sa.names == sb.names and np.array_equal(sa.parents, sb.parents)
    size = sa.size()
    assert np.abs(sa.rest_translations - sb.rest_translations).max() <= tol * size
    ia, ib = np.argsort(sa.end_site_parents, kind="stable"), np.argsort(sb.end_site_parents, kind="stable")
    assert np.array_equal(sa.end_site_parents[ia], sb.end_site_parents[ib])
    assert np.abs(sa.end_site_offsets[ia] - sb.end_site_offsets[ib]).max() <= tol * size
    assert np.abs(a.world_positions() - b.world_positions()).max() <= tol * size
    assert a.n_frames == b.n_frames and a.fps == pytest.approx(b.fps)


@pytest.mark.parametrize(
    "path",
    ["cmu_bvh_cgspeed/05_06.bvh", "cmu_bvh_3dsmax/131_01.bvh", "bandai_namco_1/dataset-1_walk_normal_001.bvh",
     "mixamo/Walk-In-Circle.bvh", "iclone_cc/005_06.bvh"],
)  # fmt: skip
def test_real_captures_come_back_from_asf_amc(tmp_path, path):
    original = read_bvh(shared_file(path))
    bvh_to_asf_amc(shared_file(path), tmp_path / "x.asf", tmp_path / "x.amc")
    asf = read_asf(tmp_path / "x.asf")
    added = asf.meta["asf_origin"]["added"]  # what other readers see: a root called "root", the added bones
    assert asf.names[0] == "root" and len(asf.names) == original.skeleton.n_joints + len(added)
    assert all(n.endswith("_link") for n in added)
    back = asf_amc_to_bvh(tmp_path / "x.asf", tmp_path / "x.amc", tmp_path / "y.bvh", fps=original.fps)
    same_motion(back, original)
    same_motion(read_bvh(tmp_path / "y.bvh"), original)
    assert read_bvh(tmp_path / "y.bvh").skeleton.channels == original.skeleton.channels


def test_added_end_bones_and_escaped_names_come_back(tmp_path):
    walk = synthetic.walk(20)
    sk = walk.skeleton
    names = ["Bip01 Pelvis" if n == "Hips" else n for n in sk.names]
    parents = sk.parents
    # a second End Site on the hips (a joint with children): the ASF layout needs a "_end" bone for it
    ends_p = np.append(sk.end_site_parents, 0)
    ends_o = np.vstack((sk.end_site_offsets, [[0.0, -0.1, 0.05]]))
    skeleton = Skeleton(names, parents, sk.rest_translations, None, sk.channels, ends_p, ends_o)
    motion = Motion(skeleton, walk.translations, walk.rotations, walk.fps)
    shaped = to_asf_layout(motion)
    assert any(n.endswith("_end") for n in shaped.skeleton.names) and "Bip01%20Pelvis" not in shaped.skeleton.names
    files = save_motion(motion, tmp_path / "w.amc")
    assert "# Mocap Workbench root Bip01%20Pelvis" in files[0].read_text()
    back = load_motion(tmp_path / "w.amc")
    same_motion(back, motion)


def test_other_asf_files_are_read_as_they_are():
    cmu = read_asf_amc(shared_file("cmu_asf_amc/01.asf"), shared_file("cmu_asf_amc/01_01.amc"))
    assert "asf_origin" not in cmu.skeleton.meta and from_asf_layout(cmu) is cmu
    assert load_motion(shared_file("cmu_asf_amc/01_01.amc")).skeleton.names == cmu.skeleton.names


def test_notes_that_do_not_fit_are_ignored(tmp_path):
    walk = synthetic.walk(5)
    files = save_motion(walk, tmp_path / "w.amc")
    text = files[0].read_text().replace("# Mocap Workbench root Hips", "# Mocap Workbench root Spine")
    files[0].write_text(text)
    motion = load_motion(tmp_path / "w.amc")
    assert motion.skeleton.names[0] == "root" and "Spine" in motion.skeleton.names
