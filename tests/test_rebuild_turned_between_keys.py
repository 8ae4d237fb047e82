"""A rebuild that turns the chain's bones keeps every frame of each clip playing, between its keys too.

The glTF Fox's clips key their bones Linear, on frames some clips skip (the Run clip keys frames 16 and 20,
nothing between): a rebuild turning on Fix Bone Orientation keys the turned bones anew, and before, only on
their keyed frames with the user's default (Bezier) interpolation, so between those keys they played another
curve (the feet over 1% of the height off on frames 17 to 19 of Run). Every frame of every clip, each deforming
bone, against the clip before rigging, within 0.1% of the shortest rigged limb's length.
"""

from __future__ import annotations

import bpy
from helpers import DATA
from test_motion_fidelity import at_rest, deforms, play_alone, worst_deform

from ik_rigger import api


def test_a_rebuild_turning_the_bones_plays_every_frame_between_linear_keys_as_before():
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    _, points = at_rest(obj)
    playing = obj.animation_data.action
    before = deforms(obj)
    play_alone(obj, playing)
    built = api.auto_rig(obj)
    assert len(built) >= 2
    play_alone(obj, playing)
    for limb in built:
        api.build(obj, limb.name, both_sides=False, fix_orientation=True)
    scale = max(obj.matrix_world.to_scale())
    shortest = min(sum(obj.data.bones[name].length for name in limb.chain) for limb in built) * scale
    moved, turned = worst_deform(obj, before, points, shortest)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
