"""A constraint of the user's on the foot that does nothing now (muted, or at influence 0) is kept as it
is and named in a note; the build goes on. One animated on is refused as an active one is."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import both_legs, evaluate, leg_bones, make_armature, rotation_degrees, same, snapshot

from ik_rigger import api


def _foot_control(obj: bpy.types.Object, side: str = "L") -> bpy.types.Constraint:
    """A Copy Rotation on the foot from a control bone lying on it at rest, as a control rig has."""
    bpy.ops.object.mode_set(mode="EDIT")
    foot = obj.data.edit_bones[f"foot.{side}"]
    control = obj.data.edit_bones.new(f"foot_FK.{side}")
    control.head, control.tail, control.roll = foot.head, foot.tail, foot.roll
    control.parent = obj.data.edit_bones["root"]
    bpy.ops.object.mode_set(mode="POSE")
    constraint = obj.pose.bones[f"foot.{side}"].constraints.new("COPY_ROTATION")
    constraint.name = "Foot Control"
    constraint.target = obj
    constraint.subtarget = f"foot_FK.{side}"
    return constraint


def _idle(constraint: bpy.types.Constraint, how: str) -> None:
    if how == "muted":
        constraint.mute = True
    else:
        constraint.influence = 0.0


def _turn(obj: bpy.types.Object, bone: str, degrees: float, axis: int) -> None:
    pose_bone = obj.pose.bones[bone]
    pose_bone.rotation_mode = "XYZ"
    angles = [0.0, 0.0, 0.0]
    angles[axis] = math.radians(degrees)
    pose_bone.rotation_euler = angles


@pytest.mark.parametrize("how", ["muted", "at influence 0"])
def test_idle_foot_constraint_is_kept_and_the_leg_built(how):
    obj = make_armature(leg_bones())
    user = _foot_control(obj)
    _idle(user, how)
    kept = (user.name, user.subtarget, user.mute, user.influence, user.owner_space, user.target_space)
    limb = api.build(obj, "shin.L")[0]
    note = next(note for note in limb.notes if "Foot Control" in note)
    assert not api.is_warning(note)
    assert f"'foot.L' keeps its own Copy Rotation constraint 'Foot Control' as it is ({how})" in note
    assert "with IK/FK at FK" in note
    constraints = obj.pose.bones["foot.L"].constraints
    assert constraints[0] == user
    assert (user.name, user.subtarget, user.mute, user.influence, user.owner_space, user.target_space) == kept
    assert [c.type for c in constraints[1:]] == ["COPY_ROTATION"]
    # Turned on, it does what the note says: IK Rigger's copy decides while IK is on, the user's at FK.
    user.mute, user.influence = False, 1.0
    at_rest = evaluate(obj)
    _turn(obj, "foot_FK.L", 40.0, 2)
    _turn(obj, "foot_IK.L", 30.0, 0)
    posed = evaluate(obj)
    turn = posed["foot_IK.L"].to_quaternion() @ at_rest["foot_IK.L"].to_quaternion().inverted()
    assert rotation_degrees(posed["foot.L"], (turn @ at_rest["foot.L"].to_quaternion()).to_matrix().to_4x4()) < 0.05
    obj.pose.bones["foot_IK.L"]["ik_fk"] = 0.0
    obj.update_tag()
    at_fk = evaluate(obj)
    control = at_fk["foot_FK.L"].to_quaternion() @ at_rest["foot_FK.L"].to_quaternion().inverted()
    expected = (control @ at_rest["foot.L"].to_quaternion()).to_matrix().to_4x4()
    assert rotation_degrees(at_fk["foot.L"], expected) < 0.05


def test_auto_rig_keeps_idle_foot_constraints():
    obj = make_armature(both_legs())
    for side in "LR":
        _foot_control(obj, side).mute = True
    built = api.auto_rig(obj)
    assert sorted(limb.name for limb in built) == ["shin.L", "shin.R"]
    for side in "LR":
        assert [c.name for c in obj.pose.bones[f"foot.{side}"].constraints][0] == "Foot Control"
        assert obj.pose.bones[f"foot.{side}"].constraints["Foot Control"].mute


@pytest.mark.parametrize("animated", ["mute", "influence"])
def test_idle_foot_constraint_animated_on_is_refused(animated):
    obj = make_armature(leg_bones())
    user = _foot_control(obj)
    if animated == "mute":
        user.mute = True
        user.keyframe_insert("mute", frame=1)
        user.mute = False
        user.keyframe_insert("mute", frame=10)
        user.mute = True
    else:
        driver = user.driver_add("influence").driver
        driver.type = "SCRIPTED"
        driver.expression = "0.0"
        user.influence = 0.0
    bpy.context.view_layer.update()
    before = snapshot(obj)
    with pytest.raises(api.RigError, match="'foot.L': has its own Copy Rotation constraint 'Foot Control', which IK "
                                           "Rigger's Copy Rotation would override while IK is on"):
        api.build(obj, "shin.L")
    assert same(snapshot(obj), before)
