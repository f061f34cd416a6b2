"""Physics after retargeting onto the shared Mixamo and Character Creator rigs: the body model found
through the canonical body map, in metres (the rigs are in centimetres), and balance no worse."""

import numpy as np
import pytest

from core.io.bvh import read_bvh
from core.limbs import standing_height
from core.physics.apply import PhysicsSettings, apply_physics
from core.physics.body import body_model
from core.physics.units import likely_unit
from core.retarget.pipeline import retarget
from tests.conftest import shared_file

MASS = 80.0


@pytest.fixture(scope="module")
def walk():
    return read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, 121))  # 1 s after the T-pose


@pytest.mark.parametrize("rig", ["mixamo/Walk-In-Circle.bvh", "iclone_cc/005_06.bvh"])
def test_physics_on_a_retargeted_rig_has_human_units_and_keeps_balance(walk, rig):
    target = read_bvh(shared_file(rig)).skeleton
    result = retarget(walk, target)
    motion = result.motion
    height = standing_height(motion.skeleton, result.up)
    unit, name = likely_unit(height)
    assert name == "centimetres"
    body = body_model(motion.skeleton, MASS, unit=unit, up=result.up)
    assert 1.5 < body.height < 2.1  # Mixamo's Joe is 2.0 m, the CC base body 1.77 m
    assert body.masses.sum() == pytest.approx(MASS)
    assert not body.missing  # every de Leva segment found through the body map
    for role in ("hip", "knee", "ankle", "spine"):
        assert len(body.roles.get(role, [])) >= (2 if role != "spine" else 1)
    outcome = apply_physics(motion, PhysicsSettings(target_mass=MASS), unit=unit, up=result.up)
    f = outcome.figures
    assert f["target_height_m"] == pytest.approx(body.height) and f["unit_m"] == pytest.approx(0.01)
    assert f["after"]["zmp_inside_share"] >= f["before"]["zmp_inside_share"]
    assert f["after"]["deviation"] < 0.05
    assert np.all(np.isfinite(outcome.motion.translations)) and np.all(np.isfinite(outcome.motion.rotations))
