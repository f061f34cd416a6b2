"""Keyframes as an armature stores them: the keys each channel (F-curve) gets, and their handles.

The pose methods pick whole-pose keys; this module turns them into per-channel keys (LINEAR, or
Bezier with handles fitted so per-channel playback follows the slerp rebuild), and for the hybrid
lets each channel drop the grid keys it needs least. :func:`extract_channels` is the whole
extraction on channel values — the add-on and the plain-Python script both call it, so they keep
the same keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import quaternion as quat
from ..channels import (
    ChannelLayout,
    bone_property,
    continuous_quaternions,
    motion_from_values,
    rebuilt_channel_values,
    rotation_property,
    rotation_to_quaternion,
    rotation_values_near,
)
from ..motion import Motion
from .bezier import evaluate as bezier_evaluate
from .bezier import fit_handles
from .distance import PoseMetric
from .error import evaluate, known_points, pose_points, position_errors
from .extract import extract_keyframes, target_count
from .hybrid import bone_jumps, drop_channel_keys, point_reach
from .reconstruct import reconstruct
from .respect import KeyScope, key_scope
from .targets import BOUNDS, angle_summary, check_target, fewest, frame_worst, frames_to_key, quaternion_angles

# The hybrid's pose grid holds this many times the keys of the target. Measured (core rebuild, the
# one error measure, NATIVE import, at 2 / 5 / 10 % stored keys), grid 4 → 6, mean and max:
# CMU 05_02 mean 0.082/0.029/0.014 → 0.078/0.028/0.012, max 1.16/0.59/0.33 → 0.85/0.34/0.22;
# 01_01 mean 0.093/0.023/0.009 → 0.061/0.019/0.008, max 1.03/0.38/0.32 → 0.64/0.32/0.25;
# Mixamo walk mean 2.10/0.35/0.086 → 1.03/0.18/0.040, max 17.8/5.7/2.8 → 13.1/3.2/1.3 (Decimate's
# max at 10 %: 2.69); 131_03 max 1.96/0.46/0.14 → 0.91/0.29/0.07; 02_01 max 1.08/0.30/0.14 →
# 0.50/0.17/0.08, at about the same time: the grid bounds the worst frame, the channels drop the rest.
# Grid 6 → 8: max 05_02 0.85/0.34/0.22 → 0.66/0.30/0.09, 05_01 0.86/0.44/0.28 → 0.72/0.44/0.12, 01_01
# (QUATERNION import) at 10 % 0.25 → 0.06 (Decimate's 0.24), Mixamo walk 13.1/3.2/1.3 → 9.1/2.9/0.57,
# Bandai kick 23/6.6/1.3 → 18/4.5/0.55; mean 5–14 % higher on CMU (still ≤ 0.3 × Decimate's), 15–60 %
# lower on Mixamo and Bandai; same time. The max is the bar the hybrid is closest to: 8.
HYBRID_GRID = 8.0

# The pose grid under the hybrid. Measured in Blender at 5 % stored keys (grid 4), mean / max
# joint error: CMU 05_02 simplify 0.027 / 0.42, optimal 0.021 / 0.78; 01_01 simplify 0.022 /
# 0.26, optimal 0.019 / 0.29. Curve simplification has the better worst frame and is faster.
HYBRID_BASE = "simplify"

# Whole-pose keys: a bone's rotation curves get extra keys where what Blender plays (each F-curve
# interpolated on its own) departs from the slerp rebuild by more than this fraction of the
# rebuild's mean error, so the keys play what the method chose (see :func:`follow_slerp`).
# Measured in Blender (BVH importer, Euler), uniform keys, fraction ∞ / 0.5 / 1 — Character Creator
# 005_06 at 20 keys: Bezier mean 14.60 / 12.03 / 12.08 (slerp 12.02), max 180.6 / 121.4 / 121.4, extra
# keys 0 / 2.0 / 1.4 %; LINEAR mean 17.32 / 11.99 / 12.07, extra keys 0 / 5.5 / 3.6 %. CMU 05_02 at 56
# keys: Bezier max 4.86 / 2.88 / 2.88 (+0.8 / 0.6 % keys); LINEAR mean 0.175 / 0.136 / 0.137 (+12 / 7.6 %).
FOLLOW_SLERP = 1.0
FOLLOW_ROUNDS = 16


@dataclass
class ChannelKeys:
    """What to write on one F-curve: key positions (indices into the clip's frames), values, handles."""

    keys: np.ndarray
    values: np.ndarray
    handles: tuple[np.ndarray, np.ndarray] | None = None


def channel_levers(motion: Motion, names: list) -> np.ndarray:
    """(C,) how far the measured points move, in scene units, per unit of each channel: for rotations
    the bone's :func:`point_reach` (twice that for quaternion components, which move at half the
    angle), 1 for locations.

    The reach counts the points the error measures, not only joints: a leaf bone whose End Site has
    zero length (Bandai Namco's hands, feet and head, 41 bones of the Character Creator rig) has no
    joint below it but its side points turn with it. With a joint-only reach those channels weighed
    nothing and were dropped freely: on Bandai's walk at 10 % the worst point was Toes_R's side.
    """
    skeleton = motion.skeleton
    reach = np.maximum(point_reach(skeleton), 1e-3 * skeleton.size())
    factor = {"location": None, "rotation_quaternion": 2.0, "rotation_euler": 1.0, "rotation_axis_angle": 1.0,
              "scale": 1.0}  # fmt: skip
    return np.array(
        [1.0 if factor[prop] is None else factor[prop] * reach[skeleton.index(bone)] for bone, prop, _ in names]
    )


def plan_channels(
    motion: Motion, layout: ChannelLayout, values: dict, keys: np.ndarray, rebuilt: Motion,
    fitted: bool = True, budget: int | None = None, caps: dict | None = None, forced: np.ndarray | None = None,
    follow: float | None = None, pinned: dict | None = None, tick: Callable[[], None] | None = None,
) -> dict:  # fmt: skip
    """Per channel, the keys to write.

    values: channel → dense values (T,) of the motion; rebuilt: the slerp rebuild from ``keys``.
    fitted: Bezier handles fitted so per-curve playback follows the rebuild, else LINEAR keys.
    Without a ``budget`` every channel is keyed on every pose key, and with ``follow`` (a distance in
    scene units) a bone's rotation curves also get the keys they need to stay that close to the
    slerp (:func:`follow_slerp`); with a budget, channels also drop the pose keys they need least
    until ``budget`` keys are stored (the hybrid, see :mod:`.hybrid`).
    caps: channel → most keys it may keep (its own key count); channels over it drop the pose keys
    they need least, whatever the method. forced: frames among ``keys`` that no channel drops.
    pinned: bone → frames (among ``keys``) its channels keep when dropping keys (both sides of its
    own jumps, :func:`.hybrid.bone_jumps`).
    """
    sparse = continuous_quaternions(values, keys)
    names = list(sparse)
    cap = None if caps is None else np.array([caps.get(k, len(keys)) for k in names])
    if cap is not None and (cap < len(keys)).any() and budget is None:
        budget = len(keys) * len(names)  # the caps alone bind
    elif cap is not None and not (cap < len(keys)).any():
        cap = None
    if budget is None and not fitted and follow is None:
        return {k: ChannelKeys(keys, sparse[k]) for k in names}
    targets = rebuilt_channel_values(rebuilt, layout, sparse, keys)
    if budget is None:
        return pose_key_plan(motion, layout, sparse, targets, keys, rebuilt, fitted, follow, caps)
    curves = np.stack([targets[k] for k in names])  # (C, T): a channel's frames contiguous, as the passes read them
    dense = curves.T
    locked = None if forced is None or not len(forced) else np.searchsorted(keys, forced)
    pins = None
    if pinned:
        by_bone = {bone: np.isin(keys, frames) for bone, frames in pinned.items()}
        unpinned = np.zeros(len(keys), dtype=bool)
        pins = np.array([by_bone.get(bone, unpinned) for bone, _, _ in names])
    kept = drop_channel_keys(dense, keys, channel_levers(motion, names), budget, locked, linear=not fitted,
                             caps=cap, pinned=pins, tick=tick)  # fmt: skip
    if fitted:  # every channel's handles in one fit: the curves end to end, each its own keys
        n = len(dense)
        h1, h2 = fit_handles(curves.reshape(-1, 1), np.concatenate([c * n + kk for c, kk in enumerate(kept)]))
        ends = np.cumsum([len(kk) for kk in kept])  # segment ends[c] − 1 joins channel c to c + 1: not a curve's
    plan = {}
    for i, k in enumerate(names):
        handles = None
        if fitted:
            first = ends[i] - len(kept[i])
            handles = (h1[first : ends[i] - 1, 0], h2[first : ends[i] - 1, 0])
        plan[k] = ChannelKeys(kept[i], curves[i, kept[i]], handles)
    return plan


def pose_key_plan(
    motion: Motion, layout: ChannelLayout, sparse: dict, targets: dict, keys: np.ndarray, rebuilt: Motion,
    fitted: bool, follow: float | None = None, caps: dict | None = None,
) -> dict:  # fmt: skip
    """Every channel keyed on the pose keys (sparse: channel → values at them (K,); targets: channel →
    the rebuild's values (T,)), Bezier handles fitted to the targets when ``fitted``; with ``follow``,
    the rotation curves of bones that need them get extra keys (:func:`follow_slerp`)."""
    extra = {} if follow is None else follow_slerp(motion, layout, targets, keys, rebuilt, fitted, follow, caps)
    groups: dict = {}  # bone with keys of its own (None: the pose keys) → its channels
    for k in sparse:
        bone, prop, _ = k
        own = bone in extra and prop == rotation_property(layout.mode(bone))[0]
        groups.setdefault(bone if own else None, []).append(k)
    plan = {}
    for group, names in groups.items():
        kk = keys if group is None else extra[group]
        dense = np.stack([targets[k] for k in names], axis=1)
        h1, h2 = fit_handles(dense, kk) if fitted else (None, None)
        for i, k in enumerate(names):
            at_keys = sparse[k] if group is None else dense[kk, i]
            plan[k] = ChannelKeys(kk, at_keys, None if h1 is None else (h1[:, i], h2[:, i]))
    return {k: plan[k] for k in sparse}


def follow_slerp(
    motion: Motion, layout: ChannelLayout, targets: dict, keys: np.ndarray, rebuilt: Motion, fitted: bool,
    tolerance: float, caps: dict | None = None, rounds: int = FOLLOW_ROUNDS,
) -> dict:  # fmt: skip
    """Bone → its rotation curves' keys (sorted frame indices), for the bones that need more than the
    pose ``keys`` to stay within ``tolerance`` (scene units) of the slerp rebuild.

    Blender interpolates each F-curve on its own, so between two pose keys the curves of an Euler
    or axis-angle bone (and LINEAR quaternion components) leave the slerp. The departure of a bone
    at a frame is the angle between the rotation its curves play and the rebuilt one, times the
    bone's reach (how far that moves the points below it). Each round adds, in every segment where
    it exceeds ``tolerance``, a key at its worst frame (valued on the slerp, handles refitted with
    ``fitted``), for at most ``rounds`` rounds and never past a channel's cap (caps: channel → most
    keys it may hold). targets: channel → the rebuild's values (T,) in the channel's representation.
    """
    skeleton = motion.skeleton
    n = rebuilt.n_frames
    reach = np.maximum(skeleton.reach(), 1e-3 * skeleton.size())
    keys = np.asarray(keys)
    by_mode: dict = {}  # mode → bones with keyed rotation channels (their index, name, keyed channels)
    for j, bone in enumerate(skeleton.names):
        mode = layout.mode(bone)
        prop, width = rotation_property(mode)
        keyed = [(bone, prop, i) for i in range(width) if (bone, prop, i) in targets]
        if keyed:
            by_mode.setdefault(mode, []).append((j, bone, keyed))
    out = {}
    for mode, bones in by_mode.items():
        prop, width = rotation_property(mode)
        dense = np.stack([bone_property(targets, layout, bone, prop, n) for _, bone, _ in bones], axis=1)
        joints = [j for j, _, _ in bones]
        # first round, every bone of the mode at once: most follow the slerp on the pose keys alone
        angle = _departure(mode, dense, keys, fitted, rebuilt.rotations[:, joints])
        off = (np.maximum.reduceat(angle * reach[joints], keys, axis=0) > tolerance).any(axis=0)
        for b in np.flatnonzero(off):
            j, bone, keyed = bones[b]
            limit = n if caps is None else min(caps.get(k, n) for k in keyed)
            kk = keys
            for _ in range(rounds):
                angle = _departure(mode, dense[:, b : b + 1], kk, fitted, rebuilt.rotations[:, j : j + 1])[:, 0]
                worst = np.maximum.reduceat(angle * reach[j], kk)
                bad = np.flatnonzero(worst > tolerance)
                bad = bad[np.argsort(-worst[bad], kind="stable")][: max(0, limit - len(kk))]
                if not len(bad):
                    break
                ends = np.append(kk[1:], n)
                kk = np.union1d(kk, [kk[i] + int(np.argmax(angle[kk[i] : ends[i]])) for i in bad])
            if len(kk) > len(keys):
                out[bone] = kk
    return out


def _departure(mode: str, dense: np.ndarray, keys: np.ndarray, fitted: bool, rotations: np.ndarray) -> np.ndarray:
    """(T, B) angle (radians) between the rotations ``rotations`` (T, B, 4) and what B bones' curves in
    ``mode`` play when keyed at ``keys`` on their target values ``dense`` (T, B, width): Bezier with
    fitted handles, or LINEAR."""
    n, b, width = dense.shape
    flat = dense.reshape(n, b * width)
    if fitted:
        h1, h2 = fit_handles(flat, keys)
        played = bezier_evaluate(flat[keys], h1, h2, keys, n)
    else:
        frames = np.arange(n)
        played = np.stack([np.interp(frames, keys, flat[keys, c]) for c in range(b * width)], axis=1)
    q = rotation_to_quaternion(mode, played.reshape(n * b, width)).reshape(n, b, 4)
    return 2.0 * quat.distance(q, rotations)


def planned_values(plan: dict, n: int) -> dict:
    """Dense values (n,) of every planned channel, as Blender plays the curves (linear or Bezier)."""
    values = {}
    for key, ck in plan.items():
        if ck.handles is None:
            values[key] = np.interp(np.arange(n), ck.keys, ck.values)
        else:
            values[key] = bezier_evaluate(
                ck.values[:, None], ck.handles[0][:, None], ck.handles[1][:, None], ck.keys, n
            )[:, 0]
    return values


def choose_keys(
    motion: Motion, method: str, target: dict, metric: PoseMetric, weights: str, grid: float = HYBRID_GRID,
    progress: Callable[[float], None] | None = None,
) -> tuple:  # fmt: skip
    """Pose keys, method params and the stored keys per channel (None unless hybrid).

    Whole-pose methods take any target (:mod:`.targets`; a bound is met on their slerp rebuild);
    the hybrid takes a count or ratio here, its bounds are met by :func:`extract_channels`' search.
    """
    kind, _ = check_target(target)
    if kind == "threshold" and method != "threshold":
        raise ValueError("a threshold target applies to the threshold method only")
    if method != "hybrid":
        result = extract_keyframes(motion, method, metric=metric, weights=weights, progress=progress, **target)
        return result.keys, result.params, None
    if kind not in ("count", "ratio"):
        raise ValueError(f"the hybrid meets a {kind} target in extract_channels, not choose_keys")
    wanted = target_count(motion.n_frames, target.get("count"), target.get("ratio"))
    poses = min(motion.n_frames, int(round(grid * wanted)))
    result = extract_keyframes(motion, HYBRID_BASE, metric=metric, weights=weights, count=poses)
    params = {**result.params, "pose_method": HYBRID_BASE, "pose_keys": poses, "keys_per_channel": wanted}
    return result.keys, params, wanted


def key_bones_within_angle(motion: Motion, layout: ChannelLayout, plan: dict, bound: float) -> dict:
    """The plan with, bone by bone, keys on its rotation channels at the worst frame of every stretch
    whose rotation is more than ``bound`` degrees from ``motion``'s, until none is.

    A bone's local rotation depends on its own rotation channels only, so each bone is keyed apart
    (a Max Angle per channel). The added and the existing keys take the original rotation on the
    played curves' branch (Euler turn, quaternion sign) and the handles are refitted to it; keys
    only ever add up to every frame, where the bone plays the original: it always ends.
    """
    n = motion.n_frames
    plan, played = dict(plan), planned_values(plan, n)
    for j, bone in enumerate(motion.skeleton.names):
        mode = layout.mode(bone)
        prop, width = rotation_property(mode)
        names = [(bone, prop, i) for i in range(width)]
        if not all(k in plan for k in names):
            continue  # not re-keyed: plays the original
        current = np.stack([played[k] for k in names], axis=1)
        original = rotation_values_near(motion.rotations[:, j], mode, current)
        fitted = plan[names[0]].handles is not None
        keyed = np.zeros(0, dtype=int)  # frames this pass keyed on every channel of the bone
        while True:
            angles = quaternion_angles(motion.rotations[:, j], rotation_to_quaternion(mode, current))
            new = frames_to_key(angles, bound, keyed)
            if not len(new):
                break
            keyed = np.union1d(keyed, new)
            for i, k in enumerate(names):
                keys = np.union1d(plan[k].keys, new)
                handles = None
                if fitted:
                    h1, h2 = fit_handles(original[:, i], keys)
                    handles = (h1[:, 0], h2[:, 0])
                plan[k] = ChannelKeys(keys, original[keys, i], handles)
                current[:, i] = planned_values({k: plan[k]}, n)[k]
    return plan


# Under a Max Angle the hybrid keeps this share of the frames per channel, then keys each bone's
# rotation channels to the bound (:func:`key_bones_within_angle`); location channels keep the share.
# Stored keys at 5°, CMU 05_02 (Euler): bases 2 / 4 / 8 % stored 3.4 / 5.0 / 8.4 % of the dense keys
# (0.5 %: 3.2 %, with the root's path off by 1.6 units); the search on the budget alone stored 20.5 %.
HYBRID_ANGLE_BASE = 0.02

# The hybrid's search for the fewest keys per channel within a bound stops when the count is known
# to within this share (each probe plans and plays every curve).
HYBRID_SEARCH_TOLERANCE = 0.05


@dataclass
class ChannelExtraction:
    """The keys of every re-keyed channel and what they play: pose keys (K,), method params, the plan
    (channel → :class:`ChannelKeys`, keys as indices into the clip's frames), the motion the keys
    play on the span and its error against the original there, and the scope (what was re-keyed,
    what kept: :class:`.respect.KeyScope`), and the measured points of the original on the span
    (:func:`.error.pose_points`, (T, P, 3): a playback measure of the written curves reuses them)."""

    keys: np.ndarray
    params: dict
    plan: dict
    played: Motion
    error: dict
    per_frame_error: np.ndarray
    metric: PoseMetric
    scope: KeyScope | None = None
    original_points: np.ndarray | None = None


def extract_channels(
    motion: Motion,
    layout: ChannelLayout,
    values: dict,
    method: str = "hybrid",
    target: dict | None = None,
    weights: str = "HIERARCHY",
    fitted: bool = True,
    grid: float = HYBRID_GRID,
    progress=None,
    key_frames: dict | None = None,
    keep_sparse: bool = True,
    bones: set | None = None,
    span: tuple[int, int] | None = None,
    measure: bool = True,
) -> ChannelExtraction:
    """Keyframes of channel ``values`` (channel → (T,)) that play ``motion`` on the layout's bones.

    target: one of {"count": N}, {"ratio": R}, {"max_error": E}, {"max_angle": degrees}, {"threshold": D}
    (default 5 %; see :mod:`.targets`: for the hybrid a count is keys per channel, the bounds are met
    on the curves as they play: Max Error with as few keys per channel as the search finds, Max
    Angle bone by bone from :data:`HYBRID_ANGLE_BASE`);
    fitted: Bezier handles fitted to the slerp rebuild instead of LINEAR keys; grid: for the
    hybrid, pose keys per stored key of each channel. The error is measured on what the planned
    curves play (for the hybrid and fitted keys: the Bezier curves, not the pose rebuild).

    The user's keys are respected (:func:`.respect.key_scope`): key_frames (channel → its own key
    positions on the frame axis, None: a key on every frame) caps each channel at its own key
    count and, with keep_sparse, leaves channels already sparser than the frames exactly as they
    are (not in the plan); bones: only these bones' channels are re-keyed; span: (first, last) frame
    index re-keyed — keys, targets and the error are on those frames, the plan's keys are clip indices.
    measure: with False, a count or ratio target's result has no error figures (``error`` empty,
    ``played`` and ``per_frame_error`` None): the caller measures the curves as it writes them (Extract
    Keyframes measures Blender's playback, the same curves to float rounding — measuring both would
    measure twice). Bounds are always measured: their search runs on it.
    """
    report = progress or (lambda _x: None)
    reached = [0.0]

    def step(fraction: float) -> None:
        reached[0] = max(reached[0], fraction)
        report(reached[0])

    def tick(_fraction: float | None = None) -> None:
        """The long inner loops' heartbeat: the fraction reached so far again (Esc raises from it)."""
        report(reached[0])

    target = target or {"ratio": 0.05}
    kind, bound = check_target(target)
    if kind == "threshold" and method != "threshold":
        raise ValueError("a threshold target applies to the threshold method only")
    scope = key_scope(key_frames, list(values), motion.n_frames, span, keep_sparse, bones)
    a, b = scope.span
    sub = motion if scope.n_frames == motion.n_frames else motion.frames(slice(a, b + 1))
    metric = PoseMetric.for_motion(sub, weights)
    original_points = pose_points(sub)  # once: every error measure of the extraction compares with them
    if not scope.rekey:  # nothing to re-key: every curve stays as it is
        error, per_frame = evaluate(sub, sub, metric, original_points)
        error.update(angle_summary(sub, sub))
        params = {"stored_keys": 0, "kept_channels": len(scope.kept), "kept_sparse": len(scope.kept_sparse)}
        return ChannelExtraction(np.zeros(0, dtype=int), params, {}, sub, error, per_frame, metric, scope,
                                 original_points)  # fmt: skip
    rekeyed = scope.values(values)
    capped = any(scope.caps[k] < scope.n_frames for k in rekeyed)  # the user's own key counts bind
    pinned: dict = {}  # the hybrid: a bone's own jump, both sides on the grid, kept by that bone's channels
    if method == "hybrid":
        jump_at, jump_bone = bone_jumps(sub)
        for frame, joint in zip(jump_at.tolist(), jump_bone.tolist()):
            pinned.setdefault(sub.skeleton.names[joint], []).extend((frame, frame + 1))

    def pose_grid(target: dict) -> tuple[np.ndarray, dict, int | None]:
        """:func:`choose_keys`, with the hybrid's bone jumps on its grid."""
        with known_points(sub, original_points):  # the methods measure against them too: not computed again
            keys, params, per_channel = choose_keys(sub, method, target, metric, weights, grid, progress=tick)
        if per_channel is not None and pinned:
            keys = np.union1d(keys, np.concatenate([np.asarray(v, dtype=int) for v in pinned.values()]))
            params["bone_jumps"], params["pose_keys"] = len(jump_at), len(keys)
        return keys, params, per_channel

    def play(
        keys: np.ndarray, per_channel: int | None, forced: np.ndarray | None = None, played: bool = True
    ) -> tuple[dict, Motion | None]:
        """The plan on pose ``keys`` (hybrid: ``per_channel`` keys per channel, plus ``forced`` frames on
        every channel) and the motion its curves play (None without ``played``)."""
        rebuilt = reconstruct(sub, keys)
        extra = 0 if forced is None else len(forced)
        budget = None if per_channel is None else (per_channel + extra) * len(rekeyed)
        locked = None if capped else forced  # forced keys stay even past a cap: not where the user's count binds
        follow = None if budget is not None else follow_distance(rebuilt)
        pins = pinned if per_channel is not None else None
        plan = plan_channels(sub, layout, rekeyed, keys, rebuilt, fitted, budget, scope.caps, locked, follow, pins,
                             tick)  # fmt: skip
        # the curves, not the pose rebuild, are the result: measure what they play (Blender interpolates each
        # F-curve on its own, so on Euler and axis-angle bones, and for LINEAR keys, they leave the slerp)
        return plan, curves_motion(plan) if played else None

    def follow_distance(rebuilt: Motion) -> float:
        """How far whole-pose keys' rotation curves may leave the slerp rebuild (:data:`FOLLOW_SLERP`)."""
        every = slice(None, None, max(1, sub.n_frames // 256))  # the mean, estimated on some 256 frames
        slerp_mean = position_errors(sub.frames(every), rebuilt.frames(every)).mean()
        return max(FOLLOW_SLERP * slerp_mean, 1e-6 * sub.skeleton.size())

    def curves_motion(plan: dict) -> Motion:
        """What the planned curves play, with the curves kept as they were."""
        played = {k: values[k][a : b + 1] for k in scope.kept}
        played.update(planned_values(plan, scope.n_frames))
        return motion_from_values(sub.skeleton, layout, played, scope.n_frames, sub.fps)

    if kind in BOUNDS:

        def worst(played: Motion) -> np.ndarray:
            return frame_worst(sub, played, kind, original_points)

    if kind == "max_angle" and method == "hybrid" and not capped:  # per channel: each bone keyed to the bound
        per_channel = target_count(sub.n_frames, ratio=HYBRID_ANGLE_BASE)
        keys, params, _ = pose_grid({"count": per_channel})
        step(0.35)
        plan = key_bones_within_angle(sub, layout, play(keys, per_channel)[0], bound)
        rebuilt = curves_motion(plan)
    elif kind in BOUNDS and method == "hybrid":  # the fewest keys per channel whose curves play within the bound
        tried: dict[int, tuple] = {}

        def measure(count: int) -> float:
            keys, params, _ = pose_grid({"count": count})
            tried[count] = (keys, params, *play(keys, count))
            step(0.2 + 0.3 * (1.0 - 0.75 ** len(tried)))  # five to ten probes, from reading (0.2) to 0.5
            return float(worst(tried[count][3]).max())

        per_channel = fewest(measure, bound, 2, sub.n_frames, HYBRID_SEARCH_TOLERANCE, interpolate=True)
        if per_channel not in tried:
            measure(per_channel)
        keys, params, plan, rebuilt = tried[per_channel]
    else:
        keys, params, per_channel = pose_grid(target)
        step(0.5)
        plan, rebuilt = play(keys, per_channel, played=measure or kind in BOUNDS)
    if kind in BOUNDS:  # guaranteed: key the worst frame of every stretch still over the bound, on every channel
        forced, added = np.zeros(0, dtype=int), 0
        per_frame = worst(rebuilt)
        while per_frame.max() > bound:
            new = frames_to_key(per_frame, bound, keys if per_channel is None else forced)
            if not len(new):
                break
            keys, added = np.union1d(keys, new), added + len(new)
            if per_channel is not None:
                forced = np.union1d(forced, new)
            plan, rebuilt = play(keys, per_channel, forced if per_channel is not None else None)
            previous, per_frame = per_frame.max(), worst(rebuilt)
            if capped and per_frame.max() >= previous:
                break  # the curves held to their own key counts can do no better
        params.update({kind: bound, "bound_met": bool(per_frame.max() <= bound), "frames_added": added})
        if per_channel is not None:
            params["pose_keys"] = len(keys)
    step(0.6)
    error, per_frame = evaluate(sub, rebuilt, metric, original_points) if rebuilt is not None else ({}, None)
    params["stored_keys"] = int(sum(len(ck.keys) for ck in plan.values()))
    if per_channel is None:  # keys added where a bone's curves left the slerp
        params["follow_keys"] = int(sum(max(0, len(ck.keys) - len(keys)) for ck in plan.values()))
    if kind in BOUNDS and per_channel is not None:  # the mean over channels, as the bound found it
        params["keys_per_channel"] = round(params["stored_keys"] / max(len(plan), 1), 1)
    if rebuilt is not None:
        error.update(angle_summary(sub, rebuilt))
    params["kept_channels"], params["kept_sparse"] = len(scope.kept), len(scope.kept_sparse)
    wanted = len(keys) if per_channel is None else per_channel
    params["capped_channels"] = sum(scope.caps[k] < wanted for k in plan)  # held to the keys they had
    if a:
        plan = {k: ChannelKeys(ck.keys + a, ck.values, ck.handles) for k, ck in plan.items()}
    return ChannelExtraction(keys, params, plan, rebuilt, error, per_frame, metric, scope, original_points)
