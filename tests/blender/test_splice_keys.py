"""The two key splices (smoothed pose edit, keyframe replace) on an F-curve whose keys outside the span
differ in every property: what stays, what is new, and the frame order written."""

from importlib import import_module

import bpy
import numpy as np
import pytest

from tests.blender.conftest import PACKAGE

animdata = import_module(PACKAGE + ".addon.common.animdata")

PROPERTIES = ("co", "handle_left", "handle_right", "interpolation", "easing", "type",
              "handle_left_type", "handle_right_type")  # fmt: skip
OUTSIDE = {  # frame → (interpolation, easing, type, left handle type, right handle type)
    1: ("CONSTANT", "EASE_IN", "BREAKDOWN", "VECTOR", "VECTOR"),
    2: ("BOUNCE", "EASE_IN", "JITTER", "FREE", "ALIGNED"),
    3: ("LINEAR", "EASE_IN_OUT", "EXTREME", "AUTO", "FREE"),
    7: ("BEZIER", "AUTO", "MOVING_HOLD", "ALIGNED", "ALIGNED"),
    8: ("SINE", "EASE_OUT", "GENERATED", "VECTOR", "FREE"),
    9: ("LINEAR", "AUTO", "KEYFRAME", "FREE", "VECTOR"),
    10: ("BEZIER", "EASE_IN", "BREAKDOWN", "AUTO_CLAMPED", "AUTO"),
}
OUTSIDE_PLAYED = (1.5, 2.25, 2.5, 2.75, 7.5, 8.25, 8.5, 8.75, 9.5)  # within segments between keys outside the span


@pytest.fixture
def fcurve():
    """Location X of an empty keyed at frames 1–10 (value 0.1 × frame²), the keys outside 4–6 each
    with its own interpolation, easing, type and handle types, one handle moved by hand."""
    obj = bpy.data.objects.new("Keyed", None)
    bpy.context.scene.collection.objects.link(obj)
    for frame in range(1, 11):
        obj.location.x = 0.1 * frame**2
        obj.keyframe_insert("location", index=0, frame=frame)
    (curve,) = (fc for curves in animdata.curve_lists(obj.animation_data.action) for fc in curves)
    for key in curve.keyframe_points:
        if int(key.co.x) in OUTSIDE:
            settings = OUTSIDE[int(key.co.x)]
            key.interpolation, key.easing, key.type, key.handle_left_type, key.handle_right_type = settings
    curve.keyframe_points[1].handle_right = (2.4, 0.9)
    curve.update()
    return curve


def keys(curve, every_handle=False):
    """frame → every property of that key, as Python values; the handles only where set by hand (FREE or
    ALIGNED: Blender places the others from the neighbouring keys) unless ``every_handle``."""
    out = {}
    for key in curve.keyframe_points:
        row = {name: getattr(key, name) for name in PROPERTIES}
        for name in ("co", "handle_left", "handle_right"):
            row[name] = tuple(row[name])
        for side in ("handle_left", "handle_right"):
            if not every_handle and row[side + "_type"] not in ("FREE", "ALIGNED"):
                del row[side]
        out[round(key.co.x, 3)] = row
    return out


def test_splice_keys_keeps_every_key_outside_and_writes_linear_keys_in_order(fcurve):
    before, played = keys(fcurve), [fcurve.evaluate(f) for f in OUTSIDE_PLAYED]
    animdata.splice_keys(fcurve, np.array([4.0, 5.0, 6.0]), np.array([9.0, 8.0, 7.0]))
    after = keys(fcurve)
    assert [fcurve.evaluate(f) for f in OUTSIDE_PLAYED] == pytest.approx(played, abs=1e-6)  # eased segments too
    frames = [key.co.x for key in fcurve.keyframe_points]
    assert frames == sorted(frames) and list(after) == list(range(1, 11))
    assert all(after[f] == before[f] for f in OUTSIDE)
    for frame, value in ((4, 9.0), (5, 8.0), (6, 7.0)):
        key = after[frame]
        assert key["co"] == pytest.approx((frame, value)) and (key["interpolation"], key["easing"]) == (
            "LINEAR",
            "AUTO",
        )
        assert key["type"] == "KEYFRAME" and key["handle_left_type"] == key["handle_right_type"] == "AUTO_CLAMPED"
    assert fcurve.evaluate(5.5) == pytest.approx(7.5, abs=1e-5)


def test_replace_span_keys_keeps_the_end_keys_outer_sides_and_every_key_outside(fcurve):
    before, ends = keys(fcurve), keys(fcurve, every_handle=True)
    animdata.replace_span_keys(fcurve, np.array([3.0, 5.0, 7.0]), np.array([9.0, 8.0, 7.0]))
    after = keys(fcurve, every_handle=True)
    frames = [key.co.x for key in fcurve.keyframe_points]
    assert frames == sorted(frames) and list(after) == [1, 2, 3, 5, 7, 8, 9, 10]
    assert all(keys(fcurve)[f] == before[f] for f in (1, 2, 8, 9, 10))
    first, middle, last = after[3], after[5], after[7]
    assert first["co"] == ends[3]["co"] and first["handle_left"] == ends[3]["handle_left"]
    assert last["co"] == ends[7]["co"] and last["handle_right"] == ends[7]["handle_right"]
    assert last["interpolation"] == ends[7]["interpolation"] == "BEZIER"
    assert middle["co"] == pytest.approx((5.0, 8.0)) and middle["interpolation"] == "LINEAR"
    assert {middle["handle_left_type"], middle["handle_right_type"], middle["type"]} == {"FREE", "KEYFRAME"}
    assert fcurve.evaluate(4.0) == pytest.approx((ends[3]["co"][1] + 8.0) / 2, abs=1e-5)
