"""Plots of physics-aware retargeting: the ZMP path over the support polygons and the joint
torques against their limits, before and after (from :class:`.metrics.PhysicsSeries`).

One place for the Retarget operator (the PNG it loads as an image), ``scripts/retarget.py
--plot`` and ``scripts/benchmark_physics.py``. matplotlib is imported only when a plot is
drawn, through its object-oriented API (no pyplot, no backend switch): Blender does not bundle
matplotlib, and callers check :func:`available` (or catch ImportError) and go on without the
image.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .metrics import PhysicsSeries

COLORS = {"before": "tab:gray", "after": "tab:green"}
MISSING = "matplotlib is not installed in this Python"


def available() -> bool:
    """Whether matplotlib can be imported here."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(width: float, height: float):
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(MISSING) from exc
    return Figure(figsize=(width, height))


def draw_zmp(ax, s: PhysicsSeries, label: str, polygons: int = 150) -> None:
    """ZMP path, CoM path and the support polygons of about ``polygons`` frames on one axes (metres)."""
    for t in range(0, s.n_frames, max(1, s.n_frames // polygons)):
        hull = s.hull(t)
        if len(hull) >= 3:
            ax.fill(hull[:, 0], hull[:, 1], color="0.55", alpha=0.08, lw=0)
    ax.plot(s.com[:, 0], s.com[:, 1], color="tab:blue", lw=1, label="CoM")
    ax.plot(s.zmp[:, 0], s.zmp[:, 1], color="tab:red", lw=0.6, alpha=0.6, label="ZMP")
    out = s.counted & ~s.inside
    ax.scatter(s.zmp[out, 0], s.zmp[out, 1], s=5, color="black", label="ZMP outside", zorder=3)
    ax.set_title(f"{label}: ZMP inside the support polygon on {100 * s.inside_share():.1f} % of contact frames",
                 fontsize=9)  # fmt: skip
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("ground e1 (m)", fontsize=8)
    ax.set_ylabel("ground e2 (m)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(loc="upper right", fontsize=7)


def draw_torques(axes, runs: dict[str, PhysicsSeries]) -> None:
    """Hip, knee and ankle torque norms of each run against their limits, one axes per joint."""
    first = next(iter(runs.values()))
    for k, ax in enumerate(axes):
        for label, s in runs.items():
            t = np.arange(s.n_frames) / s.fps
            ax.plot(t, s.torques[:, k], color=COLORS.get(label), lw=0.8, label=label)
        ax.axhline(first.torque_limits[k], color="tab:red", lw=1, ls="--", label="limit")
        ax.set_ylabel(f"{first.torque_joints[k]}\nN·m", fontsize=7)
        ax.tick_params(labelsize=7)
    axes[0].legend(loc="upper right", fontsize=7)
    axes[-1].set_xlabel("s", fontsize=8)


def plot_zmp(path: str | Path, title: str, runs: dict[str, PhysicsSeries]) -> None:
    """PNG of the ZMP paths of each run (one row each)."""
    fig = _figure(13, 3.2 * len(runs))
    axes = fig.subplots(len(runs), 1, squeeze=False)[:, 0]
    for ax, (label, s) in zip(axes, runs.items()):
        draw_zmp(ax, s, f"{title} — {label}")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def plot_torques(path: str | Path, title: str, runs: dict[str, PhysicsSeries]) -> None:
    """PNG of the torque norms of each run against the limits (one row per joint)."""
    n = len(next(iter(runs.values())).torque_joints)
    fig = _figure(13, 1.7 * max(n, 1))
    axes = fig.subplots(max(n, 1), 1, sharex=True, squeeze=False)[:, 0]
    draw_torques(axes[:n], runs)
    axes[0].set_title(f"{title}: joint torque norms vs limits", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def plot_report(path: str | Path, title: str, before: PhysicsSeries, after: PhysicsSeries, dpi: int = 80) -> Path:
    """One PNG: ZMP over the support polygons before, after, then the torques against their limits."""
    n = len(before.torque_joints)
    fig = _figure(12, 6.4 + 1.3 * n)
    grid = fig.add_gridspec(2 + n, 1, height_ratios=[3.2, 3.2] + [1.3] * n)
    draw_zmp(fig.add_subplot(grid[0]), before, "before")
    draw_zmp(fig.add_subplot(grid[1]), after, "after")
    if n:
        axes = [fig.add_subplot(grid[2])]
        axes += [fig.add_subplot(grid[2 + k], sharex=axes[0]) for k in range(1, n)]
        draw_torques(axes, {"before": before, "after": after})
        axes[0].set_title("joint torque norms vs limits", fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    return path
