"""Armatures that already carry someone else's rig: soloed bone collections, a game rig whose deform
bones follow its control bones, a rig Rigify generated. Each limb is rigged harmlessly, or refused
naming the bone and what to do."""

from __future__ import annotations

import bpy
from helpers import both_legs, make_armature, same, snapshot

from ik_rigger import api


def _legs_in_collections(solo: bool) -> bpy.types.Object:
    """Both legs, the leg bones in 'Legs' (soloed with ``solo``), the root and hips in 'Body'."""
    obj = make_armature(both_legs())
    armature = obj.data
    legs, body = armature.collections.new("Legs"), armature.collections.new("Body")
    for bone in armature.bones:
        (legs if "." in bone.name else body).assign(bone)
    legs.is_solo = solo
    return obj


def _shown(obj: bpy.types.Object, bone: str) -> bool:
    return any(collection.is_visible_effectively for collection in obj.data.bones[bone].collections)


def test_controls_show_beside_a_soloed_collection() -> None:
    """With one of the user's bone collections soloed, Blender shows only soloed collections: the
    controls' collection is soloed too, so the handles and poles show; the user's collections keep
    their own solo and visibility, and Remove takes the controls' collection away."""
    obj = _legs_in_collections(solo=True)
    before = snapshot(obj)
    solos = {collection.name: collection.is_solo for collection in obj.data.collections_all}
    for limb in api.auto_rig(obj):
        for role in ("HANDLE", "POLE"):
            assert _shown(obj, limb.bones[role]), (limb.name, role)
        assert not any(_shown(obj, limb.bones[role]) for role in ("TARGET", "REACH", "CLONE"))  # the mechanism
    assert {name: obj.data.collections_all[name].is_solo for name in solos} == solos
    assert _shown(obj, "shin.L") and not _shown(obj, "hips")
    for limb in api.limbs(obj):
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)
    assert {collection.name: collection.is_solo for collection in obj.data.collections_all} == solos


def test_controls_are_not_soloed_where_nothing_is() -> None:
    obj = _legs_in_collections(solo=False)
    limb = api.build(obj, "shin.L")[0]
    assert not any(collection.is_solo for collection in obj.data.collections_all)
    assert _shown(obj, limb.bones["HANDLE"])
