"""No pops in the retarget's planted feet.

A contact that wanders (a toe down for a second while it creeps over a tenth of the body) is cut into
pieces, each pinned at its own median (:func:`core.retarget.feet.split_drifting`). With one frame of flight
between pieces, planting's blend (:func:`core.ik.plant.blended_offsets`) renormalised the two contacts'
weights there, so the planted joint jumped from one anchor to the next in two frames: CMU 131_03 (the hop)
on a 1.4x copy of its own skeleton had 23 frames where a joint stepped more than 1 % of the stature beyond
the source's step (× 1.4), the worst 2.6 % (the left ankle at frames 1002-1003 and 600-601, the left toe
at 171 and 721). Now the pieces are 0.1 s apart (:func:`core.retarget.feet.widen_splits`) and across a gap
that short the offset passes from one anchor's to the next's along the gap: no frame over 1 % (the worst
0.85 %), the feet still held (ankle and toe skating 0 on the contact frames).
"""

import numpy as np

from core.contacts import contact_spans
from core.ik.plant import blended_offsets
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.retarget import retarget, retarget_metrics
from core.retarget.feet import _landings, split_drifting, widen_splits
from tests.conftest import shared_file

POP = 0.01  # of the stature, in one frame, beyond the source's own step
SKATE = 0.001  # heights per second: the feet tests' bound on a planted joint's slide


def test_a_short_gap_moves_the_offset_from_one_anchor_to_the_next_without_a_jump():
    """Two contacts 7 frames apart whose anchors are 1.2 apart (the joint itself still): the offset goes from
    the first anchor's to the second's; smoothstep over the 8 steps of the gap moves at most 1.5 / 8 of the
    difference in a frame (its steepest slope), where renormalised weights jumped 45 % of it at the edges."""
    flags = np.zeros(60, dtype=bool)
    flags[20:30] = flags[37:45] = True
    positions = np.zeros((60, 3))
    anchors = np.where(flags[:, None], [[2.5, 0.0, 0.0]], np.nan)
    anchors[37:45] = [3.7, 0.0, 0.0]
    offset, weight = blended_offsets(positions, flags, anchors, blend=24)
    assert np.allclose(offset[flags], anchors[flags]) and np.allclose(weight[29:38], 1.0)
    steps = np.abs(np.diff(offset[29:38, 0]))
    assert steps.max() <= 1.2 * 1.5 / 8 + 1e-9
    assert np.all(np.diff(offset[29:38, 0]) >= 0.0)  # one way, from 2.5 to 3.7


def test_the_pieces_of_a_wandering_contact_are_a_gap_apart_and_none_is_dropped():
    """A toe down for 100 frames creeping 30 cm, cut into pieces of 10 frames one frame apart (radius 5 cm: a
    piece ends where the toe is 2.5 cm from where it began): the flights between them widened to 6 frames (2
    frames taken from the piece before, 3 from the one after); every piece kept (each keeps at least 2
    frames), anchored at its own median."""
    up = np.array([0.0, 0.0, 1.0])
    pos = np.zeros((120, 3))
    pos[:, 0] = np.linspace(0.0, 0.3, 120)
    flags = np.zeros(120, bool)
    flags[10:110] = True
    pieces, _ = split_drifting(pos, flags, up, 0.05, shortest=4)
    out, anchors = widen_splits(pos, flags, pieces, gap=6, keep=2)
    before, after = contact_spans(pieces), contact_spans(out)
    assert len(before) > 4 and len(after) == len(before)
    assert np.all(after[1:, 0] - after[:-1, 1] == 6)
    assert np.all(after[:, 1] - after[:, 0] >= 2) and not (out & ~pieces).any()
    for a, b in after:
        assert np.allclose(anchors[a:b], np.median(pos[a:b], axis=0))
    assert np.isnan(anchors[~out]).all()


