"""Foot planting: pin feet to their contact anchors with two-link IK, blended in and out.

During a contact span the foot joint is moved onto the span's anchor. Around it the offset
fades out like a displacement map: at a flight frame t the offset is
w_prev·d(last contact frame) + w_next·d(next contact frame), with
w = smoothstep(1 − gap/(blend + 1)) of the distance in frames to that contact (weights
renormalised to sum ≤ 1 when two contacts are close), and the IK result is slerped in with
the same weight, so nothing pops at contact edges. Legs are solved one after another, each
on the forward kinematics of the motion already changed by the previous one.

A fixed anchor is often out of reach at the ends of a real stance: the leg is nearly
straight at heel strike, and the ankle rolls forward and up before toe-off while the hip
keeps moving. ``out_of_reach`` chooses what gives, for targets farther than
r = (1 − 1.5·softness)·reach from the hip (i.e. in or beyond the soft-clamp zone):

- ``"lift"`` (default): the target rises along up by the least amount that puts it at
  distance r, as a heel lifts before toe-off; it keeps its horizontal place, so nothing
  slides. On CMU walks the ankle rises by about 1 % of the body size on average over the
  contact frames, at most 7 % in the last frames before toe-off.
- ``"drop"``: the pelvis is lowered along −up instead by the least amount that brings
  every planted target within r, capped at ``max_drop`` body sizes and passed through a
  smooth upper envelope (running maximum, then moving average, over the blend window);
  feet not in contact are held at their original world positions by the same IK. The
  body keeps its foot heights but walks lower (about 4 % of the body size on CMU walks).
- ``None``: nothing; the soft clamp stops the foot short of its anchor along the
  hip→anchor line, so some sliding remains.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..contacts import Contacts, moving_average
from ..kinematics import forward_kinematics
from ..limbs import limb_chain
from ..motion import Motion
from ..skeleton import Skeleton
from .common import is_ancestor, smoothstep
from .two_link import DEFAULT_SOFTNESS, apply_two_link

BLEND = 0.2  # seconds of fade on each side of a contact (how far planting spreads a change)


def blended_offsets(
    positions: np.ndarray, flags: np.ndarray, anchors: np.ndarray, blend: int
) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (T, 3) that move a joint onto its anchors, and IK weights (T,) in [0, 1].

    positions: (T, 3) the joint's world positions; flags: (T,) contact; anchors: (T, 3),
    read only in contact frames; blend: fade length in frames on each side of a contact.
    """
    n = len(flags)
    frames = np.arange(n)
    d = np.where(flags[:, None], anchors - positions, 0.0)
    prev = np.maximum.accumulate(np.where(flags, frames, -1))
    nxt = np.minimum.accumulate(np.where(flags, frames, n)[::-1])[::-1]
    w_prev = np.where(prev >= 0, smoothstep(1.0 - (frames - prev) / (blend + 1.0)), 0.0)
    w_next = np.where(nxt < n, smoothstep(1.0 - (nxt - frames) / (blend + 1.0)), 0.0)
    total = w_prev + w_next
    scale = np.where(total > 1.0, 1.0 / np.maximum(total, 1e-300), 1.0)
    w_prev, w_next = w_prev * scale, w_next * scale
    offset = w_prev[:, None] * d[np.maximum(prev, 0)] + w_next[:, None] * d[np.minimum(nxt, n - 1)]
    weight = np.where(flags, 1.0, np.minimum(total, 1.0))
    return np.where(flags[:, None], d, offset), weight


