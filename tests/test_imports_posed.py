"""Characters that arrive posed without keys: a glTF whose nodes stand away from their bind pose (the
importer poses the bones so, as Quaternius' T-rex skeleton arrives), or a character posed by hand and
never keyed. Rigged, each shows the pose it showed: the IK controls are put on it (as Snap IK to FK
puts them, unkeyed), a chain given new rests (pre-bent, or turned by Fix Bone Orientation) keeps its
pose on them, and Remove gives the bones back as they were."""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, evaluate_world, rotation_degrees
from mathutils import Matrix
from test_pipeline import play_elsewhere

from ik_rigger import api


def _deforms(obj: bpy.types.Object) -> dict[str, Matrix]:
    """What moves the mesh: each bone's evaluated world pose times its rest's inverse (a bone whose rest the
    build turns counts by what it does, not by its axes)."""
    return {name: pose @ obj.data.bones[name].matrix_local.inverted() for name, pose in evaluate_world(obj).items()}


def _worst(obj: bpy.types.Object, before: dict[str, Matrix], after: dict[str, Matrix],
           points: dict[str, tuple]) -> tuple[float, float]:
    """The largest move of a bone's head or tail (of the character's size) and turn (degrees)."""
    size = max(obj.dimensions)
    moved = max((before[name] @ point - after[name] @ point).length / size for name in before for point in points[name])
    turned = max(rotation_degrees(before[name], after[name]) for name in before)
    return moved, turned


def _posed_trex() -> bpy.types.Object:
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_quaternius_trex_skeleton.gltf"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    return obj


def _posed_by_hand(filename: str) -> bpy.types.Object:
    """A capture at its frame 30, its keys dropped: a pose set by hand, never keyed."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / filename))
    obj = bpy.context.active_object
    bpy.context.scene.frame_set(30)
    action = obj.animation_data.action
    obj.animation_data_clear()
    bpy.data.actions.remove(action)
    return obj


CHARACTERS = {
    "gltf nodes off their bind pose": _posed_trex,
    "posed by hand": lambda: _posed_by_hand("mixamo_freebvh.bvh"),
    # Its legs and arms straight at rest: pre-bent, their rests change under the pose.
    "posed by hand, straight at rest": lambda: _posed_by_hand("pymo_walk.bvh"),
}


@pytest.mark.parametrize("fix", [False, True], ids=["as they are", "bones turned"])
@pytest.mark.parametrize("how", ["operator", "api"])
@pytest.mark.parametrize("character", sorted(CHARACTERS))
def test_a_character_posed_without_keys_shows_its_pose_once_rigged(character, how, fix):
    obj = CHARACTERS[character]()
    assert not bpy.data.actions
    bones = [bone.name for bone in obj.data.bones]
    # The pose is no rest pose: the importer (or the hand) moved the limbs.
    assert any(not pose_bone.matrix_basis.is_identity for pose_bone in obj.pose.bones)
    points = {bone.name: (bone.head_local.copy(), bone.tail_local.copy()) for bone in obj.data.bones}
    before = _deforms(obj)
    if how == "operator":
        assert bpy.ops.ik_rigger.auto_rig(fix_orientation=fix) == {"FINISHED"}
    else:
        api.auto_rig(obj, fix_orientation=fix)
    limbs = api.limbs(obj)
    assert len(limbs) == 4
    after = _deforms(obj)
    # A foot left under the root (the T-rex's hind feet) is carried on its leg's end, where the file's
    # pose stands it 0.9% of the body off: IK shows the leg's end, and the foot on it.
    apart = {limb.extremity for limb in limbs if limb.extremity and limb.chain[-1] not in
             {bone.name for bone in obj.data.bones[limb.extremity].parent_recursive}}
    moved, turned = _worst(obj, {name: before[name] for name in before if name not in apart}, after, points)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
    if apart:
        moved, turned = _worst(obj, {name: before[name] for name in apart}, after, points)
        assert moved < 1e-2 and turned < 0.25, (moved, turned)
    # The handles stand where the feet and hands are, not at their rests.
    assert all(not obj.pose.bones[limb.bones["HANDLE"]].matrix_basis.is_identity for limb in limbs)
    for limb in limbs:
        api.remove(obj, limb.name)
    assert [bone.name for bone in obj.data.bones] == bones
    moved, turned = _worst(obj, before, _deforms(obj), points)
    assert moved < 1e-5 and turned < 0.01, (moved, turned)


def test_a_pose_without_keys_is_left_as_it_is_by_remove_where_no_rest_changes():
    obj = _posed_by_hand("mixamo_freebvh.bvh")
    basis = {bone.name: bone.matrix_basis.copy() for bone in obj.pose.bones}
    for limb in api.auto_rig(obj):
        api.remove(obj, limb.name)
    assert all(obj.pose.bones[name].matrix_basis == matrix for name, matrix in basis.items())


def test_a_posed_character_rigged_shows_its_pose_where_ik_rigger_is_not_installed(tmp_path):
    """The controls' pose is saved with the file: a Blender without IK Rigger shows the pose the import showed."""
    obj = _posed_trex()
    bpy.context.view_layer.update()
    before = {bone.name: bone.matrix.copy() for bone in obj.pose.bones}
    api.auto_rig(obj)
    path = tmp_path / "trex.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    played = play_elsewhere(path, [1], tmp_path)
    assert played["invalid_drivers"] == []
    shown = {name: Matrix(rows) for name, rows in played["frames"]["1"][obj.name].items()}
    # Armature space: the T-rex's bones span about 3 units inside its object scaled 300.
    size = max((bone.head_local - other.head_local).length for bone in obj.data.bones for other in obj.data.bones)
    feet = {"BackFoot.L", "BackFoot.R"}  # carried on the legs' ends (see above)
    moved = max((before[name].translation - shown[name].translation).length / size for name in before
                if name not in feet)
    turned = max(rotation_degrees(before[name], shown[name]) for name in before if name not in feet)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)


