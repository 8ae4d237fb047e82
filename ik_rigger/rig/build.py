"""Write limb plans to Blender: one Edit-mode pass for bones, one pass for constraints.

Stages (each says the mode it runs in):
1. plan (Object or Pose mode): read the rest skeleton, plan every limb; any
   ``RigError`` is raised here, before the armature is touched;
2. strip (Object or Pose mode): take out the constraints of limbs being rebuilt;
3. bones (Edit mode): delete rebuilt limbs' bones, create handles, poles and
   clones, pre-bend straight chains;
4. constraints (Pose mode if the user was in it, else Object mode): IK and copy
   constraints with their drivers, chain colours, records.

From Pose or Object mode that is two mode switches, as few as the work allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import bpy

from ..core import geometry, naming
from ..core.errors import RigError
from ..core.plan import PALETTE_CHAIN, ROLE_CLONE, LimbOptions, LimbPlan, Skeleton, plan_limb
from . import modes, snap
from .checks import check_armature, check_limb
from .constraints import add_constraint
from .skeleton import check_editable, read_skeleton


@dataclass
class _Rebuilt:
    """A limb being rebuilt: what to keep from it across the rebuild."""

    index: int
    last: str = ""
    prebent: list[tuple[str, tuple[float, ...], tuple[float, ...], float]] = field(default_factory=list)
    poses: dict[str, tuple] = field(default_factory=dict)


def build_limbs(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
                skeleton: Skeleton | None = None) -> list[LimbPlan]:
    """Rig the chains ending at each requested bone; rebuild those already rigged.

    ``requests`` pairs the last bone of each chain with its options. Either every
    limb is built or, on a ``RigError``, nothing at all changes. ``skeleton`` saves
    reading the armature again when the caller has just read it (out of Edit mode).
    """
    check_editable(obj)
    check_armature(obj)
    with modes.kept_mode(obj) as original:
        modes.leave_edit_mode(obj)
        rig = obj.ik_rigger
        plans, rebuilt = _plan(obj, rig, requests, skeleton)
        _keep_poses(obj, rig, rebuilt)
        for item in rebuilt:
            strip_constraints(obj, rig.limbs[item.index])
        modes.set_mode(obj, "EDIT")
        originals = _edit_bones(obj, rig, plans, rebuilt)
        modes.set_mode(obj, modes.data_mode(original))
        # A rebuilt limb keeps its record, and so its place in the list: keys on its
        # IK/FK blend address it by index in Blender 5.
        records = {rig.limbs[item.index].name: rig.limbs[item.index] for item in rebuilt}
        for limb_plan, requested in zip(plans, requests):
            _constraints_and_record(obj, rig, limb_plan, requested[1], originals, records.get(limb_plan.chain[-1]))
        _restore_poses(obj, rebuilt)
    return plans


def plan_limbs(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
               skeleton: Skeleton | None = None) -> list[LimbPlan]:
    """Plan without building: what ``build_limbs`` would do (for dry runs)."""
    check_editable(obj)
    with modes.kept_mode(obj):
        modes.leave_edit_mode(obj)
        return _plan(obj, obj.ik_rigger, requests, skeleton)[0]


def _plan(
    obj: bpy.types.Object, rig, requests: Sequence[tuple[str, LimbOptions]], skeleton: Skeleton | None = None
) -> tuple[list[LimbPlan], list[_Rebuilt]]:
    if skeleton is None:
        skeleton = read_skeleton(obj)
    rebuilt: list[_Rebuilt] = []
    lasts = [last for last, _ in requests]
    for index, limb in enumerate(rig.limbs):
        if limb.chain and limb.chain[-1].name in lasts:
            rebuilt.append(_Rebuilt(index))
    old_bones = {name for entry in rebuilt for name in rig.limbs[entry.index].created()}
    base = skeleton.without(old_bones)
    used = {bone: limb.chain[-1].name for index, limb in enumerate(rig.limbs)
            if index not in {entry.index for entry in rebuilt} for bone in limb.bones()}
    taken: set[str] = set()
    plans = []
    for last, options in requests:
        if last in old_bones:
            raise RigError("was made by IK Rigger; it cannot end a chain", bone=last,
                           hint="Pick the last bone of the chain, such as the shin or forearm.")
        limb_plan = plan_limb(base, last, options, taken)
        for bone in (*limb_plan.chain, limb_plan.extremity):
            if bone in used:
                raise RigError(f"already belongs to the limb ending at '{used[bone]}'", bone=bone,
                               hint="Remove that limb first, or pick another chain.")
            if bone is not None:
                used[bone] = last
        ours = {(c.name, c.constraint) for entry in rebuilt for c in rig.limbs[entry.index].constraints}
        check_limb(obj, skeleton, limb_plan, options, ours)
        taken |= {bone.name for bone in limb_plan.new_bones}
        plans.append(limb_plan)
    return plans, rebuilt


def strip_constraints(obj: bpy.types.Object, limb) -> None:
    """Object or Pose mode: remove a limb's constraints and give the chain its colours and stretch back."""
    for owner, constraint in list(snap.recorded_constraints(obj, limb)):
        constraint.driver_remove("influence")
        owner.constraints.remove(constraint)
    _drop_empty_animation_data(obj)
    # Chain bones without a stored state had Blender's defaults (see _constraints_and_record).
    states = {item.name: item for item in limb.chain_states}
    for item in limb.chain:
        pose_bone = obj.pose.bones.get(item.name)
        if pose_bone is not None:
            state = states.get(item.name)
            pose_bone.color.palette = state.palette if state else "DEFAULT"
            pose_bone.ik_stretch = state.ik_stretch if state else 0.0


