"""A constraint of the user's that does nothing now (muted, or at influence 0, and nothing animates it on) is
no reason to refuse a build, rebuild, snap, bake or Plant Feet; one animated on, even off on the frame shown,
still is where it would hold the limb off on a frame the tool keys. On evaluated poses."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, both_legs_rigged, chain_length, evaluate, make_armature, same, snapshot
from mathutils import Matrix
from test_hostile_held import _bones, _ground, _held_here, _plays, _state, _walking_in_fk

from ik_rigger import api


def _users_ik(obj: bpy.types.Object, how: str) -> bpy.types.Constraint:
    """An IK of the user's on the left shin, reaching for a bone of theirs, left ``how``."""
    bpy.ops.object.mode_set(mode="EDIT")
    target = obj.data.edit_bones.new("old_foot_target.L")
    target.head, target.tail = (0.2, 0.0, 0.1), (0.2, -0.1, 0.1)
    target.parent = obj.data.edit_bones["root"]
    bpy.ops.object.mode_set(mode="POSE")
    constraint = obj.pose.bones["shin.L"].constraints.new("IK")
    constraint.name = "Old IK"
    constraint.target, constraint.subtarget, constraint.chain_count = obj, "old_foot_target.L", 2
    if how == "muted":
        constraint.mute = True
    elif how == "at influence 0":
        constraint.influence = 0.0
    elif how == "keyed on":
        constraint.influence = 0.0
        constraint.keyframe_insert("influence", frame=1)
        constraint.influence = 1.0
        constraint.keyframe_insert("influence", frame=10)
        bpy.context.scene.frame_set(1)
    return constraint


@pytest.mark.parametrize("how", ["muted", "at influence 0"])
def test_an_idle_ik_of_the_users_on_the_chain_is_kept_and_the_leg_built(how: str) -> None:
    obj = make_armature(both_legs())
    users = _users_ik(obj, how)
    limb = api.build(obj, "shin.L")[0]
    assert users.name in obj.pose.bones["shin.L"].constraints
    assert (users.mute, users.influence) == ((True, 1.0) if how == "muted" else (False, 0.0))
    note = next(note for note in limb.notes if "'Old IK'" in note)
    assert f"({how})" in note and not api.is_warning(note)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    handle.matrix = Matrix.Translation((0.0, -0.1, 0.2)) @ evaluate(obj)[handle.name]
    posed = evaluate(obj)
    # The leg follows the handle, the user's IK left out: the foot on it, the knee bent forward.
    assert (posed["foot.L"].translation - posed[handle.name].translation).length < 1e-4 * chain_length(
        obj, ["thigh.L", "shin.L"])
    assert posed["shin.L"].translation.y < posed["thigh.L"].translation.y
    api.build(obj, "shin.L", pole_distance=1.5)  # a rebuild as well
    assert users.name in obj.pose.bones["shin.L"].constraints


def test_an_ik_of_the_users_keyed_on_is_refused_changing_nothing() -> None:
    obj = make_armature(both_legs())
    _users_ik(obj, "keyed on")
    before = snapshot(obj)
    with pytest.raises(api.RigError, match="'shin.L': already has an IK constraint 'Old IK'"):
        api.build(obj, "shin.L")
    assert same(snapshot(obj), before)


def _keyed_on_later(constraint: bpy.types.Constraint) -> None:
    """Off on frame 1 (shown), on from frame 3."""
    for frame, value in ((1, 0.0), (2, 0.0), (3, 1.0)):
        constraint.influence = value
        constraint.keyframe_insert("influence", frame=frame)
    bpy.context.scene.frame_set(1)


def test_a_bake_to_ik_a_users_constraint_keyed_on_later_holds_off_keys_nothing_and_names_it() -> None:
    obj = both_legs_rigged()
    handle = _bones(obj)["HANDLE"]
    played = _walking_in_fk(obj)
    bpy.context.scene.frame_set(1)
    constraint = _held_here(obj, handle)
    _keyed_on_later(constraint)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"'{handle}': Bake FK to IK would not land: the Limit Location "
                                           rf"constraint 'Held \"here\"' on '{handle}'.*frame [345].*nothing was "
                                           r"changed\. Mute the constraint for Bake FK to IK, then"):
        api.bake(obj, "FK_TO_IK", range(1, 6), switch=True)
    assert _state(obj) == before
    assert (constraint.mute, constraint.influence) == (False, 0.0)
    constraint.mute = True  # muted for the bake, as the error says: it lands
    assert api.bake(obj, "FK_TO_IK", range(1, 6), switch=True) == {"shin.L": 5, "shin.R": 5}
    assert _plays(obj, played)


@pytest.mark.parametrize("how", ["muted", "at influence 0"])
def test_a_bake_and_plant_feet_land_past_an_idle_constraint_of_the_users(how: str) -> None:
    obj = both_legs_rigged()
    handle = _bones(obj)["HANDLE"]
    played = _walking_in_fk(obj)
    bpy.context.scene.frame_set(1)
    constraint = _held_here(obj, handle)
    setattr(constraint, *(("mute", True) if how == "muted" else ("influence", 0.0)))
    assert api.bake(obj, "FK_TO_IK", range(1, 6), switch=True) == {"shin.L": 5, "shin.R": 5}
    assert _plays(obj, played)
    assert api.plant_feet(obj, _ground(0.2), range(1, 4)).feet == ["shin.L", "shin.R"]


def test_plant_feet_over_frames_a_users_constraint_keyed_on_later_holds_off_changes_nothing() -> None:
    obj = both_legs_rigged()
    handle = _bones(obj)["HANDLE"]
    constraint = _held_here(obj, handle)
    _keyed_on_later(constraint)
    floor = _ground(0.2)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"'{handle}': Plant Feet would not land: the Limit Location "
                                           rf"constraint 'Held \"here\"' on '{handle}'.*nothing was changed"):
        api.plant_feet(obj, floor, range(1, 5))
    assert _state(obj) == before
    assert (constraint.mute, constraint.influence) == (False, 0.0)


@pytest.mark.parametrize("how", ["muted", "at influence 0", "keyed on"])
def test_a_users_copy_rotation_on_a_chain_bone_is_named_unless_it_does_nothing(how: str) -> None:
    obj = make_armature(both_legs())
    constraint = obj.pose.bones["thigh.L"].constraints.new("COPY_ROTATION")
    constraint.name = "Swing"
    constraint.target, constraint.subtarget = obj, "hips"
    if how == "muted":
        constraint.mute = True
    else:
        constraint.influence = 0.0
    if how == "keyed on":
        constraint.keyframe_insert("influence", frame=1)
        constraint.influence = 1.0
        constraint.keyframe_insert("influence", frame=10)
        bpy.context.scene.frame_set(1)
    limb = api.build(obj, "shin.L")[0]
    warned = [note for note in limb.notes if "'Swing'" in note]
    assert len(warned) == (1 if how == "keyed on" else 0)
    assert all(api.is_warning(note) for note in warned)
