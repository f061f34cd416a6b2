"""scripts/retarget.py --physics checked from outside (issue 16, "Checked"): the figures of its JSON report
re-measured on the BVH it wrote by tests/physics_reference.py, which shares no code with core/physics
(textbook multi-body ZMP, recursive Newton–Euler with the documented double-support split solved by scipy,
ballistic fits by np.polyfit).

The paper's setting, as scripts/benchmark_physics.py runs it: a 60 kg performer onto a 1.4× taller, 90 kg
character (the target skeleton is the capture's own, scaled 1.4). Slices of the shared CMU walk 02_01 and of
the jump 01_01 (frames 150–349: take-off, a 0.4 s flight, landing), and captures not in the benchmark:
the procedural walk in centimetres at 30 fps and the procedural jump in centimetres at 60 fps.

Agreement measured (report after → independent measure; tolerances and their reasons in physics_reference.py):
walk 02_01 (240 frames): ZMP inside 100 % → 100 %; 0 → 0 frames over a torque limit; worst |τ|/limit
0.8842 → 0.8845. Jump 01_01 (200 frames): ZMP inside 100 % → 99.3 %; 0 → 0 frames over a limit; worst
0.9839 → 0.9877; flight CoM from its parabola 0.41 → 0.95 mm RMS (4.7 mm at most, at the phase's ends: this
flight is found on the written feet without hysteresis and is a few frames longer), RMS angular-momentum
change 1.4 % → 3.0 % (11 % from the phase's start to its end). Before planting.held_toes kept the toes a planted
retarget holds, the same slice read: ZMP inside 98.68 % → 98.64 %; 6 → 8 frames over a limit (125, the
landing frame, where this detector has the left toe alone on the floor a frame before the other, and 138 at
1.0004 against the project's 0.9993); flight 1.633 → 1.636 mm RMS (max 2.9 mm); and, with the project's contacts
on the written file handed to the measure, every frame's worst ratio is within 0.009 of the project's and the
ZMPs within a median 0.04–0.14 mm.
The procedural captures (cm, 30 and 60 fps) agree within the same tolerances.

Whole benchmark clips (not run here: minutes each): walk 02_01 and jump 01_01 (1–799) agree (05_01 too, measured
before core.contacts.bearing). Dance 05_02 and hop 131_03 through scripts/retarget.py --physics (frames 1 on),
report → measure, before → after bearing's rise test (core.contacts.bearing: a joint that has risen, or will
still come down, faster than a contact may begin over 1/30 s bears nothing); the written motions are the same
before and after: dance frames over a limit 1 → 6 against 11, worst 1.088 → 1.145 against 1.340; hop frames over
31 → 31 against 39, worst 2.026 → 2.026 against 2.774, flight CoM 1.48 → 2.19 mm against 2.10–2.91 mm (40 → 41
frames, the measure's phase 44), momentum change 38 → 37 % against 24–55 %; disagreements() finds none after
(before: the dance's frame count, the hop's flight). Handed the report's contacts, the measure gives the
report's figures on every frame (dance 6 frames, 1.146; hop 31, 2.027): every frame where they part is a
contact. Where they still part, frame by frame (stature fractions; speeds by this measure's 0.05 s
Savitzky–Golay): dance 590 and hop 213 (a toe 0.3–0.5 % above its floor sliding at 0.52–0.53 statures/s),
dance 735 (a toe 0.4 % up at 0.60), dance 793 (an ankle 0.3 % up coming down at 0.27, 0.55 in all: a
touchdown; the dance's worst, 1.34), hop 760 (a heel rising at 0.47, its toe down), dance 828–829 (the first
two frames of the left foot's lift, 1/30 s before the report sees it risen; 830–834 agree now), hop 510–511 (a
landing foot 1.2–3 cm up coming down at 0.3–1.1, on the floor at 512, while the 0.2 s derivative window already
carries the impact): frames at a change of contacts, where this measure's rule (no hysteresis, 0.5 statures/s)
and the project's part by a frame or two; and hop 1005–1008, where the capture's left toe jumps 5 cm in two
frames (1002–1004) while on the floor: the project's detector (a 0.05 s moving average, then a gradient) reads
it moving at 0.98 body sizes/s over 1000–1006 and begins its contact at 1007, so the report has no foot under
the body at 1005–1006 (this measure puts it on that toe: the left hip at 1.90–2.77, the hop's worst); bearing
cannot add a contact the input lacked.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from core import synthetic
from core.io.bvh import read_bvh, write_bvh
from core.limbs import detect_up
from core.motion import Motion
from core.physics.body import body_model
from tests import physics_reference as ref
from tests.conftest import ROOT, shared_file

SHARED = {  # name: (capture, first frame, stop frame) — frame 0 of the CMU BVH conversions is a T-pose
    "walk_02_01": ("cmu_bvh_cgspeed/02_01.bvh", 1, 241),
    "jump_01_01": ("cmu_bvh_cgspeed/01_01.bvh", 150, 350),
    "dash_bandai": ("bandai_namco_1/dataset-1_dash_normal_001.bvh", 0, None),
    "run_bandai": ("bandai_namco_1/dataset-1_run_normal_001.bvh", 0, None),
}


def _synthetic(name: str) -> Motion:
    """Captures not in the benchmark: the procedural walk (30 fps) and jump (60 fps), in centimetres."""
    motion = synthetic.walk(150, 30.0) if name == "walk_cm_30fps" else synthetic.jump(150, 60.0)
    return motion.scaled(100.0)


def retarget_with_physics(source: Motion, folder) -> tuple[dict, Motion]:
    """Run ``scripts/retarget.py SRC TALL -o OUT.bvh --physics`` as a user does (60 kg onto a 1.4× taller
    90 kg target): the JSON report's ``physics`` part and the motion read back from OUT.bvh."""
    src, tall, out = folder / "source.bvh", folder / "tall.bvh", folder / "out.bvh"
    write_bvh(source, src)
    write_bvh(source.frames(slice(0, 2)).scaled(1.4), tall)
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "retarget.py"), str(src), str(tall), "-o", str(out), "--physics",
         "--target-mass", "90", "--source-mass", "60"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.with_suffix(".json").read_text())["physics"], read_bvh(out)


