"""Distance Limit: the hand keeps inside, on or outside a sphere around a control, under either IK solver,
and otherwise the limb reaches and bends to its pole as without the option."""

from __future__ import annotations

import itertools
import math

import bpy
import pytest
from helpers import (
    both_legs,
    chain_length,
    evaluate,
    import_bvh,
    make_armature,
    rest,
    rotation_degrees,
    same,
    snapshot,
    tail,
)
from mathutils import Quaternion, Vector
from test_build import assert_rest_kept, move_handle
from test_pipeline import assert_same_poses, play_elsewhere
from test_ui import draw

from ik_rigger import api, ui
from ik_rigger.core.errors import RigError

CHAIN = ["thigh.L", "shin.L"]
LIMITS = ["INSIDE", "ON_SURFACE", "OUTSIDE"]
SOLVERS = ["LEGACY", "ITASC"]
RADIUS = 0.25  # of the chain's length
# How far the chain's end may land from where it should: the IK solvers' own reach error on a
# reachable target, as a fraction of the chain's length (iTaSC at precision 1e-5).
REACH = 1e-3
# Handle positions around the sphere's centre: directions, and distances in chain lengths.
DIRECTIONS = [(0, -1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0), (-1, 0, 0), (0, -1, 1), (0, 1, 1), (1, 0, 1), (0, -1, -1),
              (1, 0, -1)]
AMOUNTS = (0.1, 0.2, 0.3, 0.6)
SHAPE_MARK = "_ik_rigger_shape"


def use_solver(obj: bpy.types.Object, solver: str) -> None:
    obj.pose.ik_solver = solver
    if solver == "ITASC":
        # iTaSC stops at its precision (0.001 by default, in armature units): tighter than the checks here.
        obj.pose.ik_param.precision = 1e-5
        obj.pose.ik_param.iterations = 500


def rig(limit: str, solver: str = "LEGACY", name: str = "Rig") -> tuple[bpy.types.Object, api.Limb]:
    obj = make_armature(both_legs(), name=name, mode="OBJECT")
    use_solver(obj, solver)
    return obj, api.build(obj, "shin.L", distance_limit=limit, distance_radius=RADIUS)[0]


def limit_of(obj: bpy.types.Object, limb: api.Limb) -> bpy.types.Constraint:
    """The Limit Distance on the IK target that aims at the sphere's centre."""
    found = [constraint for constraint in obj.pose.bones[limb.bones["TARGET"]].constraints
             if constraint.type == "LIMIT_DISTANCE" and constraint.subtarget == limb.bones["DISTANCE_CENTER"]]
    assert len(found) == 1
    return found[0]


def limited(limit: str, centre: Vector, target: Vector, radius: float) -> Vector:
    """Where the limit puts ``target``: itself when allowed, else its projection on the sphere."""
    offset = target - centre
    allowed = {"INSIDE": offset.length <= radius, "OUTSIDE": offset.length >= radius, "ON_SURFACE": False}[limit]
    return target.copy() if allowed else centre + offset.normalized() * radius


def end_of(posed: dict, obj: bpy.types.Object) -> Vector:
    return tail(posed["shin.L"], obj.data.bones["shin.L"].length)


def test_without_a_limit_nothing_is_made():
    obj, limb = rig("NONE")
    assert "distance" not in limb.parts and "DISTANCE_CENTER" not in limb.bones
    assert not [bone for bone in obj.data.bones if "distance" in bone.name]
    assert [constraint.type for constraint in obj.pose.bones[limb.bones["TARGET"]].constraints] == ["LIMIT_DISTANCE"]
    assert not [item for item in bpy.data.objects if item.get(SHAPE_MARK) == "DISTANCE_CENTER"]


