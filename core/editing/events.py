"""Key events for time alignment: foot strikes (contact starts) found with :mod:`core.contacts`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contacts import Contacts, contact_spans, detect_contacts
from ..limbs import find_feet
from ..motion import Motion


@dataclass
class Events:
    """Key events in time order: frames (K,) float frame positions, labels (K,) what happened
    (e.g. the side of the foot that struck, "L"/"R")."""

    frames: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        self.frames = np.asarray(self.frames, dtype=float)
        self.labels = np.asarray(self.labels)
        if len(self.frames) != len(self.labels) or np.any(np.diff(self.frames) <= 0):
            raise ValueError("events need one label per frame and strictly increasing frames")


def strike_frames(flags: np.ndarray, min_swing: int) -> np.ndarray:
    """(S,) frames where a contact starts after a swing: the first contact start counts only when
    at least ``min_swing`` frames of flight precede it inside the clip (otherwise the foot may have
    been down already, as in a capture that starts mid-stance)."""
    starts = contact_spans(flags)[:, 0]
    keep = starts > 0
    if len(starts):
        keep[0] &= starts[0] >= min_swing
    return starts[keep]


def foot_strikes(
    motion: Motion, up: str | np.ndarray | None = None, min_swing: float = 0.15, contacts: Contacts | None = None
) -> Events:
    """Foot strikes of both feet, labelled by side ("L"/"R", or "A"/"B" for feet found by topology).

    min_swing: seconds of flight required before a strike at the start of the clip.
    contacts: from :func:`core.contacts.detect_contacts` (detected when not given).
    """
    contacts = detect_contacts(motion, up=up) if contacts is None else contacts
    side_of = {foot: side for side, (foot, _) in find_feet(motion.skeleton, contacts.up).items()}
    frames, labels = [], []
    for column, joint in enumerate(contacts.joints):
        strikes = strike_frames(contacts.flags[:, column], round(min_swing * motion.fps))
        frames.extend(strikes.tolist())
        labels.extend([side_of.get(int(joint), motion.skeleton.names[joint])] * len(strikes))
    order = np.argsort(frames, kind="stable")
    frames, labels = np.asarray(frames, dtype=float)[order], np.asarray(labels)[order]
    unique = np.concatenate(([True], np.diff(frames) > 0)) if len(frames) else np.zeros(0, dtype=bool)
    return Events(frames[unique], labels[unique])


def match_events(a: Events, b: Events) -> tuple[np.ndarray, np.ndarray]:
    """Frames (M,) in A and (M,) in B of corresponding events.

    The first pair with the same label (earliest in both clips together) starts the match; it
    goes on while the labels keep agreeing (alternating strikes in both), and stops at the first
    disagreement (a missed or doubled strike) or the end of either list.
    """
    same = a.labels[:, None] == b.labels[None, :]
    if not same.any():
        raise ValueError("the two motions share no event label")
    i, j = min(zip(*np.nonzero(same)), key=lambda ij: (ij[0] + ij[1], ij[0]))
    n = 0
    while i + n < len(a.labels) and j + n < len(b.labels) and a.labels[i + n] == b.labels[j + n]:
        n += 1
    return a.frames[i : i + n], b.frames[j : j + n]
