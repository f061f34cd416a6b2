"""Acclaim ASF/AMC: reading against hand-computed poses and an independent Acclaim FK (scipy),
write/read round trips, BVH ⇄ ASF/AMC conversion, error reports, and the CMU captures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import quaternion as quat
from core import synthetic
from core.io import MocapFormatError
from core.io.asf_amc import (
    asf_layout_problem,
    channels_to_dofs,
    dofs_to_channels,
    read_amc,
    read_asf,
    read_asf_amc,
    to_asf_layout,
    write_amc,
    write_asf,
    write_asf_amc,
)
from core.io.bvh import read_bvh
from core.io.convert import (
    asf_amc_to_bvh,
    bvh_to_asf_amc,
    find_asf,
    load_asf_skeleton,
    load_motion,
    save_motion,
    to_bvh_layout,
)
from core.kinematics import end_site_positions, forward_kinematics
from core.motion import Motion
from core.skeleton import Skeleton, rest_positions
from tests.conftest import shared_file

SMALL_ASF = """# hand-made skeleton
:version 1.10
:name small
:units
  mass 1.0
  length 1.0
  angle deg
:documentation
  two bones, the first with its axis turned 90 degrees about Z
:root
  order TX TY TZ RX RY RZ
  axis XYZ
  position 0 0 0
  orientation 0 0 0
:bonedata
  begin
     id 1
     name upper
     direction 1 0 0
     length 2
     axis 0 0 90 XYZ
    dof rx
    limits (-10.0 170.0)
  end
  begin
     id 2
     name lower
     direction 1 0 0
     length 3
     axis 0 0 0 XYZ
    dof rz ry
    limits (-90.0 90.0)
           (-inf inf)
  end
:hierarchy
  begin
    root upper
    upper lower
  end
