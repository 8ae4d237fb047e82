"""Bone selection across Blender versions.

Blender 4.2 keeps a bone's selection on ``Bone.select`` (shared by Pose and Edit
mode); 5.0 moved pose selection to ``PoseBone.select``. Everything IK Rigger
selects goes through here.
"""

from __future__ import annotations

import bpy

_POSE_SELECT = "select" in bpy.types.PoseBone.bl_rna.properties


def _owner(obj: bpy.types.Object, name: str) -> bpy.types.PoseBone | bpy.types.Bone:
    return obj.pose.bones[name] if _POSE_SELECT else obj.data.bones[name]


def is_selected(obj: bpy.types.Object, name: str) -> bool:
    return bool(_owner(obj, name).select)


def selected_bones(obj: bpy.types.Object) -> list[str]:
    """Names of the selected bones of ``obj``, in armature order."""
    return [bone.name for bone in obj.data.bones if is_selected(obj, bone.name)]


def select_only(obj: bpy.types.Object, names: list[str], active: str | None) -> None:
    """Select exactly ``names`` (others deselected) and make ``active`` the active bone."""
    # Active first: in 4.2 making a bone active also selects it.
    obj.data.bones.active = obj.data.bones[active] if active else None
    wanted = set(names)
    for bone in obj.data.bones:
        _owner(obj, bone.name).select = bone.name in wanted
