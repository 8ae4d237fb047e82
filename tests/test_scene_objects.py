"""The armature object as real scenes leave it: placed by a parent bone of another armature, a Follow Path
constraint, delta transforms, a non-uniform or mirroring scale, root motion keyed on the object itself;
its bones in every rotation mode a file holds. Building keeps the motion, the bakes play what they baked
from, the snaps are exact where the limb is shown (in world space) and key the channels of each bone's mode."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import all_fcurves, chain_length, evaluate, evaluate_world, leg_bones, make_armature, rotation_degrees
from mathutils import Euler, Matrix, Quaternion, Vector
from test_ground import _DOWN, SIDES, _ankle, assert_planted, biped, bone_sole, heights, plane

from ik_rigger import api
from ik_rigger.core.geometry import rotation_property

FRAMES = range(1, 26)
CHAIN = ("thigh.L", "shin.L")
MOVED = ("thigh.L", "shin.L", "foot.L")


def _leg(mode: str = "XYZ") -> bpy.types.Object:
    """A leg whose hips travel and whose thigh, shin and foot swing, those three in rotation ``mode``,
    keyed in its own channel."""
    obj = make_armature(leg_bones(bend=0.08))
    for name in MOVED:
        obj.pose.bones[name].rotation_mode = mode
    hips = obj.pose.bones["hips"]
    for frame in range(1, 26, 4):
        phase = frame / 24 * 2 * math.pi
        hips.location = (0.05 * math.sin(phase), 0.1 * math.cos(phase), 0.0)
        hips.keyframe_insert("location", frame=frame)
        for index, name in enumerate(MOVED):
            pose_bone = obj.pose.bones[name]
            # The knee bent by 15 degrees or more, so the IK's bend is not the solver's last digits.
            swing = 0.4 * math.sin(phase) if index == 0 else 0.45 + 0.2 * math.sin(phase + index)
            pose_bone.matrix_basis = Euler((swing, 0.1 * math.cos(phase), 0.05 * index + 0.1)).to_matrix().to_4x4()
            pose_bone.keyframe_insert(rotation_property(mode), frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES.start, FRAMES.stop - 1
    obj.data.bones.active = obj.data.bones["shin.L"]
    return obj


def _shown(obj: bpy.types.Object, frames) -> dict[int, dict[str, Matrix]]:
    """The user's deforming bones as they play in world space."""
    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        shown[frame] = _now(obj)
    return shown


def _now(obj: bpy.types.Object) -> dict[str, Matrix]:
    """The user's deforming bones in world space as shown now, the frame not set again."""
    return {name: matrix for name, matrix in evaluate_world(obj).items() if obj.data.bones[name].use_deform}


def _assert_same(obj: bpy.types.Object, expected: dict[int, dict[str, Matrix]], label: str,
                 now: dict[str, Matrix] | None = None) -> None:
    """``obj`` plays ``expected`` (each frame's world poses), or shows it ``now``, within a ten-thousandth of
    the leg's world length."""
    length = chain_length(obj, CHAIN) * max(map(abs, obj.matrix_world.to_scale()))
    now = _shown(obj, expected) if now is None else dict.fromkeys(expected, now)
    for frame, poses in expected.items():
        for name, matrix in poses.items():
            moved = (matrix.translation - now[frame][name].translation).length
            assert moved < 1e-4 * length, (label, frame, name, moved / length)
            assert rotation_degrees(matrix, now[frame][name]) < 0.01, (label, frame, name)


def _rotation_paths(obj: bpy.types.Object, names) -> dict[str, set[str]]:
    """The rotation channels keyed on each of the bones ``names``."""
    keyed: dict[str, set[str]] = {name: set() for name in names}
    for curve in all_fcurves(obj):
        for name in names:
            if curve.data_path.startswith(f'pose.bones["{name}"].rotation'):
                keyed[name].add(curve.data_path.rsplit(".", 1)[1])
    return keyed


def _worked_through(obj: bpy.types.Object) -> None:
    """Build, bake both ways, snap both ways keyed on frame 13, bake back and remove: each plays what the
    user saw before it, in world space."""
    before = _shown(obj, FRAMES)
    api.build(obj, "shin.L", both_sides=False)
    _assert_same(obj, before, "build")
    api.bake(obj, "IK_TO_FK", FRAMES, switch=True)
    _assert_same(obj, before, "bake IK to FK")
    api.bake(obj, "FK_TO_IK", FRAMES, switch=True)
    _assert_same(obj, before, "bake FK to IK")
    scene = bpy.context.scene
    scene.frame_set(13)
    handle = obj.pose.bones[api.limbs(obj)[0].bones["HANDLE"]]
    # Off the keys, as an animator poses: the handle moved and turned, then the thigh turned in FK.
    handle.location += handle.bone.matrix_local.inverted().to_3x3() @ Vector((0.03, -0.05, 0.06))
    handle.rotation_quaternion = Quaternion((0.3, 0.2, 0.1), 0.4) @ handle.rotation_quaternion
    for to in ("FK", "IK"):
        shown = {13: _now(obj)}
        api.snap_limb(obj, "shin.L", to, key=True, frame=13)
        _assert_same(obj, shown, f"snap to {to}", now=_now(obj))
        scene.frame_set(12)
        scene.frame_set(13)
        _assert_same(obj, shown, f"snap to {to}, keyed")
        if to == "FK":
            thigh = obj.pose.bones["thigh.L"]
            thigh.matrix_basis = thigh.matrix_basis @ Euler((0.3, 0.0, -0.2)).to_matrix().to_4x4()
    _assert_same(obj, {frame: poses for frame, poses in before.items() if frame < 13}, "after the snaps")
    api.remove(obj, "shin.L")
    _assert_same(obj, {frame: poses for frame, poses in before.items() if frame < 13}, "remove")


