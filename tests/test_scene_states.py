"""Scenes as users have them: armatures Blender does not evaluate, linked and overridden data, other
characters posed and unkeyed, made bones duplicated by hand. Every operation is right or refused by name."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from helpers import chain_length, evaluate, leg_bones, make_armature
from mathutils import Matrix, Vector
from test_bake import animated_leg, assert_plays_the_same, played
from test_ground import SLOPE, assert_planted, biped, plane

from ik_rigger import api


def _keys(obj: bpy.types.Object) -> dict[tuple[str, int], list[float]]:
    from ik_rigger.rig.animation import fcurve_owners

    found = {}
    for owner in fcurve_owners(obj):
        for curve in owner.fcurves:
            values = [0.0] * (2 * len(curve.keyframe_points))
            curve.keyframe_points.foreach_get("co", values)
            found[(curve.data_path, curve.array_index)] = values
    return found


def _ik_motion() -> tuple[bpy.types.Object, list[str], dict[int, dict[str, Matrix]]]:
    """A leg rigged without its motion, its handle keyed to move: what the IK plays, frames 1 to 25."""
    obj, chain = animated_leg()
    api.build(obj, "shin.L", both_sides=False, animation="IGNORE")
    handle = obj.pose.bones[obj.ik_rigger.limbs[0].handle]
    for frame, height in ((1, 0.0), (13, 0.15), (25, 0.05)):
        handle.location = (0.0, 0.0, height)
        handle.keyframe_insert("location", frame=frame)
    bpy.context.scene.frame_set(1)
    return obj, chain, played(obj, range(1, 26))


def _in_collection(obj: bpy.types.Object, name: str = "Hero") -> bpy.types.Collection:
    collection = bpy.data.collections.new(name)
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)
    return collection


def test_baking_an_armature_disabled_in_viewports_bakes_what_the_ik_plays():
    obj, chain, ik = _ik_motion()
    if obj.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    obj.hide_viewport = True
    api.bake(obj, "IK_TO_FK", range(1, 26), switch=True)
    assert obj.hide_viewport  # given back as it was
    obj.hide_viewport = False
    assert_plays_the_same(obj, ik, chain_length(obj, chain))


def test_snapping_an_armature_disabled_in_viewports_snaps_to_what_the_ik_shows():
    obj, chain, ik = _ik_motion()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.scene.frame_set(13)
    shown = evaluate(obj)
    bpy.context.scene.frame_set(1)
    obj.hide_viewport = True
    bpy.context.scene.frame_set(13)
    api.snap_limb(obj, "shin.L", "FK", key=True)
    obj.hide_viewport = False
    bpy.context.scene.frame_set(12)
    bpy.context.scene.frame_set(13)
    now = evaluate(obj)
    length = chain_length(obj, chain)
    for name in chain:
        assert (now[name].translation - shown[name].translation).length < 1e-4 * length, name
        assert (now[name] @ Vector((0, 1, 0, 0)) - shown[name] @ Vector((0, 1, 0, 0))).length < 1e-3, name


def test_planting_the_feet_of_an_armature_disabled_in_viewports_reads_its_pose_at_this_frame():
    obj = biped()
    ground = plane(rotation=(0.0, SLOPE, 0.0))
    root = obj.pose.bones["root"]
    for frame, height in ((1, 0.0), (10, 0.08)):
        root.location = (0.0, 0.0, height)  # the root's Y is the world's Z: the body rises
        root.keyframe_insert("location", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.scene.frame_set(1)
    obj.hide_viewport = True
    bpy.context.scene.frame_set(10)
    api.plant_feet(obj, ground)
    assert obj.hide_viewport
    obj.hide_viewport = False
    bpy.context.scene.frame_set(9)
    bpy.context.scene.frame_set(10)
    for side in ("L", "R"):
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")


@pytest.mark.parametrize("how", ["excluded", "disabled"])
def test_an_armature_its_collection_keeps_out_is_refused_alike_by_every_operation(how):
    obj, chain, _ik = _ik_motion()
    bpy.ops.object.mode_set(mode="OBJECT")
    collection = _in_collection(obj, "Hero Collection")
    if how == "excluded":
        bpy.context.view_layer.layer_collection.children[collection.name].exclude = True
    else:
        collection.hide_viewport = True
    keys = _keys(obj)
    ground = bpy.data.objects.new("Ground", bpy.data.meshes.new("Ground"))
    bpy.context.scene.collection.objects.link(ground)
    for call in (lambda: api.bake(obj, "IK_TO_FK", range(1, 26)), lambda: api.snap_limb(obj, "shin.L", "FK"),
                 lambda: api.plant_feet(obj, ground), lambda: api.auto_rig(obj), lambda: api.build(obj, "shin.L")):
        with pytest.raises(api.RigError) as refused:
            call()
        assert "'Hero Collection'" in str(refused.value), str(refused.value)
    assert _keys(obj) == keys
    assert obj.pose.bones[obj.ik_rigger.limbs[0].handle]["ik_fk"] == 1.0


def _library_rig(tmp_path) -> tuple[bpy.types.Object, str]:
    """A rigged leg saved in a library file, linked into a fresh scene."""
    obj, _chain = animated_leg()
    api.build(obj, "shin.L", both_sides=False)
    bpy.ops.object.mode_set(mode="OBJECT")
    library = str(tmp_path / "hero_library.blend")
    bpy.data.libraries.write(library, {obj}, fake_user=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (_source, target):
        target.objects = ["Rig"]
    linked = target.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    return linked, library


def test_a_rig_linked_from_a_library_is_never_written(tmp_path):
    obj, library = _library_rig(tmp_path)
    assert obj.library is not None
    pose = {bone.name: bone.matrix_basis.copy() for bone in obj.pose.bones}
    handle = obj.ik_rigger.limbs[0].handle
    keys = _keys(obj)
    ground = bpy.data.objects.new("Ground", bpy.data.meshes.new("Ground"))
    bpy.context.scene.collection.objects.link(ground)
    for call in (lambda: api.snap_limb(obj, "shin.L", "FK"), lambda: api.snap_limb(obj, "shin.L", "IK", key=True),
                 lambda: api.bake(obj, "IK_TO_FK", range(1, 5), switch=True), lambda: api.plant_feet(obj, ground),
                 lambda: api.switch_parent(obj, "shin.L", 0), lambda: api.build(obj, "shin.L"),
                 lambda: api.remove(obj, "shin.L"), lambda: api.auto_rig(obj), lambda: api.upgrade(obj)):
        with pytest.raises(api.RigError) as refused:
            call()
        assert "hero_library.blend" in str(refused.value) and "linked" in str(refused.value), str(refused.value)
    assert {bone.name: bone.matrix_basis for bone in obj.pose.bones} == pose
    assert obj.pose.bones[handle]["ik_fk"] == 1.0 and _keys(obj) == keys


def _played_from_a_library(obj: bpy.types.Object, name: str, library: Path) -> bpy.types.Action:
    """``obj``'s action, named ``name``, written to ``library`` and played from there, linked, in the
    same slot: returns the linked action."""
    action = obj.animation_data.action
    action.name = name
    bpy.data.libraries.write(str(library), {action}, fake_user=True)
    with bpy.data.libraries.load(str(library), link=True) as (_source, target):
        target.actions = [name]
    linked = target.actions[0]
    slot = obj.animation_data.action_slot if hasattr(obj.animation_data, "action_slot") else None
    obj.animation_data.action = linked
    if slot is not None:
        obj.animation_data.action_slot = linked.slots[slot.identifier]
    return linked


def test_keys_are_never_written_into_an_action_linked_from_a_library(tmp_path):
    obj, _chain, _ik = _ik_motion()
    linked = _played_from_a_library(obj, "Shot", tmp_path / "shots.blend")
    keys = _keys_of_action(linked)
    pose = {bone.name: bone.matrix_basis.copy() for bone in obj.pose.bones}
    for call in (lambda: api.bake(obj, "IK_TO_FK", range(1, 26)), lambda: api.snap_limb(obj, "shin.L", "FK", key=True)):
        with pytest.raises(api.RigError) as refused:
            call()
        assert "'Shot'" in str(refused.value) and "shots.blend" in str(refused.value), str(refused.value)
    assert _keys_of_action(linked) == keys
    assert {bone.name: bone.matrix_basis for bone in obj.pose.bones} == pose


def test_auto_rig_on_a_library_override_names_the_override(tmp_path):
    obj, _chain = animated_leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.name = "Hero"
    collection = _in_collection(obj, "Character")
    library = str(tmp_path / "character.blend")
    bpy.data.libraries.write(library, {collection}, fake_user=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (_source, target):
        target.collections = ["Character"]
    linked = target.collections[0]
    bpy.context.scene.collection.children.link(linked)
    linked.override_hierarchy_create(bpy.context.scene, bpy.context.view_layer, do_fully_editable=True)
    override = next(item for item in bpy.data.objects if item.override_library is not None)
    override.name = "OvHero"
    with pytest.raises(api.RigError) as refused:
        api.auto_rig(override)
    assert "'OvHero' is a library override" in str(refused.value), str(refused.value)
    assert not override.ik_rigger.limbs


def test_a_walk_linked_from_a_library_is_kept_in_a_local_action(tmp_path):
    obj, _chain = animated_leg()
    walk = obj.animation_data.action
    walk.name = "Walk"
    library = str(tmp_path / "walks.blend")
    bpy.data.libraries.write(library, {walk}, fake_user=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    obj = make_armature(leg_bones(bend=0.08), mode="OBJECT")
    with bpy.data.libraries.load(library, link=True) as (_source, target):
        target.actions = ["Walk"]
    linked = target.actions[0]
    obj.animation_data_create().action = linked
    if hasattr(obj.animation_data, "action_slot") and obj.animation_data.action_slot is None:
        obj.animation_data.action_slot = linked.slots[0]
    keys = _keys(obj)
    expected = played(obj, range(1, 26))
    height = chain_length(obj, ["thigh.L", "shin.L"])
    built = api.auto_rig(obj)
    notes = [note for limb in built for note in limb.notes if "'Walk'" in note]
    assert notes and "walks.blend" in notes[0] and "local action" in notes[0], [limb.notes for limb in built]
    assert obj.animation_data.action != linked and obj.animation_data.action.library is None
    assert _keys_of_action(linked) == {path: values for path, values in keys.items()}
    saved = str(tmp_path / "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=saved)
    bpy.ops.wm.open_mainfile(filepath=saved)
    assert_plays_the_same(bpy.data.objects["Rig"], expected, height)


def test_removing_a_limb_whose_action_is_linked_keeps_the_motion_in_a_local_action(tmp_path):
    obj, chain = animated_leg()
    api.build(obj, "shin.L", both_sides=False)
    linked = _played_from_a_library(obj, "RiggedWalk", tmp_path / "rigged_walks.blend")
    expected = played(obj, range(1, 26))
    keys = _keys_of_action(linked)
    messages = api.remove(obj, "shin.L")
    assert any("'RiggedWalk'" in message and "rigged_walks.blend" in message for message in messages), messages
    assert obj.animation_data.action.library is None and _keys_of_action(linked) == keys
    assert_plays_the_same(obj, expected, chain_length(obj, chain))


def _keys_of_action(action: bpy.types.Action) -> dict[tuple[str, int], list[float]]:
    from ik_rigger.rig.animation import action_owners

    slot = action.slots[0] if hasattr(action, "slots") and len(action.slots) else None
    found = {}
    for owner in action_owners(action, slot):
        for curve in owner.fcurves:
            values = [0.0] * (2 * len(curve.keyframe_points))
            curve.keyframe_points.foreach_get("co", values)
            found[(curve.data_path, curve.array_index)] = values
    return found


def test_rigging_one_character_leaves_another_posed_and_unkeyed_as_it_was():
    obj, _chain = animated_leg()
    bpy.ops.object.mode_set(mode="OBJECT")
    other, _ = animated_leg()
    other.name = "Other"
    bone = other.pose.bones["shin.L"]
    bone.rotation_euler = (1.1, 0.2, -0.3)  # posed by the animator, not keyed yet
    bone.location = (0.01, 0.02, 0.03)
    bpy.context.scene.frame_set(7)
    bone.rotation_euler = (1.1, 0.2, -0.3)
    bone.location = (0.01, 0.02, 0.03)
    assert other.mode == "POSE"
    api.auto_rig(obj)
    assert tuple(bone.rotation_euler) == pytest.approx((1.1, 0.2, -0.3), abs=1e-6)
    assert tuple(bone.location) == pytest.approx((0.01, 0.02, 0.03), abs=1e-6)
    assert other.mode == "POSE" and len(obj.ik_rigger.limbs) == 2 - 1


def _duplicate(obj: bpy.types.Object, name: str) -> str:
    """Shift+D on one bone in Edit mode, as a user does: the copy's name."""
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for bone in obj.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = False
    bone = obj.data.edit_bones[name]
    bone.select = bone.select_head = bone.select_tail = True
    obj.data.edit_bones.active = bone
    bpy.ops.armature.duplicate()
    copy = obj.data.edit_bones.active.name
    bpy.ops.object.mode_set(mode="POSE")
    return copy


