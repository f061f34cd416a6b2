"""Long clips within bounded memory (issue 16, "every clip": a ten-minute capture at 120 fps is 72,000 frames).

The balance plan's regulariser and normal equations were dense (N, N) matrices over the plan's N = 2·T/4 unknowns,
made from a dense (T, N) B-spline basis: memory grew with the square of the clip (looped CMU 02_01 1.4x onto
90 kg, 8,000 frames: peak traced 1,188 MB, 148.5 kB a frame, where 2,000 frames took 121.7 kB a frame). They are
kept banded now (:class:`core.physics.banded.Banded`), and the solve drops what it no longer reads between its
stages (:mod:`core.physics.solve`, docs/physics_notes.md "Long clips"): 2,000 looped frames 190 MB, 20,000 frames
2,136 MB (106.8 kB a frame); the synthetic walk below, 6,000 frames at 120 fps, 635.7 → 341.7 MB (105.9 → 57.0 kB
a frame, CPU 44.0 → 35–39 s, the same figures)."""

import time
import tracemalloc

import numpy as np
import pytest

from core import synthetic
from core.contacts import detect_contacts
from core.physics.balance import BalanceObjective, PlanGoals
from core.physics.body import body_model
from core.physics.derivatives import savgol
from core.physics.displacement import bspline_basis, n_controls
from core.physics.solve import physics_retarget
from core.physics.support import Support, ground_basis

UP = np.array([0.0, 0.0, 1.0])


def _support(flags: np.ndarray) -> Support:
    """One square foot box on every frame, in contact where ``flags`` (T,)."""
    t = len(flags)
    box = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    return Support(
        np.broadcast_to(box, (t, 1, 4, 2)).copy(), flags.reshape(t, 1), np.array([0]), ground_basis(UP), UP, 0.0
    )


def _difference_penalty(n: int, order: int) -> np.ndarray:
    """DᵀD (n, n), dense, of the ``order``-th differences D of n control points."""
    d = np.diff(np.eye(n), order, axis=0)
    return d.T @ d


def _goals(t: int, dims: int, half: int, rng) -> PlanGoals:
    return PlanGoals(
        0.02, deviation=0.01 + 0.01 * rng.random((t, dims)), smoothness=1e-3, jerk=0.15, free_gain=0.3, unseen=0.004,
        window=half, toward=rng.normal(size=(t, dims)),
    )  # fmt: skip


@pytest.mark.parametrize("t, spacing, dims, half", [(300, 4.0, 2, 12), (500, 4.0, 3, 12), (61, 2.0, 2, 3)])
def test_banded_regulariser_is_the_dense_formula(t, spacing, dims, half):
    """The regulariser (module notes of :mod:`core.physics.balance`: λ_dev Σ|δ − toward|² + λ_smooth |D²c|² +
    λ_jerk |D³c|² + λ_free Σ_flight |k₀δ̈|² + λ_unseen Σ_support |k₀(δ̈ − Sδ)|²) made densely from the whole
    (T, n) basis here, and its linear term: the banded one holds the same numbers (float rounding)."""
    rng = np.random.default_rng(3)
    flags = rng.random(t) > 0.15
    goals = _goals(t, dims, half, rng)
    fps = 120.0
    objective = BalanceObjective(_support(flags), np.ones(3), goals, spacing, fps, dims)
    n = n_controls(t, spacing)
    basis = bspline_basis(np.arange(t), n, spacing)
    k = goals.free_gain * fps**2
    acc = bspline_basis(np.flatnonzero(~flags), n, spacing, 2) * k
    unseen = (bspline_basis(np.arange(t), n, spacing, 2) - savgol(basis, half, 3, 2))[flags] * np.sqrt(goals.unseen) * k
    shared = goals.smoothness * _difference_penalty(n, 2) + goals.jerk * _difference_penalty(n, 3)
    shared += acc.T @ acc + unseen.T @ unseen + 1e-12 * np.eye(n)
    dense = np.zeros((n * dims, n * dims))
    linear = np.zeros(n * dims)
    for d in range(dims):
        dense[d::dims, d::dims] = basis.T @ (goals.deviation[:, d : d + 1] * basis) + shared
        linear[d::dims] = basis.T @ (goals.deviation[:, d] * goals.toward[:, d])
    reg = np.asarray(objective.regulariser)
    np.testing.assert_allclose(reg, dense, rtol=0, atol=1e-12 * np.abs(dense).max())
    np.testing.assert_allclose(objective.linear, linear, rtol=0, atol=1e-12 * np.abs(linear).max())
    rows, cols = np.nonzero(dense)
    assert objective.band == np.abs(rows - cols).max()
    x = rng.normal(size=n * dims)
    assert x @ objective.regulariser @ x == pytest.approx(x @ dense @ x, rel=1e-12)


def test_plan_objective_memory_grows_with_the_clip_not_its_square():
    """A ten-minute capture's plan has 36,002 unknowns: as dense (N, N) matrices its regulariser alone is 10 GB.
    On 12,000 frames (6,002 unknowns; dense: 288 MB each, the (T, n) basis 288 MB) the objective's peak traced
    memory stays under 3 kB a frame (measured: 0.47 kB; with the dense matrices 122.6 kB, 1.47 GB)."""
    t = 12_000
    rng = np.random.default_rng(4)
    flags = rng.random(t) > 0.1
    goals = _goals(t, 2, 12, rng)
    tracemalloc.start()
    try:
        BalanceObjective(_support(flags), np.ones(3), goals, 4.0, 120.0, 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3e3 * t, f"{peak / t:.0f} B a frame"


def test_a_long_walk_solves_within_a_memory_bound_per_frame():
    """The whole solve on a 50 s synthetic walk at 120 fps (6,000 frames, 90 kg): peak traced memory under
    80 kB a frame of clip (measured 57.0 kB; before the banded plan and the stages' drops, 105.9 kB), and no more
    frames over a torque limit than the input (measured: 1 → 1, ZMP inside 89.55 % of the contact frames before
    and after the change)."""
    n = 6000
    motion = synthetic.walk(n, fps=120.0)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 90.0, unit=1.0, up=contacts.up)
    tracemalloc.start()
    cpu = time.process_time()
    try:
        _, rep = physics_retarget(motion, contacts, body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    cpu = time.process_time() - cpu
    assert peak < 80e3 * n, f"{peak / n / 1e3:.1f} kB a frame ({cpu:.0f} s of CPU)"
    assert rep["after"]["torque_violation_frames"] <= rep["before"]["torque_violation_frames"]
