"""The armature object as real scenes leave it: placed by a parent bone of another armature, a Follow Path
constraint, delta transforms, a non-uniform or mirroring scale, root motion keyed on the object itself;
its bones in every rotation mode a file holds. Building keeps the motion, the bakes play what they baked
from, the snaps are exact where the limb is shown (in world space) and key the channels of each bone's mode."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import (
    all_fcurves,
    chain_length,
    evaluate_world,
    leg_bones,
    make_armature,
    rotation_degrees,
    same,
    snapshot,
)
from mathutils import Euler, Matrix, Quaternion, Vector
from test_ground import (
    _DOWN,
    SIDES,
    _ankle,
    assert_planted,
    assert_walk_planted,
    biped,
    plane,
    walking_biped,
)

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
    """Moved, turned (``tilt`` about X among it) and scaled by its delta transforms."""
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
    """Build, bakes, snaps and Remove on an armature the object placement carries: each plays, in world
    space, what was shown before it, and the object stays where it was."""
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
    assert_walk_planted(obj, ground, stretch=False)


@pytest.mark.parametrize("turn", [0.0, 0.25], ids=["upright", "leaning"])
def test_plant_feet_on_one_frame_lays_the_feet_of_an_armature_scaled_unevenly_flat_on_the_ground(turn):
    """Scaled more along one axis than another, the foot the ground turns in world space is a sheared one
    no bone can take: the feet were left a tenth of the leg above the ground. They stand flat on it."""
    obj = biped()
    obj.scale, obj.rotation_euler = (1.0, 1.6, 0.7), (turn, 0.0, 0.5)
    ground = plane(location=(0.0, 0.0, 0.04), rotation=(0.0, 0.2, 0.0))
    api.plant_feet(obj, ground)
    for side in SIDES:
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")


def _slot_keys(obj: bpy.types.Object) -> dict[tuple[str, int], list[tuple[float, ...]]]:
    """The keys of ``obj``'s own slot of its action, read from the slot's channelbags."""
    data = obj.animation_data
    bags = [strip.channelbag(data.action_slot) for layer in data.action.layers for strip in layer.strips]
    return {(curve.data_path, curve.array_index): [tuple(point.co) for point in curve.keyframe_points]
            for bag in bags if bag is not None for curve in bag.fcurves}


@pytest.mark.skipif(bpy.app.version < (4, 4, 0), reason="an action's slots came with Blender 4.4")
@pytest.mark.parametrize("rigged", ["first", "second"], ids=["the first slot's", "the second slot's"])
@pytest.mark.parametrize("call", ["build", "bake IK to FK", "bake FK to IK", "snap keyed", "remove", "plant feet"])
def test_a_character_sharing_its_action_through_a_slot_of_its_own_is_left_as_it_was(call, rigged):
    """Two characters of the same bone names in one action, each in a slot of its own (as Blender 4.4 and
    later key them): rigging, baking, snapping, removing or planting one leaves the other's slot, its keys
    and how it plays as they were. On Blender 4.4 and 4.5, the character of the second slot was read and
    keyed through the action's first slot, the other character's."""
    if call == "plant feet" and rigged == "second":
        pytest.skip("the second character is a leg without feet to plant")
    first = walking_biped() if call == "plant feet" else _leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    second = make_armature(leg_bones(x=1.5, bend=0.08), name="Other", mode="OBJECT")
    action = first.animation_data.action
    second.animation_data_create()
    second.animation_data.action = action
    for frame in range(1, 26, 4):
        for index, name in enumerate(CHAIN):
            pose_bone = second.pose.bones[name]
            pose_bone.rotation_mode = "XYZ"
            pose_bone.rotation_euler = (0.3 + 0.02 * frame * (index + 1), 0.1 * index, 0.0)
            pose_bone.keyframe_insert("rotation_euler", frame=frame)
    assert second.animation_data.action == action
    assert [slot.identifier for slot in action.slots] == ["OBRig", "OBOther"]
    obj, other = (first, second) if rigged == "first" else (second, first)
    bpy.context.view_layer.objects.active = obj
    for item in bpy.context.view_layer.objects:
        item.select_set(item == obj)
    bpy.ops.object.mode_set(mode="POSE")
    if call not in ("build", "plant feet"):
        api.build(obj, "shin.L", both_sides=False)
    slot, keys, played_other = other.animation_data.action_slot, _slot_keys(other), _shown(other, FRAMES)
    before = _shown(obj, FRAMES)
    if call == "build":
        api.build(obj, "shin.L", both_sides=False)
    elif call.startswith("bake"):
        api.bake(obj, "IK_TO_FK" if call == "bake IK to FK" else "FK_TO_IK", FRAMES, switch=True)
    elif call == "snap keyed":
        api.snap_limb(obj, "shin.L", "FK", key=True, frame=13)
    elif call == "remove":
        api.remove(obj, "shin.L")
    else:
        api.plant_feet(obj, plane(location=(0.0, 0.0, 0.04)), FRAMES)
    assert other.animation_data.action_slot == slot and _slot_keys(other) == keys
    _assert_same(other, played_other, "the other character")
    if call != "plant feet":
        _assert_same(obj, before, call)


@pytest.mark.parametrize("frames", [None, FRAMES], ids=["this frame", "over the range"])
def test_plant_feet_on_an_armature_shown_in_rest_position_plants_the_pose_it_plays(frames):
    """Pose Position set to Rest (Armature properties) while planting: the feet are planted as the rig plays
    in Pose Position, and Rest Position stays on."""
    obj = walking_biped()
    ground = plane(location=(0.0, 0.0, 0.04), rotation=(0.0, 0.2, 0.0))
    scene = bpy.context.scene
    scene.frame_set(5)
    obj.data.pose_position = "REST"
    api.plant_feet(obj, ground, frames)
    assert obj.data.pose_position == "REST" and scene.frame_current == 5
    obj.data.pose_position = "POSE"
    for frame in (5,) if frames is None else (1, 5, 12, 20):
        if frames is not None:
            scene.frame_set(frame)
        for side in SIDES:
            if frames is None or any(frame in run for run in _DOWN[side]):
                assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")


def _in_its_collection(obj: bpy.types.Object) -> bpy.types.Collection:
    """``obj`` moved into a collection of its own, in the scene."""
    collection = bpy.data.collections.new("Hero")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)
    return collection


def _another_scene(collection: bpy.types.Collection) -> bpy.types.LayerCollection:
    shot = bpy.data.scenes.new("Shot 2")
    shot.collection.children.link(collection)
    shot.view_layers[0].update()  # a new scene's view layer has its collections once updated
    return shot.view_layers[0].layer_collection.children[collection.name]


def _another_layer(collection: bpy.types.Collection) -> bpy.types.LayerCollection:
    return bpy.context.scene.view_layers.new("Background").layer_collection.children[collection.name]


WHERE_KEPT_OUT = {"another scene's view layer": _another_scene, "another view layer of this scene": _another_layer}


@pytest.mark.parametrize("where", WHERE_KEPT_OUT)
def test_an_armature_another_view_layer_excludes_is_worked_on_where_it_is_shown_and_stays_excluded_there(where):
    """Its collection excluded in another view layer (of this scene or another) but not in this one: the
    operations work here as anywhere, and leave the other view layer excluding it."""
    obj = _leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    collection = _in_its_collection(obj)
    layer_collection = WHERE_KEPT_OUT[where](collection)
    layer_collection.exclude = True
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="POSE")
    _worked_through(obj)
    assert layer_collection.exclude
    assert bpy.context.view_layer.layer_collection.children[collection.name].exclude is False


def _strip_under(obj: bpy.types.Object, **settings) -> None:
    """The rigged leg's action pushed down onto an NLA strip, ``settings`` given to the strip (or with
    ``action_blend_type``/``action_influence``, a copy of it played over the strip so)."""
    data = obj.animation_data
    action = data.action
    strip = data.nla_tracks.new().strips.new("walk", 1, action)
    data.action = None
    over = {key: settings.pop(key) for key in ("action_blend_type", "action_influence") if key in settings}
    for key, value in settings.items():
        setattr(strip, key, value)
    if over:
        data.action = action.copy()
        for key, value in over.items():
            setattr(data, key, value)
    else:
        strip.select = True
        data.nla_tracks[0].select = True
        data.use_tweak_mode = True


NLA_STATES = {
    "tweak mode, a strip at half speed": ({"scale": 2.0}, "NLA tweak mode"),
    "tweak mode, a strip later": ({"frame_start": 5.0}, "NLA tweak mode"),
    "the action added over its strip": ({"action_blend_type": "ADD"}, "blended as Add at 100% influence"),
    "the action at half influence": ({"action_influence": 0.5}, "blended as Replace at 50% influence"),
}


@pytest.mark.parametrize("state", NLA_STATES)
def test_removing_a_limb_whose_motion_would_be_keyed_where_keys_do_not_play_as_keyed_is_refused(state):
    """Remove IK Limb keeps the motion by keying it onto the chain: in NLA tweak mode the keys went into the
    strip's action at the scene's frames (played at its timing), and over a strip blended as Add or at half
    influence they played added or halved, the leg up to 40 degrees off. Refused, naming the state, with
    what to do (Keep the Motion off among it); nothing changed. Off, it removes the limb."""
    obj = _leg()
    api.build(obj, "shin.L", both_sides=False)
    # A key of the animator's on the handle: the limb's motion is no longer its chain's own keys'.
    handle = obj.pose.bones[api.limbs(obj)[0].bones["HANDLE"]]
    handle.location.z += 0.05
    handle.keyframe_insert("location", frame=9)
    settings, said = NLA_STATES[state]
    _strip_under(obj, **dict(settings))
    bpy.context.scene.frame_set(3)
    before, seen = snapshot(obj), _shown(obj, [3])
    with pytest.raises(api.RigError, match=said) as refused:
        api.remove(obj, "shin.L")
    assert "Keep the Motion off" in str(refused.value), str(refused.value)
    assert same(snapshot(obj), before)
    _assert_same(obj, seen, "refused")
    api.remove(obj, "shin.L", keep_motion=False)
    assert not obj.ik_rigger.limbs


@pytest.mark.parametrize("frames", [None, range(1, 25)], ids=["this frame keyed", "over the range"])
@pytest.mark.parametrize("mode", ["XYZ", "ZXY", "AXIS_ANGLE", "QUATERNION"])
def test_plant_feet_keys_the_handles_in_their_rotation_mode(mode, frames):
    """The handles set to another rotation mode by the animator: Plant Feet keys the channel of that mode
    (a key in another would not play) and the feet stand planted as keyed."""
    obj = walking_biped()
    handles = [f"foot_IK.{side}" for side in SIDES]
    for name in handles:
        obj.pose.bones[name].rotation_mode = mode
    ground = plane(location=(0.0, 0.0, 0.04), rotation=(0.0, 0.2, 0.0))
    scene = bpy.context.scene
    scene.frame_set(5)
    api.plant_feet(obj, ground, frames, key=frames is None)
    keyed = _rotation_paths(obj, handles)
    assert all(paths == {rotation_property(mode)} for paths in keyed.values()), keyed
    for frame in (5,) if frames is None else (2, 5, 12, 20):
        scene.frame_set(frame + 1)
        scene.frame_set(frame)
        for side in SIDES:
            if frames is None or any(frame in run for run in _DOWN[side]):
                assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")


@pytest.mark.parametrize("placement", ["follow path", "a bone of another armature", "non-uniform scale"])
def test_the_operators_work_on_a_placed_armature_in_axis_angle_as_the_api_does(placement):
    """Through the sidebar's operators, the armature placed and its leg in Axis Angle: Build IK Limb keeps
    the motion, the bakes play it, the keyed snaps show the pose they snapped; the mode, the active object
    and the selection stay."""
    obj = _leg("AXIS_ANGLE")
    bpy.ops.object.mode_set(mode="OBJECT")
    PLACEMENTS[placement](obj)
    bpy.context.view_layer.objects.active = obj
    for item in bpy.context.view_layer.objects:
        item.select_set(item == obj)
    bpy.ops.object.mode_set(mode="POSE")
    before = _shown(obj, FRAMES)
    obj.data.bones.active = obj.data.bones["shin.L"]
    assert bpy.ops.ik_rigger.build_ik(chain_length=2) == {"FINISHED"}
    _assert_same(obj, before, "build")
    for direction in ("IK_TO_FK", "FK_TO_IK"):
        assert bpy.ops.ik_rigger.bake(direction=direction, frame_start=1, frame_end=25, key_switch=True) == {"FINISHED"}
        _assert_same(obj, before, direction)
    scene = bpy.context.scene
    scene.frame_set(13)
    handle = obj.pose.bones[api.limbs(obj)[0].bones["HANDLE"]]
    handle.location += handle.bone.matrix_local.inverted().to_3x3() @ Vector((0.03, -0.05, 0.06))
    for operator in (bpy.ops.ik_rigger.snap_fk_to_ik, bpy.ops.ik_rigger.snap_ik_to_fk):
        shown = {13: _now(obj)}
        assert operator(keyframe=True) == {"FINISHED"}
        scene.frame_set(12)
        scene.frame_set(13)
        _assert_same(obj, shown, operator.idname_py())
        thigh = obj.pose.bones["thigh.L"]
        thigh.matrix_basis = thigh.matrix_basis @ Euler((0.3, 0.0, -0.2)).to_matrix().to_4x4()
    assert obj.mode == "POSE" and bpy.context.view_layer.objects.active == obj
    assert [item.name for item in bpy.context.view_layer.objects if item.select_get()] == [obj.name]
    keyed = _rotation_paths(obj, MOVED)
    assert all(paths == {"rotation_axis_angle"} for paths in keyed.values()), keyed


# (A strip played slower plays the keys between their frames, where keys made anew under another parent
# interpolate another way: a twentieth of a degree, as any rebuild's between its keys.)
@pytest.mark.parametrize("strip", [{}, {"frame_start": 5.0}], ids=["at 1", "later"])
def test_a_rebuild_that_gives_the_pole_another_parent_keeps_the_motion_a_playing_strip_holds(strip):
    """The motion pushed down onto an NLA strip, the armature with no action of its own: a rebuild making the
    pole follow the handle left the pole's keys in the strip as they were, now under the handle, and the knee
    swung up to 32 degrees off. The strip's action is keyed anew, as the active action is."""
    obj = _leg()
    api.build(obj, "shin.L", both_sides=False)
    handle = obj.pose.bones[api.limbs(obj)[0].bones["HANDLE"]]
    handle.location.z += 0.05
    handle.keyframe_insert("location", frame=9)
    data = obj.animation_data
    placed = data.nla_tracks.new().strips.new("walk", 1, data.action)
    data.action = None
    for key, value in strip.items():
        setattr(placed, key, value)
    frames = range(1, int(placed.frame_end) + 2)
    before = _shown(obj, frames)
    api.build(obj, "shin.L", both_sides=False, pole_parent="HANDLE")
    assert data.action is None and [item.action for item in data.nla_tracks[0].strips] == [placed.action]
    _assert_same(obj, before, "rebuilt")


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_a_keyed_parent_switch_keeps_the_limb_where_it_is_shown_wherever_the_armature_is_placed(placement):
    """Switch Parent keyed on frame 13, to the torso and back, the handle in Axis Angle: the frame shows the
    limb where it was, in world space, and the frames before play as before."""
    obj = _leg("AXIS_ANGLE")
    bpy.ops.object.mode_set(mode="OBJECT")
    PLACEMENTS[placement](obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    limb = api.build(obj, "shin.L", both_sides=False, parent_switch=True)[0]
    obj.pose.bones[limb.bones["HANDLE"]].rotation_mode = "AXIS_ANGLE"
    before = _shown(obj, range(1, 13))
    scene = bpy.context.scene
    for parent in (1, 0):
        scene.frame_set(13)
        shown = {13: _now(obj)}
        api.switch_parent(obj, "shin.L", parent, key=True)
        scene.frame_set(12)
        scene.frame_set(13)
        _assert_same(obj, shown, f"switched to {parent}")
    _assert_same(obj, before, "before the switch")
