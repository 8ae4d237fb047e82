"""Section 2's hidden-chain rows: a limb whose bones do not run joint to joint, against its floor.

The human metarig with each chain bone turned 40 degrees off its next joint (its children
unconnected, so they stay where they are), as importers leave bones. IK Rigger rigs its four
limbs at Maximum Stretch 1 on hidden chains (``parts.hidden``). The floor is a plain bpy script,
with nothing from IK Rigger, making the same rig: per limb a joint bone per chain bone from
joint to joint (rolled so X is the hinge), a follower per chain bone at its rest under its
joint bone, the chain bone's Copy Transforms of its follower, the handle, pole, pole line
and clone, the IK on the last joint bone, the Copy Rotation on the foot or hand, and the
drivers IK Rigger makes (``ik_fk`` on every constraint's influence, times ``ik_weight`` on
the IK's). Target: evaluates at most 1.15x the floor.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy
from mathutils import Matrix

from benchmarks import common, floor

TARGET = 1.15
TURN_DEGREES = 40.0


def turned_metarig(sources: Path) -> bpy.types.Object:
    """The metarig with every chain bone's tail turned off its next joint, about the bone's own Z."""
    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    bpy.context.view_layer.objects.active = obj
    mode = obj.mode
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    chain = {name for first, last, _end in floor.LIMBS for name in (first, last)}
    for bone in edit_bones:
        if bone.parent is not None and bone.parent.name in chain:
            bone.use_connect = False
    for name in sorted(chain):
        bone = edit_bones[name]
        turn = Matrix.Rotation(math.radians(TURN_DEGREES), 3, bone.z_axis)
        roll_axis = turn @ bone.z_axis
        bone.tail = bone.head + turn @ (bone.tail - bone.head)
        bone.align_roll(roll_axis)
    bpy.ops.object.mode_set(mode=mode if mode != "EDIT" else "OBJECT")
    return obj


def ik_rigger(sources: Path) -> bpy.types.Object:
    """IK Rigger's four limbs on the turned metarig, at Maximum Stretch 1: each on a hidden chain."""
    from ik_rigger import api

    obj = turned_metarig(sources)
    api.build_many(obj, [(last, api.options(max_stretch=1.0, extremity_mode="BONE", extremity_name=end))
                         for _first, last, end in floor.LIMBS])
    return obj


def floor_rig(sources: Path) -> bpy.types.Object:
    """The floor: the same hidden chains, followers, controls, constraints and drivers, scripted plainly."""
    obj = turned_metarig(sources)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    wiring = [_limb_bones(obj, edit_bones, limb) for limb in floor.LIMBS]
    bpy.ops.object.mode_set(mode="OBJECT")
    pose_bones = obj.pose.bones
    for chain, joints, followers, end, handle, pole, clone, line, angle in wiring:
        handle_bone = pose_bones[handle]
        handle_bone["ik_fk"] = 1.0
        handle_bone["ik_weight"] = 1.0
        ik = pose_bones[joints[-1]].constraints.new("IK")
        ik.target, ik.subtarget = obj, handle
        ik.pole_target, ik.pole_subtarget, ik.pole_angle = obj, pole, angle
        ik.chain_count = 2
        ik.use_stretch = False
        floor.drive_influence(obj, ik, handle, ("ik_fk", "ik_weight"))
        stretch_to = pose_bones[line].constraints.new("STRETCH_TO")
        stretch_to.target, stretch_to.subtarget = obj, pole
        copy = pose_bones[end].constraints.new("COPY_ROTATION")
        copy.target, copy.subtarget = obj, clone
        copy.owner_space = copy.target_space = "POSE"
        floor.drive_influence(obj, copy, handle, ("ik_fk",))
        for name, follower in zip(chain, followers):
            follow = pose_bones[name].constraints.new("COPY_TRANSFORMS")
            follow.target, follow.subtarget = obj, follower
            floor.drive_influence(obj, follow, handle, ("ik_fk",))
    return obj


