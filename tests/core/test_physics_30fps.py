"""The physics on a 30 fps capture: its plans' control points at least ``MIN_PLAN_SPACING`` frames apart
(1/30 s would be every frame there, and the plans' shifts then turned at the frame rate), its contacts'
anchors eased over at least ``MIN_EASE`` frames (0.1 s would be three)."""

import numpy as np
import pytest

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.physics import planting
from core.physics.body import body_model
from core.physics.metrics import analyse, report
from core.physics.options import PhysicsOptions
from core.physics.plan import MIN_PLAN_SPACING
from core.physics.planting import _plant, eased_anchors, with_toes
from core.physics.solve import physics_retarget
from tests.conftest import shared_file


def jerk(motion) -> float:
    """Mean |third difference| of every joint's world position (the physics report's jerk, per frame³)."""
    return float(np.linalg.norm(np.diff(motion.world_positions(), 3, axis=0), axis=-1).mean())


@pytest.fixture(scope="module")
def bandai_walk():
    """The Bandai Namco walk (30 fps, cm), 1.4× onto 90 kg: its ZMP inside the feet on 8 % of its contact frames."""
    motion = read_bvh(shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh")).scaled(1.4)
    assert motion.fps == pytest.approx(30.0, rel=1e-3)
    contacts = detect_contacts(motion)
    return motion, contacts, body_model(motion.skeleton, 90.0, unit=0.01, up=contacts.up)


def test_the_solve_adds_little_jerk_at_30_fps(bandai_walk):
    """With a control every frame and anchors eased over three frames the solve took the walk's jerk to 2.39
    of the input's (1.16 now); the balance it brings stays (ZMP inside on 98.5 % of the contact frames then,
    99 % now)."""
    assert PhysicsOptions().plan_spacing * 30.0 < MIN_PLAN_SPACING  # the floor is what sets the spacing here
    motion, contacts, body = bandai_walk
    out, _ = physics_retarget(motion, contacts, body)
    assert jerk(out) / jerk(motion) < 1.5
    measured = report(analyse(out, with_toes(out, contacts), body), body, out)  # re-measured on the result
    assert measured["zmp_inside_share"] > 0.9


def test_planting_eases_over_at_least_min_ease_frames(monkeypatch):
    """The Bandai tired walk (30 fps): planting alone, eased over 0.1 s (three frames), took its jerk to 1.20
    of the input's; over six frames 1.07. (0.1 s asked for: the default ``plant_ease``, 0.2 s, is six frames here.)"""
    motion = read_bvh(shared_file("bandai_namco_1/dataset-1_walk_tired_001.bvh")).scaled(1.4)
    contacts = detect_contacts(motion)
    floored = jerk(_plant(motion, eased_anchors(motion, contacts, 0.1), hinge=True)) / jerk(motion)
    monkeypatch.setattr(planting, "MIN_EASE", 1)  # read by planting's eased_anchors
    three = jerk(_plant(motion, eased_anchors(motion, contacts, 0.1), hinge=True)) / jerk(motion)
    assert floored < three - 0.05
    assert floored < 1.12
