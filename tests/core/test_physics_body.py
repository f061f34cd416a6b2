"""The physics' body model on rigs missing parts: arms without hands, a body of legs only, a foot with no leg.

References are the same rig whole: de Leva's segment masses do not depend on how an arm ends, so the arm
joints of a rig whose hands were deleted must carry what the whole rig's upper arm, forearm and hand carry, and
the whole-body centre of mass (CoM) of the rest pose must stay where it was."""

import dataclasses

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.limbs import find_arms
from core.motion import Motion
from core.physics.body import DE_LEVA, MAX_MISSING_SHARE, body_model
from core.physics.dynamics import support_from
from core.physics.errors import PhysicsError
from core.retarget.topology import topology_labels
from core.skeleton import Skeleton, rest_world
from tests import rigs
from tests.conftest import shared_file

UP = np.array([0.0, 1.0, 0.0])
ARM_SEGMENTS = ("upper_arm", "forearm", "hand")


def rest_com(body) -> np.ndarray:
    """(3,) whole-body CoM of the rest pose, metres."""
    rest, rot = rest_world(body.skeleton)
    points = rest + quat.rotate(rot, body.com_local)
    return (body.masses[:, None] * points).sum(axis=0) / body.masses.sum() * body.unit


def arm_masses(body, sides="LR") -> list[float]:
    """kg on the joints carrying each arm's de Leva segments, per side."""
    return [sum(body.masses[j] for j in {body.segments[f"{s}_{side}"] for s in ARM_SEGMENTS}) for side in sides]


def assert_same_arm_joints(whole, stripped, keep, sides="LR"):
    """The stripped rig's upper arm joint carries the whole rig's upper arm, its forearm joint the forearm and
    the (deleted) hand, per side (``sides``: the stripped model's side names, "AB" when found by topology)."""
    old = {int(k): i for i, k in enumerate(keep)}
    for side in "LR":
        upper, fore, hand = (whole.segments[f"{s}_{side}"] for s in ARM_SEGMENTS)
        match = [x for x in sides if stripped.segments[f"upper_arm_{x}"] == old[upper]]
        assert len(match) == 1, f"the {side} upper arm is not on {whole.skeleton.names[upper]}"
        assert stripped.segments[f"forearm_{match[0]}"] == stripped.segments[f"hand_{match[0]}"] == old[fore]
        assert stripped.masses[old[upper]] == pytest.approx(whole.masses[upper], rel=0.02)
        assert stripped.masses[old[fore]] == pytest.approx(whole.masses[fore] + whole.masses[hand], rel=0.02)


def without_hands(skeleton: Skeleton, hands: list[str], tips: bool, anonymous: bool = False):
    sk, keep = rigs.pruned(skeleton, hands, tips)
    return (dataclasses.replace(sk, names=tuple(f"bone{j}" for j in range(sk.n_joints))) if anonymous else sk), keep


def test_the_de_leva_table_sums_to_the_body():
    """The missing share is read from the table: it must hold the whole body once (both sides of each limb)."""
    for table in DE_LEVA.values():
        limbs = ("upper_arm", "forearm", "hand", "thigh", "shank", "foot")
        total = sum(table[k][0] for k in ("head", "upper_trunk", "middle_trunk", "lower_trunk"))
        assert total + 2 * sum(table[k][0] for k in limbs) == pytest.approx(1.0, abs=2e-3)


