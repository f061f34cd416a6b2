"""Retargeting: bone maps across conventions, rest-pose alignment, scaled root motion, planted feet."""

import json

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.contacts import foot_skating
from core.io.bvh import read_bvh
from core.kinematics import forward_kinematics
from core.limbs import standing_height
from core.motion import transform_world
from core.retarget import (
    CONVENTIONS,
    RetargetOptions,
    auto_map,
    copy_rotations,
    label_skeleton,
    load_preset,
    mapping_pairs,
    retarget,
    retarget_metrics,
    save_preset,
)
from core.retarget.mapping import MappingError
from core.retarget.metrics import direction_error
from core.retarget.pipeline import ground_height
from core.retarget.topology import topology_labels
from core.skeleton import Skeleton
from tests import rigs
from tests.conftest import shared_file

NO_PLANT = RetargetOptions(plant_feet=False)


@pytest.fixture(scope="module")
def walk():
    return synthetic.walk(180)


def anonymous(skeleton):
    """The same skeleton with names that say nothing."""
    return Skeleton([f"bone{i:02d}" for i in range(skeleton.n_joints)], skeleton.parents, skeleton.rest_translations,
                    skeleton.rest_rotations, end_site_parents=skeleton.end_site_parents,
                    end_site_offsets=skeleton.end_site_offsets)  # fmt: skip


def frame_steps(q):
    """(T-1,) angle turned from each frame to the next (radians)."""
    return quat.angle(quat.multiply(quat.inverse(q[:-1]), q[1:]))


def unplanted(result):
    """The result seen before planting (for rotation-transfer checks)."""
    return type(result)(result.unplanted, result.unplanted, result.mapping, result.pairs, result.scale,
                        result.alignment, result.up, result.root, result.shift)  # fmt: skip


@pytest.mark.parametrize("variant", [{}, {"rolls": True, "a_pose": 40, "z_up": True, "scale": 1.3}])
@pytest.mark.parametrize("convention", sorted(rigs.NAMES))
def test_every_convention_is_labelled_by_name(convention, variant):
    sk = rigs.build(convention, **variant)
    labels, found = label_skeleton(sk)
    assert found == convention
    assert {c: sk.names[j] for c, j in labels.items()} == rigs.canonical_names(convention)


def test_tables_cover_the_listed_conventions():
    assert set(CONVENTIONS) == set(rigs.NAMES)


@pytest.mark.parametrize("source", sorted(rigs.NAMES))
def test_auto_map_pairs_the_same_body_parts_across_conventions(source):
    src = rigs.build(source)
    names_s = rigs.canonical_names(source)
    for target in sorted(rigs.NAMES):
        names_t = rigs.canonical_names(target)
        expected = {names_t[c]: names_s[c] for c in names_t if c in names_s}
        if source == target:  # then every bone, extras included, pairs with its namesake
            expected = {n: n for n in src.names}
        assert auto_map(src, rigs.build(target, rolls=True, z_up=True)) == expected, (source, target)


@pytest.mark.parametrize("convention", ["cmu_cgspeed", "bandai_namco"])
@pytest.mark.parametrize("variant", [{}, {"rolls": True, "a_pose": 45, "z_up": True}])
def test_topology_fallback_without_names(convention, variant):
    sk = rigs.build(convention, **variant)
    labels = topology_labels(anonymous(sk))
    expected = {c: sk.index(n) for c, n in rigs.canonical_names(convention).items() if c.split(".")[0] not in
                ("finger_base", "index", "thumb")}  # fmt: skip
    assert labels == expected
    # and an automatic map between an anonymous rig and a named one follows it
    mapping = auto_map(rigs.build("mixamo"), anonymous(sk))
    assert mapping[f"bone{sk.index(rigs.canonical_names(convention)['foot.L']):02d}"] == "mixamorig:LeftFoot"


