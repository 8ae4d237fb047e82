"""Feet on the ground: feet planted flat on slopes and terrain, hips lowered only as needed, walks baked."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import (
    DATA,
    both_legs,
    chain_length,
    evaluate,
    import_bvh,
    make_armature,
    rotation_degrees,
    same,
    snapshot,
)
from mathutils import Matrix, Vector
from test_ui import draw

from ik_rigger import api, ui
from ik_rigger.core import ground as core_ground
from ik_rigger.core.errors import RigError

UP = Vector((0.0, 0.0, 1.0))
SLOPE = math.radians(20.0)
SIDES = ("L", "R")


# Characters and grounds ---------------------------------------------------------------


def biped(bones=None, rotate_y_up: bool = False, scale: float = 1.0) -> bpy.types.Object:
    """Two legs (thigh, shin, foot, toe) under hips under a root, both rigged."""
    specs = bones if bones is not None else both_legs()
    if rotate_y_up:
        # Stored Y-up (as a Y-up file imports), stood up by the object's 90 degrees about X.
        specs = [(name, (h[0], h[2], -h[1]), (t[0], t[2], -t[1]), parent, connected)
                 for name, h, t, parent, connected in specs]
    obj = make_armature(specs, mode="POSE")
    if rotate_y_up:
        obj.rotation_euler = (math.pi / 2.0, 0.0, 0.0)
    obj.scale = (scale, scale, scale)
    api.build(obj, "shin.L", both_sides=True)
    return obj


def skin(obj: bpy.types.Object, sole: float = -0.02) -> bpy.types.Object:
    """A mesh deformed by ``obj``: a shoe box per foot whose sole is ``sole`` below the toe bones,
    heel behind the ankle, and a shin box (not part of the sole)."""
    vertices: list[tuple[float, float, float]] = []
    faces: list[tuple[int, ...]] = []
    groups: dict[str, list[int]] = {}

    def box(low, high, group_of) -> None:
        start = len(vertices)
        for x in (low[0], high[0]):
            for y in (low[1], high[1]):
                for z in (low[2], high[2]):
                    groups.setdefault(group_of(y), []).append(len(vertices))
                    vertices.append((x, y, z))
        faces.extend(tuple(start + index for index in face) for face in (
            (0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)))

    for side, x in (("L", 0.2), ("R", -0.2)):
        # Heel to ball on the foot, ball to tip on the toe.
        box((x - 0.05, 0.06, sole), (x + 0.05, -0.2, 0.12), lambda _y, s=side: f"foot.{s}")
        box((x - 0.05, -0.2, sole), (x + 0.05, -0.32, 0.05), lambda _y, s=side: f"toe.{s}")
        box((x - 0.06, 0.06, 0.2), (x + 0.06, -0.06, 0.5), lambda _y, s=side: f"shin.{s}")
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata(vertices, [], faces)
    body = bpy.data.objects.new("Body", mesh)
    bpy.context.scene.collection.objects.link(body)
    for name, indexes in groups.items():
        body.vertex_groups.new(name=name).add(indexes, 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = obj
    return body


def plane(name: str = "Ground", size: float = 20.0, rotation=(0.0, 0.0, 0.0), location=(0.0, 0.0, 0.0)):
    half = size / 2.0
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([(-half, -half, 0.0), (half, -half, 0.0), (half, half, 0.0), (-half, half, 0.0)], [],
                     [(0, 1, 2, 3)])
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.rotation_euler = rotation
    obj.location = location
    return obj


def terrain() -> bpy.types.Object:
    """A flat grid made bumpy only by its Displace modifier (heights 0 to 0.2)."""
    ground = plane("Terrain", 6.0)
    subdivide = ground.modifiers.new("Grid", "SUBSURF")
    subdivide.subdivision_type = "SIMPLE"
    subdivide.levels = 6
    texture = bpy.data.textures.new("Bumps", "CLOUDS")
    texture.noise_scale = 1.5
    displace = ground.modifiers.new("Bumps", "DISPLACE")
    displace.texture = texture
    displace.mid_level = 0.0
    displace.strength = 0.2
    return ground


# Measures --------------------------------------------------------------------------------


def below(ground: bpy.types.Object, point: Vector) -> tuple[Vector, Vector]:
    """The evaluated ground straight below ``point`` and its normal (world), from far above."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = ground.evaluated_get(depsgraph)
    inverse = evaluated.matrix_world.inverted()
    origin = inverse @ (point + UP * 1000.0)
    hit, location, normal, _ = evaluated.ray_cast(origin, inverse.to_3x3() @ -UP)
    assert hit, point
    world_normal = (inverse.transposed().to_3x3() @ normal).normalized()
    return evaluated.matrix_world @ location, world_normal if world_normal.z > 0 else -world_normal


