"""Hostile motion files for the reader tests and ``scripts/fuzz_readers.py``.

Small valid bases (BVH, ASF, AMC), structural extremes (deep nesting, many joints without
channels, huge declared frame counts, long bone chains) and seeded mutations (byte flips,
line deletions and duplications, numbers replaced by huge, tiny, NaN, inf or Unicode-digit
ones, line breaks editors do not break at, byte-order marks). Plain Python: no pytest or
hypothesis, so the script can use it too.
"""

from __future__ import annotations

import random
import re

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

HUGE_DIGITS = "9" * 5000
HOSTILE_NUMBERS = [
    HUGE_DIGITS,
    "1" + "0" * 400,
    "0." + "0" * 400 + "1",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "1e999",
    "1e13",
    "1e-310",
    "1e-320",
    "5e-324",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "١٢",  # Arabic-Indic digits: int() and float() read 12
    "１２",  # fullwidth digits
    "²",
    "1_000",  # float() reads 1000
    "0x10",
    "1e",
    "+-1",
    ".",
    "\u00a01",  # float() strips the no-break space
    "\ufeff1",
]
# Characters str.splitlines() breaks lines at but editors do not.
ODD_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
BOMS = [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]
_NUMBER = re.compile(r"[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?")


def editor_line(text: str, index: int) -> int:
    """The line an editor shows for character ``index`` of ``text`` (breaks: \\n, \\r\\n, \\r)."""
    head = text[:index]
    return head.count("\n") + head.count("\r") - head.count("\r\n") + 1


