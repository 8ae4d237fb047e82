"""What stops a snap from landing: the user's own constraints on the bones it sets.

A snap sets bones' own transforms (``PoseBone.matrix``, ``matrix_basis``), which Blender's
constraints on those bones then move again: a Limit Location, Child Of or Copy Location of
the user's on the IK handle or pole holds it where the snap did not put it, a Limit Rotation
on a chain bone turns the FK chain away from the IK pose. Where such a constraint is on, the
snap is checked on the evaluated pose: it lands, or everything it set is given back and a
``RigError`` names the constraint, its bone and what to do. Rigs without any pay nothing (the
stacks read are the few of the limb's bones; nothing more is evaluated).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from ..core.geometry import turn_degrees
from . import records

# How far a snapped chain may stand from the pose it was snapped to before the snap counts as missed:
# well above what Blender's single-precision IK leaves (1e-4 of the chain, 0.01 degree, see
# ``snap.REFINE_ROUNDS``), well below what an animator sees.
LANDED_DISTANCE = 1e-3  # of the chain's length
LANDED_DEGREES = 0.1


def user_constraints(obj: bpy.types.Object, parts: records.Parts,
                     names: Iterable[str]) -> list[tuple[str, bpy.types.Constraint]]:
    """(bone, constraint) of the constraints on ``names`` that are not the limb's own and act now
    (not muted, some influence, their targets there)."""
    own = set(parts.constraints)
    pose_bones = obj.pose.bones
    found = []
    for name in dict.fromkeys(names):
        pose_bone = pose_bones.get(name)
        for constraint in pose_bone.constraints if pose_bone is not None else ():
            if (name, constraint.name) not in own and not constraint.mute and constraint.influence > 0.0 \
                    and constraint.is_valid:
                found.append((name, constraint))
    return found


@dataclass
class Guard:
    """The bones' own transforms before a snap, to give back if it misses, and the constraints that may make it."""

    obj: bpy.types.Object
    blockers: list[tuple[str, bpy.types.Constraint]]
    bases: dict[str, Matrix]

    def check(self, wanted: dict[str, Matrix], shown: dict[str, Matrix], names: Iterable[str], length: float,
              what: str) -> None:
        """Refuse, giving every basis back, when ``shown`` stands away from ``wanted`` on a bone of ``names``
        (armature-space poses, heads within ``LANDED_DISTANCE`` of ``length`` and turns within ``LANDED_DEGREES``)."""
        off = [name for name in names if _apart(wanted[name], shown[name], length)]
        if not off:
            return
        for name, basis in self.bases.items():
            self.obj.pose.bones[name].matrix_basis = basis
        self.obj.update_tag()
        bone, _ = self.blockers[0]
        listed = ", ".join(f"the {constraint.type.replace('_', ' ').title()} constraint '{constraint.name}' on "
                           f"'{owner}'" for owner, constraint in self.blockers)
        it = "it" if len(self.blockers) == 1 else "them"
        raise RigError(f"{what} would not land: {listed} holds {it} where the snap does not put {it}, and "
                       f"'{off[0]}' would stand off the pose snapped to; nothing was changed",
                       bone=bone, hint="Mute the constraint or set its influence to 0 for the snap, then snap again.")


def guard(obj: bpy.types.Object, parts: records.Parts, checked: Iterable[str],
          kept: Iterable[str]) -> Guard | None:
    """A guard for a snap that sets ``kept`` when the user's constraints sit on ``checked``; None when none does."""
    blockers = user_constraints(obj, parts, checked)
    if not blockers:
        return None
    pose_bones = obj.pose.bones
    return Guard(obj, blockers, {name: pose_bones[name].matrix_basis.copy() for name in dict.fromkeys(kept)
                                 if name in pose_bones})


def _apart(a: Matrix, b: Matrix, length: float) -> bool:
    """Whether two poses' heads or turns differ by more than a landed snap's."""
    return ((a.translation - b.translation).length > LANDED_DISTANCE * max(length, 1e-9)
            or turn_degrees(a, b) > LANDED_DEGREES)