"""

SMALL_AMC = """#!OML:ASF small.asf
:FULLY-SPECIFIED
:DEGREES
1
root 1 2 3 0 0 0
upper 0
lower 0 0
2
root 0 0 0 0 0 90
upper 90
lower 90 0
"""


def num(x) -> str:
    """A number as file text that reads back to the same float (repr of a numpy scalar is
    ``np.float64(…)`` under numpy 2)."""
    return repr(float(x))


def write(folder: Path, name: str, text: str, newline: str = "\n") -> Path:
    path = folder / name
    path.write_bytes(text.replace("\n", newline).encode())
    return path


def small(tmp_path: Path, asf: str = SMALL_ASF, amc: str = SMALL_AMC, newline: str = "\n") -> Motion:
    return read_asf_amc(write(tmp_path, "s.asf", asf, newline), write(tmp_path, "s.amc", amc, newline))


def all_positions(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    pos, rot = forward_kinematics(motion.skeleton, motion.translations, motion.rotations)
    return pos, end_site_positions(motion.skeleton, pos, rot)


# --- reading: hand-computed poses -------------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_small_skeleton_matches_hand_computed_poses(tmp_path, newline):
    """Frame 1 is the rest pose moved to (1, 2, 3). Frame 2: the root turns 90° about Z;
    ``upper`` turns rx = 90° about its axis frame's X, which the axis (Z 90°) makes the
    world Y, so the bone (1, 0, 0) goes to (0, 0, -1) and then the root's turn leaves it
    there; ``lower`` turns rz = 90° in its own frame: (3,0,0) → Rz·Ry·Rz(3,0,0) = (-3,0,0).
    """
    m = small(tmp_path, newline=newline)
    assert m.skeleton.names == ("root", "upper", "lower") and m.n_frames == 2 and m.fps == 120
    pos, ends = all_positions(m)
    assert np.allclose(pos[0], [[1, 2, 3], [1, 2, 3], [3, 2, 3]])
    assert np.allclose(ends[0], [[6, 2, 3]])
    assert np.allclose(pos[1], [[0, 0, 0], [0, 0, 0], [0, 0, -2]])
    assert np.allclose(ends[1], [[-3, 0, -2]])


def test_dofs_limits_and_units_are_kept(tmp_path):
    sk = small(tmp_path).skeleton
    # dof "rz ry" is extrinsic Z then Y = intrinsic "Yrotation Zrotation"
    assert sk.channels == (
        ("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"),
        ("Xrotation",),
        ("Yrotation", "Zrotation"),
    )
    assert sk.limits == (None, ((-10.0, 170.0),), ((-np.inf, np.inf), (-90.0, 90.0)))
    assert sk.meta["asf_units"] == {"mass": 1.0, "length": 1.0, "angle": "deg"}
    assert [channels_to_dofs(c) for c in sk.channels[1:]] == [("rx",), ("rz", "ry")]


def test_skeleton_limits_are_checked_and_meta_is_copied():
    meta = {"asf_units": {"length": 0.45}}
    sk = Skeleton(
        ("a", "b"), [-1, 0], np.zeros((2, 3)), channels=((), ("Xrotation",)), limits=(None, [(-1, 2)]), meta=meta
    )
    assert sk.limits == (None, ((-1.0, 2.0),))
    meta["asf_units"]["length"] = 1.0
    assert sk.meta["asf_units"]["length"] == 0.45
    with pytest.raises(ValueError, match="one .min, max. pair per channel"):
        Skeleton(("a", "b"), [-1, 0], np.zeros((2, 3)), channels=((), ("Xrotation",)), limits=(None, ()))
    with pytest.raises(ValueError, match="one entry"):
        Skeleton(("a", "b"), [-1, 0], np.zeros((2, 3)), limits=(None,))


def test_dof_channel_mapping_is_an_involution():
    dofs = ("tx", "rz", "ty", "rx", "ry")
    assert dofs_to_channels(dofs) == ("Xposition", "Yrotation", "Yposition", "Xrotation", "Zrotation")
    assert channels_to_dofs(dofs_to_channels(dofs)) == dofs


def test_amc_numbers_read_as_bvh_channels_give_the_same_rotation(tmp_path):
    """The reversed channel list makes the AMC numbers valid BVH (intrinsic) channel values."""
    m = small(tmp_path)
    ref = Rotation.from_euler("ZY", [90, 0], degrees=True)  # scipy upper case = intrinsic
    got = m.rotations[1, 2]
    assert np.isclose(abs(np.dot(got, np.r_[ref.as_quat()[3], ref.as_quat()[:3]])), 1)


def test_radians_in_asf_units_or_amc_header(tmp_path):
    deg = small(tmp_path)
    rad_asf = SMALL_ASF.replace("angle deg", "angle rad").replace("axis 0 0 90", f"axis 0 0 {np.pi / 2!r}")
    rad_asf = rad_asf.replace("(-10.0 170.0)", f"({num(np.radians(-10))} {num(np.radians(170))})")
    rad_amc = SMALL_AMC.replace(":DEGREES\n", "").replace(" 90", f" {np.pi / 2!r}")
    a = small(tmp_path, rad_asf, rad_amc)
    b = small(tmp_path, SMALL_ASF, SMALL_AMC.replace(":DEGREES", ":RADIANS").replace(" 90", f" {np.pi / 2!r}"))
    for m in (a, b):
        assert np.allclose(m.world_positions(), deg.world_positions())
    assert np.allclose(a.skeleton.limits[1], [(-10, 170)])


def test_fps_defaults_to_120_and_is_settable(tmp_path):
    asf, amc = write(tmp_path, "s.asf", SMALL_ASF), write(tmp_path, "s.amc", SMALL_AMC)
    assert read_asf_amc(asf, amc).fps == 120
    assert read_asf_amc(asf, amc, fps=30).fps == 30


# --- reading: an independent Acclaim forward kinematics -------------------------------


def random_asf(rng: np.random.Generator, n_bones: int = 7) -> dict:
    """Random bones with turned axes, all six axis orders, any dof order and some translations."""
    orders = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
    bones = []
    for i in range(n_bones):
        dofs = [d for d in rng.permutation(["rx", "ry", "rz"])[: rng.integers(0, 4)]]
        if i % 3 == 2:
            dofs.insert(int(rng.integers(0, len(dofs) + 1)), "tx")
            dofs.append("tz")
        direction = rng.normal(size=3)
        bones.append(
            {
                "name": f"b{i}",
                "parent": "root" if i < 2 else f"b{int(rng.integers(0, i))}",
                "direction": direction / np.linalg.norm(direction),
                "length": float(rng.uniform(0.5, 3)),
                "axis": rng.uniform(-180, 180, 3),
                "axis_order": orders[i % 6],
                "dof": dofs,
            }
        )
    root = {
        "order": ["TX", "TY", "TZ", "RZ", "RX", "RY"],
        "axis": "ZXY",
        "position": rng.normal(size=3),
        "orientation": rng.uniform(-60, 60, 3),
    }
    return {"root": root, "bones": bones}


def asf_text(spec: dict) -> str:
    r = spec["root"]
    lines = [":version 1.10", ":name random", ":units", "  mass 1.0", "  length 1.0", "  angle deg", ":root"]
    lines += [f"  order {' '.join(r['order'])}", f"  axis {r['axis']}"]
    lines += [
        f"  position {' '.join(map(num, r['position']))}",
        f"  orientation {' '.join(map(num, r['orientation']))}",
    ]
    lines.append(":bonedata")
    for b in spec["bones"]:
        lines += ["  begin", f"    name {b['name']}", f"    direction {' '.join(map(num, b['direction']))}"]
        lines += [f"    length {num(b['length'])}", f"    axis {' '.join(map(num, b['axis']))} {b['axis_order']}"]
        if b["dof"]:
            lines.append(f"    dof {' '.join(b['dof'])}")
        lines.append("  end")
    lines += [":hierarchy", "  begin"]
    for parent in ["root"] + [b["name"] for b in spec["bones"]]:
        kids = [b["name"] for b in spec["bones"] if b["parent"] == parent]
        if kids:
            lines.append(f"    {parent} {' '.join(kids)}")
    return "\n".join(lines + ["  end", ""])


def amc_text(spec: dict, values: dict) -> str:
    lines = [":FULLY-SPECIFIED", ":DEGREES"]
    for f in range(len(values["root"])):
        lines.append(str(f + 1))
        for name, v in values.items():
            if v.shape[1]:
                lines.append(f"{name} {' '.join(map(num, v[f]))}")
    return "\n".join(lines) + "\n"


def acclaim_fk(spec: dict, values: dict) -> dict:
    """World head positions per bone (and 'root'), straight from the Acclaim rules with scipy.

    Root: position + O·t, world rotation O·M (O: the pre-set orientation). Bone: world
    rotation W = W_parent·C·M·C⁻¹, head = parent's end + W_parent·C·t, end = head + W·d·L.
    """

    def euler(letters, angles):  # about fixed axes, in the listed order
        return Rotation.from_euler(letters.lower(), angles, degrees=True)

    def dof_motion(dofs, v):
        rot = [(d[1], v[:, i]) for i, d in enumerate(dofs) if d[0].lower() == "r"]
        m = euler("".join(a for a, _ in rot), np.stack([x for _, x in rot], -1)) if rot else None
        t = np.zeros((len(v), 3))
        for i, d in enumerate(dofs):
            if d[0].lower() == "t":
                t[:, "xyz".index(d[1].lower())] = v[:, i]
        return m, t

    r = spec["root"]
    o = euler(r["axis"], [r["orientation"]["XYZ".index(a)] for a in r["axis"]])
    m, t = dof_motion(r["order"], values["root"])
    world = {"root": o * m}
    head = {"root": r["position"] + o.apply(t)}
    end = {"root": head["root"]}
    for b in spec["bones"]:
        c = euler(b["axis_order"], [b["axis"]["XYZ".index(a)] for a in b["axis_order"]])
        m, t = dof_motion(b["dof"], values[b["name"]])
        wp = world[b["parent"]]
        world[b["name"]] = wp * c * m * c.inv() if m is not None else wp
        head[b["name"]] = end[b["parent"]] + (wp * c).apply(t)
        end[b["name"]] = head[b["name"]] + world[b["name"]].apply(b["direction"] * b["length"])
    return head


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_positions_match_independent_acclaim_fk(tmp_path, seed):
    rng = np.random.default_rng(seed)
    spec = random_asf(rng)
    n = 12
    values = {"root": np.c_[rng.normal(size=(n, 3)), rng.uniform(-170, 170, (n, 3))]}
    for b in spec["bones"]:
        values[b["name"]] = rng.uniform(-170, 170, (n, len(b["dof"])))
    m = read_asf_amc(write(tmp_path, "r.asf", asf_text(spec)), write(tmp_path, "r.amc", amc_text(spec, values)))
    ref = acclaim_fk(spec, values)
    pos = m.world_positions()
    for j, name in enumerate(m.skeleton.names):
        assert np.allclose(pos[:, j], ref[name], atol=1e-9), name
    # the rest pose is the ASF's: root at its position, bones along their directions
    rest = rest_positions(m.skeleton)
    zero = {k: np.zeros((1, v.shape[1])) for k, v in values.items()}
    ref_rest = acclaim_fk(spec, zero)
    assert np.allclose(rest, [ref_rest[k][0] for k in m.skeleton.names])


def test_axis_rest_rotations_match_scipy(tmp_path):
    """World rest rotation of every joint is O·C (O: root orientation, C: the bone's axis)."""
    spec = random_asf(np.random.default_rng(7))
    sk = read_asf(write(tmp_path, "r.asf", asf_text(spec)))
    _, world = forward_kinematics(sk, sk.rest_translations, quat.identity((sk.n_joints,)))
    r = spec["root"]
    o = Rotation.from_euler(r["axis"].lower(), [r["orientation"]["XYZ".index(a)] for a in r["axis"]], degrees=True)
    for b in spec["bones"]:
        c = Rotation.from_euler(b["axis_order"].lower(), [b["axis"]["XYZ".index(a)] for a in b["axis_order"]], True)
        ref = (o * c).as_quat()
        got = world[sk.index(b["name"])]
        assert np.isclose(abs(np.dot(got, np.r_[ref[3], ref[:3]])), 1)


# --- writing ------------------------------------------------------------------------------


def assert_same_motion(a: Motion, b: Motion, atol: float = 1e-6) -> None:
    assert a.skeleton.names == b.skeleton.names and a.skeleton.channels == b.skeleton.channels
    assert a.n_frames == b.n_frames and np.isclose(a.fps, b.fps)
    assert np.abs(a.translations - b.translations).max() < atol
    assert np.abs(np.abs(np.sum(a.rotations * b.rotations, -1)) - 1).max() < atol
    assert np.abs(a.skeleton.rest_translations - b.skeleton.rest_translations).max() < atol
    assert np.allclose(np.abs(np.sum(a.skeleton.rest_rotations * b.skeleton.rest_rotations, -1)), 1, atol=atol)
    pa, ea = all_positions(a)
    pb, eb = all_positions(b)
    assert np.abs(pa - pb).max() < atol and np.abs(ea - eb).max() < atol


@pytest.mark.parametrize("seed", [0, 5])
def test_written_pair_reads_back_to_the_same_motion(tmp_path, seed):
    rng = np.random.default_rng(seed)
    spec = random_asf(rng)
    values = {"root": np.c_[rng.normal(size=(9, 3)), rng.uniform(-170, 170, (9, 3))]}
    for b in spec["bones"]:
        values[b["name"]] = rng.uniform(-170, 170, (9, len(b["dof"])))
    m = read_asf_amc(write(tmp_path, "r.asf", asf_text(spec)), write(tmp_path, "r.amc", amc_text(spec, values)))
    m.fps = 60
    write_asf(m.skeleton, tmp_path / "w.asf")
    write_amc(m, tmp_path / "w.amc")
    back = read_asf_amc(tmp_path / "w.asf", tmp_path / "w.amc")
    assert back.fps == 60  # noted in a comment by our writer
    assert_same_motion(m, back)


def test_round_trip_keeps_limits_and_units(tmp_path):
    m = small(tmp_path)
    m.skeleton.meta["asf_units"]["length"] = 0.45
    write_asf_amc(m, tmp_path / "w.asf", tmp_path / "w.amc")
    back = read_asf_amc(tmp_path / "w.asf", tmp_path / "w.amc")
    assert back.skeleton.limits == m.skeleton.limits
    assert back.skeleton.meta["asf_units"]["length"] == 0.45
    assert_same_motion(m, back)


def test_writers_refuse_a_skeleton_asf_cannot_hold(tmp_path):
    m = synthetic.walk(5)
    assert "does not start at the end" in asf_layout_problem(m.skeleton)
    with pytest.raises(ValueError, match="to_asf_layout"):
        write_asf(m.skeleton, tmp_path / "x.asf")
    with pytest.raises(ValueError, match="to_asf_layout"):
        write_amc(m, tmp_path / "x.amc")


# --- layout conversions -------------------------------------------------------------------


def test_to_asf_layout_bridges_offsets_and_keeps_positions():
    m = synthetic.walk(30)
    shaped = to_asf_layout(m)
    sk = shaped.skeleton
    assert asf_layout_problem(sk) is None
    assert sk.names[0] == "root" and "LeftUpLeg_link" in sk.names and "Spine_link" in sk.names
    # Hips (a root, no length) has three children away from it, Chest's shoulders miss its end
    assert sk.n_joints == m.skeleton.n_joints + 5
    idx = [0] + [sk.index(n) for n in m.skeleton.names[1:]]
    pa, ea = all_positions(m)
    pb, eb = all_positions(shaped)
    assert np.allclose(pb[:, idx], pa) and np.allclose(eb, ea)
    links = [sk.index(n) for n in sk.names if n.endswith("_link")]
    assert all(sk.channels[j] == () for j in links)


def test_to_asf_layout_handles_odd_names_extra_end_sites_and_position_channels():
    m = synthetic.walk(10)
    sk = m.skeleton
    sk.names = ("Hips", "Spine 1", "Chest", "root", *sk.names[4:])
    sk.end_site_parents = np.r_[sk.end_site_parents, sk.index("Chest"), sk.index("LeftHand")]
    sk.end_site_offsets = np.r_[sk.end_site_offsets, [[0, 0.3, 0], [0, 0.05, 0.05]]]
    arm = sk.index("LeftArm")
    sk.channels = sk.channels[:arm] + (("Xposition", "Zrotation", "Yrotation"),) + sk.channels[arm + 1 :]
    m.translations[:, arm, 0] += np.linspace(0, 0.1, 10)
    shaped = to_asf_layout(m)
    assert asf_layout_problem(shaped.skeleton) is None
    # names ASF cannot hold are percent-escaped, reversibly (core.io.names)
    assert {"Spine%201", "%72oot", "Chest_end", "LeftHand_end", "LeftHand_end_2"} <= set(shaped.skeleton.names)
    pa, ea = all_positions(m)
    pb, eb = all_positions(shaped)
    assert np.allclose(np.sort(eb.reshape(-1)), np.sort(ea.reshape(-1)))


def test_to_asf_layout_needs_one_root():
    sk = synthetic.humanoid()
    two = type(sk)(("a", "b"), [-1, -1], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="one root"):
        to_asf_layout(Motion.rest(two, 2))


def test_to_bvh_layout_bakes_rest_rotations():
    m = synthetic.walk(20)
    rng = np.random.default_rng(1)
    m.skeleton.rest_rotations = quat.normalize(rng.normal(size=(m.skeleton.n_joints, 4)))
    m.skeleton.limits = tuple(((-1.0, 1.0),) * len(c) for c in m.skeleton.channels)
    baked = to_bvh_layout(m)
    assert np.allclose(baked.skeleton.rest_rotations, [1, 0, 0, 0])
    assert all(len([c for c in ch if "rotation" in c]) == 3 for ch in baked.skeleton.channels)
    assert baked.skeleton.limits == (None,) * m.skeleton.n_joints
    pa, ea = all_positions(m)
    pb, eb = all_positions(baked)
    assert np.allclose(pa, pb) and np.allclose(ea, eb)


def test_save_and_load_through_every_format(tmp_path):
    m = small(tmp_path)
    for name in ("a.bvh", "b.amc"):
        written = save_motion(m, tmp_path / name)
        assert all(p.exists() for p in written)
        back = load_motion(tmp_path / name, fps=m.fps)
        assert np.allclose(back.world_positions(), m.world_positions())
    with pytest.raises(ValueError, match="only a skeleton"):
        load_motion(tmp_path / "b.asf")
    with pytest.raises(ValueError, match="unknown motion format"):
        save_motion(m, tmp_path / "x.fbx")


def test_find_asf_rules(tmp_path):
    (tmp_path / "a").mkdir()
    amc = write(tmp_path / "a", "07_02.amc", "")
    write(tmp_path / "a", "other.asf", "")
    assert find_asf(amc).name == "other.asf"  # the only one
    write(tmp_path / "a", "07.asf", "")
    assert find_asf(amc).name == "07.asf"  # name prefix
    write(tmp_path / "a", "07_02.asf", "")
    assert find_asf(amc).name == "07_02.asf"  # same name
    (tmp_path / "b").mkdir()
    amc = write(tmp_path / "b", "x.amc", "")
    write(tmp_path / "b", "p.asf", "")
    write(tmp_path / "b", "q.asf", "")
    with pytest.raises(FileNotFoundError, match="p.asf, q.asf"):
        find_asf(amc)


# --- error reports ------------------------------------------------------------------------


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


ASF_BAD = [
    ("angle deg", "angle grad", 7, "unknown angle unit 'grad'"),
    ("mass 1.0", "mass heavy", 5, "expected a number"),
    ("mass 1.0", "mass -2", 5, "must be positive"),
    ("mass 1.0", "time 30", 5, "unknown unit 'time'"),
    ("mass 1.0", "mass", 5, "expected 'mass' and one value, found 0"),
    ("mass 1.0", "9" * 5000 + " mass 1.0", 5, "(5000 characters) and one value, found 2"),  # a long token shortened
    ("dof rx\n", "dof rx rw\n", 22, "unknown dof 'rw'"),
    ("dof rx\n", "dof rx l\n", 22, "'l' (bone stretch) is not supported"),
    ("dof rx\n", "dof rx rx\n", 22, "repeated"),
    ("limits (-10.0 170.0)", "limits (-10.0)", 23, "expected 1 (min max) pairs"),
    ("limits (-10.0 170.0)", "limits (170.0 -10.0)", 23, "above maximum"),
    ("direction 1 0 0\n     length 2", "direction 1 0\n     length 2", 19, "expected 3 numbers"),
    ("length 3", "length three", 29, "expected a number"),
    ("length 3", "length nan", 29, "not finite"),
    ("axis 0 0 90 XYZ", "axis 0 0 90 XYY", 21, "permutation of XYZ"),
    ("axis 0 0 90 XYZ", "axis 0 0 XYZ", 21, "three angles"),
    ("order TX TY TZ RX RY RZ", "order TX TY TZ RX RY RQ", 11, "unknown dof 'RQ'"),
    ("    root upper", "    root upper elbow", 37, "unknown bone 'elbow'"),
    ("    upper lower", "    upper lower\n    root lower", 39, "second parent"),
    ("    upper lower", "    root", 38, "names a parent"),
    ("name lower", "name upper", 27, "used twice"),
    ("name lower", "name Root", 27, "reserved for the root"),
    ("  begin\n     id 2", "  begun\n     id 2", 25, "expected 'begin'"),
    (":version 1.10", "version 1.10", 2, "expected a ':keyword' section"),
    (":root", "root", 39, "no :root section"),
]


@pytest.mark.parametrize(("old", "new", "line", "words"), ASF_BAD)
def test_malformed_asf_names_file_line_and_problem(tmp_path, old, new, line, words):
    path = write(tmp_path, "bad.asf", SMALL_ASF.replace(old, new, 1))
    with pytest.raises(MocapFormatError) as info:
        read_asf(path)
    err = info.value
    assert err.path == str(path) and words in err.problem and str(path) in str(err)
    assert err.line == line


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 1, "empty"),
        (SMALL_ASF.split(":hierarchy")[0], 34, "no :hierarchy"),
        (SMALL_ASF.replace("     length 2\n", ""), 16, "has no 'length'"),
        (SMALL_ASF.replace("    limits (-10.0 170.0)\n  end\n", "    limits (-10.0 170.0)\n"), 24, "no 'end'"),
        (SMALL_ASF.replace("    upper lower\n", ""), 25, "'lower' is not connected"),
        (SMALL_ASF[: SMALL_ASF.index("    dof rz ry")], 30, "file ends inside"),
        (SMALL_ASF.replace("  order TX TY TZ RX RY RZ\n", ""), 10, "no 'order'"),
    ],
)
def test_structural_asf_errors(tmp_path, text, line, words):
    path = write(tmp_path, "bad.asf", text)
    with pytest.raises(MocapFormatError) as info:
        read_asf(path)
    assert words in info.value.problem and info.value.line == line


