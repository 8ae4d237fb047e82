"""A limb's hidden chain (``parts.hidden``), as the rig layer finds and reads it: the user's chain that
follows it, where the chain ends, where IK's root stands.

``parts`` here is a ``records.Parts`` (this module is what ``records`` reads the hidden chain with).
"""

from __future__ import annotations

from typing import Any

import bpy
from mathutils import Matrix, Vector

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


def root_offset(obj: bpy.types.Object, parts: Any) -> Matrix:
    """The chain IK solves in its first bone's space: identity, or on a hidden chain (parts.hidden) that
    chain's first bone at rest; a pose of the first bone times it is where IK's root stands."""
    bones = obj.data.bones
    if parts.solver and parts.solver[0] in bones:
        return bones[parts.chain[0]].matrix_local.inverted() @ bones[parts.solver[0]].matrix_local
    return Matrix.Identity(4)
