"""Figures of a retarget, and the naive rotation copy it is compared with.

- position error: |p_t(k) − (s·A·p_s(j) + shift)| over the mapped pairs (k, j) and all frames,
  divided by the target's standing height (:func:`core.limbs.standing_height`), of the result and
  of the result before planting (the transfer alone; planting moves the legs on purpose);
- direction error: angle between each mapped bone (from its nearest mapped ancestor to it)
  and the corresponding aligned source bone, in degrees, before planting (0 when the rest
  corrections work, whatever the proportions);
- foot skating: :func:`core.contacts.foot_skating` with the source's contact frames on the
  target feet, in target units per second of contact, before and after planting, measured
  relative to the root shift (so an in-place result is measured on its treadmill); the
  source's own skating times s for reference;
- contact preservation: share of the source's contact frames in which the target foot is
  horizontally within ``tolerance`` · height of its mapped anchor.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts, foot_skating
from ..limbs import standing_height
from ..motion import Motion
from ..skeleton import Skeleton, rest_world
from .mapping import mapping_pairs
from .pipeline import RetargetResult
from .transfer import mapped_ancestors


def position_error(
    source_positions: np.ndarray, result: RetargetResult, height: float, motion: Motion | None = None
) -> np.ndarray:
    """(T, n) distances of the mapped target joints (of ``motion``, default the result) from
    their mapped source joints, in heights."""
    tk, sj = result.pairs
    target = (motion or result.motion).world_positions()[:, tk]
    return np.linalg.norm(target - result.map_points(source_positions[:, sj]), axis=-1) / height


def direction_error(
    source_positions: np.ndarray, source: Skeleton, result: RetargetResult, motion: Motion | None = None
) -> np.ndarray:
    """(T, m) angles in degrees between mapped target bones (of ``motion``, default the result)
    and their aligned source bones."""
    tk, sj = result.pairs
    target = result.motion.skeleton
    source_of = np.full(target.n_joints, -1)
    source_of[tk] = sj
    anc = mapped_ancestors(target.parents, source_of >= 0)
    pt, ps = rest_world(target)[0], rest_world(source)[0]
    bones = [(a, k) for k, a in zip(tk, anc[tk]) if a >= 0]
    bones = [(a, k) for a, k in bones if min(_length(pt, a, k), _length(ps, source_of[a], source_of[k])) > 1e-6]
    if not bones:
        return np.zeros((len(source_positions), 0))
    a, k = np.array(bones).T
    pos = (motion or result.motion).world_positions()
    vt = pos[:, k] - pos[:, a]
    vs = quat.rotate(result.alignment, source_positions[:, source_of[k]] - source_positions[:, source_of[a]])
    return np.degrees(np.arctan2(np.linalg.norm(np.cross(vt, vs), axis=-1), np.sum(vt * vs, axis=-1)))


def _skating(motion: Motion, result: RetargetResult) -> float:
    """Foot skating rate of ``motion`` with the result's contacts, relative to the root shift."""
    positions = motion.world_positions() - result.shift[:, None]
    return foot_skating(motion, result.contacts, positions=positions).total_rate


def _length(pos: np.ndarray, a: int, b: int) -> float:
    return float(np.linalg.norm(pos[a] - pos[b]))


def contact_preservation(motion: Motion, contacts: Contacts, tolerance: float) -> float:
    """Share of contact frames whose foot is horizontally within ``tolerance`` (scene units) of its anchor."""
    pos = motion.world_positions()[:, contacts.joints]
    d = pos - contacts.anchors
    d = d - (d @ contacts.up)[..., None] * contacts.up
    near = np.linalg.norm(d, axis=-1) <= tolerance
    return float(near[contacts.flags].mean()) if contacts.flags.any() else 1.0


def retarget_metrics(source: Motion, result: RetargetResult, tolerance: float = 0.02) -> dict:
    """The figures of the module notes as a flat dict of floats (distances in target units
    unless ``_h`` says in standing heights)."""
    height = standing_height(result.motion.skeleton, result.up)
    s_pos = source.world_positions()
    err = position_error(s_pos, result, height)
    transfer = position_error(s_pos, result, height, result.unplanted)
    angles = direction_error(s_pos, source.skeleton, result, result.unplanted)
    out = {
        "frames": float(source.n_frames),
        "mapped_bones": float(len(result.pairs[0])),
        "scale": result.scale,
        "height": height,
        "position_error_mean_h": float(err.mean()),
        "position_error_p95_h": float(np.percentile(err, 95)),
        "position_error_max_h": float(err.max()),
        "position_error_unplanted_mean_h": float(transfer.mean()),
        "direction_error_mean_deg": float(angles.mean()) if angles.size else 0.0,
        "direction_error_max_deg": float(angles.max()) if angles.size else 0.0,
    }
    if result.contacts is not None:
        before = _skating(result.unplanted, result)
        after = _skating(result.motion, result)
        source_rate = foot_skating(source, result.source_contacts, positions=s_pos).total_rate * result.scale
        out |= {
            "skating_source_scaled": source_rate,
            "skating_before": before,
            "skating_after": after,
            "contact_preservation_before": contact_preservation(result.unplanted, result.contacts, tolerance * height),
            "contact_preservation_after": contact_preservation(result.motion, result.contacts, tolerance * height),
        }
    return out


def copy_rotations(source: Motion, target: Skeleton, mapping: dict[str, str]) -> Motion:
    """The naive baseline: each mapped joint's pose rotation copied as is, the top mapped joint's
    local translation copied unscaled, everything else at rest. Right only between identical rest poses."""
    tk, sj = mapping_pairs(mapping, source.skeleton, target)
    out = Motion.rest(target, source.n_frames, source.fps)
    out.rotations[:, tk] = source.rotations[:, sj]
    root = tk[np.argmin(target.depths()[tk])]
    out.translations[:, root] = source.translations[:, sj[tk == root][0]]
    return out
