"""Foot roll: the foot rocks on its heel, its ball and its toe tip, the point in contact staying put."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import (
    chain_length,
    evaluate,
    import_bvh,
    leg_bones,
    make_armature,
    rest,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
)
from mathutils import Matrix, Quaternion, Vector
from test_build import move_handle
from test_pose_tools import fk_pose

from ik_rigger.parts.foot_roll import (
    BALL_BREAK,
    ROLE_BANK_IN,
    ROLE_BANK_OUT,
    ROLE_HEEL,
    ROLE_ROLL,
    ROLE_TIP,
    ROLE_TOE_PIVOT,
)
from ik_rigger.rig import records

LEG = ["thigh.L", "shin.L"]


def rigged(bones=None, last: str = "shin.L") -> tuple[bpy.types.Object, records.Parts]:
    obj = make_armature(bones or leg_bones(bend=0.08))
    set_active_bone(obj, last)
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True) == {"FINISHED"}
    return obj, records.resolve(obj, obj.ik_rigger.limbs[0])


def crouch(obj: bpy.types.Object, bone: str, depth: float) -> None:
    """Lower the hips so the legs can reach a raised ankle (a straight leg cannot: it is too short)."""
    pose_bone = obj.pose.bones[bone]
    pose_bone.matrix = Matrix.Translation((0.0, 0.0, -depth)) @ pose_bone.matrix


def roll(obj: bpy.types.Object, parts: records.Parts, degrees: float, axis: str = "X") -> None:
    pose_bone = obj.pose.bones[parts.made[ROLE_ROLL]]
    pose_bone.rotation_mode = "QUATERNION"
    direction = {"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1)}[axis]
    pose_bone.rotation_quaternion = Quaternion(Vector(direction), math.radians(degrees))


def carried(posed: dict[str, Matrix], obj: bpy.types.Object, bone: str, point: Vector) -> Vector:
    """Where a rest point riding on ``bone`` is in the evaluated pose."""
    return posed[bone] @ obj.data.bones[bone].matrix_local.inverted() @ point


def test_building_keeps_the_rest_and_makes_the_pivots():
    obj = make_armature(leg_bones(bend=0.08))
    before = rest(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True) == {"FINISHED"}
    parts = records.resolve(obj, obj.ik_rigger.limbs[0])
    assert {ROLE_ROLL, ROLE_HEEL, ROLE_TIP, ROLE_TOE_PIVOT} <= set(parts.made)
    posed = evaluate(obj)
    for name, matrix in before.items():
        assert rotation_degrees(matrix, posed[name]) < 0.01, name
        assert (matrix.translation - posed[name].translation).length < 1e-4 * chain_length(obj, LEG), name
    bones = obj.data.bones
    heel = bones[parts.made[ROLE_HEEL]].head_local
    assert heel.z == pytest.approx(0.0, abs=1e-6)  # on the ground (the toe's tip)
    assert heel.y > bones["foot.L"].head_local.y  # behind the ankle (the foot points -Y)


@pytest.mark.parametrize("degrees", [-60.0, 0.0, 45.0, 90.0, 135.0])
def test_the_point_in_contact_stays_put(degrees):
    obj, parts = rigged()
    bones = obj.data.bones
    heel, ball, tip = (bones[parts.made[role]].head_local.copy() for role in (ROLE_HEEL, ROLE_TOE_PIVOT, ROLE_TIP))
    crouch(obj, "hips", 0.3)
    roll(obj, parts, degrees)
    posed = evaluate(obj)
    length = chain_length(obj, LEG)
    contacts = {"heel": carried(posed, obj, "foot.L", heel), "ball": carried(posed, obj, "foot.L", ball),
                "tip": carried(posed, obj, "toe.L", tip)}
    touching = ["heel", "ball", "tip"] if degrees == 0 else ["heel"] if degrees < 0 else ["ball"] \
        if degrees <= BALL_BREAK else ["tip"]
    for name in touching:
        assert (contacts[name] - {"heel": heel, "ball": ball, "tip": tip}[name]).length < 1e-4 * length, name
    if degrees:  # and the foot really turned
        assert rotation_degrees(posed["foot.L"], bones["foot.L"].matrix_local) > 1.0
    if 0 < degrees <= BALL_BREAK:  # rolling on the ball, the toe stays flat on the ground
        assert rotation_degrees(posed["toe.L"], bones["toe.L"].matrix_local) < 0.01


def test_spin_turns_the_foot_about_the_ball():
    obj, parts = rigged()
    ball = obj.data.bones[parts.made[ROLE_TOE_PIVOT]].head_local.copy()
    roll(obj, parts, 30.0, axis="Z")
    posed = evaluate(obj)
    assert (carried(posed, obj, "foot.L", ball) - ball).length < 1e-4 * chain_length(obj, LEG)
    assert rotation_degrees(posed["foot.L"], obj.data.bones["foot.L"].matrix_local) > 5.0


@pytest.mark.parametrize("degrees", [-30.0, 20.0, 80.0])
def test_snapping_stays_exact_with_any_roll(degrees):
    obj, parts = rigged()
    roll(obj, parts, degrees)
    length = chain_length(obj, LEG)
    move_handle(obj, parts.handle, Vector((0.03, -0.08, 0.2)))
    ik = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_fk_to_ik() == {"FINISHED"}
    fk = evaluate(obj)
    for name in ("thigh.L", "shin.L", "foot.L", "toe.L"):
        assert rotation_degrees(ik[name], fk[name]) < 0.01, name
        assert (ik[name].translation - fk[name].translation).length < 1e-4 * length, name
    fk_pose(obj, ["thigh.L", "shin.L", "foot.L"], seed=int(degrees))
    fk = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    ik = evaluate(obj)
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert rotation_degrees(ik[name], fk[name]) < 0.01, name
        assert (ik[name].translation - fk[name].translation).length < 1e-4 * length, name


def test_remove_gives_the_armature_back():
    obj = make_armature(leg_bones(bend=0.08))
    before = snapshot(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True) == {"FINISHED"}
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True, copy_mode="TRANSFORMS") == {"FINISHED"}  # rebuilt in place
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert same(snapshot(obj), before)


def test_a_leg_without_a_foot_is_refused():
    obj = make_armature(leg_bones(bend=0.08))
    set_active_bone(obj, "shin.L")
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="Foot Roll has nothing to roll"):
        bpy.ops.ik_rigger.build_ik(foot_roll=True, extremity_mode="NONE")
    assert same(snapshot(obj), before)


def test_on_the_motion_capture_skeleton():
    obj = import_bvh("mixamo_freebvh.bvh")
    bpy.ops.object.mode_set(mode="POSE")
    before = rest(obj)
    set_active_bone(obj, "mixamorig:LeftLeg")
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True) == {"FINISHED"}
    parts = records.resolve(obj, obj.ik_rigger.limbs[0])
    posed = evaluate(obj)
    for name, matrix in before.items():
        assert rotation_degrees(matrix, posed[name]) < 0.01, name
    heel = obj.data.bones[parts.made[ROLE_HEEL]].head_local.copy()
    length = chain_length(obj, ["mixamorig:LeftUpLeg", "mixamorig:LeftLeg"])
    evaluate(obj)
    crouch(obj, "mixamorig:Hips", 0.25 * length)
    roll(obj, parts, -40.0)
    posed = evaluate(obj)
    assert (carried(posed, obj, "mixamorig:LeftFoot", heel) - heel).length < 1e-4 * length


@pytest.mark.parametrize("degrees, edge", [(20.0, ROLE_BANK_OUT), (-25.0, ROLE_BANK_IN)])
def test_bank_tips_the_foot_up_about_one_edge(degrees, edge):
    obj, parts = rigged()
    bones = obj.data.bones
    pivot = bones[parts.made[edge]].head_local.copy()
    other = bones[parts.made[ROLE_BANK_IN if edge == ROLE_BANK_OUT else ROLE_BANK_OUT]].head_local.copy()
    crouch(obj, "hips", 0.3)
    roll(obj, parts, degrees, axis="Y")
    posed = evaluate(obj)
    length = chain_length(obj, LEG)
    assert (carried(posed, obj, "foot.L", pivot) - pivot).length < 1e-4 * length
    # The other edge lifts off the ground: the foot tips up, never into it.
    assert carried(posed, obj, "foot.L", other).z > other.z + 0.01


def test_renamed_foot_roll_bones_rebuild_in_place_and_the_toe_removes_the_limb():
    obj = make_armature(leg_bones(bend=0.08))
    before = snapshot(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True) == {"FINISHED"}
    parts = records.resolve(obj, obj.ik_rigger.limbs[0])
    obj.data.bones[parts.made[ROLE_ROLL]].name = "Roll L"
    obj.data.bones["toe.L"].name = "Zehe.L"
    count = len(obj.data.bones)
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True) == {"FINISHED"}
    assert len(obj.data.bones) == count and records.resolve(obj, obj.ik_rigger.limbs[0]).made[ROLE_ROLL] == "Roll L"
    set_active_bone(obj, "Zehe.L")  # the toe its constraint moves belongs to the limb
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    obj.data.bones["Zehe.L"].name = "toe.L"
    assert same(snapshot(obj), before)
