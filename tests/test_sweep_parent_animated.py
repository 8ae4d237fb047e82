"""Switch Parent on a limb whose controls are animated (a capture's motion kept on them, keys by hand):
the controls' keys on the frames the new choice plays are keyed again under it, so the limb plays as it
did. Their values, kept under the new parent, put the Mixamo capture's foot 1.6 leg lengths off, turned
150 degrees, on every frame but the one switched."""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, all_fcurves, both_legs, chain_length, make_armature, rotation_degrees, same, snapshot
from test_bake import import_mocap, played

from ik_rigger import api
from ik_rigger.core.errors import RigError

LEG = "mixamorig:LeftLeg"
FRAMES = range(1, 70, 2)


def _assert_plays(obj: bpy.types.Object, expected: dict[int, dict], frames) -> None:
    length = chain_length(obj, ["mixamorig:LeftUpLeg", LEG])
    now = played(obj, frames)
    for frame in frames:
        for name, matrix in expected[frame].items():
            moved = (matrix.translation - now[frame][name].translation).length
            assert moved < 1e-4 * length, (frame, name, moved / length)
            assert rotation_degrees(matrix, now[frame][name]) < 0.01, (frame, name)


def _keys(obj: bpy.types.Object) -> dict:
    return {(curve.data_path, curve.array_index): [tuple(point.co) for point in curve.keyframe_points]
            for curve in all_fcurves(obj)}


@pytest.fixture
def capture() -> tuple[bpy.types.Object, dict[int, dict], set]:
    """The Mixamo capture rigged with Parent Switching, its motion kept on the controls; what it plays and
    the F-curves it has."""
    obj = import_mocap()
    api.auto_rig(obj, parent_switch=True)
    return obj, played(obj, FRAMES), {(curve.data_path, curve.array_index) for curve in all_fcurves(obj)}


def test_a_switch_not_keyed_keeps_the_motion_on_every_frame_back_and_forth(capture):
    obj, expected, curves = capture
    for number in range(6):
        bpy.context.scene.frame_set(10 + 9 * number)
        api.switch_parent(obj, LEG, (number + 1) % 2)
        _assert_plays(obj, expected, FRAMES[::5])
    _assert_plays(obj, expected, FRAMES)
    assert {(curve.data_path, curve.array_index) for curve in all_fcurves(obj)} == curves


def test_a_keyed_switch_keeps_the_motion_before_and_after_it(capture):
    obj, expected, curves = capture
    kept = next(limb for limb in api.limbs(obj) if limb.name == LEG).bones
    bpy.context.scene.frame_set(30)
    api.switch_parent(obj, LEG, 1, key=True)
    _assert_plays(obj, expected, FRAMES)
    parent = f'pose.bones["{kept["HANDLE"]}"]["parent"]'
    assert {(curve.data_path, curve.array_index) for curve in all_fcurves(obj)} == curves | {(parent, 0)}
    curve = next(curve for curve in all_fcurves(obj) if curve.data_path == parent)
    assert [curve.evaluate(frame) for frame in (1, 29, 30, 69)] == [0.0, 0.0, 1.0, 1.0]


def test_a_switch_not_keyed_is_refused_where_another_clip_keys_the_controls():
    """Quaternius' T-rex and its six clips, the motion kept on the controls in each: a choice not keyed
    holds in every clip, whose keys it would move; refused by name, nothing changed. Keyed, it switches
    in the active clip, which plays as it did."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_quaternius_trex.glb"))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    leg = api.auto_rig(obj, parent_switch=True)[0]
    bpy.context.scene.frame_set(5)
    before, keys = snapshot(obj), _keys(obj)
    with pytest.raises(RigError, match=f"{leg.name}.*clip 'Armature\\|TRex_.*Insert Keyframes"):
        api.switch_parent(obj, leg.name, 1)
    assert same(before, snapshot(obj)) and _keys(obj) == keys
    expected = played(obj, range(1, 30, 4))
    bpy.context.scene.frame_set(5)
    api.switch_parent(obj, leg.name, 1, key=True)
    length = chain_length(obj, leg.chain)
    now = played(obj, range(1, 30, 4))
    for frame, poses in expected.items():
        for name, matrix in poses.items():
            # Its bones are 1e-4 of a unit long: single precision leaves a few 1e-4 of the chain.
            assert (matrix.translation - now[frame][name].translation).length < 1e-3 * length, (frame, name)
            assert rotation_degrees(matrix, now[frame][name]) < 0.01, (frame, name)


def test_a_switch_not_keyed_on_an_override_whose_action_is_linked_is_refused_by_name(tmp_path):
    """The character's handle keyed by hand in its file, linked into a shot and overridden: its keys are the
    library's, which a switch could not key again under the new choice; refused, naming the action."""
    from test_after_rigging_override import saved_character, shot_override

    obj = make_armature(both_legs(), name="Hero", mode="OBJECT")
    api.auto_rig(obj, parent_switch=True)
    handle = obj.pose.bones["foot_IK.L"]
    for frame, height in ((1, 0.0), (10, 0.2)):
        handle.location = (0.0, 0.0, height)
        handle.keyframe_insert("location", frame=frame)
    obj = shot_override(saved_character(obj, tmp_path / "character.blend"))
    assert obj.animation_data.action.library is not None
    bpy.context.scene.frame_set(5)
    before, keys = snapshot(obj), _keys(obj)
    # Blender 4.2 refuses before: it saves no parent choice of an override that is not keyed.
    with pytest.raises(RigError, match="action .* of 'Hero' is linked from the library|on the library override"):
        api.switch_parent(obj, "shin.L", 1)
    assert same(before, snapshot(obj)) and _keys(obj) == keys and obj.pose.bones["foot_IK.L"]["parent"] == 0
