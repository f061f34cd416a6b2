import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.keyframes import reconstruct
from core.keyframes.bezier import BEZIER, CONSTANT, LINEAR, CurveKeys, evaluate, fit_handles, play_curves


def test_a_cubic_is_fitted_exactly():
    t = np.arange(61.0)
    keys = np.array([0, 20, 45, 60])
    # piecewise cubic through the keys: exactly representable
    values = np.where(
        t < 20, 0.001 * t**3 - 0.02 * t, np.where(t < 45, 4 + np.sin(t / 10), 3.0 - 0.05 * (t - 45) ** 2 / 3)
    )
    values[20], values[45] = 0.001 * 20**3 - 0.02 * 20, 4 + np.sin(4.5)
    seg0 = np.arange(21)
    cubic = 0.001 * seg0**3 - 0.02 * seg0
    h1, h2 = fit_handles(values[:, None], keys)
    fitted = evaluate(values[keys][:, None], h1, h2, keys, len(t))[:, 0]
    assert np.allclose(fitted[:21], cubic, atol=1e-6)
    # hand-checked Bernstein handles of that cubic on [0, 20]: y(s) with t = 20 s
    assert np.isclose(h1[0, 0], cubic[0] + 20 / 3 * (-0.02), atol=1e-5)


def test_straight_lines_keep_line_handles():
    values = np.linspace(0, 3, 31)[:, None] * [1.0, -2.0]
    keys = np.array([0, 1, 2, 10, 30])
    h1, h2 = fit_handles(values, keys)
    ya, yb = values[keys[:-1]], values[keys[1:]]
    assert np.allclose(h1, ya + (yb - ya) / 3, atol=1e-9) and np.allclose(h2, ya + 2 * (yb - ya) / 3, atol=1e-9)


def test_slerp_components_follow_closely():
    m = synthetic.walk(240)
    keys = np.arange(0, 240, 12)
    keys = np.append(keys, 239) if keys[-1] != 239 else keys
    rebuilt = reconstruct(m, keys)
    q = quat.make_continuous(rebuilt.rotations.reshape(240, -1, 4), axis=0).reshape(240, -1)
    h1, h2 = fit_handles(q, keys)
    curve = evaluate(q[keys], h1, h2, keys, 240)
    linear = np.stack([np.interp(np.arange(240), keys, q[keys, c]) for c in range(q.shape[1])], axis=1)
    assert np.abs(curve - q).max() < 0.05 * np.abs(linear - q).max()


def _least_squares_handles(values: np.ndarray, keys: np.ndarray, ridge: float = 1e-6) -> tuple:
    """Reference: each segment's two handles by least squares on its own frames, the ridge pulling them to
    the straight line."""
    frames = np.arange(len(values))
    seg = np.minimum(np.searchsorted(keys, frames, side="right") - 1, len(keys) - 2)
    h1, h2 = np.empty((len(keys) - 1, values.shape[1])), np.empty((len(keys) - 1, values.shape[1]))
    for i, (a, b) in enumerate(zip(keys[:-1], keys[1:])):
        s = (frames[seg == i] - a) / (b - a)
        basis = np.stack((3 * (1 - s) ** 2 * s, 3 * (1 - s) * s**2), axis=1)
        ends = np.outer((1 - s) ** 3, values[a]) + np.outer(s**3, values[b])
        line = np.stack((values[a] + (values[b] - values[a]) / 3, values[a] + 2 * (values[b] - values[a]) / 3))
        lhs = basis.T @ basis + ridge * np.eye(2)
        h = np.linalg.solve(lhs, basis.T @ (values[seg == i] - ends) + ridge * line)
        h1[i], h2[i] = h
    return h1, h2


def test_handles_are_each_segments_least_squares():
    """Segments of many lengths, some shared (the fit computes the basis once a length): each gets its own
    least-squares handles."""
    rng = np.random.default_rng(3)
    values = np.cumsum(rng.normal(size=(300, 3)), axis=0)
    for keys in (np.array([0, 1, 4, 7, 10, 13, 20, 40, 41, 60, 80, 150, 299]), np.array([0, 2, 4, 6, 200, 299])):
        h1, h2 = fit_handles(values, keys)
        r1, r2 = _least_squares_handles(values, keys)
        assert np.allclose(h1, r1, rtol=1e-9, atol=1e-9) and np.allclose(h2, r2, rtol=1e-9, atol=1e-9)


