"""The IK handle: the control at the chain's end that the limb reaches for.

It stands at the chain's end, shaped like the extremity (or a quarter of the chain
along the last bone), unconnected, hanging from what ``parents`` chose (the guide's
Origin by default), never from the chain. It carries the limb's IK/FK switch
``ik_fk``, which every IK Rigger constraint's influence reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core import naming
from ..core.model import PALETTE_CONTROL, Driven, NewBone, PropertyPlan
from .base import Draft, Part, Shape

ROLE_HANDLE = "HANDLE"
IK_FK = "ik_fk"
IK_FK_DESCRIPTION = ("IK/FK switch of this limb: 1 is IK (the chain follows this handle), 0 is FK (the chain and "
                     "the foot or hand follow their own rotations)")
_SEGMENTS = 24
RING = Shape("IK Handle",
             tuple((math.cos(2 * math.pi * i / _SEGMENTS), 0.0, math.sin(2 * math.pi * i / _SEGMENTS))
                   for i in range(_SEGMENTS)),
             tuple((i, (i + 1) % _SEGMENTS) for i in range(_SEGMENTS)), 1.2)


@dataclass(frozen=True)
class Options:
    """The handle has no options of its own: its parent is the ``parents`` part's."""


def switch(handle: str) -> Driven:
    """The influence of a constraint that is on in IK and off in FK."""
    return Driven(((IK_FK, handle),))


def plan(draft: Draft) -> None:
    if draft.extremity:
        end = draft.skeleton.bones[draft.extremity]
        vector, z_axis = end.direction, end.z_axis
    else:
        # Turned as the last bone is at rest once the chain is planned (a straight chain's pre-bend turns it),
        # so with Follow Handle Rotation that bone takes the handle's own rotation.
        last_head, last_tail, z_axis = draft.rest(draft.last)
        vector = (last_tail - last_head).normalized() * 0.25 * draft.length
    head = draft.joints[-1]
    draft.bones.append(NewBone(ROLE_HANDLE, draft.handle, head, head + vector, z_axis, draft.controls_parent,
                               PALETTE_CONTROL, naming.COLLECTION_CONTROLS))
    draft.properties.append(PropertyPlan(draft.handle, IK_FK, 1.0, 0.0, 1.0, IK_FK_DESCRIPTION))
    draft.follow = draft.handle


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if handle is None:
        return
    if IK_FK in handle:
        layout.prop(handle, f'["{IK_FK}"]', text="IK/FK", slider=True)
    if handle.custom_shape is not None:  # the Bone Shapes option: the ring's size, Blender's own setting
        layout.prop(handle, "custom_shape_scale_xyz", text="Handle Shape Size")


def _aimed(obj: Any, ik: Any, handle: str, bones: Any) -> str:
    """The bone the IK aims at that hangs from the handle: its target, or the one soft IK's target copies
    (which it eases toward the root), or the handle itself."""
    aimed = ik.subtarget if ik.subtarget in bones else handle
    if aimed == handle:
        return aimed
    return next((constraint.subtarget for constraint in obj.pose.bones[aimed].constraints
                 if constraint.type == "COPY_TRANSFORMS" and constraint.subtarget in bones), aimed)


def _tip_rest(obj: Any, ik: Any) -> Any:
    """The rest of the bone that carries the IK (the last chain bone, or its hidden chain's): with Follow
    Handle Rotation Blender's IK turns it as the target stands, whatever the target rests as (this release
    rests the target as that bone; 0.2.0 rested it as the handle, so the limb rests twisted)."""
    path = ik.path_from_id()
    return obj.path_resolve(path[:path.rindex(".constraints[")]).bone.matrix_local


def snap_to_fk(snap: Any) -> list[str]:
    """The handle where the FK pose puts the extremity (through its clone), slid so the bone
    the IK aims at lands on the FK chain's end (``snap.aim``). With Follow Handle Rotation the last
    chain bone takes the IK target's rotation: the handle is turned so the target stands as that
    bone does in FK (the clone then takes the extremity's turn on it, see ``clone.snap_to_fk``)."""
    parts, fk, bones = snap.parts, snap.fk, snap.obj.data.bones
    handle, chain = parts.handle, parts.chain
    # Handle, clone and IK target hang from each other (through a foot roll's pivots, if any),
    # whatever the switch, so the FK evaluation holds how they stand now.
    aimed = _aimed(snap.obj, snap.ik, handle, fk)
    target = fk[handle].inverted() @ (snap.unconstrained(aimed) if aimed != handle else fk[handle])
    if snap.ik.use_rotation:
        tip = fk[chain[-1]] @ bones[chain[-1]].matrix_local.inverted() @ _tip_rest(snap.obj, snap.ik)
        pose = tip @ target.inverted()
    elif parts.extremity and parts.clone:
        pose = fk[parts.extremity] @ (fk[handle].inverted() @ fk[parts.clone]).inverted()
    else:
        pose = fk[chain[-1]] @ bones[chain[-1]].matrix_local.inverted() @ bones[handle].matrix_local
    pose.translation += snap.aim - (pose @ target).translation
    snap.obj.pose.bones[handle].matrix = pose
    return [handle]


def bake_to_ik(bake: Any) -> None:
    """The handle at the chain's end on every frame, turned like the extremity (through its
    clone) or like the last chain bone (with Follow Handle Rotation, which turns that bone as
    the handle: the clone then keys the extremity's turn on it)."""
    parts, bones = bake.parts, bake.obj.data.bones
    handle, chain = parts.handle, parts.chain
    rest = bones[handle].matrix_local
    parent = bones[handle].parent
    local = bake.local(rest, parent.matrix_local if parent is not None else None)
    follows = parts.extremity if parts.extremity and parts.clone and not bake.ik.use_rotation else chain[-1]
    if follows == chain[-1]:
        # The IK's bone takes the aimed bone's turn, which hangs from the handle as it rests.
        to_handle = (bones[chain[-1]].matrix_local.inverted() @ _tip_rest(bake.obj, bake.ik)
                     @ bones[_aimed(bake.obj, bake.ik, handle, bones)].matrix_local.inverted() @ rest)
    else:
        to_handle = bones[parts.clone].matrix_local.inverted() @ rest
    followed = bake.poses_of(follows)
    parent_poses = bake.poses_of(parent.name) if parent is not None else None
    poses, bases = [], []
    for number, end in enumerate(bake.ends):
        wanted = followed[number] @ to_handle
        wanted.translation = end
        poses.append(wanted)
        bases.append(local.basis(wanted, parent_poses[number] if parent_poses is not None else None))
    bake.key(handle, bases)
    bake.made[handle] = poses


PART = Part("handle", Options, plan, roles=(ROLE_HANDLE,), shapes={ROLE_HANDLE: RING}, draw=draw,
            snap_to_fk=snap_to_fk, bake_to_ik=bake_to_ik)
