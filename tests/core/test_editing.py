"""Motion editing (MotionPro): clip operations, transitions, body-part blending, interpolation,
PCA synthesis and key edits, on procedural motions and (where ../shared exists) real captures."""

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation, Slerp

from core import quaternion as quat
from core import synthetic
from core.editing import blend, clips, interpolation, keyedit, pca, root, timing
from core.editing.conform import conform
from core.editing.continuity import join_continuity, velocity_jumps
from core.editing.transitions import find_join, transition
from core.io.convert import load_motion
from core.motion import Motion, change_rest
from core.skeleton import Skeleton
from tests.conftest import shared_file

UP = np.array([0.0, 1.0, 0.0])


@cache
def capture(relative: str) -> Motion:
    """A real capture, read once per test session (tests copy before changing it)."""
    return load_motion(shared_file(relative))


def cmu(name: str) -> Motion:
    return capture(f"cmu_bvh_cgspeed/{name}.bvh")


def bandai(name: str) -> Motion:
    return capture(f"bandai_namco_1/dataset-1_{name}_001.bvh")


@pytest.fixture(scope="module")
def demo():
    """Walk, 90° turn, jump: 390 frames at 60 fps."""
    return synthetic.demo_clip()


def rigged(motion: Motion, seed: int = 0) -> Motion:
    """The same movement on a skeleton with random bone frames (like a Blender armature): same rest
    positions, random rest world orientations W, local rest rotations W_parent⁻¹·W."""
    sk = motion.skeleton
    world = quat.normalize(np.random.default_rng(seed).normal(size=(sk.n_joints, 4)))
    parent = np.where((sk.parents >= 0)[:, None], world[np.maximum(sk.parents, 0)], quat.identity((sk.n_joints,)))
    rest = quat.multiply(quat.conjugate(parent), world)
    offsets = quat.rotate(quat.conjugate(parent), sk.rest_translations)
    ends = quat.rotate(quat.conjugate(world[sk.end_site_parents]), sk.end_site_offsets)
    target = Skeleton(sk.names, sk.parents, offsets, rest, sk.channels, sk.end_site_parents, ends)
    return change_rest(motion, target)


def bandai_like(motion: Motion) -> Motion:
    """The motion under an extra static root joint 4 m away (Bandai's ``joint_Root`` layout)."""
    sk = motion.skeleton
    names = ("joint_Root", *sk.names)
    parents = np.concatenate(([-1], np.where(sk.parents < 0, 0, sk.parents + 1)))
    offsets = np.vstack(([4.0, 0.0, -3.0], sk.rest_translations))
    channels = (sk.channels[0], *sk.channels)
    new = Skeleton(
        names,
        parents,
        offsets,
        channels=channels,
        end_site_parents=sk.end_site_parents + 1,
        end_site_offsets=sk.end_site_offsets,
    )
    trans = np.concatenate((np.broadcast_to(offsets[0], (motion.n_frames, 1, 3)), motion.translations), axis=1)
    trans[:, 1] -= offsets[0]
    rot = np.concatenate((quat.identity((motion.n_frames, 1)), motion.rotations), axis=1)
    return Motion(new, trans, rot, motion.fps)


