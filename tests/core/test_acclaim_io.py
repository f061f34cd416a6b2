"""Core support for the Blender Acclaim importer/exporter: file selection, default frame rate,
world turns and scales, rest-frame changes, dof fitting and layout snapping."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import quaternion as quat
from core import synthetic
from core.io import MocapFormatError
from core.io.asf_amc import (
    asf_layout_problem,
    fit_dofs,
    read_amc,
    read_asf,
    read_asf_amc,
    to_asf_layout,
    write_asf_amc,
)
from core.io.convert import acclaim_selection, load_acclaim
from core.kinematics import end_site_positions, forward_kinematics
from core.motion import Motion, change_rest, rest_world_rotations, transform_world, with_rest_orientations
from tests.core.test_asf_amc import SMALL_AMC, SMALL_ASF, write


def positions(motion: Motion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos, rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    return pos, rot, end_site_positions(motion.skeleton, pos, rot)


# --- selection ---------------------------------------------------------------------------


def test_selection_rules(tmp_path):
    folder = tmp_path / "cmu"
    folder.mkdir()
    asf = write(folder, "07.asf", SMALL_ASF)
    a, b = write(folder, "07_01.amc", SMALL_AMC), write(folder, "07_02.amc", SMALL_AMC)
    assert acclaim_selection([b, asf, a]) == (asf, [b, a])
    assert acclaim_selection([a, b]) == (asf, [a, b])  # the skeleton found next to the motions
    assert acclaim_selection([asf]) == (asf, [])  # the skeleton alone
    assert acclaim_selection([a, a]) == (asf, [a])
    other = write(folder, "08.asf", SMALL_ASF)
    with pytest.raises(ValueError, match="select one skeleton"):
        acclaim_selection([asf, other, a])
    with pytest.raises(ValueError, match="not an Acclaim file"):
        acclaim_selection([a, folder / "notes.txt"])
    with pytest.raises(ValueError, match="no files"):
        acclaim_selection([])
    lone = tmp_path / "lone"
    lone.mkdir()
    with pytest.raises(FileNotFoundError):
        acclaim_selection([write(lone, "x.amc", SMALL_AMC)])
    # two motions whose skeletons differ: found by name, each its own
    write(folder, "08_01.amc", SMALL_AMC)
    with pytest.raises(ValueError, match="different skeletons"):
        acclaim_selection([a, folder / "08_01.amc"])


def test_load_acclaim_reads_everything_and_names_the_bad_file(tmp_path):
    asf = write(tmp_path, "s.asf", SMALL_ASF)
    good = write(tmp_path, "good.amc", SMALL_AMC)
    noted = write(tmp_path, "noted.amc", "# Mocap Workbench fps 30\n" + SMALL_AMC)
    takes = load_acclaim([asf, good, noted], default_fps=60)
    assert takes.asf == asf and takes.amcs == [good, noted]
    assert [m.fps for m in takes.motions] == [60, 30]  # the note wins over the default
    assert takes.skeleton.names == ("root", "upper", "lower")
    bad = write(tmp_path, "bad.amc", SMALL_AMC.replace("upper 90", "upper ninety"))
    with pytest.raises(MocapFormatError) as info:
        load_acclaim([asf, good, bad])
    assert info.value.path == str(bad) and info.value.line == 10 and "not a number" in info.value.problem


def test_read_amc_default_fps(tmp_path):
    sk = read_asf(write(tmp_path, "s.asf", SMALL_ASF))
    amc = write(tmp_path, "s.amc", SMALL_AMC)
    assert read_amc(amc, sk).fps == 120
    assert read_amc(amc, sk, default_fps=24).fps == 24
    assert read_amc(amc, sk, fps=50, default_fps=24).fps == 50


# --- world turns, rest frames ------------------------------------------------------------


def test_transform_world_turns_and_scales_every_position_and_orientation():
    m = synthetic.walk(25)
    r = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)  # Y-up to Z-up
    out = transform_world(m, r, 0.25)
    p0, w0, e0 = positions(m)
    p1, w1, e1 = positions(out)
    matrix = Rotation.from_quat(r[[1, 2, 3, 0]]).as_matrix()
    assert np.allclose(p1, 0.25 * p0 @ matrix.T) and np.allclose(e1, 0.25 * e0 @ matrix.T)
    assert np.allclose(np.abs(quat.dot(w1, quat.multiply(r, w0))), 1.0)
    assert np.allclose(matrix @ [0, 1, 0], [0, 0, 1])
    back = transform_world(out, quat.inverse(r), 4.0)
    assert np.allclose(positions(back)[0], p0)


def test_transform_world_scales_position_limits_only(tmp_path):
    m = read_asf_amc(write(tmp_path, "s.asf", SMALL_ASF), write(tmp_path, "s.amc", SMALL_AMC))
    sk = m.skeleton
    limits = list(sk.limits)
    limits[0] = ((-1.0, 1.0),) * 3 + ((-5.0, 5.0),) * 3
    m.skeleton.limits = tuple(limits)
    out = transform_world(m, None, 2.0).skeleton
    assert out.limits[0] == ((-2.0, 2.0),) * 3 + ((-5.0, 5.0),) * 3
    assert out.limits[1] == sk.limits[1] and out.meta == sk.meta


def test_with_rest_orientations_keeps_positions_and_sets_frames(tmp_path):
    m = read_asf_amc(write(tmp_path, "s.asf", SMALL_ASF), write(tmp_path, "s.amc", SMALL_AMC))
    rng = np.random.default_rng(3)
    frames = quat.normalize(rng.normal(size=(m.skeleton.n_joints, 4)))
    sk = with_rest_orientations(m.skeleton, frames)
    assert np.allclose(np.abs(quat.dot(rest_world_rotations(sk), frames)), 1.0)
    moved = change_rest(m, sk)
    a, b = positions(m), positions(moved)
    assert np.allclose(a[0], b[0]) and np.allclose(a[2], b[2])
    assert sk.limits is None or all(x is None for x in sk.limits)
    same = with_rest_orientations(m.skeleton, rest_world_rotations(m.skeleton))
    assert same.limits == m.skeleton.limits


# --- dofs and layout ---------------------------------------------------------------------


def test_fit_dofs_keeps_dofs_that_carry_the_motion(tmp_path):
    m = read_asf_amc(write(tmp_path, "s.asf", SMALL_ASF), write(tmp_path, "s.amc", SMALL_AMC))
    assert fit_dofs(m) is m


def test_fit_dofs_widens_a_hinge_bent_sideways_and_a_moved_joint(tmp_path):
    m = read_asf_amc(write(tmp_path, "s.asf", SMALL_ASF), write(tmp_path, "s.amc", SMALL_AMC))
    upper, lower = m.skeleton.index("upper"), m.skeleton.index("lower")
    m.rotations[:, upper] = quat.multiply(m.rotations[:, upper], quat.from_axis_angle(np.array([0, 0, 1.0]), 0.3))
    m.translations[1, lower] += [0.0, 0.1, 0.0]
    out = fit_dofs(m)
    assert out.skeleton.channels[upper] == ("Zrotation", "Yrotation", "Xrotation")
    assert out.skeleton.channels[lower][:3] == ("Xposition", "Yposition", "Zposition")
    assert out.skeleton.channels[lower][3:] == m.skeleton.channels[lower]
    assert out.skeleton.limits is None  # the only limited joints were widened
    write_asf_amc(out, tmp_path / "w.asf", tmp_path / "w.amc")
    back = read_asf_amc(tmp_path / "w.asf", tmp_path / "w.amc")
    assert np.allclose(positions(back)[0], positions(m)[0], atol=1e-7)
    assert np.allclose(positions(back)[2], positions(m)[2], atol=1e-7)


def test_to_asf_layout_snaps_near_offsets_within_tolerance(tmp_path):
    m = read_asf_amc(write(tmp_path, "s.asf", SMALL_ASF), write(tmp_path, "s.amc", SMALL_AMC))
    sk = m.skeleton
    noisy = sk.rest_translations.copy()
    noisy[1] += 3e-8  # ``upper`` no longer exactly at the root
    noisy[2] -= 2e-8
    m = Motion.rest(sk, 1)
    m.skeleton.rest_translations = noisy
    m.translations[:] = noisy
    assert asf_layout_problem(m.skeleton) is not None
    exact = to_asf_layout(m)
    assert any(n.endswith("_link") for n in exact.skeleton.names)
    snapped = to_asf_layout(m, tol=1e-6)
    assert snapped.skeleton.names == sk.names and asf_layout_problem(snapped.skeleton) is None
    assert np.abs(positions(snapped)[0] - positions(m)[0]).max() < 1e-7
    write_asf_amc(m, tmp_path / "n.asf", tmp_path / "n.amc", tol=1e-6)
    assert read_asf(tmp_path / "n.asf").names == sk.names
