"""Extract keyframes headless: a BVH, a .blend or .fbx armature, a folder of BVH files, or the demo clip.

The command's code is ``cli/extract.py`` (shipped in the extension: ``blender -c mocap_workbench extract …``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _package  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return _package.command("extract").main(argv)


if __name__ == "__main__":
    _package.run("extract", "extract_keyframes.py")
