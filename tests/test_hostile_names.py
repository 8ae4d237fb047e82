"""Bone names at Blender's 63-byte limit, where "Left" flipped to "Right" would take a byte more: Blender
cuts the right side's name (as its Symmetrize does), and Both Sides looked for the uncut one, refusing
the limb as if the right foot were missing. Now each side finds the other, from either side; and names
with quotes, backslashes and brackets rig, drive and snap as plain ones do."""

from __future__ import annotations

import bpy
import pytest
from helpers import evaluate, make_armature, set_active_bone

from ik_rigger import api
from ik_rigger.core.naming import MAX_NAME_BYTES, clipped, flip_name

PAD = "_" + "é" * 40  # two bytes a character: names past the limit are cut between characters


def _name(side: str, part: str) -> str:
    return clipped(f"mixamorig:{side}{part}{PAD}", MAX_NAME_BYTES)


def _legs(name) -> list:
    bones = [("root", (0, 0, 0), (0, 0.5, 0), None, False), ("hips", (0, 0, 1), (0, 0, 1.2), "root", False)]
    for side, x in (("Left", 0.2), ("Right", -0.2)):
        up, leg, foot, toe = (name(side, part) for part in ("UpLeg", "Leg", "Foot", "ToeBase"))
        bones += [(up, (x, 0, 1), (x, -0.05, 0.55), "hips", False), (leg, (x, -0.05, 0.55), (x, 0, 0.1), up, True),
                  (foot, (x, 0, 0.1), (x, -0.2, 0), leg, True), (toe, (x, -0.2, 0), (x, -0.3, 0), foot, True)]
    return bones


def test_a_name_cut_at_the_limit_is_the_mirror_of_the_uncut_one_both_ways():
    left, right = _name("Left", "Foot"), _name("Right", "Foot")
    assert len(left.encode()) == MAX_NAME_BYTES and len(right.encode()) < MAX_NAME_BYTES
    names = {left, right, _name("Left", "Leg"), _name("Right", "Leg")}
    assert flip_name(left, names) == right
    assert flip_name(right, names) == left
    assert flip_name("thigh.L", {"thigh.L", "thigh.R"}) == "thigh.R"


@pytest.mark.parametrize("side", ["Left", "Right"])
def test_both_sides_rigs_legs_whose_names_blender_cut_at_the_limit(side):
    obj = make_armature(_legs(_name))
    set_active_bone(obj, _name(side, "Leg"))
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    limbs = {limb.name: limb for limb in api.limbs(obj)}
    assert set(limbs) == {_name("Left", "Leg"), _name("Right", "Leg")}
    assert {limb.extremity for limb in limbs.values()} == {_name("Left", "Foot"), _name("Right", "Foot")}
    assert all(curve.driver.is_valid for curve in obj.animation_data.drivers)
    right = limbs[_name("Right", "Leg")]
    before = evaluate(obj)[right.chain[-1]].copy()
    obj.pose.bones[right.bones["HANDLE"]].location = (0.0, 0.0, 0.2)
    after = evaluate(obj)[right.chain[-1]]
    assert (after.translation - before.translation).length > 0.01 or after.to_quaternion().rotation_difference(
        before.to_quaternion()).angle > 0.01


def _odd(side: str, part: str) -> str:
    return f'{part} "x" \\ [0] %s {{}}.{side[0]}'


def test_names_with_quotes_backslashes_and_brackets_rig_drive_and_snap():
    obj = make_armature(_legs(_odd))
    set_active_bone(obj, _odd("Left", "Leg"))
    assert bpy.ops.ik_rigger.build_ik(both_sides=True, parent_switch=True, foot_roll=True, soft_ik=0.1) == {
        "FINISHED"}
    assert len(api.limbs(obj)) == 2
    drivers = obj.animation_data.drivers
    assert drivers and all(curve.driver.is_valid and curve.is_valid for curve in drivers)
    for curve in drivers:
        obj.path_resolve(curve.data_path)  # every path we wrote names a bone that is there
    limb = api.limbs(obj)[0]
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    handle["ik_fk"] = 0.0
    obj.pose.bones[limb.chain[0]].rotation_quaternion = (0.95, 0.31, 0.0, 0.0)
    fk = evaluate(obj)
    assert api.snap_limb(obj, limb.name, "IK")
    shown = evaluate(obj)
    assert all((shown[name].translation - fk[name].translation).length < 1e-4 for name in limb.chain)
    assert api.switch_parent(obj, limb.name, 1, key=True, frame=1)
    api.remove(obj, limb.name)
    assert all(curve.driver.is_valid for curve in obj.animation_data.drivers)
