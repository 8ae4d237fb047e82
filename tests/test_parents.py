"""Parent switching: the handle and pole follow a choice animators switch and key, without a jump."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import (
    DATA,
    all_fcurves,
    both_legs,
    chain_length,
    evaluate,
    make_armature,
    rotation_degrees,
    same,
    snapshot,
)
from mathutils import Matrix, Vector

from ik_rigger import api
from ik_rigger.core.errors import RigError

CHAIN = ("thigh.L", "shin.L")


def rig(**options) -> bpy.types.Object:
    obj = make_armature(both_legs(), mode="OBJECT")
    api.build(obj, "shin.L", parent_switch=True, **options)
    return obj


def turn(obj: bpy.types.Object, bone: str, degrees: float, offset: tuple[float, ...] = (0.0, 0.0, 0.0)) -> None:
    """Pose a user bone: turned about armature Z through its head, and moved."""
    pose_bone = obj.pose.bones[bone]
    rest = obj.data.bones[bone].matrix_local
    pose_bone.matrix = Matrix.Translation(rest.translation + Vector(offset)) @ Matrix.Rotation(
        math.radians(degrees), 4, "Z") @ Matrix.Translation(-rest.translation) @ rest


def moved(before: Matrix, after: Matrix, length: float) -> bool:
    return (before.translation - after.translation).length > 1e-3 * length or rotation_degrees(before, after) > 0.1


def test_choices_and_the_default_is_the_guides_origin():
    obj = rig()
    limb = api.limbs(obj)[0]
    assert "SOCKET" in limb.bones and "parents" in limb.parts
    assert api.parent_choices(obj, "shin.L") == ["Origin (root)", "Torso (hips)"]
    handle, socket = limb.bones["HANDLE"], limb.bones["SOCKET"]
    assert obj.data.bones[handle].parent.name == socket
    assert obj.data.bones[limb.bones["POLE"]].parent.name == socket
    assert obj.pose.bones[handle]["parent"] == 0
    # Following the origin: the body moving leaves the foot planted; the root moving carries it.
    length = chain_length(obj, CHAIN)
    before = evaluate(obj)
    turn(obj, "hips", 30.0, Vector((0.1, 0.0, -0.05)))
    after = evaluate(obj)
    assert not moved(before[handle], after[handle], length)
    turn(obj, "root", 20.0, Vector((0.3, 0.0, 0.0)))
    assert moved(before[handle], evaluate(obj)[handle], length)


@pytest.mark.parametrize("choice", [1, "Torso", "torso (hips)"])
def test_switching_keeps_handle_and_pole_in_place_then_they_follow_the_new_parent(choice):
    obj = rig()
    limb = api.limbs(obj)[0]
    handle, pole = limb.bones["HANDLE"], limb.bones["POLE"]
    length = chain_length(obj, CHAIN)
    turn(obj, "hips", 25.0, Vector((0.05, 0.02, -0.1)))
    obj.pose.bones[handle].location = (0.05, -0.1, 0.08)
    before = evaluate(obj)
    assert api.switch_parent(obj, "shin.L", choice) == [handle, pole]
    after = evaluate(obj)
    assert obj.pose.bones[handle]["parent"] == 1
    for name in (handle, pole, *CHAIN, "foot.L"):
        assert (after[name].translation - before[name].translation).length < 1e-5 * length, name
        assert rotation_degrees(after[name], before[name]) < 0.01, name
    # Now the hips carry the foot with them.
    turn(obj, "hips", -10.0)
    assert moved(after[handle], evaluate(obj)[handle], length)
    # And back to the origin, still without a jump.
    again = evaluate(obj)
    api.switch_parent(obj, "shin.L", "Origin")
    back = evaluate(obj)
    for name in (handle, pole):
        assert (back[name].translation - again[name].translation).length < 1e-5 * length, name
        assert rotation_degrees(back[name], again[name]) < 0.01, name


def test_a_keyed_switch_plays_back():
    obj = rig()
    limb = api.limbs(obj)[0]
    handle = limb.bones["HANDLE"]
    scene = bpy.context.scene
    scene.frame_set(1)
    api.switch_parent(obj, "shin.L", 0, key=True, frame=1)
    scene.frame_set(10)
    api.switch_parent(obj, "shin.L", "Torso", key=True, frame=10)
    keyed = {curve.data_path: curve for curve in all_fcurves(obj)}
    path = f'pose.bones["{handle}"]["parent"]'
    assert path in keyed and all(point.interpolation == "CONSTANT" for point in keyed[path].keyframe_points)
    scene.frame_set(5)
    assert obj.pose.bones[handle]["parent"] == 0
    scene.frame_set(12)
    assert obj.pose.bones[handle]["parent"] == 1
    # The keyed torso follow: moving the hips moves the foot on frame 12.
    posed = evaluate(obj)
    turn(obj, "hips", 15.0)
    assert moved(posed[handle], evaluate(obj)[handle], chain_length(obj, CHAIN))
    # Once the choice is animated, a switch that is not keyed would not hold: refused, nothing changed.
    before = snapshot(obj)
    with pytest.raises(RigError, match="shin.L.*Insert Keyframes"):
        api.switch_parent(obj, "shin.L", 0)
    assert same(before, snapshot(obj))


def test_other_parent_and_pole_under_the_handle():
    obj = make_armature(both_legs() + [("prop", (0.5, -0.5, 1.0), (0.5, -0.5, 1.2), "root", False)], mode="OBJECT")
    api.build(obj, "shin.L", parent_switch=True, other_parent="prop", pole_parent="HANDLE")
    assert api.parent_choices(obj, "shin.L") == ["Origin (root)", "Torso (hips)", "Other (prop)"]
    limb = api.limbs(obj)[0]
    handle, pole = limb.bones["HANDLE"], limb.bones["POLE"]
    assert obj.data.bones[pole].parent.name == handle
    before = evaluate(obj)
    assert api.switch_parent(obj, "shin.L", "Other") == [handle]  # the pole rides on the handle
    turn(obj, "prop", 40.0, Vector((0.0, 0.2, 0.0)))
    after = evaluate(obj)
    assert moved(before[handle], after[handle], chain_length(obj, CHAIN))
    assert moved(before[pole], after[pole], chain_length(obj, CHAIN))


def test_refusals_name_the_limb_and_change_nothing():
    obj = make_armature(both_legs(), mode="OBJECT")
    api.build(obj, "shin.L")
    before = snapshot(obj)
    with pytest.raises(RigError, match="without Parent Switching"):
        api.switch_parent(obj, "shin.L", 1)
    assert same(before, snapshot(obj))
    api.build(obj, "shin.L", parent_switch=True)
    before = snapshot(obj)
    for wrong in (5, -1, "Elbow", True):
        with pytest.raises(RigError, match="shin.L.*Pick one of: 0 Origin"):
            api.switch_parent(obj, "shin.L", wrong)
    assert same(before, snapshot(obj))
    with pytest.raises(RigError, match="thigh.L"):
        api.build(obj, "shin.L", parent_switch=True, other_parent="thigh.L")  # a cycle: in the chain
    with pytest.raises(RigError, match="nowhere"):
        api.build(obj, "shin.L", parent_switch=True, other_parent="nowhere")
    assert same(before, snapshot(obj))


def test_rebuild_without_switching_and_remove_give_the_armature_back():
    obj = make_armature(both_legs(), mode="OBJECT")
    before = snapshot(obj)
    api.build(obj, "shin.L", parent_switch=True)
    api.switch_parent(obj, "shin.L", 1)
    api.build(obj, "shin.L", parent_switch=False)
    limb = api.limbs(obj)[0]
    assert "SOCKET" not in limb.bones and obj.data.bones[limb.bones["HANDLE"]].parent.name == "root"
    assert not any("parent ==" in curve.driver.expression for curve in obj.animation_data.drivers)
    api.build(obj, "shin.L", parent_switch=True)
    api.remove(obj, "shin.L")
    assert same(before, snapshot(obj))


def test_the_operator_switches_from_the_panel():
    obj = rig()
    bpy.ops.object.mode_set(mode="POSE")
    obj.data.bones.active = obj.data.bones["shin.L"]
    handle = api.limbs(obj)[0].bones["HANDLE"]
    assert bpy.ops.ik_rigger.switch_parent(parent=1, keyframe=True) == {"FINISHED"}
    assert obj.pose.bones[handle]["parent"] == 1
    with pytest.raises(RuntimeError, match="shin.L.*no parent '7'"):
        bpy.ops.ik_rigger.switch_parent(parent=7)
    assert obj.pose.bones[handle]["parent"] == 1


def test_motion_capture_arm_switches_and_keeps_its_motion_when_baked():
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    scene = bpy.context.scene
    frames = range(scene.frame_start, scene.frame_end + 1, 7)
    bones = ("mixamorig:LeftArm", "mixamorig:LeftForeArm", "mixamorig:LeftHand")
    played = {}
    for frame in frames:
        scene.frame_set(frame)
        played[frame] = {name: matrix.copy() for name, matrix in evaluate(obj).items() if name in bones}
    api.build(obj, "mixamorig:LeftForeArm", parent_switch=True)
    choices = api.parent_choices(obj, "mixamorig:LeftForeArm")
    assert choices[0] == "Origin (mixamorig:Spine2)" and "Root (mixamorig:Hips)" in choices
    length = chain_length(obj, bones[:2])
    for frame in frames:
        scene.frame_set(frame)
        posed = evaluate(obj)
        for name in bones:
            assert (posed[name].translation - played[frame][name].translation).length < 1e-4 * length, (frame, name)
            assert rotation_degrees(posed[name], played[frame][name]) < 0.01, (frame, name)
    scene.frame_set(frames[3])
    before = evaluate(obj)
    api.switch_parent(obj, "mixamorig:LeftForeArm", "Root")
    after = evaluate(obj)
    for name in bones:
        assert (after[name].translation - before[name].translation).length < 1e-5 * length * 10, name



def test_a_keyed_switch_plays_the_same_where_ik_rigger_is_not_installed(tmp_path):
    from test_pipeline import assert_same_poses, frames_here, play_elsewhere

    obj = rig()
    handle = api.limbs(obj)[0].bones["HANDLE"]
    hips = obj.pose.bones["hips"]
    hips.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (10, 0.3), (20, -0.3)):
        hips.rotation_euler = (0.0, 0.0, angle)
        hips.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_set(1)
    api.switch_parent(obj, "shin.L", "Origin", key=True, frame=1)
    bpy.context.scene.frame_set(10)
    api.switch_parent(obj, "shin.L", "Torso", key=True, frame=10)
    frames = [1, 5, 10, 15, 20]
    expected = frames_here(obj, frames)
    # The switch really changes what the foot does, or the comparison proves nothing.
    assert moved(expected[10][handle], expected[20][handle], chain_length(obj, CHAIN))
    assert not moved(expected[1][handle], expected[5][handle], chain_length(obj, CHAIN))
    path = tmp_path / "switching.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    played = play_elsewhere(path, frames, tmp_path)
    assert played["invalid_drivers"] == []
    for frame in frames:
        assert_same_poses(expected[frame], played["frames"][str(frame)][obj.name], chain_length(obj, CHAIN))


def test_renamed_controls_with_odd_names_still_switch_and_remove_cleanly():
    obj = make_armature(both_legs(), mode="OBJECT")
    before = snapshot(obj)
    api.build(obj, "shin.L", parent_switch=True)
    limb = api.limbs(obj)[0]
    obj.data.bones[limb.bones["HANDLE"]].name = 'pied "gauche" [IK]'
    obj.data.bones[limb.bones["SOCKET"]].name = "socket ü"
    limb = api.limbs(obj)[0]
    assert limb.bones["HANDLE"] == 'pied "gauche" [IK]' and limb.bones["SOCKET"] == "socket ü"
    assert api.parent_choices(obj, 'pied "gauche" [IK]') == ["Origin (root)", "Torso (hips)"]
    length = chain_length(obj, CHAIN)
    posed = evaluate(obj)
    assert api.switch_parent(obj, "shin.L", "Torso")[0] == 'pied "gauche" [IK]'
    after = evaluate(obj)
    assert (after['pied "gauche" [IK]'].translation - posed['pied "gauche" [IK]'].translation).length < 1e-5 * length
    turn(obj, "hips", 20.0)
    assert moved(after['pied "gauche" [IK]'], evaluate(obj)['pied "gauche" [IK]'], length)
    assert all(curve.driver.is_valid for curve in obj.animation_data.drivers)
    obj.pose.bones["hips"].matrix_basis = Matrix.Identity(4)
    api.remove(obj, "shin.L")
    assert same(before, snapshot(obj))


def centre_of_mass_skeleton(root_at_ground: bool) -> list[tuple]:
    """DAZ's, Character Creator's and 3ds Max Biped's layout: a hips bone carrying the body (a
    centre of mass), a pelvis below it that the legs hang from, and a chest the arms hang from;
    with ``root_at_ground``, a root bone on the floor above it all (where the character is placed)."""
    top = "root" if root_at_ground else None
    bones = [("root", (0, 0, 0), (0, 0.3, 0), None, False)] if root_at_ground else []
    bones += [("hip", (0, 0, 1.0), (0, 0, 1.1), top, False),
              ("pelvis", (0, 0, 1.0), (0, 0, 0.9), "hip", False),
              ("chest", (0, 0, 1.1), (0, 0, 1.45), "hip", False)]
    for side, x in (("L", 1.0), ("R", -1.0)):
        bones += [(f"thigh.{side}", (0.1 * x, 0, 0.98), (0.1 * x, -0.03, 0.55), "pelvis", False),
                  (f"shin.{side}", (0.1 * x, -0.03, 0.55), (0.1 * x, 0, 0.1), f"thigh.{side}", True),
                  (f"foot.{side}", (0.1 * x, 0, 0.1), (0.1 * x, -0.15, 0.02), f"shin.{side}", True),
                  (f"shoulder.{side}", (0.03 * x, 0, 1.42), (0.18 * x, 0, 1.42), "chest", False),
                  (f"upper_arm.{side}", (0.18 * x, 0, 1.42), (0.45 * x, 0.03, 1.42), f"shoulder.{side}", True),
                  (f"forearm.{side}", (0.45 * x, 0.03, 1.42), (0.7 * x, 0, 1.42), f"upper_arm.{side}", True),
                  (f"hand.{side}", (0.7 * x, 0, 1.42), (0.8 * x, 0, 1.42), f"forearm.{side}", True)]
    return bones


@pytest.mark.parametrize("root_at_ground", [False, True], ids=["hips on top", "root on the floor"])
def test_a_legs_handle_never_follows_the_bone_that_carries_the_body(root_at_ground):
    """The bone above a leg's parent may carry the body (the hips above the pelvis): feet that
    followed it would slide as the body moves. The handle follows the root on the floor if there
    is one, else the armature; an arm's still follows the bone above its shoulder (the hips here)."""
    obj = make_armature(centre_of_mass_skeleton(root_at_ground))
    limbs = {limb.name: limb for limb in api.auto_rig(obj)}
    assert sorted(limbs) == ["forearm.L", "forearm.R", "shin.L", "shin.R"]
    parent = {name: obj.data.bones[limb.bones["HANDLE"]].parent for name, limb in limbs.items()}
    assert {name: bone.name if bone else None for name, bone in parent.items()} == {
        "shin.L": "root" if root_at_ground else None, "shin.R": "root" if root_at_ground else None,
        "forearm.L": "chest", "forearm.R": "chest"}
    length = chain_length(obj, CHAIN)
    before = evaluate(obj)
    turn(obj, "hip", 20.0, Vector((0.05, 0.02, -0.1)))  # the body moves and turns
    after = evaluate(obj)
    for side in "LR":
        handle = limbs[f"shin.{side}"].bones["HANDLE"]
        assert not moved(before[handle], after[handle], length)
        # The foot stays planted: its clone holds it where the handle is.
        assert (after[f"foot.{side}"].translation - before[f"foot.{side}"].translation).length < 1e-3 * length
        assert rotation_degrees(after[f"foot.{side}"], before[f"foot.{side}"]) < 0.1
    obj.pose.bones["hip"].matrix_basis = Matrix.Identity(4)
    if root_at_ground:  # placing the character carries the feet along
        turn(obj, "root", 0.0, Vector((0.3, 0.0, 0.0)))
        placed = evaluate(obj)
        for side in "LR":
            shift = placed[f"foot.{side}"].translation - before[f"foot.{side}"].translation
            assert (shift - Vector((0.3, 0.0, 0.0))).length < 1e-3 * length


