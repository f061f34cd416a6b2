"""Accuracy and speed of the motion-editing core (plain Python, no Blender).

    python scripts/benchmark_editing.py [--frames 100000] [--json out.json]

Accuracy, on real captures from ../shared/mocap where present (else procedural motions):
round-trip errors (cut/paste, reverse twice, time-scale ×2 then ×0.5, fps 120 → 30 → 120,
rotate vs scipy); transitions (join found, foot skating in the window ± 0.5 s before/after the
IK clean-up, pose and velocity jumps across the join against the clips' 95th percentile, also
for a hard cut); interpolation endpoint errors and speeds; PCA explained variance, parameter
fit, training-cycle reproduction; key-edit checks. Speed: frames per second of each operation
on a clip tiled to ``--frames`` frames, best of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402

MOCAP = _package.ROOT.parent / "shared" / "mocap"


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def load(relative: str):
    from mocap_workbench.core.io.convert import load_motion

    path = MOCAP / relative
    return load_motion(path) if path.exists() else None


def max_error(a, b, body_only: bool = False) -> float:
    from mocap_workbench.core.editing.root import pelvis_joint

    keep = a.skeleton.subtree(pelvis_joint(a)) if body_only else slice(None)
    return float(np.abs(a.world_positions()[:, keep] - b.world_positions()[:, keep]).max())


def round_trips(motion) -> dict:
    from scipy.spatial.transform import Rotation

    from mocap_workbench.core import editing as ed
    from mocap_workbench.core.editing.root import pelvis_joint

    out = {}
    errors = []
    t = motion.n_frames
    for start, stop in ((t // 4, t // 2), (0, t // 8), (t // 2, t)):
        rest, clip = ed.cut(motion, start, stop)
        errors.append(max_error(ed.paste(rest, clip, start), motion))
    out["cut_paste_max_error"] = max(errors)
    back = ed.reverse(ed.reverse(motion))
    out["reverse_twice_max_error"] = max_error(back, motion)
    out["time_scale_2_then_half_max_error"] = max_error(ed.time_scale(ed.time_scale(motion, 2.0), 0.5), motion)
    body = motion.frames(slice(1, None))  # CMU frame 0 is a synthetic T-pose
    coarse = ed.resample(ed.resample(body, body.fps / 4), body.fps)
    n = coarse.n_frames
    err = np.linalg.norm(coarse.world_positions() - body.frames(slice(0, n)).world_positions(), axis=-1)
    out["fps_quarter_round_trip_mean_error_in_body_sizes"] = float(err.mean() / motion.skeleton.size())
    pivot = np.array([3.0, 0.0, -2.0])
    body = motion.skeleton.subtree(pelvis_joint(motion))  # placement joints above the pelvis stay
    before = motion.world_positions()[:, body]
    turned = ed.rotate(motion, 33.0, pivot, "y").world_positions()[:, body]
    expected = Rotation.from_rotvec(np.radians(33.0) * np.array([0, 1.0, 0])).apply((before - pivot).reshape(-1, 3))
    out["rotate_vs_scipy_max_error"] = float(np.abs(turned - (expected.reshape(before.shape) + pivot)).max())
    return out


def transitions(pairs) -> list[dict]:
    from mocap_workbench.core import editing as ed

    rows = []
    for name, a, b in pairs:
        tr, seconds = timed(ed.transition, a, b)
        hard = ed.transition(a, b, window=0.0, frame_a=tr.frame_a, frame_b=tr.frame_b, cleanup=False)
        rows.append(
            {
                "pair": name,
                "frame_a": tr.frame_a,
                "frame_b": tr.frame_b,
                "window": tr.window,
                "join_rms_distance_body_sizes": tr.cost,
                "skating_before": tr.skating_before.total_distance,
                "skating_after": tr.skating_after.total_distance,
                "skating_rate_before": tr.skating_before.total_rate,
                "skating_rate_after": tr.skating_after.total_rate,
                "blend_ratios": tr.continuity.ratios(),
                "hard_cut_ratios": hard.continuity.ratios(),
                "blend": tr.continuity.as_dict(),
                "seconds": seconds,
            }
        )
    return rows


def interpolations(walk, run) -> dict:
    from mocap_workbench.core import editing as ed

    run = ed.repeat(run, 4, closed=True)
    out = {"speeds": {}}
    for c in (-0.5, 0.0, 0.5, 1.0, 1.5):
        res, seconds = timed(ed.interpolate, walk, run, c)
        path = ed.track(res.motion)
        travel = np.linalg.norm(np.delete(path.positions[-1] - path.positions[0], 1))
        out["speeds"][c] = float(travel / ((res.motion.n_frames - 1) / res.motion.fps))
        if c in (0.0, 1.0):
            source, events = (walk, res.events_a) if c == 0.0 else (run, res.events_b)
            expected = ed.conform(source.frames(slice(int(events[0]), int(events[-1]) + 1)), walk.skeleton)
            out[f"endpoint_error_c{c:g}"] = max_error(res.motion, expected, body_only=True)
            out["events"] = len(res.events)
    out["seconds_per_call"] = seconds
    return out


def pca_report(name, motions, params) -> dict:
    from mocap_workbench.core import editing as ed

    model, seconds = timed(ed.fit_cycle_pca, motions, params)
    exact = ed.fit_cycle_pca(motions, params, close=False)
    from mocap_workbench.core.editing.root import State, place

    errs = []
    for i, cycle in enumerate(exact.cycles):
        placed = place(cycle.motion, 0, State(np.zeros(3), 0.0), exact.up)
        made = exact.reconstruct(i)
        scale = exact.size / motions[cycle.source].skeleton.size()
        if abs(scale - 1.0) < 1e-12:
            errs.append(max_error(made.frames(slice(0, exact.n_frames)), placed.frames(slice(0, exact.n_frames)), True))
    cum = np.cumsum(model.explained_variance_ratio)
    row = {
        "group": name,
        "cycles": len(model.cycles),
        "cumulative_explained_variance": [float(x) for x in cum[:6]],
        "components_for_90_percent": model.n_components_for(0.9),
        "parameter_r2": model.parameter_r2,
        "training_cycle_rebuild_max_error": max(errs) if errs else None,
        "fit_seconds": seconds,
    }
    if params == "speed":
        lo, hi = model.parameters.min(), model.parameters.max()
        gaps = []
        for value in (lo, 0.5 * (lo + hi), hi, hi + 0.25 * (hi - lo)):
            made = model.generate(value, loops=3)
            path = ed.track(made, model.up)
            travel = np.linalg.norm(np.delete(path.positions[-1] - path.positions[0], 1))
            gaps.append(abs(travel / ((made.n_frames - 1) / made.fps) / value - 1.0))
        row["generated_speed_max_relative_error"] = float(max(gaps))
    return row


def key_edit_report(motion) -> dict:
    from mocap_workbench.core import editing as ed
    from mocap_workbench.core import quaternion as quat

    joint = motion.skeleton.index("LeftArm") if "LeftArm" in motion.skeleton.names else 5
    frame, width = motion.n_frames // 2, 24
    new = quat.multiply(motion.rotations[frame, joint], quat.from_axis_angle(np.array([0, 0, 1.0]), 0.6))
    smooth = ed.key_edit(motion, frame, {joint: new}, width=width)
    hard = ed.key_edit(motion, frame, {joint: new}, width=0)
    far = np.abs(np.arange(motion.n_frames) - frame) >= width
    window = slice(frame - width, frame + width)

    def peak_acceleration(m):
        """Largest angular acceleration of the joint near the key, rad/frame²."""
        q = m.rotations[window, joint]
        omega = 2 * quat.log(quat.multiply(quat.conjugate(q[:-1]), q[1:]))
        return float(np.linalg.norm(np.diff(omega, axis=0), axis=-1).max())

    return {
        "edited_frame_error": float(quat.distance(smooth.rotations[frame, joint], new)),
        "frames_beyond_width_changed": int(np.sum(np.any(smooth.rotations[far] != motion.rotations[far], axis=(1, 2)))),
        "peak_acceleration_original": peak_acceleration(motion),
        "peak_acceleration_smooth_edit": peak_acceleration(smooth),
        "peak_acceleration_hard_key": peak_acceleration(hard),
    }


def speed(base, frames: int, repeats: int = 3) -> dict:
    from mocap_workbench.core import editing as ed
    from mocap_workbench.core.motion import Motion

    reps = int(np.ceil(frames / base.n_frames))
    tile = Motion(
        base.skeleton,
        np.concatenate([base.translations] * reps)[:frames],
        np.concatenate([base.rotations] * reps)[:frames],
        base.fps,
    )
    half = frames // 2
    other = tile.frames(slice(half, None))
    rows = {}

    def rate(name, fn, *args, n=frames, **kwargs):
        """Best of ``repeats`` runs (the machine may be shared)."""
        seconds = min(timed(fn, *args, **kwargs)[1] for _ in range(repeats))
        rows[name] = {"frames": n, "seconds": seconds, "frames_per_second": n / seconds}

    rate("track (pelvis path + heading)", ed.track, tile)
    rate("rotate", ed.rotate, tile, 30.0)
    rate("cut + paste back", lambda: ed.paste(*ed.cut(tile, half, half + 1000), half))
    rate("time_scale x1.5 (slerp)", ed.time_scale, tile, 1.5)
    rate("transition, frames given (incl. clean-up)", ed.transition, tile.frames(slice(0, half)), other,
         frame_a=half - 200, frame_b=100)  # fmt: skip
    a_short, b_short = tile.frames(slice(0, 5000)), tile.frames(slice(5000, 10000))
    rate("transition with join search, 2 x 2500 candidates", ed.transition, a_short, b_short, n=10000)
    rate("blend_parts (upper body)", ed.blend_parts, tile, other.frames(slice(0, 1000)), 1, stretch=True)
    rate(
        "key_edit (one joint, width 24; copies the clip)",
        ed.key_edit,
        tile,
        half,
        {1: tile.rotations[half, 1]},
        width=24,
    )
    rate("interpolate (given events)", ed.interpolate, tile, other, 0.5,
         np.linspace(0, half - 1, 50), np.linspace(0, half - 1, 50), n=half)  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchmark_editing.py", description=__doc__.split("\n")[0])
    p.add_argument("--frames", type=int, default=100_000, help="length of the tiled clip for the speed runs")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per operation (the best is kept)")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args(_package.script_args(argv))
    _package.load()
    from mocap_workbench.core import synthetic

    cmu = {n: load(f"cmu_bvh_cgspeed/{n}.bvh") for n in ("02_01", "05_01", "05_02")}
    bandai = {n: load(f"bandai_namco_1/dataset-1_{n}_001.bvh") for n in ("walk_normal", "walk_tired", "run_normal")}
    real = all(m is not None for m in (*cmu.values(), *bandai.values()))
    results: dict = {"data": "real captures" if real else "procedural (../shared/mocap missing)"}
    if real:
        results["round_trips"] = {"05_01": round_trips(cmu["05_01"]), "walk_normal": round_trips(bandai["walk_normal"])}
        pairs = [
            ("CMU 02_01 walk -> 05_02 dance", cmu["02_01"], cmu["05_02"]),
            ("CMU 05_01 walk -> 02_01 walk", cmu["05_01"], cmu["02_01"]),
            ("Bandai walk_normal -> walk_tired", bandai["walk_normal"], bandai["walk_tired"]),
        ]
        results["transitions"] = transitions(pairs)
        results["interpolation"] = interpolations(bandai["walk_normal"], bandai["run_normal"])
        results["pca"] = [
            pca_report("CMU walks 05_01 + 02_01 (param: motion 0/1)", [cmu["05_01"], cmu["02_01"]], [0.0, 1.0]),
            pca_report("CMU walks 05_01 + 02_01 (param: speed)", [cmu["05_01"], cmu["02_01"]], "speed"),
            pca_report(
                "Bandai walk_normal + walk_tired (speed)", [bandai["walk_normal"], bandai["walk_tired"]], "speed"
            ),
        ]
        results["key_edit"] = key_edit_report(cmu["05_01"])
        base = cmu["05_02"]
    else:
        demo = synthetic.demo_clip()
        results["round_trips"] = {"demo": round_trips(demo)}
        results["transitions"] = transitions([("walk -> jump", synthetic.walk(300), synthetic.jump(200))])
        walks = [synthetic.walk(300, speed=s, stride_hz=0.6 + 0.25 * s) for s in (0.9, 1.2, 1.5)]
        results["pca"] = [pca_report("procedural walks (speed)", walks, "speed")]
        results["key_edit"] = key_edit_report(demo)
        base = demo
    results["speed"] = speed(base, args.frames, args.repeats)
    print_results(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, default=float))
    return 0


def print_results(results: dict) -> None:
    print(f"data: {results['data']}")
    for clip, rows in results["round_trips"].items():
        print(f"\nround trips ({clip}):")
        for key, value in rows.items():
            print(f"  {key:52s} {value:.3g}")
    print("\ntransitions (skating: total foot sliding in the window ± 0.5 s, scene units):")
    for row in results["transitions"]:
        r, h = row["blend_ratios"], row["hard_cut_ratios"]
        print(
            f"  {row['pair']}: A {row['frame_a']} -> B {row['frame_b']}, window {row['window']} f, "
            f"join distance {row['join_rms_distance_body_sizes']:.3f} sizes, {row['seconds']:.2f} s"
        )
        print(f"    skating {row['skating_before']:.3g} -> {row['skating_after']:.3g}")
        print(
            "    jump / clip p95 (blend | hard cut): "
            + ", ".join(f"{k} {r[k]:.2f} | {h[k]:.2f}" for k in ("pose_step", "root_jump", "joint_jump"))
        )
    if "interpolation" in results:
        it = results["interpolation"]
        print(f"\ninterpolation walk_normal / run_normal x4 ({it['events']} matched strikes):")
        print(f"  endpoint error c=0 {it['endpoint_error_c0']:.2g}, c=1 {it['endpoint_error_c1']:.2g} (scene units)")
        print("  speed by coefficient: " + ", ".join(f"{c:g}: {v:.0f}" for c, v in it["speeds"].items()))
    print("\nPCA:")
    for row in results["pca"]:
        cum = ", ".join(f"{x:.3f}" for x in row["cumulative_explained_variance"])
        print(f"  {row['group']}: {row['cycles']} cycles, cumulative variance [{cum}]")
        extra = (
            f", generated speed error ≤ {row['generated_speed_max_relative_error']:.2%}"
            if "generated_speed_max_relative_error" in row
            else ""
        )
        rebuild = row["training_cycle_rebuild_max_error"]
        rebuild = "n/a" if rebuild is None else f"{rebuild:.2g}"
        print(f"    k(90%) = {row['components_for_90_percent']}, parameter R² {row['parameter_r2']:.2f}, "
              f"training-cycle rebuild error {rebuild}{extra}")  # fmt: skip
    ke = results["key_edit"]
    print(
        f"\nkey edit (0.6 rad on one arm joint, width 24 f): edited frame error {ke['edited_frame_error']:.2g} rad, "
        f"frames changed beyond the width {ke['frames_beyond_width_changed']}; peak angular acceleration near the "
        f"key {ke['peak_acceleration_original']:.3g} original, {ke['peak_acceleration_smooth_edit']:.3g} smooth edit, "
        f"{ke['peak_acceleration_hard_key']:.3g} hard key (rad/frame²)"
    )
    print("\nspeed:")
    for name, row in results["speed"].items():
        print(f"  {name:48s} {row['frames']:>7d} f {row['seconds']:8.3f} s {row['frames_per_second']:>12,.0f} f/s")


if __name__ == "__main__":
    sys.exit(main())
