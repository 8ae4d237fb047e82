"""Snapping and switching parents back and forth, keyed, on one frame of a capture whose motion is kept on
its controls (soft IK on): the limb comes back where it was, the shot plays as it did, and the only F-curves
made are the switches': a snap keyed a connected bone's location, which Blender ignores, and a scale of 1,
new F-curves holding what plays anyway."""

from __future__ import annotations

import bpy
from helpers import all_fcurves, chain_length, evaluate, rotation_degrees
from test_bake import import_mocap, played

from ik_rigger import api

LEG = "mixamorig:LeftLeg"


def test_back_and_forth_comes_back_plays_the_same_and_keys_only_the_switches():
    obj = import_mocap()
    api.auto_rig(obj, parent_switch=True, soft_ik=0.1)
    limb = next(limb for limb in api.limbs(obj) if limb.name == LEG)
    curves = {(curve.data_path, curve.array_index) for curve in all_fcurves(obj)}
    expected = played(obj, range(1, 70, 3))
    scene = bpy.context.scene
    scene.frame_set(30)
    start = evaluate(obj)
    for number in range(8):
        api.snap_limb(obj, LEG, "FK", key=True)
        api.switch_parent(obj, LEG, (number + 1) % 2, key=True)
        api.snap_limb(obj, LEG, "IK", key=True)
    scene.frame_set(30)
    end = evaluate(obj)
    length = chain_length(obj, limb.chain)
    for name in [*limb.chain, limb.extremity]:
        assert (start[name].translation - end[name].translation).length < 1e-4 * length, name
        assert rotation_degrees(start[name], end[name]) < 0.01, name
    now = played(obj, range(1, 70, 3))
    for frame, poses in expected.items():
        for name, matrix in poses.items():
            assert (matrix.translation - now[frame][name].translation).length < 1e-4 * length, (frame, name)
            assert rotation_degrees(matrix, now[frame][name]) < 0.01, (frame, name)
    handle = f'pose.bones["{limb.bones["HANDLE"]}"]'
    assert {(curve.data_path, curve.array_index) for curve in all_fcurves(obj)} - curves == {
        (f'{handle}["ik_fk"]', 0), (f'{handle}["parent"]', 0)}
