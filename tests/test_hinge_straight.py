"""Hinge Joints on a chain straight at rest whose bones are rolled: it builds, hinged about its bend.

A straight chain is pre-bent toward the Bend Direction, so its hinge is that bend's axis, whatever the bones'
roll. Where neither the X nor the Z axis of a bone lies along it (a straight leg rolled 45 degrees), Hinge Joints
refused the limb, asking the user to roll the bone. Now the bones are pre-bent as any straight chain is (a
degree, their ends kept) and IK solves a hidden chain on the same joints, rolled on that hinge, which they
follow: the knee bends toward the Bend Direction, about its hinge only, from straight to a natural bend, and the
foot reaches the handle; Remove IK Limb gives the rest back.
"""

from __future__ import annotations

import math
import random

import bpy
import pytest
from helpers import chain_length, evaluate, leg_bones, make_armature, rest, rotation_degrees, same, snapshot, tail
from mathutils import Matrix, Vector
from test_build import move_handle

from ik_rigger import api
from ik_rigger.core.geometry import AXES
from ik_rigger.core.joints import NATURAL_BEND_DEGREES

CHAIN = ("thigh.L", "shin.L")


def _rolled_leg(roll_degrees: float, **rolls: float) -> bpy.types.Object:
    """A straight leg whose thigh and shin are rolled ``roll_degrees`` (or as ``rolls`` say, by bone)."""
    turned = {name: math.radians(rolls.get(name.replace(".", "_"), roll_degrees)) for name in CHAIN}
    return make_armature(leg_bones(bend=0.0), rolls=turned)


def _turn(obj: bpy.types.Object, posed: dict[str, Matrix], name: str) -> Matrix:
    """The bone's rotation from its rest under its posed parent (what the hinge's lock and limit measure)."""
    bone = obj.data.bones[name]
    parent = bone.parent
    base = posed[parent.name] @ parent.matrix_local.inverted() @ bone.matrix_local
    return (base.inverted() @ posed[name]).to_3x3().normalized()


def _prebent_only(obj: bpy.types.Object, before: dict[str, Matrix]) -> None:
    """The chain's rest changed as pre-bending promises and no more: each bone turned a degree or two at most,
    the hip and the ankle where they were; every other bone as it was."""
    after, length = rest(obj), chain_length(obj, CHAIN)
    for name, matrix in before.items():
        turned = rotation_degrees(matrix, after[name])
        assert turned <= 2.0 if name in CHAIN else turned < 1e-4, (name, turned)
    bones = obj.data.bones
    assert (bones["thigh.L"].head_local - before["thigh.L"].translation).length < 1e-6 * length
    assert (bones["foot.L"].head_local - before["foot.L"].translation).length < 1e-6 * length
    assert max(rotation_degrees(before[name], after[name]) for name in CHAIN) > 0.5  # pre-bent


def _hinged_leg(obj: bpy.types.Object, bend: Vector) -> None:
    """The rest plays as it was; the knee bends toward ``bend`` about the hinge (``bend`` cross the chain's axis)
    only, from straight to a natural bend, and the foot reaches the handle wherever it can."""
    bones = obj.data.bones
    length = chain_length(obj, CHAIN)
    before = rest(obj)
    posed = evaluate(obj)
    for name in (*CHAIN, "foot.L"):
        assert rotation_degrees(before[name], posed[name]) < 0.01, name  # the solver's last digits
        assert (posed[name].translation - before[name].translation).length < 1e-4 * length, name
    axis = (bones["shin.L"].tail_local - bones["thigh.L"].head_local).normalized()
    hinge = bend.cross(axis).normalized()  # the shin turns about it from the chain's line toward behind the knee
    hinge_in_shin = (bones["shin.L"].matrix_local.to_3x3().inverted() @ hinge).normalized()
    handle = api.limbs(obj)[0].bones["HANDLE"]
    end_rest = bones["shin.L"].tail_local
    root = bones["thigh.L"].head_local
    move_handle(obj, handle, (root - end_rest) * 0.3)  # raised toward the hip: the knee must bend
    posed = evaluate(obj)
    knee = posed["shin.L"].translation
    assert (knee - root).dot(bend) > 0.2 * length, "the knee bends toward the Bend Direction"
    rng = random.Random(7)
    reached = tried = 0
    while tried < 24:
        target = end_rest + Vector([rng.uniform(-0.4, 0.4) for _ in range(3)]) * length
        if not 0.35 * length < (target - root).length < 0.95 * length:
            continue
        tried += 1
        move_handle(obj, handle, target - end_rest)
        posed = evaluate(obj)
        turn = _turn(obj, posed, "shin.L").to_quaternion()
        if turn.angle > 1e-3:
            assert abs(abs(turn.axis.dot(hinge_in_shin)) - 1.0) < 1e-3, "turned about the hinge only"
        angle = turn.angle if turn.axis.dot(hinge_in_shin) >= 0.0 else -turn.angle
        # Pre-bent 1 degree on the hidden chain: from straight (a degree back from it at most) to a natural bend.
        assert -math.radians(1.5) <= angle <= math.radians(NATURAL_BEND_DEGREES + 1.5), math.degrees(angle)
        if (tail(posed["shin.L"], bones["shin.L"].length) - target).length < 1e-3 * length:
            reached += 1
    assert reached >= 10


