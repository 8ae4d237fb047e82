"""More characters as they arrive (tests/data/README.md): Kay Lousberg's KayKit knight (the `Rig_Medium`
humanoid his character packs share) and GDQuest's mannequin from Godot's demos, each a skeleton with one of its
clips, read by the glTF importer (its default bone shapes and Temperance) and through Blender's FBX exporter and
importer (joint axes kept, and Automatic Bone Orientation). Auto-Rig, Both Sides and the batch find the legs and
arms a rigger would; the rest stays as it was, each handle carries its chain's end, each knee bends forward, and
the clip plays as before. Kenney's mini character, whose legs and arms are one bone each, is refused saying so."""

from __future__ import annotations

import re

import bpy
import pytest
from helpers import DATA, both_legs, evaluate, make_armature, rotation_degrees
from mathutils import Matrix, Vector
from test_batch_safety import report_of, run
from test_detect_real import assert_handles_move_chain_ends
from test_imports_quaternius import IMPORTS, arrive, assert_plays_rigged_and_removed, played, size_of

from ik_rigger import api
from ik_rigger.core.errors import RigError

KNIGHT = "gltf_kaykit_knight_skeleton.glb"
MANNEQUIN = "gltf_godot_mannequiny_skeleton.glb"
MINI = "gltf_kenney_mini_character_skeleton.glb"

# Each character's limbs: last chain bone -> (chain, foot or hand).
LIMBS = {
    # KayKit's Rig_Medium: the wrist is the hand (the hand below it carries the hand slot); the rig's own
    # IK bones (IK-foot.l, kneeIK.l, handIK.l, the foot roll's control-*-roll.l) hang from the root, unused.
    KNIGHT: {
        **{f"lowerleg.{side}": ((f"upperleg.{side}", f"lowerleg.{side}"), f"foot.{side}") for side in "lr"},
        **{f"lowerarm.{side}": ((f"upperarm.{side}", f"lowerarm.{side}"), f"wrist.{side}") for side in "lr"},
    },
    # An Unreal-named mannequin (thigh.l > calf.l > foot.l, upperarm.l > lowerarm.l > hand.l), Y up in its
    # armature.
    MANNEQUIN: {
        **{f"calf.{side}": ((f"thigh.{side}", f"calf.{side}"), f"foot.{side}") for side in "lr"},
        **{f"lowerarm.{side}": ((f"upperarm.{side}", f"lowerarm.{side}"), f"hand.{side}") for side in "lr"},
    },
}
FRAMES = {KNIGHT: [1, 7, 13, 19, 25], MANNEQUIN: [1, 2, 4, 6, 8, 11, 14]}
# The mannequin's run stretches a thigh along its length on a few frames (its own scale keys, up to 6%):
# Blender's IK turns bones within their scaled axes, so there the IK plays the motion only roughly, as the
# build warns, naming the frames.
# Read from glTF, the left leg on frames 7 to 10, the right on 14 and 15; through FBX, whose export samples the
# clip anew, the right on frames 9 to 15.
STRETCHED = {MANNEQUIN: {"calf.l": (7, 10), "calf.r": (9, 15)}}


# The mannequin's arms are modelled bent 0.4 degree with the elbow ahead, the way no elbow bends: without a clip
# that bends them, they are pre-bent back, as straight arms are, their bones turned within the promised 2 degrees.
ELBOWS_AHEAD = {MANNEQUIN: ("upperarm.l", "lowerarm.l", "upperarm.r", "lowerarm.r")}


def _rest(obj: bpy.types.Object) -> dict[str, Matrix]:
    return {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}


def _assert_rest_kept(obj: bpy.types.Object, rest: dict[str, Matrix]) -> None:
    """The user's bones keep their rest (to Blender's single precision, as Edit mode writes it back), and none
    is gone."""
    for name, matrix in rest.items():
        kept = obj.data.bones[name].matrix_local
        assert max(abs(a - b) for row, was in zip(kept, matrix) for a, b in zip(row, was)) < 1e-6, name


def _assert_warnings(filename: str, built: list[api.Limb]) -> None:
    stretched = STRETCHED.get(filename, {})
    for limb in built:
        if limb.name in stretched:
            assert len(limb.warnings) == 1 and "is scaled unevenly" in limb.warnings[0], limb.warnings
            first, last = (int(frame) for frame in re.search(r"from (\d+) to (\d+)", limb.warnings[0]).groups())
            low, high = stretched[limb.name]
            assert low <= first <= last <= high, limb.warnings
        else:
            assert not limb.warnings, limb.warnings


def _plain_frames(filename: str) -> list[int]:
    """The frames on which no limb of the character is scaled unevenly (so its IK plays them exactly)."""
    spans = STRETCHED.get(filename, {}).values()
    skip = {frame for low, high in spans for frame in range(low, high + 1)}
    return [frame for frame in FRAMES[filename] if frame not in skip]


