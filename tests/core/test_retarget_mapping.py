"""Bone mapping on any humanoid (issue 13): names of many conventions, a topology fallback that
needs no names, the user's map driving every stage, and loud failures for maps that cannot work."""

from __future__ import annotations

import numpy as np
import pytest

from core import synthetic
from core.io.asf_amc import read_asf_amc
from core.io.bvh import read_bvh
from core.limbs import detect_up, standing_height
from core.retarget import CORE, MappingError, RetargetOptions, auto_map, label_skeleton, map_labels, retarget
from core.retarget.topology import topology_labels
from core.skeleton import Skeleton, rest_positions
from tests import rigs
from tests.conftest import shared_file

# Per shared capture: the core body, left side (the right side is the same names mirrored).
CAPTURES = {
    "iclone_cc/005_06.bvh": ("CC_Base_Hip", "CC_Base_Waist", "CC_Base_Head", "CC_Base_L_Thigh", "CC_Base_L_Calf",
                             "CC_Base_L_Foot", "CC_Base_L_Upperarm", "CC_Base_L_Forearm", "CC_Base_L_Hand"),
    "mixamo/Walk-In-Circle.bvh": ("mixamorig7:Hips", "mixamorig7:Spine", "mixamorig7:Head", "mixamorig7:LeftUpLeg",
                                  "mixamorig7:LeftLeg", "mixamorig7:LeftFoot", "mixamorig7:LeftArm",
                                  "mixamorig7:LeftForeArm", "mixamorig7:LeftHand"),
    "bandai_namco_1/dataset-1_walk_normal_001.bvh": ("Hips", "Spine", "Head", "UpperLeg_L", "LowerLeg_L", "Foot_L",
                                                     "UpperArm_L", "LowerArm_L", "Hand_L"),
    "cmu_bvh_3dsmax/131_01.bvh": ("Hips", "lowerback", "Head", "LeftHip", "LeftKnee", "LeftAnkle", "LeftShoulder",
                                  "LeftElbow", "LeftWrist"),
    "cmu_bvh_cgspeed/05_06.bvh": ("Hips", "LowerBack", "Head", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftArm",
                                  "LeftForeArm", "LeftHand"),
    "cmu_asf_amc/01_01.amc": ("root", "lowerback", "head", "lfemur", "ltibia", "lfoot", "lhumerus", "lradius",
                              "lwrist"),
}  # fmt: skip
SIDED = ("upper_leg", "lower_leg", "foot", "upper_arm", "forearm", "hand")


def _right(name: str) -> str:
    for a, b in (("_L_", "_R_"), ("Left", "Right"), ("_L", "_R")):
        if a in name:
            return name.replace(a, b)
    return "r" + name[1:]  # CMU ASF: lfemur → rfemur


def expected_core(left: tuple[str, ...]) -> dict[str, str]:
    hips, spine, head, *limbs = left
    out = {"hips": hips, "spine": spine, "head": head}
    for base, name in zip(SIDED, limbs):
        out[f"{base}.L"], out[f"{base}.R"] = name, _right(name)
    return out


def load(relative: str):
    path = shared_file(relative)
    if path.suffix == ".amc":
        return read_asf_amc(path.with_name("01.asf"), path)
    return read_bvh(path)


def core_of(labels: dict[str, int], names) -> dict[str, str]:
    return {c: names[labels[c]] for c in CORE if c in labels}


