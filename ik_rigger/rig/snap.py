"""IK/FK blending and exact snapping between the two, on evaluated poses.

All matrices are armature space (``PoseBone.matrix``), so the armature object's
own transform never enters. Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

from collections.abc import Iterator

import bpy
from mathutils import Matrix, Vector

from ..core import geometry
from ..core.errors import RigError

_TRANSFORM_PATHS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")


def evaluated_pose(obj: bpy.types.Object) -> dict[str, Matrix]:
    """Armature-space pose matrices of ``obj`` after a depsgraph update."""
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {bone.name: bone.matrix.copy() for bone in evaluated.pose.bones}


def recorded_constraints(obj: bpy.types.Object, limb) -> Iterator[tuple[bpy.types.PoseBone, bpy.types.Constraint]]:
    """Each constraint a limb's record lists that still exists, with the bone that owns it."""
    for item in limb.constraints:
        pose_bone = obj.pose.bones.get(item.name)
        constraint = pose_bone.constraints.get(item.constraint) if pose_bone else None
        if constraint is not None:
            yield pose_bone, constraint


def limb_constraints(obj: bpy.types.Object, limb) -> list[bpy.types.Constraint]:
    """The constraints a limb's record lists that still exist."""
    return [constraint for _, constraint in recorded_constraints(obj, limb)]


def check_limb_bones(obj: bpy.types.Object, limb) -> None:
    """Refuse a limb whose bones were renamed or deleted since it was built."""
    missing = sorted(name for name in limb.bones() if name not in obj.data.bones)
    if missing:
        raise RigError(f"the limb's bone(s) {', '.join(missing)} no longer exist (renamed or deleted)",
                       bone=limb.name, hint="Remove the limb and build it again.")


def ik_constraint(obj: bpy.types.Object, limb) -> bpy.types.Constraint | None:
    """The limb's IK constraint, if it still exists."""
    return next((constraint for constraint in limb_constraints(obj, limb) if constraint.type == "IK"), None)


def blend_path(limb) -> str:
    """The RNA path of a limb's IK/FK blend, by the limb's name so it survives reordering."""
    return f'ik_rigger.limbs["{limb.name}"].ik_blend'


def drive_ik_blend(obj: bpy.types.Object, constraint: bpy.types.Constraint, limb) -> None:
    """Drive the constraint's influence by the limb's IK/FK blend, so an animated blend plays back."""
    driver = constraint.driver_add("influence").driver
    driver.type = "AVERAGE"
    variable = driver.variables.new()
    variable.name = "ik_blend"
    variable.type = "SINGLE_PROP"
    variable.targets[0].id_type = "OBJECT"
    variable.targets[0].id = obj
    variable.targets[0].data_path = blend_path(limb)


def set_ik_blend(obj: bpy.types.Object, limb, value: float) -> None:
    """1 is full IK, 0 full FK: the IK constraint and the extremity's copy constraints together.

    The update callback of ``ik_blend``: the drivers carry the value during playback,
    this makes it show at once wherever drivers have not run yet.
    """
    for constraint in limb_constraints(obj, limb):
        constraint.influence = value


def set_stretch(obj: bpy.types.Object, limb, value: float) -> None:
    """Stretch needs both the IK constraint's switch and each chain bone's IK stretch."""
    for constraint in limb_constraints(obj, limb):
        if constraint.type == "IK":
            constraint.use_stretch = value > 0.0
    for item in limb.chain:
        pose_bone = obj.pose.bones.get(item.name)
        if pose_bone is not None:
            pose_bone.ik_stretch = value


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
    check_limb_bones(obj, limb)
    chain = [item.name for item in limb.chain]
    names = chain + ([limb.extremity] if limb.extremity else [])
    pose = evaluated_pose(obj)
    for name in names:
        parent = obj.data.bones[name].parent
        obj.pose.bones[name].matrix_basis = _local_from_pose(obj, name, pose[name],
                                                             pose[parent.name] if parent else None)
    if keyframe:
        _key(obj, names, frame)
    return names


def _pole_for(root: Vector, y_axis: Vector, x_axis: Vector, end: Vector, pole_angle: float,
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
    check_limb_bones(obj, limb)
    chain = [item.name for item in limb.chain]
    ik = ik_constraint(obj, limb)
    if ik is None:
        raise RigError("has lost its IK constraint", bone=chain[-1], hint="Rebuild the limb.")
    blend = limb.ik_blend
    limb.ik_blend = 0.0
    fk = evaluated_pose(obj)
    limb.ik_blend = blend
    bones = obj.data.bones
    last = bones[chain[-1]]
    end = fk[chain[-1]] @ Vector((0.0, last.length, 0.0))
    handle_rest = bones[limb.handle].matrix_local
    if limb.extremity and limb.clone:
        handle_pose = fk[limb.extremity] @ bones[limb.clone].matrix_local.inverted() @ handle_rest
    else:
        handle_pose = fk[chain[-1]] @ last.matrix_local.inverted() @ handle_rest
    handle_pose.translation = end
    obj.pose.bones[limb.handle].matrix = handle_pose
    changed = [limb.handle]
    if limb.pole:
        evaluated_pose(obj)  # the pole may be the handle's child: let the new handle pose land first
        root = fk[chain[0]]
        rest_root = bones[chain[0]].head_local
        distance = (bones[limb.pole].head_local - rest_root).length
        pole_position = _pole_for(root.translation, root.col[1].xyz.normalized(), root.col[0].xyz.normalized(),
                                  end, ik.pole_angle, max(distance, 1e-6))
        pole_pose = obj.pose.bones[limb.pole].matrix.copy()
        pole_pose.translation = pole_position
        obj.pose.bones[limb.pole].matrix = pole_pose
        changed.append(limb.pole)
    if keyframe:
        _key(obj, changed, frame)
    return changed