@pytest.mark.parametrize("limit", LIMITS)
def test_the_centre_is_a_control_showing_the_sphere_where_the_rest_pose_keeps_the_limit(limit):
    obj, limb = rig(limit)
    bones = obj.data.bones
    length = chain_length(obj, CHAIN)
    centre = bones[limb.bones["DISTANCE_CENTER"]]
    assert "distance" in limb.parts
    assert centre.parent == bones[limb.bones["HANDLE"]].parent  # it hangs from what the handle hangs from
    assert not centre.use_deform and not centre.hide
    assert [collection.name for collection in centre.collections] == ["IK Controls"]
    # As long as the radius, with a unit wire sphere: the shape is the sphere.
    assert centre.length == pytest.approx(RADIUS * length, rel=1e-5)
    pose_centre = obj.pose.bones[centre.name]
    shape = pose_centre.custom_shape
    assert shape is not None and shape.get(SHAPE_MARK) == "DISTANCE_CENTER"
    assert all(abs(vertex.co.length - 1.0) < 1e-6 for vertex in shape.data.vertices)
    assert tuple(pose_centre.custom_shape_scale_xyz) == pytest.approx((1.0, 1.0, 1.0))
    end = bones["shin.L"].tail_local
    root = bones["thigh.L"].head_local
    expected = end if limit == "INSIDE" else end + (root - end).normalized() * RADIUS * length
    assert (centre.head_local - expected).length < 1e-5 * length
    constraint = limit_of(obj, limb)
    assert constraint.limit_mode == {"INSIDE": "LIMITDIST_INSIDE", "ON_SURFACE": "LIMITDIST_ONSURFACE",
                                     "OUTSIDE": "LIMITDIST_OUTSIDE"}[limit]
    assert constraint.distance == pytest.approx(RADIUS * length, rel=1e-5)
    # Its influence is the handle's IK/FK, read by a driver Blender runs without Python.
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    handle["ik_fk"] = 0.25
    obj.update_tag()
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    assert evaluated.pose.bones[limb.bones["TARGET"]].constraints[constraint.name].influence == pytest.approx(0.25)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("limit", LIMITS)
def test_the_hand_keeps_the_limit_and_otherwise_moves_as_without_it(limit, solver):
    obj, limb = rig(limit, solver)
    plain, plain_limb = rig("NONE", solver, name="Plain")
    bones = obj.data.bones
    length = chain_length(obj, CHAIN)
    radius = RADIUS * length
    centre = bones[limb.bones["DISTANCE_CENTER"]].head_local.copy()
    root = bones["thigh.L"].head_local
    end_rest = bones["shin.L"].tail_local.copy()
    # The rest pose keeps the limit already: a fresh rig rests as built.
    assert (end_of(evaluate(obj), obj) - end_rest).length < 1e-5 * length
    allowed = stopped = 0
    for amount in AMOUNTS:
        for direction in DIRECTIONS:
            target = centre + Vector(direction).normalized() * amount * length
            wanted = limited(limit, centre, target, radius)
            if not 0.3 * length < (wanted - root).length < 0.95 * length:
                continue  # beyond what the chain reaches, or folded on itself
            move_handle(obj, limb.bones["HANDLE"], target - end_rest)
            # Without the option, the handle put where the limit puts the target.
            move_handle(plain, plain_limb.bones["HANDLE"], wanted - end_rest)
            posed, free = evaluate(obj), evaluate(plain)
            end = end_of(posed, obj)
            assert (end - wanted).length < REACH * length, (target, end)
            distance = (end - centre).length
            assert {"INSIDE": distance < radius + REACH * length, "OUTSIDE": distance > radius - REACH * length,
                    "ON_SURFACE": abs(distance - radius) < REACH * length}[limit]
            # The chain, knee included, stands as without the option: it keeps its pole.
            for name in CHAIN:
                assert (posed[name].translation - free[name].translation).length < 1e-5 * length, name
                assert rotation_degrees(posed[name], free[name]) < 0.01, name
            if (wanted - target).length < 1e-9:
                allowed += 1
            else:
                stopped += 1
    # Both cases were met, or the loop proves little.
    assert stopped >= 5 and (allowed >= 5 or limit == "ON_SURFACE")


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_pole_still_turns_the_knee(solver):
    """With the limit on, the pole turns the knee under either solver (iTaSC's own Distance would make iTaSC
    drop the pole)."""
    obj, limb = rig("INSIDE", solver)
    bones = obj.data.bones
    length = chain_length(obj, CHAIN)
    end_rest = bones["shin.L"].tail_local
    move_handle(obj, limb.bones["HANDLE"], Vector((0.0, 0.0, 0.2 * length)))  # inside the sphere: the knee bends
    pole = obj.pose.bones[limb.bones["POLE"]]
    knee_rest = bones["shin.L"].head_local
    for side in (1.0, -1.0):
        placed = pole.matrix.copy()
        placed.translation = knee_rest + Vector((side * 0.5 * length, 0.0, 0.0))
        pole.matrix = placed
        posed = evaluate(obj)
        assert (end_of(posed, obj) - (end_rest + Vector((0.0, 0.0, 0.2 * length)))).length < REACH * length
        knee, hip = posed["shin.L"].translation, posed["thigh.L"].translation
        assert side * (knee - hip).x > 0.1 * length, side  # clearly out toward the pole