def same_rotations(a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference between two quaternion arrays, q and −q counted equal."""
    return float(np.max(np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1))))


def world_error(a: Motion, b: Motion) -> float:
    return float(np.abs(a.world_positions() - b.world_positions()).max())


# --- root, heading, rigid transforms -------------------------------------------------------------


@pytest.mark.parametrize("variant", [lambda m: m, rigged, bandai_like])
def test_rotate_turns_every_joint_about_the_pivot_like_scipy(demo, variant):
    motion = variant(demo)
    pivot = np.array([0.7, 3.0, -1.2])
    out = root.rotate(motion, 37.0, pivot=pivot, up="y")
    body = motion.skeleton.subtree(root.pelvis_joint(motion))
    before = motion.world_positions()[:, body]
    expected = Rotation.from_rotvec(np.radians(37.0) * UP).apply((before - pivot).reshape(-1, 3)).reshape(before.shape)
    assert np.abs(out.world_positions()[:, body] - (expected + pivot)).max() < 1e-12
    # Only the joints carrying the body change channels: the root, or the pelvis under a placement joint.
    carriers = root.carriers(motion)
    carriers = np.flatnonzero(motion.skeleton.parents < 0) if carriers is None else carriers
    same = np.ones(motion.skeleton.n_joints, dtype=bool)
    same[carriers] = False
    assert np.array_equal(out.rotations[:, same], motion.rotations[:, same])
    assert np.array_equal(out.translations[:, same], motion.translations[:, same])
    turned = root.track(out, UP).headings - root.track(motion, UP).headings
    assert np.allclose(turned, np.radians(37.0), atol=1e-12)


def test_heading_follows_the_procedural_turn(demo):
    headings = np.degrees(root.track(demo).headings)
    assert abs(headings[0]) < 1e-9 and abs(headings[200] - 90.0) < 1e-9


def test_heading_is_rest_relative_and_up_axis_independent(demo):
    # The whole capture tipped onto +Z (a Y-up rest pose played Z-up): the same turn, about Z.
    z_up = root.apply_rigid(demo, quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2), np.zeros(3))
    assert np.allclose(root.track(z_up, "z").headings, root.track(demo, "y").headings, atol=0.01)
    assert np.allclose(root.track(rigged(demo), "y").headings, root.track(demo, "y").headings, atol=1e-9)


def test_steps_integrate_back_to_the_path(demo):
    path = root.track(demo, UP)
    positions, headings = root.integrate(path.state(0), *path.steps(), UP)
    assert np.abs(root.horizontal(positions - path.positions, UP)).max() < 1e-12
    assert np.allclose(headings, path.headings, atol=1e-12)


def test_normalize_then_place_frames_is_exact(demo):
    path = root.track(demo, UP)
    back = root.place_frames(root.normalize_frames(demo, UP, path), path.positions, path.headings, UP)
    assert world_error(back, demo) < 1e-12
    flat = root.track(root.normalize_frames(bandai_like(demo), UP), UP)
    assert np.abs(root.horizontal(flat.positions, UP)).max() < 1e-12 and np.abs(flat.headings).max() < 1e-12


# --- clips ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("start, stop", [(50, 120), (0, 40), (300, 390), (1, 389), (150, 151)])
@pytest.mark.parametrize("variant", [lambda m: m, bandai_like])
def test_cut_then_paste_back_reproduces_the_original(demo, variant, start, stop):
    motion = variant(demo)
    rest, clip = clips.cut(motion, start, stop)
    assert rest.n_frames == motion.n_frames - (stop - start) and clip.motion.n_frames == stop - start
    back = clips.paste(rest, clip, start)
    assert world_error(back, motion) < 1e-9
    assert same_rotations(back.rotations, motion.rotations) < 1e-9


@pytest.mark.parametrize(
    "name, start, stop", [("05_01", 100, 250), ("02_01", 0, 40), ("05_02", 500, 1124), ("walk_normal", 60, 120)]
)
def test_cut_paste_round_trip_on_captures(name, start, stop):
    motion = bandai(name) if name == "walk_normal" else cmu(name)
    rest, clip = clips.cut(motion, start, stop)
    assert world_error(clips.paste(rest, clip, start), motion) < 1e-9


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    at=st.integers(0, 390),
    start=st.integers(0, 100),
    length=st.integers(1, 80),
    degrees=st.floats(-180.0, 180.0),
)
def test_paste_then_cut_gives_back_the_target(demo, at, start, length, degrees):
    """The other direction of the round trip, for any clip, position and clip orientation."""
    clip = root.rotate(synthetic.walk(200).frames(slice(start, start + length)), degrees, pivot=np.array([2.0, 0, 1.0]))
    pasted = clips.paste(demo, clip, at)
    rest, removed = clips.cut(pasted, at, at + length)
    assert world_error(rest, demo) < 1e-9
    assert np.allclose(np.diff(root.track(removed.motion, UP).headings), np.diff(root.track(clip, UP).headings))


def test_cutting_everything_is_refused(demo):
    with pytest.raises(ValueError, match="nothing"):
        clips.cut(demo, 0, demo.n_frames)


def test_cut_keeps_the_root_continuous(demo):
    rest, _ = clips.cut(demo, 60, 130)
    before, after = root.track(demo, UP), root.track(rest, UP)
    step = after.step(59, 60)
    original = before.step(129, 130)
    assert np.allclose(step.offset, original.offset, atol=1e-12) and np.isclose(step.turn, original.turn)
    # The tail is the original tail moved rigidly: same relative poses, same heading changes.
    assert np.allclose(np.diff(after.headings[60:]), np.diff(before.headings[130:]), atol=1e-12)


def test_paste_foreign_clip_continues_position_and_heading(demo):
    walk = synthetic.walk(120)
    turned = root.rotate(walk, 120.0, pivot=np.array([5.0, 0, 5.0]))  # far away, facing elsewhere
    out = clips.paste(demo, turned, 200)
    path, host = root.track(out, UP), root.track(demo, UP)
    own = root.track(walk, UP)
    expected = root.mean_step(host.step(198, 199), own.step(0, 1))
    step = path.step(199, 200)
    assert np.allclose(step.offset, expected.offset, atol=1e-9) and np.isclose(step.turn, expected.turn)
    assert np.isclose(path.headings[200], host.headings[199] + expected.turn)
    # After the clip the host continues with its own step and heading changes.
    tail = path.step(319, 320)
    orig = host.step(199, 200)
    assert np.allclose(tail.offset, orig.offset, atol=1e-9)
    assert np.allclose(np.diff(path.headings[320:]), np.diff(host.headings[200:]), atol=1e-9)
    assert out.n_frames == demo.n_frames + 120


def test_paste_at_start_leads_into_the_target(demo):
    walk = synthetic.walk(50)
    out = clips.paste(demo, walk, 0)
    assert world_error(out.frames(slice(50, None)), demo) == 0.0
    step = root.track(out, UP).step(49, 50)
    expected = root.mean_step(root.track(walk, UP).step(48, 49), root.track(demo, UP).step(0, 1))
    assert np.allclose(step.offset, expected.offset, atol=1e-12)


def test_copy_does_not_change_the_source_and_concatenate_appends(demo):
    clip = clips.copy(demo, 10, 30)
    assert world_error(clip.motion, demo.frames(slice(10, 30))) == 0.0
    both = clips.concatenate(demo, clip)
    assert both.n_frames == demo.n_frames + 20


def test_reverse_twice_is_identity(demo):
    back = clips.reverse(clips.reverse(demo))
    assert np.array_equal(back.rotations, demo.rotations) and np.array_equal(back.translations, demo.translations)
    assert np.array_equal(clips.reverse(demo).rotations[0], demo.rotations[-1])


def test_repeat_closed_loop_has_no_doubled_frame():
    run = bandai("run_normal")
    looped = clips.repeat(run, 3, closed=True)
    assert looped.n_frames == 3 * run.n_frames - 2
    path = root.track(looped)
    one = root.track(run)
    travel = root.horizontal(one.positions[-1] - one.positions[0], one.up)
    assert np.allclose(root.horizontal(path.positions[46] - path.positions[23], path.up), travel, atol=1e-6)
    assert np.allclose(looped.rotations[24:46, 2:], run.rotations[1:23, 2:])


def test_paste_rejects_other_skeletons(demo):
    other = bandai("walk_normal")
    with pytest.raises(ValueError, match="same joints"):
        clips.paste(demo, other, 10)


# --- timing ---------------------------------------------------------------------------------------


def test_sample_is_exact_on_frames_and_slerps_like_scipy(demo):
    assert np.array_equal(timing.sample(demo, np.arange(demo.n_frames)).rotations, demo.rotations)
    times = np.array([10.25, 77.5, 200.9])
    got = timing.sample(demo, times)
    joint = demo.skeleton.index("LeftLeg")
    key = Rotation.from_quat(demo.rotations[:, joint][:, [1, 2, 3, 0]])
    expected = Slerp(np.arange(demo.n_frames), key)(times).as_quat()[:, [3, 0, 1, 2]]
    assert same_rotations(got.rotations[:, joint], expected) < 1e-12


@pytest.mark.parametrize("source", ["demo", "05_01", "walk_normal"])
def test_time_scale_twice_then_half_is_the_original(demo, source):
    motion = {"demo": lambda: demo, "05_01": lambda: cmu("05_01"), "walk_normal": lambda: bandai("walk_normal")}[
        source
    ]()
    slow = timing.time_scale(motion, 2.0)
    assert slow.n_frames == 2 * motion.n_frames - 1 and slow.fps == motion.fps
    back = timing.time_scale(slow, 0.5)
    assert world_error(back, motion) < 1e-9


def test_arbitrary_factor_and_fps_resampling_keep_the_shape(demo):
    for factor in (0.37, 1.7, 3.3):
        scaled = timing.time_scale(demo, factor)
        assert scaled.n_frames == round((demo.n_frames - 1) * factor) + 1
        assert world_error(scaled.frames(slice(-1, None)), demo.frames(slice(-1, None))) < 1e-12
    fast = timing.resample(demo, 240.0)
    assert fast.fps == 240.0 and fast.n_frames == 4 * (demo.n_frames - 1) + 1
    assert world_error(timing.resample(fast, 60.0), demo) < 1e-9
    coarse = timing.resample(demo, 24.0)
    err = np.abs(
        timing.resample(coarse, 60.0).world_positions() - demo.world_positions()[: 5 * (coarse.n_frames - 1) // 2 + 1]
    )
    assert err.max() < 0.05  # metres: a 24 fps round trip of a 60 fps walk


def test_conform_maps_by_name_and_takes_bone_lengths():
    small = synthetic.walk(30, skeleton=synthetic.humanoid(0.8))
    tall = synthetic.humanoid(1.2)
    out = conform(small, tall, fps=30.0)
    assert out.skeleton is tall and np.isclose(out.fps, 30.0) and out.n_frames == 15
    assert np.allclose(out.translations[:, 1:], tall.rest_translations[1:])


# --- transitions ----------------------------------------------------------------------------------


def test_find_join_recovers_a_known_offset(demo):
    a = demo.frames(slice(0, 200))
    b = root.rotate(demo.frames(slice(140, 390)), 70.0, pivot=np.array([3.0, 0.0, 1.0]))
    join = find_join(a, b, 20, search_a=(100, 180), search_b=(0, 60))
    assert join.frame_a - join.frame_b == 140 and join.cost < 1e-9


def test_transition_of_a_clip_into_itself_is_seamless(demo):
    a, b = demo.frames(slice(0, 150)), demo.frames(slice(100, 390))
    tr = transition(a, b, window=0.25, frame_a=120, frame_b=20, cleanup=False)
    assert world_error(tr.motion, demo) < 1e-9  # same frames, same root path: nothing to blend


def test_transition_blends_and_normalises_b_to_a(demo):
    a = synthetic.walk(200)
    b = root.rotate(synthetic.jump(150), -50.0, pivot=np.array([9.0, 0.0, 9.0]))
    tr = transition(a, b, window=0.5, frame_a=150, frame_b=10)
    assert tr.motion.n_frames == 150 + b.n_frames - 10
    assert world_error(tr.motion.frames(slice(0, 60)), a.frames(slice(0, 60))) < 1e-12
    path, pa = root.track(tr.motion, UP), root.track(a, UP)
    assert np.allclose(path.positions[150, [0, 2]], pa.positions[150, [0, 2]])
    # After the window B's own relative motion continues.
    pb = root.track(b, UP)
    assert np.allclose(np.diff(path.headings[190:]), np.diff(pb.headings[50:]), atol=1e-9)
    assert tr.continuity.ratios()["pose_step"] < 2.0


def test_transition_walk_to_dance_on_captures():
    a, b = cmu("02_01"), cmu("05_02")
    tr = transition(a, b, window=0.5)
    start, stop = tr.blend
    assert a.n_frames // 2 <= tr.frame_a and tr.frame_b <= b.n_frames // 2 and tr.window == 60
    ratios = tr.continuity.ratios()
    assert ratios["pose_step"] < 1.5 and ratios["joint_jump"] < 1.5
    # The pelvis jumps no more than B's own capture glitches do.
    root_b, _ = velocity_jumps(b)
    assert tr.continuity.root_jump <= 1.01 * max(tr.continuity.root_jump_ref * 1.5, root_b.max())
    hard = transition(a, b, window=0.0, frame_a=tr.frame_a, frame_b=tr.frame_b, cleanup=False)
    assert hard.continuity.ratios()["joint_jump"] > 3.0 * ratios["joint_jump"]
    assert tr.skating_before.total_distance > 1.0
    assert tr.skating_after.total_distance < 0.05 * tr.skating_before.total_distance
    # Frames before the planted contacts (and their 0.2 s fade) are A's own.
    first = int(np.flatnonzero(tr.contacts.flags.any(axis=1))[0]) - round(0.2 * a.fps) - 1
    assert 0 < first < tr.region[0]
    assert world_error(tr.motion.frames(slice(0, first)), a.frames(slice(0, first))) < 1e-9


# --- body-part blending ---------------------------------------------------------------------------


def body_error(a: Motion, b: Motion) -> float:
    """World position error over the pelvis and everything below it (placement joints above the
    pelvis, such as Bandai's joint_Root, may legitimately differ)."""
    keep = a.skeleton.subtree(root.pelvis_joint(a))
    return float(np.abs(a.world_positions()[:, keep] - b.world_positions()[:, keep]).max())


def test_blend_parts_takes_the_subtree_and_half_the_parent(demo):
    a = demo.frames(slice(0, 200))
    b = synthetic.jump(200, fps=60.0)
    sk = a.skeleton
    arm, shoulder = sk.index("LeftArm"), sk.index("LeftShoulder")
    out = blend.blend_parts(a, b, "LeftArm", soft_edge=0.5)
    part = sk.subtree(arm)
    assert same_rotations(out.rotations[:, part], b.rotations[:, part]) < 1e-12
    others = ~part
    others[shoulder] = False
    assert same_rotations(out.rotations[:, others], a.rotations[:, others]) < 1e-12
    half = quat.distance(a.rotations[:, shoulder], out.rotations[:, shoulder])
    assert np.allclose(half, 0.5 * quat.distance(a.rotations[:, shoulder], b.rotations[:, shoulder]), atol=1e-9)
    assert world_error(blend.blend_parts(a, b, "LeftArm", weight=0.0), a) < 1e-12


def test_blend_parts_root_option_keeps_a_heading_and_position(demo):
    a = demo.frames(slice(60, 260))
    b = root.rotate(synthetic.jump(200, fps=60.0), 140.0)
    out = blend.blend_parts(a, b, "Spine", root_rotation=True)
    pa, po = root.track(a, UP), root.track(out, UP)
    assert np.allclose(po.positions, pa.positions, atol=1e-12)
    assert np.allclose(po.headings, pa.headings, atol=1e-9)
    # Pelvis lean is B's: the pelvis orientation relative to its own heading matches B's.
    flat_out, flat_b = root.normalize_frames(out, UP), root.normalize_frames(b, UP)
    hips = a.skeleton.index("Hips")
    assert same_rotations(flat_out.rotations[:, hips], flat_b.rotations[:, hips]) < 1e-9
    kept = blend.blend_parts(a, b, "Spine", root_rotation=False)
    assert same_rotations(kept.rotations[:, hips], a.rotations[:, hips]) < 1e-12


def test_blend_parts_time_alignment(demo):
    a = demo.frames(slice(0, 120))
    slow = timing.time_scale(demo.frames(slice(0, 150)), 2.0)  # frame 2k is demo frame k
    out = blend.blend_parts(a, slow, "Hips", offset=0, length=239, stretch=True)
    assert world_error(out, a) < 1e-9
    held = blend.blend_parts(a, demo.frames(slice(0, 100)), "LeftLeg", offset=30, stretch=False)
    leg = a.skeleton.index("LeftLeg")
    assert same_rotations(held.rotations[:69, leg], demo.rotations[30:99, leg]) < 1e-12
    assert same_rotations(held.rotations[70:, leg], demo.rotations[99, leg][None]) < 1e-12


def test_blend_upper_body_of_a_dance_onto_a_walk_keeps_the_legs():
    walk, dance = bandai("walk_normal"), bandai("dance-short_normal")
    out = blend.blend_parts(walk, dance, "Spine", offset=300, stretch=False)
    legs = np.zeros(walk.skeleton.n_joints, dtype=bool)
    for name in ("UpperLeg_L", "UpperLeg_R"):
        legs |= walk.skeleton.subtree(walk.skeleton.index(name))
    assert np.abs(out.world_positions()[:, legs] - walk.world_positions()[:, legs]).max() < 1e-9
    chest = walk.skeleton.index("Chest")
    assert same_rotations(out.rotations[:, chest], dance.rotations[300 : 300 + walk.n_frames, chest]) < 1e-12


# --- interpolation --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def walk_and_run():
    run = clips.repeat(bandai("run_normal"), 4, closed=True)
    return bandai("walk_normal"), run


@pytest.mark.parametrize("coefficient", [0.0, 1.0])
def test_interpolation_endpoints_reproduce_the_inputs(walk_and_run, coefficient):
    walk, run = walk_and_run
    res = interpolation.interpolate(walk, run, coefficient)
    assert len(res.events_a) >= 5
    source, events = (walk, res.events_a) if coefficient == 0.0 else (run, res.events_b)
    expected = source.frames(slice(int(events[0]), int(events[-1]) + 1))
    assert res.motion.n_frames == expected.n_frames
    assert body_error(res.motion, conform(expected, walk.skeleton)) < 1e-9


def test_interpolation_between_walk_and_run_is_a_jog(walk_and_run):
    walk, run = walk_and_run
    speeds = {}
    for c in (0.0, 0.5, 1.0, 1.5):
        res = interpolation.interpolate(walk, run, c)
        path = root.track(res.motion, UP)
        travel = np.linalg.norm(root.horizontal(path.positions[-1] - path.positions[0], UP))
        speeds[c] = travel / ((res.motion.n_frames - 1) / res.motion.fps)
        assert np.allclose(res.events[[0, -1]], [0, res.motion.n_frames - 1], atol=1.0)
    assert speeds[0.0] < speeds[0.5] < speeds[1.0] < speeds[1.5]
    fast = interpolation.interpolate(walk, run, 0.5, speed=2.0)
    half = interpolation.interpolate(walk, run, 0.5)
    assert abs(fast.motion.n_frames - (half.motion.n_frames + 1) / 2) <= 1
    with pytest.raises(ValueError, match="coefficient"):
        interpolation.interpolate(walk, run, 1.6)


def test_interpolation_with_given_events_on_procedural_walks():
    slow = synthetic.walk(240, speed=1.0, stride_hz=0.8)
    fast = synthetic.walk(240, speed=1.8, stride_hz=1.2)
    # Left-leg swing peaks (phase π/2 + 2πk) as events.
    ev_slow = 60 * (0.25 + np.arange(3)) / 0.8
    ev_fast = 60 * (0.25 + np.arange(3)) / 1.2
    res = interpolation.interpolate(slow, fast, 0.5, ev_slow, ev_fast)
    duration = 0.5 * (2 / 0.8 + 2 / 1.2)
    assert res.motion.n_frames == int(np.floor(duration * 60 + 1e-9)) + 1
    leg = slow.skeleton.index("LeftUpLeg")
    middle = quat.slerp(slow.rotations[round(ev_slow[1]), leg], fast.rotations[round(ev_fast[1]), leg], 0.5)
    assert same_rotations(res.motion.rotations[round(res.events[1]), leg], middle) < 1e-3


# --- key edit -------------------------------------------------------------------------------------


def test_key_edit_sets_the_pose_and_fades_out(demo):
    leg, hips = demo.skeleton.index("LeftLeg"), demo.skeleton.index("Hips")
    new = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 1.2)
    new_root = demo.translations[100, hips] + np.array([0.0, -0.1, 0.05])
    out = keyedit.key_edit(demo, 100, {"LeftLeg": new}, {hips: new_root}, width=20)
    assert same_rotations(out.rotations[100, leg], new) < 1e-12
    assert np.allclose(out.translations[100, hips], new_root, atol=1e-15)
    far = np.abs(np.arange(demo.n_frames) - 100) >= 20
    assert np.array_equal(out.rotations[far], demo.rotations[far])
    assert np.array_equal(out.translations[far], demo.translations[far])
    assert np.array_equal(np.delete(out.rotations, leg, axis=1), np.delete(demo.rotations, leg, axis=1))


def test_key_edit_has_no_velocity_spike(demo):
    leg = demo.skeleton.index("LeftLeg")
    new = quat.multiply(demo.rotations[100, leg], quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 0.8))

    def accel(motion):
        """Angular acceleration of the knee (T-2, 3), rad per frame²."""
        q = motion.rotations[:, leg]
        return np.diff(2.0 * quat.log(quat.multiply(quat.conjugate(q[:-1]), q[1:])), axis=0)

    def added(**options):
        """Largest acceleration the edit adds to the original's."""
        edited = keyedit.key_edit(demo, 100, {leg: new}, **options)
        return np.linalg.norm(accel(edited) - accel(demo), axis=-1).max()

    smooth = added(width=30)
    # The change adds its own smooth bump: 0.8 rad · max|f''| = 0.8 · 5.77 / 30² (plus tiny cross terms).
    assert smooth <= 1.05 * 0.8 * 5.774 / 30**2
    assert added(width=0) > 100 * smooth  # a hard key: a pop
    assert added(width=30, shape="linear") > 5 * smooth  # a velocity kink at the key


