"""Where the user's own constraints on the IK controls keep a bake or Plant Feet from playing what it keyed.

Baking FK to IK keys the handle, pole and clone, and Plant Feet sets or keys the handles and the hips,
as the bones' own transforms. A constraint of the user's on one of them (a Limit Location, a Child Of,
a Copy Location on the handle or pole) moves it again from there: the IK then played another motion
than the FK one baked, and a planted foot stood off the ground, while both said they had done it (the
snaps check the same, ``snap_guard``). Where such a constraint is on, the limbs are played twice, with
the constraints and with them muted: where the two differ, the caller gives back what it wrote and this
refuses, naming the constraint, its bone and what to do. Limbs without any pay nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from ..core.geometry import turn_degrees
from . import clips, records, snap_guard
from .bake_limits import in_ik
from .keys import evaluated_poses
from .snap import evaluated_pose


def check(obj: bpy.types.Object, limbs: Sequence[records.Parts], frames: Sequence[int] | None, doing: str,
          wanted: str, *, roles: Sequence[str] | None = None, also: Sequence[str] = (), ik: bool = False) -> None:
    """Refuse ``doing`` (off ``wanted``, what it puts the limbs on) where the user's constraints on the
    bones it set or keyed (the limbs' made bones of ``roles``, all by default, and ``also``, the hips Plant
    Feet lowers) move a chain bone or extremity of ``limbs`` on one of ``frames`` (None: as the scene shows
    it now, unkeyed); ``ik``: the limbs played in IK, as a bake to IK leaves them."""
    own = {pair for parts in limbs for pair in parts.constraints}
    found = []
    for parts in limbs:
        bones = list(parts.made.values()) if roles is None else [parts.made[role] for role in roles
                                                                  if role in parts.made]
        found += snap_guard.user_constraints(obj, parts, bones, animated=frames is not None)
    if also and limbs:
        found += [(owner, constraint) for owner, constraint
                  in snap_guard.user_constraints(obj, limbs[0], also, animated=frames is not None)
                  if (owner, constraint.name) not in own]
    if not found:
        return
    lengths = {name: max(sum(obj.data.bones[bone].length for bone in parts.chain), 1e-9)
               for parts in limbs for name in _shown_bones(parts)}
    names = list(lengths)
    with _in_ik(obj, limbs if ik else ()):
        held = _poses(obj, frames, names)
        free = _muted_poses(obj, found, frames, names)
    for name in names:
        for number, (a, b) in enumerate(zip(held[name], free[name])):
            if _apart(a, b, lengths[name]):
                _refuse(found, name, None if frames is None else frames[number], doing, wanted)


def check_chain(obj: bpy.types.Object, parts: records.Parts, frames: Sequence[int],
                fk: dict[str, list[Matrix]]) -> None:
    """Refuse Bake FK to IK where the user's constraints on the limb's chain bones or extremity (a Stretch To
    on the shin) keep the baked IK, as it plays now, off ``fk`` (the FK motion's armature-space poses per frame)
    and are why: muted, the IK plays otherwise. One IK lets override (a Limit Rotation) is no reason."""
    found = snap_guard.user_constraints(obj, parts, _shown_bones(parts), animated=True)
    if not found:
        return
    length = max(sum(obj.data.bones[bone].length for bone in parts.chain), 1e-9)
    names = [name for name in _shown_bones(parts) if name in fk]
    with in_ik(obj, parts):
        held = _poses(obj, frames, names)
        off = next(((name, number) for name in names for number in range(len(frames))
                    if _apart(held[name][number], fk[name][number], length)), None)
        if off is None:
            return
        free = _muted_poses(obj, found, frames, names)
    if any(_apart(held[name][number], free[name][number], length)
           for name in names for number in range(len(frames))):
        _refuse(found, off[0], frames[off[1]], "Bake FK to IK", "the FK motion")


def _muted_poses(obj: bpy.types.Object, found: Sequence[tuple[str, bpy.types.Constraint]],
                 frames: Sequence[int] | None, names: Sequence[str]) -> dict[str, list[Matrix]]:
    """The poses of ``names`` on ``frames`` with the user's constraints ``found`` muted, as they were after. A
    constraint whose switch is animated has those F-curves and drivers muted too, so no frame turns it on."""
    switched = [curve for _, constraint in found
                for curve in clips.animating_curves(obj, constraint.path_from_id() + ".")
                if curve.data_path.endswith((".mute", ".enabled")) and not curve.mute]
    muted = [constraint.mute for _, constraint in found]
    for curve in switched:
        curve.mute = True
    for _, constraint in found:
        constraint.mute = True
    try:
        return _poses(obj, frames, names)
    finally:
        for curve in switched:
            curve.mute = False
        for (_, constraint), was in zip(found, muted):
            constraint.mute = was
        obj.update_tag()


def _apart(a: Matrix, b: Matrix, length: float) -> bool:
    return ((a.translation - b.translation).length > snap_guard.LANDED_DISTANCE * length
            or turn_degrees(a, b) > snap_guard.LANDED_DEGREES)


def _shown_bones(parts: records.Parts) -> list[str]:
    return [*parts.chain, *([parts.extremity] if parts.extremity else [])]


def _poses(obj: bpy.types.Object, frames: Sequence[int] | None, names: Sequence[str]) -> dict[str, list[Matrix]]:
    if frames is None:  # the pose set now, which going to a frame would give back to its keys
        shown = evaluated_pose(obj)
        return {name: [shown[name]] for name in names}
    return evaluated_poses(obj, frames, names)


@contextmanager
def _in_ik(obj: bpy.types.Object, limbs: Sequence[records.Parts]) -> Iterator[None]:
    with ExitStack() as stack:
        for parts in limbs:
            stack.enter_context(in_ik(obj, parts))
        yield


def _refuse(found: list[tuple[str, bpy.types.Constraint]], off: str, frame: int | None, doing: str,
            wanted: str) -> None:
    listed = ", ".join(f"the {constraint.type.replace('_', ' ').title()} constraint '{constraint.name}' on "
                       f"'{owner}'" for owner, constraint in found)
    it = "it" if len(found) == 1 else "them"
    when = f" on frame {frame}" if frame is not None else ""
    # An influence its keys or driver set would not stay at 0: only muting holds.
    keyed = any(clips.animating_curves(constraint.id_data, f"{constraint.path_from_id()}.influence")
                for _, constraint in found)
    how = "Mute the constraint" if keyed else "Mute the constraint or set its influence to 0"
    raise RigError(f"{doing} would not land: {listed} holds {it} off where {doing} puts {it}, and '{off}' "
                   f"would stand off {wanted}{when}; nothing was changed", bone=found[0][0],
                   hint=f"{how} for {doing}, then run it again.")
