"""Feet that stand (issue 13, item 4): after retargeting, ankles and toes stay planted while the
source's feet are in contact, no foot goes through the floor, no foot floats while in contact,
and the toes slide no more than the source's; whatever the rigs and their names.

Every figure is measured by :func:`core.retarget.metrics.feet_figures` on the source's contact
frames; each test also measures the result before planting (the feature removed) and checks
that it fails where the planted result passes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from core import synthetic
from core.anonymise import anonymise
from core.contacts import contact_spans
from core.ik.plant import foot_anchors
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.retarget import RetargetOptions, retarget, retarget_metrics
from core.retarget.body import leg_length
from core.retarget.feet import foot_of, heel_contacts, split_drifting
from core.retarget.metrics import feet_figures
from core.skeleton import Skeleton
from tests.conftest import shared_file

LIMIT = 0.01  # the issue's bound: 1 % of the target's height
# Toe skating may exceed the source's by this much (heights per second): the planted toe is held
# by two-link IK, exact but for the soft reach clamp (at most 0.37 % of the leg where a leg is
# nearly straight) and float rounding; 0.1 % of the height per second is 1 mm/s on a 1 m figure.
SKATE_TOLERANCE = 0.001

CMU, BANDAI = "cmu_bvh_cgspeed/02_01.bvh", "bandai_namco_1/dataset-1_walk_normal_001.bvh"
MIXAMO, CC = "mixamo/Walk-In-Circle.bvh", "iclone_cc/005_06.bvh"
CMU_DANCE, CMU_DRIBBLE = "cmu_bvh_cgspeed/05_06.bvh", "cmu_bvh_cgspeed/06_12.bvh"
BANDAI_DANCE = "bandai_namco_1/dataset-1_dance-short_normal_001.bvh"


def load(relative: str):
    return read_bvh(shared_file(relative))


def unplanted(result):
    """The result with the feature removed: the motion before planting, same contacts and floor."""
    return dataclasses.replace(result, motion=result.unplanted)


def assert_feet_stand(figures: dict) -> None:
    assert figures["penetration_max_h"] <= LIMIT
    assert figures["float_max_h"] <= LIMIT
    assert figures["skating_toe_after_h"] <= figures["skating_toe_source_h"] + SKATE_TOLERANCE
    assert figures["skating_ankle_after_h"] <= SKATE_TOLERANCE  # ankles planted


@pytest.mark.parametrize(
    ("source", "target"),
    [(CMU, MIXAMO), (CMU, CC), (BANDAI, MIXAMO), (BANDAI, CC), (MIXAMO, CC), (CC, MIXAMO)],
)
def test_real_captures_stand_on_mixamo_and_character_creator(source, target):
    motion = load(source)
    result = retarget(motion, load(target).skeleton, target_up="y")
    figures = retarget_metrics(motion, result)
    assert_feet_stand(figures)
    assert figures["skating_toe_source_h"] > 0.03  # the source's toes do slide: the comparison means something
    before = feet_figures(motion, unplanted(result))
    assert before["skating_toe_after_h"] > 10 * figures["skating_toe_after_h"] + 0.005
    assert before["skating_ankle_after_h"] > 0.01
    # both feet planted, ankles and toes
    assert len(result.contacts.joints) == 4 and result.contacts.flags.any(axis=0).all()


def test_the_issues_toes_no_longer_float_cmu_to_mixamo():
    """CMU → Mixamo left the toes floating 3–6 cm (Mixamo's ankle sits higher above its toe than
    CMU's, and the foot pointed where CMU's points); now they stand."""
    motion, target = load(CMU), load(MIXAMO).skeleton
    result = retarget(motion, target, target_up="y")
    figures, before = feet_figures(motion, result), feet_figures(motion, unplanted(result))
    assert before["float_max_h"] > 2 * LIMIT
    assert figures["float_max_h"] <= LIMIT
    height = standing_height(target, result.up)
    pos = result.motion.world_positions() @ result.up
    for i, j in enumerate(result.contacts.joints):  # each contact joint at its own stance height
        on = result.contacts.flags[:, i]
        assert np.abs(pos[on, j] - result.floor - result.stance[int(j)]).max() <= LIMIT * height


def test_feet_and_root_scale_whatever_the_names():
    """An anonymised target (meaningless names, siblings shuffled): the same root scale (from the
    legs its structure gives) and feet that stand, toes found as the feet's child chains."""
    motion = load(CMU)
    named = load(MIXAMO).skeleton
    anonymous, old = anonymise(named, 5)
    result = retarget(motion, anonymous, target_up="y")
    reference = retarget(motion, named, target_up="y")
    assert result.scale == pytest.approx(reference.scale, rel=1e-9)
    labels = reference.target_labels
    assert result.scale == pytest.approx(
        leg_length(named, labels) / leg_length(motion.skeleton, reference.source_labels)
    )
    assert sorted(old[result.contacts.joints]) == sorted(reference.contacts.joints)
    assert_feet_stand(retarget_metrics(motion, result))


