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
  horizontally within ``tolerance`` · height of its mapped anchor;
- feet that stand (:func:`feet_figures`, when feet were planted): ankle and toe skating of the
  result and of the source × s, each on the source's contact frames of that joint; floor
  penetration: the depth under the floor (``result.floor``) of the lowest joint or End Site of
  either foot, its maximum and the share of frames deeper than 0.1 % of the height; float: a
  contact joint's height above the floor minus its flat-stance height (``result.stance``) on
  its contact frames, the maximum;
- pops (:func:`steps_beyond_transfer`, when feet were planted): a mapped target joint's step in one
  frame minus its step before planting (the source's step × s on a scaled copy), in heights;
  ``pops`` counts the frames where some joint's exceeds ``POP`` (1 %: a foot or knee jumping where
  the performer's did not), ``pop_max_h`` is the worst.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts, foot_skating
from ..kinematics import forward_kinematics
from ..limbs import standing_height
from ..motion import Motion
from ..skeleton import Skeleton, rest_world
from .feet import foot_of, point_heights
from .mapping import mapping_pairs
from .pipeline import RetargetResult
from .transfer import mapped_ancestors

POP = 0.01  # heights a joint may step in one frame beyond its step before planting before it counts as a pop


def position_error(
    source_positions: np.ndarray, result: RetargetResult, height: float, motion: Motion | None = None
) -> np.ndarray:
    """(T, n) distances of the mapped target joints (of ``motion``, default the result) from
    their mapped source joints, in heights."""
    tk, sj = result.pairs
    target = (motion or result.motion).world_positions()[:, tk]
    return np.linalg.norm(target - result.map_points(source_positions[:, sj]), axis=-1) / height


def steps_beyond_transfer(result: RetargetResult, height: float) -> np.ndarray:
    """(T - 1,) per frame the largest step of a mapped target joint beyond its step in the transfer (the
    result before planting: the source's motion on the target's bones), in heights; negative where every
    joint steps less. A step is the distance a joint moves from the previous frame, relative to the root shift.
    On a target of the source's own proportions (a scaled copy) the transfer's step is the source's × s; on
    another rig the source's step × s misjudges limbs of other proportions (Bandai's dance onto the CMU
    skeleton: 907 frames, mostly forearms, against 345 of the transfer's, all legs and feet)."""
    tk = result.pairs[0]
    steps = [np.linalg.norm(np.diff(m.world_positions()[:, tk] - result.shift[:, None], axis=0), axis=-1)
             for m in (result.motion, result.unplanted)]  # fmt: skip
    return (steps[0] - steps[1]).max(axis=1) / height


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


def skating_by_joint(
    motion: Motion, contacts: Contacts, positions: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(distance (F,), seconds (F,)) each contact joint slides horizontally while in contact."""
    skating = foot_skating(motion, contacts, positions=positions)
    both = contacts.flags[1:] & contacts.flags[:-1]
    return skating.distance, both.sum(axis=0) / motion.fps


def _rate(distance: np.ndarray, seconds: np.ndarray, keep: np.ndarray) -> float:
    total = float(seconds[keep].sum())
    return float(distance[keep].sum()) / total if total > 0 else 0.0


def feet_figures(source: Motion, result: RetargetResult) -> dict:
    """Ankle and toe skating (target units per second; the source's × s), floor penetration and
    float in contact (target units, and ``_h`` in standing heights) of a planted result."""
    height = standing_height(result.motion.skeleton, result.up)
    contacts, src = result.contacts, result.source_contacts
    sk = result.motion.skeleton
    toes = {result.target_labels.get(f"toe.{s}") for s in "LR"}
    feet = [foot_of(sk, result.target_labels[f"foot.{s}"], result.target_labels.get(f"toe.{s}"))
            for s in "LR" if f"foot.{s}" in result.target_labels]  # fmt: skip
    toes |= {f.toe for f in feet}
    positions = result.motion.world_positions() - result.shift[:, None]
    distance, seconds = skating_by_joint(result.motion, contacts, positions)
    is_toe = np.isin(contacts.joints, [t for t in toes if t is not None])
    s_distance, s_seconds = skating_by_joint(source, src)
    labels = result.source_labels
    s_toes = [
        foot_of(source.skeleton, labels[f"foot.{s}"], labels.get(f"toe.{s}")).toe for s in "LR" if f"foot.{s}" in labels
    ]
    s_is_toe = np.isin(src.joints, [t for t in s_toes if t is not None])
    world = forward_kinematics(sk, result.motion.translations, result.motion.rotations)
    feet = feet or [foot_of(sk, int(j)) for j in contacts.joints]  # no feet labelled: the contact joints' subtrees
    lowest = np.min([point_heights(result.motion, f, result.up, world).min(axis=1) for f in feet], axis=0)
    depth = np.maximum(result.floor - lowest, 0.0)
    heights = world[0][:, contacts.joints] @ result.up
    stance = np.array([result.stance.get(int(j), 0.0) for j in contacts.joints])
    above = np.where(contacts.flags, heights - result.floor - stance, -np.inf)
    float_max = max(float(above.max()), 0.0) if contacts.flags.any() else 0.0
    out = {
        "skating_ankle_source": result.scale * _rate(s_distance, s_seconds, ~s_is_toe),
        "skating_ankle_after": _rate(distance, seconds, ~is_toe),
        "skating_toe_source": result.scale * _rate(s_distance, s_seconds, s_is_toe),
        "skating_toe_after": _rate(distance, seconds, is_toe),
        "penetration_max": float(depth.max()),
        "penetration_share": float(np.mean(depth > 1e-3 * height)),
        "float_max": float_max,
    }
    for key in ("skating_ankle_source", "skating_ankle_after", "skating_toe_source", "skating_toe_after",
                "penetration_max", "float_max"):  # fmt: skip
        out[key + "_h"] = out[key] / height
    return out


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
        beyond = steps_beyond_transfer(result, height)
        out |= {"pops": float((beyond > POP).sum()), "pop_max_h": float(max(beyond.max(initial=0.0), 0.0))}
        if result.floor is not None:
            out |= feet_figures(source, result)
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
