"""Convert motion files between BVH and ASF/AMC, one file or a whole folder.

The command's code is ``cli/convert.py`` (shipped in the extension: ``blender -c mocap_workbench convert …``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return _package.command("convert").main(argv)


if __name__ == "__main__":
    _package.run("convert", "convert.py")