# The tolerance on the CoM: 1 mm on a 1.74 m body (0.1 mm where the End Site gives the wrist). The hand's CoM lies along the forearm instead of along the hand
# (the same line in these T-poses), and without an End Site the wrist is estimated from de Leva's forearm/upper
# arm ratio: the synthetic forearm is 0.25 m, the estimate 0.955 × 0.28 = 0.267 m, 17 mm off for 2.2 % of the
# mass (forearm + hand) per arm: 2 × 0.022 × 17 mm × ~0.7 (CoM share along the forearm) ≈ 0.5 mm.
@pytest.mark.parametrize("tips", [True, False], ids=["end_site", "bare_leaf"])
@pytest.mark.parametrize("convention", sorted(rigs.NAMES))
def test_arms_without_hands_keep_their_mass(convention, tips):
    """Every shipped naming convention with both hands (and all below them) deleted, the forearm ending at an
    End Site where the wrist was (Blender's export of a deleted bone) or as a bare leaf. Before, the arms were
    found through their hands only: 0 kg on them, their 9.9 % spread over the trunk and legs."""
    whole = rigs.build(convention)
    canon = rigs.canonical_names(convention)
    stripped, keep = without_hands(whole, [canon["hand.L"], canon["hand.R"]], tips)
    a, b = (body_model(sk, 70.0, unit=1.0, up=UP) for sk in (whole, stripped))
    assert not b.missing and b.masses.sum() == pytest.approx(70.0)
    assert arm_masses(b) == pytest.approx(arm_masses(a), rel=0.02)
    assert np.linalg.norm(rest_com(b) - rest_com(a)) < (1e-4 if tips else 1e-3)  # an End Site is the wrist itself
    assert_same_arm_joints(a, b, keep)
    assert [b.skeleton.names[j] for j in b.roles["spine"]] == [a.skeleton.names[j] for j in a.roles["spine"]]
    assert not b.roles["wrist"] and len(b.roles["elbow"]) == 2


@pytest.mark.parametrize("convention", ["cmu_cgspeed", "mixamo", "unreal", "bandai_namco"])
def test_arms_without_hands_or_names_are_found_from_the_hierarchy(convention):
    """Names say nothing (``bone17``): the arms are the chest's side branches, and a leaf whose End Site is a
    long bone is a forearm whose hand is missing (not a hand: the topology's labels are one bone up there, the
    collar taken for the upper arm)."""
    whole = rigs.build(convention, a_pose=30.0)  # arms lowered: an arm read one bone up moves the CoM
    canon = rigs.canonical_names(convention)
    stripped, keep = without_hands(whole, [canon["hand.L"], canon["hand.R"]], tips=True, anonymous=True)
    a, b = (body_model(sk, 70.0, unit=1.0, up=UP) for sk in (whole, stripped))
    assert not b.missing
    assert_same_arm_joints(a, b, keep, "AB")
    assert sorted(arm_masses(b, "AB")) == pytest.approx(sorted(arm_masses(a)), rel=0.02)
    assert np.linalg.norm(rest_com(b) - rest_com(a)) < 1e-3


@pytest.mark.parametrize(
    "clip, tips, anonymous",
    [("02_01", True, False), ("02_01", False, False), ("02_01", True, True), ("02_01", False, True),
     ("05_01", True, True), ("05_01", False, True)],
    ids=["end_site", "bare_leaf", "no_names", "bare_leaf_no_names", "05_01_no_names", "05_01_bare_leaf_no_names"],
)  # fmt: skip
def test_a_cmu_capture_without_hands_keeps_its_arms(clip, tips, anonymous):
    """CMU 02_01 (1.4×, 90 kg) with LeftHand, RightHand and everything below them deleted. Before: 0 kg on the
    arms, the chest taken at Neck1 (15.9 kg on the neck) and the rest-pose CoM 26 mm higher. Without names the
    arms are the chest's branches, their forearm leaf told from a hand by its End Site (CMU's forearm is 0.69
    of its upper arm: a leaf End Site compared with the bone into it alone read it as a hand) or, with nothing past
    the leaf, by the arm's proportions: the collar at the chest's own place is no upper arm (before, each arm was
    read one bone up: the collar as the upper arm, the forearm as the hand). 05_01's forearm is 0.45 of its upper
    arm: its End Site is not a long bone, and the arm was read one bone up there even with it."""
    walk = read_bvh(shared_file(f"cmu_bvh_cgspeed/{clip}.bvh")).frames(slice(1, 3)).scaled(1.4)
    stripped, keep = without_hands(walk.skeleton, ["LeftHand", "RightHand"], tips, anonymous)
    a, b = (body_model(sk, 90.0, unit=0.0254, up=UP) for sk in (walk.skeleton, stripped))
    assert_same_arm_joints(a, b, keep, "AB" if anonymous else "LR")
    assert arm_masses(a)[0] == pytest.approx(90.0 * sum(DE_LEVA["male"][s][0] for s in ARM_SEGMENTS))
    assert np.linalg.norm(rest_com(b) - rest_com(a)) < (1e-4 if tips else 1e-3)  # an End Site is the wrist itself
    for name in ("LowerBack", "Spine", "Spine1", "Neck", "Neck1", "Head"):
        k = walk.skeleton.index(name)
        assert b.masses[list(keep).index(k)] == pytest.approx(a.masses[k], rel=1e-9)


