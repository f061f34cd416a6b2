"""Foot-sliding clean-up around an edit: contacts near a frame range, planted with two-link IK.

Only contact spans that overlap the range are planted, and each is planted whole (IK fades in
and out in the flight phases around it, see :func:`core.ik.plant.plant_feet`), so frames far
from the edit keep their original data and no fade happens while a foot is down.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..contacts import Contacts, Skating, contact_spans, detect_contacts, foot_skating
from ..ik import plant_feet
from ..ik.plant import BLEND as PLANT_BLEND
from ..motion import Motion


def contacts_near(contacts: Contacts, start: int, stop: int) -> Contacts:
    """The contact spans overlapping frames [start, stop), whole; every other frame out of contact."""
    flags = np.zeros_like(contacts.flags)
    for column in range(flags.shape[1]):
        for s, e in contact_spans(contacts.flags[:, column]):
            if s < stop and e > start:
                flags[s:e, column] = True
    return replace(contacts, flags=flags, anchors=np.where(flags[..., None], contacts.anchors, np.nan))


def skating_in(motion: Motion, contacts: Contacts, start: int, stop: int) -> Skating:
    """Foot skating (:func:`core.contacts.foot_skating`) counted only on steps inside [start, stop)
    (only those frames are evaluated)."""
    start, stop = max(start, 0), min(stop, motion.n_frames)
    return foot_skating(motion.frames(slice(start, stop)), contacts.flags[start:stop], contacts.joints, up=contacts.up)


def shift_contacts(contacts: Contacts, offset: int, n_frames: int) -> Contacts:
    """Contacts found on frames [offset, offset + t) of a motion, expressed on all its ``n_frames`` frames."""
    t, f = contacts.flags.shape
    flags = np.zeros((n_frames, f), dtype=bool)
    anchors = np.full((n_frames, f, 3), np.nan)
    flags[offset : offset + t], anchors[offset : offset + t] = contacts.flags, contacts.anchors
    return replace(contacts, flags=flags, anchors=anchors)


def clean_foot_sliding(
    motion: Motion,
    start: int = 0,
    stop: int | None = None,
    up: str | np.ndarray | None = None,
    context: float = 5.0,
    **plant_options,
) -> tuple[Motion, Contacts]:
    """Plant the feet whose contacts overlap frames [start, stop) (default all).

    Contacts are detected (:func:`core.contacts.detect_contacts`) on the range plus ``context``
    seconds on each side, grown until the planted spans and their fades fit inside, and only that
    stretch is solved, so the cost does not grow with the clip. plant_options go to
    :func:`core.ik.plant.plant_feet` (blend, out_of_reach, ...). Returns the cleaned motion and the
    planted contacts (on the whole motion's frames).
    """
    n = motion.n_frames
    stop = n if stop is None else stop
    fade = round(plant_options.get("blend", PLANT_BLEND) * motion.fps) + 2
    pad = max(round(context * motion.fps), fade)
    lo, hi = max(start - pad, 0), min(stop + pad, n)
    while True:
        local = motion.frames(slice(lo, hi))
        near = contacts_near(detect_contacts(local, up=up), start - lo, stop - lo)
        planted = np.flatnonzero(near.flags.any(axis=1))
        if not len(planted):
            return motion.copy(), shift_contacts(near, lo, n)
        need_lo, need_hi = lo + planted[0] - fade, lo + planted[-1] + 1 + fade
        if (need_lo >= lo or lo == 0) and (need_hi <= hi or hi == n):
            break
        lo, hi = max(min(lo, need_lo - pad), 0), min(max(hi, need_hi + pad), n)
    out = motion.copy()
    fixed = plant_feet(local, near, **plant_options)
    out.translations[lo:hi], out.rotations[lo:hi] = fixed.translations, fixed.rotations
    return out, shift_contacts(near, lo, n)
