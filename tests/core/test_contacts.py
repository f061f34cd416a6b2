"""Contacts: joint finding across naming conventions, up axis, detection, debounce, skating metric."""

from dataclasses import replace

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.contacts import (
    contact_spans,
    debounce,
    detect_contacts,
    detect_hand_contacts,
    foot_skating,
    hysteresis,
    span_anchors,
)
from core.io.bvh import read_bvh
from core.limbs import detect_up, find_feet, find_hands, limb_chain, split_side, standing_height
from core.motion import Motion
from core.skeleton import Skeleton, rest_positions
from tests.conftest import shared_file

# Left-side names per convention for: thigh, shin, foot, toe, collar, upper arm, forearm, hand.
ROLES = ("UpLeg", "Leg", "Foot", "ToeBase", "Shoulder", "Arm", "ForeArm", "Hand")
CONVENTIONS = {
    "cmu_cgspeed": ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand"),
    "cmu_3dsmax": ("LeftHip", "LeftKnee", "LeftAnkle", "LeftToe", "LeftCollar", "LeftShoulder", "LeftElbow", "LeftWrist"),
    "cmu_asf": ("lfemur", "ltibia", "lfoot", "ltoes", "lclavicle", "lhumerus", "lradius", "lwrist"),
    "bandai": ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L", "Shoulder_L", "UpperArm_L", "LowerArm_L", "Hand_L"),
    "mixamo": tuple(f"mixamorig:Left{r}" for r in ROLES),
    "rigify": ("DEF-thigh.L", "DEF-shin.L", "DEF-foot.L", "DEF-toe.L", "DEF-shoulder.L", "DEF-upper_arm.L", "DEF-forearm.L", "DEF-hand.L"),
    "unreal": ("thigh_l", "calf_l", "foot_l", "ball_l", "clavicle_l", "upperarm_l", "lowerarm_l", "hand_l"),
    "biped": tuple(f"Bip01 L {r}" for r in ("Thigh", "Calf", "Foot", "Toe0", "Clavicle", "UpperArm", "Forearm", "Hand")),
}  # fmt: skip


def right_side(name):
    swaps = [("Left", "Right"), ("_L", "_R"), (".L", ".R"), ("_l", "_r"), (" L ", " R ")]
    for a, b in swaps:
        if a in name:
            return name.replace(a, b)
    return "r" + name[1:]  # CMU ASF: lfoot → rfoot


def renamed(convention):
    """The procedural humanoid with its limb joints renamed to a convention (others get neutral names)."""
    sk = synthetic.humanoid()
    names = {f"Left{r}": n for r, n in zip(ROLES, CONVENTIONS[convention])}
    names |= {f"Right{r}": right_side(n) for r, n in zip(ROLES, CONVENTIONS[convention])}
    new = [names.get(n, f"body{i}") for i, n in enumerate(sk.names)]
    return Skeleton(
        new,
        sk.parents,
        sk.rest_translations,
        end_site_parents=sk.end_site_parents,
        end_site_offsets=sk.end_site_offsets,
    )


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_find_feet_hands_and_leg_chains_by_name(convention):
    sk = renamed(convention)
    left = CONVENTIONS[convention]
    feet = find_feet(sk)
    assert [sk.names[j] for j in feet["L"]] == [left[2], left[3]]
    assert [sk.names[j] for j in feet["R"]] == [right_side(left[2]), right_side(left[3])]
    assert sk.names[find_hands(sk)["L"]] == left[7]
    assert [sk.names[j] for j in limb_chain(sk, feet["L"][0])] == list(left[:3])
    assert [sk.names[j] for j in limb_chain(sk, find_hands(sk)["R"])] == [right_side(n) for n in left[5:8]]


def test_split_side_examples():
    assert split_side("mixamorig:RightToeBase") == ("R", "toebase")
    assert split_side("DEF-shin.L.001") == ("L", "shin")
    assert split_side("lowerback") == (None, "lowerback")
    assert split_side("LHipJoint") == (None, "lhipjoint")
    assert split_side("ik_foot_l") == ("L", "ikfoot")  # Unreal's IK bones are not feet