def bare(skeleton: Skeleton) -> Skeleton:
    """The skeleton without End Sites: nothing lies past a leaf."""
    return dataclasses.replace(skeleton, end_site_parents=np.zeros(0, dtype=int), end_site_offsets=np.zeros((0, 3)))


@pytest.mark.parametrize("tips", [False, True], ids=["bare_leaf", "end_site"])
@pytest.mark.parametrize("convention", sorted(set(rigs.NAMES) - {"rigify", "character_creator"}))
def test_unnamed_arms_without_hands_start_at_the_upper_arm(convention, tips):
    """Names say nothing, both hands are deleted and no End Site tells how long the last bone is: each arm was read
    one bone up (the collar as the upper arm, the upper arm as the forearm, the forearm as the hand; the topology's
    labels the same). Now the leaf's two readings are weighed by the arm's proportions (forearm against upper arm,
    upper arm against thigh, the collar's length): the labels, arms and body model are the named rig's. With an End
    Site at the wrist (``tips``) the arms were right, the labels one bone up. The same rig with its fingers deleted
    instead keeps its hands: its leaf is the wrist. (Rigify's twist segments and Character Creator's forearm twist
    are not followed yet.)"""
    whole = bare(rigs.build(convention, a_pose=30.0))
    canon = rigs.canonical_names(convention)
    stripped, keep = rigs.pruned(whole, [canon["hand.L"], canon["hand.R"]], tips)
    anonymous = dataclasses.replace(stripped, names=tuple(f"bone{j}" for j in range(stripped.n_joints)))
    arms = {tuple(canon[f"{k}.{s}"] for k in ("upper_arm", "forearm")) for s in "LR"}
    labels = topology_labels(anonymous)
    assert {tuple(stripped.names[labels[f"{k}.{s}"]] for k in ("upper_arm", "forearm")) for s in "LR"} == arms
    assert "hand.L" not in labels and "hand.R" not in labels
    assert {tuple(stripped.names[j] for j in arm[:2]) for arm in find_arms(anonymous).values()} == arms
    named, unnamed = (body_model(sk, 70.0, unit=1.0, up=UP) for sk in (stripped, anonymous))
    assert np.allclose(unnamed.masses, named.masses, rtol=1e-9) and np.allclose(unnamed.com_local, named.com_local)
    fingers = [whole.names[c] for s in "LR" for c in whole.children(whole.index(canon[f"hand.{s}"]))]
    fingerless = rigs.pruned(whole, fingers)[0] if fingers else whole  # Bandai's and Xsens' hands are leaves
    anonymous = dataclasses.replace(fingerless, names=tuple(f"bone{j}" for j in range(fingerless.n_joints)))
    assert {fingerless.names[arm[2]] for arm in find_arms(anonymous).values()} == {canon["hand.L"], canon["hand.R"]}


