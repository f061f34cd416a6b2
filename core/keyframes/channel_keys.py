"""Keyframes as an armature stores them: the keys each channel (F-curve) gets, and their handles.

The pose methods pick whole-pose keys; this module turns them into per-channel keys (LINEAR, or
Bezier with handles fitted so per-channel playback follows the slerp rebuild), and for the hybrid
lets each channel drop the grid keys it needs least. :func:`extract_channels` is the whole
extraction on channel values — the add-on and the plain-Python script both call it, so they keep
the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..channels import ChannelLayout, continuous_quaternions, motion_from_values, rebuilt_channel_values
from ..motion import Motion
from .bezier import evaluate as bezier_evaluate
from .bezier import fit_handles
from .distance import PoseMetric
from .error import evaluate
from .extract import extract_keyframes, target_count
from .hybrid import bone_jumps, drop_channel_keys, point_reach
from .reconstruct import reconstruct
from .respect import KeyScope, key_scope

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
    fitted: bool = True, budget: int | None = None, caps: dict | None = None, pinned: dict | None = None,
) -> dict:  # fmt: skip
    """Per channel, the keys to write.

    values: channel → dense values (T,) of the motion; rebuilt: the slerp rebuild from ``keys``.
    fitted: Bezier handles fitted so per-curve playback follows the rebuild, else LINEAR keys.
    Without a ``budget`` every channel is keyed on every pose key; with one, channels also drop
    the pose keys they need least until ``budget`` keys are stored (the hybrid, see :mod:`.hybrid`).
    caps: channel → most keys it may keep (its own key count); channels over it drop the pose keys
    they need least, whatever the method. pinned: bone → frames (among ``keys``) its channels keep
    when dropping keys (both sides of its own jumps, :func:`.hybrid.bone_jumps`).
    """
    sparse = continuous_quaternions(values, keys)
    names = list(sparse)
    cap = None if caps is None else np.array([caps.get(k, len(keys)) for k in names])
    if cap is not None and (cap < len(keys)).any() and budget is None:
        budget = len(keys) * len(names)  # the caps alone bind
    elif cap is not None and not (cap < len(keys)).any():
        cap = None
    if budget is None and not fitted:
        return {k: ChannelKeys(keys, sparse[k]) for k in names}
    targets = rebuilt_channel_values(rebuilt, layout, sparse, keys)
    dense = np.stack([targets[k] for k in names], axis=1)
    if budget is None:
        h1, h2 = fit_handles(dense, keys)
        return {k: ChannelKeys(keys, sparse[k], (h1[:, i], h2[:, i])) for i, k in enumerate(names)}
    pins = None
    if pinned:
        pins = np.array([np.isin(keys, pinned.get(bone, ())) for bone, _, _ in names])
    kept = drop_channel_keys(
        dense, keys, channel_levers(motion, names), budget, linear=not fitted, caps=cap, pinned=pins
    )
    plan = {}
    for i, k in enumerate(names):
        handles = None
        if fitted:
            h1, h2 = fit_handles(dense[:, i], kept[i])
            handles = (h1[:, 0], h2[:, 0])
        plan[k] = ChannelKeys(kept[i], dense[kept[i], i], handles)
    return plan


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
    motion: Motion, method: str, target: dict, metric: PoseMetric, weights: str, grid: float = HYBRID_GRID
) -> tuple:
    """Pose keys, method params and the stored-key budget per channel (None unless hybrid)."""
    if method != "hybrid":
        result = extract_keyframes(motion, method, metric=metric, weights=weights, **target)
        return result.keys, result.params, None
    if not ({"count", "ratio"} & set(target)):
        raise ValueError("Hybrid keys take a Count or Ratio target")
    wanted = target_count(motion.n_frames, target.get("count"), target.get("ratio"))
    poses = min(motion.n_frames, int(round(grid * wanted)))
    result = extract_keyframes(motion, HYBRID_BASE, metric=metric, weights=weights, count=poses)
    params = {**result.params, "pose_method": HYBRID_BASE, "pose_keys": poses, "keys_per_channel": wanted}
    return result.keys, params, wanted


@dataclass
class ChannelExtraction:
    """The keys of every re-keyed channel and what they play: pose keys (K,), method params, the plan
    (channel → :class:`ChannelKeys`, keys as indices into the clip's frames), the motion the keys
    play on the span and its error against the original there, and the scope (what was re-keyed,
    what kept: :class:`.respect.KeyScope`)."""

    keys: np.ndarray
    params: dict
    plan: dict
    played: Motion
    error: dict
    per_frame_error: np.ndarray
    metric: PoseMetric
    scope: KeyScope | None = None


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
) -> ChannelExtraction:
    """Keyframes of channel ``values`` (channel → (T,)) that play ``motion`` on the layout's bones.

    target: one of {"count": N}, {"ratio": R}, {"max_error": E}, {"threshold": D} (default 5 %);
    fitted: Bezier handles fitted to the slerp rebuild instead of LINEAR keys; grid: for the
    hybrid, pose keys per stored key of each channel. The error is measured on what the planned
    curves play (for the hybrid and fitted keys: the Bezier curves, not the pose rebuild).

    The user's keys are respected (:func:`.respect.key_scope`): key_frames (channel → its own key
    positions on the frame axis, None: a key on every frame) caps each channel at its own key
    count and, with keep_sparse, leaves channels already sparser than the frames exactly as they
    are (not in the plan); bones: only these bones' channels are re-keyed; span: (first, last) frame
    index re-keyed — keys, targets and the error are on those frames, the plan's keys are clip indices.
    """
    step = progress or (lambda _x: None)
    scope = key_scope(key_frames, list(values), motion.n_frames, span, keep_sparse, bones)
    a, b = scope.span
    whole = scope.n_frames == motion.n_frames and not scope.kept
    sub = motion if scope.n_frames == motion.n_frames else motion.frames(slice(a, b + 1))
    metric = PoseMetric.for_motion(sub, weights)
    if not scope.rekey:  # nothing to re-key: every curve stays as it is
        error, per_frame = evaluate(sub, sub, metric)
        params = {"stored_keys": 0, "kept_channels": len(scope.kept), "kept_sparse": len(scope.kept_sparse)}
        return ChannelExtraction(np.zeros(0, dtype=int), params, {}, sub, error, per_frame, metric, scope)
    keys, params, per_channel = choose_keys(sub, method, target or {"ratio": 0.05}, metric, weights, grid)
    pinned = None
    if per_channel is not None:  # a bone's own jump: both sides on the grid, kept by that bone's channels
        t, j = bone_jumps(sub)
        keys = np.union1d(keys, np.concatenate((t, t + 1)))
        pinned = {}
        for frame, joint in zip(t.tolist(), j.tolist()):
            pinned.setdefault(sub.skeleton.names[joint], []).extend((frame, frame + 1))
        params["bone_jumps"], params["pose_keys"] = len(t), len(keys)
    step(0.5)
    rebuilt = reconstruct(sub, keys)
    rekeyed = scope.values(values)
    budget = None if per_channel is None else per_channel * len(rekeyed)
    plan = plan_channels(sub, layout, rekeyed, keys, rebuilt, fitted, budget, scope.caps, pinned)
    if budget is not None or not whole or any(len(ck.keys) < len(keys) for ck in plan.values()):
        # the curves, not the pose grid, are the result: measure them (with the curves kept as they were)
        played = {k: values[k][a : b + 1] for k in scope.kept}
        played.update(planned_values(plan, scope.n_frames))
        rebuilt = motion_from_values(sub.skeleton, layout, played, scope.n_frames, sub.fps)
    error, per_frame = evaluate(sub, rebuilt, metric)
    params["stored_keys"] = int(sum(len(ck.keys) for ck in plan.values()))
    params["kept_channels"], params["kept_sparse"] = len(scope.kept), len(scope.kept_sparse)
    wanted = len(keys) if per_channel is None else per_channel
    params["capped_channels"] = sum(scope.caps[k] < wanted for k in plan)  # held to the keys they had
    if a:
        plan = {k: ChannelKeys(ck.keys + a, ck.values, ck.handles) for k, ck in plan.items()}
    return ChannelExtraction(keys, params, plan, rebuilt, error, per_frame, metric, scope)
