"""The trip to game engines (api.export) proven on what users bring: a bone flattened along some of its
axes over the bones under it, characters as their importers leave them rigged with the options users turn
on and keyed through their IK controls, and hostile names and paths. Each file is read by readers that are
not IK Rigger's (Khronos' validator, three.js, Blender's FBX importer in a fresh process, assimp) and held
against the rig Blender evaluates, every joint on every frame."""

from __future__ import annotations

import json
from pathlib import Path

import bpy
import numpy as np
import pytest
from export_readers import (
    ASSIMP_UNIT,
    DEGREES,
    POSITION,
    Y_UP,
    assimp_play,
    blender_rest,
    blender_world,
    compare,
    fbx_play,
    height,
    three_play,
    validate,
)
from test_export import (
    assert_fbx_plays_the_rig,
    assert_three_plays_the_rig,
    expected_clips,
    legs_character,
    state,
)
from test_export_options import _key, _key_controls, _metarig
from test_hidden_chain import import_gltf

from ik_rigger import api

# What the validator may say of our files without an error: a skinned mesh under the armature's node, as
# Blender's glTF exporter writes every skinned mesh (three.js and the engines skin it from the joints).
VALIDATOR_WARNINGS = {"NODE_SKINNED_MESH_NON_ROOT"}


def _assert_valid(path: Path) -> None:
    issues = validate(str(path))["issues"]
    assert issues["numErrors"] == 0, issues["messages"]
    assert {message["code"] for message in issues["messages"] if message["severity"] <= 1} <= VALIDATOR_WARNINGS, (
        issues["messages"])


def _flat_joints(obj: bpy.types.Object, frames: list[dict[str, np.ndarray]]) -> set[str]:
    """The joints Blender shows scaled to nothing along some axis on some frame: they show no turn."""
    return {name for frame in frames for name, matrix in frame.items()
            if np.linalg.svd(matrix[:3, :3], compute_uv=False).min() < 1e-4 * np.abs(matrix[:3, :3]).max()}


def _assert_plays(obj: bpy.types.Object, report, played: dict, played_rest: dict, axes: np.ndarray,
                  unit: float = 1.0) -> None:
    """Every joint where the rig puts it on every frame; turned as it is, but for joints shown flat."""
    rest = blender_rest(obj, list(report.joints))
    for name, frames in expected_clips(obj, report).items():
        moved, _ = compare(played[name], played_rest, frames, rest, height(obj), axes, unit)
        assert moved < POSITION, (name, moved)
        flat = _flat_joints(obj, frames)
        kept = [{joint: matrix for joint, matrix in frame.items() if joint not in flat} for frame in frames]
        _, turned = compare(played[name], played_rest, kept, rest, height(obj), axes, unit)
        assert turned < DEGREES, (name, turned)


@pytest.mark.parametrize("scale", [(1.0, 0.0, 1.0), (0.0, 0.0, 1.0)], ids=["one axis", "two axes"])
def test_a_bone_flattened_along_some_axes_places_the_bones_under_it_as_the_rig_does(tmp_path, scale):
    """An animator flattens the right hand (along its length, or along two axes) and the left forearm across,
    over the bones under them: both exporters place each bone from its parent's pose inverted, which a flat
    bone has none of, and the fingers landed millions of heights off (a warning said so). Written thin (1% of
    its scale) along those axes, with each bone under it placed from where that thin bone carries it, every
    joint plays where the rig puts it, in three.js, Blender's FBX importer and assimp."""
    obj = _metarig()
    _key(obj.pose.bones["hand.R"], "scale", {1: (1.0, 1.0, 1.0), 12: scale, 25: scale, 30: (1.0, 1.0, 1.0)})
    # Turned while flat: what it keeps of its axes turns with it.
    _key(obj.pose.bones["hand.R"], "rotation_quaternion", {12: (1.0, 0.0, 0.0, 0.0), 25: (0.7, 0.5, 0.3, 0.4)})
    _key(obj.pose.bones["forearm.L"], "scale", {1: (1.0, 1.0, 1.0), 20: (0.0, 1.0, 1.0)})
    _key(obj.pose.bones["hand.L"], "rotation_quaternion", {1: (1.0, 0.0, 0.0, 0.0), 20: (0.9, 0.3, 0.3, 0.0)})
    bpy.ops.object.mode_set(mode="OBJECT")
    before = state()
    report = api.export(obj, str(tmp_path / "flat.glb"))
    assert state() == before
    assert [warning for warning in report.warnings if "roots" not in warning] == []
    _assert_valid(tmp_path / "flat.glb")
    fps = bpy.context.scene.render.fps
    played = three_play(str(tmp_path / "flat.glb"), fps)
    _assert_plays(obj, report, played.clips, played.rest, Y_UP)
    # The axes the flat hand keeps lie as in the rig (before, one flattened along two held the turn it had
    # before it was flat: 90 degrees off by frame 25).
    shown = blender_world(obj, obj.animation_data.action, list(range(1, 31)), ["hand.R"])
    for frame, (rig, file) in enumerate(zip(shown, played.clips[report.clips[0].name]), 1):
        for axis in range(3):
            expected, got = Y_UP @ rig["hand.R"][:3, axis], file["hand.R"][:3, axis]
            if np.linalg.norm(expected) > 1e-3 * np.abs(rig["hand.R"][:3, :3]).max():
                cosine = expected @ got / np.linalg.norm(expected) / np.linalg.norm(got)
                assert np.degrees(np.arccos(min(1.0, cosine))) < DEGREES, (frame, axis)
    report = api.export(obj, str(tmp_path / "flat.fbx"))
    played = fbx_play(str(tmp_path / "flat.fbx"))
    _assert_plays(obj, report, played.clips, played.rest, np.eye(3))
    played = assimp_play(str(tmp_path / "flat.fbx"), fps)
    _assert_plays(obj, report, played.clips, played.rest, Y_UP, ASSIMP_UNIT)


