"""Benchmark and accuracy report for the IK and contact machinery (plain Python, no Blender).

    python scripts/bench_ik.py [--frames 20000] [--json out.json]

Prints frames per second for two-link IK, the damped-least-squares solver, contact
detection and foot planting on the procedural walk, with their accuracy, and the foot
skating before/after planting on the procedural walk and (where ../shared/mocap exists) on
CMU 05_01 with added sliding.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import quaternion as quat  # noqa: E402
from core import synthetic  # noqa: E402
from core.contacts import detect_contacts, foot_skating  # noqa: E402
from core.ik import apply_two_link, jacobian_ik, plant_feet, two_link_ik  # noqa: E402
from core.io.bvh import read_bvh  # noqa: E402
from core.kinematics import forward_kinematics  # noqa: E402


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def bench_two_link(walk, rng):
    sk = walk.skeleton
    upper, mid, end = (sk.index(n) for n in ("LeftUpLeg", "LeftLeg", "LeftFoot"))
    world, fk_time = timed(forward_kinematics, sk, walk.translations, walk.rotations)
    pos = world[0]
    l1 = np.linalg.norm(pos[:, mid] - pos[:, upper], axis=-1)
    l2 = np.linalg.norm(pos[:, end] - pos[:, mid], axis=-1)
    d = rng.normal(size=(walk.n_frames, 3))
    targets = (
        pos[:, upper]
        + d / np.linalg.norm(d, axis=-1, keepdims=True) * ((l1 + l2) * rng.uniform(0.1, 0.98, walk.n_frames))[:, None]
    )
    _, solve_time = timed(two_link_ik, walk, upper, mid, end, targets, keep_end_orientation=True, world=world)
    out = apply_two_link(walk, upper, mid, end, targets, keep_end_orientation=True)
    err = np.linalg.norm(out.world_positions()[:, end] - targets, axis=-1)
    return {
        "frames_per_s_solve_only": walk.n_frames / solve_time,
        "frames_per_s_with_fk": walk.n_frames / (solve_time + fk_time),
        "max_error_m": float(err.max()),
    }


def bench_jacobian(walk, rng, n_frames=2000):
    m = walk.frames(slice(0, n_frames))
    sk = m.skeleton
    joints = [sk.index(n) for n in ("Chest", "LeftShoulder", "LeftArm", "LeftForeArm")]
    hand = sk.index("LeftHand")
    goal = m.copy()
    goal.rotations[:, joints] = quat.slerp(
        m.rotations[:, joints], quat.normalize(rng.normal(size=(m.n_frames, 4, 4))), 0.4
    )
    targets = goal.world_positions()[:, hand][:, None]
    result, t = timed(jacobian_ik, m, joints, [hand], targets)
    return {
        "frames_per_s": m.n_frames / t,
        "max_residual_m": float(result.residual.max()),
        "median_iterations": float(np.median(result.iterations)),
    }


def bench_contacts_and_planting(motion, amplitude):
    slid = synthetic.with_sliding(motion, amplitude)
    contacts, t_detect = timed(detect_contacts, slid)
    before = foot_skating(slid, contacts)
    report = {
        "frames": motion.n_frames,
        "body_size": motion.skeleton.size(),
        "contact_share": contacts.share.round(3).tolist(),
        "detect_frames_per_s": motion.n_frames / t_detect,
        "skating_before_units_per_s": before.total_rate,
    }
    for mode in ("lift", "drop", None):
        planted, t_plant = timed(plant_feet, slid, contacts, out_of_reach=mode)
        offset = (planted.world_positions()[:, contacts.joints] - contacts.anchors)[contacts.flags]
        hips = motion.skeleton.index("Hips")
        drop = (slid.world_positions()[:, hips] - planted.world_positions()[:, hips]) @ contacts.up
        report[f"plant_{mode}"] = {
            "skating_after_units_per_s": foot_skating(planted, contacts).total_rate,
            "mean_lift_in_contact": float(np.mean(offset @ contacts.up)),
            "mean_pelvis_drop": float(drop.mean()),
            "frames_per_s": motion.n_frames / t_plant,
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    walk = synthetic.walk(args.frames)
    report = {
        "two_link": bench_two_link(walk, rng),
        "jacobian_arm_4_joints": bench_jacobian(walk, rng),
        "synthetic_walk": bench_contacts_and_planting(synthetic.walk(), 0.05),
    }
    cmu = ROOT.parent / "shared" / "mocap" / "cmu_bvh_cgspeed" / "05_01.bvh"
    if cmu.exists():
        m = read_bvh(cmu)
        report["cmu_05_01"] = bench_contacts_and_planting(m, 0.03 * m.skeleton.size())
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