def test_one_and_two_frame_curves():
    one = np.array([[0.5, -1.0]])
    h1, h2 = fit_handles(one, np.array([0]))
    assert h1.shape == (0, 2) and h2.shape == (0, 2)
    assert np.array_equal(evaluate(one, h1, h2, np.array([0]), 1), one)
    two = np.array([[0.0, 1.0], [3.0, -1.0]])
    h1, h2 = fit_handles(two, np.array([0, 1]))
    assert h1.shape == (1, 2) and np.all(np.isfinite(h1)) and np.all(np.isfinite(h2))
    assert np.allclose(evaluate(two, h1, h2, np.array([0, 1]), 2), two)


def test_keys_must_span_the_curve_without_repeats():
    values = np.linspace(0.0, 1.0, 10)[:, None]
    for keys in ([1, 9], [0, 8], [0, 4, 4, 9]):
        with pytest.raises(ValueError, match="keys must rise"):
            fit_handles(values, np.array(keys))


def _random_curves(rng, n_curves=12, n_frames=200):
    """Bezier curves keyed on whole frames, handles at the thirds (as Extract Keyframes writes them) or
    anywhere (as a user drags them), some segments flat, one LINEAR and one CONSTANT key."""
    curves = []
    for c in range(n_curves):
        x = np.unique(np.concatenate(([0, n_frames - 1], rng.choice(n_frames, size=rng.integers(2, 30)))))
        y = rng.normal(size=len(x)) * 10
        if c % 4 == 0:
            y[1:3] = y[1]
        gap = np.diff(x)
        right = np.stack((x[:-1] + gap / 3, y[:-1] + rng.normal(size=len(gap))), axis=1)
        left = np.stack((x[1:] - gap / 3, y[1:] + rng.normal(size=len(gap))), axis=1)
        if c % 3 == 1:  # hand-dragged handles: any time inside the segment
            right[:, 0] = x[:-1] + gap * rng.uniform(0.05, 0.9, size=len(gap))
            left[:, 0] = x[1:] - gap * rng.uniform(0.05, 0.9, size=len(gap))
        co = np.stack((x, y), axis=1)
        left = np.concatenate((co[:1] - [1, 0], left))
        right = np.concatenate((right, co[-1:] + [1, 0]))
        ipo = np.full(len(x), BEZIER)
        ipo[len(x) // 2] = LINEAR
        ipo[len(x) // 3] = CONSTANT
        curves.append(CurveKeys(co.astype(np.float32), left.astype(np.float32), right.astype(np.float32), ipo,
                                linear=bool(c % 2)))  # fmt: skip
    return curves


def test_playback_on_whole_frames_shares_roots_without_changing_a_value():
    """On whole frames the time cubic is solved once per distinct cubic and frame offset; the values are
    exactly those solved frame by frame (the path a fractional frame takes), in any frame order."""
    rng = np.random.default_rng(3)
    curves = _random_curves(rng)
    frames = np.arange(-5.0, 210.0)
    shared = play_curves(curves, frames)
    one_by_one = play_curves(curves, np.concatenate((frames, [0.5])))[:-1]
    assert np.array_equal(shared, one_by_one)
    shuffled = rng.permutation(len(frames))
    assert np.array_equal(play_curves(curves, frames[shuffled]), shared[shuffled])
    again = np.concatenate((shuffled, shuffled[::3]))  # frames asked twice, keys' frames among them
    assert np.array_equal(play_curves(curves, frames[again]), shared[again])
    # and the curves do move between their keys (a constant result would pass the above)
    assert np.all(np.ptp(shared, axis=0) > 1.0)
    keys = curves[0].co
    assert np.allclose(shared[5 + keys[:, 0].astype(int), 0], keys[:, 1])