def body_of(motion: Motion, physics: dict):
    """The target's body model as the report states it (mass, metres per unit)."""
    up = detect_up(motion.skeleton, motion.world_positions()[:: max(1, motion.n_frames // 50)])
    return body_model(motion.skeleton, physics["target_mass_kg"], unit=physics["unit_m"], up=up)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name → (report's physics part, written motion, body model, measure of the written motion), made once."""
    cache = {}

    def get(name: str):
        if name not in cache:
            if name in SHARED:
                rel, first, stop = SHARED[name]
                source = read_bvh(shared_file(rel)).frames(slice(first, stop))
            else:
                source = _synthetic(name)
            physics, written = retarget_with_physics(source, tmp_path_factory.mktemp(name))
            body = body_of(written, physics)
            window = physics["derivative_window_s"]  # the span the report differentiated with
            cache[name] = physics, written, body, ref.measure(written, body, physics["stretches"], smooth=window)
        return cache[name]

    return get


@pytest.mark.parametrize(
    "name", ["walk_02_01", "jump_01_01", "walk_cm_30fps", "jump_cm_60fps", "dash_bandai", "run_bandai"]
)
def test_report_figures_agree_with_the_written_motion(runs, name):
    physics, _written, _body, measured = runs(name)
    assert ref.disagreements(physics["after"], measured) == []


def test_the_jump_flies_on_a_ballistic_path(runs):
    """The jump's flight, measured on the written file: one phase of about 0.4 s whose CoM fits a free
    parabola with g within 3 % (9.85 m/s² measured) and lies within 1.5 mm RMS of the one with g = 9.81
    (0.95 mm; the report's own figure 0.41 mm over its 48 frames: this phase, found on the written feet
    without hysteresis, is a few frames longer, and its ends, where a toe nears the floor, carry the most:
    4.7 mm at most)."""
    physics, _written, _body, measured = runs("jump_01_01")
    assert len(measured.flights) == 1
    phase = measured.flights[0]
    assert 40 <= phase["stop"] - phase["start"] <= 56
    assert abs(phase["g_fit"] - 9.81) < 0.03 * 9.81
    assert phase["rms_mm"] < 1.5
    assert physics["after"]["flight_frames"] > 0


def _swayed(motion: Motion, amplitude: float) -> Motion:
    """``motion`` with its root swaying sideways (scene units, 1.5 Hz): what a report of another motion sees."""
    out = motion.copy()
    t = np.arange(motion.n_frames) / motion.fps
    out.translations[:, 0, 0] += amplitude * np.sin(2 * np.pi * 1.5 * t)
    return out


@pytest.mark.parametrize("name", ["walk_02_01", "jump_01_01"])
def test_a_report_of_another_motion_is_caught(runs, name):
    """The report checked against a written file whose root sways 5 cm sideways at 1.5 Hz (about 0.45 g of
    lateral acceleration): the ZMP leaves the feet and the torques rise, and the check must say so."""
    physics, written, body, _measured = runs(name)
    other = ref.measure(_swayed(written, 0.05 / body.unit), body, physics["stretches"], physics["derivative_window_s"])
    found = ref.disagreements(physics["after"], other)
    assert any(d.startswith("ZMP inside") for d in found), found
    assert any(d.startswith(("frames over", "worst")) for d in found), found


# The measure itself, on cases computed by hand (no project physics involved).


def _still(skeleton, n_frames: int, fps: float) -> Motion:
    return Motion.rest(skeleton, n_frames, fps)


def test_reference_zmp_of_a_still_body_is_under_its_centre_of_mass():
    """Standing still: no acceleration, so the ZMP is the ground projection of Σ mᵢcᵢ / Σ mᵢ (the rest pose's
    segment CoMs, joint position plus the body model's offset)."""
    motion = _still(synthetic.humanoid(), 30, 60.0)
    body = body_model(motion.skeleton, 70.0, unit=1.0, up=np.array([0.0, 1.0, 0.0]))
    pos, rot = ref.world_pose(motion)
    axes = ref.ground_axes(body.up)
    p, free = ref.zmp(ref.kinematics(pos, rot, body, motion.fps), body, 0.0, axes)
    com = (body.masses[:, None] * (pos[0] + body.com_local)).sum(axis=0) / body.masses.sum()
    assert not free.any()
    np.testing.assert_allclose(p, np.broadcast_to(com @ axes[:2].T, p.shape), atol=1e-9)


def test_reference_zmp_of_an_accelerating_body_leans_back_by_a_h_over_g():
    """The whole body sliding forward with a constant acceleration a (a rigid cart-table): the ZMP lies a·h/g
    behind the CoM, h its height above the ground (the Savitzky–Golay derivatives of a quadratic are exact)."""
    motion = _still(synthetic.humanoid(), 60, 60.0)
    a = 2.0
    t = np.arange(motion.n_frames) / motion.fps
    motion.translations[:, 0, 2] += 0.5 * a * t**2  # forward is +Z, up +Y
    body = body_model(motion.skeleton, 70.0, unit=1.0, up=np.array([0.0, 1.0, 0.0]))
    pos, rot = ref.world_pose(motion)
    axes = ref.ground_axes(body.up)
    p, _ = ref.zmp(ref.kinematics(pos, rot, body, motion.fps), body, 0.0, axes)
    com = np.einsum("j,tjc->tc", body.masses, pos + body.com_local) / body.masses.sum()
    expected = com - np.array([0.0, 0.0, a * com[0, 1] / ref.G])  # CoM height is constant
    np.testing.assert_allclose(p, expected @ axes[:2].T, atol=1e-9)


def test_reference_torque_of_a_still_arm_is_the_moment_of_its_weight():
    """The shoulder of a still T-pose holds the moment of the arm's weight: Σ (cₖ − p) × mₖ g·up over the upper
    arm, forearm and hand (and their children), summed here by hand."""
    motion = _still(synthetic.humanoid(), 30, 60.0)
    body = body_model(motion.skeleton, 70.0, unit=1.0, up=np.array([0.0, 1.0, 0.0]))
    pos, rot = ref.world_pose(motion)
    torques = ref.newton_euler(ref.kinematics(pos, rot, body, motion.fps), body, motion.skeleton.parents)
    names = motion.skeleton.names
    shoulder = names.index("LeftArm")
    arm = [names.index(n) for n in ("LeftArm", "LeftForeArm", "LeftHand")]
    centres = pos[0, arm] + body.com_local[arm]
    expected = np.cross(centres - pos[0, shoulder], body.masses[arm, None] * ref.G * body.up).sum(axis=0)
    np.testing.assert_allclose(torques[:, shoulder], np.broadcast_to(expected, (30, 3)), atol=1e-9)
    assert np.linalg.norm(expected) > 5.0  # N·m: an arm held out is a real load


@pytest.mark.parametrize("g", [9.81, 9.0])
def test_reference_flight_fit_measures_a_wrong_gravity(g):
    """A rigid body thrown on a parabola with gravity g: with g = 9.81 the ballistic fit is exact and the angular
    momentum zero; with 9.0 the CoM departs from the 9.81 parabola by Δg/2 times the largest residual of t² from
    its least-squares line over the phase's samples (about T²/6 at the ends: 17 mm over 0.5 s), and the free
    fit finds g."""
    motion = _still(synthetic.humanoid(), 31, 60.0)
    t = np.arange(motion.n_frames) / motion.fps
    motion.translations[:, 0, 1] += 2.0 * t - 0.5 * g * t**2
    motion.translations[:, 0, 2] += 1.5 * t
    body = body_model(motion.skeleton, 70.0, unit=1.0, up=np.array([0.0, 1.0, 0.0]))
    pos, rot = ref.world_pose(motion)
    phase = ref.flight_phase(pos, rot, body, motion.fps, 0.2)
    line = np.polyval(np.polyfit(t, t**2, 1), t)
    expected = 1000 * 0.5 * (9.81 - g) * np.abs(t**2 - line).max()
    assert phase["max_mm"] == pytest.approx(expected, abs=1e-6)
    assert phase["g_fit"] == pytest.approx(g, rel=1e-9)
    assert np.linalg.norm(phase["momentum_start"]) < 1e-9 and np.linalg.norm(phase["momentum_end"]) < 1e-9
