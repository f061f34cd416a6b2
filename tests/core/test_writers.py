"""Hostile input for the writers (issue #14, item 2): names each format can or cannot hold,
deep hierarchies, exact numbers, non-finite values, and refusals that leave no file behind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import quaternion as quat
from core.io import MocapFormatError
from core.io.asf_amc import (
    asf_layout_problem,
    read_amc,
    read_asf,
    read_asf_amc,
    to_asf_layout,
    write_amc,
    write_asf,
    write_asf_amc,
)
from core.io.bvh import read_bvh, to_bvh_layout, write_bvh
from core.io.convert import asf_amc_to_bvh, bvh_to_asf_amc
from core.io.errors import MocapWriteError
from core.io.names import asf_name_problem, bvh_name_problem, escape_asf_name, escape_bvh_name, unescape_name
from core.motion import Motion
from core.skeleton import Skeleton
from tests.conftest import shared_file


def bvh_chain(names: list[str], frames: int = 2) -> str:
    """A BVH chain of joints named ``names`` (the first is the root), one End Site at the tip."""
    lines = ["HIERARCHY"]
    offsets = ["0 0 0.5", "0 0 0", "0 1 0.5"]  # the root's children start at it, as in ASF
    for depth, name in enumerate(names):
        pad = "\t" * depth
        keyword = "ROOT" if depth == 0 else "JOINT"
        channels = (
            "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
            if depth == 0
            else "3 Zrotation Xrotation Yrotation"
        )
        lines += [
            f"{pad}{keyword} {name}",
            pad + "{",
            f"{pad}\tOFFSET {offsets[min(depth, 2)]}",
            f"{pad}\tCHANNELS {channels}",
        ]
    pad = "\t" * len(names)
    lines += [pad + "End Site", pad + "{", pad + "\tOFFSET 0 1 0", pad + "}"]
    lines += ["\t" * d + "}" for d in reversed(range(len(names)))]
    n_channels = 6 + 3 * (len(names) - 1)
    rng = np.random.default_rng(len(names))
    rows = [" ".join(repr(float(x)) for x in rng.uniform(-50, 50, n_channels)) for _ in range(frames)]
    lines += ["MOTION", f"Frames: {frames}", "Frame Time: 0.04", *rows]
    return "\n".join(lines) + "\n"


def asf_chain(names: list[str], axis: str = "0 0 30 XYZ", root_position: str = "0 0 0") -> str:
    """An ASF chain of bones named ``names`` under the root, each with ``rx ry rz``."""
    lines = [":version 1.10", ":name chain", ":units", "  mass 1", "  length 1", "  angle deg", ":root"]
    lines += [
        "  order TX TY TZ RX RY RZ",
        "  axis XYZ",
        f"  position {root_position}",
        "  orientation 0 0 0",
        ":bonedata",
    ]
    for name in names:
        lines += [
            "  begin",
            f"    name {name}",
            "    direction 0 1 0",
            "    length 1",
            f"    axis {axis}",
            "    dof rx ry rz",
            "  end",
        ]
    lines += [":hierarchy", "  begin", f"    root {names[0]}"]
    lines += [f"    {a} {b}" for a, b in zip(names, names[1:])]
    return "\n".join(lines + ["  end", ""])


def amc_chain(names: list[str], frames: int = 2) -> str:
    rng = np.random.default_rng(len(names))
    lines = [":FULLY-SPECIFIED", ":DEGREES"]
    for f in range(frames):
        lines += [str(f + 1), "root " + " ".join(repr(float(x)) for x in rng.uniform(-50, 50, 6))]
        lines += [f"{n} " + " ".join(repr(float(x)) for x in rng.uniform(-50, 50, 3)) for n in names]
    return "\n".join(lines) + "\n"


def put(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_bytes(text.encode("utf-8"))
    return path


def same_positions(a: Motion, b: Motion, atol: float = 1e-6) -> bool:
    return a.n_frames == b.n_frames and np.abs(a.world_positions() - b.world_positions()).max() < atol


# --- names: the rules and the escape --------------------------------------------------------

HOSTILE_NAMES = [
    "",
    " ",
    "a  b",
    " lead",
    "trail ",
    "tab\there",
    "new\nline",
    "cr\rx",
    "nb\u00a0sp",
    "line\u2028sep",
    "{x}",
    "x{",
    "Arm}1",
    "Arm } 1",
    "}",
    "q'uo\"te",
    "ünï©ødé_骨",
    "#hash",
    "(paren)",
    "com,ma",
    "end",
    "END",
    "root",
    "Root",
    ":colon",
    "mixamorig:Hips",
    "100%",
    "a%41",
    "%zz",
    "Bip01 L Thigh",
    "12",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_escapes_are_reversible_and_give_names_the_formats_hold(name):
    if name == "":
        assert bvh_name_problem(name) and asf_name_problem(name)
        with pytest.raises(ValueError, match="empty"):
            escape_asf_name(name)
        return
    for escape, problem in ((escape_bvh_name, bvh_name_problem), (escape_asf_name, asf_name_problem)):
        escaped = escape(name)
        assert unescape_name(escaped) == name
        assert problem(escaped) is None
        if problem(name) is None and "%" not in name:
            assert escaped == name  # names a format holds are never changed


def test_naming_rules_per_format():
    assert bvh_name_problem("Bip01 L Thigh") is None and bvh_name_problem("Arm } 1") is None
    assert bvh_name_problem("q'uo\"te") is None and bvh_name_problem("ünï©ødé_骨") is None
    for bad in ("a  b", " lead", "trail ", "tab\there", "new\nline", "{x}", "Arm}1", "", "nb\u00a0sp"):
        assert bvh_name_problem(bad), bad
    assert asf_name_problem("r{tibia}") is None and asf_name_problem("mixamorig:Hips") is None
    assert asf_name_problem("end", has_children=False) is None and asf_name_problem(":x", has_children=False) is None
    for bad in ("end", "End", ":x", "root", "ROOT", "a b", "#x", "a(b", "a,b", "", "tab\there"):
        assert asf_name_problem(bad), bad
    assert escape_asf_name("Bip01 L Thigh") == "Bip01%20L%20Thigh"
    assert escape_asf_name("End") == "%45nd" and escape_asf_name("root") == "%72oot"
    assert escape_bvh_name("r{tibia}") == "r%7Btibia%7D" and escape_asf_name("a%41") == "a%2541"


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_escape_round_trips_any_text(name):
    for escape, problem in ((escape_bvh_name, bvh_name_problem), (escape_asf_name, asf_name_problem)):
        escaped = escape(name)
        assert problem(escaped) is None and unescape_name(escaped) == name


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_bvh_writer_writes_what_it_can_hold_and_refuses_the_rest_before_writing(tmp_path, name):
    """Every name BVH holds reads back identical; every other one is refused, naming the joint,
    and no file is created."""
    m = read_bvh(put(tmp_path, "src.bvh", bvh_chain(["Hips", "Spine", "Tip"])))
    sk = m.skeleton
    sk.names = ("Hips", name, "Tip") if name not in ("Hips", "Tip") else sk.names
    out = tmp_path / "out.bvh"
    if bvh_name_problem(name) is None:
        write_bvh(m, out)
        back = read_bvh(out)
        assert back.skeleton.names == sk.names and same_positions(back, m)
    else:
        with pytest.raises(MocapWriteError) as info:
            write_bvh(m, out)
        assert info.value.joint == name and repr(name) in str(info.value)
        assert not out.exists()


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_bvh_reader_and_writer_agree_on_names_written_by_hand(tmp_path, name):
    """A name the reader accepts from a file is written back so that it reads the same."""
    text = bvh_chain(["Hips", name, "Tip"])
    try:
        m = read_bvh(put(tmp_path, "src.bvh", text))
    except MocapFormatError:
        assert bvh_name_problem(name) is not None
        return
    write_bvh(m, tmp_path / "out.bvh")
    back = read_bvh(tmp_path / "out.bvh")
    assert back.skeleton.names == m.skeleton.names and same_positions(back, m)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_asf_writers_hold_or_refuse_names_and_to_asf_layout_escapes(tmp_path, name):
    """A bone with children: held verbatim when ASF can, refused by write_asf/write_amc (no
    file) when not; to_asf_layout escapes it reversibly instead."""
    m = read_asf_amc(
        put(tmp_path, "s.asf", asf_chain(["upper", "lower"])), put(tmp_path, "s.amc", amc_chain(["upper", "lower"]))
    )
    m.skeleton.names = ("root", name, "lower") if name != "lower" else m.skeleton.names
    asf, amc = tmp_path / "w.asf", tmp_path / "w.amc"
    if asf_name_problem(name, has_children=True) is None:
        write_asf(m.skeleton, asf)
        write_amc(m, amc)
        back = read_asf_amc(asf, amc)
        assert back.skeleton.names == m.skeleton.names and same_positions(back, m)
        return
    with pytest.raises(MocapWriteError, match="to_asf_layout"):
        write_asf(m.skeleton, asf)
    with pytest.raises(MocapWriteError, match="to_asf_layout"):
        write_amc(m, amc)
    assert not asf.exists() and not amc.exists()
    if name == "":
        with pytest.raises(ValueError, match="cannot be given an ASF name"):
            write_asf_amc(m, asf, amc)
        assert not asf.exists() and not amc.exists()
        return
    written = write_asf_amc(m, asf, amc)
    back = read_asf_amc(asf, amc)
    assert back.skeleton.names == written.skeleton.names == ("root", escape_asf_name(name), "lower")
    assert unescape_name(back.skeleton.names[1]) == name and same_positions(back, m)


# --- the findings -------------------------------------------------------------------------


def test_bvh_joint_named_end_with_a_child_converts_to_an_asf_that_reads_back(tmp_path):
    names = ["Hips", "End", "Hand"]
    src = read_bvh(put(tmp_path, "e.bvh", bvh_chain(names)))
    shaped = bvh_to_asf_amc(tmp_path / "e.bvh", tmp_path / "e.asf", tmp_path / "e.amc")
    back = read_asf_amc(tmp_path / "e.asf", tmp_path / "e.amc", fps=src.fps)
    assert back.skeleton.names == shaped.skeleton.names == ("root", "%45nd", "Hand")
    assert [unescape_name(n) for n in back.skeleton.names[1:]] == names[1:]
    assert same_positions(back, src)
    # write_asf itself refuses such a name, and a leaf called "end" (which ASF holds) is kept
    sk = back.skeleton
    sk.names = ("root", "end", "Hand")
    with pytest.raises(MocapWriteError, match="'end'"):
        write_asf(sk, tmp_path / "x.asf")
    assert not (tmp_path / "x.asf").exists()
    leaf = read_asf_amc(
        put(tmp_path, "l.asf", asf_chain(["a", "end"])), put(tmp_path, "l.amc", amc_chain(["a", "end"]))
    )
    write_asf_amc(leaf, tmp_path / "l2.asf", tmp_path / "l2.amc")
    assert read_asf(tmp_path / "l2.asf").names == ("root", "a", "end")


@pytest.mark.parametrize("name", ["Arm}1", "Arm{1", "{x}"])
def test_braces_in_bvh_names_convert_to_asf_amc(tmp_path, name):
    """``JOINT Arm}1`` reads as ``Arm } 1``; write_amc used to paste names into a format template."""
    text = bvh_chain(["Hips", name, "Tip"])
    try:
        src = read_bvh(put(tmp_path, "b.bvh", text))
    except MocapFormatError:
        assert "{" in name  # "{" ends the name: the reader refuses what follows
        return
    assert src.skeleton.names[1] == "Arm } 1"
    shaped = bvh_to_asf_amc(tmp_path / "b.bvh", tmp_path / "b.asf", tmp_path / "b.amc")
    back = read_asf_amc(tmp_path / "b.asf", tmp_path / "b.amc", fps=src.fps)
    assert back.skeleton.names == shaped.skeleton.names and unescape_name(back.skeleton.names[1]) == "Arm } 1"
    assert same_positions(back, src)


def test_braces_in_asf_names_round_trip_and_are_refused_by_bvh(tmp_path):
    names = ["r{tibia}", "x}", "{"]
    m = read_asf_amc(put(tmp_path, "s.asf", asf_chain(names)), put(tmp_path, "s.amc", amc_chain(names)))
    write_asf_amc(m, tmp_path / "w.asf", tmp_path / "w.amc")
    back = read_asf_amc(tmp_path / "w.asf", tmp_path / "w.amc")
    assert back.skeleton.names == ("root", *names) and same_positions(back, m)
    with pytest.raises(MocapWriteError, match="r\\{tibia\\}"):
        asf_amc_to_bvh(tmp_path / "w.asf", tmp_path / "w.amc", tmp_path / "w.bvh")
    assert not (tmp_path / "w.bvh").exists()


def test_bvh_900_deep_reads_writes_and_reads_back(tmp_path):
    """Writing used to recurse once per joint: a hierarchy the reader took (990 deep in plain
    Python, a little less under pytest's own stack) raised RecursionError."""
    names = ["Hips"] + [f"j{i}" for i in range(899)]
    src = read_bvh(put(tmp_path, "deep.bvh", bvh_chain(names, frames=1)))
    write_bvh(src, tmp_path / "out.bvh")
    back = read_bvh(tmp_path / "out.bvh")
    assert back.skeleton.names == src.skeleton.names
    assert np.array_equal(back.skeleton.parents, src.skeleton.parents) and same_positions(back, src, 1e-6)


def test_5000_deep_asf_chain_converts_to_bvh_and_back(tmp_path):
    """The ASF reader takes a 5,000-bone chain; converting it to BVH used to overflow the stack.
    (The BVH reader refuses that depth, so the BVH is checked as text.)"""
    names = [f"b{i}" for i in range(5000)]
    src = read_asf_amc(
        put(tmp_path, "c.asf", asf_chain(names, axis="0 0 0 XYZ")), put(tmp_path, "c.amc", amc_chain(names, 1))
    )
    write_bvh(to_bvh_layout(src), tmp_path / "c.bvh")  # what asf_amc_to_bvh does
    lines = (tmp_path / "c.bvh").read_text().splitlines()
    assert sum(line.lstrip().startswith("JOINT ") for line in lines) == 5000
    assert lines[5 + 4 * 4999] == "\t" * 64 + "JOINT b4999"  # nested in order, indented up to 64 tabs
    write_asf_amc(src, tmp_path / "d.asf", tmp_path / "d.amc")
    back = read_asf_amc(tmp_path / "d.asf", tmp_path / "d.amc")
    assert back.skeleton.names == src.skeleton.names
    assert np.abs(back.translations - src.translations).max() < 1e-9


def test_write_bvh_5000_deep_writes_iteratively(tmp_path):
    n = 5000
    sk = Skeleton([f"j{i}" for i in range(n)], np.arange(n) - 1, np.tile([0.0, 1.0, 0.0], (n, 1)))
    write_bvh(Motion.rest(sk, 2, 30.0), tmp_path / "deep.bvh")
    lines = (tmp_path / "deep.bvh").read_text().splitlines()
    assert (
        lines[1] == "ROOT j0"
        and lines[5].strip() == "JOINT j1"
        and lines[4 * (n - 1) + 1] == "\t" * 64 + f"JOINT j{n - 1}"
    )
    text = "\n".join(lines)
    assert text.count("{") == text.count("}") == n  # every joint closed
    assert (tmp_path / "deep.bvh").stat().st_size < 4_000_000  # indentation capped (uncapped: 60 MB)


def test_large_root_offset_comes_back_exactly(tmp_path):
    """The AMC's root translation is relative to the ASF's position: 10 digits lost 0.0235."""
    names = ["upper", "lower"]
    m = read_asf_amc(
        put(tmp_path, "s.asf", asf_chain(names, root_position="123456789.123 -98765432.1 5")),
        put(tmp_path, "s.amc", amc_chain(names)),
    )
    m.skeleton.rest_translations[2] = [1e-9, 123.456789012345, 3.0]
    m.translations[:, 2] = m.skeleton.rest_translations[2]
    m.skeleton.rest_translations[1] = 0.0
    m.translations[:, 0] = [123456789.123, -98765432.1, 5.0] + np.array([[0.5, 0.25, 0.125], [1e-7, 2e-7, 3e-7]])
    write_asf_amc(m, tmp_path / "w.asf", tmp_path / "w.amc")
    back = read_asf_amc(tmp_path / "w.asf", tmp_path / "w.amc")
    assert np.abs(back.world_positions() - m.world_positions()).max() < 1e-6
    assert np.array_equal(back.skeleton.rest_translations[0], m.skeleton.rest_translations[0])
    write_bvh(m, tmp_path / "w.bvh")
    assert np.abs(read_bvh(tmp_path / "w.bvh").world_positions() - m.world_positions()).max() < 1e-6


def small_motion() -> Motion:
    sk = Skeleton(["root", "a", "b"], [-1, 0, 1], [[0.0, 0, 0], [0, 0, 0], [0, 2, 0]])
    sk.end_site_parents, sk.end_site_offsets = np.array([2]), np.array([[0.0, 1.0, 0.0]])
    return Motion.rest(sk, 3, 30.0)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda m: m.skeleton.rest_translations.__setitem__((2, 1), 1e308 * 10),
        lambda m: m.skeleton.rest_translations.__setitem__((2, slice(None)), [1e308, 1e308, 0.0]),
        lambda m: m.skeleton.end_site_offsets.__setitem__((0, 0), np.nan),
        lambda m: m.rotations.__setitem__((1, 1), [np.nan, 0, 0, 0]),
        lambda m: m.translations.__setitem__((1, 0, 2), np.inf),
        lambda m: setattr(m, "fps", 0.0),
        lambda m: setattr(m, "fps", np.inf),
        lambda m: m.skeleton.meta.__setitem__("asf_units", {"length": np.inf}),
    ],
    ids=[
        "offset-inf",
        "length-overflow",
        "endsite-nan",
        "rotation-nan",
        "translation-inf",
        "fps-0",
        "fps-inf",
        "units-inf",
    ],
)
def test_non_finite_values_are_refused_before_anything_is_written(tmp_path, spoil):
    m = small_motion()
    spoil(m)
    bvh, asf, amc = tmp_path / "x.bvh", tmp_path / "x.asf", tmp_path / "x.amc"
    refusals = 0
    for write in (lambda: write_bvh(m, bvh), lambda: write_asf_amc(m, asf, amc)):
        try:
            write()
        except MocapWriteError as err:
            refusals += 1
            assert "finite" in str(err) or "overflow" in str(err)
    assert refusals >= 1
    # whatever was written reads back; what was refused left no file
    for path in (bvh, amc):
        if path.exists():
            back = read_bvh(path) if path.suffix == ".bvh" else read_amc(path, read_asf(asf))
            assert np.isfinite(back.world_positions()).all()
    assert asf.exists() == amc.exists()


