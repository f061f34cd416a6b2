"""A folder of clips as a library: batches on Dask, an index, search by pose, contact sheets.

The command's code is ``cli/library.py`` (shipped in the extension: ``blender -c mocap_workbench library …``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return _package.command("library").main(argv)


if __name__ == "__main__":
    _package.run("library", "library.py")
