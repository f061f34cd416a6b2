"""The balance plan: coloured finite-difference Jacobians, projection into the support polygon,
and the Gauss–Newton plan on a model whose answer is known."""

import numpy as np
import pytest

from core.physics.balance import (
    BalanceObjective,
    Measures,
    PlanGoals,
    Rows,
    SolverOptions,
    coloured_jacobian,
    plan_balance,
)
from core.physics.derivatives import savgol
from core.physics.displacement import evaluate, n_controls
from core.physics.support import Support, ground_basis

UP = np.array([0.0, 0.0, 1.0])


def _square_support(t: int, half: float = 1.0, flags: np.ndarray | None = None) -> Support:
    """One square foot box [−half, half]² on every frame (contact everywhere unless ``flags``)."""
    box = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    flags = np.ones((t, 1), dtype=bool) if flags is None else flags.reshape(t, 1)
    return Support(np.broadcast_to(box, (t, 1, 4, 2)).copy(), flags, np.array([0]), ground_basis(UP), UP, 0.0)


@pytest.mark.parametrize("tight", [False, True])
def test_coloured_jacobian_equals_one_control_at_a_time(tight):
    """Also with the tight reach (two spacings plus one derivative window, fewer colours), the
    clip's edge frames reaching from the centre of their one-sided window (``edge``)."""
    t, spacing, half = 90, 4.0, 6
    n = n_controls(t, spacing)
    rng = np.random.default_rng(3)
    c0 = rng.normal(size=(n, 2))

    def f(c):  # local in time: a smoothed second derivative of the spline, then pointwise nonlinear
        x = evaluate(c, t, spacing)
        acc = savgol(x, half, 3, 2)
        return np.concatenate((np.sin(x), x[:, :1] * acc), axis=1)

    reach = 2 * spacing + (half if tight else 2 * half)
    index, jac = coloured_jacobian(f, c0, spacing, reach, 1e-6, edge=half if tight else 0)
    assert index.shape[1] < n  # fewer evaluations than controls
    assert index.shape[1] == (8 if tight else 11)
    base = f(c0)
    for i in range(n):
        for d in range(2):
            moved = c0.copy()
            moved[i, d] += 1e-6
            full = (f(moved) - base) / 1e-6  # (T, M)
            colour = np.where(index == i, 1.0, 0.0)  # frames credit control i through one colour at most
            got = np.einsum("tmc,tc->tm", jac[..., d], colour)
            np.testing.assert_allclose(got, full, atol=1e-6)


@pytest.mark.parametrize("depth", [0.0, 0.05, 0.15, 0.25])
def test_projection_moves_a_point_by_what_it_lacks_of_the_margin(depth):
    sup = _square_support(1)
    margin = 0.2
    q = np.array([[1.0 - depth, 0.3]])  # depth inside the right edge
    goal = sup.project(q, margin)
    expected = q if depth >= margin else np.array([[1.0 - margin, 0.3]])
    np.testing.assert_allclose(goal, expected, atol=1e-12)
    outside = sup.project(np.array([[1.5, 0.3]]), margin)  # from outside: to the margin, straight in
    np.testing.assert_allclose(outside, [[0.8, 0.3]], atol=1e-12)


