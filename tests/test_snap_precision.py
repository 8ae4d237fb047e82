"""Snap IK to FK lands within 1e-4 of the chain and 0.01 degree on poses far from rest, where
Blender's IK, solving in single precision, stops up to 2e-5 of the chain short of the handle and
leaves its segments a few 1e-5 longer than FK's: on a leg near straight that put the knee 1.2e-4
of the chain off and turned the thigh 0.025 degree. Snapping now sends the handle on by what IK
left over. On the Godot robot's legs (a hidden chain at the importer's defaults, the bones
themselves after Fix Bone Orientation), on evaluated poses, both Blenders."""

from __future__ import annotations

import random

import bpy
import pytest
from helpers import DATA, at_rest_alone, evaluate, rotation_degrees
from mathutils import Euler

from ik_rigger import api
from ik_rigger.rig import records, solver

SEEDS = range(30)
SPREAD = 2.5  # radians each way on every axis: far from rest, a leg near straight among them


def robot(**options: object) -> bpy.types.Object:
    bpy.ops.import_scene.gltf(filepath=str(DATA / "godot_platformer_robot.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    at_rest_alone(obj)
    api.auto_rig(obj, animation="IGNORE", **options)
    return obj


def chain_length(obj: bpy.types.Object, parts: records.Parts) -> float:
    bones = obj.data.bones
    joints = [bones[name].head_local for name in parts.chain]
    joints.append(bones[parts.chain[-1]].matrix_local @ solver.end_point(obj, parts))
    return sum((b - a).length for a, b in zip(joints, joints[1:]))


def fk_pose(obj: bpy.types.Object, parts: records.Parts, seed: int) -> None:
    """The chain and the foot turned by random angles up to ``SPREAD``, shown in FK."""
    rng = random.Random(seed)
    for name in [*parts.chain, parts.extremity]:
        bone = obj.pose.bones[name]
        bone.rotation_mode = "XYZ"
        bone.rotation_euler = Euler([rng.uniform(-SPREAD, SPREAD) for _ in range(3)])
    records.set_ik_fk(obj, parts, 0.0)


@pytest.mark.parametrize("options", [{}, {"fix_orientation": True}, {"fix_orientation": True, "soft_ik": 0.1},
                                     {"fix_orientation": True, "use_rotation": True}],
                         ids=["hidden chain", "fix orientation", "soft IK", "follow rotation"])
@pytest.mark.parametrize("leg", ["l-leg", "r-leg"])
def test_snap_ik_to_fk_lands_within_the_documented_figures_far_from_rest(leg, options):
    obj = robot(**options)
    parts = records.resolve(obj, obj.ik_rigger.limb_of(leg))
    assert obj.data.bones[parts.extremity].parent.name == parts.chain[-1]
    length = chain_length(obj, parts)
    worst = [0.0, 0.0]
    for seed in SEEDS:
        fk_pose(obj, parts, seed)
        fk = evaluate(obj)
        api.snap_limb(obj, leg, "IK")
        assert records.ik_fk(obj, parts) == 1.0
        shown = evaluate(obj)
        for name in [*parts.chain, parts.extremity]:
            worst[0] = max(worst[0], (shown[name].translation - fk[name].translation).length / length)
            worst[1] = max(worst[1], rotation_degrees(shown[name], fk[name]))
    assert worst[0] < 1e-4 and worst[1] < 0.01, worst
