"""Rebuilt limbs whose new parts would play their kept keys otherwise: their controls are baked again.

A rebuild keeps a limb's controls and their keys (``motion_read``, ``kept_controls``), which is right
while the parts under them are the ones those keys were made for. A limb rigged by an earlier release
may be rebuilt onto parts that carry the same keys elsewhere: a hidden chain where its bones do not run
joint to joint (earlier releases solved on the bones themselves, the chain's end, not its joint, on the
handle), or, with Follow Handle Rotation, an IK target resting as the last chain bone (0.2.0 rested it
as the handle, so the limb rested twisted). A rebuild that turns on or off a part between the keys and
the limb's bones (a foot roll carrying the foot and toes, soft IK easing the chain's end short of the
handle), or sets anew the Soft IK, the pole angle or Follow Handle Rotation, plays them otherwise too.
Those limbs' controls are keyed anew from what plays before the rebuild, as a fresh build's are, so the
limb plays as it did.
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
from mathutils import Vector

from ..core.model import NewBone
from ..core.switches import is_number
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from ..parts.foot_roll import ROLE_ROLL
from ..parts.hidden import JOINT_ROLES
from ..parts.soft_ik import ROLE_SOFT, SOFT_IK
from ..parts.stretch import ROLE_TARGET
from .animation import existing_fcurve
from .records import Rebuilt, ik_constraint

# The roles of parts that play the controls' keys otherwise when turned on or off by a rebuild.
_REPLAYING = (ROLE_ROLL, ROLE_SOFT)
# Pole angles closer than this (radians) are the same angle.
_SAME_ANGLE = 1e-5
# Axes closer than this (the length of their difference, for unit vectors) are the same turn.
_SAME_AXIS = 1e-4
# The hidden chain's roles, made a set once: every build asks, rebuilt limbs or none.
_JOINTS = frozenset(JOINT_ROLES)


def _turned(bone: bpy.types.Bone, planned: NewBone) -> bool:
    """Whether the bone is planned turned otherwise than it rests (its Y or Z axis)."""
    y_axis = (Vector(planned.tail) - Vector(planned.head)).normalized()
    return ((bone.matrix_local.col[1].xyz - y_axis).length > _SAME_AXIS
            or (bone.matrix_local.col[2].xyz - Vector(planned.z_axis).normalized()).length > _SAME_AXIS)


def _set_anew(obj: bpy.types.Object, limb_plan: LimbPlan) -> bool:
    """Whether the rebuild sets a switch that plays the keys otherwise (the Soft IK) to another value."""
    for planned in limb_plan.properties:
        pose_bone = obj.pose.bones.get(planned.bone)
        if planned.key != SOFT_IK or not planned.overrides or pose_bone is None:
            continue
        current = pose_bone.get(planned.key)
        if (is_number(current) and abs(float(current) - planned.value) > 1e-6
                and existing_fcurve(obj, pose_bone.path_from_id(f'["{planned.key}"]')) is None):
            return True
    return False


def _solves_otherwise(obj: bpy.types.Object, limb_plan: LimbPlan, entry: Rebuilt) -> bool:
    """Whether the rebuilt IK solves the same keys otherwise: another pole angle (Automatic Pole Angle turned off,
    an angle of one's own), or Follow Handle Rotation turned on or off."""
    ik = ik_constraint(obj, entry.parts)
    planned = next((constraint for constraint in limb_plan.constraints if constraint.kind == "IK"), None)
    if ik is None or planned is None:
        return False
    settings = dict(planned.settings)
    angle = settings.get("pole_angle")
    turned = (planned.pole_subtarget and ik.pole_target is not None and isinstance(angle, float)
              and abs(angle - ik.pole_angle) > _SAME_ANGLE)
    return bool(turned) or bool(settings.get("use_rotation", ik.use_rotation)) != ik.use_rotation


def remade(obj: bpy.types.Object, plans: Sequence[LimbPlan], options: Sequence[LimbOptions],
           rebuilt: dict[int, Rebuilt]) -> set[int]:
    """The indexes of the rebuilt limbs whose controls' keys the rebuilt parts would play otherwise."""
    bones = obj.data.bones
    found = set()
    for index, entry in rebuilt.items():
        planned = {new.role: new for new in plans[index].new_bones}
        if _JOINTS & set(planned) and not _JOINTS & set(entry.parts.made):
            found.add(index)
            continue
        # A part turned on or off between the keys and the limb's bones plays them otherwise: a foot roll carries
        # the foot and toes from its own controls, soft IK eases the chain's end short of the handle.
        if (any((role in planned) != (role in entry.parts.made) for role in _REPLAYING) or _set_anew(obj, plans[index])
                or _solves_otherwise(obj, plans[index], entry)):
            found.add(index)
            continue
        target = entry.parts.made.get(ROLE_TARGET)
        if (options[index].use_rotation and ROLE_TARGET in planned and target in bones
                and _turned(bones[target], planned[ROLE_TARGET])):
            found.add(index)
    return found
