"""Physics on clips as users bring them: a root that teleports mid-clip, a clip whose poses are held for several
frames (a 30 fps capture written at 120 fps). References: the clip's own construction (where the teleport was
put, how many frames each pose was held) and the same clip without the defect."""

import numpy as np
import pytest

from core import synthetic
from core.editing.timing import resample
from core.physics.apply import PhysicsSettings, apply_physics, stretches, teleport_steps

QUICK = PhysicsSettings(target_mass=70.0, balance=False, torques=False, momentum=False)


@pytest.fixture(scope="module")
def walk():
    return synthetic.walk(240)  # 4 s at 60 fps, metres, Y up


def teleported(motion, at: int, offset) -> object:
    """``motion`` with its root moved by ``offset`` (metres) from frame ``at`` on: two takes spliced there."""
    out = motion.copy()
    out.translations[at:, 0] += np.asarray(offset, dtype=float)
    return out


@pytest.mark.parametrize("offset", [(0.0, 0.3, 0.0), (0.0, -0.3, 0.0), (0.3, 0.0, 0.0)], ids=["up", "down", "side"])
@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0, 120.0])
def test_a_root_teleport_cuts_the_clip_there(walk, offset, fps):
    """A 30 cm step of the root in one frame is a jump whatever the frame rate (before: no cut, the jump steps'
    pose distance weighs the root's travel too little to see it); the same walk without it is not cut."""
    clip = resample(walk, fps)
    at = clip.n_frames // 2
    assert len(teleport_steps(clip)) == 0 and stretches(clip, 8) == ([(0, clip.n_frames)], [])
    assert list(teleport_steps(teleported(clip, at, offset))) == [at - 1]
    assert stretches(teleported(clip, at, offset), 8)[0] == [(0, at), (at, clip.n_frames)]


def test_a_held_still_clip_or_a_small_slip_is_no_teleport(walk):
    """A pose held 2 s with sub-millimetre noise on its root (median step ~0: every step is large against it), and a
    2 cm slip of the root in one frame (slower than a body can move its root in a frame), are not cut."""
    still = walk.frames(np.zeros(120, dtype=int))
    still.translations[:, 0] += np.random.default_rng(0).normal(0.0, 1e-4, (120, 3))
    assert len(teleport_steps(still)) == 0
    assert len(teleport_steps(teleported(walk, 120, (0.02, 0.0, 0.0)))) == 0


def test_the_teleport_no_longer_stands_in_the_figures_as_a_torque(walk):
    """Solved through apply_physics, the input's worst |τ|/limit of the spliced walk is the clean walk's (within
    the noise of the cut's two clip edges), not the teleport's acceleration (before: 30 cm in 1/60 s read as a
    worst |τ|/limit 1.95 against the clean walk's 1.39)."""
    clean = apply_physics(walk, QUICK, unit=1.0).figures["before"]["torque_worst_ratio"]
    out = apply_physics(teleported(walk, 120, (0.0, 0.3, 0.0)), QUICK, unit=1.0)
    assert out.figures["stretches"] == [[0, 120], [120, 240]]
    assert out.figures["before"]["torque_worst_ratio"] < 1.05 * clean
