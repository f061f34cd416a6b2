"""Units of files that carry none: a human-sized height picks metres, centimetres, inches or CMU's units."""

import pytest

from core.io.convert import load_motion
from core.limbs import detect_up, standing_height
from core.physics.units import UNITS, height_warning, likely_unit, plausible
from tests.conftest import shared_file


@pytest.mark.parametrize("height, unit", [(1.75, "metres"), (175.0, "centimetres"), (1750.0, "millimetres"),
                                          (69.0, "inches"), (30.0, "CMU units (inches / 0.45)")])  # fmt: skip
def test_likely_unit_makes_the_height_human(height, unit):
    metres, name = likely_unit(height)
    assert name == unit and metres == UNITS[unit] and plausible(height * metres)


def test_no_unit_fits_a_point_or_a_giant():
    assert likely_unit(0.0) is None and likely_unit(float("nan")) is None and likely_unit(1e9) is None


def test_warning_only_outside_human_sizes():
    assert height_warning("target", 1.8, "1 m a unit", "x") is None
    text = height_warning("target", 200.0, "1 m a unit", "give the target height")
    assert "200 m" in text and "not human-sized" in text


@pytest.mark.parametrize(
    "path, unit",
    [("mixamo/Walk-In-Circle.bvh", "centimetres"), ("iclone_cc/005_06.bvh", "centimetres"),
     ("cmu_bvh_cgspeed/05_06.bvh", "CMU units (inches / 0.45)"), ("cmu_asf_amc/01_01.amc", "CMU units (inches / 0.45)")],
)  # fmt: skip
def test_real_captures_get_their_units(path, unit):
    motion = load_motion(shared_file(path))
    height = standing_height(motion.skeleton, detect_up(motion.skeleton, motion.world_positions()[::20]))
    metres, name = likely_unit(height)
    assert name == unit and 1.3 < height * metres < 2.1, height * metres
