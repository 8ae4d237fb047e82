"""Bake FK to IK with Clear the Other Side: Blender's IK starts from the chain's own pose, taking from it
each bone's turn about its length and, where IK Weight is below 1, the part the IK leaves to it. Where
clearing the chain's keys would leave the baked IK off the FK motion (the Mixamo capture's shin by 15
degrees, its thigh by 27 at IK Weight 0.5), the bake is refused, naming the bone and what to do, and
changes nothing; where it plays the motion (one the IK made, baked to FK), it clears."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length, same, snapshot
from test_bake import animated_leg, assert_plays_the_same, import_mocap, played

from ik_rigger import api
from ik_rigger.core.errors import RigError

LEG = "mixamorig:LeftLeg"


def _capture(weight: str) -> bpy.types.Object:
    """The Mixamo capture rigged, playing in FK; its left leg's IK Weight at 1, at 0.5, or keyed from 1 on
    frame 1 to 0.5 on frame 40."""
    obj = import_mocap()
    api.auto_rig(obj, animation="FK")
    handle = obj.pose.bones[next(limb for limb in api.limbs(obj) if limb.name == LEG).bones["HANDLE"]]
    handle["ik_weight"] = 1.0 if weight != "set" else 0.5
    if weight == "keyed":
        handle.keyframe_insert('["ik_weight"]', frame=1)
        handle["ik_weight"] = 0.5
        handle.keyframe_insert('["ik_weight"]', frame=40)
    return obj


def _keys(obj: bpy.types.Object) -> dict:
    return {(curve.data_path, curve.array_index): [tuple(point.co) for point in curve.keyframe_points]
            for curve in all_fcurves(obj)}


@pytest.mark.parametrize("weight", ["full", "set", "keyed"])
def test_a_bake_clearing_keys_the_ik_needs_is_refused_and_changes_nothing(weight):
    obj = _capture(weight)
    bpy.context.scene.frame_set(50)
    expected, before, keys = played(obj, range(1, 70, 4)), snapshot(obj), _keys(obj)
    said = "IK Weight" if weight != "full" else "turn about its length"
    with pytest.raises(RigError, match=f"mixamorig:Left(Up)?Leg.*{said}.*Clear the Other Side"):
        api.bake(obj, "FK_TO_IK", range(1, 70), [LEG], switch=True, clear=True)
    assert same(before, snapshot(obj)) and _keys(obj) == keys
    assert_plays_the_same(obj, expected, chain_length(obj, ["mixamorig:LeftUpLeg", LEG]))


def test_without_clearing_the_baked_limb_plays_the_fk_motion():
    obj = _capture("keyed")
    expected = played(obj, range(1, 70, 4))
    api.bake(obj, "FK_TO_IK", range(1, 70), [LEG], switch=True)
    assert_plays_the_same(obj, expected, chain_length(obj, ["mixamorig:LeftUpLeg", LEG]))


def test_a_motion_ik_made_goes_back_and_forth_clearing_the_other_side():
    """IK to FK and back, clearing each time: the chain's keys are the IK's own solution, which the IK
    shows again from the chain's rest."""
    obj, chain = animated_leg(hips_only=True)
    assert bpy.ops.ik_rigger.build_ik(animation="IGNORE") == {"FINISHED"}
    handle = obj.pose.bones[obj.ik_rigger.limbs[0].handle]
    for frame, place in ((1, (0.0, 0.0, 0.0)), (13, (0.0, -0.2, 0.25)), (25, (0.05, 0.1, 0.1))):
        handle.location = place
        handle.keyframe_insert("location", frame=frame)
    api.bake(obj, "IK_TO_FK", range(1, 26), ["shin.L"], switch=True, clear=True)
    expected = played(obj, range(1, 26))
    api.bake(obj, "FK_TO_IK", range(1, 26), ["shin.L"], switch=True, clear=True)
    assert not [curve for curve in all_fcurves(obj) if curve.data_path.startswith(tuple(
        f'pose.bones["{name}"]' for name in chain))]
    assert_plays_the_same(obj, expected, chain_length(obj, chain))
