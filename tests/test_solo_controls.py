"""Rigging while one of the user's bone collections is soloed: the controls show as long as it is
soloed, and once the user turns its solo off the armature shows as it did before, every collection
by its own visibility (IK Rigger's own collection soloed would have hidden all but the controls)."""

from __future__ import annotations

import bpy
from helpers import both_legs, make_armature, same, snapshot

from ik_rigger import api


def _legs_in_collections() -> bpy.types.Object:
    """Both legs, the leg bones in 'Legs' (soloed), the root and hips in 'Body', a hidden 'Spare'."""
    obj = make_armature(both_legs())
    armature = obj.data
    legs, body = armature.collections.new("Legs"), armature.collections.new("Body")
    armature.collections.new("Spare").is_visible = False
    for bone in armature.bones:
        (legs if "." in bone.name else body).assign(bone)
    legs.is_solo = True
    return obj


def _shown(obj: bpy.types.Object, bone: str) -> bool:
    bpy.context.view_layer.update()
    return any(collection.is_visible_effectively for collection in obj.data.bones[bone].collections)


def test_unsoloing_the_users_collection_shows_the_armature_as_before() -> None:
    obj = _legs_in_collections()
    notes: list[str] = []
    built = api.auto_rig(obj, notes=notes)
    controls = [limb.bones[role] for limb in built for role in ("HANDLE", "POLE")]
    assert all(_shown(obj, name) for name in controls)
    assert not _shown(obj, "hips")
    obj.data.collections_all["Legs"].is_solo = False
    assert _shown(obj, "hips") and _shown(obj, "root") and _shown(obj, "shin.L")
    assert all(_shown(obj, name) for name in controls)
    assert not any(_shown(obj, limb.bones["CLONE"]) for limb in built)  # the mechanism stays out of sight
    assert not any(collection.is_solo for collection in obj.data.collections_all)
    obj.data.collections_all["Legs"].is_solo = True
    assert all(_shown(obj, name) for name in controls) and not _shown(obj, "hips")
    note = next(note for limb in built for note in limb.notes if "soloed bone collection 'Legs'" in note)
    assert not api.is_warning(note)


def test_remove_gives_the_soloed_collection_back_as_it_was() -> None:
    obj = _legs_in_collections()
    before = snapshot(obj)
    members = {collection.name: sorted(bone.name for bone in collection.bones)
               for collection in obj.data.collections_all}
    for limb in api.auto_rig(obj):
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)
    assert {collection.name: sorted(bone.name for bone in collection.bones)
            for collection in obj.data.collections_all} == members
    assert [collection.name for collection in obj.data.collections_all if collection.is_solo] == ["Legs"]


def test_no_solo_no_note() -> None:
    obj = _legs_in_collections()
    obj.data.collections_all["Legs"].is_solo = False
    limb = api.build(obj, "shin.L")[0]
    assert not any("soloed" in note for note in limb.notes)
    assert [bone.name for bone in obj.data.collections_all["Legs"].bones if "IK" in bone.name] == []


def test_every_soloed_collection_of_the_users_shows_the_controls_and_ik_riggers_own_are_not_used() -> None:
    """Two collections soloed: the controls go in both. IK Rigger's own mechanism collection soloed (to look
    at the mechanism) is no collection of the user's: the controls do not go there."""
    obj = _legs_in_collections()
    obj.data.collections_all["Body"].is_solo = True
    limb = api.build(obj, "shin.L")[0]
    assert any("soloed bone collections 'Legs' and 'Body', so they show while they are soloed" in note
               for note in limb.notes), limb.notes
    for name in ("Legs", "Body"):
        members = {bone.name for bone in obj.data.collections_all[name].bones}
        assert {limb.bones["HANDLE"], limb.bones["POLE"]} <= members
    for name in ("Legs", "Body"):
        obj.data.collections_all[name].is_solo = False
    mechanism = obj.data.collections_all[obj.ik_rigger.mechanism_collection]
    mechanism.is_solo = True
    rebuilt = api.build(obj, "shin.L", pole_distance=0.75)[0]
    assert not any(bone.name in (rebuilt.bones["HANDLE"], rebuilt.bones["POLE"]) for bone in mechanism.bones)
    assert not any("soloed" in note for note in rebuilt.notes)
    assert not _shown(obj, rebuilt.bones["HANDLE"])  # as Blender shows a mechanism soloed: only it
