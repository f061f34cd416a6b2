"""Planting bends nearly straight legs in their thigh's hinge plane (core.ik.plant.hinge_pole).

A CMU walk scaled 1.4× has legs straight through much of each stance; their own bend plane is
noise there, and two-link IK that keeps it swings the knee sideways from frame to frame. The
figure is the knees' jerk (third differences of their positions) after planting against before.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from core import quaternion as quat
from core.contacts import detect_contacts
from core.ik import two_link
from core.ik.plant import FootPlant, hinge_pole, plant_feet, stand_feet
from core.ik.two_link import solve_two_link
from core.io.bvh import read_bvh
from core.kinematics import forward_kinematics
from core.limbs import find_feet, limb_chain
from core.motion import Motion
from core.skeleton import Skeleton
from tests.conftest import shared_file


def knee_jerk(motion, knees) -> float:
    pos = motion.world_positions()[:, knees]
    return float(np.linalg.norm(np.diff(pos, 3, axis=0), axis=-1).mean())


def test_planting_a_straight_legged_walk_keeps_the_knees_smooth():
    walk = read_bvh(shared_file("cmu_bvh_cgspeed/05_01.bvh")).frames(slice(1, None)).scaled(1.4)
    contacts = detect_contacts(walk)
    knees = [limb_chain(walk.skeleton, int(j))[1] for j in contacts.joints]
    before = knee_jerk(walk, knees)
    hinged = knee_jerk(plant_feet(walk, contacts), knees)
    assert hinged < 1.15 * before
    # the feature removed (each leg's own plane, a bend of any size taken for the leg's plane): the knees swing. With
    # bends under STRAIGHT borrowing their neighbours' plane, the leg's own plane is as smooth here (×1.087 against
    # the hinge's ×1.083): this capture's noisy planes are its locked knees' rounding
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(two_link, "STRAIGHT", 1e-9)
        own_plane = knee_jerk(plant_feet(walk, contacts, hinge=False), knees)
    assert own_plane > 1.5 * before
    planted = plant_feet(walk, contacts)  # the feet are planted as well as before
    miss = np.linalg.norm(planted.world_positions()[:, contacts.joints] - contacts.anchors, axis=-1)[contacts.flags]
    miss_own = np.linalg.norm(
        plant_feet(walk, contacts, hinge=False).world_positions()[:, contacts.joints] - contacts.anchors, axis=-1
    )[contacts.flags]
    assert miss.mean() <= miss_own.mean() * 1.01 + 1e-9


def test_the_pole_follows_a_bent_legs_own_plane_and_a_straight_legs_hinge():
    # one leg: hip at the origin, thigh down -z; the knee bends about the thigh's x axis (a hinge),
    # the thigh turning about z over the frames
    t = 50
    heading = np.linspace(0.0, 1.0, t)
    rot = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), heading)
    bend = np.where(np.arange(t) < 25, 0.6, 1e-4)  # bent, then nearly straight
    e1 = np.broadcast_to([0.0, 0.0, -0.5], (t, 3))
    e2 = np.stack((np.zeros(t), 0.5 * np.sin(-bend), -0.5 * np.cos(bend)), axis=1)  # shank swings back (−y)
    noise = 1e-4 * np.random.default_rng(0).standard_normal((t, 3))  # the straight frames' own plane: noise
    pos = np.zeros((t, 3, 3))
    pos[:, 1] = quat.rotate(rot, e1)
    pos[:, 2] = pos[:, 1] + quat.rotate(rot, e2 + noise * (bend < 0.01)[:, None])
    orient = np.repeat(rot[:, None], 3, axis=1)
    pole = hinge_pole(pos, orient, (0, 1, 2))
    forward = quat.rotate(rot, np.broadcast_to([0.0, 1.0, 0.0], (t, 3)))  # the knee's side: +y of the thigh
    u = pos[:, 2] / np.linalg.norm(pos[:, 2], axis=-1, keepdims=True)  # hip → ankle
    expected = forward - np.sum(forward * u, axis=-1, keepdims=True) * u  # in the hinge plane, off the line
    cosine = np.sum(pole * expected, axis=-1) / np.linalg.norm(pole, axis=-1) / np.linalg.norm(expected, axis=-1)
    assert cosine.min() > 0.99
    # the feature removed (the leg's own plane alone): the straight frames point anywhere
    own = np.cross(pos[:, 2], np.cross(pos[:, 1], pos[:, 2] - pos[:, 1]))
    own_cosine = np.sum(own * expected, axis=-1) / np.linalg.norm(own, axis=-1) / np.linalg.norm(expected, axis=-1)
    assert own_cosine[:25].min() > 0.99 and own_cosine[25:].min() < 0.5


def test_a_leg_straight_but_for_the_files_rounding_bends_in_its_neighbours_plane():
    # hip at the origin, thigh down −z; frames 0–9 bent 10° with the knee forward (+y), frames 10–19 straight as
    # a capture with a knee locked at 0° writes it: collinear up to its offsets' rounding (2e-7 here, sideways)
    t = 20
    straight = np.arange(t) >= 10
    bend = np.where(straight, 2e-7, np.radians(10.0))
    side = np.where(straight, 1.0, 0.0)  # the rounding's "bend" is sideways (x), the real one forward (y)
    a = np.zeros((t, 3))
    b = np.broadcast_to([0.0, 0.0, -0.5], (t, 3))
    shank = np.stack((0.5 * side * np.sin(bend), -0.5 * (1 - side) * np.sin(bend), -0.5 * np.cos(bend)), axis=1)
    target = np.broadcast_to([0.0, 0.0, -0.95], (t, 3))  # within reach: the knee must bend about 36°
    d_upper, _, reached = solve_two_link(a, b, b + shank, target)
    knee = quat.rotate(d_upper, b)
    assert np.linalg.norm(reached - target, axis=-1).max() < 1e-9  # exactly: laid straight, then bent
    # the knee comes forward as on the bent frames (the rounding's plane would send it sideways: |x| 0.16, y 0)
    assert np.all(knee[straight, 1] > 0.15) and np.abs(knee[straight, 0]).max() < 1e-6


def test_planting_in_the_legs_own_plane_on_a_capture_with_knees_locked_straight():
    # CMU 131_01 (3ds Max) locks its knees at 0° in stance; its bones are collinear only up to the file's rounding.
    # Planting in each leg's own plane (the physics' later plantings) then bent those knees in the rounding's plane:
    # the legs' jerk 3.7× the input's against 1.7× in the thigh's hinge plane (the anchors' steps, not eased here)
    walk = read_bvh(shared_file("cmu_bvh_3dsmax/131_01.bvh")).frames(slice(1, None)).scaled(1.4)
    contacts = detect_contacts(walk)
    legs = [j for i in contacts.joints for j in limb_chain(walk.skeleton, int(i))]
    own_plane = knee_jerk(plant_feet(walk, contacts, hinge=False), legs)
    hinged = knee_jerk(plant_feet(walk, contacts), legs)
    assert own_plane < 1.1 * hinged


def test_a_straight_leg_that_turns_keeps_its_knee_on_its_own_side():
    # a stance leg bent 10° (knee forward, +y of the body) for 10 frames, then straight up to rounding while the body
    # turns 180° about the vertical on it: the borrowed plane turns with the thigh (carried in its orientation)
    t = 60
    turn = np.pi * np.clip((np.arange(t) - 10) / 40, 0.0, 1.0)
    spin = quat.from_axis_angle(np.tile([0.0, 0.0, 1.0], (t, 1)), turn)  # the thigh's world orientation
    bend = np.where(np.arange(t) < 10, np.radians(10.0), 2e-7)
    shank = 0.5 * np.stack((np.zeros(t), -np.sin(bend), -np.cos(bend)), axis=1)  # back: the knee forward
    a, b = np.zeros((t, 3)), quat.rotate(spin, np.tile([0.0, 0.0, -0.5], (t, 1)))
    c = b + quat.rotate(spin, shank)
    target = np.tile([0.0, 0.0, -0.95], (t, 1))
    facing = quat.rotate(spin, np.tile([0.0, 1.0, 0.0], (t, 1)))
    d_upper, _, _ = solve_two_link(a, b, c, target, frame=spin)
    forward = np.sum(quat.rotate(d_upper, b) * facing, axis=1)
    assert forward.min() > 0.15  # the knee ahead of the body on every frame (0.156 at the target's bend)
    d_upper, _, _ = solve_two_link(a, b, c, target)  # the plane borrowed in world space: the knee ends up behind
    assert np.sum(quat.rotate(d_upper, b) * facing, axis=1).min() < -0.15


def test_a_folded_limb_straight_but_for_rounding_unfolds_by_the_bend_it_needs():
    # a limb folded back on itself (170° of bend, then 180° up to the file's rounding, sideways) opens to the target
    # exactly, the mid joint turning by the bend's change alone
    t = 20
    folded = np.arange(t) >= 10
    bend = np.where(folded, np.pi - 2e-7, np.radians(170.0))
    side = folded.astype(float)
    a = np.zeros((t, 3))
    b = np.broadcast_to([0.0, 0.0, -0.5], (t, 3))
    # the bent frames fold in the x–z plane, the rounding of the folded ones lies along y
    shank = np.stack((-0.5 * (1 - side) * np.sin(bend), 0.5 * side * np.sin(bend), -0.5 * np.cos(bend)), axis=1)
    target = np.broadcast_to([0.3, 0.0, -0.4], (t, 3))  # 0.5 from the hip: the limb opens to 120°
    d_upper, d_mid, reached = solve_two_link(a, b, b + shank, target)
    assert np.linalg.norm(reached - target, axis=-1).max() < 1e-9
    turned = 2.0 * np.arccos(np.clip(np.abs(d_mid[:, 0]), 0.0, 1.0))  # the mid joint's turn, radians
    np.testing.assert_allclose(turned, np.abs(bend - np.radians(120.0)), atol=1e-6)


def test_a_capture_written_with_two_decimals_still_counts_its_locked_knees_straight(tmp_path):
    # CMU 131_01 with its offsets written to 0.01 units: its locked knees now bend by the offsets' rounding, a sine
    # of 4.9e-4 (2e-7 with five decimals), under STRAIGHT. Planting in each leg's own plane: the legs' jerk 2.2× the
    # input's against the hinge plane's 1.75× (3.7× with STRAIGHT at 1e-5, the rounding taken for the plane)
    text = open(shared_file("cmu_bvh_3dsmax/131_01.bvh")).read()
    rounded = re.sub(
        r"OFFSET\s+(\S+)\s+(\S+)\s+(\S+)", lambda m: "OFFSET " + " ".join(f"{float(x):.2f}" for x in m.groups()), text
    )
    (tmp_path / "131_01.bvh").write_text(rounded)
    walk = read_bvh(tmp_path / "131_01.bvh").frames(slice(1, None)).scaled(1.4)
    contacts = detect_contacts(walk)
    legs = [j for i in contacts.joints for j in limb_chain(walk.skeleton, int(i))]
    own_plane = knee_jerk(plant_feet(walk, contacts, hinge=False), legs)
    assert own_plane < 1.5 * knee_jerk(plant_feet(walk, contacts), legs)


def _standing_knees(path: str, plant, hyper: float = 0.0, outlier: float = 0.0) -> list[tuple[float, float]]:
    """The rig's rest pose held for a second, its knees hyperextended by ``hyper`` degrees (the ankle turned towards
    the toes; ``outlier`` degrees on frame 10), its pelvis lowered 2 % of its size by the last frame, the feet
    planted by ``plant``. Per leg: how far (cosine) the knee moves towards the toe on the last frame (its offset from
    the hip–ankle line against the ankle → toe joint of :func:`core.limbs.find_feet`, both across the leg), and how
    far (degrees) the thigh turned about its own axis at most (a knee brought forward by rolling the leg over would
    read 180)."""
    rig = read_bvh(shared_file(path))
    still = rig.frames(slice(0, 1))
    still.rotations[:] = quat.identity()
    sk = still.skeleton
    standing = still.frames(np.zeros(int(rig.fps), dtype=int))
    up = detect_contacts(standing).up
    toes = {ankle: toe for ankle, toe in find_feet(sk, up).values()}
    rest = _world(standing)[0][0]
    for ankle, toe in toes.items():  # BVH rest rotations are identity: a knee's local axes are the world's
        knee = limb_chain(sk, ankle)[1]
        axis = np.cross(rest[ankle] - rest[knee], rest[toe] - rest[ankle])
        standing.rotations[:, knee] = quat.from_axis_angle(axis / np.linalg.norm(axis), np.radians(hyper))
        if outlier:
            standing.rotations[10, knee] = quat.from_axis_angle(axis / np.linalg.norm(axis), np.radians(outlier))
    contacts = detect_contacts(standing)
    low = standing.copy()
    low.translations[:, 0] -= (0.02 * sk.size() * np.linspace(0.0, 1.0, standing.n_frames))[:, None] * contacts.up
    pos, rot = _world(plant(low, contacts))
    rest, rest_rot = _world(standing)
    out = []
    for ankle in contacts.joints:
        hip, knee, _ = limb_chain(sk, int(ankle))
        p, r = pos[-1], rest[-1]
        line = (p[ankle] - p[hip]) / np.linalg.norm(p[ankle] - p[hip])
        off = p[knee] - p[hip] - np.dot(p[knee] - p[hip], line) * line
        ahead = r[toes[int(ankle)]] - r[ankle]
        ahead = ahead - np.dot(ahead, line) * line
        turn = quat.multiply(rot[:, hip], quat.conjugate(rest_rot[:, hip]))  # world turns of the thigh
        axis = (r[knee] - r[hip]) / np.linalg.norm(r[knee] - r[hip])
        twist = np.degrees(2.0 * np.arctan2(np.abs(turn[:, 1:] @ axis), np.abs(turn[:, 0]))).max()
        out.append((float(np.dot(off, ahead) / np.linalg.norm(off) / np.linalg.norm(ahead)), float(twist)))
    return out


def _world(motion):
    return forward_kinematics(motion.skeleton, motion.translations, motion.rotations)


def _stand(motion, contacts):
    feet = []
    toes = {ankle: toe for ankle, toe in find_feet(motion.skeleton, contacts.up).values()}
    for c, ankle in enumerate(contacts.joints):
        leg = limb_chain(motion.skeleton, int(ankle))
        flags = contacts.flags[:, c]
        toe = toes[int(ankle)]
        feet.append(FootPlant(leg, toe, flags, contacts.anchors[:, c], None, None, np.array([ankle]), np.zeros(0, int)))
    return stand_feet(motion, feet, float(contacts.floor.min()), contacts.up)


@pytest.mark.parametrize(
    ("path", "hyper", "outlier"),
    [
        ("cmu_bvh_3dsmax/131_01.bvh", 0.0, 0.0),
        ("cmu_bvh_3dsmax/131_01.bvh", 0.8, 0.0),
        ("cmu_bvh_3dsmax/131_01.bvh", 0.8, 1.4),  # one frame bent past HINGE_BENT: still no plane to read
        ("cmu_bvh_cgspeed/02_01.bvh", 0.0, 0.0),
        ("cmu_bvh_cgspeed/02_01.bvh", 0.8, 0.0),
        ("mixamo/Walk-In-Circle.bvh", 0.0, 0.0),
    ],
)
@pytest.mark.parametrize("plant", [plant_feet, _stand], ids=["plant_feet", "stand_feet"])
def test_a_leg_straight_on_every_frame_bends_its_knee_towards_its_toes(path, hyper, outlier, plant):
    # a rig standing with legs straight (3ds Max's CMU rig locks them at 0°, cgspeed's rest is straight) or
    # hyperextended 0.8° (as Character Creator's rest) has no bend plane to read; lowered, its knees must bend forward
    # without the thigh rolling over, as a rig whose rest bends them forward does (Mixamo's, 2–3°). Before: the
    # straight knees went sideways (131_01's cosines −0.06, −0.08), the hyperextended ones backwards; the first fix
    # brought them forward by rolling the thigh over (176–180°: the pole plane's sign)
    for cosine, twist in _standing_knees(path, plant, hyper, outlier):
        assert cosine > 0.9 and twist < 10.0


def _legs(feet: dict[str, list]) -> Skeleton:
    """Hips and two straight legs (Y up, facing +Z), each foot's children (name, offset) as given, mirrored."""
    names, parents, offsets = ["hips"], [-1], [[0.0, 0.95, 0.0]]
    for side, sign in (("L", 1.0), ("R", -1.0)):
        first = len(names)
        chain = [
            ("thigh", 0, [0.1 * sign, -0.05, 0.0]),
            ("shin", first, [0.0, -0.42, 0.0]),
            ("foot", first + 1, [0, -0.42, 0]),
        ]
        for name, parent, offset in chain:
            names.append(f"{name}.{side}"), parents.append(parent), offsets.append(offset)
        for name, parent, (x, y, z) in feet:  # parent: an index into this foot's own joints, 0 = the ankle
            names.append(f"{name}.{side}"), parents.append(first + 2 + parent), offsets.append([x * sign, y, z])
    return Skeleton(names, parents, offsets)


