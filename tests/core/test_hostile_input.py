"""Hostile input (issue #14): every reader refuses what it cannot represent with a
MocapFormatError naming file and line, accepts nothing non-finite, stays within a memory
budget backed by the file's content, and has no recursive or quadratic paths."""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from core.io import MocapFormatError
from core.io.asf_amc import read_amc, read_asf
from core.io.bvh import read_bvh
from core.io.reading import MAX_MAGNITUDE, MEMORY_ALLOWANCE, MEMORY_FACTOR
from core.skeleton import rest_positions
from tests.core.hostile import (
    AMC,
    ASF,
    BVH,
    HUGE_DIGITS,
    ODD_BREAKS,
    amc_frames,
    asf_bones,
    bvh_declaring_frames,
    bvh_without_channels,
    deep_bvh,
    editor_line,
)


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def refused(read, path: Path, words: str, line: int | None = None) -> MocapFormatError:
    """Read ``path``; the only acceptable outcome is a MocapFormatError naming it, a line, and ``words``."""
    with pytest.raises(MocapFormatError) as info:
        read(path)
    err = info.value
    assert err.path == str(path) and str(path) in str(err), str(err)
    assert err.line is not None and f"line {err.line}:" in str(err), str(err)
    assert words in err.problem, err.problem
    assert len(err.problem) < 400, "messages shorten long tokens"
    if line is not None:
        assert err.line == line, str(err)
    return err


def line_of(text: str, needle: str) -> int:
    return editor_line(text, text.index(needle))


@pytest.fixture
def skeleton(tmp_path):
    return read_asf(write(tmp_path, "base.asf", ASF))


def amc_reader(skeleton):
    return lambda path: read_amc(path, skeleton)


def assert_finite(motion) -> None:
    assert np.isfinite(motion.translations).all() and np.isfinite(motion.rotations).all()
    assert np.isfinite(motion.fps) and motion.fps > 0 and np.isfinite(1.0 / motion.fps)
    assert np.isfinite(rest_positions(motion.skeleton, include_end_sites=True)).all()
    assert np.isfinite(motion.world_positions()).all()


# --- integers of thousands of digits -------------------------------------------------------


def test_integers_of_thousands_of_digits_are_format_errors(tmp_path, skeleton):
    """int() refuses more than 4,300 digits with a ValueError; the readers never call it on such tokens."""
    text = BVH.replace("CHANNELS 3", "CHANNELS " + HUGE_DIGITS)
    refused(read_bvh, write(tmp_path, "a.bvh", text), "CHANNELS count", line_of(text, "CHANNELS 9"))
    text = BVH.replace("CHANNELS 3", "CHANNELS 7")
    refused(read_bvh, write(tmp_path, "b.bvh", text), "at most 6", line_of(text, "CHANNELS 7"))
    text = BVH.replace("Frames: 2", "Frames: " + HUGE_DIGITS)
    refused(read_bvh, write(tmp_path, "c.bvh", text), "'Frames:'", line_of(text, "Frames:"))
    text = AMC.replace("\n2\n", "\n" + HUGE_DIGITS + "\n")
    err = refused(amc_reader(skeleton), write(tmp_path, "d.amc", text), "frame number", 8)
    assert "(5000 characters)" in err.problem
    text = AMC.replace("\n2\n", "\n" + "1" * 16 + "\n")
    refused(amc_reader(skeleton), write(tmp_path, "e.amc", text), "too large", 8)
    text = ASF.replace("length 2", "length " + HUGE_DIGITS)
    refused(read_asf, write(tmp_path, "f.asf", text), "not finite", line_of(text, "length 9"))


# --- frame times whose rate is not finite ---------------------------------------------------


@pytest.mark.parametrize("frame_time", ["1e-310", "1e-320", "5e-324", "1e-7", "1e7"])
def test_frame_times_whose_rate_is_not_finite_or_sane_are_refused(tmp_path, frame_time):
    text = BVH.replace("Frame Time: 0.04", f"Frame Time: {frame_time}")
    refused(read_bvh, write(tmp_path, "a.bvh", text), "is outside", line_of(text, "Frame Time"))


def test_extreme_but_sane_frame_times_are_read(tmp_path):
    for frame_time, fps in (("1e-6", 1e6), ("1e6", 1e-6)):
        motion = read_bvh(write(tmp_path, "a.bvh", BVH.replace("Frame Time: 0.04", f"Frame Time: {frame_time}")))
        assert np.isclose(motion.fps, fps)


