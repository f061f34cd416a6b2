"""A folder of clips as a library: batch processing on Dask, an index, search by pose, contact sheets.

    python scripts/library.py process DIR -o OUT [--workers N | --scheduler ADDRESS] …
    python scripts/library.py index OUT -o index.jsonl
    python scripts/library.py search index.jsonl --like CLIP [--frame F]
    python scripts/library.py sheet CLIP -o sheet.png

The same command as ``blender -c mocap_workbench library …`` (see cli/library.py for every option).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _arguments  # noqa: E402
import _package  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    _package.load()
    from mocap_workbench.cli import library

    return library.command(_package.script_args(argv))


if __name__ == "__main__":
    _arguments.run(main, "library")