def _bvh_with_its_motion(name: str) -> bpy.types.Object:
    bpy.ops.import_anim.bvh(filepath=str(Path(__file__).parent / "data" / name))
    return bpy.context.active_object


# Each character as its importer leaves it, the options users turn on for every limb, the scene's rate.
CHARACTERS = {
    # Y up inside an object scaled 100 and turned; its feet are not children of its legs; 59.94 frames a second.
    "robot expressive": (lambda: import_gltf("gltf_robot_expressive.glb"),
                         dict(soft_ik=0.1, foot_roll=True, pole_parent="HANDLE", max_stretch=2.0), (60, 1.001)),
    # Its own IK bones under its root; the limbs on hidden chains (its tails off their joints).
    "kaykit knight": (lambda: import_gltf("gltf_kaykit_knight_skeleton.glb"),
                      dict(max_stretch=3.0, hinge_joints=True, copy_mode="TRANSFORMS"), (30, 1.0)),
    # Scaled 0.3, bones 3.33 times their segments: hidden chains.
    "godot robot": (lambda: import_gltf("godot_platformer_robot.glb"),
                    dict(soft_ik=0.2, foot_roll=True, use_rotation=True), (24, 1.0)),
    # Decimetres, every limb segment split in two bones, a chain of 3 per leg.
    "makehuman capture": (lambda: _bvh_with_its_motion("makehuman_benchmark.bvh"),
                          dict(pole_parent="HANDLE", parent_switch=True, max_stretch=2.0), (25, 1.0)),
    # A quadruped whose hooves hang from the root, its run moving each leg's first bone.
    "quaternius cow": (lambda: import_gltf("gltf_quaternius_cow_skeleton.glb"),
                       dict(pole_parent="HANDLE", max_stretch=2.0, parent_switch=True), (24, 1.0)),
    # Centimetres: an object scaled 0.01, bones a hundred times their metre length; hidden chains.
    "quaternius woman": (lambda: import_gltf("gltf_quaternius_woman_skeleton.glb"),
                         dict(soft_ik=0.1, foot_roll=True, max_stretch=2.0), (30, 1.0)),
    # Turned 90 degrees about X and scaled 1.07.
    "quaternius zombie": (lambda: import_gltf("gltf_quaternius_zombie_skeleton.glb"),
                          dict(copy_mode="TRANSFORMS", use_rotation=True), (30, 1.0)),
}