@pytest.mark.parametrize("relative", sorted(CAPTURES))
def test_every_shared_capture_maps_its_core_body(relative):
    motion = load(relative)
    sk, frames = motion.skeleton, motion.world_positions()[:: max(1, motion.n_frames // 30)]
    expected = expected_core(CAPTURES[relative])
    labels, _ = label_skeleton(sk, frames)
    assert core_of(labels, sk.names) == expected
    # names aside: the same body from the hierarchy, bone lengths and the motion alone
    assert core_of(topology_labels(sk, frames), sk.names) == expected
    for seed in (1, 2):
        anon, old = rigs.anonymise(sk, seed)
        original = [sk.names[j] for j in old]
        assert core_of(label_skeleton(anon, frames[:, old])[0], original) == expected, seed
        assert core_of(label_skeleton(anon)[0], original) == expected, (seed, "rest pose")


def test_twist_share_toe_finger_and_face_bones_are_not_limbs():
    sk = load("iclone_cc/005_06.bvh").skeleton
    anon, old = rigs.anonymise(sk, 3)
    labels = topology_labels(anon)
    taken = {sk.names[old[j]] for c, j in labels.items() if not c.startswith("neck")}  # CC's neck: NeckTwist01/02
    assert not [n for n in taken if any(w in n for w in ("Twist0", "Share", "Toe1", "Tongue", "Jaw", "Eye", "Mid"))]
    assert sk.names[old[labels["toe.L"]]] == "CC_Base_L_ToeBase"


@pytest.mark.parametrize("convention", sorted(rigs.NAMES))
def test_synthetic_conventions_map_by_name_onto_an_anonymous_copy(convention):
    """Each convention's rig labels by name; its anonymous copy (shuffled siblings) by structure,
    and the automatic map between the two pairs every core joint with itself."""
    sk = rigs.build(convention)
    names = rigs.canonical_names(convention)
    assert core_of(label_skeleton(sk)[0], sk.names) == {c: names[c] for c in CORE}
    anon, old = rigs.anonymise(sk, 7)
    mapping = auto_map(sk, anon)
    pairs = {sk.names[old[anon.index(t)]]: s for t, s in mapping.items()}
    for c in CORE:
        assert pairs.get(names[c]) == names[c], (c, names[c])


def bandai_map(source_side: str = "{s}", hand_of: str = "Hand") -> dict[str, str]:
    """A hand-written map Character Creator → Bandai Namco (target → source)."""
    out = {"Hips": "CC_Base_Hip", "Spine": "CC_Base_Waist", "Chest": "CC_Base_Spine02",
           "Neck": "CC_Base_NeckTwist01", "Head": "CC_Base_Head"}  # fmt: skip
    for s in "LR":
        o = source_side.format(s=s)
        out.update({f"Shoulder_{s}": f"CC_Base_{s}_Clavicle", f"UpperArm_{s}": f"CC_Base_{s}_Upperarm",
                    f"LowerArm_{s}": f"CC_Base_{s}_Forearm", f"Hand_{s}": f"CC_Base_{s}_{hand_of}",
                    f"UpperLeg_{s}": f"CC_Base_{o}_Thigh", f"LowerLeg_{s}": f"CC_Base_{o}_Calf",
                    f"Foot_{s}": f"CC_Base_{o}_Foot", f"Toes_{s}": f"CC_Base_{o}_ToeBase"})  # fmt: skip
    return out


def _leg(skeleton: Skeleton, hip: str, knee: str, ankle: str) -> float:
    p, i = rest_positions(skeleton), skeleton.index
    return float(np.linalg.norm(p[i(knee)] - p[i(hip)]) + np.linalg.norm(p[i(ankle)] - p[i(knee)]))


@pytest.fixture(scope="module")
def cc_and_bandai():
    cc = load("iclone_cc/005_06.bvh")
    bandai = load("bandai_namco_1/dataset-1_walk_normal_001.bvh").skeleton
    return cc, bandai


def test_a_hand_written_map_drives_root_scale_and_planting(cc_and_bandai):
    cc, bandai = cc_and_bandai
    result = retarget(cc, bandai, bandai_map())
    legs_t = np.mean([_leg(bandai, f"UpperLeg_{s}", f"LowerLeg_{s}", f"Foot_{s}") for s in "LR"])
    legs_s = np.mean([_leg(cc.skeleton, f"CC_Base_{s}_Thigh", f"CC_Base_{s}_Calf", f"CC_Base_{s}_Foot") for s in "LR"])
    assert result.scale == pytest.approx(legs_t / legs_s, rel=1e-9)
    assert bandai.names[result.root] == "Hips"
    assert sorted(bandai.names[j] for j in result.contacts.joints) == ["Foot_L", "Foot_R", "Toes_L", "Toes_R"]
    # the floor is the source's floor mapped: where the source's flat feet (ankle and toe in contact)
    # have their lowest joint, median, scaled; and both planted ankles stand on it
    height = 1.7 * legs_t / 0.9  # a rough stature from the legs
    src, flags = cc.world_positions() @ [0.0, 1.0, 0.0], result.source_contacts.flags
    names = [cc.skeleton.names[j] for j in result.source_contacts.joints]
    lowest = []
    for s in "LR":
        flat = flags[:, names.index(f"CC_Base_{s}_Foot")] & flags[:, names.index(f"CC_Base_{s}_ToeBase")]
        below = cc.skeleton.subtree(cc.skeleton.index(f"CC_Base_{s}_Foot"))
        lowest.append(src[flat][:, below].min(axis=1))
    assert result.floor == pytest.approx(result.scale * np.median(np.concatenate(lowest)), abs=1e-6 * height)
    pos = result.motion.world_positions() @ result.up
    for i, j in enumerate(result.contacts.joints):
        on = result.contacts.flags[:, i]
        assert np.ptp(pos[on, j]) < 0.01 * height  # one height while in contact
        assert pos[on, j].min() >= result.floor - 1e-9 * height


def test_a_map_the_names_contradict_still_drives_every_stage(cc_and_bandai):
    """Bandai with its feet and toes named the other way round: the labelling by name takes the
    toes for the feet, but the map pairs the real joints, and the result is the same motion."""
    cc, bandai = cc_and_bandai
    swap = {"Foot_L": "Toes_L", "Toes_L": "Foot_L", "Foot_R": "Toes_R", "Toes_R": "Foot_R"}
    misnamed = Skeleton(tuple(swap.get(n, n) for n in bandai.names), bandai.parents, bandai.rest_translations,
                        bandai.rest_rotations, bandai.channels, bandai.end_site_parents, bandai.end_site_offsets)  # fmt: skip
    by_name = label_skeleton(misnamed)[0]
    assert misnamed.names[by_name["foot.L"]] == "Foot_L" and by_name["foot.L"] == bandai.index("Toes_L")
    mapping = {swap.get(t, t): s for t, s in bandai_map().items()}
    result, reference = retarget(cc, misnamed, mapping), retarget(cc, bandai, bandai_map())
    assert result.target_labels["foot.L"] == bandai.index("Foot_L")
    assert np.array_equal(result.contacts.joints, reference.contacts.joints)
    assert result.scale == pytest.approx(reference.scale, rel=1e-12)
    assert np.allclose(result.motion.world_positions(), reference.motion.world_positions(), atol=1e-9)


@pytest.mark.parametrize(
    "mapping, message",
    [
        (bandai_map(), None),
        ({**bandai_map(), "Foot_L": "CC_Base_R_Foot", "Foot_R": "CC_Base_L_Foot"}, "crosses sides or limbs"),
        ({**bandai_map(), "Hand_L": "CC_Base_L_ToeBase"}, "crosses sides or limbs: 'Hand_L' \\(left hand\\)"),
        ({k: v for k, v in bandai_map().items() if k not in ("Head", "Foot_R")}, "unmapped: head, right foot$"),
    ],
)
def test_maps_that_cannot_work_are_refused(cc_and_bandai, mapping, message):
    cc, bandai = cc_and_bandai
    if message is None:
        assert map_labels(mapping, cc.skeleton, bandai)[2] == []
        return
    with pytest.raises(MappingError, match=message):
        retarget(cc, bandai, mapping)


def test_a_partial_map_only_when_forced(cc_and_bandai):
    cc, bandai = cc_and_bandai
    legs = {k: v for k, v in bandai_map().items() if "Leg" in k or k in ("Hips", "Foot_L", "Foot_R")}
    with pytest.raises(MappingError, match="unmapped: spine, head, left upper arm, left forearm, left hand"):
        retarget(cc, bandai, legs)
    result = retarget(cc, bandai, legs, options=RetargetOptions(allow_partial=True))
    assert set(result.mapping) == set(legs)
    assert any(n.startswith("partial map, not mapped: spine, head") for n in result.notes)


def test_a_skeleton_without_a_body_fails_loudly():
    walk = synthetic.walk(n_frames=30)
    chain = Skeleton(("a", "b", "c"), np.array([-1, 0, 1]), np.array([[0, 1, 0], [0, 0.5, 0], [0, 0.5, 0]]))
    with pytest.raises(MappingError, match="pairs no bones .*unmapped: hips, spine, head, left upper leg"):
        retarget(walk, chain)
    with pytest.raises(ValueError, match="the target has no bones"):
        retarget(walk, Skeleton((), np.zeros(0, dtype=int), np.zeros((0, 3))))
    with pytest.raises(ValueError, match="no humanoid structure"):
        topology_labels(chain)


def test_feet_and_head_of_an_anonymous_rig_come_from_its_structure():
    """Contacts, planting and the physics body find feet and head without names (not the
    lowest leaf chains: on Character Creator those are toes, tongue and thumbs)."""
    from core.limbs import find_feet, find_head

    sk = load("iclone_cc/005_06.bvh").skeleton
    anon, old = rigs.anonymise(sk, 4)
    feet = {sk.names[old[f]]: None if t is None else sk.names[old[t]] for f, t in find_feet(anon).values()}
    assert feet == {"CC_Base_L_Foot": "CC_Base_L_ToeBase", "CC_Base_R_Foot": "CC_Base_R_ToeBase"}
    assert sk.names[old[find_head(anon)]] == "CC_Base_Head"


def test_character_creator_as_the_target_too(cc_and_bandai):
    """The other direction of the issue's report: Bandai Namco → Character Creator, map automatic."""
    cc, _ = cc_and_bandai
    bandai = load("bandai_namco_1/dataset-1_walk_normal_001.bvh")
    result = retarget(bandai, cc.skeleton)
    names = cc.skeleton.names
    assert names[result.root] == "CC_Base_Hip"
    assert sorted(names[j] for j in result.contacts.joints) == [
        f"CC_Base_{s}_{j}" for s in "LR" for j in ("Foot", "ToeBase")
    ]
    assert {names[result.target_labels[c]] for c in CORE} == set(
        expected_core(CAPTURES["iclone_cc/005_06.bvh"]).values()
    )
    legs_t = np.mean([_leg(cc.skeleton, f"CC_Base_{s}_Thigh", f"CC_Base_{s}_Calf", f"CC_Base_{s}_Foot") for s in "LR"])
    legs_s = np.mean([_leg(bandai.skeleton, f"UpperLeg_{s}", f"LowerLeg_{s}", f"Foot_{s}") for s in "LR"])
    assert result.scale == pytest.approx(legs_t / legs_s, rel=1e-9)
    pos = result.motion.world_positions()
    ankles = [np.percentile(pos[:, cc.skeleton.index(f"CC_Base_{s}_Foot")] @ result.up, 5) for s in "LR"]
    assert abs(ankles[0] - ankles[1]) < 0.01 * 1.7 * legs_t / 0.9  # both feet on one floor


@pytest.mark.parametrize(
    "convention, rename",
    [
        ("mixamo", lambda n: n.replace("mixamorig:", "mixamorig7:")),
        ("mixamo", lambda n: n.replace("mixamorig:", "mixamorig12_")),  # Blender renames ':' on some exports
        ("mixamo", lambda n: n.replace("mixamorig:", "")),
        ("3dsmax_biped", lambda n: n.replace("Bip01", "Bip001")),
        ("rigify", lambda n: n.replace("DEF-", "ORG-")),
    ],
)
def test_namespaces_and_prefixes_do_not_matter(convention, rename):
    sk = rigs.build(convention)
    renamed = Skeleton(tuple(map(rename, sk.names)), sk.parents, sk.rest_translations, sk.rest_rotations,
                       end_site_parents=sk.end_site_parents, end_site_offsets=sk.end_site_offsets)  # fmt: skip
    labels, found = label_skeleton(renamed)
    assert found == convention and labels == label_skeleton(sk)[0]


@pytest.mark.parametrize("convention", sorted(rigs.NAMES))
@pytest.mark.parametrize("z_up", [False, True])
def test_up_axis_from_the_pelvis_not_a_floor_root(convention, z_up):
    """Up is measured from the feet's common ancestor: an Unreal mannequin's ``root`` sits on the floor
    above its pelvis and would read the body upside down."""
    sk = rigs.build(convention, z_up=z_up)
    assert np.array_equal(detect_up(sk), [0.0, 0.0, 1.0] if z_up else [0.0, 1.0, 0.0])
    assert 1.5 < standing_height(sk) < 2.0
