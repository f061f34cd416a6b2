"""Frames the floor-and-feet model cannot explain (core/physics/unexplained.py) and the do-no-harm
guard at the end of the physics solve."""

import numpy as np
import pytest

from core import synthetic
from core.contacts import detect_contacts
from core.physics.body import body_model
from core.physics.dynamics import torque_ratios
from core.physics.guard import _do_no_harm
from core.physics.metrics import analyse
from core.physics.options import PhysicsOptions
from core.physics.planting import _plant, with_toes
from core.physics.solve import physics_retarget
from core.physics.unexplained import unexplained

FPS = 60.0
HELD = slice(110, 170)  # frames of the walk held 0.3 m above the floor, still in height


def stand():
    """A stand (4 s at 60 fps, the hips swaying 4 cm back and forth at 1 Hz, the knees bending with it)."""
    motion = synthetic.Motion.rest(synthetic.humanoid(), 240, FPS)
    hips = motion.skeleton.index("Hips")
    sway = np.sin(2 * np.pi * np.arange(motion.n_frames) / FPS)
    motion.translations[:, hips, 2] += 0.04 * sway
    for side in ("Left", "Right"):
        synthetic._set(motion, f"{side}Leg", synthetic._angles(0.2 + 0.1 * sway, 0.0, 0.0, motion.n_frames))
    return motion


def hanging_stand():
    """:func:`stand` lifted 0.3 m off the floor on frames 100–179 with smooth 0.15 s ramps: on 110–169 the body's
    height is constant with both feet in the air — held by something (a bar, a seat), not falling."""
    motion = stand()
    hips = motion.skeleton.index("Hips")
    t = np.arange(motion.n_frames)
    up = np.clip((t - 101) / 9, 0, 1)
    down = np.clip((179 - t) / 9, 0, 1)
    lift = np.minimum(up * up * (3 - 2 * up), down * down * (3 - 2 * down))
    motion.translations[:, hips, 1] += 0.3 * lift
    return motion


def test_a_body_held_off_the_floor_is_named_and_left_alone():
    motion = hanging_stand()
    contacts = detect_contacts(motion)
    assert not contacts.flags[HELD].any()  # both feet off the floor all along
    body = body_model(motion.skeleton, 90.0, height=1.99)
    an = analyse(motion, with_toes(motion, contacts), body)
    mask, spans = unexplained(an, body, FPS)
    assert mask[HELD].all() and not mask[:90].any() and not mask[200:].any()
    held = [s for s in spans if s["kind"] == "held"]
    assert len(held) == 1 and held[0]["start"] <= HELD.start and held[0]["stop"] >= HELD.stop
    assert "not falling" in held[0]["reason"]

    out, rep = physics_retarget(motion, contacts, body)
    assert rep["unexplained"] == spans  # named in the report, with why
    moved = np.linalg.norm(out.world_positions() - motion.world_positions(), axis=-1).max(axis=1) * body.unit
    assert moved[HELD].max() < 1e-6  # given back exactly as captured
    # not forced onto a ballistic path: the held frames' height is the input's
    np.testing.assert_allclose(out.world_positions()[HELD, 0, 1], motion.world_positions()[HELD, 0, 1], atol=1e-9)


def test_a_real_jump_is_a_flight_not_a_support():
    """The ballistic phases of a jump are not taken for support by something else."""
    motion = synthetic.jump(120, FPS, height=0.4)
    contacts = detect_contacts(motion)
    body = body_model(motion.skeleton, 70.0, height=1.8)
    mask, spans = unexplained(analyse(motion, with_toes(motion, contacts), body), body, FPS)
    assert not [s for s in spans if s["kind"] == "held"]


def guard_setting(motion, contacts):
    """The do-no-harm guard's arguments for ``motion`` as its input on a 90 kg, 1.99 m body: the body, the contacts
    with the toes, the options, the measure's settings (the input's ground) and the input's analysis."""
    body = body_model(motion.skeleton, 90.0, height=1.99)
    toes = with_toes(motion, contacts)
    opts = PhysicsOptions()
    measure = {"smooth": opts.smooth, "free_fall": opts.free_fall, "heel": opts.heel, "width": opts.width}
    before = analyse(motion, toes, body, **measure)
    measure["ground"] = before.support.ground
    return body, toes, opts, measure, before