@pytest.mark.parametrize("name", sorted(CHARACTERS))
def test_characters_as_imported_rigged_with_options_and_keyed_through_their_controls(tmp_path, name):
    """Each character auto-rigged with its motion baked onto the controls and the options users turn on,
    then its handles keyed past reach, its poles swung, stretch, soft IK and the roll keyed over the motion:
    the .glb validates and three.js plays the clip, named, timed at the scene's rate and as long, every joint
    where the rig puts it; the .fbx plays so in Blender's FBX importer and assimp."""
    load, options, (fps, base) = CHARACTERS[name]
    obj = load()
    bpy.context.view_layer.objects.active = obj
    api.auto_rig(obj, animation="BAKE", **options)
    bpy.ops.object.mode_set(mode="POSE")
    for number, limb in enumerate(api.limbs(obj)):
        _key_controls(obj, limb, number)
    bpy.ops.object.mode_set(mode="OBJECT")
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = fps, base
    clip = obj.animation_data.action.name
    before = state()
    report = api.export(obj, str(tmp_path / "hero.glb"), clips=clip)
    assert state() == before and [item.name for item in report.clips] == [clip]
    assert [warning for warning in report.warnings if "itself" not in warning] == [], report.warnings
    _assert_valid(tmp_path / "hero.glb")
    assert_three_plays_the_rig(obj, tmp_path / "hero.glb", report)
    if name == "makehuman capture" or name.startswith("quaternius"):
        report = api.export(obj, str(tmp_path / "hero.fbx"), clips=[clip])
        assert_fbx_plays_the_rig(obj, tmp_path / "hero.fbx", report)


def test_both_sides_with_hidden_chains_exports_as_the_rig_plays(tmp_path):
    """Both Sides builds the mirrored leg too, each on a hidden chain (the Godot robot's tails lie far past
    their joints); the handles keyed: the mirrored limb's bones play in the file as in the rig."""
    obj = import_gltf("godot_platformer_robot.glb")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    limbs = api.build(obj, "l-leg", both_sides=True, soft_ik=0.1, foot_roll=True)
    assert sorted(limb.name for limb in limbs) == ["l-leg", "r-leg"]
    for number, limb in enumerate(api.limbs(obj)):
        _key_controls(obj, limb, number)
    bpy.ops.object.mode_set(mode="OBJECT")
    clip = obj.animation_data.action.name
    report = api.export(obj, str(tmp_path / "robot.glb"), clips=[clip])
    _assert_valid(tmp_path / "robot.glb")
    assert_three_plays_the_rig(obj, tmp_path / "robot.glb", report)


# Characters glTF, three.js (PropertyBinding takes out . : / [ ] of node names) or a file system treat
# specially; two bones whose names differ only in them.
HOSTILE_BONES = {"foot.L": "foot/L [ü]", "toe.L": "toe.L", "toe.R": "toe:L", "foot.R": 'foot"R\\x',
                 "shin.R": "shin R ."}
HOSTILE_CLIP = "Walk/Run: 1.0 [é] |x"


