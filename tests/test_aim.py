"""Aim rigs: heads, necks and eyes that look at a target without moving the rest pose."""

from __future__ import annotations

import math
from types import SimpleNamespace

import bpy
import pytest
from helpers import (
    DATA,
    BoneSpec,
    both_legs,
    evaluate,
    import_bvh,
    make_armature,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
)
from mathutils import Matrix, Quaternion, Vector
from test_pipeline import assert_same_poses, frames_here, play_elsewhere
from test_refusals import _linked_rig
from test_ui import RecordingLayout, draw

import ik_rigger
from ik_rigger import ui
from ik_rigger.core import aim
from ik_rigger.core.errors import RigError
from ik_rigger.core.model import BoneInfo, Skeleton
from ik_rigger.rig.aim import add_aim, find_aim_rigs, remove_aim
from ik_rigger.rig.skeleton import read_skeleton

REST_DEGREES = 0.01
AIM_DEGREES = 0.1


def face(scale: float = 1.0, y_up: bool = False) -> list[BoneSpec]:
    """Root > spine > neck > head with eyes .L/.R looking forward (-Y), their Y axis at the front.

    ``y_up`` writes the same character as a Y-up file does (up +Y, front +Z in armature
    space), to be turned upright by its object.
    """

    def at(x: float, y: float, z: float) -> tuple[float, float, float]:
        return (x * scale, z * scale, -y * scale) if y_up else (x * scale, y * scale, z * scale)

    return [
        ("root", at(0, 0, 0), at(0, 0.3, 0), None, False),
        ("spine", at(0, 0, 1.0), at(0, 0, 1.4), "root", False),
        ("neck", at(0, 0, 1.4), at(0, 0, 1.55), "spine", True),
        ("head", at(0, 0, 1.55), at(0, 0, 1.8), "neck", True),
        ("eye.L", at(0.04, -0.08, 1.65), at(0.04, -0.1, 1.65), "head", False),
        ("eye.R", at(-0.04, -0.08, 1.65), at(-0.04, -0.1, 1.65), "head", False),
    ]


def y_up_centimetres() -> bpy.types.Object:
    """The face in centimetres, Y up, turned upright and scaled to metres by its object."""
    obj = make_armature(face(scale=100.0, y_up=True), name="YUp")
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)
    obj.scale = (0.01, 0.01, 0.01)
    bpy.context.view_layer.update()
    return obj


def size_of(obj: bpy.types.Object) -> float:
    return max((bone.head_local - bone.tail_local).length for bone in obj.data.bones) + max(
        bone.head_local.length for bone in obj.data.bones)


def assert_rest_kept(obj: bpy.types.Object, before: dict[str, Matrix]) -> None:
    """Every bone that was there poses exactly as before, within 0.01 degree."""
    after = evaluate(obj)
    size = size_of(obj)
    for name, matrix in before.items():
        assert rotation_degrees(matrix, after[name]) < REST_DEGREES, name
        assert (matrix.translation - after[name].translation).length < 1e-5 * size, name


def aim_direction(obj: bpy.types.Object, aimed: str, target: str) -> Vector:
    """The aimed bone's own axis (in its rest frame) that points at its target at rest."""
    bones = obj.data.bones
    return bones[aimed].matrix_local.to_3x3().inverted() @ (bones[target].head_local - bones[aimed].head_local)


def aim_error(pose: dict[str, Matrix], aimed: str, target: str, axis: Vector) -> float:
    """Degrees between where ``axis`` of the aimed bone points and its target, in an evaluated pose."""
    pointing = pose[aimed].to_3x3().normalized() @ axis
    return math.degrees(pointing.angle(pose[target].translation - pose[aimed].translation))


def targets_of(obj: bpy.types.Object) -> dict[str, str]:
    """Aimed bone -> its target, from the rigs on the armature."""
    return {aimed: roles[aim.ROLE_TARGET] for rig in find_aim_rigs(obj) for aimed, roles in rig.aimed.items()}


