"""Physics on a retargeted clip from user settings: stiffness, progress, per-frame series,
stretches between jumps, combined figures, plots."""

import json
import re

import numpy as np
import pytest

from core import quaternion as quat
from core import synthetic
from core.contacts import detect_contacts
from core.limbs import standing_height
from core.motion import Motion
from core.physics.apply import PhysicsSettings, apply_physics, stretches, summary
from core.physics.body import body_model
from core.physics.errors import PhysicsError
from core.physics.metrics import combine_reports, stitch_series
from core.physics.options import PhysicsOptions
from core.physics.solve import physics_retarget


@pytest.fixture(scope="module")
def walk():
    return synthetic.walk(150)


@pytest.fixture(scope="module")
def solved(walk):
    body = body_model(walk.skeleton, 90.0, height=1.99)
    calls = []
    out, rep = physics_retarget(walk, detect_contacts(walk), body, progress=calls.append, series=True)
    return body, out, rep, calls


def with_t_pose(motion: Motion) -> Motion:
    """The motion with a rest-pose frame, turned a quarter, put before it (like the CMU BVH
    conversions' T-pose frame 0)."""
    first = Motion.rest(motion.skeleton, 1, motion.fps)
    first.translations[0, 0] = motion.translations[0, 0]
    first.rotations[0, 0] = quat.from_axis_angle(np.array([0.0, 1.0, 0.0]), np.pi / 2)
    return Motion(motion.skeleton, np.concatenate((first.translations, motion.translations)),
                  np.concatenate((first.rotations, motion.rotations)), motion.fps)  # fmt: skip


def test_progress_rises_to_one(solved):
    *_, calls = solved
    assert len(calls) > 10 and calls[-1] == 1.0 and np.all(np.diff(calls) >= 0) and calls[0] > 0


def test_series_match_the_report(solved, walk):
    body, _, rep, _ = solved
    before, after = rep["series"]["before"], rep["series"]["after"]
    assert before.n_frames == after.n_frames == walk.n_frames
    assert before.inside_share() == pytest.approx(rep["before"]["zmp_inside_share"])
    assert after.inside_share() == pytest.approx(rep["after"]["zmp_inside_share"])
    assert before.torque_joints == ["LeftUpLeg", "RightUpLeg", "LeftLeg", "RightLeg", "LeftFoot", "RightFoot"]
    ratios = after.torques / after.torque_limits
    assert int((ratios > 1).any(axis=1).sum()) <= rep["after"]["torque_violation_frames"]
    # support polygons in metres, back on the motion's ground plane in scene units
    t = int(np.flatnonzero(before.counted)[0])
    hull = before.hull(t)
    assert len(hull) >= 3 and np.all(np.isfinite(hull))
    ground = before.to_scene(hull)
    assert np.allclose(ground @ before.up, before.ground)
    assert np.allclose(before.to_scene(before.zmp[t]) @ before.up, before.ground)
    with pytest.raises(TypeError):
        json.dumps(rep)  # the series are arrays: callers pop them before writing JSON
    json.dumps({k: v for k, v in rep.items() if k != "series"})


def test_stiffness_keeps_the_pose_closer_to_its_prediction(walk):
    body = body_model(walk.skeleton, 90.0, height=1.99)
    contacts = detect_contacts(walk)
    # Stiffness is the filter's knob: measured on the filter's result (the final plan after it,
    # balance and torques first, moves the pose by as much as the filter's whole range here).
    deviation = [
        physics_retarget(walk, contacts, body, PhysicsOptions(stiffness=s, polish_iterations=0))[1]["after"][
            "deviation"
        ]
        for s in (0.1, 10)
    ]
    assert deviation[1] < deviation[0]
    with pytest.raises(ValueError, match="stiffness"):
        PhysicsOptions(stiffness=0.0)


def test_combined_reports_weigh_by_the_frames_they_count(solved):
    _, _, whole, _ = solved
    assert combine_reports([whole["before"]]) == whole["before"]
    a, b = dict(whole["after"]), dict(whole["after"])
    a.update(zmp_inside_share=1.0, contact_frames=30, torque_worst_ratio=99.0, torque_worst_joint="LeftLeg")
    b.update(zmp_inside_share=0.5, contact_frames=10, flight_frames=4, flight_error_m=0.02)
    both = combine_reports([a, b])
    assert both["zmp_inside_share"] == pytest.approx(0.875) and both["contact_frames"] == 40
    assert both["torque_worst_joint"] == "LeftLeg" and both["frames"] == 2 * whole["after"]["frames"]
    assert both["flight_error_m"] == pytest.approx(0.02) and list(both) == list(whole["after"])