def test_limb_chain_skips_twist_segments():
    names = ["root", "DEF-thigh.L", "DEF-thigh.L.001", "DEF-shin.L", "DEF-shin.L.001", "DEF-foot.L"]
    sk = Skeleton(names, [-1, 0, 1, 2, 3, 4], np.tile([0.0, -0.2, 0.0], (6, 1)))
    assert limb_chain(sk, 5) == (1, 3, 5)


def test_topology_fallback_finds_the_two_lowest_leaf_chains():
    sk = synthetic.humanoid()
    anonymous = Skeleton([f"j{i}" for i in range(sk.n_joints)], sk.parents, sk.rest_translations)
    feet = find_feet(anonymous)
    assert sorted(feet.values()) == sorted(
        [(sk.index("LeftFoot"), sk.index("LeftToeBase")), (sk.index("RightFoot"), sk.index("RightToeBase"))]
    )


def z_up(motion):
    """The motion turned so its Y-up becomes Blender's Z-up (+90° about X on the root)."""
    q = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)
    out = motion.copy()
    out.translations[:, 0] = quat.rotate(q, motion.translations[:, 0])
    out.rotations[:, 0] = quat.multiply(q, motion.rotations[:, 0])
    return out


def test_detect_up():
    walk = synthetic.walk(60)
    assert np.array_equal(detect_up(walk.skeleton), [0, 1, 0])
    assert np.array_equal(detect_up(walk.skeleton, walk.world_positions()), [0, 1, 0])
    assert np.array_equal(detect_up(walk.skeleton, z_up(walk).world_positions()), [0, 0, 1])
    sk = walk.skeleton
    anonymous = Skeleton([f"j{i}" for i in range(sk.n_joints)], sk.parents, sk.rest_translations)
    assert np.array_equal(detect_up(anonymous, z_up(walk).world_positions()), [0, 0, 1])
    upside_down = -walk.world_positions()
    assert np.array_equal(detect_up(walk.skeleton, upside_down), [0, -1, 0])


def test_standing_height_upright_and_folded():
    """Upright rest pose: its extent along up; folded (the body lying along X, as Bandai's): the
    foot → head chain plus de Leva's ankle height, close to the upright figure."""
    sk = synthetic.humanoid()
    up = np.array([0.0, 1.0, 0.0])
    assert standing_height(sk) == pytest.approx(np.ptp(rest_positions(sk, include_end_sites=True) @ up))
    rest = sk.rest_rotations.copy()
    rest[0] = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    folded = replace(sk, rest_rotations=rest)
    assert standing_height(folded, up) == pytest.approx(standing_height(sk, up), rel=0.05)
    assert standing_height(sk.scaled(2.0), up) == pytest.approx(2 * standing_height(sk, up))
    foot = sk.index("LeftFoot")
    assert sk.path_to_root(foot)[0] == foot and sk.path_to_root(foot)[-1] == 0
    assert sk.common_ancestor(foot, sk.index("RightFoot")) == sk.parents[sk.index("LeftUpLeg")]


def test_hysteresis_and_debounce():
    enter = np.array([0, 1, 0, 0, 0, 0, 1, 0, 0], dtype=bool)
    leave = np.array([0, 0, 0, 1, 0, 0, 0, 0, 1], dtype=bool)
    assert hysteresis(enter, leave).astype(int).tolist() == [0, 1, 1, 0, 0, 0, 1, 1, 0]
    assert hysteresis(enter[:, None], leave[:, None])[:, 0].tolist() == hysteresis(enter, leave).tolist()
    flags = np.array([1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1], dtype=bool)
    # the one-frame gap is filled; the lone contact at 10 is dropped; the 3-frame flight stays
    assert debounce(flags, min_contact=2, min_flight=2).astype(int).tolist() == [1] * 7 + [0] * 6 + [1] * 3
    assert contact_spans(flags).tolist() == [[0, 3], [4, 7], [10, 11], [13, 16]]


def test_span_anchors_are_span_medians():
    pos = np.arange(30.0).reshape(10, 3)
    flags = np.array([0, 1, 1, 1, 0, 0, 1, 1, 0, 0], dtype=bool)
    anchors = span_anchors(pos, flags)
    assert np.isnan(anchors[~flags]).all()
    assert np.allclose(anchors[1:4], pos[2]) and np.allclose(anchors[6:8], 0.5 * (pos[6] + pos[7]))


