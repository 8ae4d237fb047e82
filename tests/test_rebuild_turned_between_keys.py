"""A rebuild that turns the chain's bones keeps every frame of each clip playing, between its keys too.

The glTF Fox's clips key their bones Linear, on frames some clips skip (the Run clip keys frames 16 and 20,
nothing between): a rebuild turning on Fix Bone Orientation keys the turned bones anew, and before, only on
their keyed frames with the user's default (Bezier) interpolation, so between those keys they played another
curve (the feet over 1% of the height off on frames 17 to 19 of Run). Every frame of every clip, each deforming
bone, against the clip before rigging, within 0.1% of the shortest rigged limb's length.
"""

from __future__ import annotations

import time

import bpy
from helpers import DATA
from test_motion_fidelity import at_rest, deforms, play_alone, worst_deform
from test_scene_far_key import _curves

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


def test_a_rebuild_turning_the_bones_of_a_clip_with_a_stray_key_reads_only_the_frames_near_its_keys():
    """A stray key at frame 100000 on a chain bone: keyed anew on every frame up to it, the rebuild would
    evaluate the scene 100000 times; across that gap it keys the keys' own frames, as before."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    built = api.auto_rig(obj)
    chain = built[0].chain
    curve = next(curve for curve in _curves(obj.animation_data.action)
                 if curve.data_path == f'pose.bones["{chain[0]}"].rotation_quaternion')
    curve.keyframe_points.insert(100000, curve.keyframe_points[-1].co[1])
    started = time.process_time()
    api.build(obj, built[0].name, both_sides=False, fix_orientation=True)
    assert time.process_time() - started < 5.0
    frames = sorted({round(point.co[0]) for point in curve.keyframe_points})
    assert frames[-1] == 100000 and frames[-2] < 1000, frames[-3:]
