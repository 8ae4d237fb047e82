"""A limb's hidden chain (``parts.hidden``), as the rig layer finds and reads it: the user's chain that
follows it, where the chain ends, and the hidden chain's poses that show a pose of the user's chain (where IK's
root stands, what snapping and baking key).

``parts`` here is a ``records.Parts`` (this module is what ``records`` reads the hidden chain with).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import bpy
from mathutils import Euler, Matrix, Vector

from ..parts import hidden


def followers(obj: bpy.types.Object, parts: Any, recorded: tuple[str, ...]) -> list[str]:
    """The user's chain of a limb on a hidden chain: the owners of the Copy Transforms aimed at its
    FOLLOW bones, in their order along the chain (the record's chain where one is gone)."""
    owners = {}
    pose_bones = obj.pose.bones
    by_name = {name: role for role, name in parts.made.items()}
    for owner, name in parts.constraints:
        constraint = pose_bones[owner].constraints[name]
        index = hidden.index_of(by_name.get(getattr(constraint, "subtarget", ""), ""), hidden.ROLE_FOLLOW)
        if constraint.type == "COPY_TRANSFORMS" and index is not None:
            owners[index] = owner
    if len(owners) == len(parts.solver) and set(owners) == set(range(len(parts.solver))):
        return [owners[index] for index in range(len(parts.solver))]
    return [name for name in recorded if name in obj.data.bones]


def end_point(obj: bpy.types.Object, parts: Any) -> Vector:
    """Where the chain ends in its last bone's space: its tail, or on a hidden chain (parts.hidden) the
    end of that chain at rest (the extremity's head)."""
    bones = obj.data.bones
    last = bones[parts.chain[-1]]
    if parts.solver and parts.solver[-1] in bones:
        return last.matrix_local.inverted() @ bones[parts.solver[-1]].tail_local
    return Vector((0.0, last.length, 0.0))


def chain_ends(obj: bpy.types.Object, parts: Any, last_poses: Sequence[Matrix],
               hidden_last: Sequence[Matrix]) -> list[Vector]:
    """Where IK's chain ends with its last bone at each of ``last_poses``: that bone's tail (``end_point``), or on
    a hidden chain whose last bone stands at each of ``hidden_last`` (``joint_poses``), that chain's end, where
    the handle takes it."""
    if hidden_last:
        tip = Vector((0.0, obj.data.bones[parts.solver[-1]].length, 0.0))
        return [pose @ tip for pose in hidden_last]
    tip = end_point(obj, parts)
    return [pose @ tip for pose in last_poses]


# Rounds of working out how far the knee has settled the user's bones (``joint_poses``): each shrinks what
# is left by about the pre-bend over SETTLED_DEGREES, so a few reach single precision; one at rest or past it.
SETTLE_ROUNDS = 12


def joint_poses(obj: bpy.types.Object, parts: Any, frames: Sequence[Sequence[Matrix]]) -> list[list[Matrix]]:
    """The armature-space poses of a limb's hidden chain (parts.hidden) that show the user's chain posed as in
    each of ``frames`` (one pose per chain bone each): each JOINT bone carried as its FOLLOW bone's user bone
    is, less what the FOLLOW bone's settling turns and shifts it by at that knee (``hidden.SETTLED_DEGREES``),
    which the knee's own pose decides: worked out in rounds, from the bones carried rigidly."""
    bones = obj.data.bones
    offsets = [bones[user].matrix_local.inverted() @ bones[joint].matrix_local
               for user, joint in zip(parts.chain, parts.solver)]
    settling = _settling(obj, parts)
    return [_settled_poses(bones, parts.solver, chain_poses, offsets, settling) for chain_poses in frames]


def _settled_poses(bones: Any, solver: Sequence[str], chain_poses: Sequence[Matrix], offsets: list[Matrix],
                   settling: dict[int, tuple[int, tuple[float, float], list]]) -> list[Matrix]:
    """``joint_poses`` of one pose of the user's chain, with its hidden chain's ``offsets`` at rest."""
    poses = [pose @ offset for pose, offset in zip(chain_poses, offsets)]
    shares: dict[int, float] = {}
    for _ in range(SETTLE_ROUNDS if settling else 0):
        now = {index: _share(bones, solver, poses, knee, ends) for index, (knee, ends, _) in settling.items()}
        if shares and all(abs(now[index] - shares[index]) < 1e-9 for index in now):
            break
        shares = now
        poses = [chain_poses[index] @ (_settled(settling[index][2], shares[index]).inverted() @ offsets[index]
                                       if index in settling else offsets[index])
                 for index in range(len(offsets))]
    return poses


def _settling(obj: bpy.types.Object, parts: Any) -> dict[int, tuple[int, tuple[float, float], list]]:
    """By chain index, the FOLLOW bones that settle (``hidden._settling``): the index of the knee their
    constraints read, its range on the knee's X, and their constraints (turn, then shift)."""
    pose_bones, solver = obj.pose.bones, parts.solver
    found = {}
    for role, name in parts.made.items():
        index = hidden.index_of(role, hidden.ROLE_FOLLOW)
        if index is None or name not in pose_bones:
            continue
        constraints = [constraint for constraint in pose_bones[name].constraints
                       if constraint.type == "TRANSFORM" and not constraint.mute and constraint.target == obj
                       and constraint.subtarget in solver
                       and constraint.name in (hidden.CONSTRAINT_SETTLE_TURN, hidden.CONSTRAINT_SETTLE_SHIFT)]
        if constraints:
            first = constraints[0]
            found[index] = (solver.index(first.subtarget), (first.from_min_x_rot, first.from_max_x_rot), constraints)
    return found


def _share(bones: Any, solver: Sequence[str], poses: Sequence[Matrix], knee: int, ends: tuple[float, float]) -> float:
    """How far along its range the knee's turn on its X stands in ``poses``, as a Transformation constraint
    reads it (the knee's pose on its parent's, from rest, as an XYZ Euler), 0 to 1."""
    if knee == 0:
        return 0.0
    bone, parent = bones[solver[knee]], bones[solver[knee - 1]]
    local = (poses[knee - 1] @ parent.matrix_local.inverted() @ bone.matrix_local).inverted() @ poses[knee]
    low, high = ends
    turned = local.to_3x3().normalized().to_euler("XYZ").x
    return min(max((turned - low) / (high - low), 0.0), 1.0) if high != low else 0.0


def _settled(constraints: list, share: float) -> Matrix:
    """What a FOLLOW bone's settling constraints make of its local transform at ``share`` of their range."""
    moved, turned = Vector(), Euler()
    for constraint in constraints:
        if constraint.map_to == "ROTATION":
            turned = Euler([low + (high - low) * share for low, high in zip(
                (constraint.to_min_x_rot, constraint.to_min_y_rot, constraint.to_min_z_rot),
                (constraint.to_max_x_rot, constraint.to_max_y_rot, constraint.to_max_z_rot))], "XYZ")
        else:
            moved = Vector([low + (high - low) * share for low, high in zip(
                (constraint.to_min_x, constraint.to_min_y, constraint.to_min_z),
                (constraint.to_max_x, constraint.to_max_y, constraint.to_max_z))])
    return Matrix.Translation(moved) @ turned.to_matrix().to_4x4()
