"""The give-back's windowed trials (:class:`core.physics.guard._NearRealiser`) against realising the whole clip."""

import numpy as np
import pytest

from core.contacts import bearing, detect_contacts
from core.io.bvh import read_bvh
from core.physics.body import body_model
from core.physics.dynamics import torque_ratios
from core.physics.guard import _blend_back, _NearRealiser
from core.physics.metrics import analyse
from core.physics.planting import _plant, with_toes
from tests.conftest import shared_file


@pytest.fixture(scope="module")
def jumps():
    """CMU 01_01's jumps 1.4× onto 90 kg, a solved-like motion (its root swayed), the input and what the guard reads."""
    source = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 420)).scaled(1.4)
    feet = detect_contacts(source)
    contacts = with_toes(source, feet)
    body = body_model(source.skeleton, 90.0, unit=0.056, up=feet.up)
    measure = {"smooth": 0.2, "heel": 0.25, "width": 0.5, "ground": analyse(source, contacts, body).support.ground}
    motion = source.copy()
    motion.translations[:, 0] += 1.5 * np.sin(np.linspace(0.0, 6.0, source.n_frames))[:, None] * np.array([1, 0, 0.5])
    return _plant(motion, feet), source, feet, contacts, body, measure


def whole(motion, source, feet, contacts, body, measure, level):
    """The do-no-harm guard's own realise: blended, planted in proportion 1 − level, judged on the whole clip."""
    blend = _blend_back(motion, source, level)
    trial = _blend_back(_plant(blend, feet), blend, level)
    return trial, analyse(trial, bearing(contacts, trial.world_positions()), body, **measure)


@pytest.mark.parametrize("span", [(150, 230), (0, 40), (380, 419)])  # inside, both ends
def test_a_windowed_trial_equals_the_whole_clip_realised(jumps, span):
    motion, source, feet, contacts, body, measure = jumps
    t = motion.n_frames
    base = np.zeros(t)
    base[300:330] = 1.0  # a level kept earlier
    level = base.copy()
    level[span[0] : span[1]] = np.maximum(level[span[0] : span[1]], np.sin(np.linspace(0, np.pi, span[1] - span[0])))
    near = _NearRealiser(motion, source, feet, contacts, body, measure)
    near.keep(base)
    trial, an, _ = near(level)
    ref, ref_an = whole(motion, source, feet, contacts, body, measure, level)
    assert np.abs(trial.translations - ref.translations).max() <= 1e-12
    assert np.abs(trial.rotations - ref.rotations).max() <= 1e-12
    np.testing.assert_allclose(an.kin.acc, ref_an.kin.acc, atol=1e-8)
    # the least split's worst ratio per frame: as the whole clip's within the interior-point solver's tolerance but
    # on the few frames its twelve steps leave short of converged (a frame's steps depend on the batch it is solved
    # in: its padding rows; near the clip's ends here, up to 0.011), where it is within 0.02
    worst, ref_worst = (torque_ratios(a.torques, body).max(axis=1) for a in (an, ref_an))
    assert np.mean(np.abs(worst - ref_worst) <= 1e-4) >= 0.98 and np.abs(worst - ref_worst).max() <= 0.02
    np.testing.assert_array_equal(an.support.flags, ref_an.support.flags)
    np.testing.assert_array_equal(an.support.steady, ref_an.support.steady)  # the flights' contacts too
    same = np.isfinite(ref_an.zmp).all(axis=-1)
    assert (np.isfinite(an.zmp).all(axis=-1) == same).all()
    assert np.abs(an.zmp[same] - ref_an.zmp[same]).max() <= 1e-6 * body.height / body.unit
    # the trial did change the clip there (the test would pass vacuously otherwise)
    assert np.abs(trial.translations - near.base[0].translations).max() > 0.1


def test_an_adopted_trial_is_the_base_of_the_next(jumps):
    motion, source, feet, contacts, body, measure = jumps
    t = motion.n_frames
    near = _NearRealiser(motion, source, feet, contacts, body, measure)
    near.keep(np.zeros(t))
    first = np.zeros(t)
    first[100:160] = 0.5  # a share: the adopted base's planting must be the blend's, not the input's
    near.adopt(*near(first))
    second = first.copy()
    second[250:290] = 0.5
    trial, an, _ = near(second)
    ref, ref_an = whole(motion, source, feet, contacts, body, measure, second)
    assert np.abs(trial.rotations - ref.rotations).max() <= 1e-12
    worst, ref_worst = (torque_ratios(a.torques, body).max(axis=1) for a in (an, ref_an))
    assert np.mean(np.abs(worst - ref_worst) <= 1e-4) >= 0.98 and np.abs(worst - ref_worst).max() <= 0.02