def bone_sole(obj: bpy.types.Object, foot: str) -> list[Vector]:
    """World heads and tails of the foot and the bones below it (the user's, not IK Rigger's)."""
    world = obj.matrix_world
    pose = evaluate(obj)
    names = [foot] + [bone.name for bone in obj.data.bones[foot].children_recursive if "_IK" not in bone.name]
    points = []
    for name in names:
        points.append(world @ pose[name].translation)
        points.append(world @ pose[name] @ Vector((0.0, obj.data.bones[name].length, 0.0)))
    return points


def mesh_sole(body: bpy.types.Object, side: str) -> list[Vector]:
    """World positions of the deformed vertices of the foot's and toe's groups."""
    bpy.context.view_layer.update()
    wanted = {body.vertex_groups[f"foot.{side}"].index, body.vertex_groups[f"toe.{side}"].index}
    indexes = [vertex.index for vertex in body.data.vertices if any(g.group in wanted for g in vertex.groups)]
    evaluated = body.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    points = [evaluated.matrix_world @ mesh.vertices[index].co for index in indexes]
    evaluated.to_mesh_clear()
    return points


def heights(ground: bpy.types.Object, points: list[Vector]) -> list[float]:
    return [(point - below(ground, point)[0]).dot(UP) for point in points]


def sole_normal(obj: bpy.types.Object, foot: str) -> Vector:
    """The foot's sole normal now (world): the up it had at rest, turned as the foot is. A normal goes
    between spaces by the inverse transpose, which an object scaled unevenly tells from a direction."""
    axes = obj.matrix_world.to_3x3()
    up_armature = (axes.transposed() @ UP).normalized()
    rest = obj.data.bones[foot].matrix_local.to_3x3().normalized()
    local = rest.inverted() @ up_armature
    pose = evaluate(obj)[foot].to_3x3().normalized()
    return (axes.inverted().transposed() @ pose @ local).normalized()


def slope(obj: bpy.types.Object, ground: bpy.types.Object, foot: str) -> Vector:
    """The ground's slope across the foot: the plane through the ground ahead of, behind and
    beside the centre of the foot's and toes' ends, as far out as they reach."""
    points = bone_sole(obj, foot)
    centre = sum(points, Vector()) / len(points)
    ahead = (obj.matrix_world @ evaluate(obj)[foot]).to_3x3() @ Vector((0.0, 1.0, 0.0))
    ahead = Vector((ahead.x, ahead.y, 0.0)).normalized()
    side = UP.cross(ahead)
    radius = max(Vector(((point - centre).x, (point - centre).y)).length for point in points)
    front, back, left, right = (below(ground, centre + way * radius)[0] for way in (ahead, -ahead, side, -side))
    normal = (front - back).cross(left - right).normalized()
    return normal if normal.z > 0.0 else -normal


def leg_stretch(obj: bpy.types.Object, thigh: str, shin: str) -> float:
    """Hip-to-ankle distance as a fraction of the leg's length."""
    pose = evaluate(obj)
    end = pose[shin] @ Vector((0.0, obj.data.bones[shin].length, 0.0))
    return (end - pose[thigh].translation).length / chain_length(obj, (thigh, shin))


def assert_planted(obj, ground, foot: str, thigh: str, shin: str, points: list[Vector] | None = None) -> None:
    """The sole touches the ground (its lowest point on it, none under it), flat, the knee bent."""
    length = chain_length(obj, (thigh, shin)) * obj.matrix_world.to_scale().x
    sole = points if points is not None else bone_sole(obj, foot)
    above = heights(ground, sole)
    assert abs(min(above)) < 1e-3 * length, (foot, min(above) / length)
    normal = slope(obj, ground, foot)
    tilt = math.degrees(sole_normal(obj, foot).angle(normal))
    assert tilt < 1.0, (foot, tilt)
    assert leg_stretch(obj, thigh, shin) < core_ground.REACH + 1e-4, foot