def test_plan_brings_a_cart_table_zmp_inside_and_a_torque_under_its_limit():
    """ZMP = z₀ + δ − k δ̈ (cart-table: exact for a rigid shift) over a unit square; a torque that
    grows with the ZMP's distance along x from the ankle at the origin, as an ankle's does."""
    fps, t, spacing, half = 60.0, 180, 2.0, 3
    k = 0.08  # s²: CoM 0.8 m high
    time = np.arange(t) / fps
    z0 = np.stack((1.4 * np.sin(2 * np.pi * time / 3.0), 0.3 * np.cos(2 * np.pi * time / 3.0)), axis=1)
    sup = _square_support(t)
    limit = np.array([100.0])

    def realise(c):
        return evaluate(c, t, spacing)

    def measure(delta):
        acc = savgol(delta, half, 3, 2, 1.0 / fps)
        z = z0 + delta - k * acc
        tau = np.zeros((t, 1, 3))
        tau[:, 0, 1] = 150.0 * z[:, 0]  # N·m per unit of lever arm
        return Measures(z, tau)

    before = measure(np.zeros((t, 2)))
    assert np.abs(before.zmp[:, 0]).max() > 1.3 and np.abs(before.torques).max() > 1.9 * limit[0]
    margin = 0.05
    plan = plan_balance(
        realise, measure, sup, limit, spacing, 2 * spacing + 2 * half,
        PlanGoals(margin, torque_margin=0.05, torque_weight=1.0, deviation=1e-4, smoothness=1e-4),
        SolverOptions(iterations=4), fps=fps,
    )  # fmt: skip
    after = measure(realise(plan.controls))
    inside, signed, _ = sup.query(after.zmp)
    assert inside.all() and signed.max() < -0.5 * margin
    ratio = np.linalg.norm(after.torques, axis=-1)[:, 0] / limit[0]
    assert ratio.max() < 1.0  # the torque goal (|x| ≤ 0.63) is tighter than the polygon's here
    np.testing.assert_allclose(plan.shift, realise(plan.controls))


def test_plan_jerk_weight_smooths_the_shift_and_keeps_the_zmp_inside():
    """The jerk term (third differences of the controls) lowers the shift's mean |third difference|
    — what the report's jerk adds up — while the cart-table ZMP still ends inside the polygon."""
    fps, t, spacing, half = 60.0, 180, 2.0, 3
    time = np.arange(t) / fps
    z0 = np.stack((1.3 * np.sin(2 * np.pi * time / 1.5), 0.2 * np.cos(2 * np.pi * time / 3.0)), axis=1)
    sup = _square_support(t)

    def measure(delta):
        return Measures(z0 + delta - 0.08 * savgol(delta, half, 3, 2, 1.0 / fps), np.zeros((t, 0, 3)))

    shifts = {}
    for jerk in (0.0, 1.0):
        plan = plan_balance(
            lambda c: evaluate(c, t, spacing), measure, sup, np.zeros(0), spacing, 2 * spacing + half,
            PlanGoals(0.05, deviation=1e-4, smoothness=1e-4, jerk=jerk), SolverOptions(iterations=4), fps=fps,
            edge=half,
        )  # fmt: skip
        inside, _, _ = sup.query(measure(plan.shift).zmp)
        assert inside.mean() > 0.97
        shifts[jerk] = np.linalg.norm(np.diff(plan.shift, 3, axis=0), axis=-1).mean()
    assert shifts[1.0] < 0.8 * shifts[0.0]


def test_plan_does_not_accelerate_the_shift_in_flight():
    """Without support the plan's shift must stay unaccelerated (the flight stays ballistic)."""
    fps, t, spacing, half = 60.0, 120, 2.0, 3
    flags = np.ones(t, dtype=bool)
    flags[50:70] = False
    sup = _square_support(t, flags=flags)
    z0 = np.tile([1.3, 0.0], (t, 1))

    def measure(delta):
        z = z0 + delta - 0.08 * savgol(delta, half, 3, 2, 1.0 / fps)
        z[~flags] = np.nan
        return Measures(z, np.zeros((t, 0, 3)))

    plan = plan_balance(
        lambda c: evaluate(c, t, spacing), measure, sup, np.zeros(0), spacing, 2 * spacing + 2 * half,
        PlanGoals(0.05, free_gain=0.08), SolverOptions(iterations=3), fps=fps,
    )  # fmt: skip
    assert sup.query(measure(plan.shift).zmp)[0][flags].all()
    acc = evaluate(plan.controls, t, spacing, 2) * fps**2
    assert np.abs(acc[55:65]).max() < 0.05 * np.abs(acc[flags]).max()


