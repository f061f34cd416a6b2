"""Windowed foot planting (:func:`core.physics.planting._plant_span`) against planting the whole clip."""

import numpy as np
import pytest

from core.contacts import detect_contacts
from core.io.bvh import read_bvh
from core.physics.planting import _plant, _plant_span
from tests.conftest import shared_file


@pytest.fixture(scope="module")
def jumps():
    """CMU 01_01 (jumps: flight phases and contact edges), its contacts and the feet planted."""
    motion = read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh")).frames(slice(1, 420)).scaled(1.4)
    feet = detect_contacts(motion)
    return motion, feet, _plant(motion, feet)


@pytest.mark.parametrize("span", [(150, 230), (0, 40), (380, 419), (200, 201)])  # inside, both ends, one frame
def test_windowed_planting_equals_whole_clip_planting(jumps, span):
    """The root moved and a hip turned on ``span`` (contacts kept, so contact edges are crossed by the blend):
    planting the window and splicing equals planting the whole changed clip on every frame."""
    motion, feet, planted = jumps
    lo, hi = span
    changed = motion.copy()
    bump = np.sin(np.linspace(0.0, np.pi, hi - lo + 2)[1:-1])
    changed.translations[lo:hi, 0] += 2.0 * bump[:, None] * np.array([1.0, -0.5, 0.7])
    changed.rotations[lo:hi, 1] = changed.rotations[lo:hi, 1] * np.cos(0.1) + np.array([0.0, np.sin(0.1), 0, 0])
    changed.rotations[lo:hi, 1] /= np.linalg.norm(changed.rotations[lo:hi, 1], axis=-1, keepdims=True)
    whole = _plant(changed, feet)
    window = _plant_span(changed, feet, planted, lo, hi)
    assert np.abs(window.translations - whole.translations).max() <= 1e-12
    assert np.abs(window.rotations - whole.rotations).max() <= 1e-12
    # the change did reach planting (the test would pass vacuously otherwise)
    assert np.abs(whole.translations - planted.translations).max() > 0.1