# One frame ---------------------------------------------------------------------------------


def test_feet_stand_flat_on_a_slope_and_the_hips_go_down_only_as_the_low_leg_needs():
    obj = biped()
    # 20 degrees down toward +X: the left foot's ground is 7 cm lower than the right's.
    ground = plane(rotation=(0.0, SLOPE, 0.0))
    rest_hips = evaluate(obj)["hips"].copy()
    result = api.plant_feet(obj, ground)
    assert result.feet == ["shin.L", "shin.R"] and result.hips == "hips"
    for side in SIDES:
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")
    # Only as much as needed: the lower leg at exactly its reach, the other bent more.
    assert abs(leg_stretch(obj, "thigh.L", "shin.L") - core_ground.REACH) < 1e-3
    assert leg_stretch(obj, "thigh.R", "shin.R") < core_ground.REACH - 0.05
    hips = evaluate(obj)["hips"]
    moved = hips.translation - rest_hips.translation
    assert moved.z < 0.0 and Vector((moved.x, moved.y)).length < 1e-6
    assert abs(-moved.z - result.drop) < 1e-6
    assert rotation_degrees(hips, rest_hips) < 1e-3


def test_feet_climbing_a_slope_leave_the_hips_where_they_are():
    obj = biped()
    # Rising toward the toes (-Y): the feet go up, so no leg needs the hips lower.
    ground = plane(rotation=(-SLOPE, 0.0, 0.0), location=(0.0, 0.0, 0.01))
    rest_hips = evaluate(obj)["hips"].copy()
    result = api.plant_feet(obj, ground)
    assert result.hips is None and result.drop == 0.0
    for side in SIDES:
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")
    assert (evaluate(obj)["hips"].translation - rest_hips.translation).length < 1e-9


def test_the_skinned_mesh_sole_is_what_touches_the_ground():
    obj = biped()
    body = skin(obj, sole=-0.02)
    ground = plane(rotation=(0.0, SLOPE, 0.0), location=(0.0, 0.0, 0.3))
    api.plant_feet(obj, ground)
    for side in SIDES:
        length = chain_length(obj, (f"thigh.{side}", f"shin.{side}"))
        sole = mesh_sole(body, side)
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}", sole)
        # The bones stand the mesh's 2 cm sole above the ground, not on it.
        bones_above = min(heights(ground, bone_sole(obj, f"foot.{side}")))
        assert abs(bones_above - 0.02 / math.cos(SLOPE)) < 0.01 * length, bones_above


def test_feet_on_a_bumpy_terrain_follow_its_modifiers():
    obj = biped()
    ground = terrain()
    api.plant_feet(obj, ground)
    for side in SIDES:
        foot = f"foot.{side}"
        assert_planted(obj, ground, foot, f"thigh.{side}", f"shin.{side}")
        lowest = min(point.z for point in bone_sole(obj, foot))
        # The mesh itself is flat at 0: standing well above it means the Displace was seen.
        assert lowest > 0.02, lowest


def test_a_ground_too_low_lowers_the_hips_until_the_longer_reach_fits():
    obj = biped()
    ground = plane(location=(0.0, 0.0, -0.25))
    hips_before = evaluate(obj)["hips"].translation.copy()
    result = api.plant_feet(obj, ground)
    length = chain_length(obj, ("thigh.L", "shin.L"))
    for side in SIDES:
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")
        assert abs(leg_stretch(obj, f"thigh.{side}", f"shin.{side}") - core_ground.REACH) < 1e-3
    dropped = hips_before.z - evaluate(obj)["hips"].translation.z
    # The ankles go down 0.25; the legs were at 0.9 of a 0.9055 reach: the rest is the drop.
    # The ankle is straight below the hip.
    expected = 0.25 - (core_ground.REACH * length - 0.9)
    assert abs(dropped - expected) < 1e-3 * length, (dropped, expected)
    assert abs(result.drop - dropped) < 1e-6