@pytest.mark.parametrize("suffix", ["glb", "gltf", "fbx"])
def test_hostile_names_and_paths_are_written_and_read_as_they_are(tmp_path, suffix):
    """Bones named with dots, slashes, colons, brackets, quotes, backslashes, spaces and letters beyond
    ASCII, two that differ only in a dot and a colon, a clip named so, a folder and file with spaces,
    per cents, a hash and letters beyond ASCII: each reader finds every joint and clip by its own name and
    plays it as the rig does; a .gltf names its .bin by an escaped address the validator follows."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    for old, new in HOSTILE_BONES.items():
        obj.data.bones[old].name = new
    bpy.data.actions["Walk"].name = HOSTILE_CLIP
    folder = tmp_path / "out 50% #1 é"
    folder.mkdir()
    path = folder / f"héro 50% #2.{suffix}"
    report = api.export(obj, str(path))
    assert set(HOSTILE_BONES.values()) <= set(report.joints) and report.warnings == ()
    assert sorted(item.name for item in report.clips) == sorted(["Kick", HOSTILE_CLIP])
    if suffix == "glb":
        _assert_valid(path)
        assert_three_plays_the_rig(obj, path, report)
    elif suffix == "gltf":
        _assert_valid(path)
        assert json.loads(path.read_text())["buffers"][0]["uri"] == "h%C3%A9ro%2050%25%20%232.bin"
        assert sorted(item.name for item in folder.iterdir()) == ["héro 50% #2.bin", "héro 50% #2.gltf"]
    else:
        assert_fbx_plays_the_rig(obj, path, report)


def test_one_clip_named_alone_is_that_clip(tmp_path):
    """clips='Walk' (a name, not a list of names): before, it was read letter by letter and refused as
    'no clip named W'."""
    obj = legs_character()
    report = api.export(obj, str(tmp_path / "legs.glb"), clips="Walk")
    assert [(item.name, item.first, item.last) for item in report.clips] == [("Walk", 1, 20)]


def test_a_bone_taking_its_parent_s_scale_in_full_is_not_told_to_take_it(tmp_path):
    """GDQuest's mannequin runs with a thigh scaled along its length; rigged, each foot copies its IK handle's
    turn under that unevenly scaled shin, a shear the file cannot hold, which the export warns of. The
    warning told the user to set the foot's Inherit Scale to Full, which it was ('Inherit Scale FULL'); it
    names the constraints that set the foot's pose apart from its parent's instead."""
    obj = import_gltf("gltf_godot_mannequiny_skeleton.glb")
    bpy.context.view_layer.objects.active = obj
    api.auto_rig(obj, animation="BAKE")
    bpy.ops.object.mode_set(mode="OBJECT")
    report = api.export(obj, str(tmp_path / "mannequin.glb"))
    warned = [warning for warning in report.warnings if warning.startswith("the bone 'foot.l'")]
    assert len(warned) == 1 and "its parent 'calf.l' scales unevenly there" in warned[0], report.warnings
    assert obj.data.bones["foot.l"].inherit_scale == "FULL" and "Inherit Scale" not in warned[0], warned
    constraints = [constraint.name for constraint in obj.pose.bones["foot.l"].constraints]
    assert constraints and f"'{constraints[0]}'" in warned[0], warned


def test_every_clip_of_an_imported_character_its_nla_strips_among_them(tmp_path):
    """RobotExpressive as glTF's importer leaves it: 14 animations, 13 of them NLA strips, each starting on
    frame 0; rigged with its motion baked and its controls keyed over the playing one, at 59.94 frames a
    second. Every clip is in the .glb, named, timed and as long as it plays, and three.js plays each as the
    rig does; two of them through FBX (its meshes renamed: several are named as bones, which the export warns
    of for FBX, and assimp moves the mesh of that name)."""
    obj = import_gltf("gltf_robot_expressive.glb")
    bpy.context.view_layer.objects.active = obj
    api.auto_rig(obj, animation="BAKE", soft_ik=0.1, foot_roll=True, pole_parent="HANDLE")
    bpy.ops.object.mode_set(mode="POSE")
    for number, limb in enumerate(api.limbs(obj)):
        _key_controls(obj, limb, number)
    bpy.ops.object.mode_set(mode="OBJECT")
    for mesh in [item for item in bpy.data.objects if item.type == "MESH"]:
        mesh.name = f"mesh {mesh.name}"
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 60, 1.001
    strips = {strip.action.name for track in obj.animation_data.nla_tracks for strip in track.strips}
    report = api.export(obj, str(tmp_path / "robot.glb"))
    assert len(strips) >= 13 and {item.name for item in report.clips} == strips | {obj.animation_data.action.name}
    assert all(item.first == 0 for item in report.clips) and report.warnings == ()
    _assert_valid(tmp_path / "robot.glb")
    assert_three_plays_the_rig(obj, tmp_path / "robot.glb", report)
    # Blender 4.2's importer names them 'Wave_RobotArmature'...
    two = [item.name for item in report.clips if item.name.startswith(("Wave", "Dance"))]
    report = api.export(obj, str(tmp_path / "robot.fbx"), clips=two)
    assert_fbx_plays_the_rig(obj, tmp_path / "robot.fbx", report)


@pytest.mark.parametrize("scale", [(1.0, 0.0, 1.0), (0.0, 0.0, 0.0)], ids=["one axis", "all"])
def test_an_armature_object_scaled_to_nothing_is_refused_and_a_small_scale_plays(tmp_path, scale):
    """The character hidden by its object's scale: both exporters place its bones from its placement inverted,
    and three.js put the joints 84% of the height off (one axis) without a word before. Refused by name,
    writing nothing; scaled 0.001 instead (as the message says), it plays as the rig does."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.scale = scale
    # Blender's IK on a flat armature poses it anew on each evaluation: its pose is left out.
    before = {key: value for key, value in state().items() if key != "evaluated"}
    with pytest.raises(api.RigError, match="the armature 'Rig' is scaled to nothing along some axis"):
        api.export(obj, str(tmp_path / "legs.glb"))
    assert list(tmp_path.iterdir()) == []
    assert {key: value for key, value in state().items() if key != "evaluated"} == before
    obj.scale = (0.001, 0.001, 0.001)
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)