AMC_BAD = [
    ("lower 0 0", "elbow 0 0", 7, "'elbow' is not in the skeleton"),
    ("upper 90", "upper 90 1", 10, "needs 1 values"),
    ("upper 90", "upper ninety", 10, "'ninety' for bone 'upper' is not a number"),
    ("upper 90", "upper nan", 10, "not finite"),
    ("\n2\n", "\n3\n", 8, "frame number 3 follows frame 1"),
    ("lower 0 0\n", "lower 0 0\nlower 0 0\n", 8, "appears twice in frame 1"),
    (":DEGREES\n1", ":DEGREES\nupper 1\n1", 4, "before the first frame number"),
    ("lower 90 0", "lower 90 0\n:RADIANS", 12, "after the first frame"),
    ("upper 0\n", "upper 0\nrfoot 1 2\n", 7, "'rfoot' is not in the skeleton"),
]


@pytest.mark.parametrize(("old", "new", "line", "words"), AMC_BAD)
def test_malformed_amc_names_file_line_and_problem(tmp_path, old, new, line, words):
    skeleton = read_asf(write(tmp_path, "s.asf", SMALL_ASF))
    path = write(tmp_path, "bad.amc", SMALL_AMC.replace(old, new, 1))
    with pytest.raises(MocapFormatError) as info:
        read_amc(path, skeleton)
    err = info.value
    assert err.path == str(path) and words in err.problem and err.line == line


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (SMALL_AMC.rsplit("\n", 2)[0] + "\n", 8, "frame 2 has no values for bone 'lower'"),
        (":FULLY-SPECIFIED\n", 1, "no frames"),
        ("", 1, "no frames"),
    ],
)
def test_truncated_amc(tmp_path, text, line, words):
    skeleton = read_asf(write(tmp_path, "s.asf", SMALL_ASF))
    with pytest.raises(MocapFormatError) as info:
        read_amc(write(tmp_path, "bad.amc", text), skeleton)
    assert words in info.value.problem and info.value.line == line


