"""Anonymised skeletons: the same body with names that say nothing, for tests and benchmarks of
everything that must work whatever the names (mapping by structure, feet by topology)."""

from __future__ import annotations

import numpy as np

from .motion import Motion
from .skeleton import Skeleton


def anonymise(skeleton: Skeleton, seed: int = 0) -> tuple[Skeleton, np.ndarray]:
    """The same body with meaningless names (``j017``…) and siblings listed in a shuffled order.

    Returns (skeleton, old): ``old[k]`` is the original index of new joint ``k``, so a pose or
    a motion's arrays are carried over as ``array[..., old, :]``.
    """
    rng = np.random.default_rng(seed)
    kids = [[int(c) for c in skeleton.children(j)] for j in range(skeleton.n_joints)]
    order: list[int] = []
    stack = [int(r) for r in rng.permutation(np.flatnonzero(skeleton.parents < 0))][::-1]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(int(c) for c in rng.permutation(kids[j]))
    old = np.array(order)
    new_of = np.empty_like(old)
    new_of[old] = np.arange(len(old))
    parents = np.array([-1 if skeleton.parents[j] < 0 else new_of[skeleton.parents[j]] for j in old])
    labels = rng.permutation(len(old))
    rest = None if skeleton.rest_rotations is None else skeleton.rest_rotations[old]
    channels = None if skeleton.channels is None else tuple(skeleton.channels[j] for j in old)
    anon = Skeleton(tuple(f"j{labels[k]:03d}" for k in range(len(old))), parents, skeleton.rest_translations[old],
                    rest, channels, new_of[skeleton.end_site_parents], skeleton.end_site_offsets)  # fmt: skip
    return anon, old


def anonymise_motion(motion: Motion, seed: int = 0) -> Motion:
    """The same motion on :func:`anonymise`'s skeleton (joints reordered accordingly)."""
    skeleton, old = anonymise(motion.skeleton, seed)
    return Motion(skeleton, motion.translations[:, old], motion.rotations[:, old], motion.fps)
