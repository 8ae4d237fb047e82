"""An action with a manual frame range (a game clip's, which the glTF exporter honours) still plays its keys
outside that range when it is the armature's action: Auto-Rig keeps the motion over every frame the keys
play, not only the range. Before, the Mixamo capture's keys past a range of 5 to 30 played under controls
held still, the feet up to 108 degrees off."""

from __future__ import annotations

import bpy
from helpers import DATA, deforming, rotation_degrees

from ik_rigger import api


def test_keys_outside_an_actions_manual_frame_range_keep_playing_through_the_rig():
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    action = obj.animation_data.action
    action.use_frame_range = True
    action.frame_start, action.frame_end = 5, 30
    users = {bone.name for bone in obj.data.bones}
    frames = range(1, 70, 3)
    before = deforming(obj, frames)
    size = max(obj.dimensions)
    api.auto_rig(obj)
    assert (action.frame_start, action.frame_end) == (5, 30) and action.use_frame_range
    after = deforming(obj, frames)
    for frame, poses in before.items():
        for name in users:
            assert (poses[name].translation - after[frame][name].translation).length < 1e-3 * size, (frame, name)
            assert rotation_degrees(poses[name], after[frame][name]) < 0.25, (frame, name)