def test_missing_files_are_format_errors(tmp_path):
    with pytest.raises(MocapFormatError, match="cannot read"):
        read_asf(tmp_path / "nope.asf")
    with pytest.raises(MocapFormatError, match="cannot read"):
        read_amc(tmp_path / "nope.amc", small(tmp_path).skeleton)


# --- the CMU captures ---------------------------------------------------------------------

CGSPEED_TO_ASF = {
    "Hips": "root",
    "LHipJoint": "lhipjoint",
    "LeftUpLeg": "lfemur",
    "LeftLeg": "ltibia",
    "LeftFoot": "lfoot",
    "LeftToeBase": "ltoes",
    "RHipJoint": "rhipjoint",
    "RightUpLeg": "rfemur",
    "RightLeg": "rtibia",
    "RightFoot": "rfoot",
    "RightToeBase": "rtoes",
    "LowerBack": "lowerback",
    "Spine": "upperback",
    "Spine1": "thorax",
    "Neck": "lowerneck",
    "Neck1": "upperneck",
    "Head": "head",
    "LeftShoulder": "lclavicle",
    "LeftArm": "lhumerus",
    "LeftForeArm": "lradius",
    "LeftHand": "lwrist",
    "LeftFingerBase": "lhand",
    "LFingers": "lfingers",
    "LThumb": "lthumb",
    "RightShoulder": "rclavicle",
    "RightArm": "rhumerus",
    "RightForeArm": "rradius",
    "RightHand": "rwrist",
    "RightFingerBase": "rhand",
    "RFingers": "rfingers",
    "RThumb": "rthumb",
}


