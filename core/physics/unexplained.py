"""Frames the floor-and-feet model cannot explain: the body held by something else.

The physics solver models one support: the feet (and toes) on a flat floor. A capture may be
held by something else — the hands on the floor in a cartwheel, a bar or a seat of playground
equipment — and there the model's goals are wrong: a stretch without foot contact is not a
flight unless the body falls, and a ZMP far outside the feet cannot be brought in by moving
the body a little. Forcing such frames onto a ballistic path or into the feet's polygon
destroys the motion (measured on CMU 01_14, a child sitting on a climbing frame: 8.4 % of the
stature mean deviation, the plan's shift carried 30 cm back across 1.4 s of sitting by the
flight regulariser), so the solver leaves them alone and the report names them.

Two tests on the input's own measures, both honest (they read the motion, not the clip's name):

- **Held, not flying**: a stretch of at least ``min_seconds`` without any foot contact whose
  vertical ground force — from the centre of mass's acceleration, F = m·(g + a_up) — is at or
  above the free-fall threshold on most of its frames (:func:`.flights.airborne`'s rule the other
  way round). Shorter stretches are usually a contact missed on the toes (a pirouette, a quick
  step): the solver bridges them.
- **Supported beyond the feet**: a run of contact frames with the ZMP outside the feet's
  polygon that goes farther than ``reach`` of the stature: no shift near the performance brings
  it back (the ZMP moves about as much as the body does; the deviation bar is 1.5 % of the
  stature), so some other support carries the weight — or a contact was not detected. The
  solver tries these (a synthetic walk with its ZMP 0.6 m outside was balanced on 79 % of its
  frames) and names the runs still that far outside afterwards; only held stretches are held.

The benchmark's clips (walks, a dance, jumps) have none: their ZMP runs reach 0.14 of the
stature at most, their stretches without contact all fall.
"""

from __future__ import annotations

import numpy as np

from ..contacts import contact_spans
from .body import BodyModel
from .metrics import Analysis, flight_phases
from .support import to_ground

MIN_SECONDS = 0.2  # a stretch without contact held, not flying, at least this long is left alone
REACH = 0.2  # a ZMP run farther than this share of the stature outside the feet is left alone


def unexplained(
    an: Analysis, body: BodyModel, fps: float, min_seconds: float = MIN_SECONDS, reach: float = REACH
) -> tuple[np.ndarray, list[dict]]:
    """Frames (T,) bool the floor-and-feet model cannot explain, and one dict per stretch:
    ``start``, ``stop`` (frame range [start, stop)), ``kind`` ("held" or "beyond the feet") and
    ``reason`` (a sentence with the measure that decided it). ``an``: the input's analysis."""
    sup = an.support
    t = len(an.com)
    mask = np.zeros(t, dtype=bool)
    spans: list[dict] = []
    for start, stop in flight_phases(sup.any, max(int(round(min_seconds * fps)), 3)):
        if an.free_fall[start:stop].mean() >= 0.5:
            continue  # a flight: the solver's ballistic goals hold
        z = an.com[start:stop] @ body.up
        force = 1.0 + float(np.mean(np.gradient(np.gradient(z)) * fps**2)) / 9.81 if stop - start > 2 else 1.0
        mask[start:stop] = True
        spans.append({
            "start": int(start), "stop": int(stop), "kind": "held",
            "reason": f"no foot on the floor for {(stop - start) / fps:.2f} s yet not falling (vertical force "
            f"{100 * force:.0f} % of the weight on average): held by the hands or by equipment",
        })  # fmt: skip
    counted = sup.any & ~an.free_fall
    _, signed, _ = sup.query(to_ground(an.zmp, sup.basis))
    out = counted & (signed > 0)
    far = np.where(out, signed * body.unit, 0.0)
    for start, stop in contact_spans(out):
        if far[start:stop].max() > reach * body.height and not mask[start:stop].all():
            mask[start:stop] = True
            spans.append({
                "start": int(start), "stop": int(stop), "kind": "beyond the feet",
                "reason": f"ZMP up to {far[start:stop].max():.2f} m outside the feet ({reach:.0%} of the stature "
                "is the most a shift near the motion brings back): weight on the hands or on a support "
                "the floor-and-feet model does not have, or a contact not detected",
            })  # fmt: skip
    return mask, sorted(spans, key=lambda s: s["start"])