def walk_phase(motion, stride_hz=0.9):
    return 2 * np.pi * stride_hz * np.arange(motion.n_frames) / motion.fps


def test_contacts_on_the_procedural_walk_follow_the_gait():
    """In core.synthetic.walk the left thigh angle is −0.45·sin φ, so the left foot moves
    backwards under the body (support) while cos φ < 0 and the right one while cos φ > 0."""
    walk = synthetic.walk()
    c = detect_contacts(walk)
    assert [walk.skeleton.names[j] for j in c.joints] == ["LeftFoot", "RightFoot"]
    assert np.array_equal(c.up, [0, 1, 0])
    phase = walk_phase(walk)
    left, right = c.flags[:, 0], c.flags[:, 1]
    assert np.all((c.share > 0.35) & (c.share < 0.65))
    assert (np.cos(phase[left]) < 0).mean() > 0.85 and (np.cos(phase[right]) > 0).mean() > 0.85
    mean_phase = [np.angle(np.exp(1j * phase[f]).mean()) for f in (left, right)]
    assert abs(abs(np.angle(np.exp(1j * (mean_phase[1] - mean_phase[0])))) - np.pi) < 0.4
    assert (~left & ~right).mean() < 0.05  # a walk has no flight phase
    starts = np.sort(np.concatenate([c.spans(i)[:, 0] for i in range(2)]))
    side = np.array([0 if s in c.spans(0)[:, 0] else 1 for s in starts])
    assert np.all(np.diff(side) != 0)  # feet alternate
    for i in range(2):
        for start, stop in c.spans(i):
            assert np.allclose(c.anchors[start:stop, i], np.median(walk.world_positions()[start:stop, c.joints[i]], 0))
    assert np.isnan(c.anchors[~c.flags]).all()


def test_contacts_do_not_depend_on_the_up_axis_or_units():
    walk = synthetic.walk()
    c = detect_contacts(walk)
    zc = detect_contacts(z_up(walk))
    assert np.array_equal(zc.up, [0, 0, 1]) and np.array_equal(zc.flags, c.flags)
    assert np.array_equal(detect_contacts(z_up(walk), up="z").flags, c.flags)
    big = Motion(synthetic.humanoid(100.0), walk.translations * 100.0, walk.rotations, walk.fps)
    assert np.array_equal(detect_contacts(big).flags, c.flags)


def test_jump_has_a_flight_phase():
    jump = synthetic.jump()
    c = detect_contacts(jump)
    flight = ~c.flags.any(axis=1)
    assert 0.1 < flight.mean() < 0.4
    hips = jump.world_positions()[:, 0, 1]
    assert hips[flight].mean() > hips[~flight].mean()


def test_contacts_need_feet_or_explicit_joints():
    sk = Skeleton(["a", "b", "c"], [-1, 0, 1], [[0, 1, 0], [0, -0.5, 0], [0, -0.5, 0]])
    m = Motion.rest(sk, 20)
    with pytest.raises(ValueError, match="joints="):
        detect_contacts(m)
    assert detect_contacts(m, joints=[2], up="y").flags.all()  # standing still on the floor


def test_hand_contacts_run():
    c = detect_hand_contacts(synthetic.walk(60))
    assert c.flags.shape == (60, 2) and not c.flags.any()  # swinging hands never touch the floor


def test_foot_skating_measures_sliding_in_contact():
    walk = synthetic.walk(120)
    flags = np.zeros((120, 1), dtype=bool)
    flags[20:80] = True
    m = walk.copy()
    foot = m.skeleton.index("LeftFoot")
    m.translations[:] = m.skeleton.rest_translations
    m.rotations[:] = quat.identity()
    m.translations[:, 0, 0] += 0.5 * np.arange(120) / m.fps  # the whole body slides at 0.5 units/s along X
    m.translations[:, 0, 1] += 0.01 * np.sin(np.arange(120))  # and bobs vertically
    s = foot_skating(m, flags, [foot], up="y")
    assert np.isclose(s.rate[0], 0.5) and np.isclose(s.total_distance, 0.5 * 59 / m.fps)
    assert np.isclose(foot_skating(m, flags, [foot]).rate[0], 0.5)  # up detected: Y
    assert foot_skating(m, flags, [foot], horizontal=False).rate[0] > 0.5  # 3-D distance counts the bobbing too


