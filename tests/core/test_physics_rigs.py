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


@pytest.mark.parametrize("rig", ["synthetic", "mixamo/Walk-In-Circle.bvh", "iclone_cc/005_06.bvh"])
def test_a_rig_whose_names_say_nothing_gets_the_same_body(rig):
    """Bones named ``bone0`` … (a custom rig mapped by hand): the arms found from the hierarchy as the legs
    are, so the body model is the named rig's, joint for joint. Before, the hands were looked for by name
    only: the six arm segments were missing and their mass went to the trunk and legs."""
    import dataclasses

    from core import synthetic

    named = synthetic.walk(2).skeleton if rig == "synthetic" else read_bvh(shared_file(rig)).skeleton
    generic = dataclasses.replace(named, names=tuple(f"bone{j}" for j in range(named.n_joints)))
    up = np.array([0.0, 1.0, 0.0])
    a, b = (body_model(sk, MASS, unit=0.01, up=up) for sk in (named, generic))
    assert not a.missing and not b.missing
    assert np.allclose(a.masses, b.masses) and np.allclose(a.com_local, b.com_local)
    assert np.allclose(a.inertia_local, b.inertia_local) and np.array_equal(a.torque_limits, b.torque_limits)
    arms = [a.segments[f"{s}_{side}"] for s in ("upper_arm", "forearm", "hand") for side in "LR"]
    assert sorted(b.segments[f"{s}_{side}"] for s in ("upper_arm", "forearm", "hand") for side in "AB") == sorted(arms)


def upper_body(motion):
    """``motion`` on its skeleton without the legs (an upper-body rig: hips, spine, arms and head)."""
    from core.motion import Motion
    from core.skeleton import Skeleton

    sk = motion.skeleton
    keep = [j for j, n in enumerate(sk.names) if not any(w in n for w in ("Leg", "Foot", "Toe"))]
    index = {j: k for k, j in enumerate(keep)}
    parents = np.array([index[int(sk.parents[j])] if sk.parents[j] >= 0 else -1 for j in keep])
    rest_rot = None if sk.rest_rotations is None else sk.rest_rotations[keep]
    part = Skeleton(tuple(sk.names[j] for j in keep), parents, sk.rest_translations[keep], rest_rot)
    return Motion(part, motion.translations[:, keep], motion.rotations[:, keep], motion.fps)


def test_a_rig_the_body_map_leaves_without_legs_is_refused_by_name():
    """An upper-body rig retargeted with Force Partial: the physics names the unmapped legs instead of taking
    the hands for feet (the two lowest leaf chains): that ran, on a 0.92 m body held off the floor on every
    frame, and reported the ZMP inside on 100 % of the contact frames. A whole body passes the check."""
    from core import synthetic
    from core.physics.apply import check_legs
    from core.physics.errors import PhysicsError
    from core.retarget.pipeline import RetargetOptions

    walk = synthetic.walk(120)
    result = retarget(walk, upper_body(walk).skeleton, options=RetargetOptions(allow_partial=True))
    settings = PhysicsSettings(torques=False, momentum=False)
    with pytest.raises(PhysicsError, match=r"legs unmapped \(left upper leg, left lower leg, left foot, right upper"):
        apply_physics(result.motion, settings, up=result.up, labels=result.target_labels)
    whole = retarget(walk, walk.skeleton)
    check_legs(body_model(whole.motion.skeleton, MASS, up=whole.up), whole.target_labels)
    labels = dict(whole.target_labels, **{"foot.L": whole.target_labels["toe.L"]})  # a map the body disagrees with
    with pytest.raises(PhysicsError, match=r"ankle joints \('LeftFoot', 'RightFoot'\) are not the bone map's"):
        check_legs(body_model(whole.motion.skeleton, MASS, up=whole.up), labels)
