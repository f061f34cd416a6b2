"""Retarget motion capture onto another skeleton headless: BVH/AMC or .blend armatures, one file or a folder.

The command's code is ``cli/retarget.py`` (shipped in the extension: ``blender -c mocap_workbench retarget …``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return _package.command("retarget").main(argv)


if __name__ == "__main__":
    _package.run("retarget", "retarget.py")
