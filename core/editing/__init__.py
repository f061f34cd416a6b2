"""Motion editing (MotionPro): clip operations, transitions, body-part blending, interpolation,
PCA synthesis and key edits with falloff. One concept per module; see each module's notes."""

from .clips import Clip, concatenate, copy, cut, paste, repeat, reverse
from .conform import conform
from .root import State, Step, Track, rotate, track
from .timing import resample, sample, stretch, time_scale

__all__ = [
    "Clip",
    "State",
    "Step",
    "Track",
    "concatenate",
    "conform",
    "copy",
    "cut",
    "paste",
    "repeat",
    "resample",
    "reverse",
    "rotate",
    "sample",
    "stretch",
    "time_scale",
    "track",
]
