"""A motion capture rigged with Foot Roll plays as before: the toe (on a hand, its first finger) copies
its clone's turn in IK, so the clone is keyed from the toe's motion, at the build and by Bake FK to IK
(before, the toe kept its clone's rest turn: the Mixamo capture's fingers played 53 degrees off)."""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, evaluate_world, rotation_degrees
from mathutils import Matrix

from ik_rigger import api

FRAMES = [1, 12, 30, 47, 69]


def _capture() -> bpy.types.Object:
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 69
    return obj


def _played(obj: bpy.types.Object) -> dict[int, dict[str, Matrix]]:
    shown = {}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        shown[frame] = {name: pose @ obj.data.bones[name].matrix_local.inverted()
                        for name, pose in evaluate_world(obj).items() if obj.data.bones[name].use_deform}
    return shown


def _worst(obj: bpy.types.Object, before: dict[int, dict[str, Matrix]]) -> tuple[float, float]:
    after = _played(obj)
    size = max(obj.dimensions)
    points = {bone.name: (bone.head_local, bone.tail_local) for bone in obj.data.bones}
    moved = max((pose @ point - after[frame][name] @ point).length / size
                for frame, poses in before.items() for name, pose in poses.items() for point in points[name])
    turned = max(rotation_degrees(pose, after[frame][name]) for frame, poses in before.items()
                 for name, pose in poses.items())
    return moved, turned


@pytest.mark.parametrize("how", ["built keeping the motion", "baked FK to IK"])
def test_a_capture_with_foot_roll_plays_as_before(how):
    obj = _capture()
    before = _played(obj)
    limbs = api.auto_rig(obj, foot_roll=True, animation="BAKE" if how.startswith("built") else "FK")
    assert all("foot_roll" in limb.parts for limb in limbs)
    if how == "baked FK to IK":
        api.bake(obj, "FK_TO_IK", switch=True)
    assert all(limb.ik_fk == 1.0 for limb in api.limbs(obj))
    moved, turned = _worst(obj, before)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
