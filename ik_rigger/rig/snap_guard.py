"""What stops a snap from landing: the user's own constraints and drivers on the bones it sets.

A snap sets bones' own transforms (``PoseBone.matrix``, ``matrix_basis``), which Blender's
constraints on those bones then move again: a Limit Location, Child Of or Copy Location of
the user's on the IK handle or pole holds it where the snap did not put it, a Limit Rotation
on a chain bone turns the FK chain away from the IK pose; a driver on a bone's own rotation,
location or scale sets it whatever the snap wrote. Where such a constraint or driver is on, the
snap is checked on the evaluated pose: it lands, or everything it set is given back and a
``RigError`` names the constraint or driver, its bone and what to do. Rigs without any pay nothing
(the stacks read are the few of the limb's bones; nothing more is evaluated).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from ..core.geometry import POSE_CHANNELS, turn_degrees
from ..parts.soft_ik import ROLE_SOFT_ROOT
from . import clips, records

# How far a snapped chain may stand from the pose it was snapped to before the snap counts as missed:
# well above what Blender's single-precision IK leaves (1e-4 of the chain, 0.01 degree, see
# ``snap.REFINE_ROUNDS``), well below what an animator sees.
LANDED_DISTANCE = 1e-3  # of the chain's length
LANDED_DEGREES = 0.1


def user_constraints(obj: bpy.types.Object, parts: records.Parts, names: Iterable[str],
                     animated: bool = False) -> list[tuple[str, bpy.types.Constraint]]:
    """(bone, constraint) of the constraints on ``names`` that are not the limb's own and act now
    (not muted, some influence, their targets there); ``animated``: also those idle now whose switch or
    influence is animated, which act on other frames (a tool that keys a range checks them)."""
    own = set(parts.constraints)
    pose_bones = obj.pose.bones
    found = []
    paths: set[str] | None = None
    for name in dict.fromkeys(names):
        pose_bone = pose_bones.get(name)
        for constraint in pose_bone.constraints if pose_bone is not None else ():
            if (name, constraint.name) in own or not constraint.is_valid:
                continue
            if constraint.mute or constraint.influence == 0.0:
                if not animated:
                    continue
                if paths is None:  # read once, where a constraint is idle now
                    paths = clips.animated_paths_of(obj)
                path = constraint.path_from_id()
                if not any(each.startswith(path) for each in paths):
                    continue
            found.append((name, constraint))
    return found




def user_drivers(obj: bpy.types.Object, names: Iterable[str]) -> list[tuple[str, str]]:
    """(bone, channel) of the drivers on the own transforms of the bones ``names`` that act now (not muted,
    valid): the channel as its driver names it, ``rotation_euler[0]``."""
    data = obj.animation_data
    if data is None or not data.drivers:  # as most armatures have none
        return []
    prefixes = {f'pose.bones["{records.quoted(name)}"].': name for name in names}
    found = []
    for curve in data.drivers:
        path = curve.data_path
        if curve.mute or not curve.driver.is_valid or not path.startswith('pose.bones["'):
            continue
        prefix, _, channel = path.rpartition(".")
        bone = prefixes.get(f"{prefix}.")
        if bone is not None and channel in POSE_CHANNELS:
            found.append((bone, f"{channel}[{curve.array_index}]"))
    return found


@dataclass
class Guard:
    """The bones' own transforms before a snap, to give back if it misses, and the constraints and drivers
    that may make it (``drivers``: (bone, channel))."""

    obj: bpy.types.Object
    blockers: list[tuple[str, bpy.types.Constraint]]
    bases: dict[str, Matrix]
    drivers: list[tuple[str, str]]

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
        bone = (self.blockers or self.drivers)[0][0]
        listed = ", ".join([f"the {constraint.type.replace('_', ' ').title()} constraint '{constraint.name}' on "
                            f"'{owner}'" for owner, constraint in self.blockers]
                           + [f"the driver of '{owner}''s {channel}" for owner, channel in self.drivers])
        it = "it" if len(self.blockers) + len(self.drivers) == 1 else "them"
        hints = (["Mute the constraint or set its influence to 0"] if self.blockers else []) + (
            ["Mute the driver (Drivers editor)"] if self.drivers else [])
        raise RigError(f"{what} would not land: {listed} holds {it} where the snap does not put {it}, and "
                       f"'{off[0]}' would stand off the pose snapped to; nothing was changed",
                       bone=bone, hint=f"{'; or '.join(hints)} for the snap, then snap again.")


def guard(obj: bpy.types.Object, parts: records.Parts, checked: Iterable[str],
          kept: Iterable[str]) -> Guard | None:
    """A guard for a snap that sets ``kept`` when the user's constraints sit on ``checked``; None when none does."""
    checked = list(checked)
    blockers = user_constraints(obj, parts, checked)
    # Soft IK's root follows the chain's root by drivers of the limb's own: no snap sets it.
    drivers = [(bone, channel) for bone, channel in user_drivers(obj, checked)
               if bone != parts.made.get(ROLE_SOFT_ROOT)]
    if not blockers and not drivers:
        return None
    pose_bones = obj.pose.bones
    return Guard(obj, blockers, {name: pose_bones[name].matrix_basis.copy() for name in dict.fromkeys(kept)
                                 if name in pose_bones}, drivers)


def _apart(a: Matrix, b: Matrix, length: float) -> bool:
    """Whether two poses' heads or turns differ by more than a landed snap's."""
    return ((a.translation - b.translation).length > LANDED_DISTANCE * max(length, 1e-9)
            or turn_degrees(a, b) > LANDED_DEGREES)