def move(obj: bpy.types.Object, bone: str, offset: Vector) -> None:
    """Move a pose bone by ``offset`` in armature space."""
    pose_bone = obj.pose.bones[bone]
    pose_bone.matrix = Matrix.Translation(offset) @ pose_bone.matrix
    bpy.context.view_layer.update()


# Planning, detection --------------------------------------------------------------


def skeleton_of(*names_and_parents: tuple[str, str | None]) -> Skeleton:
    bones = {}
    for index, (name, parent) in enumerate(names_and_parents):
        head = Vector((0.1 * (index % 3 - 1), 0.0, 1.0 + 0.1 * index))
        bones[name] = BoneInfo(name, parent, head, head + Vector((0.0, 0.0, 0.1)), Vector((1.0, 0.0, 0.0)),
                               Vector((0.0, -1.0, 0.0)))
    return Skeleton(bones)


@pytest.mark.parametrize(("names", "head", "neck", "eyes"), [
    ([("root", None), ("neck_01", "root"), ("neck_02", "neck_01"), ("head", "neck_02"), ("eye.L", "head"),
      ("eye.R", "head"), ("eyelid.L", "head"), ("eyelid.R", "head")], "head", "neck_02", ("eye.L", "eye.R")),
    ([("mixamorig:Hips", None), ("mixamorig:Neck", "mixamorig:Hips"), ("mixamorig:Head", "mixamorig:Neck"),
      ("mixamorig:HeadTop_End", "mixamorig:Head"), ("mixamorig:LeftEye", "mixamorig:Head"),
      ("mixamorig:RightEye", "mixamorig:Head")], "mixamorig:Head", "mixamorig:Neck",
     ("mixamorig:LeftEye", "mixamorig:RightEye")),
    ([("J_Bip_C_Hips", None), ("J_Bip_C_Neck", "J_Bip_C_Hips"), ("J_Bip_C_Head", "J_Bip_C_Neck"),
      ("J_Adj_L_FaceEye", "J_Bip_C_Head"), ("J_Adj_R_FaceEye", "J_Bip_C_Head")], "J_Bip_C_Head", "J_Bip_C_Neck",
     ("J_Adj_L_FaceEye", "J_Adj_R_FaceEye")),
    ([("CC_Base_Hip", None), ("CC_Base_NeckTwist01", "CC_Base_Hip"), ("CC_Base_Head", "CC_Base_NeckTwist01"),
      ("CC_Base_L_Eye", "CC_Base_Head"), ("CC_Base_R_Eye", "CC_Base_Head")], "CC_Base_Head", "CC_Base_NeckTwist01",
     ("CC_Base_L_Eye", "CC_Base_R_Eye")),
    ([("spine", None), ("spine.004", "spine"), ("spine.005", "spine.004"), ("spine.006", "spine.005"),
      ("DEF-eye.L", "spine.006"), ("DEF-eye.R", "spine.006")], "spine.006", "spine.005", ()),
    ([("pelvis", None), ("neck_01", "pelvis"), ("forehead", "neck_01")], None, "neck_01", ()),
])
def test_detection_reads_the_naming_families(names, head, neck, eyes):
    found = aim.detect(skeleton_of(*names))
    assert (found.head, found.neck, found.eyes) == (head, neck, eyes)


def test_choose_follows_the_active_bone_and_refuses_what_is_missing():
    skeleton = skeleton_of(("root", None), ("neck", "root"), ("head", "neck"), ("eye.L", "head"), ("eye.R", "head"))
    assert aim.choose(skeleton, "AUTO", "eye.R") == (aim.KIND_EYES, ("eye.L", "eye.R"))
    assert aim.choose(skeleton, "AUTO", "neck") == (aim.KIND_NECK, ("neck",))
    assert aim.choose(skeleton, "AUTO", "root") == (aim.KIND_HEAD, ("head",))
    assert aim.choose(skeleton, "ACTIVE", "root") == (aim.KIND_BONE, ("root",))
    bare = skeleton_of(("hips", None), ("thigh.L", "hips"))
    for part, what in (("AUTO", "no head found"), ("EYES", "no eyes found"), ("NECK", "no neck found")):
        with pytest.raises(RigError, match=what):
            aim.choose(bare, part, None)
    with pytest.raises(RigError, match="above 0"):
        aim.plan_aim(skeleton, aim.KIND_HEAD, ("head",), set(), distance=0.0)