def test_length_overflow_is_refused_by_write_asf(tmp_path):
    m = small_motion()
    m.skeleton.rest_translations[2] = [1e308, 1e308, 0.0]
    m.skeleton.end_site_offsets[0] = [1e308, 1e308, 0.0]
    m.translations[:] = m.skeleton.rest_translations
    assert asf_layout_problem(m.skeleton) is None
    with pytest.raises(MocapWriteError, match="not finite"):  # the offset beyond the readers' bound, or the overflow
        write_asf(m.skeleton, tmp_path / "x.asf")
    assert not (tmp_path / "x.asf").exists()


def test_write_asf_amc_refusing_the_amc_writes_no_asf(tmp_path):
    m = small_motion()
    m.rotations[1, 1] = [np.nan, 0, 0, 0]
    with pytest.raises(MocapWriteError, match="'a'"):
        write_asf_amc(m, tmp_path / "x.asf", tmp_path / "x.amc")
    assert list(tmp_path.iterdir()) == []


def test_to_asf_layout_never_gives_an_added_bone_a_joints_name():
    sk = Skeleton(["Hips", "Spine", "Spine_link", "Arm"], [-1, 0, 0, 1], [[0, 0, 0], [0, 1, 0], [0, 1, 0], [1, 1, 0]])
    shaped = to_asf_layout(Motion.rest(sk, 2))
    names = shaped.skeleton.names
    assert {"Spine", "Spine_link", "Arm"} <= set(names) and "Spine_link_2" in names
    assert asf_layout_problem(shaped.skeleton) is None


