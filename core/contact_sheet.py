"""Contact sheets: a clip's keyframe poses as stick figures in a grid, frame numbers under each.

Drawn with numpy alone (no Blender, no GPU, no matplotlib), so a batch worker can make one for every
clip of a library. Every pose on a sheet is seen by **one camera**: orthographic, looking
horizontally at the front of the body as it stands at the first key (the lateral axis is the
rest pose's widest horizontal spread — the arms of a T or A pose — turned by the root's rotation
at that key). Each figure is centred on its root's horizontal position; the floor (the lowest
point of all the keyed poses) is at the same height in every cell, so jumps and crouches read as
such. Left limbs are blue, right red, the rest dark grey (sides from the joint names).
"""

from __future__ import annotations

import numpy as np

from . import quaternion as quat
from .keyframes.error import measured_points, pose_points
from .limbs import detect_up, split_side
from .motion import Motion, rest_world_rotations
from .skeleton import Skeleton, rest_positions

MAX_POSES = 24  # more keyframes than this are summarised for a sheet (see :func:`sheet_frames`)
BACKGROUND = (0.97, 0.97, 0.96)
FLOOR = (0.80, 0.80, 0.78)
INK = (0.15, 0.15, 0.17)
SIDE_COLOURS = {"L": (0.16, 0.38, 0.78), "R": (0.80, 0.20, 0.18), None: (0.22, 0.22, 0.25)}

# 5 × 7 pixel glyphs, one string of 7 rows of 5 bits per character.
_GLYPHS = {
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11110 00001 00001 01110 00001 00001 11110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    "-": "00000 00000 00000 11111 00000 00000 00000",
    " ": "00000 00000 00000 00000 00000 00000 00000",
}


def _glyph(char: str) -> np.ndarray:
    """(7, 5) bool bitmap of one character (unknown characters are blank)."""
    rows = _GLYPHS.get(char, _GLYPHS[" "]).split()
    return np.array([[bit == "1" for bit in row] for row in rows])


def draw_text(canvas: np.ndarray, text: str, centre_x: float, top: int, scale: int = 2, colour=INK) -> None:
    """Write ``text`` (digits, '-', space) into ``canvas`` (H, W, 3 floats) centred at ``centre_x``."""
    bitmap = np.concatenate([np.pad(_glyph(c), ((0, 0), (0, 1))) for c in text], axis=1)[:, :-1]
    bitmap = np.kron(bitmap, np.ones((scale, scale), dtype=bool))
    h, w = bitmap.shape
    x0 = int(round(centre_x - w / 2))
    y = slice(max(top, 0), min(top + h, canvas.shape[0]))
    x = slice(max(x0, 0), min(x0 + w, canvas.shape[1]))
    mask = bitmap[y.start - top : y.stop - top, x.start - x0 : x.stop - x0]
    canvas[y, x][mask] = colour


def draw_segments(canvas: np.ndarray, p0: np.ndarray, p1: np.ndarray, colours: np.ndarray, radius: float) -> None:
    """Anti-aliased round-capped lines into ``canvas`` (H, W, 3 floats in 0–1), in order.

    p0, p1: (S, 2) end points in pixels (x right, y down); colours: (S, 3). Coverage of a pixel is
    its centre's distance to the segment, ramped over one pixel at the edge.
    """
    h, w = canvas.shape[:2]
    for a, b, colour in zip(p0, p1, colours, strict=True):
        lo = np.floor(np.minimum(a, b) - radius - 1).astype(int).clip(0, [w, h])
        hi = np.ceil(np.maximum(a, b) + radius + 1).astype(int).clip(0, [w, h])
        if np.any(hi <= lo):
            continue
        ys, xs = np.mgrid[lo[1] : hi[1], lo[0] : hi[0]] + 0.5
        d = b - a
        t = ((xs - a[0]) * d[0] + (ys - a[1]) * d[1]) / max(float(d @ d), 1e-12)
        t = np.clip(t, 0.0, 1.0)
        dist = np.hypot(xs - (a[0] + t * d[0]), ys - (a[1] + t * d[1]))
        cover = np.clip(radius + 0.5 - dist, 0.0, 1.0)[..., None]
        block = canvas[lo[1] : hi[1], lo[0] : hi[0]]
        block[:] = block * (1.0 - cover) + np.asarray(colour) * cover


def stick_bones(skeleton: Skeleton) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """The figure's lines as index pairs into the heads-then-tips points of :func:`measured_points`:
    (S,) start, (S,) end, and each line's side ("L", "R" or None) from its joint's name."""
    points = measured_points(skeleton)
    j = skeleton.n_joints
    child = np.flatnonzero(skeleton.parents >= 0)
    tips = np.flatnonzero(np.array(points.kinds) == "tip")
    start = np.concatenate((skeleton.parents[child], points.owner[tips]))
    end = np.concatenate((child, tips))
    owner = np.concatenate((child, points.owner[tips]))
    sides = [split_side(skeleton.names[o])[0] for o in owner]
    keep = end < j + len(tips)
    return start[keep], end[keep], [s for s, k in zip(sides, keep, strict=True) if k]