def steep_footed(skeleton: Skeleton) -> Skeleton:
    """``skeleton`` with other legs and feet: hips wider and lower, longer shins, the ankle 9 cm
    above the toe (the synthetic foot's is 6 cm) and a 10 cm toe (6 cm)."""
    rest = skeleton.rest_translations.copy()
    offsets = skeleton.end_site_offsets.copy()
    for s in ("Left", "Right"):
        side = 1.0 if s == "Left" else -1.0
        rest[skeleton.index(f"{s}UpLeg")] = [0.12 * side, -0.08, 0.0]
        rest[skeleton.index(f"{s}Foot")] = [0.0, -0.46, 0.0]
        rest[skeleton.index(f"{s}ToeBase")] = [0.0, -0.09, 0.09]
        offsets[list(skeleton.end_site_parents).index(skeleton.index(f"{s}ToeBase"))] = [0.0, 0.0, 0.1]
    return Skeleton(skeleton.names, skeleton.parents, rest, skeleton.rest_rotations, skeleton.channels,
                    skeleton.end_site_parents, offsets)  # fmt: skip


def test_synthetic_walk_onto_other_feet():
    walk = synthetic.walk(240)
    target = steep_footed(synthetic.humanoid())
    result = retarget(walk, target, options=RetargetOptions(blend=0.15))
    figures = retarget_metrics(walk, result)
    assert_feet_stand(figures)
    before = feet_figures(walk, unplanted(result))
    assert max(before["float_max_h"], before["penetration_max_h"]) > LIMIT
    # the planted toe lies on the floor at its rest height above the foot's lowest point
    height = standing_height(target, result.up)
    toe = target.index("LeftToeBase")
    column = list(result.contacts.joints).index(toe)
    on = result.contacts.flags[:, column]
    pos = result.motion.world_positions() @ result.up
    assert np.abs(pos[on, toe] - result.floor - result.stance[toe]).max() <= LIMIT * height


def test_foot_anchors_keep_the_target_foot_length():
    """A toe span overlapping an ankle span gets its anchor at the foot's own length from the
    ankle's anchor, towards the given toe anchor, at the toe anchor's height; a later ankle span
    under the same toe contact (the foot turning on its toes) gets its anchor at that length from
    the toe's."""
    up = np.array([0.0, 0.0, 1.0])
    n = 50
    ankle_flags, toe_flags = np.zeros(n, bool), np.zeros(n, bool)
    ankle_flags[2:14], toe_flags[8:40], ankle_flags[30:45] = True, True, True
    ankle_given = np.tile([1.0, 2.0, 0.08], (n, 1))
    ankle_given[30:] = [1.3, 2.6, 0.08]  # the heel comes down elsewhere: the foot turned
    toe_given = np.tile([1.0, 2.5, 0.02], (n, 1))  # 0.5 ahead: the scaled source's foot is longer
    ankle, toe = foot_anchors(ankle_flags, ankle_given, toe_flags, toe_given, 0.15, up)
    assert np.isnan(toe[~toe_flags]).all() and np.isnan(ankle[~ankle_flags]).all()
    held = toe[toe_flags]
    assert np.allclose(held, held[0])
    assert np.allclose(ankle[2:14], ankle_given[2])  # the first ankle span keeps its anchor
    assert np.linalg.norm(held[0] - ankle_given[2]) == pytest.approx(0.15)
    assert held[0][2] == pytest.approx(0.02) and held[0][0] == pytest.approx(1.0) and held[0][1] > 2.0
    assert np.allclose(ankle[30:45], ankle[30])
    assert np.linalg.norm(ankle[30] - held[0]) == pytest.approx(0.15) and ankle[30][2] == pytest.approx(0.08)
    away, given = (ankle[30] - held[0])[:2], (ankle_given[30] - held[0])[:2]  # towards the given ankle anchor
    assert np.allclose(away / np.linalg.norm(away), given / np.linalg.norm(given))


