"""The hidden chain: where a limb's bones do not run joint to joint, IK solves on bones that do.

Blender's IK moves a chain's last tail, and poles and hinges read the bones' axes: bones as
the glTF and FBX importers leave them (tails off the next joint, folded back, pointing up,
a last bone far longer than its segment) would carry the handle's pull to the wrong place.
The chain part then plans the limb on the chain as it would run joint to joint (the joints
are the chain bones' heads and the extremity's head, or the last bone's tail), rolled so X
is the hinge, and this part, planning last, makes that chain of the rig's own, as Rigify's
ORG and MCH chains do:

- JOINT bones, one per chain bone, from its joint to the next, each the child of the one
  before (the first of the chain's parent), hidden: every constraint, driver and hinge the
  other parts planned on a chain bone goes onto its JOINT bone (the IK on the last);
- FOLLOW bones, one per chain bone, the child of its JOINT bone at the chain bone's own
  rest, hidden: where the solved chain carries the user's bone;
- on each chain bone, a Copy Transforms of its FOLLOW bone in world space, its influence
  the limb's IK/FK switch, so in IK the user's bones play the solved chain and in FK their
  own keys.

A straight chain of the user's is pre-bent on its hidden chain alone (the chain part's), its bones
left straight: its knee then stands a pre-bend's width off theirs, and at a deep bend the user's shin
would leave the point their thigh carries by as much. So each FOLLOW bone takes on its bone's
pre-bend (turned and moved as its segment was) as the knee bends past its rest, fully by
``SETTLED_DEGREES`` (two Transformation constraints reading the knee's JOINT bone on its hinge): at rest
the user's bones stand where they are, and bent their joints meet where the hidden chain's do. Not with
Follow Handle Rotation, whose last bone turns as the handle does: settled, it would turn by its pre-bend more.

The user's bones keep their rest, roll, tail, length, constraints and drivers; at rest
nothing moves. Roles are numbered along the chain (``JOINT.0``, ``FOLLOW.0``, ...), so the
chain is found again after renames: the IK's owner and its parents are the JOINT bones, and
the owners of the Copy Transforms aimed at the FOLLOW bones are the user's chain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from mathutils import Matrix

from ..core import geometry, naming
from ..core.checks import MAX_CHAIN_BONES
from ..core.model import PALETTE_MECHANISM, BoneInfo, ConstraintPlan, NewBone, bending_indexes
from .base import Draft, Part
from .handle import switch

ROLE_JOINT = "JOINT"
ROLE_FOLLOW = "FOLLOW"
TAG_JOINT = "IK_joint"
TAG_FOLLOW = "IK_follow"
CONSTRAINT_FOLLOW = "IK Rigger Follow"
# A FOLLOW bone's turn and shift into its bone's pre-bend (a straight chain pre-bent on its hidden chain alone).
CONSTRAINT_SETTLE_TURN = "IK Rigger Settle Turn"
CONSTRAINT_SETTLE_SHIFT = "IK Rigger Settle Shift"
# The knee's bend past its rest by which a FOLLOW bone has taken on its bone's whole pre-bend: the seam
# between the user's bones is at most about a twentieth of the pre-bend's width below it, and none beyond.
SETTLED_DEGREES = 10.0
WORLD_SPACE = (("owner_space", "WORLD"), ("target_space", "WORLD"))


def role(kind: str, index: int) -> str:
    """The role of a hidden chain's bone of ``kind`` (JOINT or FOLLOW) at ``index`` along the chain."""
    return f"{kind}.{index}"


def index_of(role_name: str, kind: str) -> int | None:
    """The index along the chain a role of ``kind`` names, None for another role."""
    prefix, dot, number = role_name.partition(".")
    return int(number) if prefix == kind and dot and number.isdigit() else None


JOINT_ROLES = tuple(role(ROLE_JOINT, index) for index in range(MAX_CHAIN_BONES))
FOLLOW_ROLES = tuple(role(ROLE_FOLLOW, index) for index in range(MAX_CHAIN_BONES))