def read_cmu_walk(name):
    return read_bvh(shared_file(f"cmu_bvh_cgspeed/{name}.bvh"))


@pytest.mark.parametrize("name", ["02_01", "05_01"])
def test_contacts_on_a_real_cmu_walk(name):
    m = read_cmu_walk(name)
    c = detect_contacts(m)
    assert [m.skeleton.names[j] for j in c.joints] == ["LeftFoot", "RightFoot"]
    assert np.array_equal(c.up, [0, 1, 0])
    low = 0.5 if name == "05_01" else 0.45  # 02_01 is 2.9 s long: the first and last steps are cut
    assert np.all((c.share >= low) & (c.share <= 0.7)), c.share
    assert (~c.flags.any(axis=1)).mean() < 0.05
    # steps alternate (the capture starts in double support, so ignore its first 0.25 s)
    starts = sorted((s, i) for i in range(2) for s in c.spans(i)[:, 0] if s > 0.25 * m.fps)
    assert len(starts) >= 3 and all(a[1] != b[1] for a, b in zip(starts, starts[1:]))


def test_other_conventions_in_real_files():
    m = read_bvh(shared_file("cmu_bvh_3dsmax/131_01.bvh"))
    assert {m.skeleton.names[f] for f, _ in find_feet(m.skeleton).values()} == {"LeftAnkle", "RightAnkle"}
    assert {m.skeleton.names[h] for h in find_hands(m.skeleton).values()} == {"LeftWrist", "RightWrist"}
    sk = m.skeleton
    anonymous = Skeleton([f"j{i}" for i in range(sk.n_joints)], sk.parents, sk.rest_translations)
    assert {sk.names[f] for f, _ in find_feet(anonymous).values()} == {"LeftAnkle", "RightAnkle"}
    assert np.array_equal(detect_up(anonymous, m.world_positions()[::50]), [0, 1, 0])
    b = read_bvh(shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh"))
    c = detect_contacts(b)
    assert [b.skeleton.names[j] for j in c.joints] == ["Foot_L", "Foot_R"]
    assert np.array_equal(c.up, [0, 1, 0]) and np.all((c.share > 0.4) & (c.share < 0.7))


def test_legs_in_their_own_trees():
    """A skeleton of several trees (a rig's deform bones whose legs hang from bones left out): the
    feet have no common ancestor; up and stature are measured as on the connected skeleton."""
    from core.skeleton import rest_world

    sk = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).skeleton
    pos, rot = rest_world(sk)
    parents, rest_t, rest_r = sk.parents.copy(), sk.rest_translations.copy(), sk.rest_rotations.copy()
    for name in ("LHipJoint", "RHipJoint"):  # cut the legs from the hips, keeping them where they are
        j = sk.index(name)
        parents[j], rest_t[j], rest_r[j] = -1, pos[j], rot[j]
    forest = replace(sk, parents=parents, rest_translations=rest_t, rest_rotations=rest_r)
    feet = sk.index("LeftFoot"), sk.index("RightFoot")
    assert forest.common_ancestor(*feet) == -1 and sk.common_ancestor(*feet) == 0
    assert np.array_equal(detect_up(forest), detect_up(sk))
    assert standing_height(forest) == pytest.approx(standing_height(sk), rel=1e-9)


