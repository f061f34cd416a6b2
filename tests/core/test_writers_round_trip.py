"""Property: whatever a reader accepts, the writers write and the readers read back equal.

Hypothesis draws random skeletons (names from the characters both formats hold, plus the
keywords and shapes that need care: ``End``, ``root``, ``:x``, ``%41``; chains up to 300
deep with branches; any channel layout and rotation order; End Sites; random rest
rotations for ASF) and random finite motions. Each is made into what a reader returns (a
file written and read back), then every format pair is checked through the conversion
functions: BVH→BVH, BVH→ASF/AMC, ASF/AMC→BVH, ASF/AMC→ASF/AMC — names (ASF escapes the ones
it cannot hold, see :mod:`core.io.names`), hierarchy, rest offsets and world positions of
every joint and End Site in every frame, within 1e-6.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from core import quaternion as quat
from core.io.asf_amc import channels_to_dofs, from_asf_layout, motion_from_dof_values, read_asf_amc, write_asf_amc
from core.io.bvh import _motion_from_channels, read_bvh, write_bvh
from core.io.convert import asf_amc_to_bvh, bvh_to_asf_amc
from core.io.errors import MocapWriteError
from core.io.names import asf_name_problem, escape_asf_name
from core.kinematics import end_site_positions, forward_kinematics
from core.motion import Motion
from core.skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Skeleton, rest_world

ATOL = 1e-6
# ROUND_TRIP_EXAMPLES=200 NO_SHRINK=1 for a longer local hunt; CI runs 25 examples per test
ROUND_TRIP = settings(
    max_examples=int(os.environ.get("ROUND_TRIP_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.explicit, Phase.reuse, Phase.generate] if os.environ.get("NO_SHRINK") else tuple(Phase),
)
# characters both formats hold anywhere in a name (no whitespace, braces, '#', '(', ')', ',')
ALPHABET = "abcXYZ019_-.:%'\"!?@$&*+=<>/\\|~^`;éß骨Ω"
SPECIAL = ["End", "end", "Site", "root", "ROOT", ":x", "%41", "a%2", "JOINT", "MOTION", "OFFSET", "12", "x_link"]
NAMES = st.one_of(st.text(ALPHABET, min_size=1, max_size=6), st.sampled_from(SPECIAL))


@st.composite
def skeletons(draw) -> dict:
    """Structure (names, parents, channels, End Sites) from hypothesis; numbers from a seed."""
    depth = draw(st.one_of(st.integers(1, 12), st.integers(1, 300)))
    branches = draw(st.integers(0, 8))
    n = depth + branches
    parents = [-1] + list(range(depth - 1))
    for j in range(depth, n):
        parents.append(draw(st.integers(0, j - 1)))
    names = draw(st.lists(NAMES, min_size=n, max_size=n, unique=True))
    layouts = st.tuples(
        st.permutations(POSITION_CHANNELS).flatmap(lambda p: st.integers(0, 3).map(lambda k: tuple(p[:k]))),
        st.permutations(ROTATION_CHANNELS).flatmap(lambda r: st.integers(0, 3).map(lambda k: tuple(r[:k]))),
        st.randoms(use_true_random=False),
    )
    channels = []
    for _ in range(n):
        positions, rotations, rnd = draw(layouts)
        mixed = list(positions + rotations)
        rnd.shuffle(mixed)  # BVH allows any order; keep rotations in their drawn order
        rot = iter(rotations)
        channels.append(tuple(next(rot) if c in ROTATION_CHANNELS else c for c in mixed))
    ends = draw(st.lists(st.integers(0, n - 1), max_size=4))
    return {
        "names": names,
        "parents": parents,
        "channels": channels,
        "ends": ends,
        "frames": draw(st.integers(1, 3)),
        "fps": draw(st.sampled_from([24.0, 30.0, 120.0, 1 / 0.0083333, 59.94])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def build(spec: dict, asf: bool) -> Motion:
    """The spec's motion: BVH channel semantics (identity rest rotations), or ASF dof semantics
    with random rest rotations (bone axes)."""
    rng = np.random.default_rng(spec["seed"])
    n = len(spec["names"])
    sk = Skeleton(
        spec["names"],
        spec["parents"],
        rng.uniform(-100, 100, (n, 3)),
        quat.normalize(rng.normal(size=(n, 4))) if asf else None,
        spec["channels"],
        np.array(sorted(spec["ends"]), dtype=int),
        rng.uniform(-100, 100, (len(spec["ends"]), 3)),
    )
    t = spec["frames"]
    if not asf:
        columns = [
            rng.uniform(-180, 180, t) if c in ROTATION_CHANNELS else rng.uniform(-100, 100, t)
            for ch in sk.channels
            for c in ch
        ]
        values = np.stack(columns, axis=-1) if columns else np.zeros((t, 0))
        return _motion_from_channels(sk, values, spec["fps"])
    values = []
    for ch in sk.channels:
        dofs = channels_to_dofs(ch)
        columns = [rng.uniform(-180, 180, t) if d[0] == "r" else rng.uniform(-100, 100, t) for d in dofs]
        values.append(np.stack(columns, -1) if dofs else None)
    if values[0] is None:
        values[0] = np.zeros((t, 0))
    return motion_from_dof_values(sk, values, spec["fps"])


def positions(m: Motion) -> tuple[np.ndarray, np.ndarray]:
    pos, rot = forward_kinematics(m.skeleton, m.translations, m.rotations)
    return pos, end_site_positions(m.skeleton, pos, rot)


def assert_same_end_sites(a: np.ndarray, b: np.ndarray, sb: Skeleton) -> None:
    """The same End Site positions in every frame, in any order (ASF reorders them). ``b`` may
    hold more End Sites only at their joint: an ASF leaf bone always ends, maybe at length 0."""
    if a.shape[1] == 0 or b.shape[1] == 0:
        assert a.shape[1] == 0 and (np.linalg.norm(sb.end_site_offsets, axis=1) <= ATOL).all()
        return
    gap = np.linalg.norm(a[:, :, None] - b[:, None, :], axis=-1).max(axis=0)  # (Ea, Eb) over frames
    assert (gap.min(axis=1) < ATOL).all()
    extra = gap.min(axis=0) >= ATOL
    assert (np.linalg.norm(sb.end_site_offsets[extra], axis=1) <= ATOL).all()


def assert_same(src: Motion, back: Motion, index: list[int] | None = None) -> None:
    """back equals src (joints of src at ``index`` in back) within ATOL: positions, rest pose, fps."""
    index = list(range(src.skeleton.n_joints)) if index is None else index
    assert back.n_frames == src.n_frames and np.isclose(back.fps, src.fps, rtol=1e-12)
    pa, ea = positions(src)
    pb, eb = positions(back)
    assert np.abs(pb[:, index] - pa).max() < ATOL
    assert_same_end_sites(ea, eb, back.skeleton)
    ra = rest_world(src.skeleton, include_end_sites=False)[0]
    rb = rest_world(back.skeleton, include_end_sites=False)[0]
    assert np.abs(rb[index] - ra).max() < ATOL


def assert_same_layout(src: Motion, back: Motion) -> None:
    """Same names, hierarchy, channels and rest offsets (a same-format round trip)."""
    a, b = src.skeleton, back.skeleton
    assert b.names == a.names and np.array_equal(b.parents, a.parents) and b.channels == a.channels
    assert np.abs(b.rest_translations - a.rest_translations).max() < ATOL
    assert np.abs(np.abs(quat.dot(b.rest_rotations, a.rest_rotations)) - 1).max() < ATOL
    assert np.abs(b.end_site_offsets - a.end_site_offsets).max(initial=0) < ATOL


def original_ancestor(names: tuple[str, ...], parents: np.ndarray, j: int, keep: set[str]) -> int:
    """The nearest ancestor of joint j whose name is in ``keep`` (skipping added link bones)."""
    p = parents[j]
    while p >= 0 and names[p] not in keep:
        p = parents[p]
    return p


@ROUND_TRIP
@given(spec=skeletons())
def test_every_format_pair_reads_back_what_was_written(spec):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)

        # BVH as a reader gives it
        if not any(spec["channels"]):  # BVH cannot hold a motion without channels
            with pytest.raises(MocapWriteError, match="no joint has channels"):
                write_bvh(build(spec, asf=False), d / "src.bvh")
            assert not (d / "src.bvh").exists()
            return
        write_bvh(build(spec, asf=False), d / "src.bvh")
        bvh = read_bvh(d / "src.bvh")
        assert sorted(bvh.skeleton.names) == sorted(spec["names"])  # in depth-first order

        # BVH → BVH
        write_bvh(bvh, d / "bb.bvh")
        back = read_bvh(d / "bb.bvh")
        assert_same_layout(bvh, back)
        assert_same(bvh, back)

        # BVH → ASF/AMC: the root is "root", other names escaped where ASF cannot hold them
        shaped = bvh_to_asf_amc(d / "src.bvh", d / "ba.asf", d / "ba.amc")
        back = read_asf_amc(d / "ba.asf", d / "ba.amc", fps=bvh.fps)
        assert back.skeleton.names == shaped.skeleton.names
        expected = ["root"] + [escape_asf_name(n) for n in bvh.skeleton.names[1:]]
        index = [back.skeleton.names.index(n) for n in expected]
        assert_same(bvh, back, index)
        keep = set(expected)
        for j, k in enumerate(index):
            p = original_ancestor(back.skeleton.names, back.skeleton.parents, k, keep)
            assert p == (index[bvh.skeleton.parents[j]] if j else -1)

        # ASF/AMC as a reader gives it
        write_asf_amc(build(spec, asf=True), d / "src.asf", d / "src.amc")
        acclaim = read_asf_amc(d / "src.asf", d / "src.amc")

        # ASF/AMC → ASF/AMC
        write_asf_amc(acclaim, d / "aa.asf", d / "aa.amc")
        back = read_asf_amc(d / "aa.asf", d / "aa.amc")
        assert_same_layout(acclaim, back)
        assert back.skeleton.limits == acclaim.skeleton.limits
        assert_same(acclaim, back)

        # ASF/AMC → BVH: the skeleton the ASF was made from (the root's name and the added bones are
        # noted in it), names verbatim (every name the ASF writer produces is a BVH name)
        asf_amc_to_bvh(d / "src.asf", d / "src.amc", d / "ab.bvh")
        back = read_bvh(d / "ab.bvh")
        made_from = from_asf_layout(acclaim)
        assert back.skeleton.names == made_from.skeleton.names
        assert np.array_equal(back.skeleton.parents, made_from.skeleton.parents)
        assert_same(made_from, back)


@st.composite
def acclaim_files(draw) -> tuple[str, str]:
    """A hand-written-style ASF/AMC pair: any axis orders, degrees or radians, limits (some
    open), a length unit, translation dofs, names any bone can have."""
    n = draw(st.one_of(st.integers(1, 8), st.integers(1, 120)))
    names = draw(st.lists(NAMES.filter(lambda s: asf_name_problem(s) is None), min_size=n, max_size=n, unique=True))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rad = draw(st.booleans())
    scale = np.pi / 180 if rad else 1.0
    orders = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
    parents = [-1 if i < 2 else int(rng.integers(-1, i)) for i in range(n)]  # -1: the root
    dofs = [list(rng.permutation(["rx", "ry", "rz", "tx", "ty", "tz"])[: rng.integers(0, 7)]) for _ in range(n)]
    r = lambda x: repr(float(x))  # noqa: E731
    lines = [":version 1.10", ":name hand made", ":units", "  mass 1.0", f"  length {r(rng.uniform(0.01, 3))}"]
    lines += [f"  angle {'rad' if rad else 'deg'}", ":root", "  order TX TY TZ RZ RX RY", f"  axis {orders[n % 6]}"]
    lines += [f"  position {' '.join(map(r, rng.normal(size=3) * 50))}"]
    lines += [f"  orientation {' '.join(map(r, rng.uniform(-90, 90, 3) * scale))}", ":bonedata"]
    for i, name in enumerate(names):
        direction = rng.normal(size=3)
        lines += ["  begin", f"    id {i + 1}", f"    name {name}", f"    direction {' '.join(map(r, direction))}"]
        lines += [f"    length {r(rng.uniform(0, 20))}"]
        lines += [f"    axis {' '.join(map(r, rng.uniform(-180, 180, 3) * scale))} {orders[int(rng.integers(6))]}"]
        if dofs[i]:
            lines.append("    dof " + " ".join(dofs[i]))
            pairs = []
            for d in dofs[i]:
                lo, hi = sorted(rng.uniform(-170, 170, 2) * (scale if d[0] == "r" else 1.0))
                pairs.append("(-inf inf)" if rng.random() < 0.3 else f"({r(lo)} {r(hi)})")
            lines += ["    limits " + pairs[0], *("           " + p for p in pairs[1:])]
        lines.append("  end")
    lines += [":hierarchy", "  begin"]
    for p in range(-1, n):
        kids = [names[i] for i in range(n) if parents[i] == p]
        if kids:
            lines.append(f"    {'root' if p < 0 else names[p]} " + " ".join(kids))
    lines.append("  end")
    amc = [":FULLY-SPECIFIED", ":RADIANS" if rad else ":DEGREES"]
    for f in range(draw(st.integers(1, 3))):
        amc += [
            str(f + 1),
            "root " + " ".join(map(r, np.r_[rng.normal(size=3) * 50, rng.uniform(-3, 3, 3)])),
        ]
        for name, ds in zip(names, dofs):
            if ds:
                values = [rng.uniform(-180, 180) * scale if d[0] == "r" else rng.uniform(-5, 5) for d in ds]
                amc.append(f"{name} " + " ".join(map(r, values)))
    return "\n".join(lines) + "\n", "\n".join(amc) + "\n"


@ROUND_TRIP
@given(files=acclaim_files())
def test_hand_written_acclaim_files_read_back_through_both_writers(files):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "src.asf").write_text(files[0], encoding="utf-8")
        (d / "src.amc").write_text(files[1], encoding="utf-8")
        src = read_asf_amc(d / "src.asf", d / "src.amc")

        write_asf_amc(src, d / "aa.asf", d / "aa.amc")
        back = read_asf_amc(d / "aa.asf", d / "aa.amc")
        assert_same_layout(src, back)
        assert back.skeleton.limits == src.skeleton.limits
        assert back.skeleton.meta["asf_units"]["length"] == src.skeleton.meta["asf_units"]["length"]
        assert_same(src, back)

        if not any(src.skeleton.channels):
            with pytest.raises(MocapWriteError, match="no joint has channels"):
                asf_amc_to_bvh(d / "src.asf", d / "src.amc", d / "ab.bvh")
            return
        asf_amc_to_bvh(d / "src.asf", d / "src.amc", d / "ab.bvh")
        back = read_bvh(d / "ab.bvh")
        assert back.skeleton.names == src.skeleton.names
        assert np.array_equal(back.skeleton.parents, src.skeleton.parents)
        assert_same(src, back)