@pytest.fixture(scope="module")
def cmu_01_01():
    return read_asf_amc(shared_file("cmu_asf_amc/01.asf"), shared_file("cmu_asf_amc/01_01.amc"))


@pytest.fixture(scope="module")
def cgspeed_01_01():
    return read_bvh(shared_file("cmu_bvh_cgspeed/01_01.bvh"))


def test_cmu_asf_amc_reads(cmu_01_01):
    m = cmu_01_01
    sk = m.skeleton
    assert m.n_frames == 2751 and m.fps == 120 and sk.n_joints == 31 and len(sk.end_site_parents) == 7
    assert sk.meta["asf_units"] == {"mass": 1.0, "length": 0.45, "angle": "deg"}
    assert sum(1 for c in sk.channels[1:] if c) == 28
    femur = sk.index("lfemur")
    assert sk.limits[femur] == ((-60.0, 70.0), (-70.0, 70.0), (-160.0, 20.0))  # rz, ry, rx channels
    assert np.allclose(m.translations[0, 0], [9.37216, 17.8693, -17.3198])


def test_cmu_asf_amc_agrees_with_the_cgspeed_bvh_of_the_same_take(cmu_01_01, cgspeed_01_01):
    """World positions of all 31 joints and 7 End Sites agree within 2e-4 units (body size
    ≈ 26, so < 1e-5 of it) once the two known differences of the cgspeed conversion are
    applied: its frame 0 is an added T-pose (dropped here), and it puts the children of
    ``thorax`` (neck, clavicles) and of ``lwrist``/``rwrist`` (hand, thumb) at their
    parent's START, i.e. drops the thorax and wrist bone lengths (its OFFSETs are 0 0 0
    there). Same units (ASF file units, no 0.45 scale) and axes: no scale or rotation fit
    is needed. The residual (measured 9.2e-5) is the BVH's 4-decimal rounding of angles in
    degrees and of positions. Without the shortening, the upper body is off by exactly the
    thorax length, 2.065 units, at every frame.
    """
    bvh = cgspeed_01_01.frames(slice(1, None))
    asf_names = [CGSPEED_TO_ASF[n] for n in bvh.skeleton.names]
    sk = cmu_01_01.skeleton
    idx = [sk.index(n) for n in asf_names]
    full = np.linalg.norm(cmu_01_01.world_positions()[:, idx] - bvh.world_positions(), axis=-1)
    upper = [asf_names.index(n) for n in ("lowerneck", "head", "lhumerus", "rwrist")]
    assert np.allclose(full[:, upper], 2.06488, atol=1e-4)

    short = read_asf(shared_file("cmu_asf_amc/01.asf"))
    for child in ("lowerneck", "lclavicle", "rclavicle", "lhand", "lthumb", "rhand", "rthumb"):
        short.rest_translations[short.index(child)] = 0.0
    shortened = read_amc(shared_file("cmu_asf_amc/01_01.amc"), short)
    pa, ea = all_positions(shortened)
    pb, eb = all_positions(bvh)
    assert np.abs(pa[:, idx] - pb).max() < 2e-4
    assert np.abs(ea - eb).max() < 2e-4
    assert 2e-4 < 1e-5 * bvh.skeleton.size()