def test_a_y_up_armature_scaled_as_imported_stands_on_a_z_up_slope():
    obj = biped(rotate_y_up=True, scale=0.5)
    ground = plane(rotation=(0.0, SLOPE, 0.0))
    result = api.plant_feet(obj, ground)
    for side in SIDES:
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")
    assert abs(leg_stretch(obj, "thigh.L", "shin.L") - core_ground.REACH) < 1e-3
    hips = obj.matrix_world @ evaluate(obj)["hips"].translation
    # Lowered along the world's up (the armature's +Y), by the drop reported in world units.
    assert abs(hips.x) < 1e-6 and abs(hips.y) < 1e-6
    assert abs((0.5 - hips.z) - result.drop) < 1e-6 and result.drop > 0.01


def test_a_scene_whose_up_is_y_plants_along_y():
    # Both the character and its floor stand along +Y in the world (no object rotation).
    specs = [(name, (h[0], h[2], -h[1]), (t[0], t[2], -t[1]), parent, connected)
             for name, h, t, parent, connected in both_legs()]
    obj = make_armature(specs, mode="POSE")
    api.build(obj, "shin.L", both_sides=True)
    ground = plane(rotation=(math.pi / 2.0, 0.0, 0.0), location=(0.0, -0.1, 0.0))
    rest_pose = evaluate(obj)
    result = api.plant_feet(obj, ground)
    pose = evaluate(obj)
    length = chain_length(obj, ("thigh.L", "shin.L"))
    for side in SIDES:
        foot = f"foot.{side}"
        lowest = min(point.y for point in bone_sole(obj, foot))
        assert abs(lowest + 0.1) < 1e-3 * length, lowest
        assert rotation_degrees(pose[foot], rest_pose[foot]) < 1.0
    moved = pose["hips"].translation - rest_pose["hips"].translation
    assert moved.y < 0.0 and abs(moved.x) < 1e-6 and abs(moved.z) < 1e-6
    assert abs(-moved.y - result.drop) < 1e-6


def test_the_pure_maths_of_reach_and_up():
    up = Vector((0.0, 0.0, 1.0))
    # Straight below: the root goes down by exactly the excess.
    assert abs(core_ground.hips_drop(Vector((0, 0, 1)), Vector((0, 0, -0.5)), 1.0, up) - 0.5) < 1e-9
    assert core_ground.hips_drop(Vector((0, 0, 1)), Vector((0, 0, 0.5)), 1.0, up) == 0.0
    # Farther sideways than the reach: no drop helps.
    assert core_ground.hips_drop(Vector((0, 0, 1)), Vector((2, 0, 0)), 1.0, up) is None
    # A closed mesh says nothing: +Z; a wall-like floor facing -Y with the character on its +Y side: +Y.
    assert core_ground.up_axis(Vector((0, 0, 0)), Vector((0, 1, 0))) == up
    assert core_ground.up_axis(Vector((0, -3, 0.1)), Vector((0, 2, 0))) == Vector((0, 1, 0))
    assert core_ground.up_axis(Vector((0.2, 0.1, -2)), Vector((0, 0, -1))) == up


def test_legs_named_nothing_but_hanging_down_are_planted():
    names = {"thigh": "upper", "shin": "lower", "foot": "end", "toe": "tip"}

    def rename(name: str) -> str:
        base, _, side = name.partition(".")
        return f"{names.get(base, base)}.{side}" if side else name

    specs = [(rename(n), h, t, rename(p) if p else None, c) for n, h, t, p, c in both_legs()]
    obj = make_armature(specs, mode="POSE")
    api.build(obj, "lower.L", both_sides=True)
    ground = plane(location=(0.0, 0.0, 0.05))
    result = api.plant_feet(obj, ground)
    assert sorted(result.feet) == ["lower.L", "lower.R"]
    for side in SIDES:
        assert_planted(obj, ground, f"end.{side}", f"upper.{side}", f"lower.{side}")


def test_a_leg_without_a_foot_puts_its_chain_end_on_the_ground():
    obj = make_armature(both_legs(), mode="POSE")
    api.build(obj, "shin.L", both_sides=True, extremity_mode="NONE")
    ground = terrain()
    result = api.plant_feet(obj, ground)
    assert sorted(result.feet) == ["shin.L", "shin.R"]
    pose = evaluate(obj)
    for side in SIDES:
        end = pose[f"shin.{side}"] @ Vector((0.0, obj.data.bones[f"shin.{side}"].length, 0.0))
        length = chain_length(obj, (f"thigh.{side}", f"shin.{side}"))
        assert abs(heights(ground, [end])[0]) < 1e-3 * length
        assert leg_stretch(obj, f"thigh.{side}", f"shin.{side}") < core_ground.REACH + 1e-4