@pytest.mark.parametrize("pose", [0.0, 30.0])
def test_an_unnamed_rigify_rig_without_fingers_keeps_its_hands(pose):
    """Rigify's arm bones are two segments each (``DEF-forearm.L`` → ``DEF-forearm.L.001``): the End Site left where
    the fingers were deleted (0.1 m past the wrist) was weighed against the half bones above the hand, read as a
    forearm's length and the hand dropped (its 0.6 % of the mass on the forearm, the forearm's on the upper arm).
    The segments are summed now: the hands are the named rig's."""
    whole = rigs.build("rigify", a_pose=pose)
    canon = rigs.canonical_names("rigify")
    fingers = [whole.names[c] for s in "LR" for c in whole.children(whole.index(canon[f"hand.{s}"]))]
    fingerless, _ = rigs.pruned(whole, fingers, tips=True)
    anonymous = dataclasses.replace(fingerless, names=tuple(f"bone{j}" for j in range(fingerless.n_joints)))
    arms = {tuple(canon[f"{k}.{s}"] for k in ("upper_arm", "forearm", "hand")) for s in "LR"}
    assert {tuple(fingerless.names[j] for j in arm) for arm in find_arms(anonymous).values()} == arms


def test_one_arm_named_and_the_other_not_keeps_both():
    """A rig whose right hand and forearm carry names the tables do not know (a custom bone) kept only its named
    left arm: the topology, which the hands-only search fell back to when names found fewer than two, was not
    asked, and the right arm's 5 % of the mass went to the trunk and legs."""
    sk = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).skeleton
    names = ["bone_x" if n == "RightHand" else "bone_y" if n == "RightForeArm" else n for n in sk.names]
    renamed = dataclasses.replace(sk, names=tuple(names))
    a, b = (body_model(x, 90.0, unit=0.0254, up=UP) for x in (sk, renamed))
    assert not b.missing
    assert np.allclose(a.masses, b.masses) and np.allclose(a.com_local, b.com_local)


def legs_only(skeleton: Skeleton) -> Skeleton:
    """``skeleton`` without the spine (and all above it): a pelvis and two legs."""
    spine = [n for n in skeleton.names if skeleton.parents[skeleton.index(n)] == 0 and "Leg" not in n]
    return rigs.pruned(skeleton, spine, tips=True)[0]


def test_a_body_of_legs_only_is_refused_naming_what_is_missing():
    """A rig of pelvis and legs: no trunk or head (60 % of the mass). Before, the model put the head on a toe,
    the trunk along the leg and ran physics on a 0.92 m stature."""
    legs = legs_only(synthetic.humanoid())
    assert set(legs.names) == {
        "Hips",
        *(f"{s}{p}" for s in ("Left", "Right") for p in ("UpLeg", "Leg", "Foot", "ToeBase")),
    }
    with pytest.raises(PhysicsError, match=r"no trunk or head \(left upper arm, .*, head, upper trunk, middle trunk, "
                                           r"lower trunk not found: 60% of the body's mass; at most 15% may be missing\)"):  # fmt: skip
        body_model(legs, 70.0, up=UP)


def neckless(skeleton: Skeleton) -> Skeleton:
    """``skeleton`` with its Head hung straight from the Chest (no Neck joint), where it was."""
    sk, _ = rigs.pruned(skeleton, ["Neck"], tips=False)
    head = skeleton.index("Head")
    offset = skeleton.rest_translations[skeleton.index("Neck")] + skeleton.rest_translations[head]
    ends = skeleton.end_site_parents == head
    return Skeleton(
        (*sk.names, "Head"),
        np.append(sk.parents, sk.index("Chest")),
        np.vstack((sk.rest_translations, offset)),
        end_site_parents=np.append(sk.end_site_parents, sk.n_joints),
        end_site_offsets=np.vstack((sk.end_site_offsets, skeleton.end_site_offsets[ends])),
    )


