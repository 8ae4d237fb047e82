"""Characters that arrive posed without keys: a glTF whose nodes stand away from their bind pose (the
importer poses the bones so, as Quaternius' T-rex skeleton arrives), or a character posed by hand and
never keyed. Rigged, each shows the pose it showed: the IK controls are put on it (as Snap IK to FK
puts them, unkeyed), and Remove gives the bones back as they were."""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, evaluate_world, rotation_degrees
from mathutils import Matrix
from test_pipeline import play_elsewhere

from ik_rigger import api


def _worst(before: dict, after: dict, size: float) -> tuple[float, float]:
    moved = max((before[name].translation - after[name].translation).length / size for name in before)
    turned = max(rotation_degrees(before[name], after[name]) for name in before)
    return moved, turned


def _posed_trex() -> bpy.types.Object:
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_quaternius_trex_skeleton.gltf"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    return obj


def _posed_by_hand() -> bpy.types.Object:
    """The Mixamo capture at its frame 30, its keys dropped: a pose set by hand, never keyed."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    bpy.context.scene.frame_set(30)
    action = obj.animation_data.action
    obj.animation_data_clear()
    bpy.data.actions.remove(action)
    return obj


@pytest.mark.parametrize("how", ["operator", "api"])
@pytest.mark.parametrize("character", ["gltf nodes off their bind pose", "posed by hand"])
def test_a_character_posed_without_keys_shows_its_pose_once_rigged(character, how):
    obj = _posed_trex() if character.startswith("gltf") else _posed_by_hand()
    assert not bpy.data.actions
    bones = [bone.name for bone in obj.data.bones]
    basis = {bone.name: bone.matrix_basis.copy() for bone in obj.pose.bones}
    # The pose is no rest pose: the importer (or the hand) moved the limbs.
    assert any(not matrix.is_identity for matrix in basis.values())
    before = evaluate_world(obj)
    size = max(obj.dimensions)
    if how == "operator":
        assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    else:
        api.auto_rig(obj)
    limbs = api.limbs(obj)
    assert len(limbs) == 4
    after = evaluate_world(obj)
    # A foot left under the root (the T-rex's hind feet) is carried on its leg's end, where the file's
    # pose stands it 0.9% of the body off: IK shows the leg's end, and the foot on it.
    apart = {limb.extremity for limb in limbs if limb.extremity and limb.chain[-1] not in
             {bone.name for bone in obj.data.bones[limb.extremity].parent_recursive}}
    moved, turned = _worst({name: before[name] for name in before if name not in apart}, after, size)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
    if apart:
        moved, turned = _worst({name: before[name] for name in apart}, after, size)
        assert moved < 1e-2 and turned < 0.25, (moved, turned)
    # The handles stand where the feet and hands are: moving one moves its foot or hand with it.
    for limb in limbs:
        handle = obj.pose.bones[limb.bones["HANDLE"]]
        assert not handle.matrix_basis.is_identity, limb.name
    for limb in limbs:
        api.remove(obj, limb.name)
    assert [bone.name for bone in obj.data.bones] == bones
    assert all(obj.pose.bones[name].matrix_basis == matrix for name, matrix in basis.items())
    moved, turned = _worst(before, evaluate_world(obj), size)
    assert moved < 1e-6 and turned < 0.01, (moved, turned)


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
    feet = {"BackFoot.L", "BackFoot.R"}  # carried on the legs' ends (see above)
    # Armature space: the T-rex's bones span about 3 units inside its object scaled 300.
    size = max((bone.head_local - other.head_local).length for bone in obj.data.bones for other in obj.data.bones)
    moved, turned = _worst({name: pose for name, pose in before.items() if name not in feet}, shown, size)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
