"""Motion read from the keys: taken on ordinary captures, declined where more than keys has a say,
and the same as Blender's own evaluation of every frame."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import DATA, make_armature
from mathutils import Matrix
from test_bake import MOCAP_LIMBS, import_mocap

from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig import bake, keys, replay
from ik_rigger.rig.build import build_limbs

MOCAP_FRAMES = list(range(1, 70))


def assert_same_poses(obj: bpy.types.Object, got: dict[str, list[Matrix]], shown: dict[str, list[Matrix]],
                      tolerance: float = 1e-5) -> None:
    """Each bone within ``tolerance`` of its length and of its distance from the origin (which
    single precision blurs), and each axis within ``tolerance``, on every frame."""
    for name, poses in shown.items():
        length = obj.data.bones[name].length
        for frame, (pose, expected) in enumerate(zip(got[name], poses, strict=True)):
            moved = (pose.translation - expected.translation).length
            assert moved <= tolerance * (length + expected.translation.length), (name, frame, moved / length)
            for axis in range(3):
                assert (pose.col[axis].xyz - expected.col[axis].xyz).length <= tolerance, (name, frame, axis)


def recorded(obj: bpy.types.Object, frames: list[int], names: list[str] | None = None) -> keys.Recording:
    return keys.Recording(obj, frames, names if names is not None else [bone.name for bone in obj.pose.bones])


def import_capture(filename: str) -> tuple[bpy.types.Object, list[int]]:
    """A capture in tests/data with its motion, and its frames and a few held after its last."""
    if filename.endswith(".bvh"):
        bpy.ops.import_anim.bvh(filepath=str(DATA / filename))
    else:
        bpy.ops.import_scene.gltf(filepath=str(DATA / filename))
    obj = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    first, last = obj.animation_data.action.frame_range
    return obj, list(range(math.floor(first), math.ceil(last) + 4))


@pytest.mark.parametrize("filename", ["mixamo_freebvh.bvh", "pymo_walk.bvh", "makehuman_benchmark.bvh",
                                      "threejs_pirouette_rest.bvh", "gltf_robot_expressive.glb", "gltf_fox.glb",
                                      "godot_platformer_robot.glb"])
def test_a_capture_is_read_from_its_keys_as_blender_plays_it(filename):
    obj, frames = import_capture(filename)
    recording = recorded(obj, frames)
    assert recording.from_keys
    names = [bone.name for bone in obj.pose.bones]
    assert_same_poses(obj, recording.poses, keys.evaluated_poses(obj, frames, names))


def _keyed_corners() -> bpy.types.Object:
    """A chain whose bones turn in every rotation mode, keyed with scale, location (a connected
    bone's too), quaternions not of unit length (and of none), an axis-angle of no axis, and channels half
    keyed, half left set."""
    modes = ["QUATERNION", "AXIS_ANGLE", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
    # Every other bone connected, whose location Blender leaves out.
    specs = [(f"b{index}", (0.0, 0.05 * index, 0.3 * index), (0.0, 0.05 * index + 0.05, 0.3 * index + 0.3),
              f"b{index - 1}" if index else None, index % 2 == 1) for index in range(len(modes))]
    obj = make_armature(specs)
    for index, mode in enumerate(modes):
        pose_bone = obj.pose.bones[f"b{index}"]
        pose_bone.rotation_mode = mode
        pose_bone.location = (0.01, -0.02, 0.03)  # left set, not keyed, on every bone
        for frame in (1, 6, 11):
            phase = frame * 0.37 + index
            pose_bone.scale = (1.0 + 0.2 * math.sin(phase), 0.9, 1.1 + 0.1 * math.cos(phase))
            pose_bone.keyframe_insert("scale", frame=frame)
            if mode == "QUATERNION":
                pose_bone.rotation_quaternion = (0.0, 0.0, 0.0, 0.0) if frame == 6 else \
                    (2.0 * math.cos(phase), 0.3, -0.5 * math.sin(phase), 0.2)
                pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
            elif mode == "AXIS_ANGLE":
                pose_bone.rotation_axis_angle = (phase, 0.0, 0.0, 0.0) if frame == 6 else (phase, 0.3, -1.0, 0.5)
                pose_bone.keyframe_insert("rotation_axis_angle", frame=frame)
            else:
                pose_bone.rotation_euler = (0.5 * math.sin(phase), 0.4 * math.cos(phase), 0.3 * phase)
                pose_bone.keyframe_insert("rotation_euler", index=frame % 3, frame=frame)
            if index < 2:
                pose_bone.location = (0.1 * math.sin(phase), 0.2, -0.1 * phase)
                pose_bone.keyframe_insert("location", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def test_every_rotation_mode_scale_and_unkeyed_channels_are_read_as_blender_plays_them():
    obj = _keyed_corners()
    frames = list(range(0, 14))
    recording = recorded(obj, frames)
    assert recording.from_keys
    assert_same_poses(obj, recording.poses, keys.evaluated_poses(obj, frames, recording.names))


def _constrained(obj: bpy.types.Object) -> None:
    limit = obj.pose.bones["mixamorig:LeftUpLeg"].constraints.new("LIMIT_ROTATION")
    limit.use_limit_x = limit.use_limit_y = limit.use_limit_z = True
    limit.owner_space = "LOCAL"


def _rotation_not_inherited(obj: bpy.types.Object) -> None:
    obj.data.bones["mixamorig:LeftLeg"].use_inherit_rotation = False


def _scale_not_inherited(obj: bpy.types.Object) -> None:
    hips = obj.pose.bones["mixamorig:Hips"]
    for frame, scale in ((1, 1.0), (69, 1.5)):
        hips.scale = (scale, scale, scale)
        hips.keyframe_insert("scale", frame=frame)
    obj.data.bones["mixamorig:LeftUpLeg"].inherit_scale = "NONE"


def _driven(obj: bpy.types.Object) -> None:
    curve = obj.pose.bones["mixamorig:LeftLeg"].driver_add("rotation_euler", 0)
    curve.driver.expression = "frame / 20"


def _ik_below(obj: bpy.types.Object) -> None:
    ik = obj.pose.bones["mixamorig:LeftFoot"].constraints.new("IK")
    ik.target, ik.subtarget, ik.chain_count = obj, "mixamorig:RightFoot", 2


def _nla(obj: bpy.types.Object) -> None:
    data = obj.animation_data
    track = data.nla_tracks.new()
    track.strips.new("walk", 1, data.action)
    data.action = None


@pytest.mark.parametrize("change", [_constrained, _rotation_not_inherited, _scale_not_inherited, _driven, _ik_below,
                                    _nla])
def test_what_keys_alone_do_not_decide_is_played_frame_by_frame(change, monkeypatch):
    obj = import_mocap()
    change(obj)
    obj.update_tag()
    names = ["mixamorig:LeftUpLeg", "mixamorig:LeftLeg", "mixamorig:LeftFoot"]
    assert replay.unsupported(obj, names) is not None
    recording = recorded(obj, MOCAP_FRAMES, names)
    assert not recording.from_keys
    shown = keys.evaluated_poses(obj, MOCAP_FRAMES, names)
    assert_same_poses(obj, recording.poses, shown)
    # The change matters: poses from the keys alone would differ, and the three frames checked
    # against Blender's evaluation catch it even where the reasons are not looked at.
    monkeypatch.setattr(replay, "unsupported", lambda *_: None)
    alone = replay.poses(obj, MOCAP_FRAMES, names)
    with pytest.raises(AssertionError):
        assert_same_poses(obj, alone if alone is not None else {}, shown, 1e-3)
    checked = recorded(obj, MOCAP_FRAMES, names)
    assert not checked.from_keys
    assert_same_poses(obj, checked.poses, shown)


def _rigged_mocap() -> bpy.types.Object:
    obj = import_mocap()
    build_limbs(obj, [(name, LimbOptions(animation="IGNORE")) for name in MOCAP_LIMBS])
    return obj


def _control_keys(obj: bpy.types.Object) -> dict[tuple[str, int], list[float]]:
    found = {}
    for curve in obj.animation_data.action.fcurves if hasattr(obj.animation_data.action, "fcurves") else (
            curve for layer in obj.animation_data.action.layers for strip in layer.strips
            for bag in strip.channelbags for curve in bag.fcurves):
        if any(f'"{limb.handle}"' in curve.data_path or f'"{limb.pole}"' in curve.data_path
               or f'"{limb.clone}"' in curve.data_path for limb in obj.ik_rigger.limbs):
            values = [0.0] * (2 * len(curve.keyframe_points))
            curve.keyframe_points.foreach_get("co", values)
            found[(curve.data_path, curve.array_index)] = values
    return found


def test_a_bake_reads_a_capture_from_its_keys_and_keys_what_playing_it_would(monkeypatch):
    obj = _rigged_mocap()
    results = bake.bake_limbs(obj, list(obj.ik_rigger.limbs), "FK_TO_IK", MOCAP_FRAMES)
    assert [result.from_keys for result in results] == [True] * len(MOCAP_LIMBS)
    fast = _control_keys(obj)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    played = _rigged_mocap()
    monkeypatch.setattr(replay, "poses", lambda *_: None)
    results = bake.bake_limbs(played, list(played.ik_rigger.limbs), "FK_TO_IK", MOCAP_FRAMES)
    assert not any(result.from_keys for result in results)
    slow = _control_keys(played)
    assert fast.keys() == slow.keys() and len(fast) >= 3 * 4 * len(MOCAP_LIMBS)
    for channel, values in slow.items():
        scale = 1e-4 * (1.0 if "rotation" in channel[0] else 10.0)  # centimetres: 1e-3 mm, 1e-4 radian
        assert max(abs(a - b) for a, b in zip(fast[channel], values, strict=True)) < scale, channel


def test_a_bake_where_a_chain_bone_is_constrained_plays_the_frames():
    obj = _rigged_mocap()
    _constrained(obj)
    results = bake.bake_limbs(obj, [obj.ik_rigger.limbs[0]], "FK_TO_IK", MOCAP_FRAMES)
    assert not results[0].from_keys
