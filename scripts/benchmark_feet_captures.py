"""Feet that stand on every capture: each clip in ../shared/mocap retargeted onto each rig's skeleton.

    python scripts/benchmark_feet_captures.py [--markdown out.md] [--json out.json] [--match TEXT]

Sources: every .bvh under ../shared/mocap (CMU cgspeed walks, runs, dances and dribbling, CMU 3ds Max
names, Bandai Namco walks, run, dash, kick, punch and dance, Mixamo, Character Creator) and every
CMU ASF/AMC clip (with ``01.asf``). Targets: the skeletons of ``scripts/benchmark_retarget.py``'s
rigs (CMU cgspeed 02_01, CMU 3ds Max 131_01, Bandai Namco walk, Mixamo, Character Creator), a
clip's own file skipped. Automatic map, Plant Feet on; per pair the figures of
:func:`core.retarget.metrics.feet_figures` in % of the target's height: float of a contact joint
above its flat stance (max), floor penetration (max), ankle and toe skating of the source (× the
root scale) and of the result (% h/s), all on the source's contact frames; pops: the frames where
some mapped joint (toes included) steps more than 1 % of the height in one frame beyond its step
before planting (the source's step on the target's bones; on a scaled copy the source's × the root
scale), and the worst such step (% h). ``--match`` keeps the sources whose path contains TEXT.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.io.asf_amc import read_asf_amc  # noqa: E402
from core.io.bvh import read_bvh  # noqa: E402
from core.retarget import retarget, retarget_metrics  # noqa: E402
from scripts.benchmark_retarget import MOCAP  # noqa: E402
from scripts.benchmark_retarget import RIGS as TARGETS  # noqa: E402  (the cross-rig table's rigs)

FIGURES = ("float_max_h", "penetration_max_h", "skating_ankle_source_h", "skating_ankle_after_h",
           "skating_toe_source_h", "skating_toe_after_h")  # fmt: skip


def sources(match: str) -> dict:
    """relative path → a loader of the capture."""
    out = {str(p.relative_to(MOCAP)): (lambda p=p: read_bvh(p)) for p in sorted(MOCAP.rglob("*.bvh"))}
    asf = MOCAP / "cmu_asf_amc" / "01.asf"
    for p in sorted(MOCAP.glob("cmu_asf_amc/*.amc")):
        out[str(p.relative_to(MOCAP))] = lambda p=p: read_asf_amc(asf, p)
    return {k: v for k, v in out.items() if match in k}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--match", default="", help="only the sources whose path contains this")
    args = parser.parse_args()
    if not MOCAP.exists():
        raise SystemExit(f"real captures not found in {MOCAP}")
    started = time.perf_counter()
    targets = {name: read_bvh(MOCAP / path).skeleton for name, path in TARGETS.items()}
    rows = []
    for path, load in sources(args.match).items():
        motion = load()
        for name, skeleton in targets.items():
            if TARGETS[name] == path:
                continue
            figures = retarget_metrics(motion, retarget(motion, skeleton, target_up="y"))
            row = {"source": path, "target": name, "frames": motion.n_frames}
            row |= {key: 100 * figures[key] for key in FIGURES if key in figures}
            row |= {"pops": int(figures.get("pops", 0)), "pop_max_h": 100 * figures.get("pop_max_h", 0.0)}
            rows.append(row)
            print(f"{path:52s} {name:18s} float {row.get('float_max_h', float('nan')):5.2f} "
                  f"pops {row['pops']:4d} (worst {row['pop_max_h']:5.2f})", flush=True)  # fmt: skip
    lines = [
        "| source clip | target | frames | float max (% h) | penetration max (% h) | ankle skating source → result "
        "(% h/s) | toe skating source → result (% h/s) | pops (frames) | worst pop (% h) |",
        "|" + "---|" * 9,
    ]

    def pct(row, key):
        return f"{row[key]:.2f}" if key in row else "—"

    for r in rows:
        lines.append(
            f"| {r['source']} | {r['target']} | {r['frames']} | {pct(r, 'float_max_h')} | "
            f"{pct(r, 'penetration_max_h')} | {pct(r, 'skating_ankle_source_h')} → {pct(r, 'skating_ankle_after_h')} | "
            f"{pct(r, 'skating_toe_source_h')} → {pct(r, 'skating_toe_after_h')} | {r['pops']} | {r['pop_max_h']:.2f} |"
        )
    worst = max(rows, key=lambda r: r.get("float_max_h", 0.0))
    lines += [
        "",
        f"{len(rows)} pairs; worst float {worst.get('float_max_h', 0.0):.2f} % h ({worst['source']} → "
        f"{worst['target']}); worst penetration {max(r.get('penetration_max_h', 0.0) for r in rows):.2f} % h; "
        f"{sum(r.get('float_max_h', 0.0) > 1.0 for r in rows)} pairs float more than 1 %; "
        f"{sum(r['pops'] for r in rows)} frames with a pop in {sum(r['pops'] > 0 for r in rows)} pairs, worst "
        f"{max(r['pop_max_h'] for r in rows):.2f} % h. "
        f"Whole run: {time.perf_counter() - started:.0f} s.",
    ]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
