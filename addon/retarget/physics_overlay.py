"""Viewport overlay of a physics result: the ZMP path and, at the current frame, the ZMP and the
support polygon (green when the ZMP is inside, red when outside), drawn with the gpu module.

The data lives on the action the physics wrote (custom property ``mocap_workbench`` ›
``physics_overlay``: armature-space points from :func:`core.physics.apply.ground_drawing`), so
it is saved with the file and follows undo. The overlay is switched by the window manager's
``mocap_physics_overlay`` (Physics sub-panel), which adds or removes one draw handler of the 3D
Viewport; it draws for the active armature. Background mode has no GPU: the handler is still
registered (tests cover that and the geometry) and the callback draws nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np

from ..common import record
from ..common.spaces import to_world

PROPERTY = "physics_overlay"
_handle = None


@dataclass
class Geometry:
    """World-space lines of one frame: the ZMP path segments (S, 2, 3), the ZMP (3,) or None, the
    support polygon (H, 3) and whether the ZMP is inside it."""

    path: np.ndarray
    zmp: np.ndarray | None
    polygon: np.ndarray
    inside: bool


def store(action: Any, drawing: dict, first_frame: int) -> None:
    """Keep an overlay's data (:func:`core.physics.apply.ground_drawing`) on the action."""
    record.write(action, PROPERTY, {
        "frame_start": int(first_frame),
        "zmp": np.asarray(drawing["zmp"], dtype=float).ravel().tolist(),
        "inside": np.asarray(drawing["inside"], dtype=int).tolist(),
        "polygons": np.asarray(drawing["polygons"], dtype=float).ravel().tolist(),
        "offsets": np.asarray(drawing["offsets"], dtype=int).tolist(),
    })  # fmt: skip


def overlay_geometry(obj: Any, frame: int) -> Geometry | None:
    """The overlay of ``obj``'s active action at ``frame`` in world space, or None without data."""
    action = obj.animation_data.action if obj is not None and obj.animation_data else None
    data = record.section(action, PROPERTY) if action is not None else None
    if data is None:
        return None
    zmp = np.array(data["zmp"], dtype=float).reshape(-1, 3)
    offsets = np.array(data["offsets"], dtype=int)
    polygons = np.array(data["polygons"], dtype=float).reshape(-1, 3)

    def world(p: np.ndarray) -> np.ndarray:
        return to_world(obj, p)

    t = int(np.clip(frame - data["frame_start"], 0, len(zmp) - 1))
    valid = np.isfinite(zmp).all(axis=1)
    pairs = np.flatnonzero(valid[:-1] & valid[1:])
    path = world(np.stack((zmp[pairs], zmp[pairs + 1]), axis=1)) if len(pairs) else np.zeros((0, 2, 3))
    return Geometry(path, world(zmp[t]) if valid[t] else None, world(polygons[offsets[t] : offsets[t + 1]]),
                    bool(data["inside"][t]))  # fmt: skip


def _lines(polygon: np.ndarray) -> np.ndarray:
    """Closed outline of a polygon as line pairs (H, 2, 3)."""
    return np.stack((polygon, np.roll(polygon, -1, axis=0)), axis=1) if len(polygon) >= 2 else np.zeros((0, 2, 3))


def draw() -> None:
    """Draw handler of the 3D Viewport (POST_VIEW)."""
    if bpy.app.background:
        return
    context = bpy.context
    geometry = overlay_geometry(context.active_object, context.scene.frame_current)
    if geometry is None:
        return
    import gpu
    from gpu_extras.batch import batch_for_shader

    shader = gpu.shader.from_builtin("UNIFORM_COLOR")
    gpu.state.blend_set("ALPHA")
    gpu.state.line_width_set(2.0)
    for lines, color in ((geometry.path, (1.0, 0.55, 0.1, 0.6)),
                         (_lines(geometry.polygon), (0.2, 0.9, 0.3, 1.0) if geometry.inside else (1.0, 0.2, 0.2, 1.0))):  # fmt: skip
        if len(lines):
            batch = batch_for_shader(shader, "LINES", {"pos": lines.reshape(-1, 3).astype(np.float32).tolist()})
            shader.uniform_float("color", color)
            batch.draw(shader)
    if geometry.zmp is not None:
        gpu.state.point_size_set(8.0)
        batch = batch_for_shader(shader, "POINTS", {"pos": [geometry.zmp.astype(np.float32).tolist()]})
        shader.uniform_float("color", (1.0, 0.1, 0.1, 1.0))
        batch.draw(shader)
    gpu.state.line_width_set(1.0)
    gpu.state.point_size_set(1.0)
    gpu.state.blend_set("NONE")


def enable(on: bool) -> None:
    """Add or remove the draw handler."""
    global _handle
    if on and _handle is None:
        _handle = bpy.types.SpaceView3D.draw_handler_add(draw, (), "WINDOW", "POST_VIEW")
    elif not on and _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, "WINDOW")
        _handle = None


def is_enabled() -> bool:
    return _handle is not None


def _update(self, context) -> None:
    enable(self.mocap_physics_overlay)
    for window in getattr(context.window_manager, "windows", []):
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


def register() -> None:
    bpy.types.WindowManager.mocap_physics_overlay = bpy.props.BoolProperty(
        name="ZMP Overlay",
        default=False,
        update=_update,
        description="Draw the balance of the active armature's physics result in the 3D Viewport (green: "
        "balanced, red: not)",
    )


def unregister() -> None:
    enable(False)
    del bpy.types.WindowManager.mocap_physics_overlay