def test_heel_contact_ends_at_heel_off():
    """An ankle 'contact' whose last frames roll the foot onto its toes (or lift the heel above its
    stance) ends there; the frames with the heel down stay."""
    n = 40
    skeleton = synthetic.humanoid()
    foot = foot_of(skeleton, skeleton.index("LeftFoot"))
    up = np.array([0.0, 1.0, 0.0])
    pos = np.zeros((n, skeleton.n_joints, 3))
    pitch = np.where(np.arange(n) < 25, 0.3, 0.3 + 0.05 * (np.arange(n) - 24))  # radians below horizontal
    pos[:, foot.ankle] = [0.0, 0.08, 0.0]
    pos[:, foot.toe] = np.stack((np.zeros(n), 0.08 - 0.13 * np.sin(pitch), 0.13 * np.cos(pitch)), axis=1)
    flags = np.zeros(n, bool)
    flags[5:35] = True
    flat = flags & (np.arange(n) < 25)
    trimmed = heel_contacts(pos, foot, up, flags, flat)
    spans = contact_spans(trimmed)
    assert spans.tolist() == [[5, 26]]  # 5° beyond the flat pitch after frame 26 (0.05 rad a frame)
    pos[30:, foot.ankle, 1] += 0.1
    pos[:3, foot.ankle, 1] += 0.1
    flags[:5] = True
    by_height = heel_contacts(pos, foot, up, flags, flat, floor=0.0, stance=0.08, tolerance=0.02)
    assert contact_spans(by_height).tolist() == [[3, 26]]


@pytest.mark.parametrize(
    ("source", "target", "before_float"),
    [
        (CMU_DANCE, MIXAMO, 0.0116),
        (CMU_DRIBBLE, CC, 0.2127),
        (BANDAI_DANCE, "cmu_bvh_cgspeed/02_01.bvh", 0.2308),
        ("bandai_namco_1/dataset-1_run_normal_001.bvh", "cmu_bvh_3dsmax/131_01.bvh", 0.0254),
        ("bandai_namco_1/dataset-1_run_normal_001.bvh", CC, 0.0313),
    ],
)
def test_dance_and_shuffling_feet_stand(source, target, before_float):
    """Clips that are not walks: a dance whose source foot flips in one frame at heel strike (CMU
    05_06, which floated 1.16 % of the height), and toes down for seconds while they wander over a
    tenth of the body (CMU 06_12 dribbling, Bandai's dance: one median anchor out of the leg's reach,
    floating 21–23 %), and a run's toe-off with the stance leg out of reach behind the body (Bandai
    run → 3ds Max names, 2.54 %, → Character Creator, 3.13 %: the heel now rises about the planted
    toe, and where even that cannot reach, the toe slides towards the hip instead of lifting — by
    less than the source's own toes slide). ``before_float``: what the previous planting left (for the record)."""
    motion = load(source)
    result = retarget(motion, load(target).skeleton, target_up="y")
    figures = retarget_metrics(motion, result)
    assert_feet_stand(figures)
    assert figures["float_max_h"] < before_float / 2
    before = feet_figures(motion, unplanted(result))
    assert before["float_max_h"] > LIMIT or before["penetration_max_h"] > LIMIT


def test_a_wandering_contact_is_cut_into_anchored_pieces():
    """A toe down for 3 s that creeps 30 cm: pieces, each anchored within reach of where the toe is;
    a contact that stays within the radius keeps its one median anchor."""
    up = np.array([0.0, 0.0, 1.0])
    n = 120
    pos = np.zeros((n, 3))
    pos[:, 0] = np.linspace(0.0, 0.3, n)  # creeping along x
    pos[:, 2] = 0.02 + 0.001 * np.sin(np.arange(n))  # heights do not count
    flags = np.zeros(n, bool)
    flags[10:110] = True
    out, anchors = split_drifting(pos, flags, up, 0.05)
    spans = contact_spans(out)
    assert len(spans) > 4 and not out[:10].any() and not out[110:].any()
    assert out.sum() >= flags.sum() - len(spans) - 1  # a frame of flight between pieces (and a last lone frame)
    horizontal = np.abs(pos[out, 0] - anchors[out, 0])
    assert horizontal.max() <= 0.05 / 2 + 1e-12
    assert np.isnan(anchors[~out]).all()
    still = pos.copy()
    still[:, 0] = 0.01 * np.sin(np.arange(n))
    kept, anchor = split_drifting(still, flags, up, 0.05)
    assert np.array_equal(kept, flags) and np.allclose(anchor[flags], np.median(still[flags], axis=0))