def _drop_empty_animation_data(obj: bpy.types.Object) -> None:
    """Remove animation data that only existed for IK Rigger's drivers, now gone."""
    data = obj.animation_data
    if data is not None and data.action is None and not data.drivers and not data.nla_tracks:
        obj.animation_data_clear()


def delete_bones(edit_bones: bpy.types.ArmatureEditBones, names: set[str]) -> None:
    """Edit mode: delete the named bones that still exist."""
    for name in names:
        bone = edit_bones.get(name)
        if bone is not None:
            edit_bones.remove(bone)


def _keep_poses(obj: bpy.types.Object, rig, rebuilt: list[_Rebuilt]) -> None:
    """Remember the pose of rebuilt limbs' handles and poles, which the rebuild recreates."""
    for item in rebuilt:
        limb = rig.limbs[item.index]
        item.last = limb.name
        item.prebent = [(rest.name, tuple(rest.head), tuple(rest.tail), rest.roll) for rest in limb.prebent]
        for created in limb.created():
            pose_bone = obj.pose.bones.get(created)
            if pose_bone is not None:
                item.poses[created] = (pose_bone.rotation_mode, pose_bone.location.copy(),
                                            pose_bone.rotation_quaternion.copy(), pose_bone.rotation_euler.copy(),
                                            pose_bone.rotation_axis_angle[:], pose_bone.scale.copy())


def _restore_poses(obj: bpy.types.Object, rebuilt: list[_Rebuilt]) -> None:
    for item in rebuilt:
        limb = obj.ik_rigger.limbs.get(item.last)
        if limb is not None:
            # Give the new constraints and chain the blend and stretch the record kept.
            if limb.ik_blend != 1.0:
                snap.set_ik_blend(obj, limb, limb.ik_blend)
            if limb.stretch:
                snap.set_stretch(obj, limb, limb.stretch)
        for name, (mode, location, quaternion, euler, axis_angle, scale) in item.poses.items():
            pose_bone = obj.pose.bones.get(name)
            if pose_bone is None:
                continue
            pose_bone.rotation_mode = mode
            pose_bone.location = location
            pose_bone.rotation_quaternion = quaternion
            pose_bone.rotation_euler = euler
            pose_bone.rotation_axis_angle = axis_angle
            pose_bone.scale = scale


def _collection(armature: bpy.types.Armature, rig, attribute: str, wanted: str) -> bpy.types.BoneCollection:
    """Edit mode: IK Rigger's own bone collection for one role, made on first use."""
    existing = armature.collections_all.get(getattr(rig, attribute)) if getattr(rig, attribute) else None
    if existing is None:
        existing = armature.collections.new(wanted)
        setattr(rig, attribute, existing.name)
    return existing