def test_cmu_asf_amc_to_bvh_gives_the_cgspeed_rotations(tmp_path, cmu_01_01, cgspeed_01_01):
    """Baking the bone axes reproduces the cgspeed BVH's local rotations (within its rounding)."""
    bvh = cgspeed_01_01.frames(slice(1, None))
    baked = to_bvh_layout(cmu_01_01)
    idx = [baked.skeleton.index(CGSPEED_TO_ASF[n]) for n in bvh.skeleton.names]
    dot = np.abs(np.sum(baked.rotations[:, idx] * bvh.rotations, -1))
    assert np.degrees(2 * np.arccos(np.clip(dot, 0, 1))).max() < 2e-3
    assert baked.skeleton.channels[baked.skeleton.index("lfemur")] == ("Zrotation", "Yrotation", "Xrotation")


@pytest.mark.parametrize("take", ["01_01", "01_14"])
def test_cmu_round_trips(tmp_path, take):
    """ASF/AMC → ASF/AMC, → BVH → ASF/AMC: the same motion, positions within 1e-6 units."""
    m = read_asf_amc(shared_file("cmu_asf_amc/01.asf"), shared_file(f"cmu_asf_amc/{take}.amc"))
    write_asf_amc(m, tmp_path / "a.asf", tmp_path / "a.amc")
    back = read_asf_amc(tmp_path / "a.asf", tmp_path / "a.amc")
    assert_same_motion(m, back)
    assert back.skeleton.limits == m.skeleton.limits
    via = asf_amc_to_bvh(tmp_path / "a.asf", tmp_path / "a.amc", tmp_path / "a.bvh")
    bvh = read_bvh(tmp_path / "a.bvh")
    assert np.abs(bvh.world_positions() - m.world_positions()).max() < 1e-6
    assert np.abs(via.world_positions() - bvh.world_positions()).max() < 1e-6
    again = bvh_to_asf_amc(tmp_path / "a.bvh", tmp_path / "b.asf", tmp_path / "b.amc")
    final = read_asf_amc(tmp_path / "b.asf", tmp_path / "b.amc")
    assert final.skeleton.names == m.skeleton.names and again.skeleton.names == m.skeleton.names
    assert np.abs(final.world_positions() - m.world_positions()).max() < 1e-6


