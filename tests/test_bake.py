"""Animation survives rigging: motion baked between FK and IK, kept through build, removal and batch."""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import bpy
import pytest
from helpers import (
    DATA,
    all_fcurves,
    chain_length,
    evaluate,
    keys_by_curve,
    leg_bones,
    make_armature,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
)
from mathutils import Euler, Matrix, Vector
from test_imported import Limb, limb_chain, make_character, split_limbs
from test_packaging import blender_command, isolated_env

from ik_rigger import api
from ik_rigger.core.geometry import PREBEND_DEGREES
from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig import records
from ik_rigger.rig.build import build_limbs

MOCAP_LIMBS = ("mixamorig:LeftLeg", "mixamorig:RightLeg", "mixamorig:LeftForeArm", "mixamorig:RightForeArm")


def import_mocap() -> bpy.types.Object:
    """The Mixamo motion capture in tests/data, with its 69 frames of motion (centimetres)."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 69
    return obj


def played(obj: bpy.types.Object, frames) -> dict[int, dict[str, Matrix]]:
    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        shown[frame] = {name: matrix for name, matrix in evaluate(obj).items() if obj.data.bones[name].use_deform}
    return shown


def assert_plays_the_same(obj, expected: dict[int, dict[str, Matrix]], length: float) -> None:
    now = played(obj, expected)
    for frame, poses in expected.items():
        for name, matrix in poses.items():
            moved = (matrix.translation - now[frame][name].translation).length
            turned = rotation_degrees(matrix, now[frame][name])
            assert moved < 1e-4 * length, (frame, name, moved / length)
            assert turned < 0.01, (frame, name, turned)


def key_snapshot(obj: bpy.types.Object, names: set[str]) -> dict[tuple[str, int], list[float]]:
    """The keys of the named bones' F-curves, to prove they are untouched."""
    saved = {}
    for curve in all_fcurves(obj):
        if any(curve.data_path.startswith(f'pose.bones["{name}"]') for name in names):
            co = [0.0] * (2 * len(curve.keyframe_points))
            curve.keyframe_points.foreach_get("co", co)
            saved[(curve.data_path, curve.array_index)] = co
    return saved


def user_bone_names(obj: bpy.types.Object) -> set[str]:
    return {bone.name for bone in obj.data.bones}


def test_rigging_motion_capture_keeps_every_frame():
    obj = import_mocap()
    frames = range(1, 70)
    expected = played(obj, frames)
    keys = key_snapshot(obj, user_bone_names(obj))
    bpy.ops.object.mode_set(mode="POSE")
    set_active_bone(obj, "mixamorig:LeftLeg")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert len(obj.ik_rigger.limbs) >= 4
    # The IK is really in charge: the handles carry keys, the switch is on IK.
    for limb in obj.ik_rigger.limbs:
        assert obj.pose.bones[limb.handle]["ik_fk"] == 1.0
        assert any(curve.data_path.startswith(f'pose.bones["{limb.handle}"]') for curve in all_fcurves(obj))
    assert_plays_the_same(obj, expected, chain_length(obj, ["mixamorig:LeftUpLeg", "mixamorig:LeftLeg"]))
    assert key_snapshot(obj, set(keys_owner(keys))) == keys


def keys_owner(keys) -> set[str]:
    return {path.split('"')[1] for path, _ in keys}


def test_removing_a_baked_rig_leaves_the_motion_playing():
    obj = import_mocap()
    expected = played(obj, range(1, 70, 4))
    bpy.ops.object.mode_set(mode="POSE")
    build_limbs(obj, [(name, LimbOptions()) for name in MOCAP_LIMBS])
    for name in MOCAP_LIMBS:
        set_active_bone(obj, name)
        assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert len(obj.ik_rigger.limbs) == 0
    assert_plays_the_same(obj, expected, chain_length(obj, ["mixamorig:LeftUpLeg", "mixamorig:LeftLeg"]))


def test_fk_option_leaves_the_limb_playing_its_own_keys():
    obj = import_mocap()
    expected = played(obj, range(1, 70, 6))
    build_limbs(obj, [("mixamorig:LeftLeg", LimbOptions(animation="FK"))])
    limb = obj.ik_rigger.limbs[0]
    assert not any(curve.data_path.startswith(f'pose.bones["{limb.handle}"].') for curve in all_fcurves(obj))
    bpy.context.scene.frame_set(30)
    assert obj.pose.bones[limb.handle]["ik_fk"] == 0.0
    assert_plays_the_same(obj, expected, 50.0)


def test_ignore_option_lets_the_ik_override_the_keys():
    obj = import_mocap()
    expected = played(obj, [30])
    build_limbs(obj, [("mixamorig:LeftLeg", LimbOptions(animation="IGNORE"))])
    with pytest.raises(AssertionError):
        assert_plays_the_same(obj, expected, 50.0)