def test_plan_places_targets_in_front_at_a_distance_in_head_sizes():
    obj = make_armature(face())
    skeleton = read_skeleton(obj)
    near = aim.plan_aim(skeleton, aim.KIND_EYES, ("eye.L", "eye.R"), set(skeleton.bones), distance=2.0)
    far = aim.plan_aim(skeleton, aim.KIND_EYES, ("eye.L", "eye.R"), set(skeleton.bones), distance=4.0)
    assert far.distance == pytest.approx(2.0 * near.distance)
    # The head and its eyes reach 0.25 from the head's root: that is the head size.
    assert near.distance == pytest.approx(2.0 * 0.25, rel=1e-3)
    targets = {new.name: new for new in near.new_bones}
    assert targets["eye_aim.L"].head.y == pytest.approx(-0.08 - near.distance)
    assert targets["eye_aim.L"].parent == "eye_aim" and targets["eye_aim"].parent == "neck"
    assert targets["eye_aim_pivot.L"].parent == "head"
    assert "eye_aim" in near.describe()


# Aiming on Blender data -----------------------------------------------------------


@pytest.mark.parametrize("make", [lambda: make_armature(face()), y_up_centimetres], ids=["z_up", "y_up_cm"])
def test_eyes_look_at_their_targets_and_never_roll(make):
    obj = make()
    before = evaluate(obj)
    snap = snapshot(obj)
    set_active_bone(obj, "eye.L")
    assert bpy.ops.ik_rigger.add_aim() == {"FINISHED"}
    assert_rest_kept(obj, before)
    targets = targets_of(obj)
    assert set(targets) == {"eye.L", "eye.R"}
    rig = find_aim_rigs(obj)[0]
    assert rig.control == rig.shared == "eye_aim"
    assert all(obj.data.bones[name].parent.name == "eye_aim" for name in targets.values())
    # Made bones go in IK Rigger's collections and never deform.
    made = [obj.data.bones[name] for name in rig.made_bones()]
    assert all(not bone.use_deform and bone.collections for bone in made)
    controls = obj.data.collections_all[obj.ik_rigger.controls_collection]
    assert {bone.name for bone in controls.bones} == set(targets.values()) | {"eye_aim"}
    # The targets stand in front of the face (world -Y), three head sizes away.
    world = obj.matrix_world
    for eye, target in targets.items():
        ahead = world @ obj.data.bones[target].head_local - world @ obj.data.bones[eye].head_local
        assert ahead.normalized().dot(Vector((0.0, -1.0, 0.0))) > 0.9999
        assert ahead.length == pytest.approx(3.0 * 0.25, rel=1e-3)
    size = (obj.data.bones["head"].head_local - obj.data.bones["eye.L"].head_local).length * 4
    moves = [Vector((0.3, 0.1, 0.2)) * size, Vector((-0.5, -0.2, -0.4)) * size]
    for offset in moves:
        move(obj, "eye_aim", offset)
        move(obj, "eye_aim.R", Vector((0.05, 0.0, 0.1)) * size)
        pose = evaluate(obj)
        for eye, target in targets.items():
            # The eyes' own Y axis points at their target.
            assert aim_error(pose, eye, target, Vector((0.0, 1.0, 0.0))) < AIM_DEGREES, eye
            assert rotation_degrees(before[eye], pose[eye]) > 2.0, eye
            # A swing only: the turn has no part about the eye's rest aim axis (no roll).
            turn = (pose[eye].to_3x3().normalized() @ before[eye].to_3x3().normalized().inverted()).to_quaternion()
            rest_axis = before[eye].to_3x3().normalized().col[1]
            assert abs(turn.axis.dot(rest_axis)) * math.degrees(turn.angle) < AIM_DEGREES, eye
    bpy.ops.ik_rigger.remove_aim()
    assert same(snapshot(obj), snap)


