"""Mark as Motion Asset: the active action becomes an asset whose preview is its keyframe contact sheet,
so a processed library is browsable in the Asset Browser (poses at a glance, not a blank icon).

The poses drawn are the action's own key frames when it has few (an extracted action), else a
summary chosen by curve simplification (one a second, 4–24); the sheet is drawn by the core
(:mod:`core.contact_sheet`, numpy, no GPU) and written into the ID's preview pixels.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..common.guard import reported_errors
from ..common.poll import poll_result

PREVIEW_SIZE = 256
ICON_SIZE = 32


def poll_message(context) -> str | None:
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        return "Select an armature with an action"
    anim = obj.animation_data
    if anim is None or anim.action is None:
        return "The active armature has no action"
    if anim.action.library is not None:
        return "The action is linked from another file; make it local first"
    return None


def sheet_keys(clip) -> np.ndarray:
    """Frame indices (0-based) of the poses to draw: the action's own key frames when it has few (an
    extracted action), else a summary (:func:`core.contact_sheet.sheet_frames`)."""
    from ...core.contact_sheet import sheet_frames
    from ..common import animdata

    first, n = clip.frames[0], len(clip.frames)
    keyed = np.unique(np.concatenate([animdata.read_keys(fc)[:, 0] for fc in clip.curves.by_channel.values()]))
    keyed = np.unique(np.clip(np.round(keyed - first), 0, n - 1).astype(int))
    return sheet_frames(clip.motion, keyed)


def fit_square(image: np.ndarray, size: int) -> np.ndarray:
    """(size, size, 4) float RGBA, bottom row first (Blender's order): ``image`` (H, W, 3) uint8 scaled
    down by area averaging to fit, centred on its own background colour."""
    h, w = image.shape[:2]
    step = max(1, int(np.ceil(max(h, w) / size)))
    hh, ww = h // step * step, w // step * step
    small = image[:hh, :ww].reshape(hh // step, step, ww // step, step, 3).mean(axis=(1, 3)) / 255.0
    out = np.empty((size, size, 4))
    out[..., :3] = image[0, 0] / 255.0
    out[..., 3] = 1.0
    top, left = (size - small.shape[0]) // 2, (size - small.shape[1]) // 2
    out[top : top + small.shape[0], left : left + small.shape[1], :3] = small
    return out[::-1]


def set_preview(id_block, image: np.ndarray) -> None:
    """Write ``image`` (H, W, 3) uint8 into the ID's preview (large image and icon)."""
    preview = id_block.preview_ensure()
    preview.image_size = (PREVIEW_SIZE, PREVIEW_SIZE)
    preview.image_pixels_float.foreach_set(fit_square(image, PREVIEW_SIZE).astype(np.float32).ravel())
    preview.icon_size = (ICON_SIZE, ICON_SIZE)
    preview.icon_pixels_float.foreach_set(fit_square(image, ICON_SIZE).astype(np.float32).ravel())


def mark_motion_asset(obj) -> tuple[object, int]:
    """Mark ``obj``'s action as an asset with its contact sheet as preview; (action, poses drawn)."""
    from ...core.contact_sheet import contact_sheet
    from ..common.clip import read_clip

    clip = read_clip(obj)
    keys = sheet_keys(clip)
    image = contact_sheet(clip.motion, keys, frame_numbers=clip.frames[keys])
    action = clip.channels.action
    if action.asset_data is None:
        action.asset_mark()
    set_preview(action, image)
    return action, len(keys)


class MOCAP_OT_mark_motion_asset(bpy.types.Operator):
    """Mark the active action as an asset, with its keyframe poses drawn as its preview"""

    bl_idname = "mocap.mark_motion_asset"
    bl_label = "Mark as Motion Asset"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return poll_result(cls, poll_message(context))

    @reported_errors
    def execute(self, context):
        action, poses = mark_motion_asset(context.active_object)
        self.report({"INFO"}, f"'{action.name}' marked as an asset; preview: {poses} keyframe poses")
        return {"FINISHED"}


def draw_menu(self, context):
    self.layout.separator()
    self.layout.operator(MOCAP_OT_mark_motion_asset.bl_idname, icon="ASSET_MANAGER")


classes = (MOCAP_OT_mark_motion_asset,)
# The Dope Sheet's Action menu (Blender 5.0+), else its Key menu.
MENUS = ((getattr(bpy.types, "DOPESHEET_MT_action", bpy.types.DOPESHEET_MT_key), draw_menu),)
