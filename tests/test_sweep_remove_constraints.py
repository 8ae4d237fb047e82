"""Remove IK Limb on a motion capture whose chain carries constraints of the user's: it plays as before rigging.

Auto-Rig keys the capture onto the controls, and the chain's own keys stay as they were. Removing the
limb baked what the IK played back onto the chain's keys, and the user's constraints then played on top
of what they had already shaped: a Copy Rotation at a tenth of its influence turned the shin 3.6
degrees off, a Damped Track at a fifth 9 degrees. Where the chain's own keys play what the IK plays
(nobody changed the controls since), they are kept as they were; where the controls were changed, the
limb's motion is still baked onto the chain (tests/test_bake.py, test_pose_tools.py).
"""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, deforming, rotation_degrees
from test_bake import key_snapshot

from ik_rigger import api

SHIN = "mixamorig:LeftLeg"


def _copy_rotation(obj: bpy.types.Object) -> None:
    constraint = obj.pose.bones[SHIN].constraints.new("COPY_ROTATION")
    constraint.target, constraint.subtarget, constraint.influence = obj, "mixamorig:Hips", 0.1


def _damped_track(obj: bpy.types.Object) -> None:
    target = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(target)
    for frame, place in ((1, (0.2, -0.3, 0.1)), (40, (0.5, -0.2, 0.4))):
        target.location = place
        target.keyframe_insert("location", frame=frame)
    constraint = obj.pose.bones[SHIN].constraints.new("DAMPED_TRACK")
    constraint.target, constraint.influence = target, 0.2


@pytest.mark.parametrize("constrain", [_copy_rotation, _damped_track], ids=["copy-rotation", "damped-track"])
def test_removing_the_limbs_plays_the_capture_as_before_with_the_users_constraints(constrain):
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    constrain(obj)
    users = {bone.name for bone in obj.data.bones}
    frames = range(1, 70, 3)
    before = deforming(obj, frames)
    keys = key_snapshot(obj, users)
    size = max(obj.dimensions)
    assert len(api.auto_rig(obj)) == 4
    messages = [message for limb in api.limbs(obj) for message in api.remove(obj, limb.name)]
    assert {bone.name for bone in obj.data.bones} == users
    after = deforming(obj, frames)
    for frame, poses in before.items():
        for name, matrix in poses.items():
            assert (matrix.translation - after[frame][name].translation).length < 1e-5 * size, (frame, name)
            assert rotation_degrees(matrix, after[frame][name]) < 0.01, (frame, name)
    assert key_snapshot(obj, users) == keys
    assert any("play it with their own keys" in message for message in messages), messages
