"""Go to Worst Frame: jump to where the extracted keys miss the original most, that bone selected.

Reads the worst bone and frame from the action's record (section ``"keyframes"``, written by Extract
Keyframes), so it works on any action made by it, in this session or a saved file.
"""

from __future__ import annotations

import bpy

from ..common import record
from ..common.guard import reported_errors
from ..common.poll import poll_result


def worst_of(obj) -> dict | None:
    """The ``keyframes`` record of ``obj``'s active action when it names a worst frame, else None."""
    anim = getattr(obj, "animation_data", None)
    info = record.section(anim.action, "keyframes") if anim is not None and anim.action is not None else None
    if info is None or info.get("worst_frame") is None:
        return None
    return info.to_dict() if hasattr(info, "to_dict") else dict(info)


def poll_message(context) -> str | None:
    """Why there is no worst frame to go to, or None."""
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        return "Select an armature whose action Extract Keyframes made"
    if worst_of(obj) is None:
        return "Extract Keyframes first: the active action has no worst frame recorded"
    return None


def select_bone(context, obj, name: str) -> bool:
    """Make ``name`` the only selected bone and the active one, in Pose Mode when the mode can change."""
    bone = obj.data.bones.get(name)
    if bone is None:
        return False
    if context.mode != "POSE" and context.view_layer.objects.active == obj and obj.library is None:
        try:
            bpy.ops.object.mode_set(mode="POSE")
        except RuntimeError:
            pass  # e.g. a context without a 3D view: the frame is set, the bone still becomes active
    for pose_bone in obj.pose.bones:
        target = pose_bone if hasattr(pose_bone, "select") else pose_bone.bone  # 5.0: PoseBone.select
        target.select = pose_bone.name == name
    obj.data.bones.active = bone
    return True


class MOCAP_OT_goto_worst_frame(bpy.types.Operator):
    """Jump to the frame where the extracted keys are farthest from the original motion and select that bone"""

    bl_idname = "mocap.goto_worst_frame"
    bl_label = "Go to Worst Frame"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return poll_result(cls, poll_message(context))

    @reported_errors
    def execute(self, context):
        obj = context.active_object
        info = worst_of(obj)
        frame = float(info["worst_frame"])
        whole = int(frame // 1)
        context.scene.frame_set(whole, subframe=frame - whole)
        bone = str(info.get("worst_bone", ""))
        found = select_bone(context, obj, bone)
        where = f"{bone} {info.get('worst_point', '')}".strip() if found else f"bone '{bone}' (not in this armature)"
        self.report({"INFO"}, f"Frame {frame:g}: worst error at {where}")
        return {"FINISHED"}


classes = (MOCAP_OT_goto_worst_frame,)
