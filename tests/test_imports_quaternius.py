"""Quaternius' characters as they arrive (tests/data/README.md): a spider, a cowboy, a man, a frog, a dog and
a skeleton monster, each a skeleton with one of its clips, read by the glTF importer (its default bone shapes and
Temperance) and through Blender's FBX exporter and importer (joint axes kept, and Automatic Bone
Orientation). Auto-Rig, at its defaults, finds the limbs a rigger would; each handle carries its chain's
end, each pole turns its chain, and the clip plays as before. What
it cannot find it names, with what to do."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import DATA, evaluate, evaluate_world, rotation_degrees
from mathutils import Matrix, Vector
from test_detect_real import assert_handles_move_chain_ends

from ik_rigger import api
from ik_rigger.core.errors import RigError

IMPORTS = {
    "glTF": {},
    "glTF, Temperance": {"bone_heuristic": "TEMPERANCE"},
    "FBX": {},
    "FBX, Automatic Bone Orientation": {"automatic_bone_orientation": True},
}

SPIDER = "gltf_quaternius_spider_skeleton.glb"
COWBOY = "gltf_quaternius_cowboy_skeleton.glb"
FROG = "gltf_quaternius_frog_skeleton.glb"
MONSTER = "gltf_quaternius_skeleton_monster.glb"
DOG = "gltf_quaternius_dog_skeleton.glb"
MAN = "gltf_quaternius_man_skeleton.glb"


def _spider_legs() -> dict[str, tuple[tuple[str, ...], str]]:
    legs = {}
    for position in ("Front", "MidFront", "MidBack", "Back"):
        for side in ("L", "R"):
            # The file's own name of the right front foot has a copy's number.
            foot = "FrontFoot2.R" if (position, side) == ("Front", "R") else f"{position}Foot.{side}"
            chain = (f"{position}Leg.{side}", f"{position}Leg2.{side}", f"{position}Leg3.{side}")
            legs[chain[-1]] = (chain, foot)
    return legs


# Each character's limbs: last chain bone -> (chain, foot or hand).
LIMBS = {
    # Eight legs of three bones, each to the foot under the root that its IK target is: the middle front
    # legs' third bones are 0.55 of their second, as short as a foot, yet that foot hangs at their end.
    SPIDER: _spider_legs(),
    # Feet under the root named as IK targets, FootIK.L: the legs' own feet.
    COWBOY: {
        **{f"LowerLeg.{side}": ((f"UpperLeg.{side}", f"LowerLeg.{side}"), f"FootIK.{side}") for side in "LR"},
        **{f"LowerArm.{side}": ((f"UpperArm.{side}", f"LowerArm.{side}"), f"Palm.{side}") for side in "LR"},
    },
    # A man of the same animated characters: feet under the root beside his own pole targets (PoleTarget.L),
    # palms for hands.
    MAN: {
        **{f"LowerLeg.{side}": ((f"UpperLeg.{side}", f"LowerLeg.{side}"), f"Foot.{side}") for side in "LR"},
        **{f"LowerArm.{side}": ((f"UpperArm.{side}", f"LowerArm.{side}"), f"Palm.{side}") for side in "LR"},
    },
    # The front legs' shoulders are named FrontLeg.L and FrontLeg.L.001 (the right one); the legs below them
    # are rigged from the upper leg.
    FROG: {
        **{f"FrontLowLeg.{side}": ((f"FrontUpLeg.{side}", f"FrontLowLeg.{side}"), f"FrontFoot.{side}")
           for side in "LR"},
        **{f"BackLowLeg.{side}": ((f"BackLeg.{side}", f"BackUpLeg.{side}", f"BackLowLeg.{side}"), f"BackFoot.{side}")
           for side in "LR"},
    },
}
FRAMES = {SPIDER: [1, 6, 11, 16, 21], MAN: [1, 6, 11, 16, 22], COWBOY: [1, 10, 20, 30, 40], FROG: [1, 6, 11, 16, 22]}


def imported(filename: str, kind: str, folder) -> bpy.types.Object:
    """The armature of the glTF file ``filename`` in tests/data as the importer ``kind`` leaves it (an FBX one
    through Blender's FBX exporter first), active, in Object mode."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename), **(IMPORTS[kind] if kind.startswith("glTF") else {}))
    if kind.startswith("FBX"):
        path = str(folder / "character.fbx")
        bpy.ops.object.select_all(action="SELECT")
        bpy.ops.export_scene.fbx(filepath=path)
        bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.ops.import_scene.fbx(filepath=path, **IMPORTS[kind])
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    return obj


def arrive(filename: str, kind: str, folder) -> bpy.types.Object:
    """The character as the importer ``kind`` leaves it, active, its clip playing, in Object mode."""
    obj = imported(filename, kind, folder)
    assert obj.animation_data is not None and obj.animation_data.action is not None
    return obj


def size_of(obj: bpy.types.Object) -> float:
    """The skeleton's size in the world: the diagonal of its bones' heads and tails."""
    points = [obj.matrix_world @ point for bone in obj.data.bones for point in (bone.head_local, bone.tail_local)]
    low = Vector(tuple(min(p[axis] for p in points) for axis in range(3)))
    high = Vector(tuple(max(p[axis] for p in points) for axis in range(3)))
    return (high - low).length


def played(obj: bpy.types.Object, frames: list[int]) -> dict[int, dict[str, object]]:
    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        shown[frame] = {name: pose for name, pose in evaluate_world(obj).items() if obj.data.bones[name].use_deform}
    return shown


def worst(before, after, size: float) -> tuple[float, float]:
    moved = max((pose.translation - after[frame][name].translation).length / size
                for frame, poses in before.items() for name, pose in poses.items())
    turned = max(rotation_degrees(pose, after[frame][name]) for frame, poses in before.items()
                 for name, pose in poses.items())
    return moved, turned


def assert_poles_turn_the_chains(obj: bpy.types.Object, limbs: list[api.Limb]) -> None:
    """On the frame shown, each pole turned 30 degrees about the line from its chain's root to its handle
    turns the chain's middle joints as much about that line, while its end stays on the handle."""
    for limb in limbs:
        start = evaluate(obj)
        root, handle = start[limb.chain[0]].translation, start[limb.bones["HANDLE"]].translation
        axis = (handle - root).normalized()
        pole = obj.pose.bones[limb.bones["POLE"]]
        kept = pole.matrix_basis.copy()
        turn = Matrix.Translation(root) @ Matrix.Rotation(math.radians(30.0), 4, axis) @ Matrix.Translation(-root)
        pole.matrix = turn @ start[pole.name]
        turned = evaluate(obj)
        reach = sum((start[a].translation - start[b].translation).length for a, b in zip(limb.chain, limb.chain[1:]))
        for joint in limb.chain[1:]:
            before, after = (_across(axis, pose[joint].translation - root) for pose in (start, turned))
            angle = math.degrees(math.atan2(before.cross(after).dot(axis), before.dot(after)))
            assert abs(angle - 30.0) < 1.0, (limb.name, joint, angle)
        end = limb.extremity or limb.bones["HANDLE"]  # a hand-less arm's end is its handle
        assert (turned[end].translation - start[end].translation).length < 1e-3 * reach, limb.name
        pole.matrix_basis = kept


def _across(axis: Vector, offset: Vector) -> Vector:
    return offset - axis * offset.dot(axis)


@pytest.mark.parametrize("kind", IMPORTS)
@pytest.mark.parametrize("filename", sorted(LIMBS))
def test_auto_rig_rigs_the_limbs_a_rigger_would_and_keeps_the_clip(filename, kind, tmp_path):
    obj = arrive(filename, kind, tmp_path)
    size, frames = size_of(obj), FRAMES[filename]
    before = played(obj, frames)
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    found = {limb.name: (limb.chain, limb.extremity) for limb in built}
    assert found == LIMBS[filename]
    assert all(not limb.warnings for limb in built), [limb.warnings for limb in built]
    # The frog's front shoulders (FrontLeg.L, FrontLeg.L.001), whole-leg words above its found legs, are no skip.
    assert skipped == []
    assert_plays_rigged_and_removed(obj, built, before, frames, size)


def assert_plays_rigged_and_removed(obj, built, before, frames, size, removed=None) -> None:
    """The clip plays as ``before`` once rigged, each pole turning its chain and each handle carrying its chain's
    end, and again once every limb is removed (``removed`` checked then, when given)."""
    moved, turned = worst(before, played(obj, frames), size)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
    bpy.context.scene.frame_set(frames[len(frames) // 2])
    assert_poles_turn_the_chains(obj, built)
    bpy.ops.object.mode_set(mode="POSE")
    assert_handles_move_chain_ends(obj, {limb.name: len(limb.chain) for limb in built})
    bpy.ops.object.mode_set(mode="OBJECT")
    for limb in built:
        api.remove(obj, limb.name)
    if removed is not None:
        removed()
    moved, turned = worst(before, played(obj, frames), size)
    assert moved < 1e-4 and turned < 0.05, (moved, turned)


@pytest.mark.parametrize("kind", IMPORTS)
def test_the_skeleton_monsters_legs_and_their_copies_are_named_with_what_to_do(kind, tmp_path):
    """Its legs are L.UpperLeg > L.DownLeg; its arms are copies of them, L.UpperLeg.001 > L.DownLeg.001.
    Either could be the leg by name: both are named, and the user told to rig the leg by hand."""
    obj = arrive(MONSTER, kind, tmp_path)
    names = {bone.name for bone in obj.data.bones}
    skipped: list[tuple[str, str]] = []
    with pytest.raises(RigError, match="no limbs found on 'SkeletonArmature'"):
        api.auto_rig(obj, skipped=skipped)
    why = dict(skipped)
    assert sorted(why) == ["L.DownLeg", "L.DownLeg.001", "R.DownLeg", "R.DownLeg.001"]
    for bone, reason in why.items():
        side = "left" if bone.startswith("L") else "right"
        assert f"2 chains could be the {side} leg ({side[0].upper()}.UpperLeg > {side[0].upper()}.DownLeg and " \
               f"{side[0].upper()}.UpperLeg.001 > {side[0].upper()}.DownLeg.001)" in reason
        assert "select its lower bone, then Build IK Limb" in reason
    assert {bone.name for bone in obj.data.bones} == names
    # As told: the leg rigged by hand from its lower bone.
    limb = api.build(obj, "L.DownLeg")[0]
    assert limb.chain == ("L.UpperLeg", "L.DownLeg")


@pytest.mark.parametrize("kind", IMPORTS)
def test_a_dog_whose_bones_keep_blenders_default_names_is_told_so(kind, tmp_path):
    """Quaternius' dog: Bone > Bone.001 > ..., only its IK bones named (IKFrontLeft...). Auto-Rig says that
    the names are Blender's defaults and what to do, and changes nothing."""
    obj = arrive(DOG, kind, tmp_path)
    rest = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    action = obj.animation_data.action
    bpy.ops.object.mode_set(mode="POSE")
    with pytest.raises(RuntimeError, match=r"No limbs found on 'DogArmature': most of its bones keep Blender's "
                                           r"default names \('Bone', 'Bone.001'...\), which name no limb; rig them "
                                           "one by one with Build IK Limb"):
        bpy.ops.ik_rigger.auto_rig()
    with pytest.raises(RigError, match="from the last bone of each"):
        api.auto_rig(obj)
    assert {bone.name: bone.matrix_local for bone in obj.data.bones} == rest
    assert obj.animation_data.action == action and not len(obj.ik_rigger.limbs)


def test_a_skeleton_with_no_limb_named_is_told_so():
    armature = bpy.data.armatures.new("Rig")
    obj = bpy.data.objects.new("Rig", armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for index, name in enumerate(("Root", "Spine", "Head")):
        bone = armature.edit_bones.new(name)
        bone.head, bone.tail, bone.parent = (0.0, 0.0, index), (0.0, 0.0, index + 1.0), parent
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    with pytest.raises(RigError, match=r"no limbs found on 'Rig': no bone is named like a leg's or an arm's"):
        api.auto_rig(obj)


@pytest.mark.parametrize("kind", ["glTF", "FBX"])
@pytest.mark.parametrize("filename", [MAN, COWBOY, SPIDER, FROG])
def test_build_ik_limb_finds_the_foot_under_the_root_that_auto_rig_finds(filename, kind, tmp_path):
    """Build IK Limb on Automatic took the shin's leaf bone (an exporter's ``LowerLeg.L_end``, under the FBX
    importer's default) or no foot, where Auto-Rig takes the foot hanging from the root; built one leg after the
    other, a handle made for the first (``FootIK.L`` has its name's words) is never the next one's foot."""
    obj = arrive(filename, kind, tmp_path)
    size, frames = size_of(obj), FRAMES[filename]
    before = played(obj, frames)
    built = []
    for last, (chain, foot) in LIMBS[filename].items():
        if "Leg" not in last:
            continue
        limbs = api.build(obj, last, chain_length=len(chain))
        assert [(limb.chain, limb.extremity) for limb in limbs] == [(chain, foot)], last
        built += limbs
    # Rebuilt with a leg's own foot among the made bones, each keeps it.
    again = api.build(obj, built[0].name)
    assert (again[0].chain, again[0].extremity) == (built[0].chain, built[0].extremity)
    assert_plays_rigged_and_removed(obj, built, before, frames, size)