def animated_leg(hips_only: bool = False, bones: int = 2, y_up: bool = False, scale: float = 1.0):
    """A leg with keyed motion: the hips bob and travel; unless ``hips_only``, the chain swings too."""
    if bones == 2:
        specs = leg_bones(bend=0.08)
        chain = ["thigh.L", "shin.L"]
    else:
        specs = [("root", (0, 0, 0), (0, 0.5, 0), None, False), ("hips", (0, 0, 1.4), (0, 0, 1.6), "root", False),
                 ("thigh.L", (0.2, 0, 1.4), (0.2, -0.05, 1.0), "hips", False),
                 ("shin.L", (0.2, -0.05, 1.0), (0.2, 0.03, 0.55), "thigh.L", True),
                 ("ankle.L", (0.2, 0.03, 0.55), (0.2, -0.02, 0.1), "shin.L", True),
                 ("foot.L", (0.2, -0.02, 0.1), (0.2, -0.2, 0.0), "ankle.L", True)]
        chain = ["thigh.L", "shin.L", "ankle.L"]
    specs = [(name, tuple(v * scale for v in head), tuple(v * scale for v in tail), parent, connected)
             for name, head, tail, parent, connected in specs]
    obj = make_armature(specs)
    if y_up:
        obj.rotation_euler = (math.radians(90), 0.0, math.radians(30))
    hips = obj.pose.bones["hips"]
    for frame in range(1, 25, 4):
        phase = frame / 24 * 2 * math.pi
        hips.location = (0.05 * scale * math.sin(phase), 0.1 * scale * math.cos(phase), 0.0)
        hips.keyframe_insert("location", frame=frame)
        if not hips_only:
            for index, name in enumerate(chain):
                pose_bone = obj.pose.bones[name]
                pose_bone.rotation_mode = "XYZ"
                # Knees stay bent by 15 degrees or more: nearly straight, an IK chain's bend is
                # decided by the last digits of Blender's single-precision solver.
                swing = 0.4 * math.sin(phase) if index == 0 else 0.45 + 0.2 * math.sin(phase + index)
                pose_bone.rotation_euler = Euler((swing, 0.1 * math.cos(phase), 0.05 * index))
                pose_bone.keyframe_insert("rotation_euler", frame=frame)
    set_active_bone(obj, chain[-1])
    return obj, chain


@pytest.mark.parametrize("case", ["chain", "hips only", "3 bones", "y-up centimetres"])
def test_build_keeps_invented_motion(case):
    obj, chain = animated_leg(hips_only=case == "hips only", bones=3 if case == "3 bones" else 2,
                              y_up=case.startswith("y-up"), scale=100.0 if "centimetres" in case else 1.0)
    expected = played(obj, range(1, 26))
    keys = key_snapshot(obj, user_bone_names(obj))
    assert bpy.ops.ik_rigger.build_ik(chain_length=len(chain)) == {"FINISHED"}
    assert_plays_the_same(obj, expected, chain_length(obj, chain))
    assert key_snapshot(obj, keys_owner(keys)) == keys


def test_keys_between_frames_keep_playing_before_the_first_and_after_the_last(capsys):
    """glTF clips keep their keys in seconds: at the scene's rate they fall between frames (0.6 to
    20.4 here). Before the first key and after the last the keys hold, so the IK controls must
    hold the same poses: keyed from the frame before the first key to the frame after the last."""
    obj, chain = animated_leg()
    for curve in all_fcurves(obj):
        for point in curve.keyframe_points:
            for attribute in ("co", "handle_left", "handle_right"):
                value = getattr(point, attribute)
                value.x = 0.6 + (value.x - 1.0) * 0.99
    expected = played(obj, range(-2, 26))
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert "baked 22 frames" in "".join(capsys.readouterr())  # 0 to 21
    assert_plays_the_same(obj, expected, chain_length(obj, chain))


def _with_clips(obj: bpy.types.Object) -> tuple[bpy.types.Action, bpy.types.Action]:
    """The armature's keyed walk, and a kick and a breath in muted NLA tracks, as glTF's and FBX's
    importers leave a file's other clips. The kick swings the leg its own way and keys every
    channel it moves the leg by, as exported clips do; the breath moves only a toe, no bone of the leg."""
    data = obj.animation_data
    walk = data.action
    kick, breath = bpy.data.actions.new("kick"), bpy.data.actions.new("breath")
    data.action = kick
    for frame in range(3, 16, 4):
        for index, name in enumerate(("hips", "thigh.L", "shin.L")):
            pose_bone = obj.pose.bones[name]
            pose_bone.rotation_mode = "XYZ"
            pose_bone.rotation_euler = (0.3 + 0.05 * frame * (index + 1), 0.02 * frame, 0.0)
            pose_bone.keyframe_insert("rotation_euler", frame=frame)
        obj.pose.bones["hips"].location = (0.01 * frame, 0.0, -0.02)
        obj.pose.bones["hips"].keyframe_insert("location", frame=frame)
    data.action = breath
    obj.pose.bones["toe.L"].keyframe_insert("location", frame=1)
    data.action = walk
    for clip in (kick, breath):
        track = data.nla_tracks.new()
        track.strips.new(clip.name, 1, clip)
        track.mute = True
    for name in ("hips", "thigh.L", "shin.L"):
        obj.pose.bones[name].rotation_euler = (0.0, 0.0, 0.0)
    return walk, kick


