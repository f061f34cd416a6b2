"""Rotation transfer in world space with per-bone rest corrections.

Notation: W world orientation of a joint at a frame, R its rest world orientation, A the
alignment (a rotation taking source space to target space, e.g. Y-up → Z-up).

- Source world delta of a mapped joint j: D = W_s(j)·R_s(j)⁻¹, seen in target space as A·D·A⁻¹.
- Rest correction C(k) of the target joint k: the rotation that turns the target's rest bone
  directions onto the source's (aligned) rest directions. The directions of k are the rest
  vectors to its *next mapped* descendants (mapped joints with no mapped joint in between),
  paired with the vectors between the corresponding source joints; zero-length vectors (CMU's
  ``LHipJoint`` sits on ``Hips``) are replaced by those of the next mapped joints further down.
  One vector: the shortest arc; several: the least-squares rotation (Kabsch); none: the
  directions of the joint's own children and End Sites (a leaf's tail), else the correction
  of the nearest mapped ancestor.
- Target world orientation: W_t(k) = A·D·A⁻¹·C(k)·R_t(k) = A·W_s(j)·Q(k), with the constant
  Q(k) = R_s(j)⁻¹·A⁻¹·C(k)·R_t(k). Every mapped bone then points exactly where its source bone
  points (whatever the two rest poses: T-pose, A-pose, a BVH's folded rest), and a bone's own
  roll is kept, since the delta is applied in world space.
- Unmapped target joints keep their rest pose relative to their parent (pose rotation
  identity). Unmapped joints *between* mapped ones (a target with three spine bones where the
  source has one, Rigify's twist segments) stay rigid with the mapped joint above, so the
  mapped joints below land where they should; with ``distribute`` they also take a share of
  the twist of the joints below about the segment axis, growing with their rest distance
  along it (twist does not move the segment's end).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import quaternion as quat
from ..ik.common import local_from_world
from ..skeleton import Skeleton, rest_world


def mapped_ancestors(parents: np.ndarray, mapped: np.ndarray) -> np.ndarray:
    """(K,) nearest strict ancestor that is mapped, or -1."""
    out = np.full(len(parents), -1)
    for k, p in enumerate(parents):
        if p >= 0:
            out[k] = p if mapped[p] else out[p]
    return out


def next_mapped(parents: np.ndarray, mapped: np.ndarray) -> list[list[int]]:
    """Per joint, its mapped descendants with no mapped joint in between."""
    n = len(parents)
    children: list[list[int]] = [[] for _ in range(n)]
    for k, p in enumerate(parents):
        if p >= 0:
            children[p].append(k)
    at_or_below: list[list[int]] = [[] for _ in range(n)]
    for k in range(n - 1, -1, -1):
        at_or_below[k] = [k] if mapped[k] else [m for c in children[k] for m in at_or_below[c]]
    return [[m for c in children[k] for m in at_or_below[c]] for k in range(n)]


def fit_rotation(vt: np.ndarray, vs: np.ndarray) -> np.ndarray:
    """Rotation (4,) turning vectors vt (n, 3) onto vs (n, 3): shortest arc for one (or
    collinear) pairs, least squares (Kabsch) otherwise."""
    if len(vt) == 1:
        return quat.between(vt[0], vs[0])
    u, sv, vh = np.linalg.svd(vt.T @ vs)
    if sv[1] < 1e-6 * sv[0]:
        return quat.between(vt.sum(axis=0), vs.sum(axis=0))
    d = np.sign(np.linalg.det(vh.T @ u.T)) or 1.0
    return quat.from_matrix(vh.T @ np.diag([1.0, 1.0, d]) @ u.T)


@dataclass(eq=False)
class Transfer:
    """The constants of one pairing of a source and a target skeleton.

    source_of: (K,) source joint of each target joint, -1 if unmapped; alignment: (4,) A;
    corrections: (K, 4) C; offsets: (K, 4) Q of mapped joints; anchor: (K,) nearest mapped
    ancestor of the in-between joints (else -1); axis: (K, 3) their twist axis in their own
    rest frame; fraction: (K,) their share of the twist; below: their next mapped descendants.
    """

    source: Skeleton
    target: Skeleton
    source_of: np.ndarray
    alignment: np.ndarray
    corrections: np.ndarray
    offsets: np.ndarray
    anchor: np.ndarray
    axis: np.ndarray
    fraction: np.ndarray
    below: list[list[int]]

    @classmethod
    def build(cls, source: Skeleton, target: Skeleton, tk: np.ndarray, sj: np.ndarray, alignment: np.ndarray):
        """Precompute the transfer of pairs (target joints tk (n,), source joints sj (n,))."""
        source_of = np.full(target.n_joints, -1)
        source_of[tk] = sj
        mapped = source_of >= 0
        below = next_mapped(target.parents, mapped)
        ps, rs = rest_world(source)
        pt, rt = rest_world(target)
        a = quat.normalize(np.asarray(alignment, dtype=float))
        corrections = _corrections(source, target, source_of, below, a, ((ps, rs), (pt, rt)))
        offsets = quat.identity((target.n_joints,))
        j = source_of[mapped]
        offsets[mapped] = quat.multiply(
            quat.multiply(quat.inverse(rs[j]), quat.inverse(a)), quat.multiply(corrections[mapped], rt[mapped])
        )
        anchor, axis, fraction = _in_between(target, mapped, below, pt, rt)
        return cls(source, target, source_of, a, corrections, offsets, anchor, axis, fraction, below)

    def world_rotations(self, source_world: np.ndarray, distribute: bool = True) -> np.ndarray:
        """Target world orientations (T, K, 4) from source world orientations (T, J, 4)."""
        sk = self.target
        rt = rest_world(sk)[1]
        n = source_world.shape[0]
        world = np.empty((n, sk.n_joints, 4))
        mapped = self.source_of >= 0
        for k in np.flatnonzero(mapped):
            world[:, k] = quat.multiply(
                self.alignment, quat.multiply(source_world[:, self.source_of[k]], self.offsets[k])
            )
        for k in np.flatnonzero(~mapped):
            p = sk.parents[k]
            parent = world[:, p] if p >= 0 else quat.identity((n,))
            world[:, k] = quat.multiply(parent, sk.rest_rotations[k])
            if distribute and self.anchor[k] >= 0 and self.fraction[k] > 0:
                angle = self._twist(world, rt, k)
                world[:, k] = quat.multiply(world[:, k], quat.from_axis_angle(self.axis[k], self.fraction[k] * angle))
        return world

    def _twist(self, world: np.ndarray, rt: np.ndarray, k: int) -> np.ndarray:
        """(T,) circular mean twist of joint k's next mapped descendants, relative to staying
        rigid with its mapped ancestor, about the segment axis."""
        a = self.anchor[k]
        axis_world = quat.rotate(rt[k], self.axis[k])
        total = np.zeros((world.shape[0], 2))
        for b in self.below[k]:
            rigid = quat.multiply(world[:, a], quat.multiply(quat.inverse(rt[a]), rt[b]))
            rel = quat.multiply(quat.inverse(rigid), world[:, b])
            u = quat.rotate(quat.inverse(rt[b]), axis_world)
            angle = 2.0 * np.arctan2(rel[:, 1:] @ u, rel[:, 0])
            total += np.stack((np.cos(angle), np.sin(angle)), axis=-1)
        return np.arctan2(total[:, 1], total[:, 0])

    def local_rotations(self, world: np.ndarray) -> np.ndarray:
        """Pose rotations (T, K, 4) of the target from its world orientations (T, K, 4), continuous in time."""
        sk = self.target
        parents = sk.parents
        parent_world = np.where((parents >= 0)[None, :, None], world[:, np.maximum(parents, 0)], quat.identity())
        local = local_from_world(sk, np.arange(sk.n_joints), world, parent_world)
        return quat.make_continuous(local, axis=0)


def _corrections(source, target, source_of, below, a, rests) -> np.ndarray:
    """(K, 4) rest corrections C (identity where unmapped); rests: ((ps, rs), (pt, rt)) rest world poses."""
    (ps, _), (pt, _) = rests
    eps_t, eps_s = 1e-6 * target.size(), 1e-6 * source.size()
    anc = mapped_ancestors(target.parents, source_of >= 0)
    out = quat.identity((target.n_joints,))

    def refs(k: int, via: int) -> list[tuple[np.ndarray, np.ndarray]]:
        pairs = []
        for c in below[via]:
            vt = pt[c] - pt[k]
            vs = quat.rotate(a, ps[source_of[c]] - ps[source_of[k]])
            if np.linalg.norm(vt) > eps_t and np.linalg.norm(vs) > eps_s:
                pairs.append((vt, vs))
            else:
                pairs.extend(refs(k, c))
        return pairs

    for k in np.flatnonzero(source_of >= 0):
        pairs = refs(k, k)
        if not pairs:
            own = _own_directions((target, rests[1]), (source, rests[0]), k, source_of[k], a)
            pairs = [own] if own is not None else []
        if pairs:
            out[k] = fit_rotation(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
        elif anc[k] >= 0:
            out[k] = out[anc[k]]
    return out


def _tip(skeleton: Skeleton, rest: tuple[np.ndarray, np.ndarray], j: int) -> np.ndarray:
    """Mean rest vector (3,) from joint j to its children and End Sites (zero if none)."""
    pos, rot = rest
    tips = [pos[c] - pos[j] for c in skeleton.children(j)]
    tips += [quat.rotate(rot[j], o) for p, o in zip(skeleton.end_site_parents, skeleton.end_site_offsets) if p == j]
    return np.mean(tips, axis=0) if tips else np.zeros(3)


def _own_directions(target, source, k: int, j: int, a) -> tuple[np.ndarray, np.ndarray] | None:
    """(target, source) direction of a joint without mapped descendants: towards its own tip.
    target, source: (skeleton, (rest positions, rest rotations))."""
    vt, vs = _tip(*target, k), quat.rotate(a, _tip(*source, j))
    if np.linalg.norm(vt) > 1e-6 * target[0].size() and np.linalg.norm(vs) > 1e-6 * source[0].size():
        return vt, vs
    return None


def _in_between(target: Skeleton, mapped: np.ndarray, below: list[list[int]], pt: np.ndarray, rt: np.ndarray):
    """Anchor (K,), twist axis in each joint's frame (K, 3) and share (K,) of unmapped in-between joints."""
    anc = mapped_ancestors(target.parents, mapped)
    n = target.n_joints
    anchor, axis, fraction = np.full(n, -1), np.zeros((n, 3)), np.zeros(n)
    for k in np.flatnonzero(~mapped):
        a = anc[k]
        if a < 0 or not below[k]:
            continue
        segment = np.mean(pt[below[k]], axis=0) - pt[a]
        length = np.linalg.norm(segment)
        if length < 1e-6 * target.size():
            continue
        u = segment / length
        anchor[k] = a
        axis[k] = quat.rotate(quat.inverse(rt[k]), u)
        fraction[k] = np.clip((pt[k] - pt[a]) @ u / length, 0.0, 1.0)
    return anchor, axis, fraction
