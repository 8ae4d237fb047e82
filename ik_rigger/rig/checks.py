"""Refusals that need the Blender data, not only the rest skeleton: made before anything changes."""

from __future__ import annotations

from collections.abc import Collection

import bpy

from ..core.errors import RigError
from ..core.model import Skeleton
from ..core.notes import warning
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from . import clips

_LOCATION, _ROTATION, _SCALE = "location", "rotation", "scale"
_EVERYTHING = frozenset((_LOCATION, _ROTATION, _SCALE))
# What each constraint type sets of a bone's transform. A type not listed (Child Of,
# Armature, Action, Transformation, types newer than this table...) may set any of it.
_SETS = {
    "COPY_LOCATION": {_LOCATION}, "LIMIT_LOCATION": {_LOCATION}, "LIMIT_DISTANCE": {_LOCATION},
    "FLOOR": {_LOCATION}, "CLAMP_TO": {_LOCATION},
    "COPY_ROTATION": {_ROTATION}, "LIMIT_ROTATION": {_ROTATION}, "DAMPED_TRACK": {_ROTATION},
    "LOCKED_TRACK": {_ROTATION}, "TRACK_TO": {_ROTATION},
    "COPY_SCALE": {_SCALE}, "LIMIT_SCALE": {_SCALE}, "MAINTAIN_VOLUME": {_SCALE},
    "STRETCH_TO": {_ROTATION, _SCALE},
}
# The solvers that move a chain of bones, as users call them (Blender says "Inverse Kinematics").
IK_TYPES = {"IK": "IK", "SPLINE_IK": "Spline IK"}


def check_armature(obj: bpy.types.Object) -> None:
    """Refuse an armature object IK Rigger cannot build a sound rig on.

    An object scaled to 0 on an axis (by itself, a parent or a constraint) has no
    inverse: IK and the pose-space copies would turn bones at random. A negative
    scale is fine.
    """
    # The object's own transform is always current; its world matrix only after a
    # depsgraph update, so a scale just typed in shows in the first one only.
    scales = ((obj.matrix_basis.to_scale(), ""), (obj.matrix_world.to_scale(), " by its parent or constraints"))
    for scale, how in scales:
        for axis in range(3):
            if abs(scale[axis]) < 1e-6:
                raise RigError(f"the armature object '{obj.name}' is scaled to 0 on {'XYZ'[axis]}{how}, so its "
                               "bones cannot be posed", hint="Give the object (and its parents) a non-zero scale "
                               "on every axis, then try again.")


def constraint_stacks(obj: bpy.types.Object) -> dict[str, list[bpy.types.Constraint]]:
    """Each of ``obj``'s bones that has constraints, with them in order: read once per build, so
    the checks of each limb need not look its bones up again."""
    # Most bones have no constraint: an empty stack is passed over without its bone's name read.
    return {pose_bone.name: list(stack) for pose_bone in obj.pose.bones if (stack := pose_bone.constraints)}


def solver_constraints(stacks: dict[str, list[bpy.types.Constraint]]) -> list[tuple[str, bpy.types.Constraint]]:
    """Every IK and Spline IK constraint of ``stacks`` (``constraint_stacks``), with its bone."""
    return [(bone, constraint) for bone, stack in stacks.items() for constraint in stack
            if constraint.type in IK_TYPES]


