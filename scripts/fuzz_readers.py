"""Long fuzz run of the BVH, ASF and AMC readers (issue #14): only MocapFormatError may escape.

    python scripts/fuzz_readers.py [--cases 10000] [--seed 0] [--mocap ../shared/mocap] [--failures DIR]

Cases: seeded mutations (byte flips, line deletions/duplications/swaps, blocks repeated
10-1000×, cut files, numbers replaced by huge/tiny/NaN/inf/Unicode-digit ones, odd line
breaks, byte-order marks; see ``tests/core/hostile.py``) of small valid files and of the
shared captures (each trimmed to its first 20 frames so a case stays short), plus structural
extremes (3 % of the cases: deep nesting, thousands of ``CHANNELS 0`` joints over thousands of frames, huge
``Frames:`` counts, long ASF chains, AMC files with many frames for skeletons of many bones).

Every case is read under tracemalloc (which slows reading 2-3×); times and peak memory are
the readers' own, without the checks. A case fails when the reader raises anything but
MocapFormatError, when a refusal does not name the file and a line inside it, or when an
accepted skeleton or motion holds a non-finite number (rest pose, End Sites, channels,
frame rate, world positions). Prints the counts, the slowest case and the peak memory;
exits with status 1 when any case failed (failing inputs are saved with ``--failures``).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.io import MocapFormatError  # noqa: E402
from core.io.asf_amc import read_amc, read_asf  # noqa: E402
from core.io.bvh import read_bvh  # noqa: E402
from core.skeleton import rest_positions  # noqa: E402
from tests.core import hostile  # noqa: E402

DEFAULT_MOCAP = ROOT.parent / "shared" / "mocap"


def trim_bvh(text: str, frames: int) -> str:
    """A BVH capture cut to its first ``frames`` frames (hierarchy untouched)."""
    head, _, motion = text.partition("MOTION")
    lines = motion.replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n")
    body = [line for line in lines[2:] if line.strip()][:frames]
    return f"{head}MOTION\nFrames: {len(body)}\n{lines[1]}\n" + "\n".join(body) + "\n"


def trim_amc(text: str, frames: int) -> str:
    """An AMC capture cut before frame number ``frames + 1``."""
    out = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip() == str(frames + 1):
            break
        out.append(line)
    return "\n".join(out) + "\n"


def bases(mocap: Path) -> list[tuple[str, str, bytes, bytes | None]]:
    """(name, reader, file, ASF for an AMC) to mutate: the small test files and the trimmed shared captures."""
    out = [
        ("small.bvh", "bvh", hostile.BVH.encode(), None),
        ("small.asf", "asf", hostile.ASF.encode(), hostile.AMC.encode()),
        ("small.amc", "amc", hostile.AMC.encode(), hostile.ASF.encode()),
    ]
    if not mocap.is_dir():
        return out
    for path in sorted(mocap.glob("*/*.bvh")):
        out.append((path.name, "bvh", trim_bvh(path.read_text(encoding="utf-8", errors="replace"), 20).encode(), None))
    for asf in sorted(mocap.glob("*/*.asf")):
        for amc in sorted(asf.parent.glob("*.amc")):
            motion = trim_amc(amc.read_text(encoding="utf-8", errors="replace"), 20).encode()
            out.append((asf.name, "asf", asf.read_bytes(), motion))
            out.append((amc.name, "amc", motion, asf.read_bytes()))
    return out


def finite_problem(result) -> str | None:
    """What is not finite in a skeleton or motion a reader accepted (None when all is)."""
    skeleton = getattr(result, "skeleton", result)
    arrays = {
        "rest translations": skeleton.rest_translations,
        "rest rotations": skeleton.rest_rotations,
        "End Site offsets": skeleton.end_site_offsets,
        "rest positions": rest_positions(skeleton, include_end_sites=True),
    }
    if skeleton is not result:
        arrays |= {"translations": result.translations, "rotations": result.rotations}
        arrays["frame rate"] = np.array([result.fps, 1.0 / result.fps])
        if result.n_frames * skeleton.n_joints <= 500_000:
            arrays["world positions"] = result.world_positions()
    bad = [name for name, array in arrays.items() if not np.isfinite(array).all()]
    return f"accepted with non-finite {', '.join(bad)}" if bad else None


def refusal_problem(err: MocapFormatError) -> str | None:
    """What is wrong with a refusal (None when it names its file and a line inside it)."""
    if not err.problem or err.path not in str(err):
        return f"refusal without file or problem: {err}"
    if err.line is None:
        return f"refusal without a line: {err}"
    n_lines = hostile.editor_line_count(Path(err.path).read_bytes())
    if not 1 <= err.line <= n_lines:
        return f"line {err.line} outside the file's {n_lines} lines: {err}"
    return None


def read_case(folder: Path, reader: str, data: bytes, other: bytes | None):
    """Read one case: (result or MocapFormatError or other exception, seconds spent in the readers)."""
    path = folder / f"case.{reader}"
    path.write_bytes(data)
    skeleton = None
    if reader == "amc":  # the (valid) skeleton is read before the clock starts
        (folder / "skeleton.asf").write_bytes(other)
        skeleton = read_asf(folder / "skeleton.asf")
    if reader == "asf" and other is not None:
        (folder / "motion.amc").write_bytes(other)
    start = time.perf_counter()
    try:
        if reader == "bvh":
            return read_bvh(path), time.perf_counter() - start
        if reader == "amc":
            return read_amc(path, skeleton), time.perf_counter() - start
        result = read_asf(path)
        if other is None:
            return result, time.perf_counter() - start
        try:  # an accepted skeleton then reads its motion
            return (result, read_amc(folder / "motion.amc", result)), time.perf_counter() - start
        except MocapFormatError as err:
            return (result, err), time.perf_counter() - start
    except MocapFormatError as err:
        return err, time.perf_counter() - start
    except BaseException as exc:  # noqa: BLE001 - counting exactly these is the point
        if isinstance(exc, KeyboardInterrupt):
            raise
        return exc, time.perf_counter() - start


def judge(outcome) -> tuple[str, str | None]:
    """("refused"/"accepted"/"failed", what failed) of a case's outcome."""
    if isinstance(outcome, tuple):  # an ASF accepted, then its AMC read or refused
        skeleton, motion = outcome
        problem = finite_problem(skeleton)
        if problem is None:
            problem = refusal_problem(motion) if isinstance(motion, MocapFormatError) else finite_problem(motion)
        return ("failed", problem) if problem else ("accepted", None)
    if isinstance(outcome, MocapFormatError):
        problem = refusal_problem(outcome)
        return ("failed", problem) if problem else ("refused", None)
    if isinstance(outcome, BaseException):
        return "failed", f"{type(outcome).__name__}: {str(outcome)[:300]}"
    problem = finite_problem(outcome)
    return ("failed", problem) if problem else ("accepted", None)


