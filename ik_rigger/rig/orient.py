"""Objects parented to a bone stay where they are when the bone gets a new rest.

An object parented to a bone hangs from the bone's tail, in the bone's axes. The
builder gives some bones a new rest (straight chains pre-bent, imported bones
re-oriented on request, see ``core.orient``), and removal gives the old one back: the
rigid parts of a character (a robot's arm plates, a sword in a hand) would jump with
them. Adjusting each such object's parent inverse by the change keeps it in place.
"""

from __future__ import annotations

from collections.abc import Iterable

import bpy
from mathutils import Matrix, Vector

from ..core.model import BoneEdit
from .journal import Journal


def rest_matrix(head: Vector, tail: Vector, z_axis: Vector) -> Matrix:
    """The armature-space rest matrix of a bone from head to tail with Z as near ``z_axis`` as it can be."""
    y_axis = (tail - head).normalized()
    x_axis = y_axis.cross(z_axis).normalized()
    matrix = Matrix.Identity(4)
    for column, axis in enumerate((x_axis, y_axis, x_axis.cross(y_axis))):
        matrix.col[column].xyz = axis
    matrix.translation = head
    return matrix


def rest_edit(name: str, head: Vector, tail: Vector, roll: float) -> BoneEdit:
    """A rest given as Blender stores it (head, tail, roll) as a ``BoneEdit``."""
    z_axis = bpy.types.Bone.MatrixFromAxisRoll(tail - head, roll).col[2]
    return BoneEdit(name, head, tail, z_axis)


def keep_bone_children(obj: bpy.types.Object, edits: Iterable[BoneEdit], journal: Journal | None = None) -> None:
    """Object or Pose mode, before the Edit pass that makes ``edits``: keep objects parented to those bones in place.

    Each object's parent inverse takes the change from the bone's present pose (its
    tail, in its axes) to the pose the same transform will give it on the new rest.
    """
    changed = {edit.name: edit for edit in edits}
    if not changed:  # most builds move no bone at rest: no child of one to look for among the file's objects
        return
    children = [child for child in obj.children if child.parent_type == "BONE" and child.parent_bone in changed]
    for child in children:
        edit = changed[child.parent_bone]
        bone = obj.data.bones[child.parent_bone]
        pose_bone = obj.pose.bones[child.parent_bone]
        # The bone's pose is (what its parents do) @ rest @ basis; only the rest changes.
        above = pose_bone.matrix @ pose_bone.matrix_basis.inverted() @ bone.matrix_local.inverted()
        old = pose_bone.matrix @ Matrix.Translation((0.0, bone.length, 0.0))
        new = (above @ rest_matrix(edit.head, edit.tail, edit.z_axis) @ pose_bone.matrix_basis
               @ Matrix.Translation((0.0, (edit.tail - edit.head).length, 0.0)))
        before = child.matrix_parent_inverse.copy()
        child.matrix_parent_inverse = new.inverted() @ old @ before
        if journal is not None:
            name = child.name
            journal.data(lambda name=name, before=before: setattr(bpy.data.objects[name], "matrix_parent_inverse",
                                                                  before))