@pytest.mark.parametrize(
    "path, convention, count",
    [
        ("cmu_bvh_cgspeed/02_01.bvh", "cmu_cgspeed", 31),
        ("cmu_bvh_3dsmax/131_01.bvh", "cmu_3dsmax", 31),
        ("bandai_namco_1/dataset-1_walk_normal_001.bvh", "bandai_namco", 21),
    ],
)
def test_real_captures_are_labelled(path, convention, count):
    sk = read_bvh(shared_file(path)).skeleton
    labels, found = label_skeleton(sk)
    assert found == convention and len(labels) == count


def test_real_asf_is_labelled():
    from core.io.asf_amc import read_asf

    sk = read_asf(shared_file("cmu_asf_amc/01.asf"))
    labels, found = label_skeleton(sk)
    assert found == "cmu_asf" and sk.names[labels["hand.L"]] == "lwrist" and len(labels) == 31


def test_same_topology_other_names_is_exact():
    source = rigs.wiggle(rigs.build("cmu_cgspeed"), 90)
    target = rigs.build("cmu_3dsmax")
    result = retarget(source, target, options=NO_PLANT)
    assert len(result.mapping) == 31 and result.scale == pytest.approx(1.0)
    assert np.allclose(result.alignment, [1, 0, 0, 0])
    assert np.abs(result.motion.world_positions() - source.world_positions()).max() < 1e-9
    assert np.allclose(np.abs(quat.dot(result.motion.rotations, source.rotations)), 1.0)


def test_t_pose_to_a_pose_target_with_rolls_reproduces_bone_directions(walk):
    target = rigs.repose(walk.skeleton, a_pose=45, rolls=True, z_up=True)
    assert not np.allclose(target.rest_rotations, [1, 0, 0, 0])  # rolls: real Blender-like rest frames
    result = retarget(walk, target, options=NO_PLANT)
    assert np.allclose(np.abs(result.alignment), np.abs(quat.from_axis_angle([1, 0, 0], np.pi / 2)))
    source_pos = walk.world_positions()
    angles = direction_error(source_pos, walk.skeleton, unplanted(result))
    assert angles.shape[1] == 20 and angles.max() < 1e-6
    # every joint lands where the (aligned) source joint is: same bone lengths
    assert np.abs(result.motion.world_positions() - result.map_points(source_pos)).max() < 1e-9
    # hands (leaves mapped by their own tips) turn like the source's
    hand = target.index("LeftHand")
    hand_rot = forward_kinematics(target, result.motion.translations, result.motion.rotations)[1][:, hand]
    src_rot = forward_kinematics(walk.skeleton, walk.translations, walk.rotations)[1]
    src_rot = src_rot[:, walk.skeleton.index("LeftHand")]
    tip_t = quat.rotate(hand_rot, target.end_site_offsets[list(target.end_site_parents).index(hand)])
    tip_s = quat.rotate(result.alignment, quat.rotate(src_rot, [0.18, 0.0, 0.0]))
    assert np.allclose(tip_t, tip_s, atol=1e-9)


def test_tpose_arms_down_real_capture_directions_exact():
    source = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(0, 120))
    target = read_bvh(shared_file("cmu_bvh_3dsmax/131_01.bvh")).skeleton  # arms down in its rest pose
    result = retarget(source, target, options=NO_PLANT, target_up="y")
    angles = direction_error(source.world_positions(), source.skeleton, result)
    assert angles.shape[1] == 20 and angles.max() < 1e-6


