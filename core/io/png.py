"""PNG encoding of an RGB(A) image array, with the standard library only (zlib), for pictures made
without Blender or matplotlib (contact sheets)."""

from __future__ import annotations

import struct
import zlib

import numpy as np


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC of type + data (PNG spec §5.3)."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(image: np.ndarray, level: int = 6) -> bytes:
    """The PNG file of ``image``: (H, W, 3) or (H, W, 4) uint8, row 0 at the top.

    Every row uses filter 0 (none) — a sheet of flat colours compresses well without the others.
    """
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] not in (3, 4) or 0 in image.shape[:2]:
        raise ValueError(f"expected a non-empty (H, W, 3|4) uint8 image, got {image.dtype} {image.shape}")
    h, w, c = image.shape
    rows = np.concatenate((np.zeros((h, 1), np.uint8), image.reshape(h, w * c)), axis=1)
    header = struct.pack(">IIBBBBB", w, h, 8, 2 if c == 3 else 6, 0, 0, 0)
    return b"".join((
        b"\x89PNG\r\n\x1a\n",
        _chunk(b"IHDR", header),
        _chunk(b"IDAT", zlib.compress(rows.tobytes(), level)),
        _chunk(b"IEND", b""),
    ))  # fmt: skip
