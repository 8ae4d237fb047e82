"""Hiding bones in Pose mode across Blender versions.

Blender 4.2 hides a bone in Pose (and Object) mode by ``Bone.hide``; 5.x keeps that state on
``PoseBone.hide``, and ``Bone.hide`` no longer hides it there. The bones IK Rigger hides go
through here.
"""

from __future__ import annotations

import bpy

_POSE_HIDE = "hide" in bpy.types.PoseBone.bl_rna.properties


def _owner(obj: bpy.types.Object, name: str) -> bpy.types.PoseBone | bpy.types.Bone:
    return obj.pose.bones[name] if _POSE_HIDE else obj.data.bones[name]


def hidden_in_pose(obj: bpy.types.Object, name: str) -> bool:
    """Whether the bone ``name`` is hidden in Pose and Object mode."""
    return bool(_owner(obj, name).hide)


def hide_in_pose(obj: bpy.types.Object, name: str, hidden: bool) -> None:
    """Hide (or show) the bone ``name`` in Pose and Object mode; a change costs more than a look."""
    owner = _owner(obj, name)
    if owner.hide != hidden:
        owner.hide = hidden