def _edit_bones(obj: bpy.types.Object, rig, plans: list[LimbPlan], rebuilt: list[_Rebuilt]) -> dict:
    """Edit mode: the bone stage. Returns the original rest of every pre-bent bone."""
    armature = obj.data
    edit_bones = armature.edit_bones
    delete_bones(edit_bones, {name for entry in rebuilt for name in rig.limbs[entry.index].created()})
    originals = {name: (head, tail, roll) for entry in rebuilt for name, head, tail, roll in entry.prebent}
    for limb_plan in plans:
        for new in limb_plan.new_bones:
            bone = edit_bones.new(new.name)
            bone.head = new.head
            bone.tail = new.tail
            bone.align_roll(new.z_axis)
            bone.use_deform = False
            bone.use_connect = False
            bone.color.palette = new.palette
            for collection in list(bone.collections):
                collection.unassign(bone)
            attribute = "mechanism_collection" if new.role == ROLE_CLONE else "controls_collection"
            _collection(armature, rig, attribute, new.collection).assign(bone)
            if new.role == ROLE_CLONE:
                bone.roll = edit_bones[limb_plan.extremity].roll
        for new in limb_plan.new_bones:
            if new.parent is not None:
                edit_bones[new.name].parent = edit_bones[new.parent]
        # Record every original first: moving a tail drags a connected child's head.
        for edit in limb_plan.bone_edits:
            bone = edit_bones[edit.name]
            originals.setdefault(edit.name, (tuple(bone.head), tuple(bone.tail), bone.roll))
        moved = set()
        for edit in limb_plan.bone_edits:
            bone = edit_bones[edit.name]
            bone.head = edit.head
            bone.tail = edit.tail
            bone.align_roll(edit.z_axis)
            moved.add(edit.name)
        for bone in edit_bones:
            if bone.use_connect and bone.parent is not None and bone.parent.name in moved:
                bone.head = bone.parent.tail
    return originals


def _constraints_and_record(obj: bpy.types.Object, rig, limb_plan: LimbPlan, options: LimbOptions,
                            originals: dict, limb=None) -> None:
    """Object or Pose mode: the constraint stage for one limb, then its record (``limb`` when rebuilt)."""
    if limb is None:
        limb = rig.limbs.add()
        limb.name = limb_plan.chain[-1]
        rig.active_limb_index = len(rig.limbs) - 1
    else:
        for collection in (limb.chain, limb.constraints, limb.prebent, limb.chain_states):
            collection.clear()
    for name in limb_plan.chain:
        limb.chain.add().name = name
        pose_bone = obj.pose.bones[name]
        # Only a bone whose colour or stretch differs from Blender's default gets a stored
        # state: the record is copied on every update of the object, so it stays small.
        if pose_bone.color.palette != "DEFAULT" or pose_bone.ik_stretch:
            state = limb.chain_states.add()
            state.name = name
            state.palette = pose_bone.color.palette
            state.ik_stretch = pose_bone.ik_stretch
        pose_bone.color.palette = PALETTE_CHAIN
        if name in originals:
            rest = limb.prebent.add()
            rest.name = name
            rest.head, rest.tail, rest.roll = originals[name]
    limb.extremity = limb_plan.extremity or ""
    limb.handle = limb_plan.handle
    limb.pole = limb_plan.pole or ""
    limb.clone = limb_plan.clone or ""
    for planned in limb_plan.constraints:
        constraint = add_constraint(obj, planned)
        snap.drive_ik_blend(obj, constraint, limb)
        record = limb.constraints.add()
        record.name = planned.owner
        record.constraint = constraint.name
    limb.set_options(options)


def mirrored_request(obj: bpy.types.Object, last: str, options: LimbOptions) -> tuple[str, LimbOptions] | None:
    """The same limb on the other side, when the names carry a side and it exists."""
    names = set(obj.data.bones.keys())
    other = naming.flip_name(last, names)
    if other is None or other not in names:
        return None
    flip = {"X_POS": "X_NEG", "X_NEG": "X_POS"}
    return other, replace(
        options,
        bend_direction=flip.get(options.bend_direction, options.bend_direction),
        handle_parent=naming.flip_name(options.handle_parent, names) or options.handle_parent,
        extremity=naming.flip_name(options.extremity, names) or options.extremity,
    )


def rest_pole_angle(obj: bpy.types.Object, limb) -> float:
    """The automatic pole angle of a built limb, from its rest skeleton (no mode switch)."""
    bones = obj.data.bones
    root = bones[limb.chain[0].name]
    last = bones[limb.chain[-1].name]
    return geometry.pole_angle(root.head_local, root.tail_local, root.matrix_local.col[0].xyz,
                               last.tail_local, bones[limb.pole].head_local)