def test_rebuilt_without_the_limit_its_centre_constraint_and_driver_go_and_come_back():
    obj, limb = rig("OUTSIDE")
    centre, target = limb.bones["DISTANCE_CENTER"], limb.bones["TARGET"]
    path = limit_of(obj, limb).path_from_id("influence")
    assert obj.animation_data.drivers.find(path) is not None
    bones_before = len(obj.data.bones)
    rebuilt = api.build(obj, "shin.L", distance_limit="NONE")[0]
    assert centre not in obj.data.bones and len(obj.data.bones) == bones_before - 1
    assert "DISTANCE_CENTER" not in rebuilt.bones and "distance" not in rebuilt.parts
    assert [constraint.type for constraint in obj.pose.bones[target].constraints] == ["LIMIT_DISTANCE"]
    assert obj.animation_data.drivers.find(path) is None
    assert not [item for item in bpy.data.objects if item.get(SHAPE_MARK) == "DISTANCE_CENTER"]
    # On again: the limit holds.
    limb = api.build(obj, "shin.L", distance_limit="INSIDE", distance_radius=RADIUS)[0]
    length = chain_length(obj, CHAIN)
    centre_head = obj.data.bones[limb.bones["DISTANCE_CENTER"]].head_local
    move_handle(obj, limb.bones["HANDLE"], Vector((0.0, -0.5 * length, 0.3 * length)))
    assert abs((end_of(evaluate(obj), obj) - centre_head).length - RADIUS * length) < REACH * length


@pytest.mark.parametrize("limit", LIMITS)
def test_remove_leaves_the_armature_as_it_was_after_the_centre_was_renamed(limit):
    obj = make_armature(both_legs(), mode="OBJECT")
    before = snapshot(obj)
    centre = api.build(obj, "shin.L", distance_limit=limit)[0].bones["DISTANCE_CENTER"]
    obj.data.bones[centre].name = "my sphere"
    assert api.limbs(obj)[0].bones["DISTANCE_CENTER"] == "my sphere"
    count = len(obj.data.bones)
    api.build(obj, "shin.L", distance_limit=limit)  # rebuilt in place, the renamed centre kept
    assert len(obj.data.bones) == count and "my sphere" in obj.data.bones
    api.remove(obj, "shin.L")
    assert same(before, snapshot(obj))
    assert not [item for item in bpy.data.objects if item.get(SHAPE_MARK)]


def test_bad_values_are_refused_naming_the_option_and_nothing_changes():
    obj = make_armature(both_legs(), mode="OBJECT")
    before = snapshot(obj)
    with pytest.raises(RigError, match="distance_limit") as refused:
        api.build(obj, "shin.L", distance_limit="AROUND")
    assert "INSIDE" in str(refused.value)
    with pytest.raises(RigError, match="distance_radius"):
        api.build(obj, "shin.L", distance_limit="INSIDE", distance_radius=0.0)
    assert same(before, snapshot(obj))


