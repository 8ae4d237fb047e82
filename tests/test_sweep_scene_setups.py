"""Scenes and Blenders set up as animators and riggers have them: a preview range, the preferences for new
keys (Visual Keying, Only Insert Needed, Constant or Linear interpolation, Vector handles), X-axis mirror
and Auto IK in Pose mode, the mesh active in Weight Paint with the armature in Pose mode beside it (Lock
Object Modes on or off), the mesh alone in the 3D Viewport's Local View, the armature parented to a moving
vehicle by Child Of, a scene unit scale of 0.01, a second scene holding the armature. Each operation does
what it does in a default scene."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length, evaluate, make_armature, rotation_degrees, set_active_bone
from mathutils import Vector
from test_bake import animated_leg, assert_plays_the_same, played
from test_ground import assert_planted, plane, walking_biped

from ik_rigger import api


def test_plant_feet_over_the_frame_range_keys_the_preview_range_only():
    """With the preview range on (the frames the animator works on), Plant Feet over Frame Range keyed the
    scene's whole range, rewriting the handles' keys outside it; Bake IK/FK took the preview range already."""
    obj = walking_biped()
    ground = plane(location=(0.0, 0.0, 0.04))
    obj.ik_rigger.ground = ground
    scene = bpy.context.scene
    scene.use_preview_range = True
    scene.frame_preview_start, scene.frame_preview_end = 5, 12
    handles = [limb.bones["HANDLE"] for limb in api.limbs(obj)]

    def keys_outside() -> dict[str, list[tuple[float, ...]]]:
        return {curve.data_path + str(curve.array_index): [tuple(point.co) for point in curve.keyframe_points
                                                          if not 5 <= point.co.x <= 12]
                for curve in all_fcurves(obj) if any(f'"{name}"' in curve.data_path for name in handles)}

    outside = keys_outside()
    assert bpy.ops.ik_rigger.plant_feet(frames="RANGE") == {"FINISHED"}
    after = keys_outside()
    assert {path: after[path] for path in outside} == outside
    assert not any(after[path] for path in after.keys() - outside.keys())  # curves it made: keys in range only
    for frame, side in ((5, "L"), (8, "L"), (10, "R"), (12, "R")):  # the frames each foot is down
        scene.frame_set(frame)
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")


PREFERENCES = {
    "visual keying": lambda edit: setattr(edit, "use_visual_keying", True),
    "only insert needed": lambda edit: setattr(edit, "use_keyframe_insert_needed", True),
    "constant": lambda edit: setattr(edit, "keyframe_new_interpolation_type", "CONSTANT"),
    "linear, vector handles": lambda edit: (setattr(edit, "keyframe_new_interpolation_type", "LINEAR"),
                                            setattr(edit, "keyframe_new_handle_type", "VECTOR")),
}


def _snapped_and_switched(obj: bpy.types.Object, chain: list[str]) -> None:
    """Snap FK to IK keyed on frame 13, Switch Parent keyed on 17: each frame shows what it did, the frames
    before it play as before."""
    length = chain_length(obj, chain)
    before = played(obj, range(1, 18))
    scene = bpy.context.scene
    for frame, call in ((13, lambda: api.snap_limb(obj, "shin.L", "FK", key=True)),
                        (17, lambda: api.switch_parent(obj, "shin.L", 1, key=True))):
        scene.frame_set(frame)
        shown = evaluate(obj)
        call()
        scene.frame_set(frame - 1)
        scene.frame_set(frame)
        now = evaluate(obj)
        for name in chain:
            assert (shown[name].translation - now[name].translation).length < 1e-4 * length, (frame, name)
            assert rotation_degrees(shown[name], now[name]) < 0.01, (frame, name)
    after = played(obj, range(1, 13))
    for frame, poses in after.items():
        for name, matrix in poses.items():
            # Blender's IK starts from the chain's own pose, which the snap keyed: a tenth of a degree.
            assert (matrix.translation - before[frame][name].translation).length < 3e-3 * length, (frame, name)
    handle = obj.pose.bones[obj.ik_rigger.limbs[0].handle]
    scene.frame_set(12)
    assert (handle["ik_fk"], handle["parent"]) == (1.0, 0)
    scene.frame_set(17)
    assert (handle["ik_fk"], handle["parent"]) == (0.0, 1)


def _rigged_kept_baked_removed(obj: bpy.types.Object, chain: list[str]) -> None:
    length = chain_length(obj, chain)
    before = played(obj, range(1, 26))
    api.build(obj, "shin.L", both_sides=False, parent_switch=True)
    assert_plays_the_same(obj, before, length)
    api.bake(obj, "IK_TO_FK", range(1, 26), switch=True)
    assert_plays_the_same(obj, before, length)
    api.bake(obj, "FK_TO_IK", range(1, 26), switch=True)
    assert_plays_the_same(obj, before, length)
    _snapped_and_switched(obj, chain)
    api.remove(obj, "shin.L")


@pytest.mark.parametrize("preference", PREFERENCES)
def test_the_preferences_for_new_keys_change_nothing_the_operations_play(preference):
    PREFERENCES[preference](bpy.context.preferences.edit)
    obj, chain = animated_leg()
    _rigged_kept_baked_removed(obj, chain)


def _vehicle(obj: bpy.types.Object) -> None:
    car = bpy.data.objects.new("Car", None)
    bpy.context.scene.collection.objects.link(car)
    for frame, x in ((1, 0.0), (25, 5.0)):
        car.location, car.rotation_euler = (x, 0.0, 0.0), (0.0, 0.0, 0.2 * x)
        car.keyframe_insert("location", frame=frame)
        car.keyframe_insert("rotation_euler", frame=frame)
    obj.constraints.new("CHILD_OF").target = car


SCENES = {
    "pose mirror and auto IK": lambda obj: (setattr(obj.pose, "use_mirror_x", True),
                                            setattr(obj.pose, "use_auto_ik", True)),
    "vehicle": _vehicle,
    "unit scale 0.01": lambda obj: setattr(bpy.context.scene.unit_settings, "scale_length", 0.01),
    "second scene": lambda obj: bpy.data.scenes.new("Shot 2").collection.objects.link(obj),
}


@pytest.mark.parametrize("scene", SCENES)
def test_the_scene_s_setup_changes_nothing_the_operations_play(scene):
    obj, chain = animated_leg()
    SCENES[scene](obj)
    _rigged_kept_baked_removed(obj, chain)


def _skinned(obj: bpy.types.Object) -> bpy.types.Object:
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata([(0.2, 0.0, 0.5), (0.25, 0.0, 0.5), (0.2, 0.05, 0.6)], [], [(0, 1, 2)])
    body = bpy.data.objects.new("Body", mesh)
    bpy.context.scene.collection.objects.link(body)
    body.parent = obj
    body.modifiers.new("Armature", "ARMATURE").object = obj
    for name in ("thigh.L", "shin.L"):
        body.vertex_groups.new(name=name).add([0, 1, 2], 0.5, "REPLACE")
    return body


OPERATORS = {
    "auto_rig": lambda: bpy.ops.ik_rigger.auto_rig(),
    "snap": lambda: bpy.ops.ik_rigger.snap_fk_to_ik(keyframe=True),
    "bake": lambda: bpy.ops.ik_rigger.bake(direction="IK_TO_FK", frame_start=1, frame_end=25),
    "switch_parent": lambda: bpy.ops.ik_rigger.switch_parent(parent=1, keyframe=True),
    "remove": lambda: bpy.ops.ik_rigger.remove_ik(),
}


@pytest.mark.parametrize("lock", [True, False], ids=["modes locked", "modes unlocked"])
@pytest.mark.parametrize("operator", OPERATORS)
def test_beside_a_mesh_in_weight_paint_the_armature_and_mesh_keep_their_modes(operator, lock):
    """Riggers paint weights with the armature in Pose mode beside the mesh: with the mesh active, the
    operators name the armature to click; with Lock Object Modes off, the armature clicked, they work and
    leave both modes, the mesh's weights and the motion as they were."""
    obj, chain = animated_leg()
    if operator != "auto_rig":
        api.build(obj, "shin.L", both_sides=False, parent_switch=True)
    before = played(obj, range(1, 26))
    bpy.context.scene.tool_settings.lock_object_mode = lock
    bpy.ops.object.mode_set(mode="OBJECT")
    body = _skinned(obj)
    obj.select_set(True)
    body.select_set(True)
    bpy.context.view_layer.objects.active = body
    bpy.ops.paint.weight_paint_toggle()
    assert (body.mode, obj.mode) == ("WEIGHT_PAINT", "POSE")
    set_active_bone(obj, "shin.L")
    bpy.context.scene.frame_set(13)
    with pytest.raises(RuntimeError, match="Make an armature the active object \\(click 'Rig'\\)"):
        OPERATORS[operator]()
    weights = [group.weight for vertex in body.data.vertices for group in vertex.groups]
    if not lock:
        bpy.context.view_layer.objects.active = obj
    else:  # locked, the armature is made active by leaving Weight Paint first
        bpy.ops.paint.weight_paint_toggle()
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="POSE")
    assert OPERATORS[operator]() == {"FINISHED"}
    assert bpy.context.view_layer.objects.active == obj and obj.mode == "POSE"
    assert body.mode == ("OBJECT" if lock else "WEIGHT_PAINT")
    assert [group.weight for vertex in body.data.vertices for group in vertex.groups] == weights
    if operator in ("auto_rig", "bake", "remove"):
        assert_plays_the_same(obj, before, chain_length(obj, chain))


