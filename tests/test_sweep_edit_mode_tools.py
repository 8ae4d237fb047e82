"""The snaps, the bake and Switch Parent called from Python while the armature is in Edit mode with an edit
not yet written back (Blender writes edit bones to the bones only on leaving Edit mode): they run on the
rest as edited, and the armature is given back in Edit mode. On the bones' old rests, Snap IK to FK landed
29 degrees off once Edit mode was left."""

from __future__ import annotations

import bpy
import pytest
from helpers import chain_length, evaluate, rotation_degrees
from test_bake import import_mocap

from ik_rigger import api

LEG = "mixamorig:LeftLeg"


def _rolled_in_edit_mode() -> tuple[bpy.types.Object, api.Limb]:
    """The Mixamo capture rigged (playing in FK, Parent Switching on), on frame 30, in Edit mode with its
    left thigh and shin rolled."""
    obj = import_mocap()
    api.auto_rig(obj, animation="FK", parent_switch=True)
    limb = next(limb for limb in api.limbs(obj) if limb.name == LEG)
    bpy.context.scene.frame_set(30)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for name in limb.chain:
        obj.data.edit_bones[name].roll += 0.5
    return obj, limb


def _assert_shows(obj: bpy.types.Object, limb: api.Limb, switch: float, expected: dict) -> None:
    obj.pose.bones[limb.bones["HANDLE"]]["ik_fk"] = switch
    obj.update_tag()
    shown = evaluate(obj)
    length = chain_length(obj, limb.chain)
    for name in [*limb.chain, limb.extremity]:
        assert (shown[name].translation - expected[name].translation).length < 1e-4 * length, name
        assert rotation_degrees(shown[name], expected[name]) < 0.01, name


def test_a_snap_from_edit_mode_lands_on_the_rest_as_edited():
    obj, limb = _rolled_in_edit_mode()
    rolled = {name: obj.data.edit_bones[name].roll for name in limb.chain}
    api.snap_limb(obj, LEG, "IK", key=True)
    assert obj.mode == "EDIT"
    assert {name: obj.data.edit_bones[name].roll for name in limb.chain} == pytest.approx(rolled, abs=1e-6)
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.pose.bones[limb.bones["HANDLE"]]["ik_fk"] = 0.0
    obj.update_tag()
    _assert_shows(obj, limb, 1.0, evaluate(obj))


def test_a_bake_and_a_switch_from_edit_mode_give_edit_mode_back_with_the_edit():
    obj, limb = _rolled_in_edit_mode()
    rolled = {name: obj.data.edit_bones[name].roll for name in limb.chain}
    api.bake(obj, "FK_TO_IK", range(28, 33), [LEG], switch=True)
    api.switch_parent(obj, LEG, 1, key=True)
    assert obj.mode == "EDIT"
    assert {name: obj.data.edit_bones[name].roll for name in limb.chain} == pytest.approx(rolled, abs=1e-6)
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.pose.bones[limb.bones["HANDLE"]]["ik_fk"] = 0.0
    obj.update_tag()
    fk = evaluate(obj)
    _assert_shows(obj, limb, 1.0, fk)
