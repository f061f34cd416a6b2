"""Poses that compare across rigs and search by pose (core/library), by hand and on synthetic rigs."""

import numpy as np
import pytest

from core import quaternion as quat
from core.library.catalogue import ClipEntry, describe_clip, read_index, summary_count
from core.library.poses import SEGMENT_NAMES, pose_directions, pose_distances, segment_joints
from core.library.search import PoseLibrary
from core.motion import transform_world
from core.retarget.mapping import label_skeleton
from core.synthetic import jump, walk


def directions(motion):
    labels, _ = label_skeleton(motion.skeleton)
    return pose_directions(motion, labels)


def test_poses_ignore_units_heading_and_place():
    m = walk(n_frames=40)
    base = directions(m)
    assert base.shape == (40, len(SEGMENT_NAMES), 3)
    assert np.allclose(np.linalg.norm(base, axis=2), 1.0)
    turned = transform_world(m, quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), 1.1), scale=100.0)
    assert np.allclose(directions(turned), base, atol=1e-9)


def test_distance_is_the_weighted_mean_angle():
    a = np.zeros((1, 2, 3))
    a[0, :, 0] = 1.0
    b = np.zeros((2, 2, 3))
    b[0, :, 0] = 1.0
    b[1, 0] = [0.0, 1.0, 0.0]  # first segment turned 90°, second unchanged
    b[1, 1] = [1.0, 0.0, 0.0]
    d = pose_distances(a, b)
    assert d.shape == (1, 2) and np.isclose(d[0, 0], 0.0) and np.isclose(d[0, 1], np.pi / 4)
    assert np.isclose(pose_distances(a, b, np.array([1.0, 0.0]))[0, 1], np.pi / 2)


def test_an_unlabelled_body_is_named():
    with pytest.raises(ValueError, match="thigh"):
        segment_joints({"hips": 0, "upper_leg.L": 1, "upper_leg.R": 2})


def test_search_ranks_the_same_motion_first_and_single_poses_by_their_nearest():
    walks = walk(n_frames=120)
    jumps = jump(n_frames=120)
    lib = PoseLibrary.build(["walk", "jump", "empty"], [directions(walks)[::10], directions(jumps)[::10], None])
    assert lib.names == ["walk", "jump"]  # a clip without poses is left out
    assert lib.rank(directions(walks)[5::10])[0][0] == "walk"
    assert lib.rank(directions(jumps)[5::10])[0][0] == "jump"
    one = directions(jumps)[[65]]
    ranked = lib.rank(one, single_pose=True)
    expected = pose_distances(one, directions(jumps)[::10]).min()
    assert ranked[0][0] == "jump" and np.isclose(ranked[0][1], expected, atol=1e-3)  # float32 library


def test_entries_round_trip_through_json_lines(tmp_path):
    m = walk(n_frames=90)
    entry = describe_clip(m, "walk.bvh")
    assert len(entry.keyframes) == summary_count(m) and entry.poses is not None
    path = tmp_path / "index.jsonl"
    path.write_text(entry.line() + "\n\n" + entry.line() + "\n")
    back = read_index(path)
    assert len(back) == 2 and back[0] == entry
    path.write_text(entry.line() + "\n{}\n")
    with pytest.raises(ValueError, match="line 2"):
        read_index(path)
    assert isinstance(ClipEntry.parse(entry.line()).pose_array(), np.ndarray)


@pytest.mark.parametrize("single", [False, True])
def test_the_fast_top_ranking_is_the_exhaustive_one(single):
    rng = np.random.default_rng(3)
    clips = []
    for _ in range(300):
        p = rng.normal(size=(int(rng.integers(1, 9)), 10, 3))
        clips.append(p / np.linalg.norm(p, axis=2, keepdims=True))
    lib = PoseLibrary.build([f"c{i}" for i in range(300)], clips)
    query = clips[17][:3] + rng.normal(scale=0.05, size=clips[17][:3].shape)
    query /= np.linalg.norm(query, axis=2, keepdims=True)
    query = query[:1] if single else query
    everything = lib.rank(query, single_pose=single)
    fast = lib.rank(query, single_pose=single, top=10)
    assert [n for n, _ in fast] == [n for n, _ in everything[:10]]
    assert np.allclose([s for _, s in fast], [s for _, s in everything[:10]])
    assert fast[0][0] == "c17"


def test_the_same_take_on_two_rigs_finds_each_other_first():
    """CMU 05_06 (31 joints, 120 fps) and Character Creator 005_06 (100 joints, 60 fps) are one take: each
    is the other's best answer among the shared captures of other takes."""
    from core.io.convert import load_motion
    from tests.conftest import SHARED_MOCAP, shared_file

    pair = [shared_file("cmu_bvh_cgspeed/05_06.bvh"), shared_file("iclone_cc/005_06.bvh")]
    others = [p for p in sorted(SHARED_MOCAP.glob("*/*.bvh")) if p not in pair]
    entries = {str(p): describe_clip(load_motion(p), str(p)) for p in [*pair, *others]}
    assert all(entries[str(p)].poses is not None for p in pair)
    for query, answer in ((pair[0], pair[1]), (pair[1], pair[0])):
        names = [n for n in entries if n != str(query)]
        lib = PoseLibrary.build(names, [entries[n].pose_array() for n in names])
        assert lib.rank(entries[str(query)].pose_array(), top=3)[0][0] == str(answer)