def test_snapping_ik_to_fk_lands_exactly_where_the_limit_allows():
    obj, limb = rig("INSIDE")
    length = chain_length(obj, CHAIN)
    api.snap_limb(obj, "shin.L", to="FK")
    thigh = obj.pose.bones["thigh.L"]
    thigh.rotation_mode = "QUATERNION"
    thigh.rotation_quaternion = Quaternion(Vector((1.0, 0.0, 0.0)), math.radians(10.0))  # the foot forward
    fk_end = end_of(evaluate(obj), obj)
    centre = obj.data.bones[limb.bones["DISTANCE_CENTER"]].head_local
    assert 0.05 * length < (fk_end - centre).length < RADIUS * length  # moved, and inside the sphere
    api.snap_limb(obj, "shin.L", to="IK")
    thigh.rotation_quaternion = Quaternion()  # the FK pose elsewhere: only the IK holds the foot now
    assert (end_of(evaluate(obj), obj) - fk_end).length < REACH * length


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_limit_plays_where_ik_rigger_is_not_installed(tmp_path, solver):
    obj, limb = rig("INSIDE", solver, name="Hero")
    length = chain_length(obj, CHAIN)
    handle = limb.bones["HANDLE"]
    move_handle(obj, handle, Vector((0.0, -0.6, 0.3)) * length)  # far out of the sphere
    expected = evaluate(obj)
    centre = obj.data.bones[limb.bones["DISTANCE_CENTER"]].head_local
    # The limit really acts, or the comparison proves nothing.
    end = end_of(expected, obj)
    assert abs((end - centre).length - RADIUS * length) < REACH * length
    assert (expected[handle].translation - end).length > 0.3 * length
    path = tmp_path / "hero.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    played = play_elsewhere(path, [1], tmp_path)
    assert played["invalid_drivers"] == []
    assert_same_poses(expected, played["frames"]["1"]["Hero"], length)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_real_arm_keeps_the_limit(solver):
    obj = import_bvh("mixamo_freebvh.bvh")
    use_solver(obj, solver)
    before = rest(obj)
    limb = api.build(obj, "mixamorig:LeftForeArm", distance_limit="INSIDE", distance_radius=0.3)[0]
    assert limb.chain == ("mixamorig:LeftArm", "mixamorig:LeftForeArm")
    assert_rest_kept(obj, before)
    bones = obj.data.bones
    chain = list(limb.chain)
    length = chain_length(obj, chain)
    radius = 0.3 * length
    centre = bones[limb.bones["DISTANCE_CENTER"]].head_local.copy()
    root = bones[chain[0]].head_local
    end_rest = bones[chain[-1]].tail_local.copy()
    assert (centre - end_rest).length < 1e-5 * length
    checked = stopped = 0
    for amount in (0.15, 0.6):
        for direction in itertools.product((-1, 0, 1), repeat=3):
            if not any(direction):
                continue
            target = centre + Vector(direction).normalized() * amount * length
            wanted = limited("INSIDE", centre, target, radius)
            if not 0.3 * length < (wanted - root).length < 0.95 * length:
                continue
            move_handle(obj, limb.bones["HANDLE"], target - end_rest)
            end = tail(evaluate(obj)[chain[-1]], bones[chain[-1]].length)
            assert (end - wanted).length < REACH * length, (target, end)
            checked += 1
            stopped += (wanted - target).length > 1e-9
    assert checked >= 10 and stopped >= 5  # reached inside the sphere, and stopped on it


def test_the_limbs_panel_shows_the_limit_and_changes_nothing():
    obj, _ = rig("ON_SURFACE")
    before = snapshot(obj)
    log = draw(ui.IKRIG_PT_limbs, obj)
    assert ("prop", "LimitDistanceConstraint", "limit_mode") in log
    assert ("prop", "LimitDistanceConstraint", "distance") in log
    assert same(snapshot(obj), before)
    plain, _ = rig("NONE", name="Plain")
    assert ("prop", "LimitDistanceConstraint", "limit_mode") not in draw(ui.IKRIG_PT_limbs, plain)


