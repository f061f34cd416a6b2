from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from core import synthetic
from core.io import MocapFormatError
from core.io.bvh import read_bvh, write_bvh
from tests.conftest import shared_file

SMALL = """HIERARCHY
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
}
MOTION
Frames: 2
Frame Time: 0.04
1 2 3 10 20 30 40 50 60
4 5 6 0 0 0 0 0 90
"""


def write(tmp_path: Path, text: str, newline: str = "\n") -> Path:
    path = tmp_path / "clip.bvh"
    path.write_bytes(text.replace("\n", newline).encode())
    return path


def test_reads_channels_with_bvh_convention(tmp_path):
    m = read_bvh(write(tmp_path, SMALL))
    assert m.skeleton.names == ("Hips", "Spine") and m.n_frames == 2 and np.isclose(m.fps, 25)
    assert np.allclose(m.translations[0, 0], [1, 2, 3]) and np.allclose(m.translations[:, 1], [0, 10, 0])
    # BVH "Zrotation Xrotation Yrotation" = intrinsic ZXY = scipy's upper-case "ZXY"
    ref = Rotation.from_euler("ZXY", [10, 20, 30], degrees=True).as_quat()
    assert np.isclose(abs(np.dot(m.rotations[0, 0], np.r_[ref[3], ref[:3]])), 1)
    ref = Rotation.from_euler("YXZ", [40, 50, 60], degrees=True).as_quat()
    assert np.isclose(abs(np.dot(m.rotations[0, 1], np.r_[ref[3], ref[:3]])), 1)
    assert m.skeleton.end_site_parents.tolist() == [1] and np.allclose(m.skeleton.end_site_offsets, [[0, 5, 0]])
    # frame 2: Spine turned 90° about Z moves the End Site from +Y to −X
    pos = m.world_positions()
    assert np.allclose(pos[1, 1], [4, 15, 6])


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings_and_tabs(tmp_path, newline):
    a = read_bvh(write(tmp_path, SMALL, newline))
    mixed = SMALL.replace("\t", "  ").split("\n")
    text = "\r\n".join(mixed[:5]) + "\r\n" + "\n".join(mixed[5:])
    b = read_bvh(write(tmp_path, text))
    assert np.allclose(a.rotations, b.rotations) and np.allclose(a.translations, b.translations)


def test_round_trip_of_generated_motion_with_odd_channel_layouts(tmp_path):
    m = synthetic.walk(60)
    layouts = []
    for j, p in enumerate(m.skeleton.parents):
        if p < 0:
            layouts.append(("Yrotation", "Xposition", "Zrotation", "Yposition", "Xrotation", "Zposition"))
        elif j % 3 == 0:
            layouts.append(("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"))
        else:
            layouts.append(
                ("Zrotation", "Xrotation", "Yrotation") if j % 2 else ("Yrotation", "Zrotation", "Xrotation")
            )
    sk = m.skeleton
    sk.channels = tuple(layouts)
    write_bvh(m, tmp_path / "a.bvh")
    back = read_bvh(tmp_path / "a.bvh")
    assert back.skeleton.channels == sk.channels
    assert np.allclose(np.abs(np.sum(back.rotations * m.rotations, -1)), 1, atol=1e-12)
    assert np.allclose(back.world_positions(), m.world_positions(), atol=1e-6)


@pytest.mark.parametrize(
    "relative",
    ["cmu_bvh_cgspeed/05_02.bvh", "cmu_bvh_3dsmax/131_01.bvh", "bandai_namco_1/dataset-1_walk_normal_001.bvh"],
)
def test_real_capture_read_write_read(tmp_path, relative):
    path = shared_file(relative)
    m = read_bvh(path)
    write_bvh(m, tmp_path / "out.bvh")
    back = read_bvh(tmp_path / "out.bvh")
    assert back.skeleton.names == m.skeleton.names and back.n_frames == m.n_frames
    assert np.isclose(back.fps, m.fps)
    assert np.abs(back.translations - m.translations).max() < 1e-6
    assert np.allclose(np.abs(np.sum(back.rotations * m.rotations, -1)), 1, atol=1e-12)
    assert np.abs(back.world_positions() - m.world_positions()).max() < 1e-5