def test_scaled_target_root_path_and_planted_feet(walk):
    target = synthetic.humanoid(scale=1.4)
    result = retarget(walk, target, options=RetargetOptions(blend=0.15))
    assert result.scale == pytest.approx(1.4)
    hips = walk.skeleton.index("Hips")
    assert np.allclose(result.unplanted.translations[:, hips], 1.4 * walk.translations[:, hips])
    # planting moves the pelvis only vertically, a little and smoothly: by one constant that stands the
    # feet (turned to the target's flat stance) on the floor, and down where a planted foot is out of reach
    moved = result.motion.translations[:, hips] - result.unplanted.translations[:, hips]
    assert np.allclose(moved[:, [0, 2]], 0.0)
    height = standing_height(target)
    assert moved[:, 1].max() < 0.005 * height and -moved[:, 1].min() < 0.03 * height
    assert np.abs(np.diff(moved[:, 1])).max() < 0.002 * height
    naive = copy_rotations(walk, target, result.mapping)
    contacts = result.contacts
    assert contacts is not None and contacts.flags.mean() > 0.3
    skating_naive = foot_skating(naive, contacts).total_rate
    skating = foot_skating(result.motion, contacts).total_rate
    assert skating * 10 <= skating_naive
    figures = retarget_metrics(walk, result)
    assert figures["skating_after"] == pytest.approx(skating)
    assert figures["contact_preservation_after"] > 0.95 > figures["contact_preservation_before"]
    # no knee pops: the planted legs turn smoothly
    knee = target.index("LeftLeg")
    assert frame_steps(result.motion.rotations[:, knee]).max() < 3 * frame_steps(walk.rotations[:, knee]).max() + 0.02


def test_chosen_ratio_in_place_and_floor(walk):
    target = synthetic.humanoid(scale=0.8)
    options = RetargetOptions(scale=0.5, in_place=True, on_floor=True, floor_level=0.25, plant_feet=False)
    result = retarget(walk, target, options=options)
    assert result.scale == 0.5
    hips = result.motion.world_positions()[:, target.index("Hips")]
    source_hips = walk.world_positions()[:, walk.skeleton.index("Hips")]
    travel = np.ptp(hips[:, [0, 2]], axis=0).max()
    assert np.ptp(source_hips[:, 2]) > 3.0 and travel < 0.1
    assert ground_height(result.motion, result.target_labels, result.up) == pytest.approx(0.25, abs=1e-9)


def test_unmapped_target_bones_keep_rest_and_in_between_bones_twist(walk):
    unreal = rigs.build("unreal", rolls=True)
    result = retarget(walk, unreal, options=NO_PLANT)
    rot = result.motion.rotations
    for name in ("root", "ik_foot_l", "upperarm_twist_01_l", "thigh_twist_01_r", "index_01_l"):
        assert np.allclose(np.abs(rot[:, unreal.index(name), 0]), 1.0), name
    # the walk has two spine bones: spine_02..04 lie between the mapped spine_01 and spine_05
    assert result.mapping["spine_01"] == "Spine" and result.mapping["spine_05"] == "Chest"
    assert "spine_02" not in result.mapping
    rest_dirs = forward_kinematics(unreal, unreal.rest_translations, quat.identity((unreal.n_joints,)))[1]
    for name in ("spine_02", "spine_03", "spine_04"):
        k = unreal.index(name)
        axis, _ = quat.to_axis_angle(rot[:, k])
        up = quat.rotate(quat.inverse(rest_dirs[k]), [0.0, 1.0, 0.0])  # the spine runs along +Y at rest
        twisting = quat.angle(rot[:, k]) > 1e-6
        assert twisting.any() and np.allclose(np.abs(axis[twisting] @ up), 1.0, atol=1e-6), name
    rigid = retarget(walk, unreal, options=RetargetOptions(plant_feet=False, distribute_twist=False))
    assert np.allclose(np.abs(rigid.motion.rotations[:, unreal.index("spine_03"), 0]), 1.0)
    for res in (result, rigid):  # twist does not move the mapped joints: same bone directions either way
        angles = direction_error(walk.world_positions(), walk.skeleton, unplanted(res))
        assert angles.max() < 5.0  # (the chest-to-collar offsets differ between the two layouts)
    assert np.allclose(result.motion.world_positions()[:, unreal.index("neck_01")],
                       rigid.motion.world_positions()[:, unreal.index("neck_01")])  # fmt: skip