def test_do_no_harm_gives_back_frames_made_worse():
    """A 'result' whose left arm swings ±1.5 rad at 2 Hz on frames 60–100 of a stand puts frames over a
    torque limit that the input had under it; the guard blends them back until the frames over a
    limit and the worst |τ|/limit are no more than the input's, and leaves frames far from the
    wobble as they were."""
    motion = stand()
    contacts = detect_contacts(motion)
    body, toes, opts, measure, before = guard_setting(motion, contacts)
    result = motion.copy()
    hips = motion.skeleton.index("Hips")
    t = np.arange(motion.n_frames)
    window = np.clip(np.sin(np.pi * (t - 60) / 40), 0, None) * ((t >= 60) & (t <= 100))
    arm = 1.5 * window * np.sin(2 * np.pi * 2 * t / FPS)
    synthetic._set(result, "LeftArm", synthetic._angles(0.0, arm, 1.25, motion.n_frames))
    result.translations[:, hips, 0] += 0.002 * np.sin(2 * np.pi * t / 240)  # a harmless change everywhere
    res_an = analyse(result, toes, body, **measure)
    r_in = torque_ratios(before.torques, body).max(axis=1)
    r_res = torque_ratios(res_an.torques, body).max(axis=1)
    assert (r_res > 1).sum() > (r_in > 1).sum() and r_res.max() > max(r_in.max(), 1.0)  # the harm to undo

    out, out_an = _do_no_harm(result, res_an, motion, before, toes, contacts, body, opts, measure)
    r_out = torque_ratios(analyse(out, toes, body, **measure).torques, body).max(axis=1)
    np.testing.assert_allclose(r_out, torque_ratios(out_an.torques, body).max(axis=1))
    assert (r_out > 1).sum() <= (r_in > 1).sum()
    assert r_out.max() <= max(r_in.max(), 1.0) + 1e-9
    far = (t < 30) | (t > 135)
    assert np.abs(out.translations[far, hips] - result.translations[far, hips]).max() == pytest.approx(0, abs=1e-3)


def test_do_no_harm_gives_back_a_worst_ratio_raised_under_the_limits_at_the_clip_edge():
    """Issue 16: the worst |τ|/limit never above the input's, under the limits too. A 'result' whose left arm
    swings on the clip's first 20 frames raises the worst ratio (the input's about 0.35) while every frame stays
    under its limits, so no frame is over a limit and worse than the input: the guard must give back the
    frames above the input's worst ratio, and at a clip edge the whole one-sided derivative window of the first
    frames (a derivative half-window either side, as inside the clip, left frame 0 at 0.771 against the input's
    0.757 on the Mixamo rig's own walk). The rest of the clip is left as it was."""
    stood = stand()
    contacts = detect_contacts(stood)
    synthetic._set(stood, "LeftArm", synthetic._angles(0.0, 0.0, 1.25, stood.n_frames))
    motion = _plant(stood, contacts)  # the input as the solve's steps leave it: planted
    body, toes, opts, measure, before = guard_setting(motion, contacts)
    t = np.arange(motion.n_frames)
    swing = 0.6 * np.clip(np.cos(np.pi * t / 40), 0, None) * (t <= 20) * np.sin(2 * np.pi * 2 * t / FPS)
    result = motion.copy()
    synthetic._set(result, "LeftArm", synthetic._angles(0.0, swing, 1.25, motion.n_frames))
    res_an = analyse(result, toes, body, **measure)
    r_in = torque_ratios(before.torques, body).max(axis=1)
    r_res = torque_ratios(res_an.torques, body).max(axis=1)
    assert r_res.max() < 1.0 and r_res.max() > r_in.max() + 0.2 and r_res.argmax() < 3  # the harm, at the edge

    out, out_an = _do_no_harm(result, res_an, motion, before, toes, contacts, body, opts, measure)
    r_out = torque_ratios(analyse(out, toes, body, **measure).torques, body).max(axis=1)
    np.testing.assert_allclose(r_out, torque_ratios(out_an.torques, body).max(axis=1))
    assert r_out.max() <= r_in.max() + 1e-6
    far = t > 60
    assert np.abs(out.rotations[far] - result.rotations[far]).max() == pytest.approx(0, abs=1e-6)