def _limb_bones(obj: bpy.types.Object, edit_bones, limb: tuple[str, str, str]) -> tuple:
    first_name, last_name, end_name = limb
    first, last, end = edit_bones[first_name], edit_bones[last_name], edit_bones[end_name]
    base, side = floor._split_side(last_name)
    end_base = floor._split_side(end_name)[0]
    points = [first.head.copy(), last.head.copy(), end.head.copy()]
    along = points[2] - points[0]
    knee = points[1] - points[0]
    bend = (knee - along * (knee.dot(along) / along.length_squared)).normalized()
    length = (points[1] - points[0]).length + (points[2] - points[1]).length
    joints, followers, parent = [], [], first.parent
    for index, name in enumerate((first_name, last_name)):
        joint = edit_bones.new(f"{floor._split_side(name)[0]}_IK_joint{side}")
        joint.head, joint.tail = points[index], points[index + 1]
        reach = joint.tail - joint.head
        joint.align_roll(bend - reach.normalized() * bend.dot(reach.normalized()))
        joint.parent, joint.use_deform, joint.hide = parent, False, True
        parent = joint
        joints.append(joint)
    for name, joint in zip((first_name, last_name), joints):
        own = edit_bones[name]
        follower = edit_bones.new(f"{floor._split_side(name)[0]}_IK_follow{side}")
        follower.head, follower.tail, follower.roll = own.head, own.tail, own.roll
        follower.parent, follower.use_deform, follower.hide = joint, False, True
        followers.append(follower.name)
    control_parent = first.parent.parent if first.parent else None
    handle = edit_bones.new(f"{end_base}_IK{side}")
    handle.head, handle.tail, handle.roll = end.head, end.tail, end.roll
    handle.parent, handle.use_deform = control_parent, False
    pole = edit_bones.new(f"{base}_IK_pole{side}")
    pole.head = points[1] + bend * floor.POLE_DISTANCE * length
    pole.tail = pole.head + bend * floor.POLE_LENGTH * length
    pole.align_roll(along.normalized())
    pole.parent, pole.use_deform = control_parent, False
    line = edit_bones.new(f"{base}_IK_pole_line{side}")
    line.head, line.tail = points[1], pole.head
    line.align_roll(along.normalized())
    line.parent, line.use_deform, line.hide_select = last, False, True
    clone = edit_bones.new(f"{end_base}_IK_clone{side}")
    clone.head, clone.tail, clone.roll = end.head, end.tail, end.roll
    clone.parent, clone.use_deform = handle, False
    angle = floor._pole_angle(joints[0].head, joints[0].tail, joints[0].x_axis, points[2], pole.head)
    return ((first_name, last_name), [joint.name for joint in joints], followers, end_name, handle.name, pole.name,
            clone.name, line.name, angle)


def differences(sources: Path) -> list[str]:
    """Both rigs made in one fresh scene, compared (``same_rig``): empty when the floor makes IK Rigger's rig."""
    common.reset()
    mine = ik_rigger(sources)
    mine.name = "IK Rigger's"
    return same_rig(mine, floor_rig(sources))


def same_rig(ik_rigger_obj: bpy.types.Object, floor_obj: bpy.types.Object) -> list[str]:
    """What differs between the two rigs' bones and constraints (names, parents, kinds): empty when alike."""
    def summary(obj: bpy.types.Object) -> dict[str, tuple]:
        return {bone.name: (bone.parent.name if bone.parent else None,
                            tuple(sorted(c.type for c in obj.pose.bones[bone.name].constraints)))
                for bone in obj.data.bones}

    mine, theirs = summary(ik_rigger_obj), summary(floor_obj)
    return sorted(f"{name}: {mine.get(name)} != {theirs.get(name)}" for name in set(mine) | set(theirs)
                  if mine.get(name) != theirs.get(name))