# --- PCA synthesis --------------------------------------------------------------------------------


def test_close_loop_makes_the_last_frame_the_first():
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.normal(size=(9, 5, 4)))
    values = rng.normal(size=(9, 2))
    cq, cv = pca.close_loop(q, values)
    assert same_rotations(cq[-1], cq[0]) < 1e-12 and np.allclose(cv[-1], cv[0])
    assert same_rotations(cq[0], q[0]) < 1e-15


def test_pca_on_procedural_walks_follows_speed():
    walks = [synthetic.walk(300, speed=s, stride_hz=0.6 + 0.25 * s) for s in (0.9, 1.2, 1.5)]
    model = pca.fit_cycle_pca(walks, "speed", n_frames=24)
    assert len(model.cycles) >= 9
    assert np.allclose(np.sort(np.unique(model.parameters.round(6))), [0.9, 1.2, 1.5], atol=0.02)
    assert model.explained_variance_ratio[0] > 0.95  # one family of walks: one main direction
    for value in (1.0, 1.35, 1.65):  # inside and modestly beyond the range
        made = model.generate(value, loops=3)
        path = root.track(made, UP)
        speed = np.linalg.norm(root.horizontal(path.positions[-1] - path.positions[0], UP)) / (
            (made.n_frames - 1) / made.fps
        )
        assert abs(speed - value) < 0.02 * value
    with pytest.raises(ValueError, match="too far outside"):
        model.generate(2.0)


