"""Stretch: one value per limb, the custom property ``stretch`` on the handle.

The IK aims at a hidden TARGET that follows the handle (or the foot roll's ball) but
never lies further than Maximum Stretch times the chain's length from REACH, a point at
the chain's root that moves with the body (a Limit Distance constraint). Every chain
bone's IK stretch is driven by the handle's ``stretch`` (an average of one variable: no
Python), so at 0 the bones keep their length and scale, and at 1 the chain reaches the
target. The IK constraint always allows stretch; the bones' values decide. A chain bone
that is no segment of the limb (see ``unstretched``: the hips or the shoulder at the root of
a chain of 3) is not driven: stretched, Blender's IK shrank it (and the body it carries),
and the chain's end fell short of the handle.

At a Maximum Stretch of 1 the chain may reach no further than its own length, so the limb does
not stretch and pays nothing for it: no REACH, no reach limit, no ``stretch`` drivers, and no
TARGET unless another part needs one (see ``add_target``): the IK then aims at the handle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import geometry, naming
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


def stretches(options: Any) -> bool:
    """Whether a limb with these options stretches (its Maximum Stretch lets it reach past its length)."""
    return bool(options.max_stretch > 1.0)


def add_target(draft: Draft) -> str:
    """The hidden TARGET the IK aims at, made on the first call: a stretching limb limits it, a Distance
    Limit keeps it off a sphere, and it stands at the chain's end where the handle (a foot roll's ball)
    does not, and is turned as the chain's last bone where the handle is not."""
    made = draft.made(ROLE_TARGET)
    if made is not None:
        return made
    for handle in draft.bones:  # a loop, not next() over a generator: asked for every stretching limb
        if handle.role == ROLE_HANDLE:
            break
    target = draft.new_name(draft.end_bone, TAG_TARGET)
    # Turned as the chain's last bone is at rest: with the IK's Rotation (Follow Handle Rotation,
    # which the panel may turn on at any time on a limb with a target) that bone takes the target's
    # orientation, so any other would twist it at rest.
    head, tail, z_axis = draft.rest(draft.last)
    end, size = draft.joints[-1], 0.5 * (handle.tail - handle.head).length
    draft.bones.append(NewBone(ROLE_TARGET, target, end, end + (tail - head).normalized() * size, z_axis, draft.follow,
                               PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
    return target


def plan(draft: Draft) -> None:
    if not stretches(draft.options):
        return
    skeleton, joints, length = draft.skeleton, draft.joints, draft.length
    target = add_target(draft)
    reach = draft.new_name(draft.chain[0], TAG_REACH)
    along = (joints[1] - joints[0]).normalized()
    draft.bones.append(NewBone(ROLE_REACH, reach, joints[0], joints[0] + along * 0.05 * length,
                               (joints[-1] - joints[0]).normalized(), skeleton[draft.chain[0]].parent,
                               PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
    draft.constraints.append(ConstraintPlan(target, "LIMIT_DISTANCE", CONSTRAINT_REACH, reach, settings=(
        ("limit_mode", "LIMITDIST_INSIDE"), ("distance", length * draft.options.max_stretch),
        ("owner_space", "POSE"), ("target_space", "POSE"))))
    draft.properties.append(PropertyPlan(draft.handle, STRETCH, 0.0, 0.0, 1.0, STRETCH_DESCRIPTION))
    still = unstretched(draft)
    if still:
        draft.notes.extend(f"'{name}' does not stretch: {why}" for name, why in still.items())
    driven = Driven(((STRETCH, draft.handle),))  # frozen: every bone's driver reads the same switch
    draft.drivers.extend([PoseDriver(name, "ik_stretch", driven) for name in draft.chain if name not in still])


def unstretched(draft: Draft) -> dict[str, str]:
    """The chain bones that must not stretch, each with why: those that are no segment of the limb.

    Blender's IK stretches a bone along its own length and carries its children with it: a
    bone with a child outside the limb that carries bones of its own (the spine above the hips)
    would shrink and grow the body with it, and a bone the next chain bone does not start at
    the tail of (the hips or the shoulder before a thigh or an upper arm, an imported bone
    whose tail points elsewhere) would carry that bone off the line the solver stretches, so
    the chain's end would miss the handle.
    """
    limb = {*draft.chain, draft.extremity}
    skeleton = draft.skeleton
    found = {}
    for index, name in enumerate(draft.chain):
        carried = [child.name for child in skeleton.children(name)
                   if child.name not in limb and skeleton.children(child.name)]
        head, tail, _ = draft.rest(name)
        joint = draft.joints[index + 1]
        if carried:
            found[name] = f"it carries {', '.join(carried)}, which would shrink and grow with it"
        elif (tail - joint).length > geometry.SAME_JOINT * (joint - head).length:
            found[name] = (f"'{draft.chain[index + 1]}' does not start at its tail, so stretched it would carry "
                           "that bone off the limb's line and the chain would miss the handle")
    return found


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    # A limb rebuilt without stretch keeps the handle's value (for a rebuild with it), not the slider.
    if handle is not None and STRETCH in handle and ROLE_REACH in parts.made:
        layout.prop(handle, f'["{STRETCH}"]', text="Stretch", slider=True)


PART = Part("stretch", Options, plan, roles=(ROLE_TARGET, ROLE_REACH), targets={"LIMIT_DISTANCE": (ROLE_REACH,)},
            used=stretches, plans=stretches, draw=draw,
            retired={"use_stretch": "a limb stretches when its Maximum Stretch (max_stretch) is above 1: its handle's "
                     "Stretch (0 to 1) says how far"})