@pytest.mark.parametrize(
    "relative",
    ["cmu_bvh_cgspeed/01_01.bvh", "cmu_bvh_3dsmax/131_03.bvh", "bandai_namco_1/dataset-1_walk_normal_001.bvh"],
)
def test_real_bvh_to_asf_amc_and_back(tmp_path, relative):
    """BVH → ASF/AMC → BVH keeps every joint's and End Site's world position within 1e-4 of
    the body size (measured: < 1e-8 units). Bandai's position channels on every joint become
    ``tx ty tz`` dofs, and its ``Hips``/shoulders/legs, which start away from their parent's
    bone end, hang from added ``_link`` bones."""
    src = read_bvh(shared_file(relative))
    shaped = bvh_to_asf_amc(shared_file(relative), tmp_path / "x.asf", tmp_path / "x.amc")
    amc = read_asf_amc(tmp_path / "x.asf", tmp_path / "x.amc", fps=src.fps)
    asf_amc_to_bvh(tmp_path / "x.asf", tmp_path / "x.amc", tmp_path / "y.bvh")
    back = read_bvh(tmp_path / "y.bvh")
    names = amc.skeleton.names
    idx = [0] + [names.index(n) for n in src.skeleton.names[1:]]
    tol = 1e-4 * src.skeleton.size()
    p0, e0 = all_positions(src)
    for m, joints in ((amc, idx), (back, slice(None))):
        p, e = all_positions(m)
        assert np.abs(p[:, joints] - p0).max() < tol and np.abs(e - e0).max() < tol
    # back in BVH: the added bones are gone and the root has its name again
    assert np.isclose(back.fps, src.fps) and back.skeleton.names == src.skeleton.names != shaped.skeleton.names
    if "bandai" in relative:
        assert "Hips_link" in names and "tx" in channels_to_dofs(amc.skeleton.channels[names.index("Hips")])


def test_an_asf_we_made_gives_its_own_skeleton_back(tmp_path):
    """A target .asf our writer made from a BVH (Bandai's joints start away from their parent's bone end, so
    the writer adds ``_link`` bones) is read as that BVH's skeleton: same names and parents, same rest
    positions (within 1e-6 of the body size); a CMU .asf is read as it is."""
    src = read_bvh(shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh"))
    bvh_to_asf_amc(shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh"), tmp_path / "x.asf", tmp_path / "x.amc")
    assert any(n.endswith("_link") for n in read_asf(tmp_path / "x.asf").names)
    skeleton = load_asf_skeleton(tmp_path / "x.asf")
    assert skeleton.names == src.skeleton.names and list(skeleton.parents) == list(src.skeleton.parents)
    tol = 1e-6 * src.skeleton.size()
    assert np.abs(rest_positions(skeleton) - rest_positions(src.skeleton)).max() < tol
    cmu = shared_file("cmu_asf_amc/01.asf")
    assert load_asf_skeleton(cmu).names == read_asf(cmu).names