@pytest.mark.parametrize("fps", ["1e-320", "5e-324", "1e7", "1e-7", "0", "-5", "nan", "inf", "١٢٠"])
def test_amc_frame_rate_note_must_give_a_sane_rate(tmp_path, skeleton, fps):
    text = f"# Mocap Workbench fps {fps}\n" + AMC
    refused(amc_reader(skeleton), write(tmp_path, "a.amc", text), "", 1)


# --- memory bounded by what the content backs -----------------------------------------------


def peak_while(read, path):
    tracemalloc.start()
    try:
        try:
            result = read(path)
        except MocapFormatError as err:
            result = err
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("n_joints", [1000, 5000])
def test_joints_without_channels_cannot_make_a_small_file_huge(tmp_path, n_joints):
    """1,000 ``CHANNELS 0`` joints × 20,000 frames: a 79 KB file took 1.14 GB; 5,000: MemoryError."""
    path = write(tmp_path, "a.bvh", bvh_without_channels(n_joints, 20000))
    size = path.stat().st_size
    err, peak = peak_while(read_bvh, path)
    assert isinstance(err, MocapFormatError) and "would need" in err.problem and "MiB" in err.problem
    assert err.line == 5 * n_joints + 8  # the 'Frames:' line
    assert peak < 64 * size + 8 * 2**20, f"peak {peak / 2**20:.1f} MiB for a {size / 1e3:.0f} KB file"


def test_acclaim_joints_without_dofs_cannot_make_a_small_pair_huge(tmp_path):
    """ASF 65 KB with 1,000 bones without dof + AMC 249 KB of 20,000 frames took 1.14 GB."""
    skeleton = read_asf(write(tmp_path, "a.asf", asf_bones(1000, chain=False)))
    path = write(tmp_path, "a.amc", amc_frames(20000))
    err, peak = peak_while(lambda p: read_amc(p, skeleton), path)
    assert isinstance(err, MocapFormatError) and "would need" in err.problem, err
    assert err.line == path.read_text().count("\n") - 1  # the last frame number
    assert peak < 64 * path.stat().st_size + 8 * 2**20


def test_motions_within_the_budget_are_read(tmp_path):
    path = write(tmp_path, "a.bvh", bvh_without_channels(100, 1000))
    motion = read_bvh(path)
    assert motion.skeleton.n_joints == 101 and motion.n_frames == 1000
    assert motion.n_frames * motion.skeleton.n_joints * 56 < MEMORY_FACTOR * path.stat().st_size + MEMORY_ALLOWANCE


@pytest.mark.parametrize("declared", ["1000000000", "1" + "0" * 30, "1e12"])
def test_declared_frame_counts_the_file_does_not_back_are_refused_before_allocating(tmp_path, declared):
    path = write(tmp_path, "a.bvh", bvh_declaring_frames(declared))
    err, peak = peak_while(read_bvh, path)
    assert isinstance(err, MocapFormatError) and peak < 2**20
    assert "truncated" in err.problem or "beyond" in err.problem


# --- nothing non-finite, no overflow to inf ----------------------------------------------------


BIG = [
    ("bvh", BVH.replace("OFFSET 0 10 0", "OFFSET 0 1e308 0").replace("OFFSET 0 5 0", "OFFSET 0 1e308 0"), "1e308"),
    ("bvh", BVH.replace("OFFSET 2 -1 0", "OFFSET 2 -1 1e13"), "1e13"),
    ("bvh", BVH.replace("1 2 3 10", "1e308 2 3 10"), "1e308"),
    ("bvh", BVH.replace("1 2 3 10", "1 2 1e999 10"), "1e999"),
    ("asf", ASF.replace("length 2", "length 1e308"), "1e308"),
    ("asf", ASF.replace("position 0 0 0", "position 0 1e300 0"), "1e300"),
    ("asf", ASF.replace("direction 1 0 0", "direction 1e309 0 0"), "1e309"),
    ("asf", ASF.replace("(-1 1)", "(-1 1e300)"), "1e300"),
    ("asf", ASF.replace("mass 1.0", "mass 1e-300"), "1e-300"),
    ("amc", AMC.replace("lower 90 0.5", "lower 90 1e308"), "1e308"),
    ("amc", AMC.replace("root 1 2 3", "root 1e13 2 3"), "1e13"),
]


