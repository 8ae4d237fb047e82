"""Builds a user runs the way a user would: Both Sides with a chain long enough that the two sides meet
at the hips, and a build undone then run again from its redo panel with other options."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, chain_length, evaluate, make_armature, rotation_degrees, same, set_active_bone, snapshot
from mathutils import Euler

from ik_rigger import api

CHAIN = ["thigh.L", "shin.L", "foot.L"]


def test_both_sides_meeting_at_a_bone_is_refused_naming_both_limbs_and_what_to_do():
    # Three bones up from the shin, each side's chain takes the hips: the refusal said the hips already
    # belonged to a limb ending at 'shin.L' and to remove it first, though no limb had been built.
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match=r"'hips': would belong to both limbs built, the one ending at 'shin.L' "
                                           r"and the one ending at 'shin.R'.*Chain Length"):
        bpy.ops.ik_rigger.build_ik(chain_length=3, both_sides=True)
    assert same(snapshot(obj), before)
    assert not api.limbs(obj)
    with pytest.raises(api.RigError, match="would belong to both limbs built"):
        api.build(obj, "shin.R", chain_length=3, both_sides=True)
    assert same(snapshot(obj), before)


@pytest.mark.parametrize("again", [{"foot_roll": True}, {"parent_switch": True, "soft_ik": 0.1},
                                   {"use_pole": False}, {"both_sides": False}])
def test_a_build_undone_then_run_again_with_other_options_makes_a_rig_that_snaps(again):
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    bpy.ops.ed.undo_push(message="before")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    bpy.ops.ed.undo_push(message="Build IK Limb")
    bpy.ops.ed.undo()
    obj = bpy.data.objects["Rig"]  # undo gives Blender's data anew
    assert not obj.ik_rigger.limbs and len(obj.data.bones) == len(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(**({"both_sides": True} | again)) == {"FINISHED"}
    drivers = obj.animation_data.drivers
    assert drivers and all(curve.driver.is_valid and curve.is_valid for curve in drivers)
    handle = api.limbs(obj)[0].bones["HANDLE"]
    obj.pose.bones[handle]["ik_fk"] = 0.0
    for name, turn in zip(CHAIN, [(0.4, 0.1, 0.05), (-0.6, 0.0, 0.0), (0.2, 0.1, 0.0)]):
        obj.pose.bones[name].matrix_basis = Euler(turn).to_matrix().to_4x4()
    fk = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    shown = evaluate(obj)
    length = chain_length(obj, CHAIN[:2])
    for name in CHAIN:
        assert (shown[name].translation - fk[name].translation).length <= 1e-4 * length
        assert rotation_degrees(shown[name], fk[name]) <= 0.01