def test_aim_zero_gives_back_the_unaimed_pose():
    obj = make_armature(face())
    for name, angle in (("eye.L", 0.3), ("eye.R", -0.2), ("head", 0.25)):
        obj.pose.bones[name].rotation_mode = "XYZ"
        obj.pose.bones[name].rotation_euler = (angle, 0.0, angle / 2)
    unaimed = evaluate(obj)
    add_aim(obj, "EYES")
    add_aim(obj, "HEAD", influence=0.0)
    move(obj, "eye_aim", Vector((0.2, 0.0, 0.1)))
    move(obj, "head_aim", Vector((0.3, 0.0, -0.2)))
    pose = evaluate(obj)
    assert rotation_degrees(unaimed["head"], pose["head"]) < REST_DEGREES
    assert rotation_degrees(unaimed["eye.L"], pose["eye.L"]) > 1.0
    obj.pose.bones["eye_aim"][aim.AIM] = 0.0
    obj.update_tag()
    pose = evaluate(obj)
    for name in ("eye.L", "eye.R", "head"):
        assert rotation_degrees(unaimed[name], pose[name]) < REST_DEGREES, name
    obj.pose.bones["head_aim"][aim.AIM] = 1.0
    obj.update_tag()
    turned = evaluate(obj)
    # The bone's own rotation plays on top of the aim, as if the aim were its parent.
    obj.pose.bones["head"].rotation_euler = (0.0, 0.0, 0.0)
    pose = evaluate(obj)
    assert aim_error(pose, "head", "head_aim", aim_direction(obj, "head", "head_aim")) < AIM_DEGREES
    own = obj.pose.bones["head"].bone.matrix_local.inverted() @ unaimed["head"]
    layered = pose["head"] @ own
    assert rotation_degrees(layered, turned["head"]) < REST_DEGREES
    # The eyes turn with the head but stay unaimed.
    assert rotation_degrees(pose["eye.L"], turned["eye.L"]) > 1.0


@pytest.mark.parametrize("part", ["HEAD", "NECK", "EYES"])
def test_mixamo_head_neck_and_eyes_follow_their_target(part):
    obj = import_bvh("mixamo_freebvh.bvh")
    bpy.ops.object.mode_set(mode="POSE")
    before = evaluate(obj)
    snap = snapshot(obj)
    assert bpy.ops.ik_rigger.add_aim(part=part) == {"FINISHED"}
    assert_rest_kept(obj, before)
    targets = targets_of(obj)
    expected = {"HEAD": {"mixamorig:Head"}, "NECK": {"mixamorig:Neck"},
                "EYES": {"mixamorig:LeftEye", "mixamorig:RightEye"}}[part]
    assert set(targets) == expected
    axes = {aimed: aim_direction(obj, aimed, target) for aimed, target in targets.items()}
    # The targets stand in front of the face (Blender's -Y here), not where the bones point.
    for aimed, target in targets.items():
        ahead = obj.data.bones[target].head_local - obj.data.bones[aimed].head_local
        assert ahead.normalized().dot(Vector((0.0, -1.0, 0.0))) > 0.999
    control = find_aim_rigs(obj)[0].control
    move(obj, control, Vector((12.0, 5.0, 8.0)))
    pose = evaluate(obj)
    for aimed, target in targets.items():
        assert aim_error(pose, aimed, target, axes[aimed]) < AIM_DEGREES, aimed
        assert rotation_degrees(before[aimed], pose[aimed]) > 5.0, aimed
    remove_aim(obj, next(iter(targets)))
    assert same(snapshot(obj), snap)