def test_pca_on_cmu_walks_reproduces_a_training_cycle():
    walks = [cmu("05_01"), cmu("02_01")]
    model = pca.fit_cycle_pca(walks, [0.0, 1.0], close=False)
    sources = np.array([c.source for c in model.cycles])
    assert np.sum(sources == 0) >= 3 and np.sum(sources == 1) >= 1
    assert np.cumsum(model.explained_variance_ratio)[1] >= 0.85
    # Two parameter values: the fit passes through each motion's mean cycle; 02_01 has one cycle.
    only = int(np.flatnonzero(sources == 1)[0])
    assert np.allclose(model.predict(1.0), model.coefficients[only], atol=1e-9)
    cycle = model.cycles[only]
    placed = root.place(cycle.motion, 0, root.State(np.zeros(3), 0.0), model.up)
    made = model.motion(model.decode(model.vector(model.predict(1.0))))
    n = model.n_frames
    limbs = model.pose_joints
    assert same_rotations(made.rotations[:n, limbs], placed.rotations[:n, limbs]) < 1e-9
    # The root path is the cycle's in body sizes, played at the first motion's size.
    scale = model.size / walks[1].skeleton.size()
    made_path, cycle_path = root.track(made, UP), root.track(placed, UP)
    assert np.allclose(made_path.positions[:n], scale * cycle_path.positions[:n], atol=1e-9)
    assert np.allclose(made_path.headings[:n], cycle_path.headings[:n], atol=1e-9)
    # Fewer components: a close but not exact rebuild.
    rough = model.reconstruct(only, 2).frames(slice(0, n))
    assert 1e-6 < body_error(rough, made.frames(slice(0, n))) < 0.1 * model.size