def test_the_pieces_keep_the_frames_where_the_other_joint_of_the_foot_lands_and_lifts():
    """The same creeping toe, its heel down over frames 40-79: widening the flights to 8 frames takes none of
    the heel's first or last 2 frames (8 / 4) from the toe (a toe lifted just before its heel lands, the heel
    came down in three frames: 131_01 onto the CMU skeleton, 4.2 % of the height in a frame); the flight beside
    them is widened from the other piece instead (frames 43-49 after the piece ending at 42)."""
    up = np.array([0.0, 0.0, 1.0])
    pos = np.zeros((120, 3))
    pos[:, 0] = np.linspace(0.0, 0.3, 120)
    flags = np.zeros(120, bool)
    flags[10:110] = True
    heel = np.zeros(120, bool)
    heel[40:80] = True
    pieces, _ = split_drifting(pos, flags, up, 0.05, shortest=4)
    out, _ = widen_splits(pos, flags, pieces, gap=8, keep=2, partner=heel)
    alone, _ = widen_splits(pos, flags, pieces, gap=8, keep=2)
    assert pieces[[40, 41, 78, 79]].all() and out[[40, 41, 78, 79]].all()
    assert not alone[[40, 41]].all()  # without the heel those frames were taken
    spans = contact_spans(out)
    assert len(spans) == len(contact_spans(pieces))
    assert [42, 50] in (np.stack((spans[:-1, 1], spans[1:, 0]), axis=1)).tolist()


def test_a_contact_at_the_clips_edges_did_not_land_or_lift_there():
    """The frames widening keeps for the other joint of the foot are those where it lands or lifts from a flight:
    a heel down from the clip's first frame did not land there, one down to its last frame does not lift, and the
    one-frame flight between two pieces of a split contact is neither."""
    heel = np.zeros(120, bool)
    heel[0:40] = heel[41:80] = heel[100:120] = True
    near = _landings(heel, 2)
    assert not near[[0, 1, 38, 39, 41, 42, 118, 119]].any()
    assert near[[78, 79, 100, 101]].all()


def test_the_hop_on_a_larger_copy_steps_no_more_than_its_source():
    """CMU 131_03 onto a 1.4x copy of its skeleton: no joint steps more than 1 % of the stature in one frame
    beyond the source's own step × 1.4 (the worst was 2.6 %, 23 frames), and the feet still stand: ankles and
    toes planted on their contact frames (skating under 0.1 % of the height a second), no float over 1 %."""
    source = read_bvh(shared_file("cmu_bvh_3dsmax/131_03.bvh")).frames(slice(1, None))
    result = retarget(source, source.frames(slice(0, 2)).scaled(1.4).skeleton)
    names = result.motion.skeleton.names
    columns = [source.skeleton.index(name) for name in names]  # the copy's joints are the source's
    pt = result.motion.world_positions() - result.shift[:, None]
    ps = 1.4 * source.world_positions()[:, columns]
    beyond = np.linalg.norm(np.diff(pt, axis=0), axis=-1) - np.linalg.norm(np.diff(ps, axis=0), axis=-1)
    stature = standing_height(result.motion.skeleton, result.up)
    worst = np.unravel_index(np.argmax(beyond), beyond.shape)
    assert beyond.max() < POP * stature, (int(worst[0]), names[worst[1]], float(beyond.max() / stature))
    figures = retarget_metrics(source, result)
    assert figures["skating_ankle_after_h"] <= SKATE
    assert figures["skating_toe_after_h"] <= figures["skating_toe_source_h"] + SKATE
    assert figures["float_max_h"] <= 0.01 and figures["penetration_max_h"] <= 0.01


def test_the_clean_walk_onto_another_rig_steps_no_more_than_its_transfer():
    """CMU 131_01 (3ds Max names) onto the CMU cgspeed skeleton: no mapped joint steps more than 1 % of the
    height in one frame beyond its step before planting (the source's motion on the target's bones); there were
    26 such frames (the left toe's pieces, worst 2.4 %), and one at 362 (4.2 %) while a toe piece was cut short
    just before its heel landed."""
    source = read_bvh(shared_file("cmu_bvh_3dsmax/131_01.bvh"))
    result = retarget(source, read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).skeleton, target_up="y")
    joints = result.pairs[0]
    steps = [np.linalg.norm(np.diff(m.world_positions()[:, joints], axis=0), axis=-1)
             for m in (result.motion, result.unplanted)]  # fmt: skip
    height = standing_height(result.motion.skeleton, result.up)
    assert (steps[0] - steps[1]).max() < POP * height