def test_leash_anchors_follow_a_sliding_foot_only_beyond_the_slack():
    """One contact span whose joint slides 0.5 along x (a pivot or shuffle under the speed threshold)
    and rises 0.02: the anchor stays the median while the joint is within the slack of it, is exactly
    the slack away (horizontally) beyond, keeps its height, and moves continuously."""
    from core.contacts import Contacts, leash_anchors

    t = 101
    pos = np.zeros((t, 1, 3))
    pos[:, 0, 0] = np.linspace(0.0, 0.5, t)
    pos[:, 0, 1] = np.linspace(0.0, 0.02, t)  # up: y
    flags = np.zeros((t, 1), dtype=bool)
    flags[10:90] = True
    median = np.median(pos[10:90, 0], axis=0)
    anchors = np.where(flags[..., None], median, np.nan)
    up = np.array([0.0, 1.0, 0.0])
    c = Contacts(np.array([0]), flags, anchors, up, np.zeros(1), np.full(1, 0.1), 1.0, 60.0)
    out = leash_anchors(c, pos, 0.1)
    a = out.anchors[10:90, 0]
    gap = np.abs(pos[10:90, 0, 0] - a[:, 0])
    near = np.abs(pos[10:90, 0, 0] - median[0]) <= 0.1
    np.testing.assert_allclose(a[near], np.broadcast_to(median, a[near].shape))  # within the slack: as it was
    np.testing.assert_allclose(gap[~near], 0.1)  # beyond: on the leash
    np.testing.assert_allclose(a[:, 1], median[1])  # heights kept
    assert np.abs(np.diff(a[:, 0])).max() <= 0.5 / 100 + 1e-12  # no jump: at most the joint's own step
    assert np.isnan(out.anchors[:10]).all() and np.isnan(out.anchors[90:]).all()
    assert (~near).sum() > 20 and np.array_equal(out.flags, flags)


def test_limb_chain_counts_a_twist_joint_in_the_chain_with_the_bone_above():
    """Daz Genesis' limbs carry a twist joint inside the chain (``lThighBend`` → ``lThighTwist`` → ``lShin``,
    ``lShldrBend`` → ``lShldrTwist`` → ``lForearmBend`` → ``lForearmTwist`` → ``lHand``): the limb's joints
    are the bend joints (the twist was taken for the hip and the shoulder, and physics refused the rig). A
    twist bone beside the chain (Unreal's ``thigh_twist_01_l``) is not on the way up and changes nothing."""
    leg = ["hip", "lThighBend", "lThighTwist", "lShin", "lFoot"]
    sk = Skeleton(leg, [-1, 0, 1, 2, 3], np.tile([0.0, -0.2, 0.0], (5, 1)))
    assert limb_chain(sk, 4) == (1, 3, 4)
    arm = ["chest", "lCollar", "lShldrBend", "lShldrTwist", "lForearmBend", "lForearmTwist", "lHand"]
    sk = Skeleton(arm, [-1, 0, 1, 2, 3, 4, 5], np.tile([0.2, 0.0, 0.0], (7, 1)))
    assert limb_chain(sk, 6) == (2, 4, 6)
    names = ["pelvis", "thigh_l", "thigh_twist_01_l", "calf_l", "LeftUpLegRoll", "foot_l"]
    sk = Skeleton(names, [-1, 0, 1, 1, 3, 3], np.tile([0.0, -0.2, 0.0], (6, 1)))
    assert limb_chain(sk, 5) == (1, 3, 5)
    rolled = ["Hips", "LeftUpLeg", "LeftUpLegRoll", "LeftLeg", "LeftLegRoll", "LeftFoot"]  # a roll joint in the chain
    sk = Skeleton(rolled, [-1, 0, 1, 2, 3, 4], np.tile([0.0, -0.2, 0.0], (6, 1)))
    assert limb_chain(sk, 5) == (1, 3, 5)


@pytest.mark.parametrize("convention", ["cmu_cgspeed", "cmu_3dsmax", "mixamo", "unreal", "rigify", "daz_genesis"])
def test_hands_are_the_arms_hands(convention):
    """One search for arms and hands (:func:`core.limbs.find_arms`): named or not, the hands are the wrists of
    the physics' arms; a rig whose hands were deleted has none, where the hands' own search had taken each
    forearm (the elbow) for the hand and detected hand contacts at the elbows."""
    from core.limbs import find_arms
    from tests import rigs

    whole = rigs.build(convention, a_pose=30.0)
    canon = rigs.canonical_names(convention)
    anonymous = replace(whole, names=tuple(f"bone{j}" for j in range(whole.n_joints)))
    wrists = {whole.index(canon[f"hand.{s}"]) for s in "LR"}
    assert set(find_hands(whole).values()) == set(find_hands(anonymous).values()) == wrists
    assert {arm[2] for arm in find_arms(anonymous).values()} == wrists
    stripped, _ = rigs.pruned(whole, [canon["hand.L"], canon["hand.R"]], tips=True)
    assert find_hands(stripped) == {}
    with pytest.raises(ValueError, match="no hand joints"):
        detect_hand_contacts(Motion.rest(stripped, 4, 30.0))