def check_limb(skeleton: Skeleton, limb_plan: LimbPlan, options: LimbOptions, ours: Collection[tuple[str, str]],
               stacks: dict[str, list[bpy.types.Constraint]], solvers: list[tuple[str, bpy.types.Constraint]],
               ) -> list[str]:
    """Refuse a planned limb that would fight constraints already on the armature.

    ``ours`` holds (bone, constraint) pairs IK Rigger itself made, which a rebuild
    replaces; ``stacks`` the armature's constraints by bone (``constraint_stacks``), ``solvers``
    its IK and Spline IK constraints (``solver_constraints``).
    Another IK or Spline IK that moves a chain bone or the extremity is refused: the two solvers
    would pull the same bone. The extremity's own constraints that IK
    Rigger's copy constraints would come after and override are refused unless
    ``options.keep_extremity_constraints``: then they stay first, and apply while IK is
    off (Blender appends the constraints the build adds). One of either that does nothing now (muted,
    or at influence 0, neither animated) is kept as it is, and named in the notes returned.
    """
    guarded = list(limb_plan.chain) + ([limb_plan.extremity] if limb_plan.extremity else [])
    # IK solving on bones of the limb's own (a hidden chain), which the user's bones copy.
    hidden = any(planned.kind == "IK" and planned.owner not in limb_plan.chain for planned in limb_plan.constraints)
    notes = [note for owner, constraint in solvers if (owner, constraint.name) not in ours
             if (note := _check_ik(skeleton, owner, constraint, guarded, limb_plan.chain[0] if hidden else None))]
    if limb_plan.extremity and not options.keep_extremity_constraints:
        notes += _check_extremity(stacks.get(limb_plan.extremity, []), limb_plan, limb_plan.extremity, ours)
    return notes


def moved_by(skeleton: Skeleton, owner: str, constraint: bpy.types.Constraint) -> list[str]:
    """The bones an IK or Spline IK constraint on ``owner`` moves, nearest the owner first.

    As Blender's solvers count them: an IK without "Use Tail" starts at the owner's
    parent, and a chain count of 0 runs up to the root.
    """
    tip: str | None = owner
    if constraint.type == "IK" and not constraint.use_tail:
        tip = skeleton[owner].parent
    if tip is None:
        return []
    return skeleton.lineage(tip, constraint.chain_count or len(skeleton.bones))


def _check_ik(skeleton: Skeleton, owner: str, constraint: bpy.types.Constraint, guarded: list[str],
              hidden_root: str | None) -> str | None:
    """Refuse another solver that moves a bone of ``guarded``; one that does nothing now is kept, and the note
    returned names it (None: it moves none of them). ``hidden_root``: the chain's first bone, where the limb's
    IK solves a hidden chain the chain's bones copy."""
    moved = moved_by(skeleton, owner, constraint)
    bone = next((name for name in moved if name in guarded), None)
    if bone is None:
        return None
    kind = IK_TYPES[constraint.type]
    above = moved[moved.index(hidden_root) + 1:] if hidden_root is not None and hidden_root in moved else []
    if above and _idle(constraint):
        # Blender's dependency graph links a solver's chain whether or not it is muted: one reaching past the
        # chain groups the chain's bones with the bones the hidden chain hangs from, a cycle.
        raise RigError(f"is in the chain of the {kind} constraint '{constraint.name}' on '{owner}' "
                       f"({_how_idle(constraint)}), which reaches up past the limb to '{above[0]}': Blender links "
                       "its bones even so, and with the hidden chain IK Rigger solves this limb on they would make "
                       "a dependency cycle", bone=bone,
                       hint=f"Delete that constraint, or set its Chain Length to {moved.index(hidden_root) + 1} so "
                       f"it stops at '{hidden_root}', then try again.")
    if _idle(constraint):
        return (f"'{bone}' is in the chain of the {kind} constraint '{constraint.name}' on '{owner}', kept as it is "
                f"({_how_idle(constraint)}): turned on, it and IK Rigger's IK would pull the same bones (delete it "
                "if it is not needed)")
    if bone == owner:
        raise RigError(f"already has {'an' if kind[0] in 'AEIOU' else 'a'} {kind} constraint '{constraint.name}'",
                       bone=bone, hint="Delete that constraint, or rig another chain.")
    raise RigError(f"is already moved by the {kind} constraint '{constraint.name}' on '{owner}', whose chain "
                   "reaches up to it", bone=bone,
                   hint=f"Delete that constraint, or lower its Chain Length so it stops below '{bone}', then try "
                   "again.")


