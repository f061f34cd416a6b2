"""Fuzz the readers: whatever a file holds, the only exception is MocapFormatError.

Hypothesis mutates small valid BVH, ASF and AMC files (drop, repeat, swap and cut lines,
replace tokens and numbers with hostile ones — huge, tiny, NaN, inf, Unicode digits —,
insert text and line breaks editors do not break at, prepend byte-order marks, flip bytes)
and builds structural extremes (deep nesting, many joints without channels, huge declared
frame counts, long bone chains). A reader may accept a file (many edits leave a valid one)
but then everything it returns is finite; it must never leak another exception type
(IndexError, KeyError, OverflowError, RecursionError, MemoryError, ...); a refusal names
the file and a line inside it; and memory stays within a multiple of the file's size plus
the motion it returns. ``scripts/fuzz_readers.py`` runs the same checks for longer.
"""

from __future__ import annotations

import random
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.io import MocapFormatError
from core.io.asf_amc import read_amc, read_asf
from core.io.bvh import read_bvh
from core.io.reading import BYTES_PER_JOINT_FRAME
from core.skeleton import rest_positions
from tests.conftest import shared_file
from tests.core.hostile import (
    AMC,
    ASF,
    BOMS,
    BVH,
    HOSTILE_NUMBERS,
    ODD_BREAKS,
    amc_frames,
    asf_bones,
    bvh_declaring_frames,
    bvh_without_channels,
    deep_bvh,
    editor_line_count,
    mutate,
)

PARSE_FACTOR = 64
"""Reading may hold up to this many bytes per byte of file (Python objects for lines and tokens), plus the motion."""

HOSTILE = st.sampled_from(
    [
        "",
        "0",
        "-1",
        "1e999",
        "-1e999",
        "nan",
        "inf",
        "-inf",
        "²",
        "١",
        "0x10",
        "{",
        "}",
        "(",
        ")",
        ",",
        "#",
        ":",
        ":root",
        ":bonedata",
        ":hierarchy",
        ":units",
        ":RADIANS",
        "begin",
        "end",
        "root",
        "upper",
        "dof",
        "rx",
        "l",
        "limits",
        "axis",
        "XYZ",
        "XXY",
        "angle",
        "rad",
        "grad",
        "ROOT",
        "JOINT",
        "End",
        "Site",
        "OFFSET",
        "CHANNELS",
        "999999999",
        "MOTION",
        "Frames:",
        "Frame Time:",
        "Xrotation",
        "\t",
        "\r",
        "\x00",
        "# Mocap Workbench fps 0",
        "# Mocap Workbench fps 1e-320",
        "\ufeff",
        *HOSTILE_NUMBERS,
        *ODD_BREAKS,
    ]
)
TEXT = st.one_of(HOSTILE, st.text(max_size=12))


_NUMBER = st.sampled_from(HOSTILE_NUMBERS)