def test_unmapped_source_bones_are_ignored_and_user_maps_are_honoured(walk):
    target = rigs.build("bandai_namco")
    legs = {n: s for n, s in auto_map(walk.skeleton, target).items() if "Leg" in n or n == "Hips"}
    with pytest.raises(MappingError, match="core body unmapped: spine, head, left foot, left upper arm"):
        retarget(walk, target, legs, options=NO_PLANT)
    result = retarget(walk, target, legs, options=RetargetOptions(plant_feet=False, allow_partial=True))
    assert result.mapping == legs
    moving = np.abs(result.motion.rotations[:, :, 0]).min(axis=0) < 1 - 1e-9
    assert {target.names[k] for k in np.flatnonzero(moving)} == set(legs)
    with pytest.raises(ValueError, match="source has no bone 'Tail'"):
        retarget(walk, target, {"Hips": "Tail"})
    with pytest.raises(ValueError, match="pairs no bones"):
        retarget(walk, target, {})


def test_presets_round_trip(tmp_path, walk):
    target = rigs.build("rigify", rolls=True, z_up=True)
    mapping = auto_map(walk.skeleton, target)
    mapping["DEF-breast.L"] = "Chest"
    path = tmp_path / "rigify.json"
    save_preset(path, mapping, source="walk", target="rig")
    data = json.loads(path.read_text())
    assert data["format"] == "mocap_workbench.bone_map" and data["source"] == "walk"
    assert load_preset(path) == mapping and list(load_preset(path)) == list(mapping)
    (tmp_path / "plain.json").write_text(json.dumps({"DEF-spine": "Hips"}))
    assert load_preset(tmp_path / "plain.json") == {"DEF-spine": "Hips"}
    tk, sj = mapping_pairs(load_preset(path), walk.skeleton, target)
    assert len(tk) == len(mapping)
    for bad in ("[1, 2]", '{"a": 3}', "not json"):
        (tmp_path / "bad.json").write_text(bad)
        with pytest.raises(ValueError, match="bad.json"):
            load_preset(tmp_path / "bad.json")


def test_cmu_to_bandai_real_skeleton():
    source = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh"))
    target = read_bvh(shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh")).skeleton  # folded rest pose
    result = retarget(source, target, target_up="y")
    figures = retarget_metrics(source, result)
    assert figures["mapped_bones"] == 21 and 5.0 < result.scale < 6.0
    assert figures["skating_after"] * 10 < figures["skating_before"]
    assert figures["position_error_mean_h"] < 0.12  # joints sit at other anatomical places in each rig
    limbs = direction_error(source.world_positions(), source.skeleton, unplanted(result))
    assert np.median(limbs) < 1e-6
    # its rest pose is not a standing pose: the up axis is not guessed from it
    default = retarget(source.frames(slice(0, 60)), target, options=NO_PLANT)
    assert np.allclose(default.alignment, [1, 0, 0, 0])


def test_a_capture_lying_down_throughout_is_named():
    """The walk laid on the floor (its root turned 90° about X on every frame, the rest pose still standing along
    +Y): its feet are beside its hips on every frame, so the poses read as standing along +Z and the retarget
    stands it up; nothing in the file tells it from a capture standing in a world turned against its rest pose,
    so a note names it. The walk itself, and the whole walk turned Z-up (rest pose with it), get no such note."""
    walk = synthetic.walk(120)
    lying = walk.copy()
    turn = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    lying.rotations[:, 0] = quat.multiply(turn, lying.rotations[:, 0])
    lying.translations[:, 0] = quat.rotate(turn, lying.translations[:, 0])
    note = "the source's poses stand along +Z but its rest pose along +Y"
    assert any(n.startswith(note) for n in retarget(lying, walk.skeleton).notes)
    for standing in (walk, transform_world(walk, turn)):
        assert not any("rest pose along" in n for n in retarget(standing, walk.skeleton).notes)