def test_a_duplicated_handle_is_the_users_bone():
    obj = make_armature(leg_bones(bend=0.08))
    limb = api.build(obj, "shin.L", both_sides=False)[0]
    handle, pole = limb.bones["HANDLE"], limb.bones["POLE"]
    copy = _duplicate(obj, handle)
    obj.data.bones[pole].name = "knee target"  # a rename since: made bones are found by their marks
    assert api.limbs(obj)[0].bones["HANDLE"] == handle
    with pytest.raises(api.RigError):
        api.snap_limb(obj, copy, "FK")  # the copy belongs to no limb
    api.remove(obj, "shin.L")
    assert copy in obj.data.bones and handle not in obj.data.bones


@pytest.mark.parametrize("hidden", [False, True])
def test_an_armature_shown_through_one_collection_is_rigged_though_another_keeps_it_out(hidden):
    """An armature in two collections, one excluded from the view layer, is evaluated through the other: it
    is rigged, shown or hidden; hidden, it is refused once that other collection is disabled in viewports."""
    obj, _chain, _ik = _ik_motion()
    bpy.ops.object.mode_set(mode="OBJECT")
    shown = _in_collection(obj, "Shown")
    kept_out = bpy.data.collections.new("Kept Out")
    bpy.context.scene.collection.children.link(kept_out)
    kept_out.objects.link(obj)
    bpy.context.view_layer.layer_collection.children[kept_out.name].exclude = True
    obj.hide_set(hidden)
    assert obj.visible_get() != hidden
    api.build(obj, "shin.L", both_sides=False)
    assert obj.hide_get() == hidden
    shown.hide_viewport = True
    with pytest.raises(api.RigError) as refused:
        api.build(obj, "shin.L", both_sides=False)
    assert "'Shown'" in str(refused.value) or "'Kept Out'" in str(refused.value), str(refused.value)
