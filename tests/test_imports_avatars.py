"""Avatars and characters as they arrive (tests/data/README.md): a VRM avatar (jin's "cryptovoxels", joints named
in words, ``Left leg > Left knee > Left ankle``), a VALID avatar (Mixamo's names without their prefix, seven skins
on one skeleton, an armature in centimetres), and Mesh2Motion's human (Unreal's names, ``thigh_l > calf_l >
foot_l``) and fox (``Back_Leg_Upper_L > Back_Leg_Lower_L > Back_Leg_Ankle_L``, its clip ``Walk``), read by the glTF
importer (its default bone shapes and Temperance) and through Blender's FBX exporter and importer (joint axes
kept, and Automatic Bone Orientation). Auto-Rig, at its defaults, finds the legs and arms a rigger would; the rest
stays as it was, each handle carries its chain's end, each pole turns its chain, each knee bends forward, the clip
(keyed on the skeleton where the file has none) plays as before, also in a Blender without IK Rigger, and Remove
gives it back."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import DATA, evaluate, rotation_degrees
from mathutils import Matrix, Vector
from test_detect_real import assert_handles_move_chain_ends
from test_imports_more import _assert_rest_kept, _rest, bend_forward
from test_imports_quaternius import IMPORTS, assert_plays_rigged_and_removed, imported, played, size_of
from test_pipeline import play_elsewhere

from ik_rigger import api

CRYPTOVOXELS = "gltf_cryptovoxels_avatar_skeleton.glb"
VALID = "gltf_valid_avatar_skeleton.glb"
HUMAN = "gltf_mesh2motion_human_skeleton.glb"
FOX = "gltf_mesh2motion_fox_skeleton.glb"
BIRD = "gltf_mesh2motion_bird_skeleton.glb"

# Each avatar's limbs: last chain bone -> (chain, foot or hand).
LIMBS = {
    # Joints named in words, each bone after the joint at its head: the leg is the thigh, the knee the shin.
    CRYPTOVOXELS: {
        **{f"{side} knee": ((f"{side} leg", f"{side} knee"), f"{side} ankle") for side in ("Left", "Right")},
        **{f"{side} elbow": ((f"{side} arm", f"{side} elbow"), f"{side} wrist") for side in ("Left", "Right")},
    },
    VALID: {
        **{f"{side}Leg": ((f"{side}UpLeg", f"{side}Leg"), f"{side}Foot") for side in ("Left", "Right")},
        **{f"{side}ForeArm": ((f"{side}Arm", f"{side}ForeArm"), f"{side}Hand") for side in ("Left", "Right")},
    },
    HUMAN: {
        **{f"calf_{side}": ((f"thigh_{side}", f"calf_{side}"), f"foot_{side}") for side in "lr"},
        **{f"lowerarm_{side}": ((f"upperarm_{side}", f"lowerarm_{side}"), f"hand_{side}") for side in "lr"},
    },
    # Each leg's extremity is named after the leg: Back_Leg_Ankle_L, the ankle (the hock), with the foot and toes
    # below it; the handle carries it, as the Quaternius horse's hooves.
    FOX: {f"{end}_Leg_Lower_{side}": ((f"{end}_Leg_Upper_{side}", f"{end}_Leg_Lower_{side}"), f"{end}_Leg_Ankle_{side}")
          for end in ("Front", "Back") for side in "LR"},
    # The same, the leg named last: AnkleLeg_L, the bird's ankle, with Foot_L and Toes_L below it.
    BIRD: {f"LowerLeg_{side}": ((f"UpperLeg_{side}", f"LowerLeg_{side}"), f"AnkleLeg_{side}") for side in "LR"},
}
# The left foot and its toe, which say where the avatar faces.
TOES = {CRYPTOVOXELS: ("Left ankle", "Left toe"), VALID: ("LeftFoot", "LeftToeBase"), HUMAN: ("foot_l", "ball_l")}
FRAMES = [1, 6, 11, 16, 21]
# The characters with a clip of their own, and the frames it is read on.
CLIPS = {FOX: [1, 6, 12, 18, 24], BIRD: [1, 4, 7, 10, 12]}


def arrive(filename: str, kind: str, folder) -> tuple[bpy.types.Object, list[int]]:
    """The character as the importer ``kind`` leaves it, active, in Object mode, playing its clip if it has
    one, else a clip keyed on it (``key_a_clip``); with the frames to read it on."""
    obj = imported(filename, kind, folder)
    if filename in CLIPS:
        assert obj.animation_data is not None and obj.animation_data.action is not None
        return obj, CLIPS[filename]
    key_a_clip(obj, filename)
    return obj, FRAMES


def key_a_clip(obj: bpy.types.Object, filename: str) -> None:
    """A clip on the avatar's own bones: thighs and upper arms swinging, knees and elbows bending and the
    hips turning, keyed on FRAMES; the limbs' own bones are keyed in every channel."""
    bones = {bone for chain, _end in LIMBS[filename].values() for bone in chain}
    bones |= {end for _chain, end in LIMBS[filename].values()}
    hips = next(bone.name for bone in obj.data.bones if bone.parent is None)
    for index, frame in enumerate(FRAMES):
        swing = math.radians(25.0) * math.sin(index * math.pi / 2)
        for name in [*sorted(bones), hips]:
            pose_bone = obj.pose.bones[name]
            pose_bone.rotation_mode = "QUATERNION"
            bend = abs(swing) * 1.5 if name in {chain[-1] for chain, _end in LIMBS[filename].values()} else swing
            pose_bone.rotation_quaternion = Matrix.Rotation(bend, 3, "X").to_quaternion()
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
            pose_bone.keyframe_insert("location", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES[0], FRAMES[-1]


@pytest.mark.parametrize("kind", IMPORTS)
@pytest.mark.parametrize("filename", sorted(LIMBS))
def test_auto_rig_rigs_the_limbs_a_rigger_would_and_keeps_the_clip(filename, kind, tmp_path):
    obj, frames = arrive(filename, kind, tmp_path)
    size = size_of(obj)
    rest = _rest(obj)
    before = played(obj, frames)
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == LIMBS[filename]
    assert skipped == []
    assert all(not limb.warnings for limb in built), [limb.warnings for limb in built]
    _assert_rest_kept(obj, rest)
    assert_plays_rigged_and_removed(obj, built, before, frames, size, lambda: _assert_rest_kept(obj, rest))


@pytest.mark.parametrize("filename", sorted(LIMBS))
def test_the_rigged_avatar_plays_without_the_addon(filename, tmp_path):
    obj, frames = arrive(filename, "glTF", tmp_path)
    api.auto_rig(obj)
    assert_plays_elsewhere_as_here(obj, frames, tmp_path)


def assert_plays_elsewhere_as_here(obj: bpy.types.Object, frames, tmp_path, degrees: float | None = None) -> None:
    """``obj``, saved, plays on each of ``frames`` in a Blender where IK Rigger cannot be imported as it does here:
    every bone within 1e-4 of the skeleton's size (and ``degrees``, when given), no driver invalid."""
    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        shown[frame] = {name: pose.copy() for name, pose in evaluate(obj).items()}
    path = tmp_path / "rigged.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    elsewhere = play_elsewhere(path, frames, tmp_path)
    assert not elsewhere["invalid_drivers"]
    reach = size_of(obj) / obj.matrix_world.to_scale()[0]
    for frame, poses in shown.items():
        other = elsewhere["frames"][str(frame)][obj.name]
        for name, pose in poses.items():
            assert (Matrix(other[name]).translation - pose.translation).length < 1e-4 * reach, (frame, name)
            assert degrees is None or rotation_degrees(Matrix(other[name]), pose) < degrees, (frame, name)


def _front(obj: bpy.types.Object, filename: str) -> Vector:
    """The avatar's front in the world: the way its left toes point, level."""
    foot, toe = (obj.data.bones[name] for name in TOES[filename])
    ahead = obj.matrix_world.to_3x3() @ (toe.head_local - foot.head_local)
    ahead.z = 0.0
    return ahead.normalized()


@pytest.mark.parametrize("kind", IMPORTS)
@pytest.mark.parametrize("filename", [CRYPTOVOXELS, VALID, HUMAN])
def test_each_knee_bends_forward_and_each_elbow_back(filename, kind, tmp_path):
    """At rest, the handle a fifth of the way toward the hip or shoulder: the knee comes forward, the elbow
    back. The VRM avatar is modelled, and posed by its file, with each knee a degree behind the line from hip to
    ankle (and inward) and each elbow a degree or two above its arm's line (the right one also ahead of it): its
    hidden chains are pre-bent the right way, as straight ones are."""
    obj = arrive(filename, kind, tmp_path)[0]
    obj.animation_data.action = None
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    front = _front(obj, filename)
    built = api.auto_rig(obj)
    bpy.ops.object.mode_set(mode="POSE")
    assert_handles_move_chain_ends(obj, {limb.name: len(limb.chain) for limb in built})
    wrong = []
    for limb in built:
        forward = bend_forward(obj, limb, front)
        toward = 1.0 if any(word in limb.name for word in ("Leg", "knee", "calf")) else -1.0
        if not toward * forward > 0.05:
            wrong.append((limb.name, round(forward, 3)))
    assert wrong == []


DRAGON = "gltf_mesh2motion_dragon_rig.glb"
SPIDER = "gltf_mesh2motion_spider_rig.glb"
# Mesh2Motion's dragon names each leg's lower bone after the joint at its tail: front_leg_l > front_ankle_l >
# front_foot_l. Its spider numbers each leg's bones after a letter that tells the legs apart: leg_a_1_l >
# leg_a_2_l > leg_a_3_l > leg_a_tip_l.
DRAGON_LEGS = {f"{end}_ankle_{side}": ((f"{end}_leg_{side}", f"{end}_ankle_{side}"), f"{end}_foot_{side}")
               for end in ("front", "back") for side in "lr"}
SPIDER_LEGS = {f"leg_{leg}_3_{side}": (tuple(f"leg_{leg}_{number}_{side}" for number in (1, 2, 3)),
                                       f"leg_{leg}_tip_{side}") for leg in "abcd" for side in "lr"}


def _imported(filename: str) -> bpy.types.Object:
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    return obj


@pytest.mark.parametrize(("filename", "limbs"), [(DRAGON, DRAGON_LEGS), (SPIDER, SPIDER_LEGS)])
def test_auto_rig_finds_the_legs_a_rigger_would(filename, limbs):
    """The dragon's lower bones are named after the joint at their tail, below a bone named as the whole leg and
    above the foot; the spider's legs are each a numbered run with its tip below: Auto-Rig rigs every leg, its
    handle carrying the chain's end, and leaves the rest pose as it was."""
    obj = _imported(filename)
    rest = _rest(obj)
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == limbs
    assert skipped == []
    _assert_rest_kept(obj, rest)
    bpy.ops.object.mode_set(mode="POSE")
    assert_handles_move_chain_ends(obj, {limb.name: len(limb.chain) for limb in built})


@pytest.mark.parametrize(("filename", "limbs"), [(DRAGON, DRAGON_LEGS), (SPIDER, SPIDER_LEGS)])
def test_build_ik_limb_rigs_each_leg_from_its_last_bone(filename, limbs):
    """Build IK Limb from each leg's last bone, with the chain's length, rigs the leg Auto-Rig finds, each handle
    carrying its chain's end."""
    obj = _imported(filename)
    rest = _rest(obj)
    built = [limb for last, (chain, _end) in limbs.items()
             for limb in api.build(obj, last, chain_length=len(chain))]
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == limbs
    _assert_rest_kept(obj, rest)
    bpy.ops.object.mode_set(mode="POSE")
    assert_handles_move_chain_ends(obj, {limb.name: len(limb.chain) for limb in built})
