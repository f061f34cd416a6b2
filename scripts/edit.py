"""Edit motion files headless (MotionPro operations): BVH or ASF/AMC in, BVH or .amc (+ .asf) out.

The command's code is ``cli/edit.py`` (shipped in the extension: ``blender -c mocap_workbench edit …``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return _package.command("edit").main(argv)


if __name__ == "__main__":
    _package.run("edit", "edit.py")