@pytest.mark.parametrize("per_frame", [False, True])
def test_objective_merit_is_its_residuals_squared_plus_the_regulariser(per_frame):
    """The objective alone (no solver): on its active sets the merit is |r|² of the residuals it
    linearises plus x·R·x — also with a torque weight per joint-frame (zero: the frame is free)."""
    fps, t, spacing, half = 60.0, 90, 2.0, 3
    weight = np.random.default_rng(2).uniform(0.5, 3.0, (t, 1)) if per_frame else 1.0
    if per_frame:
        weight[::3] = 0.0
    sup = _square_support(t)
    z0 = np.stack((np.linspace(0.5, 1.3, t), np.zeros(t)), axis=1)

    def measure(c):
        delta = evaluate(c, t, spacing)
        tau = np.zeros((t, 1, 3))
        tau[:, 0, 1] = 150.0 * (z0[:, 0] + delta[:, 0])
        return Measures(z0 + delta, tau)

    objective = BalanceObjective(sup, [100.0], PlanGoals(0.1, torque_weight=weight, deviation=1e-3), spacing, fps)
    controls = np.random.default_rng(1).normal(scale=0.05, size=(objective.n, 2))
    m = measure(controls)
    active = objective.violations(m)
    assert active[0].any() and active[1].any()
    if per_frame:
        assert not active[1][::3].any() and active[1][1::3].any()
    index, jac = coloured_jacobian(lambda c: measure(c).flat(), controls, spacing, 2 * spacing + 2 * half, 1e-6)
    _, r = objective.linearise(m, index, jac, active)
    x = controls.ravel()
    assert objective.merit(controls, m, active) == pytest.approx(r @ r + x @ objective.regulariser @ x)


def test_coloured_jacobian_in_batches_equals_one_evaluation_at_a_time():
    """``many`` gives the columns in one call per batch; the Jacobian is the same, and a known base saves one call."""
    t, spacing, half = 60, 4.0, 3
    n = n_controls(t, spacing)
    c0 = np.random.default_rng(5).normal(size=(n, 2))
    calls = []

    def f(c):
        calls.append(1)
        x = evaluate(c, t, spacing)
        return np.concatenate((np.cos(x), savgol(x, half, 3, 2)), axis=1)

    def many(cs):
        calls.append(len(cs))
        return np.stack([f(c) for c in cs])

    reach = 2 * spacing + 2 * half
    index, jac = coloured_jacobian(f, c0, spacing, reach, 1e-6)
    plain = len(calls)
    calls.clear()
    index2, jac2 = coloured_jacobian(f, c0, spacing, reach, 1e-6, many=many, base=f(c0))
    np.testing.assert_array_equal(index, index2)
    np.testing.assert_allclose(jac2, jac, atol=1e-12)
    assert calls[1] == plain - 1  # every perturbed column in one batch; the base was given