def test_bones_shaped_as_gltf_leaves_them_plant_their_joints_and_lower_the_hips():
    # glTF's default bone shapes: each tail along its joint's axis, as long as the importer guessed (2.5 here, the
    # leg 0.9 tall), none at its next joint; the toe's a leaf far longer than the leg. No mesh gives the sole.
    away = Vector((0.0, -0.6, -0.8)) * 2.5
    specs = [(name, head, tuple(Vector(head) + away) if name.startswith(("thigh", "shin", "foot", "toe")) else tail,
              parent, False) for name, head, tail, parent, _ in both_legs()]
    obj = make_armature(specs, mode="POSE")
    api.build(obj, "shin.L", both_sides=True)
    joints = {side: [f"thigh.{side}", f"shin.{side}", f"foot.{side}", f"toe.{side}"] for side in SIDES}
    pose = evaluate(obj)
    # The leg joint to joint: hip to knee to ankle.
    length = sum((pose[b].translation - pose[a].translation).length for a, b in zip(joints["L"], joints["L"][1:3]))
    ground = plane(location=(0.0, 0.0, min(pose[name].translation.z for name in joints["L"]) - 0.05))
    result = api.plant_feet(obj, ground)
    assert result.feet == ["shin.L", "shin.R"] and result.hips == "hips", result
    assert len(result.notes) == 2 and all("foot" in note and "toe" in note for note in result.notes), result.notes
    pose = evaluate(obj)
    for side in SIDES:
        hip, knee, ankle, toe = (pose[name].translation for name in joints[side])
        assert abs(min(ankle.z, toe.z) - ground.location.z) < 1e-3 * length, (side, ankle.z, toe.z)
        # The hips went down only as far as the leg reaches, joint to joint.
        assert (ankle - hip).length < core_ground.REACH * length + 1e-4 * length, side
        assert (ankle - hip).length > core_ground.REACH * length - 1e-3 * length, side


def test_a_foot_posed_off_the_legs_end_lands_on_the_ground_as_it_turns_flat():
    # A game rig's foot under the root, pinned to its clone under the handle; the clone posed off the leg's end (as
    # a clip baked into the controls poses a cow's hoof there). Turned flat on a slope, the foot swings that offset
    # about the leg's end, and the handle must go where the offset, turned, brings the foot onto the ground.
    specs = [(name, head, tail, "root", False) if name.startswith("foot") else (name, head, tail, parent, connected)
             for name, head, tail, parent, connected in both_legs()]
    obj = make_armature(specs, mode="POSE")
    built = api.build(obj, "shin.L", both_sides=True)
    for limb in built:
        obj.pose.bones[limb.bones["CLONE"]].location = (0.0, 0.0, -0.15)
    ground = plane(rotation=(0.0, SLOPE, 0.0), location=(0.0, 0.0, 0.05))
    api.plant_feet(obj, ground)
    for side in SIDES:
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")


def test_the_real_mixamo_skeleton_stands_on_a_slope():
    obj = import_bvh("mixamo_freebvh.bvh")
    legs = api.auto_rig(obj)
    ground = plane(size=2000.0, rotation=(0.0, SLOPE, 0.0), location=(0.0, 0.0, 5.0))
    result = api.plant_feet(obj, ground)
    planted = [limb for limb in legs if limb.name in result.feet]
    assert sorted(limb.name for limb in planted) == ["mixamorig:LeftLeg", "mixamorig:RightLeg"]
    for limb in planted:
        assert_planted(obj, ground, limb.extremity, *limb.chain)


# Over a frame range ---------------------------------------------------------------------------

# The walk: each foot is down (sole at 0) or swinging 30 cm forward, lifted up to 12 cm.
_DOWN = {"L": (range(1, 9), range(17, 25)), "R": (range(9, 25),)}


