"""A limb whose chain bone was deleted (or renamed) by hand, rebuilt or removed: a deleted one is named in a
refusal that changes nothing, and a removal takes out what is left without touching the bones above the
chain; a renamed one is followed as before."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, both_legs, evaluate, make_armature, same, set_active_bone, snapshot

from ik_rigger import api


def _rigged(delete: str | None = None, rename: tuple[str, str] | None = None, rig: bool = True,
            name: str = "Rig", keyed: bool = True) -> bpy.types.Object:
    """Both legs, the left one rigged (unless not ``rig``), its hips keyed over frames 1 to 3 (unless not
    ``keyed``); then ``delete`` (or ``rename``) one of its bones in Edit mode, as a user does, and back to
    Pose mode."""
    obj = make_armature(both_legs(), name=name, mode="POSE")
    if rig:
        api.build(obj, "shin.L")
    hips = obj.pose.bones["hips"]
    hips.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (3, 0.3)) if keyed else ():
        hips.rotation_euler = (angle, 0.0, 0.0)
        hips.keyframe_insert("rotation_euler", frame=frame)
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    if delete:
        edit_bones.remove(edit_bones[delete])
    if rename:
        edit_bones[rename[0]].name = rename[1]
    bpy.ops.object.mode_set(mode="POSE")
    return obj


@pytest.mark.parametrize("deleted", ["thigh.L", "shin.L"])
def test_rebuilding_a_limb_whose_chain_bone_was_deleted_is_refused_naming_it(deleted):
    """The first chain bone deleted left the IK reaching into the hips, which a rebuild rigged; the last one
    deleted, Rebuild Limb rigged the hips and the thigh. Either is refused now, naming the bone, and nothing
    changes."""
    obj = _rigged(delete=deleted)
    before = snapshot(obj)
    with pytest.raises(api.RigError) as refused:
        api.build(obj, "shin.L")
    assert refused.value.bone == deleted and "Remove IK Limb" in refused.value.hint
    assert same(snapshot(obj), before)
    with pytest.raises(RuntimeError, match=f"'{deleted}'.*gone"):
        bpy.ops.ik_rigger.rebuild_limb(limb="shin.L")
    assert same(snapshot(obj), before)
    set_active_bone(obj, "foot.L")
    with pytest.raises(RuntimeError, match=f"'{deleted}'.*gone"):
        bpy.ops.ik_rigger.build_ik()
    assert same(snapshot(obj), before)


@pytest.mark.parametrize("deleted", ["thigh.L", "shin.L"])
def test_removing_such_a_limb_leaves_the_bones_above_it_as_they_were(deleted):
    """Removing the limb says the bone was gone, keys nothing new on the hips (it baked the limb's motion onto
    them, the IK's chain reaching there) and gives the bone left its colour back; a fresh build of what is left
    then rigs as on a skeleton that never had the bone."""
    bare = _rigged(delete=deleted, rig=False, name="Bare")
    hips_played = {frame: _hips_at(bare, frame) for frame in (1, 2, 3)}
    bpy.ops.object.mode_set(mode="OBJECT")
    obj = _rigged(delete=deleted)
    messages = api.remove(obj, "shin.L")
    assert any(f"'{deleted}'" in message and "gone" in message for message in messages)
    assert len(obj.ik_rigger.limbs) == 0
    for frame, matrix in hips_played.items():
        assert same(_hips_at(obj, frame), matrix, 1e-6), frame
    left = "thigh.L" if deleted == "shin.L" else "shin.L"
    assert obj.pose.bones[left].color.palette == "DEFAULT"
    assert obj.pose.bones["hips"].color.palette == "DEFAULT"
    hips_curves = [curve for curve in all_fcurves(obj) if curve.data_path.startswith('pose.bones["hips"]')]
    assert sorted((curve.data_path, len(curve.keyframe_points)) for curve in hips_curves) == [
        ('pose.bones["hips"].rotation_euler', 2)] * 3


def _hips_at(obj: bpy.types.Object, frame: int):
    bpy.context.scene.frame_set(frame)
    return evaluate(obj)["hips"].copy()


def test_a_renamed_chain_bone_is_still_followed():
    """Renaming the thigh by hand is not a deletion: the limb rebuilds on the renamed bone, as before."""
    obj = _rigged(rename=("thigh.L", "upper_leg.L"))
    rebuilt = api.build(obj, "shin.L", pole_distance=0.75)
    assert rebuilt[0].chain == ("upper_leg.L", "shin.L")
    assert obj.ik_rigger.limbs[0].pole_distance == 0.75


def test_on_a_hidden_chain_a_deleted_chain_bone_is_refused_and_removed_the_same():
    """Godot's robot, rigged on hidden chains (its bones off their joints): the thigh deleted by hand, a
    rebuild is refused naming it, changing nothing, and Remove takes the rest of the limb out, hidden chain
    and all."""
    from test_hidden_chain import hidden_bones, import_gltf

    obj = import_gltf("godot_platformer_robot.glb")
    api.auto_rig(obj, animation="IGNORE")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.remove(obj.data.edit_bones["l-thigh"])
    bpy.ops.object.mode_set(mode="OBJECT")
    before = snapshot(obj)
    with pytest.raises(api.RigError) as refused:
        api.build(obj, "l-leg")
    assert refused.value.bone == "l-thigh"
    assert same(snapshot(obj), before)
    messages = api.remove(obj, "l-leg")
    assert any("'l-thigh'" in message and "gone" in message for message in messages)
    assert "l-leg" not in [limb.name for limb in obj.ik_rigger.limbs]
    assert not [bone for bone in hidden_bones(obj) if bone.startswith("l-")], hidden_bones(obj)


def test_a_deleted_foot_rebuilds_as_a_fresh_build_of_what_is_left():
    """The foot deleted by hand is no chain bone: the limb rebuilds from what is left (the toe, now below the
    shin, its extremity), as a fresh build on a skeleton without the foot does, and plays the same."""
    built = []
    for rig in (True, False):
        obj = _rigged(delete="foot.L", rig=rig, name=f"Rig{rig}", keyed=False)
        limb = api.build(obj, "shin.L")[0]
        built.append((obj, limb))
        bpy.ops.object.mode_set(mode="OBJECT")
    (rebuilt_obj, rebuilt), (fresh_obj, fresh) = built
    assert (rebuilt.chain, rebuilt.extremity, sorted(rebuilt.bones)) == (fresh.chain, fresh.extremity,
                                                                         sorted(fresh.bones))
    for obj, limb in built:
        obj.pose.bones[limb.bones["HANDLE"]].location = (0.05, -0.1, 0.2)
    bpy.context.view_layer.update()
    for bone in (*fresh.chain, fresh.extremity):
        assert same(evaluate(rebuilt_obj)[bone], evaluate(fresh_obj)[bone], 1e-6), bone


def test_a_chain_bone_deleted_and_made_again_elsewhere_under_its_name_is_not_taken_back():
    """The thigh deleted and a new bone named 'thigh.L' added elsewhere: it is not the limb's, and the rebuild
    is refused as for a deletion (it rigged the hips and the shin)."""
    obj = _rigged(delete="thigh.L", keyed=False)
    bpy.ops.object.mode_set(mode="EDIT")
    made = obj.data.edit_bones.new("thigh.L")
    made.head, made.tail = (0.5, 0.0, 2.0), (0.5, 0.0, 2.3)
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(obj)
    with pytest.raises(api.RigError) as refused:
        api.build(obj, "shin.L")
    assert refused.value.bone == "thigh.L"
    assert same(snapshot(obj), before)
