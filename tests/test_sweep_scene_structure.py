"""The character as scenes hold it: shown through a collection instance (an empty instancing its
collection), in a second view layer, in the view layer of another window. What cannot be posed is refused
naming what the user sees and what to change; the rest works as in a default scene."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length
from test_bake import animated_leg, assert_plays_the_same, played

from ik_rigger import api


def _hero(obj: bpy.types.Object, in_scene: bool) -> bpy.types.Collection:
    """``obj`` moved into the collection 'Hero': linked into the scene but excluded from its view layer, or
    in no scene at all (an asset collection); an empty 'Hero Instance' shows it as a collection instance."""
    scene = bpy.context.scene
    collection = bpy.data.collections.new("Hero")
    collection.objects.link(obj)
    scene.collection.objects.unlink(obj)
    if in_scene:
        scene.collection.children.link(collection)
        bpy.context.view_layer.layer_collection.children["Hero"].exclude = True
    instance = bpy.data.objects.new("Hero Instance", None)
    instance.instance_type = "COLLECTION"
    instance.instance_collection = collection
    scene.collection.objects.link(instance)
    bpy.context.view_layer.objects.active = instance
    return collection


def _keys(obj: bpy.types.Object) -> list[tuple[str, int, tuple[float, ...]]]:
    return sorted((curve.data_path, curve.array_index, tuple(value for point in curve.keyframe_points
                                                             for value in point.co)) for curve in all_fcurves(obj))


@pytest.mark.parametrize("in_scene", [True, False], ids=["collection excluded", "collection in no scene"])
def test_a_character_shown_through_a_collection_instance_is_refused_naming_the_instance(in_scene, tmp_path):
    """Before, a character in no scene shown by an instance was said to be 'in no scene', and the sidebar's
    operators, the instance active, asked for an armature with nothing to click."""
    obj, _chain = animated_leg()
    api.build(obj, "shin.L", both_sides=False)
    bpy.ops.object.mode_set(mode="OBJECT")
    _hero(obj, in_scene)
    keys = _keys(obj)
    ground = bpy.data.objects.new("Ground", bpy.data.meshes.new("Ground"))
    bpy.context.scene.collection.objects.link(ground)
    for call in (lambda: api.auto_rig(obj), lambda: api.snap_limb(obj, "shin.L", "FK", key=True),
                 lambda: api.bake(obj, "IK_TO_FK", range(1, 26)), lambda: api.switch_parent(obj, "shin.L", 0),
                 lambda: api.plant_feet(obj, ground), lambda: api.remove(obj, "shin.L"),
                 lambda: api.export(obj, str(tmp_path / "hero.glb"))):
        with pytest.raises(api.RigError) as refused:
            call()
        message = str(refused.value)
        assert "only through the collection instance 'Hero Instance'" in message, message
        assert "Work on the collection 'Hero' itself: " + ("include it in the view layer" if in_scene else
                                                           "link it into the scene 'Scene'") in message, message
    assert _keys(obj) == keys and len(obj.ik_rigger.limbs) == 1 and not (tmp_path / "hero.glb").exists()
    for operator in (bpy.ops.ik_rigger.auto_rig, bpy.ops.ik_rigger.snap_fk_to_ik, bpy.ops.ik_rigger.bake):
        with pytest.raises(RuntimeError, match="'Hero Instance' shows the collection 'Hero' as an instance, which "
                           "no one can pose: work on the collection's armature itself"):
            operator()


def test_a_character_in_its_collection_and_an_instance_of_it_besides_is_rigged():
    """The collection in the scene and shown, an instance of it elsewhere (a crowd): the armature itself is
    rigged, and its motion kept."""
    obj, chain = animated_leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    collection = _hero(obj, in_scene=True)
    bpy.context.view_layer.layer_collection.children[collection.name].exclude = False
    before = played(obj, range(1, 26))
    api.auto_rig(obj)
    assert_plays_the_same(obj, before, chain_length(obj, chain))


def test_a_character_in_a_second_view_layer_only_is_rigged_there():
    """Excluded from the first view layer, included in the second, the one the window shows."""
    obj, chain = animated_leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    scene = bpy.context.scene
    collection = bpy.data.collections.new("Hero")
    scene.collection.children.link(collection)
    collection.objects.link(obj)
    scene.collection.objects.unlink(obj)
    first, second = bpy.context.view_layer, scene.view_layers.new("Animation")
    first.layer_collection.children["Hero"].exclude = True
    length = chain_length(obj, chain)
    with pytest.raises(api.RigError, match="excluded from the view layer"):
        api.auto_rig(obj)
    with bpy.context.temp_override(view_layer=second):
        second.objects.active = obj
        before = played(obj, range(1, 26))
        api.auto_rig(obj)
        assert_plays_the_same(obj, before, length)
        api.bake(obj, "IK_TO_FK", range(1, 26), switch=True)
        assert_plays_the_same(obj, before, length)
        api.remove(obj, "shin.L")
        assert_plays_the_same(obj, before, length)