def itasc_distance(obj: bpy.types.Object, limb: api.Limb) -> bpy.types.Constraint:
    found = [constraint for constraint in obj.pose.bones["shin.L"].constraints
             if constraint.type == "IK" and constraint.ik_type == "DISTANCE"]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("limit", LIMITS)
def test_the_itasc_method_is_blenders_own_distance_constraint_after_the_limbs_ik(limit):
    obj = make_armature(both_legs(), mode="OBJECT")
    limb = api.build(obj, "shin.L", distance_limit=limit, distance_radius=RADIUS, distance_method="ITASC")[0]
    constraints = obj.pose.bones["shin.L"].constraints
    distance = itasc_distance(obj, limb)
    assert [constraint.ik_type for constraint in constraints if constraint.type == "IK"] == ["COPY_POSE", "DISTANCE"]
    assert distance.subtarget == limb.bones["DISTANCE_CENTER"] and distance.chain_count == 2
    assert distance.limit_mode == {"INSIDE": "LIMITDIST_INSIDE", "ON_SURFACE": "LIMITDIST_ONSURFACE",
                                   "OUTSIDE": "LIMITDIST_OUTSIDE"}[limit]
    assert distance.distance == pytest.approx(RADIUS * chain_length(obj, CHAIN), rel=1e-6)
    assert not [constraint for constraint in obj.pose.bones[limb.bones["TARGET"]].constraints
                if constraint.name.startswith("IK Rigger Distance")]
    # The limb's IK is still the one snapping, the panel and baking work with.
    parts = api.records.resolve(obj, obj.ik_rigger.limbs[0])
    assert api.records.ik_constraint(obj, parts).ik_type == "COPY_POSE"


def test_under_standard_the_itasc_distance_does_nothing_and_under_itasc_it_pulls_toward_the_limit():
    plain = make_armature(both_legs(), name="Plain", mode="OBJECT")
    api.build(plain, "shin.L")
    obj = make_armature(both_legs(), name="Limited", mode="OBJECT")
    limb = api.build(obj, "shin.L", distance_limit="INSIDE", distance_radius=RADIUS, distance_method="ITASC")[0]
    length = chain_length(obj, CHAIN)
    offset = Vector((0.0, -0.35, 0.3)) * length
    for rig_object in (plain, obj):
        move_handle(rig_object, "foot_IK.L", offset)
    # Standard: the Distance's influence is 0 (its driver reads the solver), the limb plays as without it.
    expected, posed = evaluate(plain), evaluate(obj)
    for name in (*CHAIN, "foot.L"):
        assert (expected[name].translation - posed[name].translation).length < 1e-5 * length, name
        assert rotation_degrees(expected[name], posed[name]) < 0.01, name
    assert itasc_distance(obj, limb).influence == pytest.approx(0.0)
    # iTaSC: the solver weighs the limit against the handle, so the hand ends nearer the sphere than without it.
    for rig_object in (plain, obj):
        use_solver(rig_object, "ITASC")
    centre = obj.data.bones[limb.bones["DISTANCE_CENTER"]].head_local
    free = (end_of(evaluate(plain), plain) - centre).length
    held = (end_of(evaluate(obj), obj) - centre).length
    assert itasc_distance(obj, limb).influence == pytest.approx(1.0)
    assert free > RADIUS * length and held < free - 0.05 * length


def test_the_itasc_method_plays_where_ik_rigger_is_not_installed(tmp_path):
    obj = make_armature(both_legs(), name="Hero", mode="OBJECT")
    use_solver(obj, "ITASC")
    limb = api.build(obj, "shin.L", distance_limit="INSIDE", distance_radius=RADIUS, distance_method="ITASC")[0]
    length = chain_length(obj, CHAIN)
    move_handle(obj, limb.bones["HANDLE"], Vector((0.0, -0.35, 0.3)) * length)
    expected = evaluate(obj)
    path = tmp_path / "hero.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    played = play_elsewhere(path, [1], tmp_path)
    assert played["invalid_drivers"] == []
    assert_same_poses(expected, played["frames"]["1"]["Hero"], length)
