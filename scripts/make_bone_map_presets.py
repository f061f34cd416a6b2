"""Write the bone map presets shipped with the extension, one per naming convention of
core/retarget/mapping.py (``CONVENTIONS``), into addon/retarget/presets/mocap_workbench/bone_maps.

    python scripts/make_bone_map_presets.py

Run it after adding a convention; tests/blender/test_retarget_presets.py checks the folder holds
exactly what this writes. A preset names only its convention: the bone names come from the table
when it is applied, so changing a table needs no new files.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.retarget.presets import shipped_presets  # noqa: E402

FOLDER = ROOT / "addon" / "retarget" / "presets" / "mocap_workbench" / "bone_maps"


def main() -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    wanted = shipped_presets()
    for stale in [p for p in FOLDER.glob("*.py") if p.name not in wanted]:
        stale.unlink()
        print(f"removed {stale.name}")
    for name, text in wanted.items():
        path = FOLDER / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