@pytest.mark.parametrize(
    "drop, missing",
    [
        (["LeftHand", "RightHand"], []),
        (["LeftToeBase", "RightToeBase"], []),
        ("neckless", []),
        (["Neck"], ["head"]),  # the head and neck (6.9 %)
        (["LeftShoulder", "RightShoulder"], [f"{s}_{side}" for side in "LR" for s in ARM_SEGMENTS]),  # 9.9 %
    ],
)
def test_rigs_missing_small_parts_still_run(drop, missing):
    """No hands, no toes, no neck joint, no head, no arms at all: below the missing share allowed, so the body
    model is made (the missing parts named, their mass spread over the others)."""
    sk = neckless(synthetic.humanoid()) if drop == "neckless" else rigs.pruned(synthetic.humanoid(), drop, False)[0]
    body = body_model(sk, 70.0, up=UP)
    assert body.masses.sum() == pytest.approx(70.0) and body.missing == missing
    share = sum(DE_LEVA["male"][name.removesuffix("_L").removesuffix("_R")][0] for name in missing)
    assert share <= MAX_MISSING_SHARE


def foot_under_the_root() -> Motion:
    """The synthetic walk whose right leg is a toe-less foot hung from the hips (no thigh or shank)."""
    walk = synthetic.walk(60)
    sk, keep = rigs.pruned(walk.skeleton, ["RightUpLeg"], tips=False)
    parents, offsets = sk.parents.copy(), sk.rest_translations.copy()
    foot = len(sk.names)
    names = (*sk.names, "RightFoot")
    parents = np.append(parents, 0)
    offsets = np.vstack((offsets, [-0.1, -0.89, 0.0]))
    stub = Skeleton(names, parents, offsets, end_site_parents=sk.end_site_parents, end_site_offsets=sk.end_site_offsets)
    t, r = walk.translations[:, keep], walk.rotations[:, keep]
    t = np.concatenate((t, np.broadcast_to(offsets[foot], (walk.n_frames, 1, 3))), axis=1)
    r = np.concatenate((r, quat.identity((walk.n_frames, 1))), axis=1)
    return Motion(stub, t, r, walk.fps)


def test_a_foot_with_no_leg_is_a_physics_error_naming_it():
    """A toe-less foot hanging from the root: the stub foot box (and the body model) looked for its knee with
    limb_chain and raised a bare ValueError ("fewer than two ancestors"), not a PhysicsError."""
    motion = foot_under_the_root()
    contacts = detect_contacts(motion, up=UP)
    assert "RightFoot" in [motion.skeleton.names[j] for j in contacts.joints]
    every = dataclasses.replace(contacts, flags=np.ones_like(contacts.flags))
    with pytest.raises(PhysicsError, match="foot 'RightFoot' has no leg above it"):
        support_from(motion, every)
    with pytest.raises(PhysicsError, match="foot 'RightFoot' has no leg above it"):
        body_model(motion.skeleton, 70.0, up=UP)


@pytest.mark.parametrize("convention", ["cmu_cgspeed", "cmu_asf", "mixamo", "daz_genesis", "perception_neuron"])
def test_an_unnamed_rig_missing_one_hand_keeps_its_arms_and_its_head(convention):
    """Names say nothing and one hand (with its fingers) is deleted: the chest's most alike branches by length and
    size alone were the neck and the handless arm (the neck and head took an arm's 5 % of the mass, the head's
    6.9 % went elsewhere); by their first bones' lengths too they are the two arms again, and the body model puts
    on every joint what the named rig puts there."""
    whole = rigs.build(convention, a_pose=30.0)
    canon = rigs.canonical_names(convention)
    stripped, keep = rigs.pruned(whole, [canon["hand.L"]], tips=True)
    anonymous = dataclasses.replace(stripped, names=tuple(f"bone{j}" for j in range(stripped.n_joints)))
    uppers = {stripped.names[arm[0]] for arm in find_arms(anonymous).values()}
    assert uppers == {canon["upper_arm.L"], canon["upper_arm.R"]}
    named, unnamed = (body_model(sk, 70.0, unit=1.0, up=UP) for sk in (stripped, anonymous))
    assert np.allclose(unnamed.masses, named.masses, rtol=1e-9) and np.allclose(unnamed.com_local, named.com_local)