def test_a_rebuild_keeps_what_an_animated_handle_follows():
    """A leg rigged by an earlier release followed the bone above its parent (the hips here),
    and its handle's keys move it from there. Rebuilt with the parent automatic, the handle
    keeps that parent, and the leg plays as it did."""
    obj = make_armature(centre_of_mass_skeleton(root_at_ground=False))
    handle = api.build(obj, "shin.L")[0].bones["HANDLE"]
    assert obj.data.bones[handle].parent is None
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones[handle].parent = obj.data.edit_bones["hip"]  # as the earlier rule chose
    bpy.ops.object.mode_set(mode="POSE")
    pose_handle = obj.pose.bones[handle]
    for frame, offset in ((1, (0.0, 0.0, 0.0)), (10, (0.05, -0.2, 0.15))):
        pose_handle.location = offset
        pose_handle.keyframe_insert("location", frame=frame)
    obj.pose.bones["hip"].location = (0.0, 0.1, -0.05)  # the body lowered, held still
    played = {}
    for frame in (1, 5, 10):
        bpy.context.scene.frame_set(frame)
        played[frame] = evaluate(obj)["foot.L"]
    api.build(obj, "shin.L", pole_distance=1.5)  # a rebuild, its parent left automatic
    assert obj.data.bones[handle].parent.name == "hip"
    length = chain_length(obj, CHAIN)
    for frame, foot in played.items():
        bpy.context.scene.frame_set(frame)
        now = evaluate(obj)["foot.L"]
        assert (now.translation - foot.translation).length < 1e-3 * length, frame
        assert rotation_degrees(now, foot) < 0.1, frame
