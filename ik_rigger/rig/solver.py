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
    return [_settled_poses(chain_poses, offsets, settling) for chain_poses in frames]


def _settled_poses(chain_poses: Sequence[Matrix], offsets: list[Matrix], settling: dict[int, Settling]) -> list[Matrix]:
    """``joint_poses`` of one pose of the user's chain, with its hidden chain's ``offsets`` at rest."""
    poses = [pose @ offset for pose, offset in zip(chain_poses, offsets)]
    shares: dict[int, float] = {}
    for _ in range(SETTLE_ROUNDS if settling else 0):
        now = {index: _share(poses, knee, rest, ends) for index, (knee, rest, ends, _, _) in settling.items()}
        if shares and all(abs(now[index] - shares[index]) < 1e-9 for index in now):
            break
        shares = now
        poses = [chain_poses[index] @ (_settled(settling[index], shares[index]).inverted() @ offsets[index]
                                       if index in settling else offsets[index])
                 for index in range(len(offsets))]
    return poses


# A FOLLOW bone's settling as its constraints hold it (``_settling``): the index of the knee they read and its rest on
# its parent's (None for the chain's first bone), its range on the knee's X, and the turn (an XYZ Euler) and shift
# at either end of that range.
Settling = tuple[int, Matrix | None, tuple[float, float], tuple[Vector, Vector], tuple[Vector, Vector]]


def _settling(obj: bpy.types.Object, parts: Any) -> dict[int, Settling]:
    """By chain index, the FOLLOW bones that settle (``hidden._settling``), their constraints read once."""
    pose_bones, bones, solver = obj.pose.bones, obj.data.bones, parts.solver
    found = {}
    for role, name in parts.made.items():
        index = hidden.index_of(role, hidden.ROLE_FOLLOW)
        if index is None or name not in pose_bones:
            continue
        constraints = [constraint for constraint in pose_bones[name].constraints
                       if constraint.type == "TRANSFORM" and not constraint.mute and constraint.target == obj
                       and constraint.subtarget in solver
                       and constraint.name in (hidden.CONSTRAINT_SETTLE_TURN, hidden.CONSTRAINT_SETTLE_SHIFT)]
        if not constraints:
            continue
        turn, shift = (Vector(), Vector()), (Vector(), Vector())
        for constraint in constraints:
            if constraint.map_to == "ROTATION":
                turn = (Vector((constraint.to_min_x_rot, constraint.to_min_y_rot, constraint.to_min_z_rot)),
                        Vector((constraint.to_max_x_rot, constraint.to_max_y_rot, constraint.to_max_z_rot)))
            else:
                shift = (Vector((constraint.to_min_x, constraint.to_min_y, constraint.to_min_z)),
                         Vector((constraint.to_max_x, constraint.to_max_y, constraint.to_max_z)))
        first = constraints[0]
        knee = solver.index(first.subtarget)
        rest = bones[solver[knee - 1]].matrix_local.inverted() @ bones[solver[knee]].matrix_local if knee else None
        found[index] = (knee, rest, (first.from_min_x_rot, first.from_max_x_rot), turn, shift)
    return found


def _share(poses: Sequence[Matrix], knee: int, rest: Matrix | None, ends: tuple[float, float]) -> float:
    """How far along its range the knee's turn on its X stands in ``poses``, as a Transformation constraint
    reads it (the knee's pose on its parent's, from its ``rest`` there, as an XYZ Euler), 0 to 1."""
    low, high = ends
    if rest is None or high == low:
        return 0.0
    turned = ((poses[knee - 1] @ rest).inverted() @ poses[knee]).to_3x3().normalized().to_euler("XYZ").x
    return min(max((turned - low) / (high - low), 0.0), 1.0)


def _settled(settling: Settling, share: float) -> Matrix:
    """What a FOLLOW bone's settling constraints make of its local transform at ``share`` of their range."""
    _, _, _, (turn_low, turn_high), (shift_low, shift_high) = settling
    turned = Euler(turn_low.lerp(turn_high, share), "XYZ")
    return Matrix.Translation(shift_low.lerp(shift_high, share)) @ turned.to_matrix().to_4x4()
