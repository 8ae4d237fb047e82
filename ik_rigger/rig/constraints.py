"""The one helper that adds a constraint IK Rigger plans."""

from __future__ import annotations

import bpy

from ..core.model import ConstraintPlan


def add_constraint(obj: bpy.types.Object, planned: ConstraintPlan,
                   like: tuple[bpy.types.Constraint, ConstraintPlan] | None = None,
                   owner: bpy.types.PoseBone | None = None) -> bpy.types.Constraint:
    """Add ``planned`` to its owner bone, after the bone's own constraints.

    Blender keeps constraint names unique per bone, so the returned constraint's
    name may differ from the planned one when the user has one of that name.
    ``like``: a constraint this helper made for another plan of the same kind, already
    named as planned, with that plan, to copy rather than name a new one (``template_key``); ``owner``: the
    owner's pose bone, when the caller has it.
    """
    constraints = (owner if owner is not None else obj.pose.bones[planned.owner]).constraints
    if like is not None:
        # Naming a constraint rewrites every animation path of the file that names the old name, a
        # walk over all of the file's data each time; a copy takes its name (made unique on its bone).
        constraint = constraints.copy(like[0])
        configure(obj, constraint, planned, like[1])
        return constraint
    constraint = constraints.new(planned.kind)
    constraint.name = planned.name
    configure(obj, constraint, planned)
    return constraint


def template_key(planned: ConstraintPlan) -> tuple:
    """What two planned constraints share when one made by ``add_constraint`` may be copied for the
    other: kind, name and which settings are planned (``configure`` then sets every one the plan has)."""
    return planned.kind, planned.name, tuple([key for key, _ in planned.settings])


def configure(obj: bpy.types.Object, constraint: bpy.types.Constraint, planned: ConstraintPlan,
              copied: ConstraintPlan | None = None) -> None:
    """Give ``constraint`` the targets and settings ``planned`` has, aiming at bones of ``obj``.
    ``copied``: the plan ``constraint`` is a copy of a constraint configured from (``add_constraint``'s
    ``like``, of the same ``template_key``), whose target, and each setting the two plans agree on, it
    has already; setting one again would check the constraint anew (the subtarget's setting does)."""
    if planned.kind == "ARMATURE":
        # One bone the owner follows fully (an Armature constraint's targets have no single subtarget).
        constraint.targets.clear()
        target = constraint.targets.new()
        target.target, target.subtarget, target.weight = obj, planned.subtarget, 1.0
    else:
        if copied is None:
            constraint.target = obj
        constraint.subtarget = planned.subtarget
    if planned.kind == "IK":
        if copied is None or bool(copied.pole_subtarget) != bool(planned.pole_subtarget):
            constraint.pole_target = obj if planned.pole_subtarget else None
        constraint.pole_subtarget = planned.pole_subtarget
    if copied is not None:
        # Same keys in the same order (``template_key``): the copy holds the other plan's values.
        for (key, value), (_, had) in zip(planned.settings, copied.settings):
            if value != had:
                setattr(constraint, key, value)
        return
    for key, value in planned.settings:
        # Setting one checks the constraint again and tags the armature, a look costs far less: a value
        # it has already (Blender's default, on a new one) is left.
        if getattr(constraint, key) != value:
            setattr(constraint, key, value)
