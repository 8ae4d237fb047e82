"""Hinge Joints: knees and elbows bend about their hinge only, within a natural range."""

from __future__ import annotations

import math
import random

import bpy
import pytest
from helpers import (
    both_legs,
    chain_length,
    evaluate,
    leg_bones,
    make_armature,
    rest,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
    tail,
)
from mathutils import Matrix, Vector
from test_build import move_handle

from ik_rigger.core.joints import NATURAL_BEND_DEGREES


def local_rotation(obj: bpy.types.Object, posed: dict[str, Matrix], name: str) -> Matrix:
    """The bone's rotation relative to its rest under its posed parent (what IK limits measure)."""
    bone = obj.data.bones[name]
    parent = bone.parent
    base = posed[parent.name] @ parent.matrix_local.inverted() @ bone.matrix_local
    return (base.inverted() @ posed[name]).to_3x3().normalized()


@pytest.mark.parametrize("roll", [0.0, math.pi / 2, math.pi])
def test_the_knee_bends_only_about_its_hinge_within_its_range(roll):
    obj = make_armature(leg_bones(bend=0.05), rolls={"shin.L": roll, "thigh.L": roll})
    before = rest(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(hinge_joints=True) == {"FINISHED"}
    shin = obj.pose.bones["shin.L"]
    axis = "x" if shin.use_ik_limit_x else "z"
    assert getattr(shin, f"use_ik_limit_{axis}") and not obj.pose.bones["thigh.L"].lock_ik_x
    assert [getattr(shin, f"lock_ik_{a}") for a in "xyz"] == [a != axis for a in "xyz"]
    low, high = getattr(shin, f"ik_min_{axis}"), getattr(shin, f"ik_max_{axis}")
    posed = evaluate(obj)
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert rotation_degrees(before[name], posed[name]) < 0.01, name
    record = obj.ik_rigger.limbs[0]
    chain = ["thigh.L", "shin.L"]
    length = chain_length(obj, chain)
    root = obj.data.bones["thigh.L"].head_local
    end_rest = obj.data.bones["shin.L"].tail_local
    rng = random.Random(int(roll * 10))
    reached = 0
    for _ in range(60):
        target = end_rest + Vector([rng.uniform(-0.35, 0.35) for _ in range(3)]) * length
        if not 0.35 * length < (target - root).length < 0.95 * length:
            continue
        move_handle(obj, record.handle, target - end_rest)
        posed = evaluate(obj)
        turn = local_rotation(obj, posed, "shin.L")
        hinge = Vector((1, 0, 0)) if axis == "x" else Vector((0, 0, 1))
        quaternion = turn.to_quaternion()
        angle = quaternion.angle if quaternion.axis.dot(hinge) >= 0 else -quaternion.angle
        if abs(quaternion.angle) > 1e-4:
            # Turned about the hinge only: the locked axes did not move.
            assert abs(abs(quaternion.axis.dot(hinge)) - 1.0) < 1e-4
        assert low - math.radians(0.01) <= angle <= high + math.radians(0.01)
        end = tail(posed["shin.L"], obj.data.bones["shin.L"].length)
        if (end - target).length < 1e-3 * length:
            reached += 1
    assert reached >= 10  # the legal targets are reached


def test_the_range_goes_from_straight_to_a_natural_bend():
    obj = make_armature(leg_bones(bend=0.05))
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(hinge_joints=True) == {"FINISHED"}
    shin = obj.pose.bones["shin.L"]
    axis = "x" if shin.use_ik_limit_x else "z"
    low, high = getattr(shin, f"ik_min_{axis}"), getattr(shin, f"ik_max_{axis}")
    bones = obj.data.bones
    thigh = bones["thigh.L"].tail_local - bones["thigh.L"].head_local
    bend = math.degrees(thigh.angle(bones["shin.L"].tail_local - bones["shin.L"].head_local))
    spans = sorted((abs(math.degrees(low)), abs(math.degrees(high))))
    assert spans[0] == pytest.approx(bend, abs=1e-3)  # back to straight, never beyond
    assert spans[1] == pytest.approx(NATURAL_BEND_DEGREES - bend, abs=1e-3)


def test_remove_and_rebuild_give_back_the_bones_own_locks_and_limits():
    obj = make_armature(both_legs())
    shin = obj.pose.bones["shin.L"]
    shin.lock_ik_y = True
    shin.ik_stiffness_z = 0.3
    shin.use_ik_limit_x, shin.ik_min_x, shin.ik_max_x = True, -0.5, 0.25
    before = snapshot(obj)
    own = (shin.lock_ik_x, shin.lock_ik_y, shin.lock_ik_z, shin.use_ik_limit_x, shin.ik_min_x, shin.ik_max_x,
           shin.use_ik_limit_z)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(hinge_joints=True) == {"FINISHED"}
    assert (shin.lock_ik_x, shin.lock_ik_y, shin.lock_ik_z) != own[:3]
    assert bpy.ops.ik_rigger.build_ik(hinge_joints=False) == {"FINISHED"}  # rebuilt without: given back
    assert (shin.lock_ik_x, shin.lock_ik_y, shin.lock_ik_z, shin.use_ik_limit_x, shin.ik_min_x, shin.ik_max_x,
            shin.use_ik_limit_z) == own
    assert bpy.ops.ik_rigger.build_ik(hinge_joints=True) == {"FINISHED"}
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert (shin.lock_ik_x, shin.lock_ik_y, shin.lock_ik_z, shin.use_ik_limit_x, shin.ik_min_x, shin.ik_max_x,
            shin.use_ik_limit_z) == own
    assert shin.ik_stiffness_z == pytest.approx(0.3)
    assert same(snapshot(obj), before)


def test_a_hinge_off_the_bones_axes_is_refused_clearly():
    obj = make_armature(leg_bones(bend=0.05), rolls={"shin.L": math.radians(45)})
    before = snapshot(obj)
    set_active_bone(obj, "shin.L")
    with pytest.raises(RuntimeError, match="'shin.L': neither its X nor its Z axis lies along the joint's hinge.*"
                                           "Roll the bone"):
        bpy.ops.ik_rigger.build_ik(hinge_joints=True)
    assert same(snapshot(obj), before)
