"""Exact snapping between IK and FK, on evaluated poses.

All matrices are armature space (``PoseBone.matrix``), so the armature object's
own transform never enters. Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
from mathutils import Matrix, Vector

from .. import parts as limb_parts
from ..parts.handle import ROLE_HANDLE
from . import records, solver


def evaluated_pose(obj: bpy.types.Object) -> dict[str, Matrix]:
    """Armature-space pose matrices of ``obj`` after a depsgraph update."""
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {bone.name: bone.matrix.copy() for bone in evaluated.pose.bones}


def _local_from_pose(obj: bpy.types.Object, name: str, pose: Matrix, parent_pose: Matrix | None) -> Matrix:
    """The basis (local) matrix that gives bone ``name`` the armature-space ``pose``."""
    bone = obj.data.bones[name]
    parent = bone.parent
    return bone.convert_local_to_pose(
        pose, bone.matrix_local,
        parent_matrix=parent_pose if parent is not None else Matrix.Identity(4),
        parent_matrix_local=parent.matrix_local if parent is not None else Matrix.Identity(4),
        invert=True,
    )


def key_pose(obj: bpy.types.Object, names: list[str], frame: int) -> None:
    """Key the bones' location, rotation (in their rotation mode) and scale at ``frame``."""
    for name in names:
        pose_bone = obj.pose.bones[name]
        rotation = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(
            pose_bone.rotation_mode, "rotation_euler")
        for path in ("location", rotation, "scale"):
            pose_bone.keyframe_insert(path, frame=frame, group=name)


def snap_fk_to_ik(obj: bpy.types.Object, limb, *, keyframe: bool = False, frame: int = 0) -> list[str]:
    """Copy the visual IK pose into the chain's (and extremity's) own transforms.

    Afterwards switching the limb to FK shows the same pose. Returns the bones changed.
    """
    parts = records.require(obj, limb)
    names = parts.chain + ([parts.extremity] if parts.extremity else [])
    # And any other bone of the user's IK Rigger's constraints move (the toe, under a foot roll).
    names += sorted({owner for owner, _ in parts.constraints} - set(names) - set(parts.made.values()))
    pose = evaluated_pose(obj)
    for name in names:
        parent = obj.data.bones[name].parent
        obj.pose.bones[name].matrix_basis = _local_from_pose(obj, name, pose[name],
                                                             pose[parent.name] if parent else None)
    if keyframe:
        key_pose(obj, names, frame)
    return names


@dataclass
class Snap:
    """What the parts' ``snap_to_fk`` hooks read: the limb, its FK pose, where the FK chain ends."""

    obj: bpy.types.Object
    parts: records.Parts
    ik: bpy.types.Constraint
    fk: dict[str, Matrix]
    end: Vector

    @property
    def root_offset(self) -> Matrix:
        """Where IK's root stands in the chain's first bone (identity but on a hidden chain)."""
        return solver.root_offset(self.obj, self.parts)

    def evaluate(self) -> None:
        """Let what the hooks set so far land (a pole hanging from the handle)."""
        evaluated_pose(self.obj)

    def unconstrained(self, name: str) -> Matrix:
        """Bone ``name``'s pose in the FK evaluation without its own constraints: its basis on its parent's
        pose. The stretch target's Limit Distance holds it in where the handle was left far off, which
        is not where it stands from the handle once the handle is snapped."""
        bone = self.obj.data.bones[name]
        parent = bone.parent
        return bone.convert_local_to_pose(
            self.obj.pose.bones[name].matrix_basis, bone.matrix_local,
            parent_matrix=self.fk[parent.name] if parent is not None else Matrix.Identity(4),
            parent_matrix_local=parent.matrix_local if parent is not None else Matrix.Identity(4))


def snap_ik_to_fk(obj: bpy.types.Object, limb, *, keyframe: bool = False, frame: int = 0) -> list[str]:
    """Put the IK controls where the FK pose is, part by part: the handle at the FK chain's end
    turned like the extremity, the pole into its bend plane.

    Switching the limb to IK then shows the same pose. Returns the bones changed.
    """
    parts = records.require(obj, limb, ROLE_HANDLE, ik=True)
    ik = records.ik_constraint(obj, parts)
    blend = records.ik_fk(obj, parts)
    records.set_ik_fk(obj, parts, 0.0)
    fk = evaluated_pose(obj)
    records.set_ik_fk(obj, parts, blend)
    last = obj.data.bones[parts.chain[-1]]
    snap = Snap(obj, parts, ik, fk, fk[last.name] @ solver.end_point(obj, parts))
    changed = [name for part in limb_parts.with_hook("snap_to_fk") for name in part.snap_to_fk(snap)]
    if keyframe:
        key_pose(obj, changed, frame)
    return changed