def test_stitched_series_leave_gaps(solved):
    _, _, rep, _ = solved
    part = rep["series"]["after"]
    whole = stitch_series([(1, part)], part.n_frames + 3)
    assert whole.n_frames == part.n_frames + 3 and np.isnan(whole.zmp[0]).all() and np.isnan(whole.torques[-1]).all()
    assert not whole.counted[0] and not whole.support_active[0].any() and len(whole.hull(0)) == 0
    assert whole.inside_share() == pytest.approx(part.inside_share())


def test_apply_physics_solves_between_jumps(walk):
    clip = with_t_pose(walk)
    solved_spans, kept = stretches(clip, 30)
    assert solved_spans == [(1, clip.n_frames)] and kept == [(0, 1)]
    calls = []
    settings = PhysicsSettings(target_mass=90.0, target_height=1.99, source_mass=60.0, stiffness=2.0)
    out = apply_physics(clip, settings, source=clip, first_frame=1, progress=calls.append)
    f = out.figures
    assert f["target_height_m"] == pytest.approx(1.99) and not f["target_height_measured"]
    assert f["frames"] == clip.n_frames and f["frames_solved"] == walk.n_frames and f["stretches"] == [[1, 151]]
    assert f["after"]["zmp_inside_share"] > f["before"]["zmp_inside_share"]
    # the source is measured on its own body (metres per unit 1 here), not at the target's height
    assert f["source_height_m"] == pytest.approx(standing_height(clip.skeleton, np.array([0.0, 1.0, 0.0])))
    assert f["source_height_m"] < 1.9 and "zmp_inside_share" in f["source"]
    assert f["stiffness"] == 2.0 and f["body_model"] == "male"
    assert any("frames 1 kept as retargeted" in n for n in out.notes)
    # this synthetic walk is no physical motion: a few frames end up over a limit, and are named
    worse = [n for n in out.notes if n.startswith("frames over a torque limit that physics made worse: frame ")]
    assert len(worse) == 1
    numbers = [int(part.split()[1]) for part in worse[0].split(": ", 1)[1].split(", ") if part.startswith("frame ")]
    assert numbers and all(2 <= k <= clip.n_frames for k in numbers)  # numbered as the clip's frames, T-pose is 1
    assert np.array_equal(out.motion.rotations[0], clip.rotations[0])  # the T-pose frame is untouched
    assert not np.allclose(out.motion.translations[1:], clip.translations[1:])
    assert np.isnan(out.series["after"].zmp[0]).all() and out.series["after"].n_frames == clip.n_frames
    assert calls[-1] == 1.0
    json.dumps(f)
    line = summary(f)
    assert line.startswith("physics (90 kg, 1.99 m): ZMP inside") and "no flight" in line and "deviation" in line


def test_apply_physics_measures_the_height_and_warns_when_it_is_not_human(walk):
    settings = PhysicsSettings(target_mass=70.0, balance=False, torques=False, momentum=False)
    out = apply_physics(walk, settings, unit=20.0)  # a 1.7-unit humanoid at 20 m a unit
    assert out.figures["target_height_measured"] and out.figures["target_height_m"] > 30
    assert any("not human-sized: give the target height" in n for n in out.notes) and "measured" in summary(out.figures)
    assert "source" not in out.figures


@pytest.mark.parametrize(
    "kwargs",
    [{"target_mass": 0.0}, {"target_height": -1.0}, {"sex": "other"}, {"stiffness": 0.0}, {"stiffness": 1e-9},
     {"stiffness": 1e300}],
)  # fmt: skip
def test_settings_are_checked(kwargs):
    with pytest.raises(PhysicsError):
        PhysicsSettings(**kwargs)