def _ankle(side: str, frame: int) -> Vector:
    x = 0.2 if side == "L" else -0.2
    if side == "L":
        if frame <= 8:
            # A little skating, as motion capture has: planting must hold the foot still.
            return Vector((x, 0.15 - 0.002 * (frame - 1), 0.1))
        if frame >= 17:
            return Vector((x, -0.15, 0.1))
        phase = (frame - 8) / 9.0
        return Vector((x, 0.136 - 0.286 * phase, 0.1 + 0.12 * math.sin(math.pi * phase)))
    if frame >= 9:
        return Vector((x, -0.15, 0.1))
    phase = frame / 9.0
    return Vector((x, 0.15 - 0.3 * phase, 0.1 + 0.12 * math.sin(math.pi * phase)))


def walking_biped() -> bpy.types.Object:
    obj = biped()
    for frame in range(1, 25):
        for side in SIDES:
            handle = obj.pose.bones[f"foot_IK.{side}"]
            handle.matrix = Matrix.Translation(_ankle(side, frame)) @ obj.data.bones[handle.name].matrix_local.to_3x3(
            ).to_4x4()
            handle.keyframe_insert("location", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 24
    return obj


def assert_walk_planted(obj: bpy.types.Object, ground: bpy.types.Object, stretch: bool = True) -> None:
    """The walk planted on ``ground`` over frames 1 to 24: each foot down (``_DOWN``) lies flat on it and stays
    where it is in the world while it is down; up, no sole goes under it (nor, with ``stretch``, does a leg
    stretch past its reach). Lengths are the world's (the armature object's largest scale)."""
    scene = bpy.context.scene
    for side in SIDES:
        foot, thigh, shin = f"foot.{side}", f"thigh.{side}", f"shin.{side}"
        length = chain_length(obj, (thigh, shin)) * max(map(abs, obj.matrix_world.to_scale()))
        for run in _DOWN[side]:
            held = None
            for frame in run:
                scene.frame_set(frame)
                assert_planted(obj, ground, foot, thigh, shin)
                now = obj.matrix_world @ evaluate(obj)[foot]
                if held is None:
                    held = now
                    continue
                assert (now.translation - held.translation).length < 1e-4 * length, (side, frame)
                assert rotation_degrees(now, held) < 0.05, (side, frame)
        for frame in set(range(1, 25)) - {f for run in _DOWN[side] for f in run}:
            scene.frame_set(frame)
            assert min(heights(ground, bone_sole(obj, foot))) > -1e-3 * length, (side, frame)
            assert not stretch or leg_stretch(obj, thigh, shin) < core_ground.REACH + 1e-4


def test_a_walk_baked_over_a_slope_keeps_each_planted_foot_still():
    obj = walking_biped()
    ground = plane(rotation=(0.0, SLOPE, 0.0))
    scene = bpy.context.scene
    scene.frame_set(5)
    result = api.plant_feet(obj, ground, range(1, 25))
    assert result.frames == 24 and result.hips == "hips"
    assert scene.frame_current == 5
    assert_walk_planted(obj, ground)
    # The hips go down on a frame just enough for the leg that needs it most, else not at all.
    lowered = 0
    for frame in range(1, 25):
        scene.frame_set(frame)
        most = max(leg_stretch(obj, f"thigh.{side}", f"shin.{side}") for side in SIDES)
        if evaluate(obj)["hips"].translation.z < 1.0 - 1e-6:
            lowered += 1
            assert abs(most - core_ground.REACH) < 1e-3, (frame, most)
        else:
            assert most < core_ground.REACH + 1e-4, (frame, most)
    assert lowered >= 8


def test_motion_capture_baked_on_a_slope_holds_its_planted_feet():
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 69
    legs = [limb for limb in api.auto_rig(obj) if "Leg" in limb.name]
    ground = plane(size=4000.0, rotation=(math.radians(5.0), 0.0, 0.0), location=(0.0, 0.0, 2.0))
    frames = range(1, 70)
    # The frames each foot is down in the capture, found before planting.
    ankles: dict[str, list[Vector]] = {limb.name: [] for limb in legs}
    for frame in frames:
        scene.frame_set(frame)
        for limb in legs:
            ankles[limb.name].append(obj.matrix_world @ evaluate(obj)[limb.extremity].translation)
    api.plant_feet(obj, ground, frames)
    for limb in legs:
        length = chain_length(obj, limb.chain)
        runs = core_ground.contact_runs(ankles[limb.name], UP, length)
        assert sum(last - first + 1 for first, last in runs) >= 15, runs
        for first, last in runs:
            held = None
            for number in range(first, last + 1):
                scene.frame_set(frames[number])
                assert_planted(obj, ground, limb.extremity, *limb.chain)
                now = obj.matrix_world @ evaluate(obj)[limb.extremity]
                held = now if held is None else held
                assert (now.translation - held.translation).length < 1e-3 * length, (limb.name, number)
        for frame in frames:
            scene.frame_set(frame)
            assert min(heights(ground, bone_sole(obj, limb.extremity))) > -1e-3 * length, (limb.name, frame)


# Operator and refusals ------------------------------------------------------------------------


def test_the_operator_plants_on_the_panel_ground_and_bakes_a_range():
    obj = walking_biped()
    ground = plane(location=(0.0, 0.0, 0.04))
    obj.ik_rigger.ground = ground
    bpy.context.scene.frame_set(3)
    assert bpy.ops.ik_rigger.plant_feet() == {"FINISHED"}
    assert_planted(obj, ground, "foot.L", "thigh.L", "shin.L")
    assert bpy.ops.ik_rigger.plant_feet(frames="RANGE", frame_start=1, frame_end=24) == {"FINISHED"}
    for frame, side in ((2, "L"), (12, "R"), (20, "L"), (20, "R")):
        bpy.context.scene.frame_set(frame)
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")
    # Another mesh named in the operator wins over the panel's.
    other = plane("Other", location=(0.0, 0.0, -0.05))
    assert bpy.ops.ik_rigger.plant_feet(ground=other.name) == {"FINISHED"}
    assert_planted(obj, other, "foot.L", "thigh.L", "shin.L")


def test_the_ground_panel_shows_the_armatures_ground_and_both_ways_to_plant():
    obj = biped()
    before = snapshot(obj)
    log = draw(ui.IKRIG_PT_ground, obj)
    assert ("prop", "IKRIG_PG_rig", "ground") in log
    assert [entry for entry in log if entry[0] == "operator"] == [("operator", "ik_rigger.plant_feet")] * 2
    assert same(snapshot(obj), before)


def test_the_operator_is_greyed_out_without_a_rigged_armature():
    plane()
    assert not bpy.ops.ik_rigger.plant_feet.poll()
    obj = make_armature(both_legs(), mode="POSE")
    assert obj == bpy.context.active_object
    assert not bpy.ops.ik_rigger.plant_feet.poll()


def _arms_only() -> bpy.types.Object:
    obj = make_armature([
        ("chest", (0, 0, 1.4), (0, 0, 1.6), None, False),
        ("upper_arm.L", (0.2, 0, 1.5), (0.5, 0.05, 1.5), "chest", False),
        ("forearm.L", (0.5, 0.05, 1.5), (0.8, 0, 1.5), "upper_arm.L", True),
        ("hand.L", (0.8, 0, 1.5), (0.9, 0, 1.5), "forearm.L", True),
    ], mode="POSE")
    api.build(obj, "forearm.L")
    return obj


@pytest.mark.parametrize("case", ["no ground", "not a mesh", "no legs", "nothing below", "own body"])
def test_bad_input_is_refused_and_leaves_the_armature_as_it_was(case):
    obj = _arms_only() if case == "no legs" else biped()
    ground: bpy.types.Object | None = plane()
    if case == "no ground":
        ground = None
    elif case == "not a mesh":
        ground = bpy.data.objects.new("Marker", None)
        bpy.context.scene.collection.objects.link(ground)
    elif case == "nothing below":
        ground = plane("Far", size=1.0, location=(50.0, 0.0, 0.0))
    elif case == "own body":
        ground = skin(obj)
    bpy.context.view_layer.objects.active = obj
    before = snapshot(obj)
    with pytest.raises(RigError) as raised:
        api.plant_feet(obj, ground, range(1, 5) if case == "nothing below" else None)
    assert same(snapshot(obj), before)
    words = {"no ground": "no ground picked", "not a mesh": "not a mesh", "no legs": "no rigged legs",
             "nothing below": "no ground below", "own body": "deformed by"}[case]
    assert words in str(raised.value)
    # The operator says the same and cancels, with the ground picked on the armature (a script
    # can set a non-mesh there: the sidebar's picker offers only meshes).
    obj.ik_rigger.ground = ground
    with pytest.raises(RuntimeError, match=words):
        bpy.ops.ik_rigger.plant_feet()
    assert same(snapshot(obj), before)
