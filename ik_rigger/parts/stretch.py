"""Stretch: one value per limb, the custom property ``stretch`` on the handle.

The IK aims at a hidden TARGET that follows the handle (or the foot roll's ball) but
never lies further than Maximum Stretch times the chain's length from REACH, a point at
the chain's root that moves with the body (a Limit Distance constraint). Every chain
bone's IK stretch is driven by the handle's ``stretch`` (an average of one variable: no
Python), so at 0 the bones keep their length and scale, and at 1 the chain reaches the
target. The IK constraint always allows stretch; the bones' values decide. A chain bone
that carries more than the limb (the hips at the root of a chain of 3, which carry the
spine and the other leg) is no segment of it and is not driven: stretched, Blender's IK
shrank it and the whole body with it, and the foot fell short.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import naming
from ..core.model import PALETTE_MECHANISM, ConstraintPlan, Driven, NewBone, PoseDriver, PropertyPlan
from .base import Draft, Part, option
from .handle import ROLE_HANDLE

ROLE_TARGET = "TARGET"
ROLE_REACH = "REACH"
TAG_TARGET = "IK_target"
TAG_REACH = "IK_reach"
CONSTRAINT_REACH = "IK Rigger Reach"
STRETCH = "stretch"
STRETCH_DESCRIPTION = ("How far the chain bones stretch to reach this handle: 0 never (bone lengths and scales stay "
                       "as they are), 1 fully, up to the limb's Maximum Stretch")


@dataclass(frozen=True)
class Options:
    max_stretch: float = option(1.5, "Maximum Stretch", "How far the chain may reach, as a factor of its "
                                "length, when the handle's Stretch is 1 (the handle itself always moves freely)",
                                minimum=1.0, maximum=10.0, soft_maximum=3.0)


def plan(draft: Draft) -> None:
    skeleton, joints, length = draft.skeleton, draft.joints, draft.length
    handle = next(bone for bone in draft.bones if bone.role == ROLE_HANDLE)
    target = draft.new_name(draft.end_bone, TAG_TARGET)
    # Turned as the chain's last bone is at rest: with the IK's Rotation (Follow Handle Rotation,
    # which the panel may turn on at any time) that bone takes the target's orientation, so any
    # other would twist it at rest.
    head, tail, z_axis = draft.rest(draft.last)
    draft.bones.append(NewBone(ROLE_TARGET, target, joints[-1],
                               joints[-1] + (tail - head).normalized() * 0.5 * (handle.tail - handle.head).length,
                               z_axis, draft.follow, PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
    reach = draft.new_name(draft.chain[0], TAG_REACH)
    along = (joints[1] - joints[0]).normalized()
    draft.bones.append(NewBone(ROLE_REACH, reach, joints[0], joints[0] + along * 0.05 * length,
                               (joints[-1] - joints[0]).normalized(), skeleton[draft.chain[0]].parent,
                               PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
    draft.constraints.append(ConstraintPlan(target, "LIMIT_DISTANCE", CONSTRAINT_REACH, reach, settings=(
        ("limit_mode", "LIMITDIST_INSIDE"), ("distance", length * draft.options.max_stretch),
        ("owner_space", "POSE"), ("target_space", "POSE"))))
    draft.properties.append(PropertyPlan(draft.handle, STRETCH, 0.0, 0.0, 1.0, STRETCH_DESCRIPTION))
    carriers = carrying(draft)
    if carriers:
        draft.notes.append(f"the bone(s) {', '.join(carriers)} do not stretch: they carry bones outside the limb "
                           "(the body, another limb), which would shrink and grow with them")
    draft.drivers.extend(PoseDriver(name, "ik_stretch", Driven(((STRETCH, draft.handle),)))
                         for name in draft.chain if name not in carriers)


def carrying(draft: Draft) -> list[str]:
    """The chain bones with a child outside the limb that carries bones of its own (the spine above the
    hips, the other leg): not a segment of the limb, so not one to stretch."""
    limb = {*draft.chain, draft.extremity}
    skeleton = draft.skeleton
    return [name for name in draft.chain
            if any(child.name not in limb and skeleton.children(child.name) for child in skeleton.children(name))]


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if handle is not None and STRETCH in handle:
        layout.prop(handle, f'["{STRETCH}"]', text="Stretch", slider=True)


PART = Part("stretch", Options, plan, roles=(ROLE_TARGET, ROLE_REACH), targets={"LIMIT_DISTANCE": (ROLE_REACH,)},
            draw=draw, retired={"use_stretch": "every limb may stretch now: its handle's Stretch (0 to 1) says how "
                                "far, up to Maximum Stretch (max_stretch)"})