def test_a_posed_toe_keeps_its_turn_under_a_foot_roll():
    """With Foot Roll, the toe (on a hand, its first finger) copies its clone's turn in IK: the clone is put
    on the toe's pose too, as Snap IK to FK puts it (before, the fingers turned 53 degrees off)."""
    obj = _posed_by_hand("mixamo_freebvh.bvh")
    points = {bone.name: (bone.head_local.copy(), bone.tail_local.copy()) for bone in obj.data.bones}
    before = _deforms(obj)
    limbs = api.auto_rig(obj, foot_roll=True)
    assert all("foot_roll" in limb.parts for limb in limbs)
    moved, turned = _worst(obj, before, _deforms(obj), points)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
    for limb in limbs:  # and back, also through the snap: FK takes the pose IK shows
        api.snap_limb(obj, limb.name, "FK")
    moved, turned = _worst(obj, before, _deforms(obj), points)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)


def test_the_batch_rigs_a_posed_import_as_it_shows(tmp_path):
    """The batch imports the T-rex skeleton at the importer's defaults and rigs it showing the pose the
    import shows, saying so in a note (no warning)."""
    from test_batch_safety import report_of, run

    source = tmp_path / "trex.gltf"
    source.write_bytes((DATA / "gltf_quaternius_trex_skeleton.gltf").read_bytes())
    obj = _posed_trex()
    bpy.context.view_layer.update()
    before = {bone.name: bone.matrix.copy() for bone in obj.pose.bones}
    result = run(str(source), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[source])
    assert result.returncode == 0, result.stdout + result.stderr
    entry = report_of(tmp_path / "report.json")["trex.gltf"]
    assert entry["warnings"] == [] and sum("was posed (not keyed)" in note for note in entry["notes"]) == 4
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "trex.blend"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.update()
    size = max((bone.head_local - other.head_local).length for bone in obj.data.bones for other in obj.data.bones)
    feet = {"BackFoot.L", "BackFoot.R"}  # carried on the legs' ends (see above)
    moved = max((before[name].translation - obj.pose.bones[name].matrix.translation).length / size
                for name in before if name not in feet)
    assert moved < 1e-3, moved


def test_a_character_at_rest_is_rigged_at_rest_and_told_nothing_of_a_pose():
    obj = _posed_by_hand("mixamo_freebvh.bvh")
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    limbs = api.auto_rig(obj)
    assert not [note for limb in limbs for note in limb.notes if "posed" in note]
    assert all(obj.pose.bones[limb.bones["HANDLE"]].matrix_basis == Matrix.Identity(4) for limb in limbs)


def test_a_pose_channel_at_minus_zero_is_at_rest_and_one_off_it_is_not():
    """Whether any bone may stand off its rest is read from every bone's channels compared as bytes first:
    -0.0 is other bytes than 0.0 but the same value, so it still counts as at rest."""
    from ik_rigger.rig import posed

    obj = _posed_by_hand("mixamo_freebvh.bvh")
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    bone = obj.pose.bones[len(obj.pose.bones) // 2]
    bone.location = (-0.0, 0.0, -0.0)
    bone.rotation_euler = (-0.0, -0.0, 0.0)
    assert not posed._may_stand_off_rest(obj, [], ())
    bone.rotation_euler.y = 1e-4
    assert posed._may_stand_off_rest(obj, [], ())
