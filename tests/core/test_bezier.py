import numpy as np

from core import quaternion as quat
from core import synthetic
from core.keyframes import reconstruct
from core.keyframes.bezier import evaluate, fit_handles


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


def test_one_and_two_frame_curves():
    one = np.array([[0.5, -1.0]])
    h1, h2 = fit_handles(one, np.array([0]))
    assert h1.shape == (0, 2) and h2.shape == (0, 2)
    assert np.array_equal(evaluate(one, h1, h2, np.array([0]), 1), one)
    two = np.array([[0.0, 1.0], [3.0, -1.0]])
    h1, h2 = fit_handles(two, np.array([0, 1]))
    assert h1.shape == (1, 2) and np.all(np.isfinite(h1)) and np.all(np.isfinite(h2))
    assert np.allclose(evaluate(two, h1, h2, np.array([0, 1]), 2), two)
