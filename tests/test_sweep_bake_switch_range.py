"""Bake IK/FK over part of a shot with Key IK/FK on: the switch changes over the frames baked and only
there, as a cut on each side, so the frames before and after play as they did (the two keys alone held
the new mode over the whole shot: the Mixamo capture's leg, baked to IK over frames 20 to 40, played IK
from a handle held on frame 40 after it, up to 122 degrees off)."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length
from test_bake import assert_plays_the_same, import_mocap, played

from ik_rigger import api
from ik_rigger.rig.animation import remove_fcurves

LEG = "mixamorig:LeftLeg"
FIRST, LAST = 20, 40


def _switch_curve(obj: bpy.types.Object, handle: str):
    return next((curve for curve in all_fcurves(obj) if curve.data_path == f'pose.bones["{handle}"]["ik_fk"]'), None)


@pytest.mark.parametrize("animated", [True, False], ids=["switch keyed", "switch not animated"])
@pytest.mark.parametrize("direction", ["FK_TO_IK", "IK_TO_FK"])
def test_a_bake_over_part_of_the_shot_switches_there_only(direction, animated):
    obj = import_mocap()
    # FK to IK bakes a leg playing its FK keys; IK to FK one playing the motion kept on its IK controls.
    api.auto_rig(obj, animation="FK" if direction == "FK_TO_IK" else "BAKE")
    handle = next(limb for limb in api.limbs(obj) if limb.name == LEG).bones["HANDLE"]
    was = 0.0 if direction == "FK_TO_IK" else 1.0
    remove_fcurves(obj, lambda path: path == f'pose.bones["{handle}"]["ik_fk"]')
    obj.pose.bones[handle]["ik_fk"] = was
    if animated:  # by hand: Bezier keys
        for frame in (1, 69):
            obj.pose.bones[handle].keyframe_insert('["ik_fk"]', frame=frame)
    before = played(obj, range(1, 70))
    api.bake(obj, direction, range(FIRST, LAST + 1), [LEG], switch=True)
    inside = {frame: poses for frame, poses in before.items() if FIRST <= frame <= LAST}
    outside = {frame: poses for frame, poses in before.items() if frame not in inside}
    assert_plays_the_same(obj, outside, chain_length(obj, ["mixamorig:LeftUpLeg", LEG]))
    assert_plays_the_same(obj, inside, chain_length(obj, ["mixamorig:LeftUpLeg", LEG]))
    now = 1.0 - was
    curve = _switch_curve(obj, handle)
    played_switch = {frame: curve.evaluate(frame) for frame in range(1, 70)}
    assert played_switch == {frame: now if FIRST <= frame <= LAST else was for frame in range(1, 70)}
    # Keys only where the switch changes (the frames on each side of the range), besides those it had.
    assert {round(point.co.x) for point in curve.keyframe_points} == {FIRST - 1, FIRST, LAST, LAST + 1} | (
        {1, 69} if animated else set())
