"""Foot-sliding clean-up around an edit: contacts near a frame range, planted with two-link IK.

Only contact spans that overlap the range are planted, and each is planted whole (IK fades in
and out in the flight phases around it, see :func:`core.ik.plant.plant_feet`), so frames far
from the edit keep their original data and no fade happens while a foot is down.
"""

from __future__ import annotations

import numpy as np

from ..contacts import Contacts, Skating, contact_spans, detect_contacts, foot_skating
from ..ik import plant_feet
from ..motion import Motion


def contacts_near(contacts: Contacts, start: int, stop: int) -> Contacts:
    """The contact spans overlapping frames [start, stop), whole; every other frame out of contact."""
    flags = np.zeros_like(contacts.flags)
    for column in range(flags.shape[1]):
        for s, e in contact_spans(contacts.flags[:, column]):
            if s < stop and e > start:
                flags[s:e, column] = True
    anchors = np.where(flags[..., None], contacts.anchors, np.nan)
    return Contacts(
        contacts.joints,
        flags,
        anchors,
        contacts.up,
        contacts.floor,
        contacts.height_threshold,
        contacts.speed_threshold,
        contacts.fps,
    )


def skating_in(
    motion: Motion, contacts: Contacts, start: int, stop: int, positions: np.ndarray | None = None
) -> Skating:
    """Foot skating (:func:`core.contacts.foot_skating`) counted only on steps inside [start, stop)."""
    flags = contacts.flags.copy()
    flags[: max(start, 0)] = False
    flags[max(stop, 0) :] = False
    return foot_skating(motion, flags, contacts.joints, up=contacts.up, positions=positions)


def clean_foot_sliding(
    motion: Motion,
    start: int = 0,
    stop: int | None = None,
    up: str | np.ndarray | None = None,
    contacts: Contacts | None = None,
    **plant_options,
) -> tuple[Motion, Contacts]:
    """Plant the feet whose contacts overlap frames [start, stop) (default all).

    contacts: detected on ``motion`` when not given (:func:`core.contacts.detect_contacts`).
    plant_options go to :func:`core.ik.plant.plant_feet` (blend, out_of_reach, ...). Returns
    the cleaned motion and the contacts that were planted.
    """
    stop = motion.n_frames if stop is None else stop
    contacts = detect_contacts(motion, up=up) if contacts is None else contacts
    near = contacts_near(contacts, start, stop)
    if not near.flags.any():
        return motion.copy(), near
    return plant_feet(motion, near, **plant_options), near
