"""A snap or a parent switch keyed between keys of the user's: the rotation keyed is the one the bone's
keys play there, not another way of writing the same turn. An Euler turn wound past 180 degrees (an arm
windmilling) or a quaternion keyed with its other sign (as a bake keeps them continuous) was keyed in
Blender's own form, which the key before then interpolated toward the long way round: the thigh turned
10 degrees off on the frame after the key before, the handle swung 2 chain lengths away."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import all_fcurves, chain_length, evaluate, import_bvh, rotation_degrees
from mathutils import Euler

from ik_rigger import api

LEG = "mixamorig:LeftLeg"
THIGH = "mixamorig:LeftUpLeg"
# The snap's frame, between the user's keys on frames 1 and 21.
SNAPPED = 11


def _key_turns(obj: bpy.types.Object, name: str, mode: str, axis: int) -> None:
    """Key bone ``name`` in ``mode`` on frames 1 and 21, linearly (so a key between them at the pose they
    play there leaves the frames before it as they played): turned 190 and 200 degrees about ``axis``
    (Euler), or 30 and 40 degrees written with the quaternion's other sign."""
    bone = obj.pose.bones[name]
    bone.rotation_mode = mode
    path = "rotation_quaternion" if mode == "QUATERNION" else "rotation_euler"
    for frame, degrees in ((1, 190.0), (21, 200.0)) if mode != "QUATERNION" else ((1, 30.0), (21, 40.0)):
        angles = [0.0, 0.0, 0.0]
        angles[axis] = math.radians(degrees)
        turn = Euler(angles, "XYZ")
        if mode == "QUATERNION":
            bone.rotation_quaternion = -turn.to_quaternion()
        else:
            bone.rotation_euler = turn.to_matrix().to_euler(mode, turn)
        bone.keyframe_insert(path, frame=frame)
    for curve in all_fcurves(obj):
        if curve.data_path == bone.path_from_id(path):
            for point in curve.keyframe_points:
                point.interpolation = "LINEAR"


def _rigged() -> tuple[bpy.types.Object, api.Limb]:
    """The Mixamo skeleton's left leg rigged with Parent Switching, its motion left to the user."""
    obj = import_bvh("mixamo_freebvh.bvh")
    api.build(obj, LEG, animation="IGNORE", parent_switch=True)
    bpy.context.view_layer.objects.active = obj
    return obj, api.limbs(obj)[0]


def _played(obj: bpy.types.Object, frames) -> dict[int, dict]:
    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        shown[frame] = evaluate(obj)
    return shown


def _assert_plays_as_before(obj: bpy.types.Object, before: dict[int, dict], names) -> None:
    length = chain_length(obj, [THIGH, LEG])
    after = _played(obj, before)
    for frame, poses in before.items():
        for name in names:
            moved = (poses[name].translation - after[frame][name].translation).length
            assert moved < 1e-4 * length, (frame, name, moved / length)
            assert rotation_degrees(poses[name], after[frame][name]) < 0.01, (frame, name)


@pytest.mark.parametrize("mode", ["ZYX", "XYZ", "QUATERNION"])
def test_a_snap_keyed_between_keys_keeps_the_frames_before_it(mode):
    obj, limb = _rigged()
    _key_turns(obj, THIGH, mode, 0)
    obj.pose.bones[limb.bones["HANDLE"]]["ik_fk"] = 0.0
    before = _played(obj, range(1, SNAPPED + 1))
    bpy.context.scene.frame_set(SNAPPED)
    api.snap_limb(obj, LEG, "FK", key=True)  # in FK already: the pose it plays, keyed
    _assert_plays_as_before(obj, before, [*limb.chain, limb.extremity])


@pytest.mark.parametrize("mode", ["ZYX", "QUATERNION"])
@pytest.mark.parametrize("tool", ["Snap IK to FK", "Switch Parent"])
def test_a_control_keyed_between_keys_keeps_the_frames_before_it(mode, tool):
    obj, limb = _rigged()
    handle = limb.bones["HANDLE"]
    _key_turns(obj, handle, mode, 2)
    before = _played(obj, range(1, SNAPPED + 1))
    bpy.context.scene.frame_set(SNAPPED)
    if tool == "Snap IK to FK":
        api.snap_limb(obj, LEG, "FK", switch=False)  # FK takes the pose IK shows...
        api.snap_limb(obj, LEG, "IK", key=True)  # ...and IK is snapped to it: the handle where it is, keyed
    else:
        api.switch_parent(obj, LEG, 1, key=True)
    _assert_plays_as_before(obj, before, [handle, *limb.chain, limb.extremity])
