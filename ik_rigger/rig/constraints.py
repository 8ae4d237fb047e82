"""The one helper that adds a constraint IK Rigger plans."""

from __future__ import annotations

import bpy

from ..core.plan import ConstraintPlan


def add_constraint(obj: bpy.types.Object, planned: ConstraintPlan) -> bpy.types.Constraint:
    """Add ``planned`` to its owner bone, targeting bones of ``obj`` itself.

    Blender keeps constraint names unique per bone, so the returned constraint's
    name may differ from the planned one when the user has one of that name.
    """
    constraint = obj.pose.bones[planned.owner].constraints.new(planned.kind)
    constraint.name = planned.name
    constraint.target = obj
    constraint.subtarget = planned.subtarget
    if planned.pole_subtarget:
        constraint.pole_target = obj
        constraint.pole_subtarget = planned.pole_subtarget
    for key, value in planned.settings:
        setattr(constraint, key, value)
    return constraint
