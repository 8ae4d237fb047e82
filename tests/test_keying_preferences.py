"""Blender's keying preferences (Only Insert Needed, Only Insert Available, an active keying set with Only
Active Keying Set, auto-keying's Replace) do not stop the snaps, Bake IK/FK or Plant Feet from keying
what they change: a keyed control they left without its key would play its old keys on the next frame
change, and the snap, bake or plant would be lost. Plant Feet on the current frame keys what it changes
while auto-keying is on, as the snaps do. On evaluated poses, after a scrub away and back."""

from __future__ import annotations

from collections.abc import Iterator

import bpy
import pytest
from helpers import all_fcurves, both_legs_rigged, chain_length, evaluate, rotation_degrees, set_active_bone
from mathutils import Euler, Matrix
from test_hostile_held import _ground

from ik_rigger import api

CHAIN = ["thigh.L", "shin.L", "foot.L"]


@pytest.fixture
def preferences(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every keying preference that could hold a key back turned on, and given back after."""
    edit = bpy.context.preferences.edit
    tools = bpy.context.scene.tool_settings
    names = ("use_keyframe_insert_needed", "use_auto_keyframe_insert_needed", "use_keyframe_insert_available")
    before = {name: getattr(edit, name) for name in names}
    for name in names:
        setattr(edit, name, True)
    tools.use_keyframe_insert_auto = True
    tools.use_keyframe_insert_keyingset = True
    tools.auto_keying_mode = "REPLACE_KEYS"
    yield
    for name, value in before.items():
        setattr(edit, name, value)


def _hips_only_keying_set(obj: bpy.types.Object) -> None:
    scene = bpy.context.scene
    keying_set = scene.keying_sets.new(name="Hips Only")
    keying_set.paths.add(obj, 'pose.bones["hips"].location')
    scene.keying_sets.active = keying_set


def _keyed_at(obj: bpy.types.Object, bone: str, frame: int) -> set[str]:
    prefix = f'pose.bones["{bone}"]'
    return {curve.data_path[len(prefix):].lstrip(".") for curve in all_fcurves(obj)
            if curve.data_path.startswith(prefix) for key in curve.keyframe_points if abs(key.co[0] - frame) < 1e-6}


def _fk_step(obj: bpy.types.Object) -> None:
    """The left leg keyed in FK at rest on frame 1 and in a step on frame 9; the scene on frame 5."""
    handle = api.limbs(obj)[0].bones["HANDLE"]
    obj.pose.bones[handle]["ik_fk"] = 0.0
    for frame, turns in ((1, [(0, 0, 0)] * 3), (9, [(0.6, 0.1, 0.05), (-0.9, 0.0, 0.0), (0.3, 0.1, 0.0)])):
        for name, turn in zip(CHAIN, turns):
            obj.pose.bones[name].rotation_quaternion = Euler(turn).to_quaternion()
            obj.pose.bones[name].keyframe_insert("rotation_quaternion", frame=frame)
    bpy.context.scene.frame_set(5)


def _after_a_scrub(obj: bpy.types.Object, frame: int) -> dict[str, Matrix]:
    bpy.context.scene.frame_set(1)
    bpy.context.scene.frame_set(frame)
    return evaluate(obj)


def _same_leg(obj: bpy.types.Object, a: dict[str, Matrix], b: dict[str, Matrix]) -> bool:
    length = chain_length(obj, CHAIN[:2])
    return all((a[name].translation - b[name].translation).length < 1e-4 * length
               and rotation_degrees(a[name], b[name]) < 0.02 for name in CHAIN)


def test_the_ik_snap_keys_the_handle_it_moves_whatever_the_keying_preferences(preferences: None) -> None:
    obj = both_legs_rigged()
    _hips_only_keying_set(obj)
    _fk_step(obj)
    fk = evaluate(obj)
    handle = api.limbs(obj)[0].bones["HANDLE"]
    assert not _keyed_at(obj, handle, 5)  # no F-curve yet: Only Insert Available would key nothing
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert {"location", "rotation_quaternion", '["ik_fk"]'} <= _keyed_at(obj, handle, 5)
    shown = _after_a_scrub(obj, 5)
    assert obj.pose.bones[handle]["ik_fk"] == 1.0
    assert _same_leg(obj, shown, fk)


def test_bake_fk_to_ik_keys_every_frame_whatever_the_keying_preferences(preferences: None) -> None:
    obj = both_legs_rigged()
    _hips_only_keying_set(obj)
    _fk_step(obj)
    played = {}
    for frame in range(1, 10):
        bpy.context.scene.frame_set(frame)
        played[frame] = evaluate(obj)
    handle = api.limbs(obj)[0].bones["HANDLE"]
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=9, key_switch=True) == {"FINISHED"}
    assert all("location" in _keyed_at(obj, handle, frame) for frame in range(1, 10))
    for frame, fk in played.items():
        assert _same_leg(obj, _after_a_scrub(obj, frame), fk), frame


def _plant_now(obj: bpy.types.Object, floor: bpy.types.Object) -> dict[str, Matrix]:
    """Plant Feet on frame 5 from the operator; what it shows there."""
    bpy.context.scene.frame_set(5)
    obj.ik_rigger.ground = floor
    assert bpy.ops.ik_rigger.plant_feet(frames="CURRENT") == {"FINISHED"}
    return evaluate(obj)


def _keyed_handles(obj: bpy.types.Object) -> list[str]:
    """The legs' handles, keyed where they stand on frames 1 and 9 (an animation the scrub plays back)."""
    handles = [limb.bones["HANDLE"] for limb in api.limbs(obj)]
    for frame in (1, 9):
        for name in handles:
            obj.pose.bones[name].keyframe_insert("location", frame=frame)
    return handles


@pytest.mark.parametrize("keying", ["auto-keying", "auto-keying, every preference"])
def test_plant_feet_on_the_current_frame_keys_what_it_moves_while_auto_keying(request: pytest.FixtureRequest,
                                                                            keying: str) -> None:
    if keying.endswith("preference"):
        request.getfixturevalue("preferences")
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    obj = both_legs_rigged()
    handles = _keyed_handles(obj)
    planted = _plant_now(obj, _ground(0.2))
    assert all({"location"} <= _keyed_at(obj, name, 5) for name in handles)
    shown = _after_a_scrub(obj, 5)
    for name in ("foot.L", "foot.R", *handles):
        assert (shown[name].translation - planted[name].translation).length < 1e-5, name
    assert abs(shown["foot.L"].translation.z - shown["foot.R"].translation.z) < 1e-4


def test_plant_feet_on_the_current_frame_without_auto_keying_keys_nothing() -> None:
    obj = both_legs_rigged()
    handles = _keyed_handles(obj)
    before = sorted((curve.data_path, len(curve.keyframe_points)) for curve in all_fcurves(obj))
    _plant_now(obj, _ground(0.2))
    assert sorted((curve.data_path, len(curve.keyframe_points)) for curve in all_fcurves(obj)) == before
    assert not any(_keyed_at(obj, name, 5) for name in handles)


def test_plant_feet_from_python_keys_the_current_frame_when_asked() -> None:
    obj = both_legs_rigged()
    handles = _keyed_handles(obj)
    bpy.context.scene.frame_set(5)
    api.plant_feet(obj, _ground(0.2), key=True)
    assert all("location" in _keyed_at(obj, name, 5) for name in handles)
    planted = evaluate(obj)
    shown = _after_a_scrub(obj, 5)
    assert all((shown[name].translation - planted[name].translation).length < 1e-5 for name in handles)