def test_gltf_robot_head_on_a_turned_y_up_object():
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_robot_expressive.glb"))
    obj = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    # Its rest pose: the file comes with animations.
    obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix()
    bpy.ops.object.mode_set(mode="POSE")
    before = evaluate(obj)
    plan, updated = add_aim(obj, "AUTO")
    assert plan.aimed == ("Head",) and not updated
    assert_rest_kept(obj, before)
    world = obj.matrix_world
    head, target = obj.data.bones["Head"], obj.data.bones[plan.control]
    ahead = (world @ target.head_local - world @ head.head_local).normalized()
    # The robot faces glTF's +Z, Blender's -Y: the target stands level in front of it.
    assert ahead.dot(Vector((0.0, -1.0, 0.0))) > 0.999
    axis = aim_direction(obj, "Head", plan.control)
    move(obj, plan.control, (target.head_local - head.head_local).length * Vector((0.5, 0.3, 0.2)))
    pose = evaluate(obj)
    assert aim_error(pose, "Head", plan.control, axis) < AIM_DEGREES
    assert rotation_degrees(before["Head"], pose["Head"]) > 5.0


def test_a_second_add_updates_in_place_and_renamed_bones_keep_working():
    obj = make_armature(face())
    add_aim(obj, "EYES")
    obj.pose.bones["eye_aim"][aim.AIM] = 0.7
    obj.pose.bones["eye_aim"].keyframe_insert(f'["{aim.AIM}"]', frame=1)
    count = len(obj.data.bones)
    renamed = {"eye_aim": "look", "eye_aim.L": "look.L", "eye_aim_pivot.R": "mch_R", "eye_aim_pivot.L": "mch_L"}
    for old, new in renamed.items():
        obj.data.bones[old].name = new
    plan, updated = add_aim(obj, "EYES", distance=6.0, influence=1.0)
    assert updated and len(obj.data.bones) == count
    assert plan.control == "look" and set(renamed.values()) <= {new.name for new in plan.new_bones}
    assert (obj.data.bones["look.L"].head_local - obj.data.bones["eye.L"].head_local).length == \
        pytest.approx(6.0 * 0.25, rel=1e-3)
    assert obj.animation_data.action is not None
    before = evaluate(obj)
    move(obj, "look", Vector((0.2, 0.1, 0.3)))
    move(obj, "look.L", Vector((0.0, 0.0, -0.1)))
    pose = evaluate(obj)
    targets = targets_of(obj)
    assert targets == {"eye.L": "look.L", "eye.R": "eye_aim.R"}
    for eye, target in targets.items():
        assert aim_error(pose, eye, target, Vector((0.0, 1.0, 0.0))) < AIM_DEGREES
        assert rotation_degrees(before[eye], pose[eye]) > 2.0
    # The switch follows the renamed control.
    obj.pose.bones["look"][aim.AIM] = 0.0
    obj.update_tag()
    assert rotation_degrees(before["eye.L"], evaluate(obj)["eye.L"]) < REST_DEGREES
    remove_aim(obj, "mch_L")
    assert len(obj.data.bones) == count - 5 and not find_aim_rigs(obj)
    assert not obj.animation_data or not obj.animation_data.drivers


def test_removal_gives_back_the_armature_exactly_next_to_limbs():
    obj = make_armature(both_legs() + [bone for bone in face() if bone[0] != "root"])
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    snap = snapshot(obj)
    add_aim(obj, "HEAD")
    add_aim(obj, "EYES")
    add_aim(obj, "NECK")
    assert len(find_aim_rigs(obj)) == 3
    for bone in ("head_aim", "eye.R", "neck"):
        remove_aim(obj, bone)
    assert same(snapshot(obj), snap)
    assert len(obj.ik_rigger.limbs) == 2


def test_a_failing_add_changes_nothing(monkeypatch):
    obj = make_armature(face())
    snap = snapshot(obj)
    import ik_rigger.rig.aim as rig_aim

    def broken(*args, **kwargs):
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(rig_aim, "_switch", broken)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        add_aim(obj, "EYES")
    assert same(snapshot(obj), snap)