def test_pca_on_bandai_walks_explains_most_variance_and_loops_smoothly():
    walks = [bandai("walk_normal"), bandai("walk_tired")]
    model = pca.fit_cycle_pca(walks, "speed")
    assert len(model.cycles) >= 10
    k = model.n_components_for(0.9)
    assert k <= 4
    assert model.parameter_r2 > 0.5
    made = model.generate(float(np.median(model.parameters)), loops=4, n_components=k)
    # The loop seams are as smooth as the captured walks.
    seams = [round(i * made.n_frames / 4) for i in (1, 2, 3)]
    for seam in seams:
        report = join_continuity(made, seam, seam, walks)
        assert max(report.ratios().values()) < 1.5, report


def test_bandai_transition_keeps_the_placement_joint_still():
    a, b = bandai("walk_normal"), bandai("walk_tired")
    tr = transition(a, b, window=0.5)
    assert tr.skating_after.total_distance < 0.05 * tr.skating_before.total_distance
    # joint_Root stays where both captures keep it; Hips carries the whole path, without jumps.
    assert np.array_equal(tr.motion.translations[:, 0], np.broadcast_to(a.translations[0, 0], (tr.motion.n_frames, 3)))
    hips = a.skeleton.index("Hips")
    step = np.linalg.norm(np.diff(tr.motion.translations[:, hips], axis=0), axis=-1)
    assert step.max() < 2.0 * np.linalg.norm(np.diff(a.translations[:, hips], axis=0), axis=-1).max()