@pytest.mark.parametrize(("reader", "text", "token"), BIG, ids=[f"{r}-{t}" for r, _, t in BIG])
def test_huge_finite_values_are_refused_before_they_overflow(tmp_path, skeleton, reader, text, token):
    read = {"bvh": read_bvh, "asf": read_asf, "amc": amc_reader(skeleton)}[reader]
    refused(read, write(tmp_path, "a." + reader, text), token, line_of(text, token))


def test_values_up_to_the_bound_read_with_finite_world_positions(tmp_path):
    text = BVH.replace("OFFSET 0 10 0", f"OFFSET 0 {MAX_MAGNITUDE:g} 0").replace(
        "1 2 3 10", f"{-MAX_MAGNITUDE:g} 2 3 10"
    )
    assert_finite(read_bvh(write(tmp_path, "a.bvh", text)))


NON_FINITE = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e400"]


@pytest.mark.parametrize("token", NON_FINITE)
def test_no_reader_accepts_nan_or_inf(tmp_path, skeleton, token):
    for reader, text, old in (
        ("bvh", BVH, "OFFSET 0 10 0"),
        ("bvh", BVH, "4 5 6 0"),
        ("bvh", BVH, "Frame Time: 0.04"),
        ("asf", ASF, "length 3"),
        ("asf", ASF, "axis 10 20 30 ZYX"),
        ("amc", AMC, "upper 90 10"),
    ):
        new = old.rsplit(" ", 1)[0] + " " + token if not old.endswith("ZYX") else f"axis 10 {token} 30 ZYX"
        if old.startswith("4 5 6"):
            new = f"4 5 {token} 0"
        mutated = text.replace(old, new)
        read = {"bvh": read_bvh, "asf": read_asf, "amc": amc_reader(skeleton)}[reader]
        refused(read, write(tmp_path, "a." + reader, mutated), "", line_of(mutated, new))


def test_open_asf_limits_may_be_infinite(tmp_path):
    skeleton = read_asf(write(tmp_path, "a.asf", ASF))
    assert skeleton.limits[1] is not None and np.isinf(skeleton.limits[1]).any()


# --- strict ASCII numbers -----------------------------------------------------------------------


STRICT = [
    ("bvh", BVH, "OFFSET 0 10 0", "OFFSET 0 ١٢ 0"),
    ("bvh", BVH, "OFFSET 0 10 0", "OFFSET 0 １２ 0"),
    ("bvh", BVH, "1 2 3 10", "1_000 2 3 10"),
    ("bvh", BVH, "4 5 6 0", "4 5 ٦ 0"),
    ("bvh", BVH, "Frames: 2", "Frames: ٢"),
    ("bvh", BVH, "Frame Time: 0.04", "Frame Time: 0.0_4"),
    ("bvh", BVH, "CHANNELS 3", "CHANNELS ٣"),
    ("bvh", BVH, "OFFSET 0 10 0", "OFFSET 0 0x10 0"),
    ("asf", ASF, "length 3", "length ٣"),
    ("asf", ASF, "length 3", "length 1_0"),
    ("asf", ASF, "mass 1.0", "mass ١"),
    ("asf", ASF, "(-90 90)", "(-90 9_0)"),
    ("amc", AMC, "upper 90 10", "upper 90 1_0"),
    ("amc", AMC, "upper 90 10", "upper 90 ١٠"),
    ("amc", AMC, "\n2\n", "\n٢\n"),
]


@pytest.mark.parametrize(("reader", "text", "old", "new"), STRICT)
def test_unicode_digits_and_underscores_are_not_numbers(tmp_path, skeleton, reader, text, old, new):
    mutated = text.replace(old, new, 1)
    read = {"bvh": read_bvh, "asf": read_asf, "amc": amc_reader(skeleton)}[reader]
    refused(read, write(tmp_path, "a." + reader, mutated), "", line_of(mutated, new.strip("\n")))


# --- text: byte-order marks, line breaks, NUL ------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_byte_order_marks_are_accepted(tmp_path, encoding):
    bom = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    plain = read_bvh(write(tmp_path, "plain.bvh", BVH))
    marked = read_bvh(write(tmp_path, "bom.bvh", bom + BVH.encode(encoding)))
    assert np.allclose(plain.rotations, marked.rotations) and marked.skeleton.names == plain.skeleton.names
    skeleton = read_asf(write(tmp_path, "bom.asf", bom + ASF.encode(encoding)))
    assert read_amc(write(tmp_path, "bom.amc", bom + AMC.encode(encoding)), skeleton).n_frames == 2


