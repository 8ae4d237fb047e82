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
    import_bvh,
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
from test_imported import make_character, split_limbs

from ik_rigger import api
from ik_rigger.core.joints import NATURAL_BEND_DEGREES
from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig import records
from ik_rigger.rig.build import build_limbs


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


@pytest.mark.parametrize("family", ["daz", "makehuman"])
def test_hinged_knees_and_elbows_of_segments_split_in_two(family):
    """The knee and elbow are hinged, each relative to the bone above it; the second halves are kept in line."""
    obj = make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05, family=family).obj
    bpy.ops.object.mode_set(mode="POSE")
    limbs = split_limbs(family)
    build_limbs(obj, [(limb.last, LimbOptions(chain_length=limb.length, hinge_joints=True)) for limb in limbs])
    for limb in limbs:
        record = obj.ik_rigger.limb_of(limb.last)
        chain = list(records.inventory(record).chain)
        halves = [name for name in chain[1:] if "02" in name or "Twist" in name]
        middle = next(name for name in chain[1:] if name not in halves)
        for name in halves:
            pose_bone = obj.pose.bones[name]
            assert not any(getattr(pose_bone, f"lock_ik_{axis}") for axis in "xyz"), name
            assert (pose_bone.ik_stiffness_x, pose_bone.ik_stiffness_z) == pytest.approx((0.99, 0.99)), name
            assert not any(getattr(pose_bone, f"use_ik_limit_{axis}") for axis in "xyz"), name
        hinged = obj.pose.bones[middle]
        axis = "x" if hinged.use_ik_limit_x else "z"
        low, high = getattr(hinged, f"ik_min_{axis}"), getattr(hinged, f"ik_max_{axis}")
        # Straight from the bone above (its second half) to 150 degrees, whichever way is forward.
        assert math.isclose(high - low, math.radians(NATURAL_BEND_DEGREES), abs_tol=1e-4)
        length = chain_length(obj, chain)
        move_handle(obj, record.handle, (obj.data.bones[chain[0]].head_local - obj.data.bones[chain[-1]].tail_local)
                    * 0.4)
        posed = evaluate(obj)
        turn = local_rotation(obj, posed, middle).to_quaternion()
        assert math.degrees(turn.angle) > 20.0, middle  # the knee or elbow bends
        angle = turn.angle if turn.axis.dot(Vector((1, 0, 0) if axis == "x" else (0, 0, 1))) >= 0 else -turn.angle
        assert low - math.radians(0.01) <= angle <= high + math.radians(0.01), middle
        end = tail(posed[chain[-1]], obj.data.bones[chain[-1]].length)
        target = posed[record.handle].translation
        assert (end - target).length < 1e-3 * length, limb.last
        obj.pose.bones[record.handle].matrix_basis = Matrix.Identity(4)


def test_a_nearly_straight_knee_hinged_without_a_pole_is_warned_of():
    """Mixamo's knee is bent 2 degrees at rest: hinged with no pole, Blender's solver leaves it straight for a
    handle moved out of the leg's line. The build says so, as a warning naming the knee; with a pole, or on a
    knee bent clearly at rest, it says nothing."""
    obj = import_bvh("mixamo_freebvh.bvh")
    built = api.build(obj, "mixamorig:LeftLeg", use_pole=False, hinge_joints=True)
    warned = [note for note in built[0].notes if api.is_warning(note)]
    assert len(warned) == 1 and warned[0].startswith("mixamorig:LeftLeg is bent only 2.2 degrees at rest and hinged "
                                                     "with no pole"), warned
    built = api.build(obj, "mixamorig:LeftLeg", use_pole=True, hinge_joints=True)
    assert not [note for note in built[0].notes if "hinged with no pole" in note]
    bent = make_armature(leg_bones(bend=0.15), name="Bent")
    built = api.build(bent, "shin.L", use_pole=False, hinge_joints=True)
    assert not [note for note in built[0].notes if "hinged with no pole" in note]
