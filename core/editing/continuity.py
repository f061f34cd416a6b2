"""How smooth a join is: pose and velocity jumps across a range of frames against those inside clips.

Measures, per step between consecutive frames:

- pose step: the pose distance :class:`core.keyframes.distance.PoseMetric` between frame t and
  t+1 (joint rotation distances weighted by the hierarchy, plus root travel);
- velocity jump: |v(t+1) − v(t)| of world positions, where v(t) = (p(t+1) − p(t))·fps, in scene
  units per second, for the pelvis ("root") and as the mean over joints ("joints").

A join is as smooth as the clips when its largest jumps are no larger than what the clips do
themselves; the reference is a high percentile (95th) over the reference clips, robust to the
odd glitch (CMU's synthetic T-pose frame 0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..keyframes.distance import PoseMetric
from ..motion import Motion
from .root import pelvis_joint


def pose_steps(motion: Motion, metric: PoseMetric | None = None) -> np.ndarray:
    """(T-1,) pose distance between consecutive frames."""
    metric = PoseMetric.for_motion(motion) if metric is None else metric
    r, t = motion.rotations, motion.translations
    return metric(r[1:], t[1:], r[:-1], t[:-1])


def velocity_jumps(motion: Motion, positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """|Δv| (T-2,) of the pelvis and (T-2,) mean over joints, scene units per second."""
    pos = motion.world_positions() if positions is None else positions
    jump = np.linalg.norm(np.diff(pos, n=2, axis=0), axis=-1) * motion.fps
    return jump[:, pelvis_joint(motion)], jump.mean(axis=-1)


@dataclass
class JoinReport:
    """Largest jumps across a join and the reference level inside the clips (same units):
    pose distance per frame step, pelvis and mean-joint velocity jumps (scene units/s)."""

    pose_step: float
    pose_step_ref: float
    root_jump: float
    root_jump_ref: float
    joint_jump: float
    joint_jump_ref: float

    def ratios(self) -> dict[str, float]:
        """Join value over clip reference for each measure (≤ 1: as smooth as the clips)."""
        return {
            "pose_step": self.pose_step / max(self.pose_step_ref, 1e-300),
            "root_jump": self.root_jump / max(self.root_jump_ref, 1e-300),
            "joint_jump": self.joint_jump / max(self.joint_jump_ref, 1e-300),
        }

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "ratios": self.ratios()}


def join_continuity(
    motion: Motion, start: int, stop: int, references: list[Motion], percentile: float = 95.0
) -> JoinReport:
    """Jumps across frames [start, stop) of ``motion`` (a blend window, or start = stop for a hard
    cut before frame ``start``) against ``references`` (the clips it was made of).

    Every step that touches the range counts: pose steps from frame start−1 to stop, velocity
    jumps whose three frames overlap [start−1, stop].
    """
    metric = PoseMetric.for_motion(motion)
    first = max(start - 2, 0)
    near = motion.frames(slice(first, min(stop + 2, motion.n_frames)))  # only the frames that matter
    steps = pose_steps(near, metric)
    root, joints = velocity_jumps(near)
    lo, hi = max(start - 1, 0) - first, min(stop + 1, motion.n_frames - 1) - first
    vlo, vhi = max(start - 2, 0) - first, min(stop, motion.n_frames - 2) - first
    ref_steps = np.concatenate([pose_steps(r, metric) for r in references])
    ref_root, ref_joints = (np.concatenate(x) for x in zip(*(velocity_jumps(r) for r in references)))
    return JoinReport(
        float(steps[lo:hi].max()),
        float(np.percentile(ref_steps, percentile)),
        float(root[vlo:vhi].max()),
        float(np.percentile(ref_root, percentile)),
        float(joints[vlo:vhi].max()),
        float(np.percentile(ref_joints, percentile)),
    )