def test_numbers_round_trip_exactly(tmp_path):
    m = small_motion()
    rng = np.random.default_rng(0)
    m.translations[:, 0] = rng.normal(size=(3, 3)) * 1e6
    m.rotations[:] = quat.normalize(rng.normal(size=(3, 3, 4)))
    m.fps = 1 / 0.0083333333333333332
    write_bvh(m, tmp_path / "x.bvh", precision=None)
    back = read_bvh(tmp_path / "x.bvh")
    assert back.fps == m.fps and np.array_equal(back.translations[:, 0], m.translations[:, 0])
    write_asf_amc(m, tmp_path / "x.asf", tmp_path / "x.amc")
    assert read_asf_amc(tmp_path / "x.asf", tmp_path / "x.amc").fps == m.fps


def test_several_roots_are_refused_by_the_asf_conversion_before_writing(tmp_path):
    one = bvh_chain(["Hips", "Spine"]).split("MOTION")[0]
    second = one.replace("HIERARCHY\n", "").replace("Hips", "Other").replace("Spine", "Arm")
    frames = " ".join(["0"] * 18)
    put(tmp_path, "two.bvh", one + second + f"MOTION\nFrames: 1\nFrame Time: 0.04\n{frames}\n")
    assert read_bvh(tmp_path / "two.bvh").skeleton.names == ("Hips", "Spine", "Other", "Arm")
    with pytest.raises(ValueError, match="one root"):
        bvh_to_asf_amc(tmp_path / "two.bvh", tmp_path / "two.asf", tmp_path / "two.amc")
    assert not (tmp_path / "two.asf").exists() and not (tmp_path / "two.amc").exists()


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_asf_reader_and_writer_agree_on_names_written_by_hand(tmp_path, name):
    """A bone name the ASF reader accepts (here heading a :hierarchy line) is written back so
    that it reads the same; to BVH it goes verbatim or is refused, naming the bone."""
    names = [name, "lower"] if name != "lower" else ["upper", "lower"]
    try:
        src = read_asf_amc(put(tmp_path, "s.asf", asf_chain(names)), put(tmp_path, "s.amc", amc_chain(names)))
    except MocapFormatError:
        assert asf_name_problem(name, has_children=True) is not None
        return
    write_asf_amc(src, tmp_path / "w.asf", tmp_path / "w.amc")
    back = read_asf_amc(tmp_path / "w.asf", tmp_path / "w.amc")
    assert back.skeleton.names == src.skeleton.names and same_positions(back, src)
    if bvh_name_problem(src.skeleton.names[1]) is None:  # " lead" reads as "lead"
        asf_amc_to_bvh(tmp_path / "w.asf", tmp_path / "w.amc", tmp_path / "w.bvh")
        assert read_bvh(tmp_path / "w.bvh").skeleton.names == src.skeleton.names
    else:
        with pytest.raises(MocapWriteError, match="rename it"):
            asf_amc_to_bvh(tmp_path / "w.asf", tmp_path / "w.amc", tmp_path / "w.bvh")
        assert not (tmp_path / "w.bvh").exists()