def plan(draft: Draft) -> None:
    if not draft.followed:
        return
    chain, skeleton = draft.chain, draft.skeleton
    joints = [draft.new_name(name, TAG_JOINT) for name in chain]
    onto = dict(zip(chain, joints))
    # What the other parts planned on the chain bones runs on the hidden chain.
    draft.constraints[:] = [replace(planned, owner=onto.get(planned.owner, planned.owner))
                            for planned in draft.constraints]
    draft.hinges[:] = [replace(hinge, bone=onto.get(hinge.bone, hinge.bone)) for hinge in draft.hinges]
    draft.drivers[:] = [replace(driver, bone=onto.get(driver.bone, driver.bone), driven=driver.driven.renamed(onto))
                        for driver in draft.drivers]
    parent = skeleton[chain[0]].parent
    for index, (name, joint) in enumerate(zip(chain, joints)):
        solved = skeleton[name]
        draft.bones.append(NewBone(role(ROLE_JOINT, index), joint, solved.head, solved.tail, solved.z_axis, parent,
                                   PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
        parent = joint
    for index, (name, joint) in enumerate(zip(chain, joints)):
        own = draft.followed[name]
        follower = draft.new_name(name, TAG_FOLLOW)
        # A bone pre-bent with the hidden chain (the chain part's) is followed at its new rest, rolled as the
        # pre-bend rolls it (its roll now is the one before).
        edit = draft.edited.get(name)
        head, tail, z_axis = (edit.head, edit.tail, edit.z_axis) if edit else (own.head, own.tail, own.z_axis)
        draft.bones.append(NewBone(role(ROLE_FOLLOW, index), follower, head, tail, z_axis, joint, PALETTE_MECHANISM,
                                   naming.COLLECTION_MECHANISM, hidden=True, roll_like=None if edit else name))
        draft.constraints.append(ConstraintPlan(name, "COPY_TRANSFORMS", CONSTRAINT_FOLLOW, follower, WORLD_SPACE,
                                                influence=switch(draft.handle)))
        if edit is None and not draft.options.use_rotation:
            draft.constraints.extend(_settling(draft, index, follower, own, joints))
    if draft.off_hinge:
        draft.notes.append(
            f"{draft.off_hinge} is rolled so neither its X nor its Z axis lies along its joint's hinge, where Hinge "
            f"Joints would lock it, so IK solves a hidden chain rolled on its hinges, and {chain[0]} > {chain[-1]} "
            f"follow it; they are {'pre-bent with it and otherwise ' if draft.edited else ''}left as they are "
            "(Fix Bone Orientation rolls them instead)")
        return
    draft.notes.append(
        f"the bones {chain[0]} > {chain[-1]} do not run joint to joint (as the importer left them), so IK solves "
        f"a hidden chain that does, and they follow it; they are left as they are")


def _settling(draft: Draft, index: int, follower: str, own: BoneInfo, joints: list[str]) -> list[ConstraintPlan]:
    """A FOLLOW bone's Transformation constraints taking on its bone's pre-bend as the knee bends (none
    where the hidden chain runs on the user's joints): the turn and shift that carry the user's segment
    (joint to joint) onto the hidden chain's, in the bone's own axes, from none at the knee's rest to all
    of them ``SETTLED_DEGREES`` further bent, read from the knee's JOINT bone on its hinge (its X)."""
    chain, solved = draft.chain, draft.skeleton
    bending = bending_indexes(chain, draft.halves)
    if len(bending) < 3:
        return []
    user = [draft.followed[name].head for name in chain] + [draft.joints[-1]]
    hidden = [solved[name].head for name in chain] + [draft.joints[-1]]
    turn = (user[index + 1] - user[index]).rotation_difference(hidden[index + 1] - hidden[index]).to_matrix()
    shift = hidden[index] - user[index]
    if turn.to_quaternion().angle < 1e-7 and shift.length < 1e-7 * draft.length:
        return []
    axes = Matrix((own.x_axis[:], (own.tail - own.head).normalized()[:], own.z_axis[:])).transposed()  # columns
    local = axes.transposed() @ turn @ axes
    euler, moved = local.to_euler("XYZ")[:], (axes.transposed() @ shift)[:]
    knee = bending[1]
    before, after = hidden[knee] - hidden[bending[0]], hidden[bending[2]] - hidden[knee]
    # Bending further turns the knee's bone on, about its X, the way the hidden chain is bent already.
    further = solved[chain[knee]].x_axis.dot(geometry.cross(before, after)) >= 0.0
    span = math.radians(SETTLED_DEGREES)
    ends = (("from_min_x_rot", 0.0), ("from_max_x_rot", span)) if further else (
        ("from_min_x_rot", -span), ("from_max_x_rot", 0.0))
    full = "to_max" if further else "to_min"
    common = (("target_space", "LOCAL"), ("owner_space", "LOCAL"), ("map_from", "ROTATION"),
              ("from_rotation_mode", "XYZ"), *ends, ("map_to_x_from", "X"), ("map_to_y_from", "X"),
              ("map_to_z_from", "X"))
    plans = [ConstraintPlan(follower, "TRANSFORM", CONSTRAINT_SETTLE_TURN, joints[knee], (
        *common, ("map_to", "ROTATION"), ("to_euler_order", "XYZ"), ("mix_mode_rot", "REPLACE"),
        *((f"{full}_{axis}_rot", value) for axis, value in zip("xyz", euler))))]
    if shift.length >= 1e-7 * draft.length:
        plans.append(ConstraintPlan(follower, "TRANSFORM", CONSTRAINT_SETTLE_SHIFT, joints[knee], (
            *common, ("map_to", "LOCATION"), ("mix_mode", "REPLACE"),
            *((f"{full}_{axis}", value) for axis, value in zip("xyz", moved)))))
    return plans


def snap_to_fk(snap: Any) -> list[str]:
    """The hidden chain onto the FK pose, carried as the user's bones are (``snap.joint_poses``): Blender's
    IK starts from the pose its bones hold, so with the handle and pole on that pose it leaves it as it is,
    twists and all."""
    parts = snap.parts
    if not parts.solver:
        return []
    bones, pose_bones = snap.obj.data.bones, snap.obj.pose.bones
    parent = bones[parts.solver[0]].parent
    parent_pose = snap.fk[parent.name] if parent is not None else None
    for joint, pose in zip(parts.solver, snap.joint_poses):
        bone = bones[joint]
        pose_bones[joint].matrix_basis = bone.convert_local_to_pose(
            pose, bone.matrix_local, parent_matrix=parent_pose if parent_pose is not None else Matrix.Identity(4),
            parent_matrix_local=bone.parent.matrix_local if bone.parent is not None else Matrix.Identity(4),
            invert=True)
        parent_pose = pose
    return list(parts.solver)


def bake_to_ik(bake: Any) -> None:
    """The hidden chain keyed on the FK motion, carried as the user's bones were (``bake.joint_poses``), so
    IK starts each frame from the pose it is to reach and plays it exactly (as IK on the bones themselves
    starts from their keys)."""
    parts = bake.parts
    if not parts.solver:
        return
    bones = bake.obj.data.bones
    parent = bones[parts.solver[0]].parent
    parent_poses = bake.poses_of(parent.name) if parent is not None else None
    for joint, poses in zip(parts.solver, bake.joint_poses):
        bone = bones[joint]
        local = bake.local(bone.matrix_local, bone.parent.matrix_local if bone.parent is not None else None)
        bake.key(joint, [local.basis(pose, parent_poses[number] if parent_poses is not None else None)
                         for number, pose in enumerate(poses)])
        bake.made[joint] = poses
        parent_poses = poses


@dataclass(frozen=True)
class Options:
    """No option: a limb gets a hidden chain exactly when its bones need one."""


PART = Part("hidden", Options, plan, roles=JOINT_ROLES + FOLLOW_ROLES, targets={"COPY_TRANSFORMS": FOLLOW_ROLES},
            snap_to_fk=snap_to_fk, bake_to_ik=bake_to_ik)