@st.composite
def mutated(draw, text: str) -> bytes:
    """``text`` after 1-4 random edits, as bytes (sometimes with raw byte damage or a byte-order mark)."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["drop", "repeat", "swap", "token", "number", "number", "insert", "cut"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if not lines:
            lines = [draw(TEXT)]
        elif kind == "drop":
            del lines[i]
        elif kind == "repeat":
            lines.insert(i, lines[i])
        elif kind == "swap":
            k = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[k] = lines[k], lines[i]
        elif kind in ("token", "number"):
            words = lines[i].split(" ")
            if kind == "number":  # a number's place, so the hostile value reaches the number parsers
                numeric = [
                    w for w, word in enumerate(words) if word.strip("\t()").lstrip("-").replace(".", "").isdigit()
                ]
                if not numeric:
                    continue
                w = draw(st.sampled_from(numeric))
                words[w] = words[w].replace(words[w].strip("\t()"), draw(_NUMBER))
            else:
                w = draw(st.integers(0, len(words) - 1))
                words[w] = draw(TEXT)
            lines[i] = " ".join(words)
        elif kind == "insert":
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + draw(TEXT) + lines[i][at:]
        else:
            lines = lines[: i + 1]
            lines[-1] = lines[-1][: draw(st.integers(0, len(lines[-1])))]
    data = bytearray("\n".join(lines).encode("utf-8"))
    if data and draw(st.booleans()):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if draw(st.integers(0, 9)) == 0:
        data[:0] = draw(st.sampled_from(BOMS))
    return bytes(data)


def _write(folder: Path, name: str, data: bytes | str) -> Path:
    path = folder / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_finite(result) -> None:
    """Everything a reader returned is finite: rest pose, End Sites, channels, frame rate, world positions."""
    skeleton = getattr(result, "skeleton", result)
    for array in (skeleton.rest_translations, skeleton.rest_rotations, skeleton.end_site_offsets):
        assert np.isfinite(array).all()
    assert np.isfinite(rest_positions(skeleton, include_end_sites=True)).all()
    if skeleton is not result:
        assert np.isfinite(result.translations).all() and np.isfinite(result.rotations).all()
        assert 0 < result.fps < np.inf and np.isfinite(1.0 / result.fps)
        if result.n_frames * skeleton.n_joints <= 200_000:
            assert np.isfinite(result.world_positions()).all()


def check_outcome(outcome):
    """A reader's result must be finite; a refusal must be a MocapFormatError naming its file and a
    line inside it. Returns the result, or None for a refusal."""
    if isinstance(outcome, MocapFormatError):
        err = outcome
        assert err.problem and err.path and err.path in str(err)
        assert err.line is not None, f"no line: {err}"
        n_lines = editor_line_count(Path(err.path).read_bytes())
        assert 1 <= err.line <= n_lines, f"line {err.line} outside the file's {n_lines} lines: {err}"
        assert len(err.problem) < 500, "long tokens are shortened in messages"
        return None
    assert_finite(outcome)
    return outcome


def read_or_refusal(read, *args):
    """``read(*args)``, or the MocapFormatError it raised; any other exception propagates and fails the test."""
    try:
        return read(*args)
    except MocapFormatError as err:
        return err


def check_read(read, *args):
    """``read(*args)`` checked with :func:`check_outcome`."""
    return check_outcome(read_or_refusal(read, *args))


def test_base_files_are_valid():
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        assert read_bvh(_write(folder, "a.bvh", BVH)).n_frames == 2
        skeleton = read_asf(_write(folder, "a.asf", ASF))
        assert read_amc(_write(folder, "a.amc", AMC), skeleton).n_frames == 2


@FUZZ
@given(data=mutated(BVH))
def test_bvh_reader_raises_only_format_errors(data):
    with tempfile.TemporaryDirectory() as tmp:
        check_read(read_bvh, _write(Path(tmp), "m.bvh", data))


@FUZZ
@given(data=mutated(ASF))
def test_asf_reader_raises_only_format_errors(data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        skeleton = check_read(read_asf, _write(folder, "m.asf", data))
        if skeleton is not None:
            check_read(read_amc, _write(folder, "m.amc", AMC), skeleton)


@FUZZ
@given(data=mutated(AMC))
def test_amc_reader_raises_only_format_errors(data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        skeleton = read_asf(_write(folder, "m.asf", ASF))
        check_read(read_amc, _write(folder, "m.amc", data), skeleton)


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300), reader=st.sampled_from(["bvh", "asf", "amc"]))
def test_random_bytes_raise_only_format_errors(data, reader):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        skeleton = read_asf(_write(folder, "ok.asf", ASF))
        path = _write(folder, "x." + reader, data)
        read = {"bvh": read_bvh, "asf": read_asf, "amc": lambda p: read_amc(p, skeleton)}[reader]
        check_read(read, path)


EXTREMES = st.one_of(
    st.tuples(st.just("zero-channels"), st.integers(1, 2000), st.integers(1, 20000)),
    st.tuples(st.just("deep"), st.integers(1, 3000), st.integers(1, 3)),
    st.tuples(
        st.just("frames"),
        st.sampled_from(["1000000000", "1" + "0" * 30, "9" * 5000, "1e12", "1e300", "2.5", "-3", "0", "١٢"]),
        st.integers(0, 3),
    ),
    st.tuples(st.just("asf"), st.integers(1, 3000), st.booleans()),
    st.tuples(st.just("amc"), st.integers(1, 1000), st.integers(1, 20000)),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=EXTREMES)
def test_structural_extremes_stay_within_the_memory_bound(case):
    """Small hostile files: peak memory (tracemalloc) at most PARSE_FACTOR × file size + 8 MiB + the motion returned."""
    kind, a, b = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        read, args = read_bvh, ()
        if kind == "zero-channels":
            path = _write(folder, "x.bvh", bvh_without_channels(a, b))
        elif kind == "deep":
            path = _write(folder, "x.bvh", deep_bvh(a, b))
        elif kind == "frames":
            path = _write(folder, "x.bvh", bvh_declaring_frames(a, b))
        elif kind == "asf":
            read, path = read_asf, _write(folder, "x.asf", asf_bones(a, chain=b))
        else:
            skeleton = read_asf(_write(folder, "x.asf", asf_bones(a, chain=False)))
            read, args, path = read_amc, (skeleton,), _write(folder, "x.amc", amc_frames(b))
        tracemalloc.start()
        try:
            outcome = read_or_refusal(read, path, *args)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        result = check_outcome(outcome)  # after measuring: world positions are the checker's memory
        motion = 0
        if result is not None and hasattr(result, "n_frames"):
            motion = result.n_frames * result.skeleton.n_joints * BYTES_PER_JOINT_FRAME
        bound = PARSE_FACTOR * path.stat().st_size + 8 * 2**20 + 1.1 * motion
        assert peak <= bound, f"{kind} {a} {b}: peak {peak / 2**20:.1f} MiB > bound {bound / 2**20:.1f} MiB"


@pytest.mark.parametrize(
    ("relative", "seed"),
    [("bandai_namco_1/dataset-1_dash_normal_001.bvh", s) for s in range(15)]
    + [("cmu_asf_amc/01.asf", s) for s in range(15)],
)
def test_mutated_real_captures_raise_only_format_errors(tmp_path, relative, seed):
    original = shared_file(relative)
    data = mutate(original.read_bytes(), random.Random(seed))
    path = _write(tmp_path, "m" + original.suffix, data)
    check_read(read_bvh if original.suffix == ".bvh" else read_asf, path)


@pytest.mark.parametrize(
    "text",
    [
        BVH.replace("Frames: 2", "Frames: nan"),
        BVH.replace("Frames: 2", "Frames: inf"),
        BVH.replace("CHANNELS 3", "CHANNELS ²"),
        "HIERARCHY\n" + "ROOT a\n{\nOFFSET 0 0 0\n" + "JOINT b\n{\nOFFSET 0 0 0\n" * 1500,
    ],
    ids=["frames-nan", "frames-inf", "unicode-digit-count", "deep-nesting"],
)
def test_bvh_reader_leaks_found_by_fuzzing_are_format_errors(tmp_path, text):
    """Inputs that escaped read_bvh as ValueError/OverflowError/RecursionError before the fix.

    The unicode digit was found by the AMC fuzz test (``'²'.isdigit()`` is True, ``int('²')``
    fails) and the others while reviewing the reader for the same class of bug.
    """
    with pytest.raises(MocapFormatError):
        read_bvh(_write(tmp_path, "bad.bvh", text.encode()))
