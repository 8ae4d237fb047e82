"""Refusals that need the Blender data, not only the rest skeleton: made before anything changes."""

from __future__ import annotations

from collections.abc import Collection

import bpy

from ..core.errors import RigError
from ..core.plan import LimbOptions, LimbPlan, Skeleton


def check_armature(obj: bpy.types.Object) -> None:
    """Refuse an armature object IK Rigger cannot build a sound rig on."""
    scale = obj.matrix_world.to_scale()
    for axis, value in zip("XYZ", scale):
        if abs(value) < 1e-6:
            raise RigError(f"the armature object '{obj.name}' is scaled to 0 on {axis}, so its bones cannot be "
                           "posed", hint="Give the object a non-zero scale on every axis, then try again.")


def check_limb(obj: bpy.types.Object, skeleton: Skeleton, limb_plan: LimbPlan, options: LimbOptions,
               ours: Collection[tuple[str, str]]) -> None:
    """Refuse a planned limb that would fight constraints already on the armature.

    ``ours`` holds (bone, constraint) pairs IK Rigger itself made, which a rebuild replaces.
    """
    last = limb_plan.chain[-1]
    for constraint in obj.pose.bones[last].constraints:
        if constraint.type == "IK" and (last, constraint.name) not in ours:
            raise RigError(f"already has an IK constraint '{constraint.name}'", bone=last,
                           hint="Delete that constraint, or rig another chain.")
