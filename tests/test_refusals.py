"""Bad input: a clear message naming the bone or object, and the armature left as it was."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, leg_bones, make_armature, same, set_active_bone, snapshot

from ik_rigger.core.errors import RigError
from ik_rigger.core.plan import LimbOptions
from ik_rigger.rig.build import build_limbs


def refused(obj: bpy.types.Object, match: str, **options) -> None:
    """build_ik fails with a message matching ``match`` and changes nothing."""
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.ik_rigger.build_ik(**options)
    assert same(snapshot(obj), before)


def test_active_object_not_an_armature():
    mesh = bpy.data.objects.new("Cube", bpy.data.meshes.new("Cube"))
    bpy.context.scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh
    with pytest.raises(RuntimeError, match="Make an armature the active object"):
        bpy.ops.ik_rigger.build_ik()
    with pytest.raises(RigError, match="'Cube' is a mesh, not an armature"):
        build_limbs(mesh, [("shin.L", LimbOptions())])


def test_no_active_bone():
    obj = make_armature(leg_bones())
    obj.data.bones.active = None
    with pytest.raises(RuntimeError, match="Make a bone active"):
        bpy.ops.ik_rigger.build_ik()


def test_object_mode_is_refused_by_poll():
    obj = make_armature(leg_bones(), mode="OBJECT")
    set_active_bone(obj, "shin.L")
    with pytest.raises(RuntimeError, match="Pose or Edit mode"):
        bpy.ops.ik_rigger.build_ik()


def test_chain_longer_than_the_hierarchy():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.L': has only 3 parent bone\(s\), so a chain of 5 bones", chain_length=5)


def test_missing_extremity_name():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, "'heel.L': is not a bone of this armature", extremity_mode="BONE", extremity_name="heel.L")


def test_extremity_inside_the_chain():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, "'thigh.L': is in the chain", extremity_mode="BONE", extremity_name="thigh.L")


@pytest.mark.parametrize("parent,match", [
    ("thigh.L", "dependency cycle"),
    ("toe.L", "dependency cycle"),
    ("hips", "moves with the chain's parent"),
    ("nowhere", "is not a bone of this armature"),
])
def test_handle_parent_inside_the_chain(parent, match):
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, f"'{parent}': .*{match}", handle_parent_mode="BONE", handle_parent=parent)


def test_user_ik_constraint_already_there():
    obj = make_armature(leg_bones())
    obj.pose.bones["shin.L"].constraints.new("IK")
    set_active_bone(obj, "shin.L")
    refused(obj, "'shin.L': already has an IK constraint")


def test_chain_already_in_another_limb():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    set_active_bone(obj, "toe.L")
    refused(obj, "'shin.L': already belongs to the limb ending at 'shin.L'", chain_length=3)


def test_one_bad_limb_of_several_changes_nothing():
    obj = make_armature(both_legs())
    before = snapshot(obj)
    with pytest.raises(RigError, match="'nope'"):
        build_limbs(obj, [("shin.L", LimbOptions()), ("nope", LimbOptions())])
    assert same(snapshot(obj), before)


def test_remove_on_a_bone_without_limb():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    with pytest.raises(RuntimeError, match="not part of a limb rigged by IK Rigger"):
        bpy.ops.ik_rigger.remove_ik()


def _linked_rig(tmp_path) -> bpy.types.Object:
    make_armature(leg_bones(), mode="OBJECT")
    library = str(tmp_path / "library.blend")
    bpy.data.libraries.write(library, {bpy.data.objects["Rig"]})
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (source, target):
        target.objects = ["Rig"]
    obj = target.objects[0]
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    return obj


def test_linked_armature(tmp_path):
    obj = _linked_rig(tmp_path)
    with pytest.raises(RigError, match="'Rig' is linked from the library"):
        build_limbs(obj, [("shin.L", LimbOptions())])
    assert "foot_IK.L" not in obj.data.bones


def test_library_override(tmp_path):
    linked = _linked_rig(tmp_path)
    obj = linked.override_create(remap_local_usages=True)
    assert obj.override_library is not None
    before = snapshot(obj)
    with pytest.raises(RigError, match="library override"):
        build_limbs(obj, [("shin.L", LimbOptions())])
    assert same(snapshot(obj), before)


def test_armature_in_a_hidden_collection():
    obj = make_armature(leg_bones(), mode="OBJECT")
    collection = bpy.data.collections.new("Characters")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)
    collection.hide_viewport = True
    before = snapshot(obj)
    with pytest.raises(RigError, match="hidden collection"):
        build_limbs(obj, [("shin.L", LimbOptions())])
    assert same(snapshot(obj), before)
    assert not obj.hide_viewport


def test_hidden_armature_is_shown_for_the_build_and_hidden_again():
    obj = make_armature(leg_bones(), mode="OBJECT")
    obj.hide_set(True)
    build_limbs(obj, [("shin.L", LimbOptions())])
    assert obj.hide_get()
    assert "foot_IK.L" in obj.data.bones