def lift_to_reach(hip: np.ndarray, target: np.ndarray, reach: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Targets (T, 3) raised along ``up`` by the least amount that puts them within ``reach`` of the hip.

    hip, target: (T, 3); reach: (T,); up: (3,) unit vector. Targets already within reach are
    unchanged; a target more than ``reach`` away horizontally goes up to the hip's height
    (the closest it can get without sliding; the soft clamp then stops it short).
    """
    v = target - hip
    below = -(v @ up)
    horizontal_sq = np.sum(v * v, axis=-1) - below**2
    allowed = np.sqrt(np.maximum(reach**2 - horizontal_sq, 0.0))  # vertical distance at full reach
    lift = np.where(np.sum(v * v, axis=-1) > reach**2, np.maximum(below - allowed, 0.0), 0.0)
    return target + lift[:, None] * up


def required_drop(hip: np.ndarray, target: np.ndarray, reach: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Least δ ≥ 0 (T,) with |target − (hip − δ·up)| ≤ reach; 0 where lowering cannot help.

    hip, target: (T, 3); reach: (T,) allowed distance; up: (3,) unit vector.
    """
    v = target - hip
    a = v @ up
    excess = np.sum(v * v, axis=-1) - reach**2
    disc = a * a - excess
    drop = -a - np.sqrt(np.maximum(disc, 0.0))
    return np.where((excess > 0) & (disc >= 0), np.maximum(drop, 0.0), 0.0)


def upper_envelope(x: np.ndarray, window: int) -> np.ndarray:
    """A smooth curve (T,) never below x (T,): running maximum, then moving average, over 2·window + 1 frames."""
    if window < 1 or len(x) < 2:
        return x
    padded = np.pad(x, window, mode="edge")
    view = np.lib.stride_tricks.sliding_window_view(padded, 2 * window + 1)
    return moving_average(view.max(axis=-1), 2 * window + 1)


def placement_joint(skeleton: Skeleton, legs: list[tuple[int, int, int]]) -> int:
    """The joint that places the body: the nearest common ancestor of the legs' upper joints
    that has animated position channels (the root in CMU files, ``Hips`` in Bandai's)."""
    j = legs[0][0]
    while j >= 0 and not all(is_ancestor(skeleton, j, leg[0]) for leg in legs):
        j = int(skeleton.parents[j])
    moving = skeleton.has_position_channels
    while j >= 0 and not moving[j]:
        j = int(skeleton.parents[j])
    return max(j, 0)


def _lower_root(motion: Motion, legs, targets, weights, up: np.ndarray, softness: float, frames: int, cap: float):
    """Lower the placement joint (by at most ``cap``) so the planted targets come within reach;
    returns (motion, drop (T,))."""
    pos, rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    drops = [
        weight * required_drop(pos[:, leg[0]], target, _limb_reach(pos, leg, softness), up)
        for leg, target, weight in zip(legs, targets, weights)
    ]
    drop = upper_envelope(np.minimum(np.max(drops, axis=0), cap), frames)
    out = motion.copy()
    root = placement_joint(motion.skeleton, legs)
    parent = motion.skeleton.parents[root]
    shift = -drop[:, None] * up
    if parent >= 0:
        shift = quat.rotate(quat.conjugate(rot[:, parent]), shift)
    out.translations[:, root] += shift
    return out, drop


def _limb_reach(pos: np.ndarray, leg: tuple[int, int, int], softness: float) -> np.ndarray:
    """(T,) distance from the upper joint the end can reach exactly (outside the soft zone)."""
    upper, mid, end = leg
    reach = np.linalg.norm(pos[:, mid] - pos[:, upper], axis=-1) + np.linalg.norm(pos[:, end] - pos[:, mid], axis=-1)
    return (1.0 - 1.5 * softness) * reach


def plant_feet(
    motion: Motion,
    contacts: Contacts,
    legs: list[tuple[int, int, int]] | None = None,
    blend: float = BLEND,
    keep_foot_orientation: bool = True,
    out_of_reach: str | None = "lift",
    max_drop: float = 0.05,
    softness: float = DEFAULT_SOFTNESS,
) -> Motion:
    """A copy of ``motion`` whose contact joints stay on their anchors while in contact.

    contacts: from :func:`core.contacts.detect_contacts` (flags, anchors, up axis per joint).
    legs: (upper, mid, end) per contact joint, default :func:`core.limbs.limb_chain` of
    each (hip, knee, ankle). blend: fade time in seconds on each side of a contact.
    keep_foot_orientation: keep each foot's world orientation as in ``motion``.
    out_of_reach: "lift", "drop" or None, what gives where an anchor is out of reach (see
    the module notes); max_drop: the cap of "drop", in body sizes (:meth:`Skeleton.size`).
    """
    if out_of_reach not in ("lift", "drop", None):
        raise ValueError(f"out_of_reach must be 'lift', 'drop' or None, got {out_of_reach!r}")
    legs = [limb_chain(motion.skeleton, int(j)) for j in contacts.joints] if legs is None else legs
    frames = max(1, round(blend * motion.fps))
    pos = motion.world_positions()
    plans = [
        blended_offsets(pos[:, leg[2]], contacts.flags[:, i], contacts.anchors[:, i], frames)
        for i, leg in enumerate(legs)
    ]
    targets = [pos[:, leg[2]] + offset for leg, (offset, _) in zip(legs, plans)]
    weights = [weight for _, weight in plans]
    out = motion.copy()
    if out_of_reach == "lift":
        targets = [
            lift_to_reach(pos[:, leg[0]], target, _limb_reach(pos, leg, softness), contacts.up)
            for leg, target in zip(legs, targets)
        ]
    elif out_of_reach == "drop":
        cap = max_drop * motion.skeleton.size()
        out, drop = _lower_root(motion, legs, targets, weights, contacts.up, softness, frames, cap)
        # Where the pelvis moved, the other frames hold the feet where they were (weight → 1 as drop grows).
        scale = 0.01 * motion.skeleton.size()
        weights = [np.maximum(w, smoothstep(drop / scale)) for w in weights]
    for (upper, mid, end), target, weight in zip(legs, targets, weights):
        world = forward_kinematics(out.skeleton, out.translations, out.rotations)
        options = {"keep_end_orientation": keep_foot_orientation, "softness": softness, "world": world}
        out = apply_two_link(out, upper, mid, end, target, weight, **options)
    return out
