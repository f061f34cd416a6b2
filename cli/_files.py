"""How every script writes files: never over one of its inputs (unless ``--force``), never over a
file it was not asked to write unless that file would not change, and atomically — into a
temporary file in the same folder, moved into place with ``os.replace`` only once it is complete,
so a failure leaves the old file (or none) and no half-written one.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ._arguments import UsageError, fail


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file: ``os.path.samefile`` where both exist, else the resolved paths."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def writable_path(path: Path) -> None:
    """UsageError when ``path`` cannot be a file: a folder, or under a file (``walk.bvh/sub/x.blend``)."""
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a folder")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"cannot write {path}: {parent} is a file, not a folder")
            return


def check_outputs(
    outputs: Iterable[str | os.PathLike | None],
    inputs: Iterable[str | os.PathLike | None],
    force: bool = False,
    hint: str = " (--force allows it)",
) -> None:
    """UsageError when an output is one of the inputs (unless ``force``), when two outputs are the
    same file, or when an output cannot be a file. None entries are skipped."""
    outs = [Path(p) for p in outputs if p is not None and str(p) != ""]
    ins = [Path(p) for p in inputs if p is not None and str(p) != ""]
    for i, out in enumerate(outs):
        writable_path(out)
        for other in outs[:i]:
            if same_file(out, other):
                raise UsageError(f"two outputs would be written to the same file {out}")
        if not force:
            for source in ins:
                if same_file(out, source):
                    raise UsageError(f"output {out} is also an input; refusing to replace it{hint}")


def ensure_folder(path: Path) -> None:
    """Create ``path`` (and its parents) as a folder; a file in the way is a UsageError."""
    writable_path(path / "_")
    path.mkdir(parents=True, exist_ok=True)


def _temporary(path: Path, token: str) -> Path:
    """A hidden sibling with the same suffix; targets written together share the token, so a writer
    that derives one from another (``x.amc`` → ``x.asf``) finds the matching temporary name."""
    return path.parent / f".{path.stem}.{token}.tmp{path.suffix}"


@contextmanager
def atomic(
    *targets: str | os.PathLike, guarded: Sequence[str | os.PathLike] = (), force: bool = False
) -> Iterator[list[Path]]:
    """Temporary paths for ``targets`` (same folders, same suffixes); once the block succeeds each is
    moved over its target with ``os.replace``; on any failure the temporary files are removed and
    the targets are untouched.

    ``guarded``: targets the user did not name (the .asf written beside an .amc). An existing one
    that would change is refused (UsageError, nothing replaced) unless ``force``; one that would
    stay byte-identical is left alone.
    """
    paths = [Path(t) for t in targets]
    for path in paths:
        ensure_folder(path.parent)
    token = secrets.token_hex(4)
    temps = [_temporary(p, token) for p in paths]
    keep = {Path(g).resolve() for g in guarded}
    try:
        yield temps
        for temp, path in zip(temps, paths):
            if not temp.is_file():
                raise OSError(f"{path}: the file was not written")
        moves = []
        for temp, path in zip(temps, paths):
            if path.resolve() in keep and path.exists():
                if path.read_bytes() == temp.read_bytes():
                    continue  # unchanged: leave the existing file (and its time stamp) alone
                if not force:
                    raise UsageError(
                        f"writing {paths[0].name} would replace {path}, a different file not asked for "
                        f"(e.g. a skeleton other takes share); choose another output or pass --force"
                    )
            moves.append((temp, path))
        for temp, path in moves:
            os.replace(temp, path)
    finally:
        for temp in temps:
            try:
                temp.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                pass


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    path = Path(path)
    with atomic(path) as (temp,):
        temp.write_bytes(data)
    return path


def write_json(path: str | os.PathLike, data) -> Path:
    """Write ``data`` as indented JSON to ``path`` atomically."""
    return write_text(path, json.dumps(data, indent=2, default=float))


def finish_batch(prog: str, out: Path, results: list[dict], failures: int) -> int:
    """Write a batch's ``summary.json`` in ``out`` and print its tally; the exit code (1 if any file failed,
    or the summary could not be written): how every per-file batch of the scripts ends."""
    summary = {"processed": len(results) - failures, "failed": failures, "results": results}
    try:
        write_json(out / "summary.json", summary)
    except OSError as exc:
        return fail(prog, f"cannot write the summary: {exc}", 1)
    print(f"Processed {len(results) - failures} of {len(results)} files, {failures} failed; summary in {out / 'summary.json'}")  # fmt: skip
    return 1 if failures else 0


def save_motion(motion, path: str | os.PathLike, force: bool = False) -> list[Path]:
    """The core's ``save_motion`` (.bvh, or .amc with the .asf beside it) written atomically; an
    existing .asf that would change is refused unless ``force``. Returns the files written."""

    from ..core.io.convert import save_motion as save

    path = Path(path)
    if path.suffix.lower() == ".amc":
        asf = path.with_suffix(".asf")
        with atomic(path, asf, guarded=[asf], force=force) as (temp, temp_asf):
            save(motion, temp, asf=temp_asf)
        return [asf, path]
    with atomic(path) as (temp,):
        save(motion, temp)
    return [path]


def save_blend(path: str | os.PathLike) -> Path:
    """Save Blender's open file as a copy at ``path`` (the open file's own path is unchanged),
    atomically; OSError when Blender did not write it."""
    import bpy

    path = Path(path)
    with atomic(path) as (temp,):
        result = bpy.ops.wm.save_as_mainfile(filepath=str(temp.resolve()), copy=True)
        if "FINISHED" not in result:
            raise OSError(f"{path}: Blender could not save the file")
    return path
