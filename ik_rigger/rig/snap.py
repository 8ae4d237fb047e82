"""Exact snapping between IK and FK, on evaluated poses.

All matrices are armature space (``PoseBone.matrix``), so the armature object's
own transform never enters. Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

import bpy
from mathutils import Matrix, Vector

from ..core import geometry
from ..core.plan import ROLE_HANDLE, ROLE_TARGET
from . import records


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


def _key(obj: bpy.types.Object, names: list[str], frame: int) -> None:
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
        _key(obj, names, frame)
    return names


def pole_for(root: Vector, y_axis: Vector, x_axis: Vector, end: Vector, pole_angle: float,
              distance: float) -> Vector:
    """A pole position for which the IK solver keeps this root orientation.

    Inverts ``geometry.pole_angle``: the in-plane direction must be the root's X
    axis turned about the bone by minus the pole angle; the plane holds root and end.
    """
    toward = Matrix.Rotation(-pole_angle, 3, y_axis) @ x_axis
    normal = geometry.cross(y_axis, toward)
    chain = end - root
    along = y_axis.dot(chain)
    if abs(along) > 1e-9:
        normal = normal - y_axis * (normal.dot(chain) / along)
    side = geometry.cross(normal, chain).normalized()
    middle = root + chain * 0.5
    for candidate in (middle + side * distance, middle - side * distance):
        if abs(geometry.pole_angle(root, root + y_axis, x_axis, end, candidate) - pole_angle) < 1e-4:
            return candidate
    return middle + side * distance


def snap_ik_to_fk(obj: bpy.types.Object, limb, *, keyframe: bool = False, frame: int = 0) -> list[str]:
    """Move the IK handle to the FK chain's end and the pole into its bend plane.

    The handle also takes the extremity's FK rotation (through its clone), so that
    switching the limb to IK shows the same pose. Returns the bones changed.
    """
    parts = records.require(obj, limb, ROLE_HANDLE, ik=True)
    chain = parts.chain
    ik = records.ik_constraint(obj, parts)
    handle = parts.handle
    assert handle is not None  # required above
    blend = records.ik_fk(obj, parts)
    records.set_ik_fk(obj, parts, 0.0)
    fk = evaluated_pose(obj)
    records.set_ik_fk(obj, parts, blend)
    bones = obj.data.bones
    last = bones[chain[-1]]
    end = fk[chain[-1]] @ Vector((0.0, last.length, 0.0))
    # Handle, clone and IK target hang from each other (through a foot roll's pivots, if any),
    # whatever the switch, so the FK evaluation holds how they stand now.
    if parts.extremity and parts.clone:
        handle_pose = fk[parts.extremity] @ (fk[handle].inverted() @ fk[parts.clone]).inverted()
    else:
        handle_pose = fk[chain[-1]] @ last.matrix_local.inverted() @ bones[handle].matrix_local
    # Then slide it so the IK target lands on the FK chain's end.
    target = fk[handle].inverted() @ fk[parts.made.get(ROLE_TARGET, handle)]
    handle_pose.translation += end - (handle_pose @ target).translation
    obj.pose.bones[handle].matrix = handle_pose
    changed = [handle]
    if parts.pole:
        evaluated_pose(obj)  # the pole may be the handle's child: let the new handle pose land first
        root = fk[chain[0]]
        rest_root = bones[chain[0]].head_local
        distance = (bones[parts.pole].head_local - rest_root).length
        pole_position = pole_for(root.translation, root.col[1].xyz.normalized(), root.col[0].xyz.normalized(),
                                  end, ik.pole_angle, max(distance, 1e-6))
        pole_pose = obj.pose.bones[parts.pole].matrix.copy()
        pole_pose.translation = pole_position
        obj.pose.bones[parts.pole].matrix = pole_pose
        changed.append(parts.pole)
    if keyframe:
        _key(obj, changed, frame)
    return changed
