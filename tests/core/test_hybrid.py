import numpy as np

from core.keyframes.bezier import evaluate, fit_handles
from core.keyframes.hybrid import drop_channel_keys


def deviation_by_fit_handles(y: np.ndarray) -> np.ndarray:
    """Largest deviation of the fitted single-segment Bezier over y (n+1, C), via bezier.py."""
    keys = np.array([0, len(y) - 1])
    h1, h2 = fit_handles(y, keys)
    return np.abs(evaluate(y[keys], h1, h2, keys, len(y)) - y).max(axis=0)


def test_budget_met_on_grid_subsets_smooth_channels_drop_first():
    t = np.arange(201)
    smooth = np.sin(t / 60.0)  # a cubic per long segment does
    busy = np.sin(t / 3.0)  # needs every grid key
    values = np.stack((smooth, busy), axis=1)
    keys = np.arange(0, 201, 10)
    budget = 30
    kept = drop_channel_keys(values, keys, np.ones(2), budget, forced=np.array([10]))
    assert sum(len(k) for k in kept) == budget
    for k in kept:
        assert set(k) <= set(keys) and k[0] == 0 and k[-1] == 200 and 100 in k
    assert len(kept[0]) < len(kept[1])


def test_lever_arms_weigh_the_choice():
    t = np.arange(101)
    values = np.stack((np.sin(t / 7.0), np.sin(t / 7.0)), axis=1)
    keys = np.arange(0, 101, 5)
    kept = drop_channel_keys(values, keys, np.array([1.0, 10.0]), 30)
    assert len(kept[1]) > len(kept[0])


def test_batched_fits_match_single_fits():
    from core.keyframes.hybrid import _SegmentFits

    rng = np.random.default_rng(8)
    values = np.cumsum(rng.normal(size=(60, 3)), axis=0)
    fits = _SegmentFits(np.ascontiguousarray(values.T))
    channel, start, stop = np.array([0, 1, 2, 0, 1]), np.array([0, 3, 10, 20, 58]), np.array([1, 5, 50, 45, 59])
    got = fits.errors(channel, start, stop)
    for g, c, a, b in zip(got, channel, start, stop):
        assert np.isclose(g, deviation_by_fit_handles(values[a : b + 1, c : c + 1])[0])