@pytest.mark.parametrize("kind", IMPORTS)
@pytest.mark.parametrize("filename", sorted(LIMBS))
def test_auto_rig_rigs_the_limbs_a_rigger_would_and_keeps_the_clip(filename, kind, tmp_path):
    obj = arrive(filename, kind, tmp_path)
    size, frames = size_of(obj), _plain_frames(filename)
    rest = _rest(obj)
    before = played(obj, frames)
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == LIMBS[filename]
    assert skipped == []
    _assert_warnings(filename, built)
    _assert_rest_kept(obj, rest)
    assert_plays_rigged_and_removed(obj, built, before, frames, size, lambda: _assert_rest_kept(obj, rest))


def _at_rest_without_clip(obj: bpy.types.Object) -> None:
    obj.animation_data.action = None
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    evaluate(obj)


def _front(obj: bpy.types.Object) -> Vector:
    """The character's front in the world, read from its left foot: the way its toes point, level."""
    foot = next(bone for bone in obj.data.bones if bone.name.lower() == "foot.l")
    toe = foot.children[0]
    ahead = obj.matrix_world.to_3x3() @ (toe.head_local - foot.head_local)
    ahead.z = 0.0
    return ahead.normalized()


@pytest.mark.parametrize("kind", IMPORTS)
@pytest.mark.parametrize("filename", sorted(LIMBS))
def test_both_sides_rigs_each_limb_and_its_mirror_and_the_knees_bend_forward(filename, kind, tmp_path):
    obj = arrive(filename, kind, tmp_path)
    _at_rest_without_clip(obj)
    rest = _rest(obj)
    front = _front(obj)
    lefts = sorted(name for name in LIMBS[filename] if name.endswith(".l"))
    built = [limb for last in lefts for limb in api.build(obj, last, both_sides=True)]
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == LIMBS[filename]
    ahead = ELBOWS_AHEAD.get(filename, ())
    _assert_rest_kept(obj, {name: matrix for name, matrix in rest.items() if name not in ahead})
    for name in ahead:
        assert 0.1 < rotation_degrees(rest[name], obj.data.bones[name].matrix_local) <= 2.0, name
    bpy.ops.object.mode_set(mode="POSE")
    assert_handles_move_chain_ends(obj, {limb.name: len(limb.chain) for limb in built})
    for limb in built:
        _assert_bends_as_it_should(obj, limb, front)
    for limb in built:
        assert not [note for note in limb.notes if "elbow forward" in note], limb.notes


def bend_forward(obj: bpy.types.Object, limb, front: Vector) -> float:
    """The limb's handle moved a fifth of the way toward the hip or shoulder: how far its middle joint comes
    toward ``front`` (the world's), in lengths of its upper bone; the handle is given back after."""
    world = obj.matrix_world
    start = evaluate(obj)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    kept = handle.matrix_basis.copy()
    target = start[handle.name].translation.lerp(start[limb.chain[0]].translation, 0.2)
    handle.matrix = Matrix.Translation(target - start[handle.name].translation) @ start[handle.name]
    bent = evaluate(obj)
    handle.matrix_basis = kept
    joint = limb.chain[1]
    reach = (start[joint].translation - start[limb.chain[0]].translation).length
    forward = (world.to_3x3() @ (bent[joint].translation - start[joint].translation)).dot(front)
    return forward / (reach * world.to_scale()[0])


def _assert_bends_as_it_should(obj: bpy.types.Object, limb, front: Vector) -> None:
    """The handle a fifth of the way toward the hip or shoulder: the knee comes forward, the elbow back."""
    toward = 1.0 if limb.name.startswith(("lowerleg", "calf")) else -1.0
    forward = bend_forward(obj, limb, front)
    assert toward * forward > 0.05, (limb.name, forward)


def test_the_mannequins_arms_bent_slightly_forward_at_rest_bend_back(tmp_path):
    """Modelled with the elbow 0.4 degree ahead of the arm's line: pre-bent back, as a straight arm is."""
    obj = arrive(MANNEQUIN, "gltf", tmp_path)
    _at_rest_without_clip(obj)
    front = _front(obj)
    built = [limb for limb in api.build(obj, "lowerarm.l", both_sides=True)]
    bpy.ops.object.mode_set(mode="POSE")
    for limb in built:
        _assert_bends_as_it_should(obj, limb, front)