def test_bandai_has_position_channels_on_every_joint():
    m = read_bvh(shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh"))
    assert m.skeleton.has_position_channels.all()
    hips = m.skeleton.index("Hips")
    assert np.ptp(m.translations[:, hips], axis=0).max() > 10  # Hips moves under a static joint_Root


def test_cmu_mixed_line_endings_parse():
    path = shared_file("cmu_bvh_cgspeed/05_01.bvh")
    raw = path.read_bytes()
    assert b"\r\n" in raw and b"\n" in raw.replace(b"\r\n", b"")
    m = read_bvh(path)
    assert m.n_frames == 599 and m.skeleton.n_joints == 31 and len(m.skeleton.end_site_parents) == 7


BAD = [
    (SMALL.replace("Frames: 2", "Frames: 3"), 20, "truncated"),
    (SMALL.replace("4 5 6 0 0 0 0 0 90", "4 5 6 0 0 0 0 0"), 20, "expected 9 values"),
    (SMALL.replace("4 5 6 0 0 0 0 0 90", "4 5 six 0 0 0 0 0 90"), 20, "'six' is not a number"),
    (SMALL.replace("4 5 6 0 0 0 0 0 90", "4 5 nan 0 0 0 0 0 90"), 20, "not finite"),
    (SMALL.replace("Yrotation Xrotation Zrotation", "Yrotation Wrotation Zrotation"), 9, "unknown channel 'Wrotation'"),
    (SMALL.replace("\t\t}\n\t}\n}", "\t\t}\n\t}"), 15, "unbalanced"),
    (SMALL.replace("Frames: 2", "Frames: 0"), 17, "positive whole number"),
    (SMALL.replace("Frame Time: 0.04", "Frame Time: 0"), 18, "must be positive"),
    (SMALL.replace("Frame Time: 0.04", "Frame Time: -1"), 18, "must be positive"),
    (SMALL.replace("OFFSET 0 10 0", "OFFSET 0 ten 0"), 8, "expected a number"),
    (SMALL.replace("HIERARCHY", "HIERARCHI"), 1, "HIERARCHY"),
    ("", 1, "empty"),
    (SMALL.split("MOTION")[0], None, "no MOTION"),
]


@pytest.mark.parametrize(("text", "line", "words"), BAD)
def test_malformed_input_names_file_line_and_problem(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(MocapFormatError) as info:
        read_bvh(path)
    err = info.value
    assert err.path == str(path) and words in err.problem
    if line is not None:
        assert err.line == line
    assert str(path) in str(err)


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(MocapFormatError, match="cannot read"):
        read_bvh(tmp_path / "nope.bvh")


def test_round_trip_of_two_rotation_channels_beyond_90_degrees(tmp_path):
    """A joint with only ``Zrotation Xrotation`` and x = 120° used to come back as (-150, 60)."""
    text = SMALL.replace("CHANNELS 3 Yrotation Xrotation Zrotation", "CHANNELS 2 Zrotation Xrotation")
    text = text.replace("40 50 60\n", "30 120\n").replace("0 0 90\n", "-170 -100\n")
    m = read_bvh(write(tmp_path, text))
    write_bvh(m, tmp_path / "b.bvh")
    values = np.array((tmp_path / "b.bvh").read_text().split()[-16:], float)[[6, 7, 14, 15]]
    assert np.allclose((values - [30, 120, -170, -100] + 180) % 360 - 180, 0)  # unwrapped over time
    back = read_bvh(tmp_path / "b.bvh")
    assert np.allclose(np.abs(np.sum(back.rotations * m.rotations, -1)), 1)