def editor_line_count(data: bytes) -> int:
    """How many lines an editor shows for a file (at least 1; a final line break opens no new line),
    decoded as the readers do: UTF-8, or UTF-16/UTF-32 after their byte-order mark."""
    encodings = [(b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be")]
    encodings += [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"), (b"", "utf-8")]
    bom, encoding = next((bom, name) for bom, name in encodings if data.startswith(bom))
    text = data[len(bom) :].decode(encoding, errors="replace")
    return max(1, editor_line(text, len(text)) - text.endswith(("\n", "\r")))


# --- structural extremes -----------------------------------------------------------------


def bvh_without_channels(n_joints: int, n_frames: int) -> str:
    """A root with one channel and ``n_joints`` children with ``CHANNELS 0``: tiny per frame in
    the file, ``n_joints`` × 56 bytes per frame in memory."""
    joints = "".join(f"JOINT j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n}}\n" for i in range(n_joints))
    head = f"HIERARCHY\nROOT r\n{{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n{joints}}}\n"
    return head + f"MOTION\nFrames: {n_frames}\nFrame Time: 0.01\n" + "0\n" * n_frames


def deep_bvh(depth: int, n_frames: int = 2) -> str:
    """A chain of ``depth`` nested joints, one rotation channel each."""
    opening = "".join(f"JOINT j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 1 Zrotation\n" for i in range(depth))
    head = f"HIERARCHY\nROOT r\n{{\nOFFSET 0 0 0\nCHANNELS 1 Zrotation\n{opening}" + "}\n" * (depth + 1)
    row = " ".join(["1"] * (depth + 1))
    return head + f"MOTION\nFrames: {n_frames}\nFrame Time: 0.01\n" + (row + "\n") * n_frames


def bvh_declaring_frames(declared: str, actual: int = 2) -> str:
    """The base BVH with ``Frames:`` replaced and ``actual`` frame lines."""
    head = BVH.split("Frames:")[0]
    row = BVH.strip().split("\n")[-1]
    return head + f"Frames: {declared}\nFrame Time: 0.04\n" + (row + "\n") * actual


def asf_bones(n_bones: int, chain: bool = True, dof: str = "") -> str:
    """An ASF with ``n_bones`` bones, in one chain or all under the root; ``dof`` e.g. ``"rx"``."""
    dof_line = f"dof {dof}\n" if dof else ""
    bones = "".join(
        f"begin\nname b{i}\ndirection 0 1 0\nlength 1\naxis 0 0 0 XYZ\n{dof_line}end\n" for i in range(n_bones)
    )
    if chain:
        links = "root b0\n" + "".join(f"b{i} b{i + 1}\n" for i in range(n_bones - 1))
    else:
        links = "".join(
            f"root {' '.join(f'b{i}' for i in range(k, min(k + 50, n_bones)))}\n" for k in range(0, n_bones, 50)
        )
    root = ":root\norder RX\naxis XYZ\nposition 0 0 0\norientation 0 0 0\n"
    return f"{root}:bonedata\n{bones}:hierarchy\nbegin\n{links}end\n"


def amc_frames(n_frames: int, bones: tuple[str, ...] = (), first: int = 1) -> str:
    """AMC frames for :func:`asf_bones` skeletons: ``root`` (one rx value) and the given bones (one value each)."""
    lines = [":FULLY-SPECIFIED", ":DEGREES"]
    for f in range(first, first + n_frames):
        lines.append(str(f))
        lines.append("root 0")
        lines.extend(f"{b} 0" for b in bones)
    return "\n".join(lines) + "\n"


# --- mutations ---------------------------------------------------------------------------


def replace_number(text: str, rng: random.Random, value: str) -> str:
    """``text`` with one number (picked at random) replaced by ``value``."""
    found = list(_NUMBER.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return text[: m.start()] + value + text[m.end() :]


def mutate(data: bytes, rng: random.Random, edits: int | None = None) -> bytes:
    """``data`` after 1-4 random edits: byte flips, line deletions/duplications/swaps, cut
    files, numbers replaced by hostile ones, hostile tokens inserted, odd line breaks, BOMs."""
    edits = edits if edits is not None else rng.randint(1, 4)
    for _ in range(edits):
        kind = rng.choice(
            ["flip", "delete", "duplicate", "swap", "cut", "number", "number", "insert", "break", "bom", "repeat"]
        )
        if kind == "flip" and data:
            at = rng.randrange(len(data))
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
        elif kind == "bom":
            data = rng.choice(BOMS) + data
        elif kind == "cut" and data:
            data = data[: rng.randrange(len(data))]
        else:
            text = data.decode("utf-8", errors="replace")
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            if kind == "delete":
                del lines[i]
            elif kind == "duplicate":
                lines.insert(i, lines[i])
            elif kind == "repeat":  # a block of lines many times (frames, joints), up to ~300 KB
                k = rng.randint(i, min(len(lines), i + 8))
                block = sum(len(line) + 1 for line in lines[i:k]) or 1
                lines[i:k] = lines[i:k] * min(rng.choice([10, 100, 1000]), max(2, 300_000 // block))
            elif kind == "swap":
                j = rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
            elif kind == "number":
                lines[i] = replace_number(lines[i], rng, rng.choice(HOSTILE_NUMBERS))
            elif kind == "insert":
                at = rng.randint(0, len(lines[i]))
                token = rng.choice(HOSTILE_NUMBERS + ODD_BREAKS + ["{", "}", "#", ":root", "\t", "\r", "end", "begin"])
                lines[i] = lines[i][:at] + token + lines[i][at:]
            elif kind == "break":
                at = rng.randint(0, len(lines[i]))
                lines[i] = lines[i][:at] + rng.choice(ODD_BREAKS) + lines[i][at:]
            data = "\n".join(lines).encode("utf-8")
    return data


def extreme_cases(rng: random.Random) -> tuple[str, str, str | None]:
    """One structural extreme: (reader "bvh"/"asf"/"amc", file text, ASF text for an AMC or None)."""
    kind = rng.choice(["zero-channels", "deep", "frames", "asf-chain", "asf-wide", "amc-long"])
    if kind == "zero-channels":
        return "bvh", bvh_without_channels(rng.choice([10, 100, 1000, 3000]), rng.choice([10, 1000, 20000])), None
    if kind == "deep":
        return "bvh", deep_bvh(rng.choice([100, 1000, 5000])), None
    if kind == "frames":
        declared = rng.choice(["1" + "0" * rng.randint(3, 30), HUGE_DIGITS, "1e300", "1e12", "2.5", "-3", "١٢"])
        return "bvh", bvh_declaring_frames(declared), None
    if kind == "asf-chain":
        return "asf", asf_bones(rng.choice([100, 1000, 5000]), chain=True), None
    if kind == "asf-wide":
        return "asf", asf_bones(rng.choice([100, 1000, 5000]), chain=False), None
    n_bones = rng.choice([10, 100, 1000])
    return "amc", amc_frames(rng.choice([10, 1000, 20000])), asf_bones(n_bones, chain=rng.random() < 0.5)