def test_utf16_without_a_byte_order_mark_is_named(tmp_path):
    refused(read_bvh, write(tmp_path, "a.bvh", BVH.encode("utf-16-le")), "NUL bytes", 1)


@pytest.mark.parametrize("odd", ODD_BREAKS, ids=[f"U+{ord(c):04X}" for c in ODD_BREAKS])
def test_errors_name_the_line_an_editor_shows(tmp_path, skeleton, odd):
    """str.splitlines() breaks at these characters too, which made errors name a later line."""
    text = BVH.replace("ROOT Hips", f"ROOT Hips{odd}X").replace("OFFSET 0 10 0", "OFFSET 0 ten 0")
    refused(read_bvh, write(tmp_path, "a.bvh", text), "'ten'", 8)
    text = ASF.replace("a small skeleton", f"a small{odd}skeleton").replace("length 3", "length three")
    refused(read_asf, write(tmp_path, "a.asf", text), "'three'", ASF.split("\n").index("     length 3") + 1)
    text = AMC.replace(":DEGREES", f":DEGREES\n# a{odd}comment").replace("upper 90 10", "upper ninety 10")
    refused(amc_reader(skeleton), write(tmp_path, "a.amc", text), "'ninety'", 11)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_numbers_with_each_line_ending(tmp_path, newline):
    text = BVH.replace("4 5 6 0", "4 5 six 0").replace("\n", newline)
    refused(read_bvh, write(tmp_path, "a.bvh", text), "'six'", 25)


# --- no recursion, nothing quadratic ----------------------------------------------------------------


@pytest.fixture
def shallow_stack():
    """Readers must not recurse per joint: run them with little stack to spare."""
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 150)
    yield
    sys.setrecursionlimit(old)


def test_deep_bvh_nesting_reads_without_recursion(tmp_path, shallow_stack):
    path = write(tmp_path, "deep.bvh", deep_bvh(5000))
    start = time.perf_counter()
    motion = read_bvh(path)
    assert time.perf_counter() - start < 15  # about 0.5 s on an idle machine
    assert motion.skeleton.n_joints == 5001 and motion.skeleton.parents[-1] == 4999


def test_deep_asf_chain_reads_without_recursion(tmp_path, shallow_stack):
    path = write(tmp_path, "chain.asf", asf_bones(5000, chain=True))
    start = time.perf_counter()
    skeleton = read_asf(path)
    assert time.perf_counter() - start < 15  # about 0.4 s on an idle machine
    assert skeleton.n_joints == 5001 and skeleton.parents[-1] == 4999
    assert np.allclose(rest_positions(skeleton)[-1], [0, 4999, 0])


def best_time(function, repeat: int = 2) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def test_many_bones_and_duplicate_names_are_linear(tmp_path):
    """The duplicate-name check compared every bone with every earlier one: 10,000 bones took 11 s.

    Four times the bones must take well under 16 times as long (linear: 4×, quadratic: 16×)."""
    small = write(tmp_path, "small.asf", asf_bones(2500, chain=False))
    text = asf_bones(10000, chain=False)
    large = write(tmp_path, "large.asf", text)
    assert read_asf(large).n_joints == 10001
    ratio = best_time(lambda: read_asf(large), repeat=2) / best_time(lambda: read_asf(small), repeat=3)
    assert ratio < 9, f"10,000 bones take {ratio:.1f}× as long as 2,500"
    duplicate = text.replace("name b9999\n", "name b0\n")
    needle = "name b0\ndirection 0 1 0\nlength 1\naxis 0 0 0 XYZ\nend\n:hierarchy"
    refused(read_asf, write(tmp_path, "dup.asf", duplicate), "used twice", line_of(duplicate, needle))


def test_duplicate_bvh_joint_names_name_the_second_one(tmp_path):
    text = BVH.replace("JOINT Leg", "JOINT Spine")
    refused(read_bvh, write(tmp_path, "a.bvh", text), "'Spine' is used twice", 15)


def test_tiny_asf_directions_are_normalised_without_underflow(tmp_path):
    text = ASF.replace("direction 1 0 0", "direction 1e-200 1e-200 0")
    skeleton = read_asf(write(tmp_path, "a.asf", text))
    lower = skeleton.index("lower")
    assert np.isclose(np.linalg.norm(skeleton.rest_translations[lower]), 2)  # the parent's length, not 0 or inf