@pytest.mark.parametrize("with_armature", [False, True], ids=["mesh alone", "mesh and armature"])
@pytest.mark.parametrize("operator", OPERATORS)
def test_in_local_view_the_operators_work_on_the_armature_and_leave_the_view_as_it_was(operator, with_armature):
    """The mesh isolated in the 3D Viewport's Local View (numpad /), the armature active outside it: Auto-Rig
    refused, saying the armature's collection was hidden (it was not), and every operation after it failed. Each
    works on the armature as in a default scene; the view still shows what it showed (the armature too, where
    it was isolated with the mesh)."""
    obj, chain = animated_leg()
    if operator != "auto_rig":
        api.build(obj, "shin.L", both_sides=False, parent_switch=True)
    before = played(obj, range(1, 26))
    bpy.ops.object.mode_set(mode="OBJECT")
    body = _skinned(obj)
    window = bpy.context.window
    area = next(area for area in window.screen.areas if area.type == "VIEW_3D")
    region = next(region for region in area.regions if region.type == "WINDOW")
    view = area.spaces.active
    bpy.context.view_layer.update()  # the new mesh's base in the view layer, to be selected
    for item in bpy.context.view_layer.objects:
        item.select_set(item == body or (with_armature and item == obj))
    with bpy.context.temp_override(window=window, area=area, region=region):
        assert bpy.ops.view3d.localview() == {"FINISHED"}
        assert view.local_view is not None and body.visible_get(viewport=view)
        bpy.context.view_layer.objects.active = obj
        assert obj.visible_get() == obj.visible_get(viewport=view) == with_armature  # as mode switches see it
        bpy.ops.object.mode_set(mode="POSE")
        set_active_bone(obj, "shin.L")
        bpy.context.scene.frame_set(13)
        assert OPERATORS[operator]() == {"FINISHED"}
        assert obj.mode == "POSE" and bpy.context.view_layer.objects.active == obj
        assert obj.visible_get(viewport=view) == with_armature and body.visible_get(viewport=view)
    if operator == "auto_rig":
        assert [limb.name for limb in api.limbs(obj)] == ["shin.L"]
    if operator in ("auto_rig", "bake", "remove"):
        assert_plays_the_same(obj, before, chain_length(obj, chain))


