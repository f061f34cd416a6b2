"""``library``: a folder of clips processed in a batch, indexed, searched by pose, drawn as contact sheets.

    library process DIR -o OUT [--method M] [--count N | --ratio R | --per-second S] [--bvh]
                    [--retarget-onto FILE [--force-partial]] [--workers N | --scheduler ADDRESS] [--retries K]
    library index OUT_OR_DIR -o INDEX.jsonl [--workers N | --scheduler ADDRESS]
    library search INDEX --like CLIP [--frame F] [--top N]
    library sheet CLIP -o SHEET.png [--count N]

``process`` runs one task per clip (.bvh, .amc with its .asf) on Dask: by default an embedded
``LocalCluster`` of worker processes on 127.0.0.1 (``--workers``, default the CPU count), or any
running cluster (``--scheduler tcp://host:8786``: dask-jobqueue, Kubernetes, a studio's machines);
``--workers 0`` runs a plain loop in this process (no Dask needed). With ``--retarget-onto FILE``
each clip is first retargeted onto that file's skeleton (the Retarget pipeline, automatic map; a clip
whose core body cannot be mapped fails loudly unless ``--force-partial``). For every clip it writes, under
OUT with the clip's relative path: ``<clip>.json`` (its index entry and figures), ``<clip>.png``
(its contact sheet) and, with ``--bvh``, ``<clip>_keys.bvh`` (the clip rebuilt from its keys), each
atomically; with ``--blend`` (bpy on the workers) ``<clip>.blend``, written by the extract command's
Blender path; then ``index.jsonl`` and ``summary.json`` for the whole batch. A clip that fails
(an unreadable file: its file, line and problem) is reported and the others go on; a task whose
worker dies is retried on another worker, and reported after ``--retries`` deaths. A clip whose
``.json`` is newer than the clip and was made with the same options is skipped, so a killed batch
continues where it stopped. Exit status: 0, or 1 if any clip failed.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from ..core.io.convert import MOTION_SUFFIXES
from . import _arguments as A
from . import _files
from ._arguments import UsageError, have_bpy, script_args

PROG = "library"
WHOLE_POSE_METHODS = ("simplify", "optimal", "activity", "uniform", "threshold")


# --- files ----------------------------------------------------------------------------------------


def find_clips(folder: Path) -> list[Path]:
    """The clips under ``folder`` (recursively), sorted: .bvh and .amc files."""
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder")
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in MOTION_SUFFIXES and p.is_file())


def output_stem(source: Path, folder: Path, out: Path) -> Path:
    """OUT/<relative path without suffix> of a clip."""
    return out / source.relative_to(folder).with_suffix("")


# --- one clip (runs on a worker) -----------------------------------------------------------------


def summary_keys(motion, method: str, target: dict) -> tuple[np.ndarray, dict]:
    """Keyframes of ``motion`` by a whole-pose ``method`` for ``target`` ({"count"}, {"ratio"} or
    {"per_second"}) and their error summary (the one measure, the clip's length unit)."""
    from ..core.keyframes.distance import PoseMetric
    from ..core.keyframes.error import evaluate_keys
    from ..core.keyframes.extract import extract_keyframes
    from ..core.library.catalogue import summary_count

    if "per_second" in target:
        count = int(np.clip(round(target["per_second"] * motion.n_frames / motion.fps), 2, motion.n_frames))
        target = {"count": count}
    elif not target:
        target = {"count": summary_count(motion)}
    keys = extract_keyframes(motion, method, **target).keys
    error, _ = evaluate_keys(motion, keys, PoseMetric.for_motion(motion))
    return keys, error


def process_clip(source: str, stem: str, options: dict) -> dict:
    """Extract, draw and describe one clip; write its outputs next to ``stem``; return its entry as a
    dict with ``seconds``. An error in the clip is returned as {"file", "error"}, not raised."""
    from ..core.contact_sheet import contact_sheet
    from ..core.io.bvh import write_bvh
    from ..core.io.convert import load_motion
    from ..core.io.png import png_bytes
    from ..core.keyframes.reconstruct import reconstruct
    from ..core.library.catalogue import describe_clip

    start = time.perf_counter()
    try:
        motion = load_motion(source)
        if options.get("retarget_onto"):
            motion = retargeted(motion, options["retarget_onto"], options.get("force_partial", False))
        keys, error = summary_keys(motion, options["method"], options["target"])
    except (ValueError, OSError, MemoryError) as exc:  # MocapFormatError is a ValueError naming file and line
        return {"file": source, "error": " ".join(str(exc).split())}
    stem_path = Path(stem)
    sheet = stem_path.with_suffix(".png")
    _files.write_bytes(sheet, png_bytes(contact_sheet(motion, keys)))
    if options.get("bvh"):
        with _files.atomic(stem_path.with_name(stem_path.name + "_keys.bvh")) as (temp,):
            write_bvh(reconstruct(motion, keys), temp)
    if options.get("blend"):
        failure = write_blend(source, stem_path, options["method"], len(keys))
        if failure:
            return {"file": source, "error": failure}
    entry = describe_clip(motion, source, keys, error, sheet=sheet.name)
    record = {"entry": json.loads(entry.line()), "options": options, "seconds": time.perf_counter() - start}
    _files.write_json(stem_path.with_suffix(".json"), record)
    return record


def write_blend(source: str, stem: Path, method: str, count: int) -> str | None:
    """``<stem>.blend`` as Extract Keyframes makes it — the extract command's Blender path (Blender's
    importer, the dense action kept, a new sparse action of ``count`` keys by ``method``; bpy needed
    on the worker) with its report as ``<stem>_blend.json``. None, or what went wrong."""
    from . import _arguments, extract

    argv = ["extract", source, "-o", str(stem.with_suffix(".blend")), "--method", method, "--count", str(count),
            "--report", str(stem.with_name(stem.name + "_blend.json"))]  # fmt: skip
    code = _arguments.status(lambda: extract.main(argv), "library")
    return None if code == 0 else f"the .blend could not be written (extract exited with status {code})"


@functools.lru_cache(maxsize=4)
def _target_skeleton(path: str):
    from ..core.io.convert import load_motion

    return load_motion(path).skeleton


def retargeted(motion, target: str, force_partial: bool = False):
    """``motion`` played by the skeleton of the file ``target`` (read once per worker): the Retarget
    pipeline with its defaults and automatic map; a map missing the core body is an error (a
    :class:`~core.retarget.mapping.MappingError`, reported for the clip) unless ``force_partial``."""
    from ..core.retarget import RetargetOptions, retarget

    return retarget(motion, _target_skeleton(str(target)), options=RetargetOptions(allow_partial=force_partial)).motion


def up_to_date(source: Path, stem: Path, options: dict) -> dict | None:
    """The clip's earlier record if its .json is newer than the clip and was made with ``options``."""
    done = stem.with_suffix(".json")
    try:
        if done.stat().st_mtime < source.stat().st_mtime:
            return None
        record = json.loads(done.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if record.get("options") == options else None


# --- the batch ------------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on stderr (redrawn in a terminal, a line every 5 % elsewhere)."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.failed, self.stream = total, 0, 0, stream
        self.start, self._last = time.perf_counter(), -1
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def step(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += failed
        rate = self.done / max(time.perf_counter() - self.start, 1e-9) * 60.0
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} clips, "
                f"{self.failed} failed, {rate:.1f} clips/min")  # fmt: skip
        if self.tty:
            print("\r" + line, end="" if self.done < self.total else "\n", file=self.stream, flush=True)
        elif (tick := 20 * self.done // max(self.total, 1)) != self._last or self.done == self.total:
            self._last = tick
            print(line, file=self.stream, flush=True)


def run_batch(tasks: list[tuple], workers: int | None, scheduler: str | None, retries: int, progress: Progress,
              function=None) -> list:  # fmt: skip
    """Run ``function(*task)`` (default :func:`process_clip`) for every task; results in task order, a
    failure as {"file": task[0], "error"}.

    workers 0: a plain loop here. Else Dask: ``scheduler`` (an address) or a LocalCluster of
    ``workers`` single-threaded processes on 127.0.0.1 (None: one per CPU).
    """
    function = function or process_clip
    if workers == 0 and scheduler is None:
        out = []
        for task in tasks:
            try:
                out.append(function(*task))
            except Exception as exc:  # a clip that breaks the code is reported, the batch goes on
                out.append({"file": task[0], "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"})
            progress.step("error" in out[-1])
        return out
    try:
        import cloudpickle
        import dask
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UsageError(
            "batches need Dask: pip install 'dask[distributed]' (or --workers 0 for a plain loop)"
        ) from None
    from . import worker

    cloudpickle.register_pickle_by_value(worker)
    package = __package__.rsplit(".", 1)[0]  # this extension's name here: workers load it under the same
    root = str(Path(__file__).resolve().parents[1])
    with dask.config.set({"distributed.scheduler.allowed-failures": retries, "logging.distributed": "error"}):
        if scheduler:
            client, cluster = Client(scheduler), None
        else:
            n = workers or os.cpu_count() or 1
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None)  # fmt: skip
            client = Client(cluster)
        try:
            client.register_plugin(worker.PackageLoader(root, package))
            futures = {client.submit(function, *task, pure=False): i for i, task in enumerate(tasks)}
            out: list = [None] * len(tasks)
            for future in as_completed(futures):
                i = futures[future]
                try:
                    out[i] = future.result()
                except Exception as exc:  # a worker died too often (KilledWorker) or the task crashed
                    out[i] = {"file": tasks[i][0], "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
                progress.step("error" in out[i])
            return out
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def process(args: argparse.Namespace) -> int:
    folder, out = Path(args.folder), Path(args.output)
    if out.resolve() == folder.resolve():
        raise UsageError("the output folder must not be the input folder")
    inside = out.resolve()
    clips = [c for c in find_clips(folder) if inside not in c.resolve().parents]  # not earlier outputs
    if not clips:
        raise UsageError(f"no .bvh or .amc clips under {folder}")
    options = {"method": args.method, "target": target_of(args), "bvh": bool(args.bvh), "blend": bool(args.blend)}
    if args.blend and args.retarget_onto:
        raise UsageError("--blend writes each clip as Extract Keyframes does; it does not take --retarget-onto")
    if args.blend and not have_bpy():
        raise UsageError("--blend needs Blender's Python module here and on every worker (pip install bpy)")
    if args.retarget_onto:
        target = Path(args.retarget_onto)
        if not target.is_file():
            raise UsageError(f"--retarget-onto: no such file {target}")
        options.update(retarget_onto=str(target.resolve()), force_partial=bool(args.force_partial))
    for stale in out.rglob(".*.tmp*") if out.is_dir() else ():  # left by a batch that was killed
        if stale.is_file():
            stale.unlink()
    results: list = [None] * len(clips)
    tasks, where = [], []
    for i, clip in enumerate(clips):
        stem = output_stem(clip, folder, out)
        earlier = up_to_date(clip, stem, options)
        if earlier is not None:
            results[i] = {**earlier, "skipped": True}
        else:
            tasks.append((str(clip), str(stem), options))
            where.append(i)
    skipped = len(clips) - len(tasks)
    print(f"{PROG}: {len(clips)} clips, {skipped} up to date, {len(tasks)} to process", file=sys.stderr)
    start = time.perf_counter()
    for i, result in zip(where, run_batch(tasks, args.workers, args.scheduler, args.retries,
                                          Progress(len(tasks))), strict=True):  # fmt: skip
        results[i] = result
    seconds = time.perf_counter() - start
    return summarise(results, out, seconds, len(tasks))


def summarise(results: list[dict], out: Path, seconds: float, processed: int) -> int:
    """Print the per-clip figures and failures; write index.jsonl and summary.json; 1 if any failed."""
    from ..core.library.catalogue import ClipEntry

    failures = [r for r in results if "error" in r]
    entries = [ClipEntry.parse(json.dumps(r["entry"])) for r in results if "entry" in r]
    for r in results:
        if "entry" in r:
            e = r["entry"]
            print(f"  {e['file']}: {e['frames']} frames, {len(e['keyframes'])} keys, error mean {e['error_mean']:.4g} "
                  f"max {e['error_max']:.4g}{' (up to date)' if r.get('skipped') else ''}")  # fmt: skip
    for f in failures:
        print(f"  FAILED {f['file']}: {f['error']}")
    _files.write_text(out / "index.jsonl", "".join(e.line() + "\n" for e in entries))
    summary = {"clips": len(results), "processed": processed, "failed": len(failures), "seconds": seconds,
               "clips_per_minute": processed / seconds * 60.0 if seconds > 0 else None,
               "failures": failures}  # fmt: skip
    _files.write_json(out / "summary.json", summary)
    print(f"{PROG}: {len(results) - len(failures)} of {len(results)} clips done, {len(failures)} failed; "
          f"{processed} processed in {seconds:.1f} s; index {out / 'index.jsonl'}")  # fmt: skip
    return 1 if failures else 0


def target_of(args: argparse.Namespace) -> dict:
    if args.count is not None:
        return {"count": args.count}
    if args.ratio is not None:
        return {"ratio": args.ratio}
    if args.per_second is not None:
        return {"per_second": args.per_second}
    return {}


# --- index, search, sheet ------------------------------------------------------------------------


def index(args: argparse.Namespace) -> int:
    """Gather the entries of a processed folder, or describe the clips of a raw one, into one index."""
    from ..core.library.catalogue import ClipEntry

    folder, target = Path(args.folder), Path(args.output)
    records = sorted(folder.rglob("*.json"))
    entries = []
    for path in records:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "entry" in data:
            entries.append(ClipEntry.parse(json.dumps(data["entry"])))
    if not entries:  # a folder of raw clips: describe them (summary keyframes, no other output)
        clips = find_clips(folder)
        if not clips:
            raise UsageError(f"no processed clips (.json) and no .bvh or .amc clips under {folder}")
        results = [describe_file(c) for c in clips]
        for r in results:
            if "error" in r:
                print(f"  FAILED {r['file']}: {r['error']}")
        entries = [ClipEntry.parse(json.dumps(r["entry"])) for r in results if "entry" in r]
    _files.write_text(target, "".join(e.line() + "\n" for e in entries))
    searchable = sum(e.poses is not None for e in entries)
    print(f"{PROG}: {len(entries)} clips indexed ({searchable} searchable by pose) in {target}")
    return 0


def describe_file(path: Path) -> dict:
    from ..core.io.convert import load_motion
    from ..core.library.catalogue import describe_clip

    try:
        return {"entry": json.loads(describe_clip(load_motion(path), str(path)).line())}
    except (ValueError, OSError) as exc:
        return {"file": str(path), "error": " ".join(str(exc).split())}


def search(args: argparse.Namespace) -> int:
    from ..core.io.convert import load_motion
    from ..core.library.catalogue import describe_clip, read_index
    from ..core.library.poses import pose_directions
    from ..core.library.search import PoseLibrary
    from ..core.retarget.mapping import label_skeleton

    entries = read_index(args.index)
    like = Path(args.like)
    itself = [e for e in entries if Path(e.file).resolve() == like.resolve() or e.file == args.like
              or Path(e.file).name == args.like]  # fmt: skip
    others = [e for e in entries if e not in itself]  # the query clip itself is not an answer
    if not others:
        raise UsageError(f"{args.index} holds no clip but the query")
    library = PoseLibrary.build([e.file for e in others], [e.pose_array() for e in others])
    if like.exists():
        motion = load_motion(like)
        if args.frame is not None:
            if not 0 <= args.frame < motion.n_frames:
                raise UsageError(f"--frame {args.frame} is outside {like} (frames 0–{motion.n_frames - 1})")
            labels, _ = label_skeleton(motion.skeleton)
            query = pose_directions(motion, labels, np.array([args.frame]))
        else:
            query = describe_clip(motion, str(like)).pose_array()
            if query is None:
                raise UsageError(f"{like}: the body could not be labelled, so it cannot be searched by pose")
    else:
        named = itself
        if not named or named[0].pose_array() is None:
            raise UsageError(f"{args.like} is neither a file nor a searchable clip of the index")
        query = named[0].pose_array()
        if args.frame is not None:
            keys = np.asarray(named[0].keyframes)
            query = query[[int(np.argmin(np.abs(keys - args.frame)))]]
    start = time.perf_counter()
    ranked = library.rank(query, single_pose=args.frame is not None, top=args.top)
    seconds = time.perf_counter() - start
    for name, score in ranked:
        print(f"{np.degrees(score):8.2f}°  {name}")
    print(f"{PROG}: {len(library.names)} clips searched in {seconds * 1000:.1f} ms (mean segment angle)",
          file=sys.stderr)  # fmt: skip
    return 0


def sheet(args: argparse.Namespace) -> int:
    from ..core.contact_sheet import contact_sheet
    from ..core.io.convert import load_motion
    from ..core.io.png import png_bytes

    motion = load_motion(args.clip)
    keys, _ = summary_keys(motion, "simplify", {} if args.count is None else {"count": args.count})
    if Path(args.output).resolve() == Path(args.clip).resolve():
        raise UsageError("the output is the input clip; refusing to replace it")
    _files.write_bytes(args.output, png_bytes(contact_sheet(motion, keys)))
    print(f"{PROG}: {len(keys)} keyframe poses drawn in {args.output}")
    return 0


# --- arguments ------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = A.Parser(prog=PROG, description=__doc__.split("\n\n")[0].strip(), formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="action", required=True, parser_class=A.Parser)
    pr = sub.add_parser("process", help="extract keyframes, sheets and index entries of every clip in a folder")
    pr.add_argument("folder", help="folder of .bvh / .amc clips (searched recursively)")
    pr.add_argument("-o", "--output", required=True, help="output folder")
    pr.add_argument("--method", default="simplify", choices=WHOLE_POSE_METHODS, help="keyframe method")
    target = pr.add_mutually_exclusive_group()
    target.add_argument("--count", type=A.count, help="keyframes per clip")
    target.add_argument("--ratio", type=A.ratio, help="keyframes as a share of frames")
    target.add_argument("--per-second", type=A.positive, help="keyframes per second (default: 1, 4–24 a clip)")
    pr.add_argument("--bvh", action="store_true", help="also write each clip rebuilt from its keys")
    pr.add_argument("--blend", action="store_true",
                    help="also write each clip's .blend with its sparse action, as Extract Keyframes (needs bpy)")  # fmt: skip
    pr.add_argument("--retarget-onto", metavar="FILE",
                    help="retarget every clip onto this .bvh/.amc's skeleton first (automatic map)")  # fmt: skip
    pr.add_argument("--force-partial", action="store_true",
                    help="with --retarget-onto: retarget even when the map misses part of the core body")  # fmt: skip
    where = pr.add_mutually_exclusive_group()
    where.add_argument("--workers", type=A.index, help="local worker processes (0: a plain loop here)")
    where.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786")
    pr.add_argument("--retries", type=A.index, default=3, help="worker deaths a clip survives (default 3)")
    ix = sub.add_parser("index", help="write the index of a processed (or raw) folder")
    ix.add_argument("folder")
    ix.add_argument("-o", "--output", required=True, help="index file (JSON Lines)")
    se = sub.add_parser("search", help="rank the indexed clips by keyframe-pose similarity")
    se.add_argument("index", help="index file written by 'library index' or 'library process'")
    se.add_argument("--like", required=True, help="a clip file, or a clip of the index (its file or name)")
    se.add_argument("--frame", type=A.index, help="search for the pose at this frame (0-based)")
    se.add_argument("--top", type=A.count, default=10, help="clips to list (default 10)")
    sh = sub.add_parser("sheet", help="draw the contact sheet of one clip")
    sh.add_argument("clip")
    sh.add_argument("-o", "--output", required=True, help="PNG file")
    sh.add_argument("--count", type=A.count, help="keyframe poses (default: one a second, 4–24)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``library …`` with argv as ``sys.argv`` (see :func:`._arguments.script_args`)."""
    return command(script_args(argv))


def command(argv: list[str]) -> int:
    """Run ``library …`` (argv without the program's name); 0, 1 (a clip or the search failed) or 2 (usage)."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    actions = {"process": process, "index": index, "search": search, "sheet": sheet}
    try:
        return actions[args.action](args)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
