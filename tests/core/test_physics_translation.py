"""The physics wherever the capture stands: a clip moved along the floor keeps every figure.

The support hulls' tolerance (a cross product within ε counts as on a line) was scaled by the points'
distance from the origin, not by the support's own size. CMU 02_01 played 56 m from the origin (1,000
units along the floor, 1.4x onto 90 kg) then read 6 frames over a torque limit in the input, worst
|tau|/limit 1.56, instead of 3 (1.05): near-collinear points of the foot boxes became hull edges and
the least-torque split had the wrong hull. The solve then ended with the ZMP inside on 79.9 % of the
contact frames and 37 frames over a limit, against 100 % and none at the origin.
"""

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.physics.body import body_model
from core.physics.dynamics import torque_ratios
from core.physics.metrics import analyse, report
from core.physics.options import PhysicsOptions
from core.physics.planting import with_toes
from core.physics.solve import physics_retarget
from core.physics.support import hull_chain, hull_edges
from core.physics.units import likely_unit
from tests.conftest import shared_file

FAR = np.array([1000.0, 0.0, -400.0])  # scene units along the floor (CMU's units: 56 m and 23 m)


def hull_points(points: np.ndarray) -> set:
    """The vertices of the hull of one frame's points (P, 2), from the edge mask, as a set of tuples."""
    end, valid = hull_chain(points[None], hull_edges(points[None], np.ones((1, len(points)), dtype=bool)))
    return {tuple(np.round(p, 9)) for p in points[valid[0]]}


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e4, 1e5])
def test_a_foot_sized_hull_far_from_the_origin_keeps_its_corners(offset):
    """A 0.3 × 0.1 box and a point 0.15 past it, 1 mm below the line of its long side (a toe tip past a heel
    box): the box's corner on that side is inside the hull (scipy) wherever the box stands. With the tolerance
    scaled by the distance from the origin, at 1e4 (0.1, against a cross product of 3e-4) the corner's edge
    counted and the hull kept the corner."""
    box = np.array([[0.0, 0.0], [0.3, 0.0], [0.3, 0.1], [0.0, 0.1], [0.45, -0.001]])
    moved = box + offset
    reference = {tuple(np.round(p, 9)) for p in moved[ConvexHull(box).vertices]}
    assert hull_points(moved) == reference
    assert tuple(np.round(moved[1], 9)) not in hull_points(moved)


@pytest.fixture(scope="module")
def walk():
    """CMU 02_01 from frame 1 (its frame 0 is a T-pose), 1.4x taller, in its file's units, with metres per unit."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, None)).scaled(1.4)
    unit, _ = likely_unit(standing_height(motion.skeleton, np.array([0.0, 1.0, 0.0])))
    return motion, unit


def moved(motion, offset: np.ndarray):
    out = motion.copy()
    roots = np.flatnonzero(motion.skeleton.parents < 0)
    out.translations[:, roots] += offset
    return out


def analysed(motion, unit):
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=unit, up=contacts.up)
    return analyse(motion, with_toes(motion, contacts), body), body, contacts


def test_the_input_reads_the_same_torques_56_m_from_the_origin(walk):
    motion, unit = walk
    here, body, _ = analysed(motion, unit)
    there, _, _ = analysed(moved(motion, FAR), unit)
    np.testing.assert_allclose(torque_ratios(there.torques, body), torque_ratios(here.torques, body), atol=1e-6)
    a, b = report(here, body, motion), report(there, body, motion)
    assert a["torque_violation_frames"] == b["torque_violation_frames"] == 3  # measured: 3 at the origin
    assert b["zmp_inside_share"] == pytest.approx(a["zmp_inside_share"], abs=1e-9)


def test_the_solve_gives_the_same_result_56_m_from_the_origin(walk):
    motion, unit = walk
    results = []
    for m in (motion, moved(motion, FAR)):
        contacts = detect_contacts(m)
        body = body_model(m.skeleton, 90.0, unit=unit, up=contacts.up)
        results.append(physics_retarget(m, contacts, body, PhysicsOptions()))
    (here, a), (there, b) = results
    assert b["after"]["torque_violation_frames"] == a["after"]["torque_violation_frames"] == 0
    assert b["after"]["zmp_inside_share"] == pytest.approx(a["after"]["zmp_inside_share"], abs=0.005)
    assert b["after"]["torque_worst_ratio"] == pytest.approx(a["after"]["torque_worst_ratio"], abs=1e-3)
    np.testing.assert_allclose(moved(here, FAR).translations, there.translations, atol=1e-4 / unit)
