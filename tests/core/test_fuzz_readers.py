"""Fuzz the readers: whatever a mutated file holds, the only exception is MocapFormatError.

Hypothesis mutates small valid BVH, ASF and AMC files (drop, repeat, swap and cut lines,
replace tokens with hostile ones, insert text, flip bytes) and feeds them to the readers.
A reader may accept a mutant (many edits leave a valid file) but must never leak another
exception type (IndexError, KeyError, OverflowError, RecursionError, ...).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.io import MocapFormatError
from core.io.asf_amc import read_amc, read_asf
from core.io.bvh import read_bvh

BVH = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 3 Yrotation Xrotation Zrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
\tJOINT Leg
\t{
\t\tOFFSET 2 -1 0
\t\tCHANNELS 4 Xposition Zrotation Xrotation Yrotation
\t}
}
MOTION
Frames: 2
Frame Time: 0.04
1 2 3 10 20 30 40 50 60 1 0 0 0
4 5 6 0 0 0 0 0 90 2 1 1 1
"""

ASF = """# test skeleton
:version 1.10
:name fuzz
:units
  mass 1.0
  length 0.45
  angle deg
:documentation
  a small skeleton
:root
  order TX TY TZ RX RY RZ
  axis XYZ
  position 0 0 0
  orientation 0 10 0
:bonedata
  begin
     id 1
     name upper
     direction 1 0 0
     length 2
     axis 0 0 90 XYZ
    dof rx ry
    limits (-10.0 170.0)
           (-inf inf)
  end
  begin
     id 2
     name lower
     direction 0 1 0
     length 3
     axis 10 20 30 ZYX
    dof rz tx
    limits (-90 90)
           (-1 1)
  end
  begin
     id 3
     name side
     direction 0 0 1
     length 1
     axis 0 0 0 XYZ
  end
:hierarchy
  begin
    root upper side
    upper lower
  end
"""

AMC = """#!OML:ASF fuzz.asf
:FULLY-SPECIFIED
:DEGREES
1
root 1 2 3 0 0 0
upper 0 0
lower 0 0
2
root 0 0 0 0 0 90
upper 90 10
lower 90 0.5
"""

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
    ]
)
TEXT = st.one_of(HOSTILE, st.text(max_size=12))


@st.composite
def mutated(draw, text: str) -> bytes:
    """``text`` after 1-4 random edits, as bytes (sometimes with raw byte damage)."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["drop", "repeat", "swap", "token", "insert", "cut"]))
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
        elif kind == "token":
            words = lines[i].split(" ")
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
    return bytes(data)


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _only_format_errors(read) -> None:
    try:
        read()
    except MocapFormatError as err:
        assert err.path and err.problem
        assert err.line is None or err.line >= 1


def test_base_files_are_valid():
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        assert read_bvh(_write(folder, "a.bvh", BVH.encode())).n_frames == 2
        skeleton = read_asf(_write(folder, "a.asf", ASF.encode()))
        assert read_amc(_write(folder, "a.amc", AMC.encode()), skeleton).n_frames == 2


@FUZZ
@given(data=mutated(BVH))
def test_bvh_reader_raises_only_format_errors(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp), "m.bvh", data)
        _only_format_errors(lambda: read_bvh(path))


@FUZZ
@given(data=mutated(ASF))
def test_asf_reader_raises_only_format_errors(data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        asf = _write(folder, "m.asf", data)
        amc = _write(folder, "m.amc", AMC.encode())
        _only_format_errors(lambda: read_amc(amc, read_asf(asf)))


@FUZZ
@given(data=mutated(AMC))
def test_amc_reader_raises_only_format_errors(data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        skeleton = read_asf(_write(folder, "m.asf", ASF.encode()))
        amc = _write(folder, "m.amc", data)
        _only_format_errors(lambda: read_amc(amc, skeleton))


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300), reader=st.sampled_from(["bvh", "asf", "amc"]))
def test_random_bytes_raise_only_format_errors(data, reader):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        skeleton = read_asf(_write(folder, "ok.asf", ASF.encode()))
        path = _write(folder, "x." + reader, data)
        read = {"bvh": read_bvh, "asf": read_asf, "amc": lambda p: read_amc(p, skeleton)}[reader]
        _only_format_errors(lambda: read(path))


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