def make_case(rng: random.Random, sources: list) -> tuple[str, str, bytes, bytes | None]:
    """(description, reader, file, the other file of an ASF/AMC pair)."""
    if rng.random() < 0.03:
        reader, text, asf = hostile.extreme_cases(rng)
        other = asf.encode() if asf is not None else None
        return f"extreme {reader} ({len(text):,} bytes)", reader, text.encode(), other
    name, reader, data, other = rng.choice(sources)
    return f"mutated {name}", reader, hostile.mutate(data, rng), other


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mocap", type=Path, default=DEFAULT_MOCAP, help="shared captures to mutate (optional)")
    parser.add_argument("--failures", type=Path, help="folder to save failing inputs in")
    args = parser.parse_args(argv)

    sources = bases(args.mocap)
    counts: Counter[str] = Counter()
    failures: list[tuple[int, str, str]] = []
    slowest = (0.0, "")
    peak = (0, "", 0)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(args.cases):
            rng = random.Random(args.seed * 1_000_003 + i)
            what, reader, data, other = make_case(rng, sources)
            size = len(data)
            tracemalloc.start()
            try:
                result, elapsed = read_case(folder, reader, data, other)
                case_peak = tracemalloc.get_traced_memory()[1]  # the readers' own, before the checks
            finally:
                tracemalloc.stop()
            outcome, problem = judge(result)
            del result
            counts[outcome] += 1
            if elapsed > slowest[0]:
                slowest = (elapsed, f"case {i}: {what}, {size:,} bytes, {outcome}")
            if case_peak > peak[0]:
                peak = (case_peak, f"case {i}: {what}, {outcome}", size)
            if problem:
                failures.append((i, what, problem))
                if args.failures:
                    args.failures.mkdir(parents=True, exist_ok=True)
                    (args.failures / f"case{i}.{reader}").write_bytes(data)
            if (i + 1) % 1000 == 0:
                print(f"  {i + 1:,} cases, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    wall = time.perf_counter() - start

    print(
        f"sources mutated:        {len(sources)} files ({sum(1 for s in sources if not s[0].startswith('small'))} shared captures)"
    )
    print(f"cases:                  {args.cases:,} (seed {args.seed})")
    print(f"refused (MocapFormatError, file and line named): {counts['refused']:,}")
    print(f"accepted (all finite):  {counts['accepted']:,}")
    print(f"other exceptions or bad results (must be 0): {counts['failed']:,}")
    print(f"slowest case (reading): {slowest[0] * 1000:.0f} ms ({slowest[1]}; under tracemalloc)")
    print(f"peak memory of a case:  {peak[0] / 2**20:.1f} MiB ({peak[1]}, {peak[2]:,}-byte file; tracemalloc)")
    print(f"wall time:              {wall:.0f} s ({wall / max(args.cases, 1) * 1000:.1f} ms a case, with tracemalloc)")
    for i, what, problem in failures[:20]:
        print(f"FAILED case {i} ({what}): {problem}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