@pytest.mark.parametrize(
    "feet",
    [
        [("heel", 0, (0.0, -0.07, -0.09)), ("toe", 0, (0.0, -0.06, 0.13))],  # a heel helper listed before the toe
        [("heel", 0, (0.0, -0.09, -0.07)), ("ball", 1, (0.0, 0.03, 0.2)), ("toe", 2, (0.0, 0.0, 0.06))],  # through it
        [("metatarsals", 0, (0.0, -0.05, 0.065))],  # a short foot bone only (Daz's)
    ],
    ids=["heel-first", "heel-ball-toe", "metatarsals"],
)
def test_a_straight_leg_bends_towards_the_tip_of_its_foot_whatever_its_helper_bones(feet):
    # the foot's way is its farthest point from the ankle (the toe's tip), not the first child (a heel: the knee
    # went backwards) nor a bone a quarter of the shin long (an 8 cm metatarsal: no way at all, and the knee's side
    # then flipped 180° from frame to frame on a leg straight but for 10⁻⁵ of noise)
    sk = _legs(feet)
    t = 30
    rng = np.random.default_rng(3)
    still = Motion(
        sk, np.broadcast_to(sk.rest_translations, (t, sk.n_joints, 3)).copy(), quat.identity((t, sk.n_joints))
    )
    for side in "LR":  # the knees straight but for noise
        shin = sk.index(f"shin.{side}")
        still.rotations[:, shin] = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), 1e-5 * rng.standard_normal(t))
    ankles = [sk.index("foot.L"), sk.index("foot.R")]
    contacts = detect_contacts(still, joints=ankles)
    low = still.copy()
    low.translations[:, 0] -= (0.02 * sk.size() * np.linspace(0.2, 1.0, t))[:, None] * contacts.up
    pos = plant_feet(low, contacts).world_positions()
    for ankle in ankles:
        hip, knee, _ = limb_chain(sk, ankle)
        line = pos[:, ankle] - pos[:, hip]
        line /= np.linalg.norm(line, axis=-1, keepdims=True)
        off = pos[:, knee] - pos[:, hip] - np.sum((pos[:, knee] - pos[:, hip]) * line, axis=-1, keepdims=True) * line
        assert (off[:, 2] / np.linalg.norm(off, axis=-1)).min() > 0.99  # forward (+Z) on every frame