def _playing(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    """Make ``action`` the one that plays, as an animator picks a clip in the Action Editor."""
    obj.animation_data.action = action
    obj.animation_data.use_nla = False


def test_clips_that_do_not_play_keep_playing_once_made_active(capsys, tmp_path):
    """A file's other clips do not play, but each is one the animator may pick: the build keys the
    IK controls in each clip's own action, so each plays as it did when made active, as does the
    walk that played; a clip that does not move the limb is left alone, and nothing else changes."""
    obj, chain = animated_leg()
    walk, kick = _with_clips(obj)
    expected = played(obj, range(1, 26))
    _playing(obj, kick)
    expected_kick = played(obj, range(1, 18))
    _playing(obj, walk)
    obj.animation_data.use_nla = True
    obj.pose.bones["hips"].rotation_euler = (0.0, 0.0, 0.0)  # the kick turned it; the walk does not key it
    bpy.context.scene.frame_set(1)
    kick_keys = _keys_of(kick)
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    out = "".join(capsys.readouterr())
    assert "kept the motion of shin.L in the file's other clips 'kick': keyed its IK controls in each clip's " \
           "own action, so each plays as it did when made active" in out
    assert "breath" not in out
    handle = obj.ik_rigger.limb_of("shin.L").handle
    assert obj.animation_data.action == walk and obj.animation_data.use_nla
    assert_plays_the_same(obj, expected, chain_length(obj, chain))
    _playing(obj, kick)
    assert_plays_the_same(obj, expected_kick, chain_length(obj, chain))
    # Saved with the kick active, it plays the same in a Blender where IK Rigger is not installed.
    from test_pipeline import as_matrix, play_elsewhere

    path = tmp_path / "kick.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    frames = [1, 5, 9, 13, 17]
    elsewhere = play_elsewhere(path, frames, tmp_path)["frames"]
    for frame in frames:
        for name, matrix in expected_kick[frame].items():
            other = as_matrix(elsewhere[str(frame)][obj.name][name])
            assert (matrix.translation - other.translation).length < 1e-4 * chain_length(obj, chain), (frame, name)
            assert rotation_degrees(matrix, other) < 0.01, (frame, name)
    assert any(handle in path for path, _ in _keys_of(kick))
    assert {key: value for key, value in _keys_of(kick).items() if key in kick_keys} == kick_keys  # the user's stay
    assert set(_keys_of(bpy.data.actions["breath"])) == {('pose.bones["toe.L"].location', index) for index in range(3)}
    # Removing the limb takes its keys out of every clip.
    _playing(obj, walk)
    obj.animation_data.use_nla = True
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    for action in bpy.data.actions:
        assert not [curve for curve in _curves_of(action) if handle in curve.data_path], action.name
    assert _keys_of(kick) == kick_keys


def _deforming(obj: bpy.types.Object, frames) -> dict[int, dict[str, Matrix]]:
    """What moves the mesh on each frame: each deforming bone's pose times its rest's inverse."""
    return {frame: {name: pose @ obj.data.bones[name].matrix_local.inverted() for name, pose in poses.items()}
            for frame, poses in played(obj, frames).items()}


@pytest.mark.parametrize(("animation", "ik_fk"), [("BAKE", 1.0), ("BAKE", 0.0), ("FK", None)],
                         ids=["baked, in IK", "baked, in FK", "left playing in FK"])
def test_fix_bone_orientation_keeps_the_motion_and_the_clips(animation, ik_fk):
    """Bones turned by Fix Bone Orientation play the motion they had, in IK and in FK: their
    keys are keyed anew on their new rests; before, the IK bent the knee the other way, and FK
    turned them differently."""
    obj, chain = animated_leg()
    walk, kick = _with_clips(obj)
    bpy.ops.object.mode_set(mode="EDIT")
    for name in ("thigh.L", "shin.L", "foot.L"):
        obj.data.edit_bones[name].use_connect = False
    for name, tail in (("thigh.L", (0.2, -0.9, 0.9)), ("shin.L", (0.2, -0.8, 0.2))):  # as importers leave them
        obj.data.edit_bones[name].tail = tail
    bpy.ops.object.mode_set(mode="POSE")
    expected = {}
    for clip in (kick, walk):
        _playing(obj, clip)
        expected[clip.name] = _deforming(obj, range(0, 27))
    obj.animation_data.use_nla = True
    assert bpy.ops.ik_rigger.build_ik(fix_orientation=True, animation=animation) == {"FINISHED"}
    limb = obj.ik_rigger.limb_of("shin.L")
    bones = obj.data.bones
    assert (bones["thigh.L"].tail_local - bones["shin.L"].head_local).length < 1e-5  # turned onto the knee
    if ik_fk is not None:
        obj.pose.bones[limb.handle]["ik_fk"] = ik_fk
    length = chain_length(obj, chain)
    for clip in (kick, walk):
        _playing(obj, clip)
        now = _deforming(obj, range(0, 27))
        for frame, deforms in expected[clip.name].items():
            for name, deform in deforms.items():
                for corner in ((0, 0, 0), (0, 0.3, 0), (0.1, 0, 0.1)):  # points of the mesh near the bone
                    moved = (deform @ Vector(corner) - now[frame][name] @ Vector(corner)).length
                    assert moved < 1e-4 * length, (clip.name, frame, name, moved / length)


def test_fix_bone_orientation_leaves_the_keys_of_a_foot_hanging_from_the_root():
    """A game rig's foot under the root (Quaternius' animals: its IK target, skinned) does not hang
    from the turned bones, so its own keys mean what they did: a clip that had none gets none,
    and the motion plays as it did."""
    obj, chain = animated_leg()
    bpy.ops.object.mode_set(mode="EDIT")
    bones = obj.data.edit_bones
    bones["foot.L"].use_connect = False
    bones["foot.L"].parent = bones["root"]
    bones["shin.L"].use_connect = False
    for name, tail in (("thigh.L", (0.2, -0.9, 0.9)), ("shin.L", (0.2, -0.8, 0.2))):  # as importers leave them
        bones[name].tail = tail
    bpy.ops.object.mode_set(mode="POSE")
    expected = _deforming(obj, range(1, 26))
    built = api.auto_rig(obj, fix_orientation=True)
    assert [(limb.chain, limb.extremity) for limb in built] == [(("thigh.L", "shin.L"), "foot.L")]
    assert (obj.data.bones["thigh.L"].tail_local - obj.data.bones["shin.L"].head_local).length < 1e-5  # turned
    paths = {curve.data_path for curve in _curves_of(obj.animation_data.action)}
    assert any('"shin.L"' in path for path in paths)  # the turned bones keyed anew
    assert not any('"foot.L"' in path for path in paths)
    length = chain_length(obj, chain)
    now = _deforming(obj, range(1, 26))
    for frame, deforms in expected.items():
        for name, deform in deforms.items():
            for corner in ((0, 0, 0), (0, 0.3, 0), (0.1, 0, 0.1)):  # points of the mesh near the bone
                moved = (deform @ Vector(corner) - now[frame][name] @ Vector(corner)).length
                assert moved < 1e-4 * length, (frame, name, moved / length)


def test_the_frames_a_build_records_evaluate_the_armature_and_what_it_depends_on_alone():
    """Stepping through the motion's frames, a build leaves the character's meshes and the
    armature's other children out of Blender's evaluation (most of a frame's cost); one the
    armature follows (an animated empty, its child, that its hips copy) is still evaluated,
    as its dependency, so the motion is kept; everything is shown again after."""
    obj, chain = animated_leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=20, y_subdivisions=20, size=1.0, location=(0.2, 0.0, 0.5))
    mesh = bpy.context.active_object
    mesh.modifiers.new("Armature", "ARMATURE").object = obj
    mesh.vertex_groups.new(name="shin.L").add(list(range(len(mesh.data.vertices))), 1.0, "REPLACE")
    guide = bpy.data.objects.new("Guide", None)
    bpy.context.scene.collection.objects.link(guide)
    guide.parent = obj  # one of the armature's children: put to sleep with the mesh
    for frame, x in ((1, 0.0), (21, 0.3)):  # within the leg's motion, which the build bakes
        guide.location = (x, 0.0, 0.0)
        guide.keyframe_insert("location", frame=frame)
    follow = obj.pose.bones["hips"].constraints.new("COPY_LOCATION")  # the chain's parent, not the handle's
    follow.target = guide
    follow.use_offset = True
    mesh.select_set(True)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    expected = played(obj, range(1, 22))
    evaluated: list[bool] = []  # per frame stepped through: whether the mesh was evaluated
    guide_asleep: list[bool] = []

    def seen(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
        evaluated.append(mesh.name in {instance.name for instance in depsgraph.objects})
        guide_asleep.append(guide.hide_viewport)

    bpy.app.handlers.frame_change_post.append(seen)
    try:
        built = api.auto_rig(obj)
    finally:
        bpy.app.handlers.frame_change_post.remove(seen)
    assert [limb.name for limb in built] == ["shin.L"]
    recorded = evaluated[:-1]  # the last one gives back the frame, everything shown
    assert len(recorded) >= 20 and not any(recorded) and evaluated[-1], evaluated
    assert all(guide_asleep[:-1]) and not guide_asleep[-1]
    assert not mesh.hide_viewport and not guide.hide_viewport
    assert mesh.select_get()  # Blender deselects what it disables: selected again
    # The hips followed the guide on every frame recorded: the motion is kept.
    assert_plays_the_same(obj, expected, chain_length(obj, chain))


def _guide(name: str = "Guide", frames=((1, 0.0), (21, 0.3), (41, -0.2))) -> bpy.types.Object:
    """An empty keyed to travel over frames 1 to 41."""
    guide = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(guide)
    for frame, x in frames:
        guide.location = (x, 0.1 * x, 0.05 * x)
        guide.keyframe_insert("location", frame=frame)
    return guide


@pytest.mark.parametrize("case", ["another object", "beyond its own keys", "a bone of its own", "a driver",
                                  "the target's parent"])
def test_motion_the_armature_follows_is_kept(case):
    """The hips move by what they follow, not by keys of their own (or by keys that end sooner):
    an animated empty they copy, a keyed bone of the armature, a driver reading an empty, an
    empty whose parent is keyed. Rigging the leg bakes that motion too, over the frames it
    plays, so the leg plays as it did."""
    obj = make_armature([*leg_bones(bend=0.08), ("hips_ctrl", (0, 0.5, 1.0), (0, 0.5, 1.2), "root", False)])
    bpy.ops.object.mode_set(mode="OBJECT")
    hips = obj.pose.bones["hips"]
    if case == "a driver":
        curve = hips.driver_add("location", 0)
        variable = curve.driver.variables.new()
        variable.type = "TRANSFORMS"
        variable.targets[0].id = _guide()
        variable.targets[0].transform_type = "LOC_X"
        curve.driver.expression = variable.name
    else:
        follow = hips.constraints.new("COPY_LOCATION")
        follow.use_offset = True
        if case == "a bone of its own":
            follow.target, follow.subtarget = obj, "hips_ctrl"
            control = obj.pose.bones["hips_ctrl"]
            for frame, x in ((1, 0.0), (21, 0.3), (41, -0.2)):
                control.location = (x, 0.1 * x, 0.05)
                control.keyframe_insert("location", frame=frame)
        elif case == "the target's parent":
            follow.target = bpy.data.objects.new("Guide", None)
            bpy.context.scene.collection.objects.link(follow.target)
            follow.target.parent = _guide("Holder")
        else:
            follow.target = _guide()
    if case == "beyond its own keys":
        thigh = obj.pose.bones["thigh.L"]
        thigh.rotation_mode = "XYZ"
        for frame, angle in ((1, 0.0), (11, 0.3)):
            thigh.rotation_euler = (angle, 0.0, 0.0)
            thigh.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    frames = range(1, 42, 4)
    expected = played(obj, frames)
    built = api.auto_rig(obj)
    assert [limb.name for limb in built] == ["shin.L"]
    limb = obj.ik_rigger.limbs[0]
    assert obj.pose.bones[limb.handle]["ik_fk"] == 1.0  # the IK plays it
    assert_plays_the_same(obj, expected, chain_length(obj, ["thigh.L", "shin.L"]))


def test_a_still_object_the_armature_follows_adds_no_keys():
    """Following an object that does not move is no motion: nothing is baked, no action is made."""
    obj = make_armature(leg_bones(bend=0.08))
    bpy.ops.object.mode_set(mode="OBJECT")
    still = bpy.data.objects.new("Still", None)
    bpy.context.scene.collection.objects.link(still)
    follow = obj.pose.bones["hips"].constraints.new("COPY_LOCATION")
    follow.target = still
    follow.use_offset = True
    bpy.context.view_layer.objects.active = obj
    assert [limb.name for limb in api.auto_rig(obj)] == ["shin.L"]
    assert obj.animation_data is None or obj.animation_data.action is None


def test_a_build_that_fails_after_keying_the_clips_leaves_them_as_they_were(monkeypatch):
    from test_pipeline import InjectedError, _fail_on

    from ik_rigger.rig import build

    obj, _chain = animated_leg()
    walk, kick = _with_clips(obj)
    bpy.context.scene.frame_set(1)  # what plays shown, as a build leaves it
    before = snapshot(obj)
    keys = {action.name: _keys_of(action) for action in (walk, kick)}
    _fail_on(monkeypatch, build, "_set_version", 1)  # after every key is written
    with pytest.raises(InjectedError):
        build.build_limbs(obj, [("shin.L", build.LimbOptions())])
    assert {action.name: _keys_of(action) for action in (walk, kick)} == keys
    assert same(snapshot(obj), before)
    assert obj.animation_data.action == walk and obj.animation_data.use_nla


def _keys_of(action: bpy.types.Action) -> dict[tuple[str, int], list[float]]:
    """Every key of ``action``, by F-curve."""
    return keys_by_curve(_curves_of(action))


def _curves_of(action: bpy.types.Action) -> list:
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    return [curve for layer in action.layers for strip in layer.strips for bag in strip.channelbags
            for curve in bag.fcurves]


def test_an_fbx_files_other_takes_keep_playing(tmp_path, capsys):
    """Blender's FBX importer keeps a file's other takes as actions of their own (a fake user, no
    NLA): each is baked as a clip, so the take an animator makes active plays as it did; an
    action the file keeps for another armature is left alone."""
    obj, chain = animated_leg()
    _walk, _kick = _with_clips(obj)
    for track in list(obj.animation_data.nla_tracks):
        obj.animation_data.nla_tracks.remove(track)
    for action in bpy.data.actions:
        action.use_fake_user = True
    path = tmp_path / "takes.fbx"
    bpy.ops.export_scene.fbx(filepath=str(path), bake_anim=True, bake_anim_use_all_actions=True,
                             bake_anim_use_nla_strips=False, add_leaf_bones=False)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.fbx(filepath=str(path))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    other = make_armature([("other_root", (3, 0, 0), (3, 0, 1), None, False)], name="Other", mode="OBJECT")
    other_clip = bpy.data.actions.new("other_clip")  # the other armature's, kept with a fake user
    other.animation_data_create()
    other.animation_data.action = other_clip
    other.pose.bones["other_root"].keyframe_insert("location", frame=1)
    other.animation_data.action = None
    other_clip.use_fake_user = True
    active = obj.animation_data.action
    takes = [action for action in bpy.data.actions if action not in (active, other_clip)]
    assert [action.use_fake_user and action.users == 1 for action in takes] == [True] * len(takes) and takes
    expected = {}
    for take in takes:
        _playing(obj, take)
        expected[take.name] = _deforming(obj, range(0, 22))
    _playing(obj, active)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert "in the file's other clips" in "".join(capsys.readouterr())
    length = chain_length(obj, chain)
    for take in takes:
        _playing(obj, take)
        for frame, deforms in _deforming(obj, range(0, 22)).items():
            for name, deform in deforms.items():
                before = expected[take.name][frame][name]
                assert (before.translation - deform.translation).length < 1e-4 * length, (take.name, frame, name)
    assert set(_keys_of(other_clip)) == {('pose.bones["other_root"].location', index) for index in range(3)}
    handle = obj.ik_rigger.limb_of("shin.L").handle
    assert all(any(handle in path for path, _ in _keys_of(take)) for take in takes)
    _playing(obj, active)
    api.remove(obj, "shin.L")
    assert not [take.name for take in takes if any(handle in path for path, _ in _keys_of(take))]


def test_a_clip_linked_from_a_library_is_left_to_the_library(tmp_path, capsys):
    """A clip linked from another .blend cannot take keys here: it is left as it is, and the rest is rigged."""
    obj, _chain = animated_leg()
    _walk, kick = _with_clips(obj)
    library = tmp_path / "clips.blend"
    bpy.data.libraries.write(str(library), {kick}, fake_user=True)
    kick.name = "kick_local"
    with bpy.data.libraries.load(str(library), link=True) as (source, target):
        target.actions = ["kick"]
    linked = target.actions[0]
    assert linked.library is not None
    track = obj.animation_data.nla_tracks.new()
    track.strips.new("kick", 1, linked)
    track.mute = True
    keys = _keys_of(linked)
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert _keys_of(linked) == keys
    out = "".join(capsys.readouterr())
    assert "'kick_local'" in out and len(obj.ik_rigger.limbs) == 1
    assert "the action 'kick' also moves shin.L but was left as it is: it is linked from the library" in out


def test_clips_are_only_named_when_the_option_ignores_motion(capsys):
    obj, chain = animated_leg()
    _with_clips(obj)
    assert bpy.ops.ik_rigger.build_ik(animation="IGNORE") == {"FINISHED"}
    out = "".join(capsys.readouterr())
    assert ("the file's other clips 'kick' also move shin.L; made active, they play under its IK controls: to play "
            "one as it was, switch the limb to FK, or key its controls from it with Bake IK/FK (FK to IK)") in out
    assert not [curve for curve in _curves_of(bpy.data.actions["kick"]) if "_IK" in curve.data_path]


def test_nla_strips_bake_what_plays(capsys):
    obj, chain = animated_leg()
    expected = played(obj, range(1, 26))
    data = obj.animation_data
    track = data.nla_tracks.new()
    track.strips.new("walk", 1, data.action)
    data.action = None
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    out = capsys.readouterr()
    assert "NLA" in out.out + out.err
    assert_plays_the_same(obj, expected, chain_length(obj, chain))


def test_bake_fk_to_ik_and_back():
    obj, chain = animated_leg()
    # Rig without touching the motion, then animate FK: the IK/FK switch is on FK.
    assert bpy.ops.ik_rigger.build_ik(animation="IGNORE") == {"FINISHED"}
    limb = obj.ik_rigger.limbs[0]
    handle = obj.pose.bones[limb.handle]
    handle["ik_fk"] = 0.0
    obj.update_tag()
    fk = played(obj, range(1, 26))
    assert bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=25, key_switch=True) == {"FINISHED"}
    bpy.context.scene.frame_set(12)
    assert handle["ik_fk"] == 1.0
    length = chain_length(obj, chain)
    assert_plays_the_same(obj, fk, length)
    # Now animate the IK differently and bake it back to FK.
    handle.location = (0.0, 0.0, 0.15)
    handle.keyframe_insert("location", frame=13)
    ik = played(obj, range(1, 26))
    assert bpy.ops.ik_rigger.bake(direction="IK_TO_FK", frame_start=1, frame_end=25, key_switch=True,
                                  clear_other=True) == {"FINISHED"}
    bpy.context.scene.frame_set(12)
    assert handle["ik_fk"] == 0.0
    assert not [c for c in all_fcurves(obj) if c.data_path.startswith(f'pose.bones["{limb.handle}"].')]
    assert_plays_the_same(obj, ik, length)