def test_bad_input_is_refused_clearly(tmp_path):
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    with pytest.raises(RigError, match="no head found"):
        add_aim(obj, "AUTO", "shin.L")
    with pytest.raises(RuntimeError, match="no head found"):
        bpy.ops.ik_rigger.add_aim()
    assert bpy.ops.ik_rigger.remove_aim.poll() is False
    bpy.ops.ik_rigger.build_ik()
    with pytest.raises(RigError, match="belongs to the IK limb"):
        add_aim(obj, "ACTIVE", "thigh.L")
    face_rig = make_armature(face(), name="Face")
    add_aim(face_rig, "EYES")
    with pytest.raises(RigError, match="already has an aim rig"):
        add_aim(face_rig, "ACTIVE", "eye.L")
    with pytest.raises(RigError, match="not part of an aim rig"):
        remove_aim(face_rig, "spine")
    linked = _linked_rig(tmp_path)
    with pytest.raises(RigError, match="is linked from the library"):
        add_aim(linked, "ACTIVE", "thigh.L")


@pytest.mark.parametrize("distance", [math.nan, math.inf, -1.0])
def test_a_distance_that_is_no_finite_positive_number_is_refused(distance):
    """Before: NaN was taken and left every aimed bone's pose NaN."""
    obj = make_armature(face())
    before = snapshot(obj)
    with pytest.raises(RigError, match=r"'head': the aim distance must be a finite number above 0 \(got "):
        add_aim(obj, "HEAD", distance=distance)
    assert same(snapshot(obj), before)


def _turned_by_a_clip(obj: bpy.types.Object, bone: str, nla: bool) -> None:
    """``bone`` keyed at rest on frame 1 and turned on frame 10, by the armature's action or an NLA strip."""
    pose_bone = obj.pose.bones[bone]
    pose_bone.rotation_mode = "XYZ"
    pose_bone.keyframe_insert("rotation_euler", frame=1)
    pose_bone.rotation_euler = (0.4, 0.0, 0.6)
    pose_bone.keyframe_insert("rotation_euler", frame=10)
    if nla:
        data = obj.animation_data
        action = data.action
        data.action = None
        data.nla_tracks.new().strips.new(action.name, 1, action)
    bpy.context.scene.frame_set(10)


@pytest.mark.parametrize(("part", "keyed", "nla"), [("HEAD", "neck", False), ("EYES", "head", True),
                                                     ("NECK", "spine", True)])
def test_an_aim_added_where_a_clip_turns_the_bones_above_moves_nothing_until_raised(part, keyed, nla):
    """Before: the target stood where the rest pose faces, and on a frame where the clip turned the bones
    above the aimed one, the aimed bone turned toward it."""
    obj = make_armature(face())
    _turned_by_a_clip(obj, keyed, nla)
    snap = snapshot(obj)
    before = evaluate(obj)
    notes: list[str] = []
    plan, updated = add_aim(obj, part, notes=notes)
    assert not updated and obj.pose.bones[plan.control][aim.AIM] == 0.0
    moved = ", ".join(repr(name) for name in plan.aimed)
    assert len(notes) == 1 and f"moves {moved}:" in notes[0] and "raise it" in notes[0]
    assert_rest_kept(obj, before)
    # Raised, the switch aims at the target, which stands where the rest pose faces.
    obj.pose.bones[plan.control][aim.AIM] = 1.0
    obj.update_tag()
    assert max(rotation_degrees(before[name], evaluate(obj)[name]) for name in plan.aimed) > 5.0
    # Added again, the rig updates in place and still plays the clip as before.
    plan, updated = add_aim(obj, part, distance=5.0)
    assert updated and obj.pose.bones[plan.control][aim.AIM] == 0.0
    assert_rest_kept(obj, before)
    remove_aim(obj, plan.aimed[0])
    assert same(snapshot(obj), snap)


