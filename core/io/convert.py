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
  them. For other readers the root is always called ``root`` and the frame rate survives only
  through our writer's ``# Mocap Workbench fps`` comment. Other names are kept, except those ASF
  cannot hold (spaces, ``# ( ) ,``, ``root``, ``end`` or a leading ``:``), which are
  percent-escaped reversibly: ``Bip01 L Thigh`` → ``Bip01%20L%20Thigh``
  (:func:`.names.unescape_name` gives the original back; see :mod:`.names`). Our ASF notes the
  root's name and the bones it added, and :func:`load_motion` (so ASF/AMC → BVH) takes them
  away again (:func:`~.asf_amc.from_asf_layout`): BVH → ASF/AMC → BVH gives back the same joints,
  offsets and motion.
- ASF/AMC → BVH (:func:`.bvh.to_bvh_layout`): BVH has no rest rotations, so they are baked:
  every local rotation becomes R·q·R⁻¹ (R the joint's world rest rotation), offsets are
  expressed in world-aligned axes, and a joint whose rest frame is turned gets all three
  rotation channels (``Zrotation Yrotation Xrotation``, as CMU's BVH conversions); fixed
  bones keep no channels. Lossy: joint limits (BVH has none), units, bone axes (the same
  motion, other Euler numbers). Names are kept verbatim; one BVH cannot hold (a ``{`` or a
  ``}`` inside a word, legal in ASF) is refused with :class:`.errors.MocapWriteError`
  naming the joint, before anything is written.

Every writer builds its whole file in memory and checks it first, so a refusal leaves no
file (an ASF/AMC pair: neither); numbers are written as the shortest text that reads back
exactly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..motion import Motion
from ..skeleton import Skeleton
from .asf_amc import DEFAULT_FPS, from_asf_layout, read_amc, read_asf, write_asf_amc
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


@dataclass
class AcclaimTakes:
    """An ASF skeleton and the AMC motions read for it (possibly none: the skeleton alone)."""

    asf: Path
    skeleton: Skeleton
    amcs: list[Path] = field(default_factory=list)
    motions: list[Motion] = field(default_factory=list)


def acclaim_selection(paths: list[str | os.PathLike]) -> tuple[Path, list[Path]]:
    """The skeleton and the motions among selected files: (the .asf, the .amc files in order).

    Without an .asf the one belonging to the motions is found with :func:`find_asf` (all of
    them must agree); with only an .asf there are no motions. Raises ValueError for other
    extensions, several skeletons or none, FileNotFoundError when no skeleton can be found.
    """
    files = [Path(p) for p in paths]
    if not files:
        raise ValueError("no files selected")
    other = [p.name for p in files if p.suffix.lower() not in (".asf", ".amc")]
    if other:
        raise ValueError(f"not an Acclaim file (.asf or .amc): {', '.join(other)}")
    skeletons = list(dict.fromkeys(p for p in files if p.suffix.lower() == ".asf"))
    motions = list(dict.fromkeys(p for p in files if p.suffix.lower() == ".amc"))
    if len(skeletons) > 1:
        raise ValueError(f"select one skeleton (.asf), not {len(skeletons)}: {', '.join(p.name for p in skeletons)}")
    if skeletons:
        return skeletons[0], motions
    found = {amc: find_asf(amc) for amc in motions}
    distinct = list(dict.fromkeys(found.values()))
    if len(distinct) > 1:
        pairs = ", ".join(f"{amc.name} → {asf.name}" for amc, asf in found.items())
        raise ValueError(f"the motions belong to different skeletons ({pairs}); select one .asf with them")
    return distinct[0], motions


def load_acclaim(paths: list[str | os.PathLike], default_fps: float = DEFAULT_FPS) -> AcclaimTakes:
    """Read and check every selected Acclaim file (see :func:`acclaim_selection`).

    default_fps: the frame rate of AMC files that do not note one (AMC has no frame-rate
    field; our writer notes it). Raises MocapFormatError for the first malformed file, and
    the errors of :func:`acclaim_selection`.
    """
    asf, amcs = acclaim_selection(paths)
    skeleton = read_asf(asf)
    motions = [read_amc(amc, skeleton, default_fps=default_fps) for amc in amcs]
    return AcclaimTakes(asf, skeleton, amcs, motions)


def load_motion(path: str | os.PathLike, asf: str | os.PathLike | None = None, fps: float | None = None) -> Motion:
    """Read a .bvh, or an .amc with its ASF (``asf``, default :func:`find_asf`).

    fps overrides the file's rate (BVH) or sets it (AMC, default 120). An AMC whose ASF our
    writer made from another skeleton comes back on that skeleton (:func:`.asf_amc.from_asf_layout`). Raises
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
    if suffix == ".amc":  # an ASF our writer made from a BVH gives that skeleton back
        return from_asf_layout(read_amc(path, read_asf(asf if asf is not None else find_asf(path)), fps))
    if suffix == ".asf":
        raise ValueError(f"{path.name}: an .asf holds only a skeleton; pass the .amc motion file")
    raise ValueError(f"{path.name}: unknown motion format {suffix!r} (expected .bvh or .amc)")


def load_asf_skeleton(path: str | os.PathLike) -> Skeleton:
    """The skeleton of an .asf, on the skeleton it was made from when our writer made it from another one
    (no ``_link`` or ``_end`` bones, the root's own name: :func:`.asf_amc.from_asf_layout`, as :func:`load_motion`
    does for its motions). Raises MocapFormatError for a malformed file."""
    return from_asf_layout(Motion.rest(read_asf(path), 1, DEFAULT_FPS)).skeleton


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
    motion = to_bvh_layout(from_asf_layout(read_amc(amc_path, read_asf(asf_path), fps)))
    write_bvh(motion, bvh_path)
    return motion