def test_bake_refuses_an_empty_range():
    obj, _ = animated_leg()
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    with pytest.raises(RuntimeError, match="empty"):
        bpy.ops.ik_rigger.bake(frame_start=10, frame_end=2)


def test_the_batch_command_keeps_the_motion(tmp_path):
    obj = import_mocap()
    frames = list(range(1, 70, 8))
    expected = played(obj, frames)
    bpy.ops.object.mode_set(mode="OBJECT")
    source = tmp_path / "in" / "mocap.blend"
    source.parent.mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    script = Path(__file__).resolve().parent.parent / "scripts" / "rig_batch.py"
    home = tmp_path / "home"
    home.mkdir()
    for animation, folder in (("", "out"), ("fk", "fk")):
        report = tmp_path / f"{folder}.json"
        result = subprocess.run(
            blender_command(script, str(source), "--out", str(tmp_path / folder), "--report", str(report),
                            *(["--animation", animation] if animation else [])),
            cwd=tmp_path, env=isolated_env(home), capture_output=True, text=True, timeout=300, check=False)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        notes = " ".join(note for entry in json.loads(report.read_text())["files"] for armature in entry["armatures"]
                         for note in armature["notes"])
        bpy.ops.wm.open_mainfile(filepath=str(tmp_path / folder / "mocap.blend"))
        rigged = next(item for item in bpy.data.objects if item.type == "ARMATURE")
        assert len(rigged.ik_rigger.limbs) >= 4
        handle = rigged.pose.bones[rigged.ik_rigger.limbs[0].handle]
        if animation == "fk":
            assert "keeps playing its own keys" in notes
            bpy.context.scene.frame_set(20)
            assert handle["ik_fk"] == 0.0
        else:
            # The report says, per limb, how many frames were baked and how long it took.
            assert re.search(r"kept the motion of mixamorig:LeftLeg: baked 69 frames onto its IK controls in "
                             r"\d+\.\d+ s", notes), notes
            assert handle["ik_fk"] == 1.0
        assert_plays_the_same(rigged, expected, chain_length(rigged, ["mixamorig:LeftUpLeg", "mixamorig:LeftLeg"]))


