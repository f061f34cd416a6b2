"""Motion editing (MotionPro): clip operations, transitions, body-part blending, interpolation,
PCA synthesis and key edits with falloff. One concept per module; see each module's notes.

Shared conventions (:mod:`.root`): the pelvis is the root whose position and heading (yaw about
the up axis, detected or given) continue across edits; whole-body moves are rigid transforms of
the root joints; poses of two motions are compared and mixed with every frame moved over the
origin at heading 0.
"""

from .blend import blend_parts
from .clips import Clip, concatenate, copy, cut, paste, repeat, reverse
from .conform import conform
from .continuity import JoinReport, join_continuity
from .cycles import Cycle, cut_cycles
from .events import Events, foot_strikes, match_events
from .interpolation import Interpolation, interpolate
from .keyedit import key_edit
from .pca import CyclePCA, fit_cycle_pca
from .root import State, Step, Track, rotate, track
from .timing import resample, sample, stretch, time_scale
from .transitions import Join, Transition, find_join, transition

__all__ = [
    "Clip",
    "Cycle",
    "CyclePCA",
    "Events",
    "Interpolation",
    "Join",
    "JoinReport",
    "State",
    "Step",
    "Track",
    "Transition",
    "blend_parts",
    "concatenate",
    "conform",
    "copy",
    "cut",
    "cut_cycles",
    "find_join",
    "fit_cycle_pca",
    "foot_strikes",
    "interpolate",
    "join_continuity",
    "key_edit",
    "match_events",
    "paste",
    "repeat",
    "resample",
    "reverse",
    "rotate",
    "sample",
    "stretch",
    "time_scale",
    "track",
    "transition",
]
