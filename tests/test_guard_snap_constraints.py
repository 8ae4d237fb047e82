"""A constraint of the user's on a bone a snap sets (a Limit Location on the IK handle, a Copy Location
on the pole, a Limit Rotation on a chain bone) held it away from where the snap put it: the IK chain
missed the FK pose by degrees and nothing was said. Now the snap lands or changes nothing, keys
nothing, and says which constraint on which bone stopped it and what to do. On the motion-capture
walker's left arm, on evaluated poses."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length, evaluate, import_bvh, rotation_degrees
from mathutils import Euler, Matrix

from ik_rigger import api

CHAIN = ["LeftArm", "LeftForeArm", "LeftHand"]
LEFT = "LeftForeArm"


@pytest.fixture
def walker() -> bpy.types.Object:
    """The walker rigged, in Pose mode, its left arm posed in FK away from the IK controls, the forearm active."""
    obj = import_bvh("pymo_walk.bvh")
    api.auto_rig(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    for name, turn in zip(CHAIN, [(0.0, 0.3, -0.6), (0.0, 0.0, 1.1), (0.2, 0.0, 0.0)]):
        obj.pose.bones[name].matrix_basis = Euler(turn).to_matrix().to_4x4()
    obj.pose.bones[_bones(obj)["HANDLE"]]["ik_fk"] = 0.0
    obj.data.bones.active = obj.data.bones[LEFT]
    return obj


def _bones(obj: bpy.types.Object) -> dict[str, str]:
    return next(limb for limb in api.limbs(obj) if LEFT in limb.chain).bones


def _pin(obj: bpy.types.Object, bone: str, kind: str = "LIMIT_LOCATION") -> bpy.types.Constraint:
    """A constraint of the user's holding ``bone`` where it stands now (in armature space)."""
    constraint = obj.pose.bones[bone].constraints.new(kind)
    constraint.name = "Held Here"
    where = evaluate(obj)[bone].translation
    if kind == "LIMIT_LOCATION":
        constraint.owner_space = "POSE"
        for axis, value in zip("xyz", where):
            setattr(constraint, f"use_min_{axis}", True)
            setattr(constraint, f"use_max_{axis}", True)
            setattr(constraint, f"min_{axis}", value)
            setattr(constraint, f"max_{axis}", value)
    return constraint


def _state(obj: bpy.types.Object) -> tuple:
    bases = tuple(tuple(v for row in bone.matrix_basis for v in row) for bone in obj.pose.bones)
    switches = tuple(bone.get("ik_fk") for bone in obj.pose.bones)
    return bases, switches, sorted((curve.data_path, len(curve.keyframe_points)) for curve in all_fcurves(obj))


def _matches(obj: bpy.types.Object, a: dict, b: dict) -> bool:
    length = chain_length(obj, CHAIN[:2])
    return all((a[name].translation - b[name].translation).length < 1e-3 * length
               and rotation_degrees(a[name], b[name]) < 0.1 for name in CHAIN)


@pytest.mark.parametrize("key", [False, True], ids=["unkeyed", "keyed"])
@pytest.mark.parametrize("role", ["HANDLE", "POLE"])
def test_a_user_constraint_holding_an_ik_control_refuses_the_ik_snap_changing_nothing(walker, role, key):
    bone = _bones(walker)[role]
    _pin(walker, bone)
    before = _state(walker)
    with pytest.raises(api.RigError, match=f"'Held Here' on '{bone}'.*Mute the constraint or set its influence to 0"):
        api.snap_limb(walker, LEFT, "IK", key=key)
    assert _state(walker) == before


def test_the_ik_snap_lands_once_the_user_mutes_the_constraint_and_keys_only_then(walker):
    handle = _bones(walker)["HANDLE"]
    held = _pin(walker, handle)
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    fk = evaluate(walker)
    with pytest.raises(RuntimeError, match=f"'Held Here' on '{handle}'"):  # the operator's error report
        bpy.ops.ik_rigger.snap_ik_to_fk()
    assert not all_fcurves(walker)
    assert walker.pose.bones[handle]["ik_fk"] == 0.0  # still in FK as it was
    held.mute = True
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert walker.pose.bones[handle]["ik_fk"] == 1.0
    assert _matches(walker, evaluate(walker), fk)
    assert any(curve.data_path.startswith(f'pose.bones["{handle}"]') for curve in all_fcurves(walker))


def test_a_user_constraint_that_does_not_hold_the_handle_off_lets_the_snap_land(walker):
    handle = _bones(walker)["HANDLE"]
    copy_scale = walker.pose.bones[handle].constraints.new("COPY_SCALE")  # the handle's scale plays no part
    copy_scale.target, copy_scale.subtarget = walker, "Hips"
    fk = evaluate(walker)
    api.snap_limb(walker, LEFT, "IK")
    assert _matches(walker, evaluate(walker), fk)


@pytest.mark.parametrize("key", [False, True], ids=["unkeyed", "keyed"])
def test_a_user_limit_on_a_chain_bone_refuses_the_fk_snap_the_ik_pose_goes_past_changing_nothing(walker, key):
    bones, handle = walker.pose.bones, _bones(walker)["HANDLE"]
    bones[handle]["ik_fk"] = 1.0
    for name in CHAIN:
        bones[name].matrix_basis = Matrix.Identity(4)
    pose = evaluate(walker)  # the hand brought halfway to the shoulder: the elbow bends
    moved = pose[handle].copy()
    moved.translation = (pose[handle].translation + pose["LeftArm"].translation) / 2
    bones[handle].matrix = moved
    limit = bones["LeftForeArm"].constraints.new("LIMIT_ROTATION")
    limit.name = "Elbow Range"
    limit.owner_space = "LOCAL"
    for axis in "xyz":
        setattr(limit, f"use_limit_{axis}", True)
    shown = evaluate(walker)
    before = _state(walker)
    with pytest.raises(api.RigError, match="'Elbow Range' on 'LeftForeArm'"):
        api.snap_limb(walker, LEFT, "FK", key=key)
    assert _state(walker) == before
    limit.mute = True
    api.snap_limb(walker, LEFT, "FK", key=key)
    assert _matches(walker, evaluate(walker), shown)