def test_made_bones_of_a_baked_limb_have_keys_and_records_name_them():
    obj, chain = animated_leg()
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    parts = records.resolve(obj, obj.ik_rigger.limbs[0])
    paths = {curve.data_path for curve in all_fcurves(obj)}
    for name in (parts.handle, parts.pole, parts.clone):
        assert any(path.startswith(f'pose.bones["{name}"]') for path in paths), name
    end = evaluate(obj)[chain[-1]] @ Vector((0.0, obj.data.bones[chain[-1]].length, 0.0))
    assert (end - evaluate(obj)[parts.handle].translation).length < 1e-4 * chain_length(obj, chain)


@pytest.mark.parametrize("family", [None, "daz", "makehuman"])
def test_straight_limbs_and_split_segments_keep_motion_exactly(family):
    """Straight arms that their motion bends on every frame are not pre-bent, so their keys play on the
    rest they were made for; and motion capture retargeted to a split skeleton bends the second halves
    too (MakeHuman's own poses bend upperleg02 by 12 degrees): the rig plays all of it exactly."""
    obj = make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05, family=family).obj
    bpy.ops.object.mode_set(mode="POSE")
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 25
    limbs = split_limbs(family) if family else [
        Limb(f"{segment}.{side}", 2, None, None) for side in "LR" for segment in ("shin", "forearm")]
    chains = {limb.last: limb_chain(obj, limb) for limb in limbs}
    for frame in range(1, 25, 4):
        phase = frame / 24 * 2 * math.pi
        for chain in chains.values():
            for index, name in enumerate(chain):
                pose_bone = obj.pose.bones[name]
                pose_bone.rotation_mode = "XYZ"
                halfway = index % 2 == 1 if len(chain) == 4 else len(chain) == 3 and index == 1
                pose_bone.rotation_euler = (Euler((0.08 * math.sin(phase), 0.3 * math.cos(phase), 0.05)) if halfway
                                            else Euler((0.3 + 0.2 * math.sin(phase), 0.1 * math.cos(phase), 0.05)))
                pose_bone.keyframe_insert("rotation_euler", frame=frame)
    expected = played(obj, range(1, 26))
    keys = key_snapshot(obj, user_bone_names(obj))
    rest = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert {limb.name for limb in obj.ik_rigger.limbs} == set(chains)
    # The arms were straight: bent by their motion, they keep their rest.
    assert not any(limb.prebent for limb in obj.ik_rigger.limbs)
    assert all(rotation_degrees(rest[bone.name], bone.matrix_local) < 1e-4 for bone in obj.data.bones
               if bone.name in rest)
    assert_plays_the_same(obj, expected, min(chain_length(obj, chain) for chain in chains.values()))
    assert key_snapshot(obj, keys_owner(keys)) == keys


