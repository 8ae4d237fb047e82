"""From the feet's targets to the bases of their IK handles and of the hips, for one frame (see
``rig.ground``)."""

from __future__ import annotations

from collections.abc import Sequence

import bpy
from mathutils import Matrix, Vector

from ..core import ground as plan
from ..core.errors import RigError
from .ground_feet import Foot, Frame, chain_end, foot_pose
from .keys import local_basis

# A foot planted within this fraction of the leg's length of where it stands already stands there.
_STAYS = 1e-5


def _handle_pose(obj: bpy.types.Object, foot: Foot, frame: Frame, target: Matrix) -> Matrix:
    """The armature-space handle pose that brings the foot frame to the armature-space ``target``."""
    pose = frame.pose
    handle = foot.parts.handle
    assert handle is not None  # read_feet refuses limbs without one
    location, rotation, scale = pose[handle].decompose()
    current = foot_pose(obj, foot, pose)
    end = target.translation
    if foot.bone is not None:
        # The foot copies its clone's rotation: turning the handle turns the foot by as much, and swings the
        # foot's offset from the leg's end (a hoof pinned off it) about that end with it.
        turn = target.to_quaternion() @ current.to_quaternion().inverted()
        rotation = turn @ rotation
        end = end - turn @ (current.translation - chain_end(obj, foot.parts, pose))
    return Matrix.LocRotScale(end, rotation, scale)


def _drop(obj: bpy.types.Object, feet: Sequence[Foot], frame: Frame, ends: Sequence[Vector],
          up: Vector) -> float:
    """How far (armature units, along ``up``) the hips go down so every leg reaches its new end."""
    drop = 0.0
    for foot, end in zip(feet, ends):
        root = frame.pose[foot.parts.chain[0]].translation
        now = chain_end(obj, foot.parts, frame.pose)
        reach = plan.REACH * foot.length
        if (end - now).length <= _STAYS * foot.length:
            # A foot that already stands where it is planted keeps its leg as it is, even straighter
            # than REACH (a metarig's, at rest): lowering the hips to bend it would move the body.
            reach = max(reach, (now - root).length)
        needed = plan.hips_drop(root, end, reach, up)
        if needed is None:
            raise RigError("cannot reach the ground below its foot, however low the hips go", bone=foot.limb,
                           hint="Move the character over the ground, or pick a flatter ground.")
        drop = max(drop, needed)
    return drop


def _below(obj: bpy.types.Object, name: str, top: str) -> bool:
    bone = obj.data.bones[name]
    while bone is not None:
        if bone.name == top:
            return True
        bone = bone.parent
    return False


def _bases(obj: bpy.types.Object, feet: Sequence[Foot], frame: Frame, handles: Sequence[Matrix],
           hips: str | None, drop: float, up: Vector) -> dict[str, Matrix]:
    """Local (basis) matrices of the hips and handles for their new armature-space poses."""
    bones = obj.data.bones
    shift = Matrix.Translation(-up * drop)
    pose = frame.pose

    def new_pose(name: str) -> Matrix:
        return shift @ pose[name] if hips is not None and drop > 0.0 and _below(obj, name, hips) else pose[name]

    bases = {}
    if hips is not None:
        parent = bones[hips].parent
        bases[hips] = local_basis(new_pose(hips), bones[hips].matrix_local, pose[parent.name] if parent else None,
                             parent.matrix_local if parent else None)
    for foot, handle_pose in zip(feet, handles):
        handle = foot.parts.handle
        assert handle is not None
        parent = bones[handle].parent
        bases[handle] = local_basis(handle_pose, bones[handle].matrix_local, new_pose(parent.name) if parent else None,
                               parent.matrix_local if parent else None)
    return bases


def solve(obj: bpy.types.Object, feet: Sequence[Foot], frame: Frame, targets: Sequence[Matrix],
           hips: str | None, up: Vector) -> tuple[dict[str, Matrix], float]:
    """The bases for one frame from the feet's world targets, and the hips' drop (armature units)."""
    to_armature = frame.world.inverted()
    up_armature = (to_armature.to_3x3() @ up).normalized()
    handles = [_handle_pose(obj, foot, frame, to_armature @ target) for foot, target in zip(feet, targets)]
    drop = _drop(obj, feet, frame, [handle.translation for handle in handles], up_armature)
    if drop > 0.0 and hips is None:
        raise RigError("cannot reach the ground, and its legs share no parent bone to lower",
                       bone=feet[0].limb, hint="Parent the legs to a hips bone, or move the character down.")
    return _bases(obj, feet, frame, handles, hips, drop, up_armature), drop

