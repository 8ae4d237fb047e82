"""A constraint of the user's on an IK control (a Limit Location holding the handle or the pole, a Child Of)
moves it again from where Bake FK to IK keys it and Plant Feet sets it: the baked IK missed the FK motion
by degrees and a planted foot stood off the ground, while both said they had done it. Now they land or
change nothing and say which constraint on which bone to mute, as the snaps do. On evaluated poses."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, both_legs_rigged, chain_length, evaluate, rotation_degrees, set_active_bone
from mathutils import Euler, Matrix

from ik_rigger import api

CHAIN = ["thigh.L", "shin.L", "foot.L"]


def _bones(obj: bpy.types.Object) -> dict[str, str]:
    return next(limb for limb in api.limbs(obj) if limb.name == "shin.L").bones


def _held_here(obj: bpy.types.Object, bone: str) -> bpy.types.Constraint:
    """A Limit Location of the user's holding ``bone`` where it stands now, in armature space."""
    constraint = obj.pose.bones[bone].constraints.new("LIMIT_LOCATION")
    constraint.name = 'Held "here"'
    constraint.owner_space = "POSE"
    for axis, value in zip("xyz", evaluate(obj)[bone].translation):
        for end in ("min", "max"):
            setattr(constraint, f"use_{end}_{axis}", True)
            setattr(constraint, f"{end}_{axis}", value)
    return constraint


def _walking_in_fk(obj: bpy.types.Object) -> dict[int, dict[str, Matrix]]:
    """The left leg keyed in FK from rest (frame 1) to a step (frame 5); what it plays on frames 1 to 5."""
    obj.pose.bones[_bones(obj)["HANDLE"]]["ik_fk"] = 0.0
    for frame, turns in ((1, [(0, 0, 0)] * 3), (5, [(0.5, 0.1, 0.05), (-0.7, 0.0, 0.0), (0.2, 0.1, 0.0)])):
        for name, turn in zip(CHAIN, turns):
            obj.pose.bones[name].rotation_quaternion = Euler(turn).to_quaternion()
            obj.pose.bones[name].keyframe_insert("rotation_quaternion", frame=frame)
    played = {}
    for frame in range(1, 6):
        bpy.context.scene.frame_set(frame)
        played[frame] = evaluate(obj)
    return played


def _state(obj: bpy.types.Object) -> tuple:
    bases = tuple(tuple(v for row in bone.matrix_basis for v in row) for bone in obj.pose.bones)
    switches = tuple(bone.get("ik_fk") for bone in obj.pose.bones)
    keys = sorted((curve.data_path, curve.array_index, tuple(tuple(key.co) for key in curve.keyframe_points))
                  for curve in all_fcurves(obj))
    return bases, switches, keys


def _plays(obj: bpy.types.Object, played: dict[int, dict[str, Matrix]]) -> bool:
    length = chain_length(obj, CHAIN[:2])
    for frame, poses in played.items():
        bpy.context.scene.frame_set(frame)
        shown = evaluate(obj)
        if not all((shown[name].translation - poses[name].translation).length <= 1e-4 * length
                   and rotation_degrees(shown[name], poses[name]) <= 0.03 for name in CHAIN):
            return False
    return True


@pytest.mark.parametrize("role", ["HANDLE", "POLE"])
def test_a_bake_to_ik_a_users_constraint_holds_off_the_motion_keys_nothing_and_names_it(role):
    obj = both_legs_rigged()
    bone = _bones(obj)[role]
    constraint = _held_here(obj, bone)
    played = _walking_in_fk(obj)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"'{bone}': Bake FK to IK would not land: the Limit Location "
                                           rf"constraint 'Held \"here\"' on '{bone}'.*nothing was changed.*Mute"):
        api.bake(obj, "FK_TO_IK", range(1, 6), switch=True)
    assert _state(obj) == before
    set_active_bone(obj, "shin.L")
    with pytest.raises(RuntimeError, match="Bake FK to IK would not land"):
        bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=5, key_switch=True, clear_other=True)
    assert _state(obj) == before
    constraint.mute = True
    assert api.bake(obj, "FK_TO_IK", range(1, 6), switch=True) == {"shin.L": 5, "shin.R": 5}
    assert _plays(obj, played)


def test_a_users_constraint_that_does_not_hold_the_control_off_lets_the_bake_land():
    obj = both_legs_rigged()
    constraint = obj.pose.bones[_bones(obj)["HANDLE"]].constraints.new("LIMIT_LOCATION")
    constraint.use_min_z, constraint.min_z = True, -10.0
    played = _walking_in_fk(obj)
    assert api.bake(obj, "FK_TO_IK", range(1, 6), switch=True) == {"shin.L": 5, "shin.R": 5}
    assert _plays(obj, played)


def _ground(height: float) -> bpy.types.Object:
    mesh = bpy.data.meshes.new("Floor")
    mesh.from_pydata([(-5, -5, height), (5, -5, height), (5, 5, height), (-5, 5, height)], [], [(0, 1, 2, 3)])
    floor = bpy.data.objects.new("Floor", mesh)
    bpy.context.scene.collection.objects.link(floor)
    return floor


@pytest.mark.parametrize("frames", [None, range(1, 4)])
def test_plant_feet_a_users_constraint_holds_a_handle_off_changes_nothing_and_names_it(frames):
    obj = both_legs_rigged()
    handle = _bones(obj)["HANDLE"]
    constraint = _held_here(obj, handle)
    floor = _ground(0.2)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"'{handle}': Plant Feet would not land: the Limit Location "
                                           rf"constraint 'Held \"here\"' on '{handle}'.*nothing was changed"):
        api.plant_feet(obj, floor, frames)
    assert _state(obj) == before
    constraint.mute = True
    assert api.plant_feet(obj, floor, frames).feet == ["shin.L", "shin.R"]
    bpy.context.scene.frame_set(1)
    shown = evaluate(obj)
    assert abs(shown["foot.L"].translation.z - shown["foot.R"].translation.z) < 1e-4


def test_a_users_constraint_on_a_pole_plant_feet_does_not_move_is_no_reason_to_refuse():
    obj = both_legs_rigged()
    prop = bpy.data.objects.new("Prop", None)
    bpy.context.scene.collection.objects.link(prop)
    prop.location = (0.3, -0.6, 0.5)
    follow = obj.pose.bones[_bones(obj)["POLE"]].constraints.new("CHILD_OF")
    follow.target = prop
    result = api.plant_feet(obj, _ground(0.2))
    assert result.feet == ["shin.L", "shin.R"]
    shown = evaluate(obj)
    assert abs(shown["foot.L"].translation.z - shown["foot.R"].translation.z) < 1e-4
