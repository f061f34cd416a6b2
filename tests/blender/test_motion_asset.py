"""Mark as Motion Asset: the action becomes an asset whose preview is its keyframe contact sheet."""

from importlib import import_module

import bpy
import numpy as np

from tests.blender.conftest import PACKAGE

armature = import_module(PACKAGE + ".addon.common.armature")
extract = import_module(PACKAGE + ".addon.keyframes.extract_action")
motion_asset = import_module(PACKAGE + ".addon.keyframes.motion_asset")
sheets = import_module(PACKAGE + ".core.contact_sheet")
synthetic = import_module(PACKAGE + ".core.synthetic")


def make_rig():
    motion = synthetic.demo_clip()
    obj = armature.create_animated_armature(motion, "Mocap", bpy.context.scene.collection)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def preview_pixels(action, size):
    p = action.preview
    out = np.empty(size * size * 4, dtype=np.float32)
    p.image_pixels_float.foreach_get(out)
    return out.reshape(size, size, 4)


def test_extracted_action_marked_with_its_keyframes_drawn():
    obj = make_rig()
    extract.extract_on_armature(obj, "simplify", {"count": 8}, measure_playback=False)
    action = obj.animation_data.action
    assert bpy.ops.mocap.mark_motion_asset() == {"FINISHED"}
    assert action.asset_data is not None
    assert tuple(action.preview.image_size) == (256, 256) and tuple(action.preview.icon_size) == (32, 32)
    px = preview_pixels(action, 256)
    background = np.array(sheets.BACKGROUND)
    drawn = np.abs(px[..., :3] - background).sum(axis=2) > 0.3
    assert drawn.mean() > 0.01  # figures, not a blank picture
    left = np.abs(px[..., :3] - np.array(sheets.SIDE_COLOURS["L"])).sum(axis=2) < 0.15
    right = np.abs(px[..., :3] - np.array(sheets.SIDE_COLOURS["R"])).sum(axis=2) < 0.15
    assert left.any() and right.any()
    # the poses drawn are the action's 8 keys, not a summary
    keys = motion_asset.sheet_keys(import_module(PACKAGE + ".addon.common.clip").read_clip(obj))
    assert len(keys) == 8


def test_dense_action_gets_a_summary_and_nothing_else_changes():
    obj = make_rig()
    action = obj.animation_data.action
    keys_before = sum(len(fc.keyframe_points) for fc in action.fcurves) if hasattr(action, "fcurves") else None
    n_actions = len(bpy.data.actions)
    assert bpy.ops.mocap.mark_motion_asset() == {"FINISHED"}
    assert action.asset_data is not None and len(bpy.data.actions) == n_actions
    if keys_before is not None:
        assert sum(len(fc.keyframe_points) for fc in action.fcurves) == keys_before


def test_poll_says_why():
    bpy.context.view_layer.objects.active = None
    assert not bpy.ops.mocap.mark_motion_asset.poll()
    assert "armature" in motion_asset.poll_message(bpy.context)


def test_fit_square_keeps_the_picture_upright():
    image = np.zeros((40, 80, 3), np.uint8)
    image[:20] = 255  # white top half
    out = motion_asset.fit_square(image, 16)
    assert out.shape == (16, 16, 4)
    # scaled 5× down to 8 × 16, centred (rows 4–11); Blender's rows run bottom-up, so the white top
    # half is in rows 8–11 and the black bottom half in rows 4–7
    assert out[9, 8, 0] > 0.9 and out[6, 8, 0] < 0.1
