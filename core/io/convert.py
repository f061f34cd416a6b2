"""Conversion between BVH and ASF/AMC, and format-neutral ``load_motion``/``save_motion``.

Both directions keep the world position of every joint (and End Site) of the source; only
the representation changes:

- BVH → ASF/AMC (:func:`~.asf_amc.to_asf_layout`): BVH rest frames are world-aligned, so
  every bone gets ``axis 0 0 0 XYZ`` and its dof are the BVH rotation channels (rotation
  order reversed, the same numbers). A joint whose children start at different offsets
  gets fixed ``<child>_link`` bones (ASF children all start at their parent's end), extra
  End Sites get fixed ``<joint>_end`` bones. BVH position channels on non-root joints
  become ``tx ty tz`` dof on that bone (allowed by the Acclaim spec: displacement from the
  rest offset); many ASF viewers ignore bone translations, so such files (e.g. Bandai
  Namco's, where every joint has 6 channels) only play back fully in readers that honour
  them. Lossy: the root is always called ``root``; names become single words; the frame
  rate survives only through our writer's ``# Mocap Workbench fps`` comment.
- ASF/AMC → BVH (:func:`.bvh.to_bvh_layout`): BVH has no rest rotations, so they are baked:
  every local rotation becomes R·q·R⁻¹ (R the joint's world rest rotation), offsets are
  expressed in world-aligned axes, and a joint whose rest frame is turned gets all three
  rotation channels (``Zrotation Yrotation Xrotation``, as CMU's BVH conversions); fixed
  bones keep no channels. Lossy: joint limits (BVH has none), units, bone axes (the same
  motion, other Euler numbers).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..motion import Motion
from .asf_amc import read_amc, read_asf, write_asf_amc
from .bvh import read_bvh, to_bvh_layout, write_bvh

MOTION_SUFFIXES = (".bvh", ".amc")


def find_asf(amc_path: str | os.PathLike) -> Path:
    """The ASF skeleton for an AMC file: same name, else the only .asf in the folder, else the
    one whose name is the longest prefix of the AMC's (``01.asf`` for ``01_01.amc``).

    Raises FileNotFoundError when none or several candidates fit.
    """
    amc = Path(amc_path)
    same = amc.with_suffix(".asf")
    if same.exists():
        return same
    candidates = sorted(p for p in amc.parent.glob("*") if p.suffix.lower() == ".asf")
    if len(candidates) == 1:
        return candidates[0]
    prefixed = [p for p in candidates if amc.stem.lower().startswith(p.stem.lower())]
    best = [p for p in prefixed if len(p.stem) == max((len(q.stem) for q in prefixed), default=0)]
    if len(best) == 1:
        return best[0]
    found = ", ".join(p.name for p in candidates) or "none"
    raise FileNotFoundError(f"no unambiguous .asf for {amc.name} in {amc.parent} (found: {found}); pass it explicitly")


def load_motion(path: str | os.PathLike, asf: str | os.PathLike | None = None, fps: float | None = None) -> Motion:
    """Read a .bvh, or an .amc with its ASF (``asf``, default :func:`find_asf`).

    fps overrides the file's rate (BVH) or sets it (AMC, default 120). Raises
    MocapFormatError for malformed files, FileNotFoundError when the ASF cannot be found,
    ValueError for other extensions.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".bvh":
        motion = read_bvh(path)
        if fps is not None:
            motion.fps = float(fps)
        return motion
    if suffix == ".amc":
        return read_amc(path, read_asf(asf if asf is not None else find_asf(path)), fps)
    if suffix == ".asf":
        raise ValueError(f"{path.name}: an .asf holds only a skeleton; pass the .amc motion file")
    raise ValueError(f"{path.name}: unknown motion format {suffix!r} (expected .bvh or .amc)")


def save_motion(motion: Motion, path: str | os.PathLike, asf: str | os.PathLike | None = None) -> list[Path]:
    """Write ``motion`` as .bvh, or as .amc plus its .asf (``asf``, default next to it); returns the files written."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".bvh":
        write_bvh(motion, path)
        return [path]
    if suffix == ".amc":
        asf_path = Path(asf) if asf is not None else path.with_suffix(".asf")
        write_asf_amc(motion, asf_path, path)
        return [asf_path, path]
    raise ValueError(f"{path.name}: unknown motion format {suffix!r} (expected .bvh or .amc)")


def bvh_to_asf_amc(bvh_path: str | os.PathLike, asf_path: str | os.PathLike, amc_path: str | os.PathLike) -> Motion:
    """Convert a BVH file to an ASF/AMC pair; returns the motion as written."""
    return write_asf_amc(read_bvh(bvh_path), asf_path, amc_path)


def asf_amc_to_bvh(
    asf_path: str | os.PathLike, amc_path: str | os.PathLike, bvh_path: str | os.PathLike, fps: float | None = None
) -> Motion:
    """Convert an ASF/AMC pair to BVH; returns the motion as written."""
    motion = to_bvh_layout(read_amc(amc_path, read_asf(asf_path), fps))
    write_bvh(motion, bvh_path)
    return motion
