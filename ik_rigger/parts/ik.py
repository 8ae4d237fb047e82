"""Blender's IK constraint on the chain's last bone: target, pole, pole angle, chain length.

Its influence is ``ik_fk * ik_weight`` of the handle (a simple expression: no Python),
so IK/FK and the IK Weight (the effector weight of other IK systems) blend it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.model import ConstraintPlan, Driven, PropertyPlan
from .base import Draft, Part, option
from .distance import limits_target
from .handle import IK_FK, ROLE_HANDLE
from .pole import ROLE_POLE
from .stretch import ROLE_TARGET, add_target, stretches

CONSTRAINT_IK = "IK Rigger IK"
IK_WEIGHT = "ik_weight"
IK_WEIGHT_DESCRIPTION = ("How strongly the IK pulls the chain toward this handle, 0 to 1, on top of IK/FK (the "
                         "effector weight of other IK systems): animate it to ease the IK in and out")
RESET_POLE_ANGLE = "ik_rigger.reset_pole_angle"


@dataclass(frozen=True)
class Options:
    iterations: int = option(500, "Iterations", "IK solver iterations", minimum=1, maximum=10000)
    use_rotation: bool = option(False, "Follow Handle Rotation", "The chain also turns to match the handle's "
                                "rotation (the IK constraint's Rotation), weighed by its Rotation Weight")


def influence(handle: str) -> Driven:
    """The IK constraint's influence: the handle's IK/FK times its IK weight."""
    return Driven(((IK_FK, handle), (IK_WEIGHT, handle)), f"{IK_FK} * {IK_WEIGHT}")


def needs_target(draft: Draft) -> bool:
    """Whether the IK aims at a TARGET of its own rather than at the handle: when the limb stretches,
    a foot roll's ball (not the handle) carries the chain's end, the chain follows the handle's
    rotation (the handle is turned as the extremity, not as the last bone) or a Distance Limit
    limits it."""
    return (draft.made(ROLE_TARGET) is not None or draft.follow != draft.handle or draft.options.use_rotation
            or limits_target(draft.options))


def plan(draft: Draft) -> None:
    target = add_target(draft) if needs_target(draft) else draft.handle
    draft.constraints.insert(0, ConstraintPlan(
        owner=draft.last, kind="IK", name=CONSTRAINT_IK, subtarget=target, pole_subtarget=draft.made(ROLE_POLE) or "",
        # A stretching limb always allows stretch here: how far each bone stretches is its ik_stretch,
        # which the handle's "stretch" drives (0: not at all); one that does not stretch ignores them.
        settings=(("chain_count", len(draft.chain)), ("pole_angle", draft.pole_angle),
                  ("iterations", draft.options.iterations), ("use_stretch", stretches(draft.options)),
                  ("use_tail", True),
                  ("use_rotation", draft.options.use_rotation)),
        influence=influence(draft.handle)))
    draft.properties.append(PropertyPlan(draft.handle, IK_WEIGHT, 1.0, 0.0, 1.0, IK_WEIGHT_DESCRIPTION))


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if handle is not None and IK_WEIGHT in handle:
        layout.prop(handle, f'["{IK_WEIGHT}"]', text="IK Weight", slider=True)
    ik = next((pose_bone.constraints[name] for owner, name in parts.constraints
               for pose_bone in (obj.pose.bones[owner],) if pose_bone.constraints[name].type == "IK"), None)
    if ik is None:
        return
    row = layout.row(align=True)
    row.prop(ik, "pole_angle")
    row.operator(RESET_POLE_ANGLE, text="", icon="FILE_REFRESH").limb = limb.name
    layout.prop(ik, "chain_count")
    layout.prop(ik, "iterations")
    rotation = layout.row()
    # Aimed at the handle, turned as the extremity, the last bone would twist: the option rebuilds a target.
    rotation.enabled = ik.subtarget != parts.handle
    rotation.prop(ik, "use_rotation", text="Follow Handle Rotation")
    layout.prop(ik, "weight", text="Position Weight")
    sub = layout.row()
    sub.active = ik.use_rotation
    sub.prop(ik, "orient_weight", text="Rotation Weight")


# A limb built before stretch targets arrived aims its IK at the handle itself.
PART = Part("ik", Options, plan, targets={"IK": (ROLE_TARGET, ROLE_HANDLE)}, draw=draw)
