"""After rigging, with Blender's auto-keying on (as many animators work): snapping and switching parents
key what they pose, as Blender's own transforms and Rigify's snapping do, so scrubbing keeps it."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length, evaluate, import_bvh, rotation_degrees
from mathutils import Euler

from ik_rigger import api

CHAIN = ["LeftArm", "LeftForeArm", "LeftHand"]


@pytest.fixture
def walker() -> bpy.types.Object:
    """The motion-capture skeleton rigged with parent switching, in Pose mode, its left arm posed in FK on
    frame 5 and a key on frame 1 (the animation the scrub plays back)."""
    obj = import_bvh("pymo_walk.bvh")
    api.auto_rig(obj, parent_switch=True)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    handle = obj.pose.bones["LeftHand_IK"]
    handle.location = (0.0, 0.0, 0.0)
    handle.keyframe_insert("location", frame=1)
    bpy.context.scene.frame_set(5)
    for name, turn in zip(CHAIN, [(0.0, 0.3, -0.6), (0.0, 0.0, 1.1), (0.2, 0.0, 0.0)]):
        obj.pose.bones[name].matrix_basis = Euler(turn).to_matrix().to_4x4()
    handle["ik_fk"] = 0.0
    obj.data.bones.active = obj.data.bones["LeftForeArm"]
    return obj


def _keyed_frames(obj: bpy.types.Object, bone: str) -> set[float]:
    prefix = f'pose.bones["{bone}"]'
    return {key.co.x for curve in all_fcurves(obj) if curve.data_path.startswith(prefix)
            for key in curve.keyframe_points}


def _arm(obj: bpy.types.Object) -> dict:
    pose = evaluate(obj)
    return {name: pose[name] for name in CHAIN}


def _same(obj: bpy.types.Object, a: dict, b: dict) -> bool:
    length = chain_length(obj, CHAIN[:2])
    return all((a[name].translation - b[name].translation).length < 1e-4 * length
               and rotation_degrees(a[name], b[name]) < 0.01 for name in CHAIN)


@pytest.mark.parametrize("auto", [True, False], ids=["auto-keying", "no auto-keying"])
def test_snapping_keys_the_controls_and_the_switch_while_auto_keying_is_on(walker, auto):
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = auto
    fk = _arm(walker)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert _same(walker, _arm(walker), fk)
    bpy.context.scene.frame_set(1)
    bpy.context.scene.frame_set(5)
    assert (5.0 in _keyed_frames(walker, "LeftHand_IK")) == auto
    assert _same(walker, _arm(walker), fk) == auto  # unkeyed, the scrub plays the key of frame 1 back


def test_insert_keyframes_turned_off_by_hand_keys_nothing_while_auto_keying(walker):
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    assert bpy.ops.ik_rigger.snap_fk_to_ik(keyframe=False) == {"FINISHED"}
    assert bpy.ops.ik_rigger.switch_parent(limb="LeftForeArm", parent=1, keyframe=False) == {"FINISHED"}
    assert _keyed_frames(walker, "LeftHand_IK") == {1.0}
    assert not _keyed_frames(walker, "LeftArm")


def test_switching_parents_keys_the_switch_and_controls_while_auto_keying(walker):
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    walker.pose.bones["LeftHand_IK"]["ik_fk"] = 1.0
    before = _arm(walker)
    assert bpy.ops.ik_rigger.switch_parent(limb="LeftForeArm", parent=1) == {"FINISHED"}
    assert 5.0 in _keyed_frames(walker, "LeftHand_IK")
    bpy.context.scene.frame_set(1)
    bpy.context.scene.frame_set(5)
    assert walker.pose.bones["LeftHand_IK"]["parent"] == 1
    assert _same(walker, _arm(walker), before)


def test_auto_keying_an_action_linked_from_a_library_snaps_without_keys_and_warns(walker, tmp_path, capsys):
    """Keys cannot go into a linked action: as Blender's transforms do, the snap still poses, unkeyed,
    and says why (asked for by hand, keys are refused as before)."""
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    action = walker.animation_data.action
    action.name = "Walk"
    library = tmp_path / "walk_library.blend"
    bpy.data.libraries.write(str(library), {action}, fake_user=True)
    with bpy.data.libraries.load(str(library), link=True) as (_, target):
        target.actions = ["Walk"]
    slot = getattr(walker.animation_data, "action_slot", None)
    walker.animation_data.action = target.actions[0]
    if slot is not None:
        walker.animation_data.action_slot = target.actions[0].slots[slot.identifier]
    bpy.context.scene.frame_set(5)
    for name in ("LeftArm", "LeftForeArm"):
        walker.pose.bones[name].matrix_basis = Euler((0.0, 0.3, -0.6)).to_matrix().to_4x4()
    walker.pose.bones["LeftHand_IK"]["ik_fk"] = 0.0
    fk = _arm(walker)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert "Not keyed, although auto-keying is on" in capsys.readouterr().out
    assert _same(walker, _arm(walker), fk) and walker.pose.bones["LeftHand_IK"]["ik_fk"] == 1.0
    with pytest.raises(RuntimeError, match="linked from the library"):
        bpy.ops.ik_rigger.snap_ik_to_fk(keyframe=True)