def test_a_straight_limb_its_motion_leaves_straight_is_pre_bent_still():
    """Left straight, IK could never bend it: the chain is pre-bent and says so. Its IK moves the mesh
    as the motion did (the bones turned by the pre-bend only); its own keys, in FK, play within it."""
    obj = make_armature(leg_bones(bend=0.0))
    hips, thigh = obj.pose.bones["hips"], obj.pose.bones["thigh.L"]
    thigh.rotation_mode = "XYZ"
    for frame in (1, 13, 25):
        phase = frame / 24 * 2 * math.pi
        hips.location = (0.0, 0.1 * math.sin(phase), 0.0)
        hips.keyframe_insert("location", frame=frame)
        thigh.rotation_euler = (0.0, 0.3 * math.sin(phase), 0.2 * math.cos(phase))  # twists and swings, straight
        thigh.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 25
    expected = played(obj, range(1, 26))
    rest_before = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    built = api.build(obj, "shin.L")
    assert [limb.name for limb in obj.ik_rigger.limbs] == ["shin.L"]
    assert obj.ik_rigger.limbs[0].prebent
    assert any("was pre-bent" in note for note in built[0].notes)
    assert any("pre-bent all the same: its IK plays the motion as it was, and its own keys, played in FK, within 1 "
               "degree of it" in note for note in built[0].notes)
    length = chain_length(obj, ["thigh.L", "shin.L"])
    for frame, deforms in _deforming(obj, range(1, 26)).items():
        for name, deform in deforms.items():
            before = expected[frame][name] @ rest_before[name].inverted()
            for corner in ((0, 0, 0), (0, 0.3, 0), (0.1, 0, 0.1)):
                assert (before @ Vector(corner) - deform @ Vector(corner)).length < 1e-4 * length, (frame, name)
    obj.pose.bones[obj.ik_rigger.limbs[0].handle]["ik_fk"] = 0.0
    now = played(obj, range(1, 26))
    worst = max(rotation_degrees(expected[frame][name], now[frame][name]) for frame in expected
                for name in ("thigh.L", "shin.L"))
    assert 0.01 < worst <= PREBEND_DEGREES + 0.01
    # Removed, the chain gets its rest back and the motion, baked onto it on that rest, plays as it did.
    obj.pose.bones[obj.ik_rigger.limbs[0].handle]["ik_fk"] = 1.0
    assert any("kept the limb's motion" in message for message in api.remove(obj, "shin.L"))
    assert_plays_the_same(obj, expected, length)


