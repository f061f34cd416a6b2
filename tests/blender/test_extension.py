"""The extension as Blender sees it: enabled from an extensions repository, UI registered."""

import json

import bpy
import pytest

from tests.blender.conftest import PACKAGE, ROOT


def test_enabled_as_an_extension(ext):
    assert ext.__name__ == PACKAGE
    import addon_utils

    assert PACKAGE in {m.__name__ for m in addon_utils.modules()}
    assert bpy.context.preferences.addons.get(PACKAGE) is not None


def test_manifest_is_valid_for_blender():
    import tomllib

    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    assert manifest["id"] == "mocap_workbench" and manifest["blender_version_min"] == "4.2.0"
    assert len(manifest["tagline"]) <= 64 and not manifest["tagline"].endswith((".", "!"))
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"] and "Version 3" in (ROOT / "LICENSE").read_text()
    defaults = ["__pycache__/", ".*", "/*.zip", "*.blend[1-9]"]  # Blender's, replaced by a custom list
    assert manifest["build"]["paths_exclude_pattern"][:4] == defaults


def test_operator_and_panels_registered():
    op = bpy.types.MOCAP_OT_extract_keyframes
    assert op.bl_options == {"REGISTER", "UNDO", "PRESET"}
    for space in ("DOPESHEET_EDITOR", "GRAPH_EDITOR", "VIEW_3D"):
        panels = [
            p
            for p in bpy.types.Panel.__subclasses__()
            if getattr(p, "bl_space_type", None) == space and p.__name__.startswith("MOCAP_PT")
        ]
        assert panels and panels[0].bl_region_type == "UI" and panels[0].bl_category == "Mocap"


@pytest.mark.parametrize("menu", ["DOPESHEET_MT_key", "GRAPH_MT_key", "DOPESHEET_HT_header"])
def test_menu_entries(menu):
    draw_funcs = getattr(bpy.types, menu).draw._draw_funcs
    assert any(f.__module__.startswith(PACKAGE) for f in draw_funcs)


def test_poll_explains_why_the_button_is_grey():
    assert not bpy.ops.mocap.extract_keyframes.poll()
    from importlib import import_module

    operators = import_module(PACKAGE + ".addon.keyframes.operators")
    assert "Select an armature" in operators.armature_poll_message(bpy.context)
    data = bpy.data.armatures.new("Rig")
    obj = bpy.data.objects.new("Rig", data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.context.view_layer.update()
    assert "has no action" in operators.armature_poll_message(bpy.context)
    assert not bpy.ops.mocap.extract_keyframes.poll()


def test_build_and_install_zip(tmp_path):
    """The extension builds with Blender's own tool and installs from the zip like a user's would."""
    from bl_pkg import bl_extension_cli as cli

    out = tmp_path / "dist"
    out.mkdir()
    assert cli.cli_extension_handler(["build", "--source-dir", str(ROOT), "--output-dir", str(out)]) in (0, None)
    zips = list(out.glob("mocap_workbench-*.zip"))
    assert len(zips) == 1
    import zipfile

    names = zipfile.ZipFile(zips[0]).namelist()
    assert (
        "blender_manifest.toml" in names
        and "core/quaternion.py" in names
        and "addon/keyframes/extract_action.py" in names
        and "cli/library.py" in names
        and "addon/retarget/presets/mocap_workbench/bone_maps/Mixamo.py" in names  # the shipped bone maps
    )
    assert not any(n.startswith(("tests/", "scripts/", "docs/", ".venv", ".ci/", "dist/")) for n in names)
    assert "LICENSE" in names and "GNU GENERAL PUBLIC LICENSE" in zipfile.ZipFile(zips[0]).read("LICENSE").decode()
    assert not any("__pycache__" in n or n.endswith(".zip") for n in names)
    assert {n.split("/")[0] for n in names} <= {"__init__.py", "blender_manifest.toml", "README.md", "LICENSE",
                                                  "addon", "core", "cli"}  # fmt: skip


def test_command_line_is_registered_with_blender(ext, tmp_path, capsys):
    """``blender -c mocap_workbench …``: the handler Blender calls, run with arguments in the bpy wheel."""
    from tests.conftest import shared_file

    assert ext.cli._handle is not None  # bpy.utils.register_cli_command gave a handle
    clip = shared_file("cmu_bvh_cgspeed/02_01.bvh")
    assert ext.cli.run(["library", "sheet", str(clip), "-o", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import importlib.util

    # Dask is not in the Blender 4.x test environments; where it is, workers load the extension by its bl_ext name
    workers = "1" if importlib.util.find_spec("distributed") else "0"
    args = ["library", "process", str(clip.parent), "-o", str(tmp_path / "o"), "--workers", workers, "--count", "3"]
    assert ext.cli.run(args) in (0, 1)
    entry = json.loads((tmp_path / "o" / "02_01.json").read_text())["entry"]
    assert len(entry["keyframes"]) == 3
    assert ext.cli.run(["nonsense"]) == 2 and ext.cli.run([]) == 2
    assert "library" in capsys.readouterr().out


def test_every_command_runs_through_the_registered_handler(ext, tmp_path):
    """extract, retarget, convert and edit as ``blender -c mocap_workbench COMMAND …`` calls them (the
    handler with its arguments, in the bpy wheel); the same code as scripts/*.py."""
    from tests.conftest import shared_file

    walk = shared_file("cmu_bvh_cgspeed/02_01.bvh")
    bandai = shared_file("bandai_namco_1/dataset-1_walk_normal_001.bvh")
    run = ext.cli.run
    assert run(["convert", str(walk), str(tmp_path / "walk.amc")]) == 0
    assert (tmp_path / "walk.amc").exists() and (tmp_path / "walk.asf").exists()
    assert run(["edit", "cut", str(walk), str(tmp_path / "cut.bvh"), "--start", "10", "--stop", "60"]) == 0
    assert "Frames:\t294" in (tmp_path / "cut.bvh").read_text().replace("Frames: ", "Frames:\t")  # 344 − 50 cut
    assert run(["extract", str(walk), "-o", str(tmp_path / "x"), "--count", "6", "--no-blender"]) == 0
    assert len(json.loads((tmp_path / "x" / "02_01.json").read_text())["keyframes"]) > 0
    assert run(["retarget", str(walk), str(bandai), "-o", str(tmp_path / "r.bvh")]) == 0
    assert (tmp_path / "r.bvh").read_text().startswith("HIERARCHY")
    assert run(["convert", str(walk), str(walk)]) == 2  # never over an input, as the scripts
    assert walk.read_text().startswith("HIERARCHY")
