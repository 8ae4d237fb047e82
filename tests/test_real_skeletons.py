"""The builder on real skeletons from public motion-capture files (tests/data/README.md)."""

from __future__ import annotations

import bpy
import pytest
from helpers import import_bvh, rest, same, set_active_bone, snapshot
from test_build import assert_rest_kept, reach_sweep

from ik_rigger.rig import records

LIMBS = {
    "mixamo_freebvh.bvh": [
        ("mixamorig:LeftLeg", "mixamorig:LeftUpLeg", "mixamorig:LeftFoot"),
        ("mixamorig:LeftForeArm", "mixamorig:LeftArm", "mixamorig:LeftHand"),
    ],
    "threejs_pirouette_rest.bvh": [
        ("lshin", "lthigh", "lfoot"),
        ("lforearm", "lshldr", "lhand"),
    ],
}


@pytest.mark.parametrize("filename", sorted(LIMBS))
def test_both_sides_of_arms_and_legs(filename):
    obj = import_bvh(filename)
    bpy.ops.object.mode_set(mode="POSE")
    before = rest(obj)
    for last, first, extremity in LIMBS[filename]:
        set_active_bone(obj, last)
        assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
        record = obj.ik_rigger.limb_of(last)
        assert list(records.inventory(record).chain) == [first, last]
        assert record.extremity == extremity
    assert len(obj.ik_rigger.limbs) == 4
    # The skeletons are bent enough (in centimetres) to need no pre-bend: nothing moves.
    assert not any(limb.prebent for limb in obj.ik_rigger.limbs)
    assert_rest_kept(obj, before)
    for limb in obj.ik_rigger.limbs:
        chain = list(records.inventory(limb).chain)
        reach_sweep(obj, chain[-1], chain, count=15)
        obj.pose.bones[limb.handle].location = (0.0, 0.0, 0.0)


def test_remove_all_limbs_of_a_real_skeleton_restores_it():
    obj = import_bvh("mixamo_freebvh.bvh")
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(obj)
    set_active_bone(obj, "mixamorig:LeftLeg")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    for last in ("mixamorig:LeftLeg", "mixamorig:RightLeg"):
        set_active_bone(obj, last)
        assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert same(snapshot(obj), before)


@pytest.mark.parametrize("filename", sorted(LIMBS))
def test_auto_rig_finds_and_rigs_all_four_limbs(filename):
    obj = import_bvh(filename)
    bpy.ops.object.mode_set(mode="POSE")
    before = rest(obj)
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    found = {limb.name: (records.inventory(limb).chain, limb.extremity) for limb in obj.ik_rigger.limbs}
    for last, first, extremity in LIMBS[filename]:
        assert found[last] == ((first, last), extremity)
    assert len(found) == 4
    assert obj.mode == "POSE"
    assert_rest_kept(obj, before)


def test_auto_rig_refuses_when_nothing_is_sure():
    from helpers import make_armature

    make_armature([("a", (0, 0, 0), (0, 0, 1), None, False), ("b", (0, 0, 1), (0, 0, 2), "a", True)])
    with pytest.raises(RuntimeError, match="No limbs found"):
        bpy.ops.ik_rigger.auto_rig()