def _stored_take_keying_a_lost_bone(obj: bpy.types.Object) -> bpy.types.Action:
    """The kick as a take the file keeps (a fake user, no NLA), that also keys a bone the armature
    no longer has, as exported takes key an exporter's helper bones or a bone deleted since."""
    _walk, kick = _with_clips(obj)
    for track in list(obj.animation_data.nla_tracks):
        obj.animation_data.nla_tracks.remove(track)
    kick.use_fake_user = True
    bpy.ops.object.mode_set(mode="EDIT")
    prop = obj.data.edit_bones.new("prop")
    prop.head, prop.tail = (0.5, 0, 1), (0.5, 0, 1.2)
    bpy.ops.object.mode_set(mode="POSE")
    walk = obj.animation_data.action
    obj.animation_data.action = kick
    obj.pose.bones["prop"].location = (0.0, 0.3, 0.0)
    obj.pose.bones["prop"].keyframe_insert("location", frame=3)
    obj.animation_data.action = walk
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.remove(obj.data.edit_bones["prop"])
    bpy.ops.object.mode_set(mode="POSE")
    assert any("prop" in path for path, _ in _keys_of(kick))
    return kick


def test_a_take_that_also_keys_bones_the_armature_lacks_keeps_playing(capsys):
    """A take keying a bone the armature lacks is still this armature's (it has more of its bones
    than any other): the build keys the controls into it, so it plays as it did when made active.
    Before, it was passed over without a word and its leg played under the IK, far off."""
    obj, chain = animated_leg()
    kick = _stored_take_keying_a_lost_bone(obj)
    walk = obj.animation_data.action
    _playing(obj, kick)
    expected = _deforming(obj, range(1, 18))
    _playing(obj, walk)
    bpy.context.scene.frame_set(1)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert "in the file's other clips 'kick'" in "".join(capsys.readouterr())
    length = chain_length(obj, chain)
    _playing(obj, kick)
    for frame, deforms in _deforming(obj, range(1, 18)).items():
        for name, deform in deforms.items():
            moved = (expected[frame][name].translation - deform.translation).length
            assert moved < 1e-4 * length, (frame, name, moved / length)


def test_a_take_another_armature_fits_as_well_is_named_not_passed_over(capsys):
    """A take that another armature of the file fits as well (the same bone names) may be either's:
    it is left as it is, and the build's notes name it, the limb it moves, and what to do."""
    obj, _chain = animated_leg()
    kick = _stored_take_keying_a_lost_bone(obj)
    keys = _keys_of(kick)
    twin = make_armature(leg_bones(), name="Twin", mode="OBJECT")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    assert twin.data != obj.data
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    out = "".join(capsys.readouterr())
    assert "the action 'kick' also moves shin.L but was left as it is" in out
    assert "the armature 'Twin' fits it as well, with as many of the bones it keys; to play it through the rig, " \
        "make it active on this armature and key the controls from it with Bake IK/FK (FK to IK)" in out
    assert _keys_of(kick) == keys