@pytest.mark.parametrize("bend_direction", ["AUTO", "X_POS"])
@pytest.mark.parametrize("roll", [30.0, 45.0, 135.0])
def test_a_straight_rolled_leg_builds_with_hinge_joints_hinged_about_its_bend(roll, bend_direction):
    obj = _rolled_leg(roll)
    before, at_rest = snapshot(obj), rest(obj)
    built = api.build(obj, "shin.L", both_sides=False, hinge_joints=True, bend_direction=bend_direction)[0]
    _prebent_only(obj, at_rest)
    assert any(role.startswith("JOINT") for role in built.bones)
    assert [note for note in built.notes if "rolled so neither its X nor its Z axis" in note]
    bend = Vector((0.0, -1.0, 0.0)) if bend_direction == "AUTO" else Vector(AXES[bend_direction])
    _hinged_leg(obj, bend)
    api.remove(obj, "shin.L")
    assert same(snapshot(obj), before)


def test_only_the_shin_rolled_off_its_hinge_builds_from_the_button_and_undoes():
    """The thigh on the bend's hinge, the shin 60 degrees off it: Build IK Limb from its button, then Ctrl+Z."""
    obj = _rolled_leg(0.0, shin_L=60.0)
    before, at_rest = snapshot(obj), rest(obj)
    obj.data.bones.active = obj.data.bones["shin.L"]
    bpy.ops.ed.undo_push(message="the user's last step")
    assert bpy.ops.ik_rigger.build_ik("EXEC_DEFAULT", True, hinge_joints=True, both_sides=False) == {"FINISHED"}
    obj = bpy.data.objects["Rig"]
    _prebent_only(obj, at_rest)
    _hinged_leg(obj, Vector((0.0, -1.0, 0.0)))
    bpy.ops.ed.undo()
    assert same(snapshot(bpy.data.objects["Rig"]), before)


def test_a_straight_leg_rolled_onto_its_hinge_is_still_pre_bent_on_its_own_bones():
    """Rolled 90 degrees, a bone's Z axis lies along the bend's hinge: Hinge Joints hold the bones themselves,
    pre-bent as before, with no hidden chain."""
    obj = _rolled_leg(90.0)
    built = api.build(obj, "shin.L", both_sides=False, hinge_joints=True)[0]
    assert not any(role.startswith("JOINT") for role in built.bones)
    shin = obj.pose.bones["shin.L"]
    assert shin.use_ik_limit_z and shin.lock_ik_x and shin.lock_ik_y
    _hinged_leg(obj, Vector((0.0, -1.0, 0.0)))


def test_a_straight_rolled_leg_left_straight_builds_and_is_warned_of():
    """Pre-bending off: the hidden chain is hinged about the bend's axis, straight, and the build warns that IK
    may not bend it, as for any chain left straight."""
    obj = _rolled_leg(45.0)
    built = api.build(obj, "shin.L", both_sides=False, hinge_joints=True, prebend_straight=False)[0]
    assert any(role.startswith("JOINT") for role in built.bones)
    assert [note for note in built.notes if api.is_warning(note) and "is straight and was left so" in note]


def _knee_keyed(obj: bpy.types.Object, degrees: float = 40.0) -> None:
    """Keys on frames 1 and 10 bending the knee forward (-Y) from straight by ``degrees``, the foot under the hip."""
    bones = obj.data.bones
    hip, knee_rest = bones["thigh.L"].head_local, bones["shin.L"].head_local
    for frame, angle in ((1, 0.0), (10, math.radians(degrees))):
        thigh = Matrix.Translation(hip) @ Matrix.Rotation(-angle / 2, 4, "X") @ Matrix.Translation(-hip)
        knee = thigh @ knee_rest
        shin = Matrix.Translation(knee) @ Matrix.Rotation(angle, 4, "X") @ Matrix.Translation(-knee) @ thigh
        obj.pose.bones["thigh.L"].matrix = thigh @ bones["thigh.L"].matrix_local
        bpy.context.view_layer.update()
        obj.pose.bones["shin.L"].matrix = shin @ bones["shin.L"].matrix_local
        bpy.context.view_layer.update()
        for name in CHAIN:
            obj.pose.bones[name].keyframe_insert("rotation_quaternion", frame=frame)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 10


