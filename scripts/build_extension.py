"""Build the installable extension zip with Blender's own extension tool (no Blender binary needed).

    python scripts/build_extension.py [OUTPUT_DIR]      (default: dist/)

Then in Blender: Edit > Preferences > Get Extensions > ⌄ > Install from Disk… and pick the zip.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist").resolve()
    out.mkdir(parents=True, exist_ok=True)
    import bpy  # noqa: F401  (makes Blender's bl_pkg importable)
    from bl_pkg import bl_extension_cli as cli

    code = cli.cli_extension_handler(["build", "--source-dir", str(ROOT), "--output-dir", str(out)])
    for zip_path in sorted(out.glob("mocap_workbench-*.zip")):
        print(zip_path)
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