@pytest.mark.parametrize("height", [180.0, 0.01, 1e6])
def test_a_target_height_given_outside_human_statures_is_refused(height):
    """A given target height scales the whole body model (it is not checked as a measured one is, only warned
    about): 180 meant as centimetres made a 180 m body with every frame of CMU 02_01 over a torque limit
    (worst 2.2e11 × its limit), solved and written without a word. Heights at the ends of the human range pass."""
    with pytest.raises(PhysicsError, match=re.escape(f"target height {height:g} m is not a human stature")):
        PhysicsSettings(target_height=height)
    for fine in (0.5, 1.99, 3.0):
        assert PhysicsSettings(target_height=fine).target_height == fine


def test_the_stiffness_range_is_the_panels():
    """The ends of the Retarget panel's range (0.01, 100) are taken, beyond them refused (the script took any
    positive number; 1e-9 missed the ZMP bar on CMU 02_01, 92.7 %)."""
    for fine in (0.01, 1.0, 100.0):
        assert PhysicsSettings(stiffness=fine).options().stiffness == fine
    with pytest.raises(PhysicsError, match="stiffness 0.001 is outside 0.01–100"):
        PhysicsSettings(stiffness=0.001)


def test_a_clip_too_short_to_solve_is_a_physics_error(walk):
    with pytest.raises(PhysicsError, match="no stretch of at least"):
        apply_physics(walk.frames(slice(0, 20)), PhysicsSettings(target_height=1.8))


def test_report_plot(solved, tmp_path):
    pytest.importorskip("matplotlib")
    from core.physics.plot import available, plot_report

    _, _, rep, _ = solved
    assert available()
    path = plot_report(tmp_path / "report.png", "walk", rep["series"]["before"], rep["series"]["after"])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("frames", [1, 2, 5, 12])
def test_a_clip_shorter_than_the_shortest_stretch_is_a_physics_error(walk, frames):
    """One frame, fewer frames than a derivative window, or under 0.5 s: a PhysicsError that says why, with the
    clip's length and the frames needed (half a second at the clip's rate, at least 8)."""
    with pytest.raises(PhysicsError, match="no stretch of at least 0.5 s") as error:
        apply_physics(walk.frames(slice(0, frames)), PhysicsSettings(), unit=1.0)
    need = max(round(0.5 * walk.fps), 8)
    assert f"the clip has {frames} frame" in str(error.value) and f"physics needs {need} frames" in str(error.value)


def test_a_clip_without_contact_is_a_physics_error_and_its_figures_say_so(walk):
    """The walk thrown upwards (root on a parabola, no foot ever on a floor): nothing to balance on. It ran, the
    solve (no take-off or landing to bridge) took the jerk 87 -> 126 m/s^3 and left the flight error at 1.8 cm,
    and the report read "ZMP inside 100.0% → 100.0% of contact frames" (the share's value without any)."""
    thrown = walk.copy()
    t = np.arange(walk.n_frames) / walk.fps
    thrown.translations[:, 0, 1] += 2.0 + 5.0 * t - 0.5 * 9.81 * t**2
    with pytest.raises(PhysicsError, match="no foot touches the floor on any frame"):
        apply_physics(thrown, PhysicsSettings(), unit=1.0)
    figures = apply_physics(walk, PhysicsSettings(balance=False, torques=False), unit=1.0).figures
    assert figures["contact_frames"] > 100 and "ZMP inside" in summary(figures)
    assert summary(dict(figures, contact_frames=0)).startswith(
        "physics (70 kg, 1.7 m measured): no contact frames: balance not measured; torque-limit frames"
    )


@pytest.mark.parametrize("what", ["translations", "rotations"])
@pytest.mark.parametrize("value", [np.nan, np.inf, 1e15])
def test_a_pose_that_is_not_finite_is_a_physics_error_naming_its_frame_and_joint(walk, what, value):
    """One value NaN, infinite or beyond ±1e12 on frame 40 of a joint: refused by name (the frame counted from
    first_frame) before anything is solved. Before, a NaN rotation came back as NaN on every joint of every
    frame and a NaN worst |τ|/limit, without an error."""
    broken = walk.copy()
    getattr(broken, what)[40, 3, 1] = value
    name = walk.skeleton.names[3]
    with pytest.raises(PhysicsError, match=rf"^frame 41: {name}'s pose is not finite"):
        apply_physics(broken, PhysicsSettings(target_height=1.8), first_frame=1)