def _check_extremity(stack: list[bpy.types.Constraint], limb_plan: LimbPlan, extremity: str,
                     ours: Collection[tuple[str, str]]) -> list[str]:
    """Refuse a user constraint on the extremity that one of IK Rigger's copies would come after and override.

    A rebuild sets IK Rigger's constraints again in place and appends only new kinds,
    so a user constraint the user put after them stays after them, and decides. One that does
    nothing now is not refused: the note returned says what it will do if turned on.
    """
    if not stack:  # as most extremities are: nothing to override
        return []
    notes: list[str] = []
    copies = [planned for planned in limb_plan.constraints if planned.owner == extremity]
    kinds = {planned.kind for planned in copies}
    # IK Rigger's own constraints there that the rebuild keeps in place.
    staying = [(extremity, constraint.name) in ours and constraint.type in kinds for constraint in stack]
    present = {constraint.type for constraint, mine in zip(stack, staying) if mine}
    appended = set().union(*(_SETS.get(kind, _EVERYTHING) for kind in kinds - present))
    for index, constraint in enumerate(stack):
        if (extremity, constraint.name) in ours:
            continue
        later = appended.union(*(_SETS.get(after.type, _EVERYTHING)
                                 for after, mine in zip(stack[index + 1:], staying[index + 1:]) if mine))
        if _SETS.get(constraint.type, _EVERYTHING) & later:
            names = " and ".join(_type_name(planned.kind) for planned in copies)
            if _idle(constraint):
                notes.append(f"'{extremity}' keeps its own {_type_name(constraint.type)} constraint "
                             f"'{constraint.name}' as it is ({_how_idle(constraint)}): turned on, it applies with "
                             f"IK/FK at FK, and while IK is on IK Rigger's {names} "
                             f"override{'s' if len(copies) == 1 else ''} it")
                continue
            raise RigError(
                f"has its own {_type_name(constraint.type)} constraint '{constraint.name}', which IK Rigger's "
                f"{names} would override while IK is on", bone=extremity,
                hint="Turn on Keep Extremity Constraints to keep it, with IK Rigger's constraints after it; or "
                "delete it; or set the extremity to none.")
    return notes


def _idle(constraint: bpy.types.Constraint) -> bool:
    """True when ``constraint`` does nothing now and nothing animates its switch or influence on."""
    if not (constraint.mute or constraint.influence == 0.0):
        return False
    path = constraint.path_from_id()
    return not any(animated.startswith(path) for animated in clips.animated_paths_of(constraint.id_data))


def _how_idle(constraint: bpy.types.Constraint) -> str:
    return "muted" if constraint.mute else "at influence 0"


def overridden_by_ik(stacks: dict[str, list[bpy.types.Constraint]], limb_plan: LimbPlan,
                     ours: Collection[tuple[str, str]]) -> list[str]:
    """Warnings on the chain bones' own constraints that turn them: IK decides how a chain turns
    while it is on, over a Copy Rotation, a Child Of or a Limit Rotation alike (Blender's IK
    limits are the chain's own); at FK they apply as before. Nothing of them changes."""
    notes: list[str] = []
    for bone in limb_plan.chain:
        for constraint in stacks.get(bone, ()):
            if ((bone, constraint.name) in ours or _idle(constraint)
                    or constraint.type in IK_TYPES or _ROTATION not in _SETS.get(constraint.type, _EVERYTHING)):
                continue
            notes.append(warning(
                f"'{bone}' has its own {_type_name(constraint.type)} constraint '{constraint.name}': while IK is on, "
                "IK turns the bone whatever it says (IK limits are what limit a chain); with IK/FK at FK it applies "
                "as before"))
    return notes


def _type_name(kind: str) -> str:
    """A constraint type as Blender's interface names it ("Copy Rotation")."""
    return bpy.types.Constraint.bl_rna.properties["type"].enum_items[kind].name
