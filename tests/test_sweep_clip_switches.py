"""A snap, a bake or a parent switch keyed in one clip leaves the armature's other clips playing as they did:
a switch keyed in one action keeps, in a clip that does not key it, whatever value it last had, so
Quaternius' T-rex's Death clip, made active after a snap to FK keyed in its Attack clip, played its front
leg in FK, 15 degrees off. Each other clip moving the limb gets the switch, constant, as it played there."""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, chain_length, rotation_degrees, same, snapshot
from test_bake import played

from ik_rigger import api
from ik_rigger.core.errors import RigError
from ik_rigger.rig import bake_cleared
from ik_rigger.rig.animation import action_fcurves


def _keys(action: bpy.types.Action) -> dict:
    return {(curve.data_path, curve.array_index): [tuple(point.co) for point in curve.keyframe_points]
            for curve in action_fcurves(action)}


def _use(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    obj.animation_data.action = action
    if hasattr(obj.animation_data, "action_slot") and action.slots:
        obj.animation_data.action_slot = action.slots[0]


def test_switches_keyed_in_one_clip_leave_the_others_playing_as_they_did():
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_quaternius_trex.glb"))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    leg = api.auto_rig(obj, parent_switch=True)[0]
    # Blender 4.2's importer names each clip after its armature too.
    attack = obj.animation_data.action
    death = next(action for action in bpy.data.actions if "TRex_Death" in action.name)
    _use(obj, death)
    expected = played(obj, range(1, 30, 4))
    curves = {(curve.data_path, curve.array_index) for curve in action_fcurves(death)}
    _use(obj, attack)
    scene = bpy.context.scene
    scene.frame_set(5)
    api.snap_limb(obj, leg.name, "FK", key=True)
    scene.frame_set(8)
    api.switch_parent(obj, leg.name, 1, key=True)
    api.bake(obj, "FK_TO_IK", range(10, 16), [leg.name], switch=True)
    scene.frame_set(20)
    _use(obj, death)
    now = played(obj, range(1, 30, 4))
    length = chain_length(obj, leg.chain)
    for frame, poses in expected.items():
        for name in [*leg.chain, leg.extremity]:
            # Its bones are 1e-4 of a unit long: single precision leaves a few 1e-4 of the chain.
            assert (poses[name].translation - now[frame][name].translation).length < 1e-3 * length, (frame, name)
            assert rotation_degrees(poses[name], now[frame][name]) < 0.01, (frame, name)
    handle = f'pose.bones["{leg.bones["HANDLE"]}"]'
    added = {(curve.data_path, curve.array_index) for curve in action_fcurves(death)} - curves
    assert added == {(f'{handle}["ik_fk"]', 0), (f'{handle}["parent"]', 0)}
    for curve in action_fcurves(death):
        if (curve.data_path, curve.array_index) in added:
            assert [(point.interpolation, point.co.y) for point in curve.keyframe_points] == [
                ("CONSTANT", 1.0 if curve.data_path.endswith('["ik_fk"]') else 0.0)]


def test_a_bake_refused_part_way_gives_back_the_switch_held_in_the_other_clips(monkeypatch):
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_quaternius_trex.glb"))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    legs = api.auto_rig(obj)[:2]
    keys = {action.name: _keys(action) for action in bpy.data.actions}
    bpy.context.scene.frame_set(1)  # the pose its keys play, as the bake's frames leave it
    before = snapshot(obj)
    calls = []

    def refuse_the_second(*args: object) -> None:
        calls.append(args)
        if len(calls) == 2:
            raise RigError("refused for the test", bone=legs[1].name)

    monkeypatch.setattr(bake_cleared, "check", refuse_the_second)
    with pytest.raises(RigError, match="refused for the test"):
        api.bake(obj, "FK_TO_IK", range(1, 20), [leg.name for leg in legs], switch=True, clear=True)
    assert {action.name: _keys(action) for action in bpy.data.actions} == keys
    assert same(before, snapshot(obj))