def test_batched_analysis_equals_clip_by_clip():
    """Clips one after another with ``clips`` (each differentiated on its own, support tiled) measure
    exactly what each clip measures alone."""
    from core.contacts import detect_contacts
    from core.io.bvh import read_bvh
    from core.physics.body import body_model
    from core.physics.metrics import analyse
    from core.physics.plan import _Batch, _shift_root, state_joints
    from core.physics.planting import _plant, with_toes
    from tests.conftest import shared_file

    motion = read_bvh(shared_file("cmu_bvh_cgspeed/02_01.bvh")).frames(slice(1, 101)).scaled(1.4)
    body = body_model(motion.skeleton, 90.0, unit=0.0254 / 0.45)
    feet = detect_contacts(motion)
    contacts = with_toes(motion, feet)
    motion = _plant(motion, feet)  # as the solver plants
    ref_an = analyse(motion, contacts, body, smooth=0.2)
    sup = ref_an.support
    root, spacing, t = state_joints(body)[0], 4.0, motion.n_frames
    controls = np.random.default_rng(0).normal(scale=0.5, size=(3, n_controls(t, spacing), 2))
    batch = _Batch(motion, root, feet, spacing, sup.basis, plant=True, kin=ref_an.kin)
    moved, world = batch.realise(controls)  # with its forward kinematics: the reference's shifted, the legs anew
    np.testing.assert_allclose(world[0], moved.world_positions(), atol=1e-9)
    turned = batch.turned(world, 3)  # the joints planting did not turn keep the reference's angular velocities
    legs = [j for side in ("Left", "Right") for j in (f"{side}UpLeg", f"{side}Leg", f"{side}Foot")]
    assert not turned[1][[body.skeleton.index(j) for j in legs]].any() and turned[1].sum() > 15
    together = analyse(moved, contacts, body, smooth=0.2, support=sup.tiled(3), clips=3, world=world, turned=turned)
    for k, c in enumerate(controls):
        alone = _plant(_shift_root(motion, root, evaluate(c, t, spacing) @ sup.basis), feet)
        a = analyse(alone, contacts, body, smooth=0.2, support=sup)
        part = slice(k * t, (k + 1) * t)
        np.testing.assert_allclose(together.kin.joint_pos[part], a.kin.joint_pos, atol=1e-9)
        np.testing.assert_allclose(together.zmp[part], a.zmp, atol=1e-9)
        np.testing.assert_allclose(together.torques[part], a.torques, atol=1e-8)
        np.testing.assert_allclose(together.kin.omega[part], a.kin.omega, atol=1e-9)


def test_the_plan_pays_for_the_acceleration_its_derivative_window_misses():
    """PlanGoals.unseen: x·R·x grows by λ Σ_supported |k₀ (δ̈ − S δ)|², the shift's exact acceleration less what a
    cubic Savitzky–Golay window of ``window`` half-width makes of its samples (computed here on the shift itself, not
    the basis); a wiggle at the controls' own rate is charged nearly all of its acceleration, a 1 Hz sway almost none,
    and frames without support are left to the flight term."""
    fps, t, spacing, half, k0, lam = 120.0, 240, 4.0, 12, 0.1, 0.5
    flags = np.ones(t, dtype=bool)
    flags[100:130] = False
    sup = _square_support(t, flags=flags)
    plain = BalanceObjective(sup, [100.0], PlanGoals(0.1, free_gain=k0), spacing, fps)
    paying = BalanceObjective(sup, [100.0], PlanGoals(0.1, free_gain=k0, unseen=lam, window=half), spacing, fps)
    n = paying.n
    rng = np.random.default_rng(4)
    controls = rng.normal(scale=0.01, size=(n, 2))
    x = controls.ravel()
    shift = evaluate(controls, t, spacing)
    missed = (evaluate(controls, t, spacing, 2) - savgol(shift, half, 3, 2)) * fps**2
    expected = lam * ((k0 * missed[flags]) ** 2).sum()
    assert x @ (paying.regulariser - plain.regulariser) @ x == pytest.approx(expected, rel=1e-9)

    def share(c: np.ndarray) -> float:  # the charge against the whole exact acceleration on supported frames
        y = c.ravel()
        full = ((k0 * evaluate(c, t, spacing, 2)[flags] * fps**2) ** 2).sum()
        return float(y @ (paying.regulariser - plain.regulariser) @ y / (lam * full))

    wiggle = np.stack((np.where(np.arange(n) % 2, 1e-3, -1e-3), np.zeros(n)), axis=1)
    sway = np.stack((0.05 * np.sin(2 * np.pi * (np.arange(n) - 1) * spacing / fps), np.zeros(n)), axis=1)
    assert share(wiggle) > 0.8
    assert share(sway) < 0.02