MODES = ["QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "AXIS_ANGLE"]


@pytest.mark.parametrize("mode", MODES)
def test_a_leg_in_each_rotation_mode_is_rigged_baked_and_snapped_as_it_plays(mode):
    obj = _leg(mode)
    _worked_through(obj)
    keyed = _rotation_paths(obj, MOVED)
    assert all(paths == {rotation_property(mode)} for paths in keyed.values()), keyed


@pytest.mark.parametrize("mode", MODES)
def test_controls_turned_to_each_rotation_mode_are_keyed_in_that_mode(mode):
    """The animator set the handle's rotation mode after rigging: Bake FK to IK and Snap IK to FK key the
    channel of that mode, and the rig plays the motion it was baked from."""
    obj = _leg()
    limb = api.build(obj, "shin.L", both_sides=False)[0]
    before = _shown(obj, FRAMES)
    handle = limb.bones["HANDLE"]
    api.bake(obj, "IK_TO_FK", FRAMES, switch=True)  # the FK plays the motion; the handle's mode is the animator's
    obj.pose.bones[handle].rotation_mode = mode
    api.bake(obj, "FK_TO_IK", FRAMES, switch=True)
    _assert_same(obj, before, "bake")
    assert rotation_property(mode) in _rotation_paths(obj, [handle])[handle]
    bpy.context.scene.frame_set(13)
    api.snap_limb(obj, "shin.L", "FK", key=True)
    obj.pose.bones[handle].matrix_basis = Matrix.Identity(4)  # moved off, the snap must put it back
    obj.pose.bones[handle].keyframe_delete(rotation_property(mode), frame=13)
    shown = _shown(obj, [13])
    api.snap_limb(obj, "shin.L", "IK", key=True)
    _assert_same(obj, shown, "snap IK to FK")
    keyed = [point.co.x for curve in all_fcurves(obj) for point in curve.keyframe_points
             if curve.data_path == f'pose.bones["{handle}"].{rotation_property(mode)}']
    assert 13.0 in keyed


def _carrier_bone(obj: bpy.types.Object, far: float = 1.2, rise: float = 0.3) -> None:
    """Parented to a bone of another armature (a vehicle's seat) that turns and travels ``far``, rising
    ``rise`` as far."""
    vehicle = make_armature([("body", (0, 0, 0), (0, 1, 0), None, False),
                             ("seat", (0, 0, 0.5), (0, 0.3, 0.5), "body", False)], name="Vehicle", mode="OBJECT")
    seat = vehicle.pose.bones["seat"]
    seat.rotation_mode = "XYZ"
    for frame, x in ((1, 0.0), (25, far)):
        seat.location, seat.rotation_euler = (x, 0.0, rise * x), (0.2 * x, 0.0, 0.5 * x)
        seat.keyframe_insert("location", frame=frame)
        seat.keyframe_insert("rotation_euler", frame=frame)
    obj.parent, obj.parent_type, obj.parent_bone = vehicle, "BONE", "seat"


def _follow_path(obj: bpy.types.Object, far: float = 0.8) -> None:
    """Walking along a curved path with Follow Path (Follow Curve on), its offset keyed over the shot to
    ``far`` of the path's length."""
    curve = bpy.data.curves.new("Path", "CURVE")
    curve.dimensions = "3D"
    spline = curve.splines.new("POLY")
    spline.points.add(3)
    for point, co in zip(spline.points, ((0, 0, 0, 1), (1, 0.5, 0, 1), (2, 0, 0.3, 1), (3, -1, 0, 1))):
        point.co = co
    path = bpy.data.objects.new("Path", curve)
    bpy.context.scene.collection.objects.link(path)
    follow = obj.constraints.new("FOLLOW_PATH")
    follow.target, follow.use_curve_follow, follow.use_fixed_location = path, True, True
    for frame, at in ((1, 0.0), (25, far)):
        follow.offset_factor = at
        follow.keyframe_insert("offset_factor", frame=frame)


def _root_motion(obj: bpy.types.Object, far: float = 1.5) -> None:
    """Root motion keyed on the armature object itself, in the same action as the bones', to ``far``."""
    obj.rotation_mode = "XYZ"
    for frame, x in ((1, 0.0), (13, far / 2), (25, far)):
        obj.location, obj.rotation_euler = (x, 0.2 * x, 0.0), (0.0, 0.0, 0.6 * x)
        obj.keyframe_insert("location", frame=frame)
        obj.keyframe_insert("rotation_euler", frame=frame)


def _deltas(obj: bpy.types.Object, tilt: float = 0.3) -> None:
    obj.delta_location, obj.delta_rotation_euler, obj.delta_scale = (0.5, -0.3, 0.2), (tilt, 0.1, 1.2), (1.5, 1.5, 1.5)


PLACEMENTS = {
    "a bone of another armature": _carrier_bone,
    "follow path": _follow_path,
    "root motion on the object": _root_motion,
    "delta transforms": _deltas,
    "non-uniform scale": lambda obj: setattr(obj, "scale", (1.0, 1.6, 0.7)),
    "mirrored by a negative scale": lambda obj: setattr(obj, "scale", (-1.0, 1.0, 1.0)),
    "turned, scaled and delta-turned": lambda obj: (setattr(obj, "rotation_euler", (math.radians(90), 0.0, 0.4)),
                                                    setattr(obj, "scale", (100.0, 100.0, 100.0)),
                                                    setattr(obj, "delta_rotation_euler", (0.0, 0.0, 0.5))),
}


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_an_armature_placed_as_scenes_place_it_is_rigged_baked_and_snapped_where_it_is_shown(placement):
    obj = _leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    PLACEMENTS[placement](obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    bpy.context.scene.frame_set(1)
    placed = obj.matrix_world.copy()
    _worked_through(obj)
    bpy.context.scene.frame_set(1)
    assert obj.matrix_world == placed



def _carried_walk(placement: str) -> tuple[bpy.types.Object, bpy.types.Object]:
    """The biped of ``test_ground`` walking in the world as it walks placed still where ``placement`` puts
    it on frame 1: its handles keyed against the carrier's motion (as root motion is), on a ground turned
    with it."""
    obj = biped()
    bpy.ops.object.mode_set(mode="OBJECT")
    CARRIED[placement](obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 24
    scene.frame_set(1)
    first = obj.matrix_world.copy()
    for frame in range(1, 25):
        scene.frame_set(frame)
        carried = obj.matrix_world.inverted() @ first
        for side in SIDES:
            handle = obj.pose.bones[f"foot_IK.{side}"]
            turn = carried.to_quaternion().to_matrix().to_4x4()
            handle.matrix = (Matrix.Translation(carried @ _ankle(side, frame)) @ turn
                             @ obj.data.bones[handle.name].matrix_local.to_3x3().to_4x4())
            handle.keyframe_insert("location", frame=frame)
            handle.keyframe_insert("rotation_quaternion", frame=frame)
    rotation = first.to_quaternion()
    ground = plane(location=first @ Vector((0.0, 0.0, 0.04)), size=20.0 * max(map(abs, first.to_scale())),
                   rotation=rotation.to_euler())
    return obj, ground



# Carried a little: a walk whose hips the carrier moves far would need legs longer than the character's.
# Turned only about up: a walk on a slope is the ground's, not the character's turn.
CARRIED = {
    "standing still": lambda obj: None,
    "a bone of another armature": lambda obj: _carrier_bone(obj, far=0.08, rise=0.0),
    "follow path": lambda obj: _follow_path(obj, far=0.02),
    "root motion on the object": lambda obj: _root_motion(obj, far=0.08),
    "delta transforms": lambda obj: _deltas(obj, tilt=0.0),
    "non-uniform scale": PLACEMENTS["non-uniform scale"],
    "turned, scaled and delta-turned": lambda obj: (setattr(obj, "rotation_euler", (0.0, 0.0, 0.4)),
                                                    setattr(obj, "scale", (100.0, 100.0, 100.0)),
                                                    setattr(obj, "delta_rotation_euler", (0.0, 0.0, 0.5))),
}


@pytest.mark.parametrize("placement", CARRIED)
def test_plant_feet_holds_each_foot_still_on_the_ground_in_world_space_wherever_the_armature_is_carried(placement):
    """Plant Feet over the shot, the walk carried by the armature object's placement: each foot down lies
    flat on the ground and stays where it is in the world while it is down; up, no sole goes under it."""
    obj, ground = _carried_walk(placement)
    scene = bpy.context.scene
    scene.frame_set(5)
    api.plant_feet(obj, ground, range(1, 25))
    assert scene.frame_current == 5
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


@pytest.mark.parametrize("turn", [0.0, 0.25], ids=["upright", "leaning"])
def test_plant_feet_on_one_frame_lays_the_feet_of_an_armature_scaled_unevenly_flat_on_the_ground(turn):
    """Scaled more along one axis than another, the foot the ground turns in world space is a sheared one
    no bone can take: the feet were left 9% of the leg above the ground. They stand flat on it."""
    obj = biped()
    obj.scale, obj.rotation_euler = (1.0, 1.6, 0.7), (turn, 0.0, 0.5)
    ground = plane(location=(0.0, 0.0, 0.04), rotation=(0.0, 0.2, 0.0))
    api.plant_feet(obj, ground)
    for side in SIDES:
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")