def test_adding_chain_bones_with_x_axis_mirror_leaves_the_other_side_s_bones_as_they_were():
    """With the armature's X-Axis Mirror on (Edit mode's tool settings), Add IK Chain Bones placing a left
    chain moved the user's right chain of the same names onto its mirror image, unasked."""
    obj = make_armature([("root", (0.0, 0.0, 0.0), (0.0, 0.5, 0.0), None, False)])
    bpy.context.scene.cursor.location = (-0.3, 0.0, 1.0)
    assert bpy.ops.ik_rigger.add_chain(side="R") == {"FINISHED"}
    right = {bone.name: (bone.head_local.copy(), bone.tail_local.copy()) for bone in obj.data.bones
             if bone.name.endswith(".R")}
    obj.data.use_mirror_x = True
    bpy.context.scene.cursor.location = (0.2, 0.1, 1.1)  # not where the right chain's mirror image is
    assert bpy.ops.ik_rigger.add_chain(side="L", bend_angle=0.3) == {"FINISHED"}
    assert obj.data.use_mirror_x and obj.mode == "POSE"
    for name, (head, tail) in right.items():
        bone = obj.data.bones[name]
        assert (bone.head_local - head).length < 1e-6 and (bone.tail_local - tail).length < 1e-6, name
    assert (obj.data.bones["leg_01.L"].head_local - Vector((0.2, 0.1, 1.1))).length < 1e-6


REST_CALLS = {
    "auto-rig": lambda obj: api.auto_rig(obj),
    "build": lambda obj: api.build(obj, "shin.L", both_sides=False),
    "bake IK to FK": lambda obj: api.bake(obj, "IK_TO_FK", range(1, 26), switch=True),
    "bake FK to IK": lambda obj: api.bake(obj, "FK_TO_IK", range(1, 26), switch=True),
    "snap FK to IK": lambda obj: api.snap_limb(obj, "shin.L", "FK", key=True),
    "snap IK to FK": lambda obj: api.snap_limb(obj, "shin.L", "IK", key=True),
    "switch parent": lambda obj: api.switch_parent(obj, "shin.L", 1, key=True),
    "remove": lambda obj: api.remove(obj, "shin.L"),
}


@pytest.mark.parametrize("call", REST_CALLS)
def test_an_armature_shown_in_rest_position_is_rigged_and_animated_as_it_plays(call):
    """An animator looking at the rest (Armature properties, Pose Position: Rest): before, a build kept the
    motion as the rest pose (the leg 6 degrees off when played), the bakes baked the rest and the snaps
    snapped to it. Each reads the poses the rig plays, and Rest Position stays on."""
    obj, chain = animated_leg()
    if call not in ("auto-rig", "build"):
        api.build(obj, "shin.L", both_sides=False, parent_switch=True)
    length = chain_length(obj, chain)
    before = played(obj, range(1, 26))
    bpy.context.scene.frame_set(13)
    obj.data.pose_position = "REST"
    REST_CALLS[call](obj)
    assert obj.data.pose_position == "REST"
    obj.data.pose_position = "POSE"
    keyed_on_13 = call.startswith("snap") or call == "switch parent"
    assert_plays_the_same(obj, {frame: poses for frame, poses in before.items() if frame <= 13 or not keyed_on_13},
                          length)