def test_the_deviation_term_measures_the_shift_from_toward():
    """PlanGoals.toward (the final plan's way back to the performance): the regularisers' share of the merit is
    Σ w|δ − toward|² less its constant Σ w|toward|², δ the shift the controls make (no smoothness terms)."""
    fps, t, spacing = 60.0, 90, 2.0
    rng = np.random.default_rng(4)
    toward = np.stack((np.sin(np.linspace(0, 3, t)), np.linspace(-0.2, 0.4, t)), axis=1)
    weight = rng.uniform(0.5, 2.0, (t, 2))
    goals = PlanGoals(0.1, deviation=weight, smoothness=0.0, toward=toward)
    objective = BalanceObjective(_square_support(t), [100.0], goals, spacing, fps)
    controls = rng.normal(scale=0.3, size=(objective.n, 2))
    m = Measures(np.zeros((t, 2)), np.zeros((t, 1, 3)))  # inside, no torque: no residual is active
    active = objective.violations(m)
    assert not active[0].any() and not active[1].any()
    delta = evaluate(controls, t, spacing)
    expected = (weight * (delta - toward) ** 2).sum() - (weight * toward**2).sum()
    assert objective.merit(controls, m, active) == pytest.approx(expected, rel=1e-6)
    # and its minimiser is the weighted least-squares fit of the shift to toward
    best = np.linalg.solve(objective.regulariser, objective.linear).reshape(-1, 2)
    moved = evaluate(best + 0.01 * rng.normal(size=best.shape), t, spacing)
    fit = evaluate(best, t, spacing)
    assert (weight * (fit - toward) ** 2).sum() < (weight * (moved - toward) ** 2).sum()


def test_compressed_rows_multiply_as_their_dense_matrix():
    """Rows kept colour-compressed (each row: C controls, −1 for none, D derivatives each) give the products of
    the dense matrix built entry by entry: AᵀA (the plan's normal matrix), A·x and Aᵀ·y."""
    rng = np.random.default_rng(3)
    n, c, d, r = 9, 3, 2, 14
    index = np.array([rng.choice(np.arange(-1, n), c, replace=False) for _ in range(r)])
    values = rng.normal(size=(r, c, d))
    dense = np.zeros((r, n * d))
    for row in range(r):
        for k in range(c):
            if index[row, k] >= 0:
                dense[row, index[row, k] * d : index[row, k] * d + d] = values[row, k]
    rows = Rows.compressed(index, values, n)
    x, y = rng.normal(size=n * d), rng.normal(size=r)
    assert np.allclose(rows.gram(), dense.T @ dense, rtol=1e-12, atol=1e-12)
    assert np.allclose(rows.times(x), dense @ x, rtol=1e-12, atol=1e-12)
    assert np.allclose(rows.transposed_times(y), dense.T @ y, rtol=1e-12, atol=1e-12)
    # the band the plan's block solve relies on: the dense AᵀA is zero farther off its diagonal than Rows.band
    at, bt = np.nonzero(dense.T @ dense)
    assert np.abs(at - bt).max() <= rows.band()


def test_an_active_frame_the_shift_took_off_the_floor_gives_no_zmp_row():
    """A frame active for good whose ZMP is now undefined (the shift made it a flight frame): no row for it, and
    the others' rows are finite (a NaN row had made the whole step NaN and stopped the plan: on Bandai's dance
    296 → 157 frames over a limit, ZMP inside 74.6 → 82.6 %, jerk ×1.30 → ×1.12 once the plans went on)."""
    t, spacing = 20, 4.0
    sup = _square_support(t)
    objective = BalanceObjective(sup, np.zeros(0), PlanGoals(0.1), spacing, 60.0)
    zmp = np.tile([1.5, 0.0], (t, 1))
    active = (np.ones(t, dtype=bool), np.zeros((t, 0), dtype=bool))
    zmp[7] = np.nan
    m = Measures(zmp, np.zeros((t, 0, 3)))
    index, jac = coloured_jacobian(
        lambda c: np.tile([1.0, 0.0], (t, 1)), np.zeros((objective.n, 2)), spacing, 8.0, 1e-6
    )
    rows, b = objective.linearise(m, index, jac, active)
    assert len(b) == 2 * (t - 1) and np.isfinite(b).all() and np.isfinite(rows.values).all()