def test_an_aim_whose_target_moves_with_what_the_clip_moves_is_on():
    """The clip moving only the root moves the head's target with it: the aim stays on, and nothing moves."""
    obj = make_armature(face())
    pose_bone = obj.pose.bones["root"]
    pose_bone.keyframe_insert("location", frame=1)
    pose_bone.location = (0.3, 0.2, 0.0)
    pose_bone.rotation_quaternion = Quaternion((0.0, 0.0, 1.0), 0.7)
    pose_bone.keyframe_insert("location", frame=10)
    pose_bone.keyframe_insert("rotation_quaternion", frame=10)
    bpy.context.scene.frame_set(10)
    before = evaluate(obj)
    notes: list[str] = []
    plan, _ = add_aim(obj, "HEAD", notes=notes)
    assert obj.pose.bones[plan.control][aim.AIM] == 1.0 and notes == []
    assert_rest_kept(obj, before)


def test_the_rig_plays_without_ik_rigger(tmp_path):
    obj = make_armature(face())
    add_aim(obj, "EYES")
    add_aim(obj, "HEAD")
    obj.pose.bones["head_aim"].location = (0.2, 0.0, 0.3)
    control = obj.pose.bones["eye_aim"]
    for frame, value in ((1, 1.0), (10, 0.0)):
        control[aim.AIM] = value
        control.keyframe_insert(f'["{aim.AIM}"]', frame=frame)
    control.location = (0.1, 0.05, 0.0)
    control.keyframe_insert("location", frame=1)
    bpy.ops.object.mode_set(mode="OBJECT")
    path = tmp_path / "aimed.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    expected = frames_here(obj, [1, 10])
    played = play_elsewhere(path, [1, 10], tmp_path, move="head_aim")
    assert not played["invalid_drivers"] and "ik_rigger" not in " ".join(played["addons"])
    for frame in (1, 10):
        assert_same_poses(expected[frame], played["frames"][str(frame)][obj.name], size_of(obj))
    assert rotation_degrees(expected[1]["eye.L"], expected[10]["eye.L"]) > 1.0
    after = {name: Matrix(rows) for name, rows in played["moved"]["after"].items()}
    assert aim_error(after, "head", "head_aim", aim_direction(obj, "head", "head_aim")) < AIM_DEGREES


def test_panel_and_menus_offer_aim():
    obj = make_armature(face())
    set_active_bone(obj, "eye.L")
    log = draw(ui.IKRIG_PT_aim, obj)
    assert ("operator", "ik_rigger.add_aim") in log
    add_aim(obj, "EYES")
    before = snapshot(obj)
    log = draw(ui.IKRIG_PT_aim, obj)
    assert ("prop", "PoseBone", f'["{aim.AIM}"]') in log and ("operator", "ik_rigger.remove_aim") in log
    assert same(snapshot(obj), before)
    menu: list = []
    ui.IKRIG_MT_menu.draw(SimpleNamespace(layout=RecordingLayout(menu)), bpy.context)
    assert {("operator", "ik_rigger.add_aim"), ("operator", "ik_rigger.remove_aim")} <= set(menu)
    assert ik_rigger.aim_operators.IKRIG_OT_add_aim in ik_rigger.aim_operators.classes


def test_from_edit_mode_the_mode_is_kept_and_a_made_bone_stands_for_its_rig():
    obj = make_armature(face(), mode="EDIT")
    obj.data.edit_bones.active = obj.data.edit_bones["neck"]
    assert bpy.ops.ik_rigger.add_aim() == {"FINISHED"}
    assert obj.mode == "EDIT"
    bpy.ops.object.mode_set(mode="POSE")
    assert set(targets_of(obj)) == {"neck"}
    count = len(obj.data.bones)
    set_active_bone(obj, "neck_aim")
    assert bpy.ops.ik_rigger.add_aim(distance=5.0) == {"FINISHED"}
    assert len(obj.data.bones) == count and len(find_aim_rigs(obj)) == 1
    ahead = obj.data.bones["neck_aim"].head_local - obj.data.bones["neck"].head_local
    assert ahead.length == pytest.approx(5.0 * 0.25, rel=1e-3)
    assert bpy.ops.ik_rigger.remove_aim() == {"FINISHED"}
    assert not find_aim_rigs(obj) and len(obj.data.bones) == count - 2
