"""Bake IK to FK on chain bones that do not inherit their parent's rotation or scale fully (a hand-made
rig's hand or shin with Inherit Rotation off; Inherit Scale and Local Location alike): their keys are worked out
by Blender's own rules for those options, so the limb plays in FK what its IK showed. Before, the keys
assumed full inheritance: the shin played 29 degrees off, and a removal that then baked the motion
back onto the chain up to 165."""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, deforming, rotation_degrees

from ik_rigger import api

FRAMES = range(1, 70, 3)


def _assert_same(before, after, size, users, where):
    for frame, poses in before.items():
        for name in users:
            moved = (poses[name].translation - after[frame][name].translation).length / size
            turned = rotation_degrees(poses[name], after[frame][name])
            assert moved < 1e-3 and turned < 0.25, (where, frame, name, moved, turned)


@pytest.mark.parametrize("how", ["shin-no-rotation", "hand-no-rotation"])
def test_bake_ik_to_fk_and_removal_play_bones_that_do_not_inherit_fully(how):
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    bones = obj.data.bones
    bones["mixamorig:LeftLeg" if how == "shin-no-rotation" else "mixamorig:LeftHand"].use_inherit_rotation = False
    users = {bone.name for bone in bones}
    size = max(obj.dimensions)
    before = deforming(obj, FRAMES)
    api.auto_rig(obj)
    api.bake(obj, "IK_TO_FK", range(1, 70), switch=True)
    _assert_same(before, deforming(obj, FRAMES), size, users, "baked to FK")
    for limb in api.limbs(obj):
        api.remove(obj, limb.name)
    _assert_same(before, deforming(obj, FRAMES), size, users, "removed")
