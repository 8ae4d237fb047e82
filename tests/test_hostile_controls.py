"""An animator deletes a control of a rigged limb by hand (the pole, the foot's clone): Snap IK to FK
puts the IK controls on the FK pose and lets the IK play it, but the IK, without its pole, no longer
turned the chain into that pose (nor the foot without its clone): the snap said it had snapped and the
knee stood 78 degrees off. Now it changes nothing and says which control is gone and what to do; a
rebuild makes it again and the snap lands."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, both_legs_rigged, chain_length, evaluate, rotation_degrees, set_active_bone
from mathutils import Euler

from ik_rigger import api

CHAIN = ["thigh.L", "shin.L", "foot.L"]


def _delete(obj: bpy.types.Object, role: str) -> str:
    name = next(limb for limb in api.limbs(obj) if limb.name == "shin.L").bones[role]
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.remove(obj.data.edit_bones[name])
    bpy.ops.object.mode_set(mode="POSE")
    return name


def _posed_in_fk(obj: bpy.types.Object) -> None:
    """The left leg in FK, its thigh turned out and the knee bent, away from where the IK controls are."""
    handle = next(limb for limb in api.limbs(obj) if limb.name == "shin.L").bones["HANDLE"]
    obj.pose.bones[handle]["ik_fk"] = 0.0
    for name, turn in zip(CHAIN, [(0.5, 0.3, 0.6), (-0.6, 0.0, 0.0), (0.2, 0.1, 0.0)]):
        obj.pose.bones[name].matrix_basis = Euler(turn).to_matrix().to_4x4()


def _state(obj: bpy.types.Object) -> tuple:
    bases = tuple(tuple(v for row in bone.matrix_basis for v in row) for bone in obj.pose.bones)
    switches = tuple(bone.get("ik_fk") for bone in obj.pose.bones)
    return bases, switches, sorted((curve.data_path, len(curve.keyframe_points)) for curve in all_fcurves(obj))


def _lands(obj: bpy.types.Object, fk: dict) -> bool:
    shown = evaluate(obj)
    length = chain_length(obj, CHAIN[:2])
    return all((shown[name].translation - fk[name].translation).length <= 1e-4 * length
               and rotation_degrees(shown[name], fk[name]) <= 0.01 for name in CHAIN)


@pytest.mark.parametrize("role", ["POLE", "CLONE"])
def test_snap_ik_to_fk_with_a_control_deleted_by_hand_changes_nothing_and_names_it(role):
    obj = both_legs_rigged()
    _delete(obj, role)
    _posed_in_fk(obj)
    set_active_bone(obj, "shin.L")
    before = _state(obj)
    with pytest.raises(RuntimeError, match=rf"'shin.L'.*the {role.lower()} of this limb no longer exists.*Rebuild"):
        bpy.ops.ik_rigger.snap_ik_to_fk()
    with pytest.raises(api.RigError, match=f"the {role.lower()} of this limb no longer exists"):
        api.snap_limb(obj, "shin.L", "IK", key=True, frame=1)
    assert _state(obj) == before


def test_a_rebuild_makes_the_pole_again_and_the_snap_lands_on_the_fk_pose():
    obj = both_legs_rigged()
    pole = _delete(obj, "POLE")
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.rebuild_limb() == {"FINISHED"}
    assert pole in obj.data.bones
    _posed_in_fk(obj)
    fk = evaluate(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert _lands(obj, fk)


def test_switch_parent_with_the_parent_socket_deleted_by_hand_changes_nothing_and_names_it():
    # Switched without it, the switch said it was done and the handle followed nothing new.
    obj = both_legs_rigged()
    api.build(obj, "shin.L", parent_switch=True)
    socket = _delete(obj, "SOCKET")
    obj.pose.bones["hips"].location = (0.0, 0.1, 0.05)
    before = _state(obj)
    with pytest.raises(api.RigError, match="'shin.L'.*the socket of this limb no longer exists.*Rebuild"):
        api.switch_parent(obj, "shin.L", "Torso", key=True, frame=1)
    assert _state(obj) == before
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.rebuild_limb() == {"FINISHED"}
    assert socket in obj.data.bones
    handle = next(limb for limb in api.limbs(obj) if limb.name == "shin.L").bones["HANDLE"]
    shown = evaluate(obj)
    assert api.switch_parent(obj, "shin.L", "Torso", key=True, frame=1)
    after = evaluate(obj)
    length = chain_length(obj, CHAIN[:2])
    assert all((after[name].translation - shown[name].translation).length <= 1e-4 * length for name in CHAIN)
    obj.pose.bones["hips"].location = (0.0, 0.2, 0.0)
    moved = evaluate(obj)[handle].translation - after[handle].translation
    assert moved.length > 0.1 * length  # the handle follows the torso now


def _floor(height: float) -> bpy.types.Object:
    mesh = bpy.data.meshes.new("Floor")
    mesh.from_pydata([(-5, -5, height), (5, -5, height), (5, 5, height), (-5, 5, height)], [], [(0, 1, 2, 3)])
    floor = bpy.data.objects.new("Floor", mesh)
    bpy.context.scene.collection.objects.link(floor)
    return floor


@pytest.mark.parametrize("role", ["TARGET", "CLONE"])
def test_plant_feet_with_a_control_the_foot_follows_deleted_by_hand_changes_nothing_and_names_it(role):
    # Planted without the IK's target the foot stayed where it was, without its clone it tipped; both "planted".
    obj = both_legs_rigged()
    _delete(obj, role)
    floor = _floor(0.2)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"'shin.L'.*the {role.lower()} of this limb no longer exists.*Rebuild"):
        api.plant_feet(obj, floor)
    assert _state(obj) == before


@pytest.mark.parametrize("role", ["POLE", "POLE_LINE"])
def test_a_deleted_pole_or_pole_line_plants_feet_and_a_deleted_pole_line_snaps(role):
    obj = both_legs_rigged()
    _delete(obj, role)
    assert api.plant_feet(obj, _floor(0.2)).feet == ["shin.L", "shin.R"]
    shown = evaluate(obj)
    assert abs(shown["foot.L"].translation.z - shown["foot.R"].translation.z) < 1e-4
    if role == "POLE_LINE":
        _posed_in_fk(obj)
        fk = evaluate(obj)
        assert api.snap_limb(obj, "shin.L", "IK")
        assert _lands(obj, fk)


@pytest.mark.parametrize("role", ["POLE", "TARGET"])
def test_bake_fk_to_ik_with_a_control_deleted_by_hand_names_it_and_keys_nothing(role):
    # Clearing the FK keys, the bake was refused for a twist Blender's IK takes from the chain's own pose,
    # which was not the matter; without clearing, it keyed an IK that no longer played.
    obj = both_legs_rigged()
    _delete(obj, role)
    _posed_in_fk(obj)
    for name in CHAIN:
        obj.pose.bones[name].keyframe_insert("rotation_quaternion", frame=1)
    before = _state(obj)
    for clear in (True, False):
        with pytest.raises(api.RigError, match=rf"'shin.L'.*the {role.lower()} of this limb no longer exists"):
            api.bake(obj, "FK_TO_IK", range(1, 4), switch=True, clear=clear)
        assert _state(obj) == before
    # What reads the rig as it plays still works: the chain takes what the other leg's IK shows.
    assert api.bake(obj, "IK_TO_FK", range(1, 4), bones=["shin.R"]) == {"shin.R": 3}
