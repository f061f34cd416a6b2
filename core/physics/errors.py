"""The one error type of the physics layer, and the check every solve makes of its input first."""

from __future__ import annotations

import numpy as np

from ..io.reading import representable
from ..motion import Motion


class PhysicsError(ValueError):
    """Physics cannot run on this input: settings out of range, a body without feet or contacts,
    no stretch long enough to solve. A ValueError, so callers that catch those still do; callers
    that must tell physics failures apart (the Retarget operator, ``scripts/retarget.py``) catch
    this type instead of reading the message."""


def check_pose_values(motion: Motion, first_frame: int = 0) -> None:
    """PhysicsError naming the first frame (numbered from ``first_frame``) and joint whose translation or rotation
    is not finite or beyond ±1e12: nothing can be measured there, and one NaN spreads through the derivatives
    and plans to every frame (CMU 02_01 with one NaN rotation came back with NaN on every joint and a NaN worst
    |τ|/limit, without an error)."""
    bad = ~(representable(motion.translations).all(axis=2) & representable(motion.rotations).all(axis=2))
    if bad.any():
        t, j = np.argwhere(bad)[0]
        raise PhysicsError(
            f"frame {first_frame + int(t)}: {motion.skeleton.names[int(j)]}'s pose is not finite (NaN, infinite or "
            "beyond ±1e12): fix or cut that frame first"
        )
