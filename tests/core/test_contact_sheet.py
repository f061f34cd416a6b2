"""Contact sheets drawn with numpy (core/contact_sheet.py) and the PNG encoder (core/io/png.py),
read back with an independent decoder (matplotlib's)."""

import io

import numpy as np
import pytest

from core import quaternion as quat
from core.contact_sheet import SIDE_COLOURS, camera_axes, contact_sheet, draw_segments, stick_bones
from core.io.png import png_bytes
from core.motion import Motion
from core.synthetic import humanoid, walk

mpimg = pytest.importorskip("matplotlib.image")


def decoded(data: bytes) -> np.ndarray:
    return np.round(mpimg.imread(io.BytesIO(data), format="png") * 255).astype(np.uint8)


@pytest.mark.parametrize("channels", [3, 4])
def test_png_round_trip(channels):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, size=(37, 53, channels), dtype=np.uint8)
    back = decoded(png_bytes(image))
    assert back.shape == image.shape
    assert np.array_equal(back, image)


@pytest.mark.parametrize("bad", [np.zeros((4, 4, 3)), np.zeros((4, 4), np.uint8), np.zeros((0, 4, 3), np.uint8)])
def test_png_refuses_what_it_cannot_encode(bad):
    with pytest.raises(ValueError, match="uint8"):
        png_bytes(bad)


def test_a_segment_is_drawn_where_it_lies():
    canvas = np.ones((20, 30, 3))
    draw_segments(canvas, np.array([[5.0, 10.0]]), np.array([[25.0, 10.0]]), np.array([[0.0, 0.0, 0.0]]), 2.0)
    dark = canvas.mean(axis=2) < 0.5
    rows, cols = np.nonzero(dark)
    assert rows.min() >= 7 and rows.max() <= 12  # radius 2 around y = 10 (pixel centres at .5)
    assert cols.min() >= 2 and cols.max() <= 27  # round caps reach 2 px past the ends
    assert dark[9, 15] and dark[10, 15] and not dark[3, 15]


def test_every_bone_and_leaf_tip_is_a_line_with_its_side():
    sk = humanoid()
    start, end, sides = stick_bones(sk)
    assert len(start) == len(end) == len(sides) == sk.n_joints - 1 + len(sk.end_site_parents)
    names = [sk.names[j] if j < sk.n_joints else "" for j in end]
    for name, side in zip(names, sides):
        if name.lower().startswith("left"):
            assert side == "L"
        if name.lower().startswith("right"):
            assert side == "R"


def test_the_camera_looks_at_the_front_of_the_first_pose_and_turns_with_it():
    sk = humanoid()
    m = Motion.rest(sk, 2)
    right, up = camera_axes(m, 0)
    assert abs(right @ up) < 1e-12 and np.isclose(np.linalg.norm(right), 1.0)
    rest = m.world_positions()[0]
    # the shoulders' (or hips') spread is across the screen, not along the line of sight
    spread = rest.max(axis=0) - rest.min(axis=0)
    assert abs(right @ (spread * (1 - np.abs(up)))) > 0.5 * np.linalg.norm(spread * (1 - np.abs(up)))
    m.rotations[1, 0] = quat.from_axis_angle(up, np.pi / 2)  # the body turned a quarter on frame 1
    turned, _ = camera_axes(m, 1)
    assert abs(turned @ right) < 1e-9


def test_sheet_has_one_figure_per_key_with_both_sides_drawn():
    m = walk(n_frames=90)
    keys = np.array([0, 20, 45, 70, 89])
    img = contact_sheet(m, keys, columns=3, cell=(120, 160))
    assert img.shape == (2 * 160, 3 * 120, 3) and img.dtype == np.uint8
    blue = np.round(np.array(SIDE_COLOURS["L"]) * 255)
    red = np.round(np.array(SIDE_COLOURS["R"]) * 255)
    for i in range(6):
        cell = img[(i // 3) * 160 : (i // 3 + 1) * 160, (i % 3) * 120 : (i % 3 + 1) * 120].astype(int)
        has_blue = np.any(np.abs(cell - blue).sum(axis=2) < 30)
        has_red = np.any(np.abs(cell - red).sum(axis=2) < 30)
        assert (has_blue and has_red) == (i < len(keys))  # the sixth cell stays empty
    data = png_bytes(img)
    assert np.array_equal(decoded(data), img)


def test_sheet_refuses_keys_outside_the_clip():
    m = walk(n_frames=30)
    with pytest.raises(ValueError, match="frame indices"):
        contact_sheet(m, np.array([0, 30]))
