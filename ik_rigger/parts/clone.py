"""The extremity's clone: a copy of the foot or hand hanging from the handle, which the real
one copies (Copy Rotation, Rotation and Scale, or Transforms), so it stays planted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import naming
from ..core.model import PALETTE_CLONE, ConstraintPlan, NewBone
from .base import Draft, Item, Part, option
from .handle import switch

ROLE_CLONE = "CLONE"
TAG_CLONE = naming.TAG_CLONE
CONSTRAINT_COPY_ROTATION = "IK Rigger Copy Rotation"
CONSTRAINT_COPY_SCALE = "IK Rigger Copy Scale"
CONSTRAINT_COPY_TRANSFORMS = "IK Rigger Copy Transforms"
CONSTRAINT_COPY_LOCATION = "IK Rigger Copy Location"
COPY_MODE_ITEMS: tuple[Item, ...] = (
    ("ROTATION", "Rotation", "The extremity copies the rotation of its clone (the guide's setup)"),
    ("ROTATION_SCALE", "Rotation and Scale", "The extremity copies rotation and scale, so scaling the handle "
     "scales it"),
    ("TRANSFORMS", "Transforms", "The extremity copies its clone's whole transform"),
)
# Pose (armature) space, not world space: world-space copies shear under a
# non-uniformly scaled armature object.
POSE_SPACE = (("owner_space", "POSE"), ("target_space", "POSE"))


@dataclass(frozen=True)
class Options:
    copy_mode: str = option("ROTATION", "Extremity Copies", "What the extremity copies from its clone",
                            items=COPY_MODE_ITEMS, panel="basic")
    keep_extremity_constraints: bool = option(
        False, "Keep Extremity Constraints", "Keep the extremity's own constraints and add IK Rigger's after them "
        "(which override them while IK is on); off refuses to build over them")


def plan(draft: Draft) -> None:
    extremity = draft.extremity
    if extremity is None:
        return
    clone = draft.new_name(extremity, TAG_CLONE)
    bone = draft.skeleton.bones[extremity]
    draft.bones.append(NewBone(ROLE_CLONE, clone, bone.head, bone.tail, bone.z_axis, draft.follow, PALETTE_CLONE,
                               naming.COLLECTION_MECHANISM, roll_like=extremity))
    # An extremity whose head is off the chain's end would swing about it as the
    # last bone turns, and one that does not hang from the chain (a game rig's foot
    # under its root) would stay behind: pin its head too, so it stays planted.
    pinned = ((bone.head - draft.joints[-1]).length > 1e-4 * draft.length
              or not draft.skeleton.is_below(extremity, draft.last))
    draft.constraints.extend(_copies(extremity, clone, draft.options.copy_mode, pinned, draft.handle))


def _copies(extremity: str, clone: str, mode: str, pinned: bool, handle: str) -> list[ConstraintPlan]:
    on = switch(handle)
    if mode == "TRANSFORMS":
        return [ConstraintPlan(extremity, "COPY_TRANSFORMS", CONSTRAINT_COPY_TRANSFORMS, clone, POSE_SPACE,
                               influence=on)]
    plans = [ConstraintPlan(extremity, "COPY_ROTATION", CONSTRAINT_COPY_ROTATION, clone, POSE_SPACE, influence=on)]
    if pinned:
        plans.insert(0, ConstraintPlan(extremity, "COPY_LOCATION", CONSTRAINT_COPY_LOCATION, clone, POSE_SPACE,
                                       influence=on))
    if mode == "ROTATION_SCALE":
        plans.append(ConstraintPlan(extremity, "COPY_SCALE", CONSTRAINT_COPY_SCALE, clone, POSE_SPACE, influence=on))
    return plans


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    layout.prop(limb, "copy_mode")


def bake_to_ik(bake: Any) -> None:
    """The clone onto the extremity on every frame, under the handle's baked poses."""
    parts = bake.parts
    if not (parts.clone and parts.extremity and parts.handle in bake.made):
        return
    bones = bake.obj.data.bones
    local = bake.local(bones[parts.clone].matrix_local, bones[parts.handle].matrix_local)
    handle_poses = bake.made[parts.handle]
    bake.key(parts.clone, [local.basis(pose, handle_poses[number])
                           for number, pose in enumerate(bake.poses_of(parts.extremity))])


def snap_to_fk(snap: Any) -> list[str]:
    """With Follow Handle Rotation, the clone onto the extremity's FK pose: the handle is turned as
    the last chain bone (``handle.snap_to_fk``), so the extremity's own turn on that bone is the
    clone's. (Otherwise the handle is turned so the clone, as it hangs now, is the extremity.)"""
    parts = snap.parts
    if not (snap.ik.use_rotation and parts.clone and parts.extremity):
        return []
    snap.evaluate()  # the handle (and soft IK's target the clone may hang from) where snapped
    snap.obj.pose.bones[parts.clone].matrix = snap.fk[parts.extremity]
    return [parts.clone]


PART = Part("clone", Options, plan, roles=(ROLE_CLONE,),
            targets={kind: (ROLE_CLONE,) for kind in ("COPY_ROTATION", "COPY_SCALE", "COPY_TRANSFORMS",
                                                      "COPY_LOCATION")},
            draw=draw, snap_to_fk=snap_to_fk, bake_to_ik=bake_to_ik)