@pytest.mark.parametrize("roll", [0.0, 45.0, 180.0])
def test_a_straight_leg_whose_keys_bend_its_knee_plays_them_hinged(roll):
    """Its motion bends it, so the chain is not pre-bent: the hinge's range was read off a joint with no bend,
    and on a leg whose bones' Z points back it let the knee bend backwards only; the motion baked onto the IK
    controls played the knee 40 degrees off, with a warning. Now the range opens toward the Bend Direction."""
    obj = _rolled_leg(roll)
    _knee_keyed(obj)
    scene = bpy.context.scene
    played = {}
    for frame in (1, 5, 10):
        scene.frame_set(frame)
        played[frame] = evaluate(obj)
    built = api.build(obj, "shin.L", both_sides=False, hinge_joints=True)[0]
    assert not [note for note in built.notes if api.is_warning(note)], built.notes
    length = chain_length(obj, CHAIN)
    for frame in (1, 5, 10):
        scene.frame_set(frame)
        posed = evaluate(obj)
        for name in (*CHAIN, "foot.L"):
            assert (posed[name].translation - played[frame][name].translation).length < 1e-4 * length, (frame, name)
            assert rotation_degrees(posed[name], played[frame][name]) < 0.01, (frame, name)


def test_a_straight_leg_left_straight_never_bends_its_knee_backwards():
    """Pre-bending off and no pole: the hinge let the knee bend backwards only, and raising the handle folded
    it back by a third of the leg."""
    obj = _rolled_leg(0.0)
    built = api.build(obj, "shin.L", both_sides=False, hinge_joints=True, prebend_straight=False, use_pole=False)[0]
    shin = obj.pose.bones["shin.L"]
    low, high = shin.ik_min_x, shin.ik_max_x
    assert shin.use_ik_limit_x and (low, high) == pytest.approx((0.0, math.radians(NATURAL_BEND_DEGREES)))
    bones = obj.data.bones
    length = chain_length(obj, CHAIN)
    move_handle(obj, built.bones["HANDLE"], (bones["thigh.L"].head_local - bones["shin.L"].tail_local) * 0.3)
    knee = evaluate(obj)["shin.L"].translation
    assert knee.y < 1e-3 * length, "the knee went behind the leg"


def test_odd_names_renamed_rebuilt_without_and_with_hinges_then_removed_give_the_rest_back():
    """Quotes, dots and letters beyond ASCII in the chain's names, its last bone renamed between rebuilds: each
    build reaches the handle, and Remove IK Limb gives every bone its rest back."""
    names = {"thigh.L": 'Ober"schenkel.L', "shin.L": "Schien.bein.L", "foot.L": "Fuß.L"}
    bones = [(names.get(name, name), head, tail, names.get(parent, parent) if parent else None, connected)
             for name, head, tail, parent, connected in leg_bones(bend=0.0)]
    obj = make_armature(bones, rolls={names[name]: math.radians(45.0) for name in CHAIN})
    before = snapshot(obj)
    last = names["shin.L"]
    for hinged, renamed in ((True, "Knie 'B'"), (False, "Knie 'B' ñ"), (True, None)):
        built = api.build(obj, last, both_sides=False, hinge_joints=hinged)[0]
        assert any(role.startswith("JOINT") for role in built.bones) == hinged
        handle = built.bones["HANDLE"]
        length = chain_length(obj, built.chain)
        foot = obj.data.bones[names["foot.L"]].head_local.copy()
        lift = Vector((0.02, -0.03, 0.3)) * length
        move_handle(obj, handle, lift)
        assert (evaluate(obj)[names["foot.L"]].translation - (foot + lift)).length < 1e-3 * length
        obj.pose.bones[handle].matrix_basis = Matrix.Identity(4)
        if renamed:
            obj.data.bones[last].name = renamed
            last = renamed
    api.remove(obj, last)
    obj.data.bones[last].name = names["shin.L"]
    assert same(snapshot(obj), before)
