"""Hinge Joints on a hidden chain whose joints do not bend in one plane: Quaternius' T-rex at the glTF
importer's default bone shapes, whose three-bone legs bend at the knee and the ankle about hinges 20
degrees apart. The hidden chain is the rig's own, so each of its bones is rolled on its joint's own hinge
and locked there (before, each leg was refused, telling the user to roll a bone of theirs IK does not
solve); the handles carry the feet, and the joints bend about their hinges only."""

from __future__ import annotations

import math

import bpy
from helpers import DATA, at_rest_alone, evaluate
from mathutils import Matrix
from test_imported import Limb, reach_and_bend

from ik_rigger import api
from ik_rigger.rig import records


def test_each_joint_of_a_hidden_chain_is_hinged_on_its_own_axis():
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_quaternius_trex.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    at_rest_alone(obj)
    skipped: list[tuple[str, str]] = []
    limbs = api.auto_rig(obj, hinge_joints=True, skipped=skipped)
    assert len(limbs) == 4 and not skipped, skipped
    bones = obj.data.bones
    for limb in limbs:
        parts = records.resolve(obj, obj.ik_rigger.limb_of(limb.name))
        assert parts.solver, limb.name  # a hidden chain
        for parent, joint in zip(parts.solver, parts.solver[1:]):
            pose_bone = obj.pose.bones[joint]
            free = [axis for axis in "xyz" if not getattr(pose_bone, f"lock_ik_{axis}")]
            assert len(free) == 1 and free[0] in "xz", (joint, free)
            up = bones[parent].tail_local - bones[parent].head_local
            down = bones[joint].tail_local - bones[joint].head_local
            hinge = up.cross(down).normalized()
            axis = bones[joint].matrix_local.col["xyz".index(free[0])].xyz
            assert abs(axis.normalized().dot(hinge)) > math.cos(math.radians(0.1)), joint
    for limb in limbs:
        reach_and_bend(obj, Limb(limb.name, len(limb.chain), limb.extremity, None))
        # Each joint turns about its hinge alone: its hinge axis keeps its line in its parent's frame.
        parts = records.resolve(obj, obj.ik_rigger.limb_of(limb.name))
        handle = obj.pose.bones[parts.handle]
        moved = bones[parts.handle].matrix_local.copy()
        moved.translation += (bones[parts.chain[0]].head_local - moved.translation) * 0.2
        handle.matrix = moved
        posed = evaluate(obj)
        rest_bend = bones[parts.solver[0]].matrix_local.inverted() @ bones[parts.solver[1]].matrix_local
        bent = rest_bend.inverted() @ posed[parts.solver[0]].inverted() @ posed[parts.solver[1]]
        for parent, joint in zip(parts.solver, parts.solver[1:]):
            free = next(axis for axis in "xz" if not getattr(obj.pose.bones[joint], f"lock_ik_{axis}"))
            index = "xyz".index(free)
            rest = bones[parent].matrix_local.inverted() @ bones[joint].matrix_local
            now = posed[parent].inverted() @ posed[joint]
            assert rest.col[index].xyz.normalized().dot(now.col[index].xyz.normalized()) > 0.9999, joint
        assert bent.to_quaternion().angle > 1e-3, limb.name  # the knee did bend
        handle.matrix_basis = Matrix.Identity(4)