def test_the_batch_rigs_them_and_says_why_the_mini_character_has_no_limb(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for filename in (KNIGHT, MANNEQUIN, MINI):
        (inputs / filename).write_bytes((DATA / filename).read_bytes())
    out = tmp_path / "out"
    result = run(str(inputs), "--out", str(out), "--report", str(tmp_path / "report.json"), keep=[inputs])
    assert result.returncode == 1, result.stdout + result.stderr
    report = report_of(tmp_path / "report.json")
    for filename in (KNIGHT, MANNEQUIN):
        entry = report[filename]
        assert entry["status"] == "rigged", entry
        bpy.ops.wm.open_mainfile(filepath=str(out / filename.replace(".glb", ".blend")), use_scripts=False)
        obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
        assert sorted(obj.ik_rigger.limbs.keys()) == sorted(LIMBS[filename])
    assert "one bone" in result.stdout, result.stdout


@pytest.mark.parametrize("kind", IMPORTS)
def test_a_character_whose_legs_and_arms_are_one_bone_each_is_told_so(kind, tmp_path):
    """Kenney's mini characters: root > leg-left, torso > arm-left, one bone each from hip to foot and
    shoulder to hand. No knee or elbow to bend: Auto-Rig says so, naming them, and changes nothing."""
    obj = arrive(MINI, kind, tmp_path)
    rest = _rest(obj)
    action = obj.animation_data.action
    skipped: list[tuple[str, str]] = []
    with pytest.raises(RigError, match="no limbs found on") as refused:
        api.auto_rig(obj, skipped=skipped)
    why = dict(skipped)
    assert sorted(why) == ["arm-left", "arm-right", "leg-left", "leg-right"], why
    for bone, reason in why.items():
        kind_word = "leg" if bone.startswith("leg") else "arm"
        assert f"a whole {kind_word} in one bone" in reason, reason
    assert "its legs and arms are one bone each ('arm-left', 'arm-right', 'leg-left', 'leg-right'), with no knee " \
           "or elbow for IK to bend" in str(refused.value)
    bpy.ops.object.mode_set(mode="POSE")
    with pytest.raises(RuntimeError, match="No limbs found on '.*': its legs and arms are one bone each"):
        bpy.ops.ik_rigger.auto_rig()
    bpy.ops.object.mode_set(mode="OBJECT")
    _assert_rest_kept(obj, rest)
    assert obj.animation_data.action == action and not len(obj.ik_rigger.limbs)


def test_a_one_bone_leg_built_by_hand_warns_that_ik_turns_the_whole_character(tmp_path):
    """Build IK Limb on the mini character's leg (root > leg-left, as the user asks for it) rigs it, but warns
    that the chain starts at the armature's root bone, which carries the torso: IK turns the whole body to
    reach the handle, and it does (the torso moves with a handle moved). A leg below a root never warns."""
    obj = arrive(MINI, "gltf", tmp_path)
    limb = api.build(obj, "leg-left", both_sides=False)[0]
    warned = [note for note in limb.notes if api.is_warning(note) and "the armature's root bone" in note]
    assert len(warned) == 1 and "carries torso" in warned[0] and "'leg-left' alone is a leg or arm of one bone" \
        in warned[0], limb.notes
    bpy.ops.object.mode_set(mode="POSE")
    before = evaluate(obj)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    length = sum(obj.data.bones[name].length for name in limb.chain)
    handle.location = (0.3 * length, 0.3 * length, 0.3 * length)
    after = evaluate(obj)
    assert (after["torso"].translation - before["torso"].translation).length > 1e-3 * length
    bpy.ops.object.mode_set(mode="OBJECT")
    legs = make_armature(both_legs(), name="Legs")
    for chain_length in (2, 3):  # thigh > shin below the root, and hips > thigh > shin: the hips are no root
        other = api.build(legs, "shin.L", both_sides=False, chain_length=chain_length)[0]
        assert not [note for note in other.notes if "the armature's root bone" in note], other.notes


@pytest.mark.parametrize("last", ["l-leg", "r-leg"])
def test_build_ik_limb_on_a_leg_whose_tail_points_off_the_foot_finds_the_foot_auto_rig_finds(last):
    """The Godot robot's shins point off their joints, so no child continues them by place alone: Build IK Limb
    with the extremity on Automatic found no foot (rigged without one, on the bones as they are) where Auto-Rig
    finds the foot by its name. Both now rig the same limb: the foot, a hidden chain, the foot on the handle."""
    from test_hidden_chain import import_gltf

    obj = import_gltf("godot_platformer_robot.glb")
    limb = api.build(obj, last, both_sides=False)[0]
    foot = last.replace("leg", "foot")
    assert (limb.chain, limb.extremity) == ((last.replace("leg", "thigh"), last), foot), limb
    assert "HIDDEN_ROOT" in limb.bones or any("hidden chain" in note for note in limb.notes), limb.notes
    bpy.ops.object.mode_set(mode="POSE")
    before = evaluate(obj)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    reach = (before[foot].translation - before[limb.chain[0]].translation).length
    # The handle a fifth of the way toward the hip: within reach, the knee bends and the foot goes with it.
    target = before[handle.name].translation.lerp(before[limb.chain[0]].translation, 0.2)
    handle.matrix = Matrix.Translation(target - before[handle.name].translation) @ before[handle.name]
    after = evaluate(obj)
    moved = after[handle.name].translation - before[handle.name].translation
    assert moved.length > 0.1 * reach
    assert (after[foot].translation - before[foot].translation - moved).length < 1e-3 * reach