@pytest.mark.parametrize("relative", ["mixamo/Walk-In-Circle.bvh", "iclone_cc/005_06.bvh"])
def test_real_rigs_through_every_format_pair(tmp_path, relative):
    """Namespaced Mixamo names and the 100-bone CC rig: names kept (the root becomes ``root``
    in ASF and gets its name back in BVH), world positions within 1e-6 in every pair."""
    src = read_bvh(shared_file(relative)).frames(slice(0, 40))
    write_bvh(src, tmp_path / "a.bvh")
    bvh = read_bvh(tmp_path / "a.bvh")
    assert bvh.skeleton.names == src.skeleton.names and same_positions(bvh, src)
    shaped = bvh_to_asf_amc(tmp_path / "a.bvh", tmp_path / "a.asf", tmp_path / "a.amc")
    acclaim = read_asf_amc(tmp_path / "a.asf", tmp_path / "a.amc")
    assert acclaim.skeleton.names == shaped.skeleton.names
    assert set(src.skeleton.names[1:]) <= set(acclaim.skeleton.names)
    index = [0] + [acclaim.skeleton.names.index(n) for n in src.skeleton.names[1:]]
    assert np.abs(acclaim.world_positions()[:, index] - src.world_positions()).max() < 1e-6
    write_asf_amc(acclaim, tmp_path / "b.asf", tmp_path / "b.amc")
    again = read_asf_amc(tmp_path / "b.asf", tmp_path / "b.amc")
    assert again.skeleton.names == acclaim.skeleton.names and same_positions(again, acclaim)
    asf_amc_to_bvh(tmp_path / "b.asf", tmp_path / "b.amc", tmp_path / "c.bvh")
    last = read_bvh(tmp_path / "c.bvh")  # back to BVH: the bones ASF added go, the root's name returns
    assert last.skeleton.names == src.skeleton.names and same_positions(last, src)