def camera_axes(motion: Motion, first_key: int, posed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Unit screen axes (right (3,), up (3,)) in world space: see the module docstring.

    posed: (K, J, 3) world joint positions of the drawn poses, for the up axis (a rest pose need not
    stand); default the pose at ``first_key``."""
    sk = motion.skeleton
    if posed is None:
        posed = motion.frames(np.array([first_key])).world_positions()
    up = detect_up(sk, posed)
    rest = rest_positions(sk)
    flat = rest - np.outer(rest @ up, up)
    flat -= flat.mean(axis=0)
    _, _, vt = np.linalg.svd(flat, full_matrices=False)
    lateral = vt[0] - (vt[0] @ up) * up
    root_rest = rest_world_rotations(sk)[0]
    turn = quat.multiply(quat.multiply(root_rest, motion.rotations[first_key, 0]), quat.inverse(root_rest))
    lateral = quat.rotate(turn, lateral)
    lateral -= (lateral @ up) * up
    norm = np.linalg.norm(lateral)
    if norm < 1e-9:  # a skeleton with no horizontal spread: any horizontal axis
        lateral = np.cross(up, np.roll(up, 1))
        norm = np.linalg.norm(lateral)
    return lateral / norm, up


def contact_sheet(
    motion: Motion,
    keys: np.ndarray,
    frame_numbers: np.ndarray | None = None,
    columns: int | None = None,
    cell: tuple[int, int] = (140, 180),
) -> np.ndarray:
    """The contact sheet of ``motion`` at ``keys`` (K,) frame indices: an (H, W, 3) uint8 RGB image.

    frame_numbers: (K,) numbers printed under the poses (default: the keys). columns: poses per
    row (default: about a 4:3 sheet). cell: (width, height) of one pose's box in pixels.
    """
    keys = np.asarray(keys, dtype=int)
    if keys.ndim != 1 or keys.size == 0 or keys.min() < 0 or keys.max() >= motion.n_frames:
        raise ValueError(f"keys must be frame indices within 0–{motion.n_frames - 1}, got {keys}")
    numbers = keys if frame_numbers is None else np.asarray(frame_numbers)
    k = len(keys)
    columns = columns or max(1, min(k, int(np.ceil(np.sqrt(k * 4.0 / 3.0 * cell[1] / cell[0])))))
    rows = int(np.ceil(k / columns))
    cw, ch = cell
    label_h = 22
    canvas = np.empty((rows * ch, columns * cw, 3))
    canvas[:] = BACKGROUND

    pts = pose_points(motion.frames(keys))  # (K, P, 3), the joints first
    right, up = camera_axes(motion, keys[0], pts[:, : motion.skeleton.n_joints])
    start, end, sides = stick_bones(motion.skeleton)
    used = np.unique(np.concatenate((start, end)))
    x = pts @ right
    y = pts @ up
    x -= x[:, :1]  # each figure centred on its root
    floor = y[:, used].min()
    height = max(y[:, used].max() - floor, 1e-9)
    width = max(np.abs(x[:, used]).max() * 2.0, 1e-9)
    margin = 8
    scale = min((ch - label_h - 2 * margin) / height, (cw - 2 * margin) / width)
    colours = np.array([SIDE_COLOURS.get(s, SIDE_COLOURS[None]) for s in sides])
    radius = max(1.0, min(cw, ch) / 90.0)
    for i in range(k):
        col, row = i % columns, i // columns
        ox, base = col * cw + cw / 2.0, row * ch + ch - label_h - margin
        floor_y = base
        draw_segments(canvas, np.array([[col * cw + margin, floor_y]]), np.array([[col * cw + cw - margin, floor_y]]),
                      np.array([FLOOR]), 0.6)  # fmt: skip
        px = np.stack((ox + x[i] * scale, base - (y[i] - floor) * scale), axis=1)
        draw_segments(canvas, px[start], px[end], colours, radius)
        draw_text(canvas, str(int(numbers[i])), ox, row * ch + ch - label_h + 5)
    return np.round(np.clip(canvas, 0.0, 1.0) * 255).astype(np.uint8)


def sheet_frames(motion: Motion, keys: np.ndarray | None = None, limit: int = MAX_POSES) -> np.ndarray:
    """The frames a sheet draws: ``keys`` (0-based) when there are 2 to ``limit`` of them, else a summary
    of the clip (one pose a second within 4–24, :func:`core.library.catalogue.summary_frames`) — a
    hybrid's pose grid or a dense action holds too many to read."""
    from .library.catalogue import summary_frames

    if keys is not None and 2 <= len(keys) <= limit:
        return np.asarray(keys, dtype=int)
    return summary_frames(motion, limit)
