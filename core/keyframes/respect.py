"""The user's own keys respected: which channels and frames Extract Keyframes re-keys, and how many
keys each may keep.

An action's curves arrive with their own keys. Dense mocap has a key on every frame and is
re-keyed; a channel that is already sparse (fewer keys than frames, e.g. hand-set poses) is kept
exactly as it is unless the user asks otherwise; channels of bones outside a chosen set are kept;
only the frames of a span are re-keyed (its two ends become keys, so the curve joins the keys kept
outside). A re-keyed channel never gets more keys than it had in the span: its key count is its cap
(see :func:`.hybrid.drop_channel_keys`).

A bone's rotation channels are decided together (they play one rotation: keeping one Euler angle
or quaternion component while re-keying the others would mix two representations); locations and
scales channel by channel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ROTATIONS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")


@dataclass
class KeyScope:
    """What a re-keying touches: the channels re-keyed with their caps, the channels kept as they
    were (and why), and the span of frame indices ``(first, last)`` re-keyed, both ends included."""

    rekey: list
    caps: dict
    span: tuple[int, int]
    kept_sparse: list = field(default_factory=list)
    kept_other: list = field(default_factory=list)  # outside the chosen bones, or too few keys to thin

    @property
    def kept(self) -> list:
        return self.kept_sparse + self.kept_other

    @property
    def n_frames(self) -> int:
        return self.span[1] - self.span[0] + 1

    def values(self, values: dict) -> dict:
        """The re-keyed channels' values on the span."""
        a, b = self.span
        return {k: values[k][a : b + 1] for k in self.rekey}


def key_scope(
    key_frames: dict | None,
    channels: list,
    n_frames: int,
    span: tuple[int, int] | None = None,
    keep_sparse: bool = True,
    bones: set | None = None,
) -> KeyScope:
    """Which channels to re-key on which frames, and the most keys each may keep.

    key_frames: channel → positions of its own keys on the clip's frame axis (0 = the first frame;
    None: every channel keyed on every frame, as a dense capture); channels: every channel of the
    clip; n_frames: frames in the clip; span: (first, last) frame index to re-key (default all);
    keep_sparse: channels with fewer keys than frames in the span stay exactly as they are;
    bones: re-key only these bones' channels (None: every bone).
    """
    a, b = (0, n_frames - 1) if span is None else (max(0, int(span[0])), min(n_frames - 1, int(span[1])))
    if b < a:
        raise ValueError(f"empty frame range ({a + 1}–{b + 1} of {n_frames} frames)")
    length = b - a + 1
    counts = {}
    for k in channels:
        frames = None if key_frames is None else key_frames.get(k)
        if frames is None:
            counts[k] = length
        else:
            frames = np.asarray(frames, dtype=float)
            counts[k] = int(np.count_nonzero((frames > a - 1e-3) & (frames < b + 1e-3)))
    outside = {k for k in channels if bones is not None and k[0] not in bones}
    thin = {k for k in channels if counts[k] < 2}  # nothing to thin: a constant or a single key here
    sparse = {k for k in channels if keep_sparse and counts[k] < length} - outside - thin
    held = outside | thin | sparse
    group = {k: (k[0], k[1] if k[1] in ROTATIONS else k) for k in channels}  # a bone's rotation as a whole
    held_groups = {group[h] for h in held}
    held |= {k for k in channels if group[k] in held_groups}
    sparse_groups = {group[s] for s in sparse}
    sparse |= {k for k in held - outside - thin if group[k] in sparse_groups}
    rekey = [k for k in channels if k not in held]
    kept_sparse = [k for k in channels if k in sparse]
    kept_other = [k for k in channels if k in held and k not in sparse]
    return KeyScope(rekey, {k: counts[k] for k in rekey}, (a, b), kept_sparse, kept_other)
