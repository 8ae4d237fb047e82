"""Export (api.export) from the states a real scene is in when a user exports: a 29.97 frame rate,
the character's collection turned off, a Blender-relative path, a moving parent, another character
posed by hand, a mesh hanging from a bone, modifiers before the Armature modifier. Each file is
read back by a reader that is not IK Rigger's (three.js, Khronos' validator) or by its JSON."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import bpy
import numpy as np
import pytest
from export_readers import (
    POSITION,
    Y_UP,
    blender_rest,
    blender_skins,
    height,
    skin_gap,
    three_play,
    three_skins,
    validate,
)
from helpers import both_legs, make_armature
from test_export import action_curves, assert_fbx_plays_the_rig, assert_three_plays_the_rig, legs_character, state

from ik_rigger import api

DATA = Path(__file__).parent / "data"


def glb_json(path: Path) -> dict:
    """The JSON chunk of a .glb."""
    data = path.read_bytes()
    length = struct.unpack("<I", data[12:16])[0]
    return json.loads(data[20:20 + length])


def test_a_29_97_scene_plays_in_three_js_at_its_own_rate(tmp_path):
    """Blender's glTF exporter times frame n at n / (fps * fps_base) s, 30.03 frames a second for
    NTSC's 29.97 (fps 30, base 1.001): before, three.js played every clip 0.2% fast. The FBX's times
    were right (assimp reads them so; Blender's importer rounds the rate, which its reader allows for)."""
    obj = legs_character()
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.001
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert state() == before and (scene.render.fps, scene.render.fps_base) == (30, pytest.approx(1.001))
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)
    report = api.export(obj, str(tmp_path / "legs.fbx"))
    assert_fbx_plays_the_rig(obj, tmp_path / "legs.fbx", report)


@pytest.mark.parametrize("fmt", ["glb", "fbx"])
@pytest.mark.parametrize("window", ["context's", "none in the context"])
def test_the_window_stays_on_the_scene_and_view_layer_the_user_left_it_on(tmp_path, fmt, window):
    """A file of several scenes, its character's shown on a view layer of its own: Blender's glTF exporter
    switched the window to the export's own scene, and removing that scene put the window on the scene next
    to it by name ('Hero') and its first view layer; with no window in the context (a script's, a timer's),
    on a removed scene, a crash at the next switch. The window stays where the user left it."""
    obj = legs_character()
    scene = bpy.context.scene
    scene.name = "Character"
    for name in ("A layout", "Hero"):
        bpy.data.scenes.new(name)
    shown = bpy.context.window_manager.windows[0]
    shown.view_layer = scene.view_layers.new("Animation")
    before = state()
    played = [tuple(bone.matrix) for bone in obj.pose.bones]
    if window == "context's":
        report = api.export(obj, str(tmp_path / f"legs.{fmt}"))
    else:
        with bpy.context.temp_override(window=None):
            report = api.export(obj, str(tmp_path / f"legs.{fmt}"))
    assert (shown.scene.name, shown.view_layer.name) == ("Character", "Animation")
    assert state() == before and [tuple(bone.matrix) for bone in obj.pose.bones] == played
    shown.scene = bpy.data.scenes["Hero"]  # the user switches scenes, and back
    shown.scene = scene
    bpy.context.view_layer.update()
    if fmt == "glb":
        assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)
    else:
        assert_fbx_plays_the_rig(obj, tmp_path / "legs.fbx", report)


def _in_collection(obj: bpy.types.Object) -> bpy.types.Collection:
    scene = bpy.context.scene
    bpy.ops.object.mode_set(mode="OBJECT")
    collection = bpy.data.collections.new("Character")
    scene.collection.children.link(collection)
    for item in list(scene.collection.objects):
        collection.objects.link(item)
        scene.collection.objects.unlink(item)
    return collection


@pytest.mark.parametrize("how", ["disabled", "excluded"])
def test_a_character_whose_collection_blender_does_not_evaluate_is_refused(tmp_path, how):
    """Blender leaves the pose of an armature in a collection disabled in viewports, or excluded, as it
    was last evaluated: before, the export wrote that stale pose on every frame of every clip."""
    obj = legs_character()
    collection = _in_collection(obj)
    if how == "disabled":
        collection.hide_viewport = True
    else:
        bpy.context.view_layer.layer_collection.children["Character"].exclude = True
    before = state()
    with pytest.raises(api.RigError) as raised:
        api.export(obj, str(tmp_path / "legs.glb"))
    assert "'Character'" in str(raised.value) and ("excluded" if how == "excluded" else "disabled") in str(
        raised.value)
    assert list(tmp_path.iterdir()) == [] and state() == before


def test_a_blender_relative_path_is_written_beside_the_blend_file(tmp_path):
    """'//' starts a path relative to the .blend file, as Blender's own fields give it: before, the
    file went to the root folder."""
    legs_character()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    (tmp_path / "out").mkdir()
    report = api.export(bpy.data.objects["Rig"], "//out/legs.glb")
    assert report.path == str(tmp_path / "out" / "legs.glb") and report.files == (report.path,)
    assert validate(report.path)["issues"]["numErrors"] == 0


def test_another_character_posed_by_hand_keeps_its_pose(tmp_path):
    """The export plays the clips' frames: another armature's keys set its bones on each, over a pose
    changed by hand and not keyed; before, that pose was lost."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    other = make_armature(both_legs(), name="Other")
    thigh = other.pose.bones["thigh.L"]
    for frame, angle in {1: 0.0, 20: 0.5}.items():
        thigh.rotation_quaternion = (1.0, angle, 0.0, 0.0)
        thigh.keyframe_insert("rotation_quaternion", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = obj
    bpy.context.scene.frame_set(10)
    thigh.rotation_quaternion = (0.8, 0.0, 0.6, 0.0)  # posed by hand, not keyed
    before = state()
    api.export(obj, str(tmp_path / "legs.glb"))
    assert state() == before
    assert tuple(thigh.rotation_quaternion) == pytest.approx((0.8, 0.0, 0.6, 0.0))


def test_a_moving_parent_is_warned_of(tmp_path):
    """The armature rides an Empty keyed to move (a vehicle, a glTF import's animated root node): its motion
    is not in the file, as the armature object's own is not, and the warning says so."""
    obj = legs_character()
    holder = bpy.data.objects.new("Holder", None)
    bpy.context.scene.collection.objects.link(holder)
    obj.parent = holder
    for frame, x in {1: 0.0, 20: 2.0}.items():
        holder.location.x = x
        holder.keyframe_insert("location", frame=frame)
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert report.warnings == (
        "the armature 'Rig' moves with 'Holder', which is animated: that motion is not exported (the file places "
        "the skeleton where it stands on the current frame); key the root bone instead",)


def _sword(obj: bpy.types.Object, bone: str) -> bpy.types.Object:
    """A rigid mesh hanging from ``bone`` (a prop in the hand)."""
    mesh = bpy.data.meshes.new("Sword")
    mesh.from_pydata([(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.1, 0.0)], [], [(0, 1, 2)])
    sword = bpy.data.objects.new("Sword", mesh)
    bpy.context.scene.collection.objects.link(sword)
    sword.parent = obj
    sword.parent_type = "BONE"
    sword.parent_bone = bone
    return sword


@pytest.mark.parametrize("fmt", ["glb", "fbx"])
def test_a_mesh_hanging_from_a_bone_not_exported_is_left_out_and_warned_of(tmp_path, fmt):
    """A mesh parented to an IK handle has nothing to hang from in the file: before, the report listed it
    while glTF dropped it without a word."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    handle = next(limb.bones["HANDLE"] for limb in api.limbs(obj) if limb.name == "shin.L")
    _sword(obj, handle)
    _sword(obj, "foot.L").name = "Shield"
    before = state()
    report = api.export(obj, str(tmp_path / f"legs.{fmt}"), clips=["Walk"])
    assert state() == before
    assert report.meshes == ("Body", "Shield")
    assert report.warnings == (f"the mesh 'Sword' hangs from the bone '{handle}', which is not exported: it is "
                               "left out of the file (parent it to a deform bone to export it)",)
    if fmt == "glb":
        nodes = glb_json(tmp_path / "legs.glb")["nodes"]
        foot = next(node for node in nodes if node["name"] == "foot.L")
        assert [nodes[child]["name"] for child in foot["children"] if "mesh" in nodes[child]] == ["Shield"]
        assert "Sword" not in [node["name"] for node in nodes]


def test_modifiers_before_the_armature_modifier_are_in_the_glb(tmp_path):
    """A mirrored half body (Mirror, then Armature): glTF got the half, FBX the whole; both now get the mesh
    the Armature modifier deforms. A mesh with shape keys and no other modifier keeps them."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    body = bpy.data.objects["Body"]
    body.modifiers.new("Mirror", "MIRROR").use_axis = (False, True, False)
    body.modifiers.move(1, 0)
    armature = body.modifiers[1]
    armature.show_viewport = False
    bpy.context.view_layer.update()
    whole = len(body.evaluated_get(bpy.context.evaluated_depsgraph_get()).data.polygons)  # triangles all
    armature.show_viewport = True
    assert whole > len(body.data.polygons)
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert state() == before and [modifier.type for modifier in body.modifiers] == ["MIRROR", "ARMATURE"]
    data = glb_json(tmp_path / "legs.glb")
    mesh = next(mesh for mesh in data["meshes"] if mesh["name"] == "Body")
    assert sum(data["accessors"][primitive["indices"]]["count"] for primitive in mesh["primitives"]) == 3 * whole
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)


def test_an_armature_shown_in_rest_position_exports_its_clips_as_they_play(tmp_path):
    """Rest Position (Armature properties), turned on to look at the rest: before, every clip was baked
    still. The clips are played in Pose Position, and the armature shows its rest again after."""
    obj = legs_character()
    obj.data.pose_position = "REST"
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert state() == before and obj.data.pose_position == "REST"
    obj.data.pose_position = "POSE"
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)


@pytest.mark.parametrize("kind", ["COPY_LOCATION", "CHILD_OF"])
def test_an_armature_placed_by_a_constraint_exports_where_it_stands(tmp_path, kind):
    """The armature object follows an Empty by a constraint of its own: before, its copy kept the
    constraint, which moved it again from where it was placed (a Copy Location with offset, twice)."""
    obj = legs_character()
    target = bpy.data.objects.new("Target", None)
    bpy.context.scene.collection.objects.link(target)
    target.location = (1.0, 0.5, 0.0)
    target.rotation_euler = (0.3, 0.0, 0.4)
    constraint = obj.constraints.new(kind)
    constraint.target = target
    if kind == "COPY_LOCATION":
        constraint.use_offset = True
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert state() == before and report.warnings == ()
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)


def test_shape_key_animation_stays_out_of_the_fbx_takes(tmp_path):
    """A face's shape key keyed on its own: before, FBX's exporter baked that animation, played on the
    export's frames, into every take of the skeleton's clips."""
    obj = legs_character()
    body = bpy.data.objects["Body"]
    body.shape_key_add(name="Basis")
    smile = body.shape_key_add(name="Smile")
    for frame, value in {1: 0.0, 10: 1.0}.items():
        smile.value = value
        smile.keyframe_insert("value", frame=frame)
    bpy.context.scene.frame_set(1)
    before = state()
    report = api.export(obj, str(tmp_path / "legs.fbx"), clips=["Walk"])
    assert state() == before
    assert_fbx_plays_the_rig(obj, tmp_path / "legs.fbx", report)
    ours = set(bpy.data.actions)
    bpy.ops.import_scene.fbx(filepath=str(tmp_path / "legs.fbx"))
    values = [{round(point.co[1], 6) for point in curve.keyframe_points} for action in set(bpy.data.actions) - ours
              for curve in action_curves(action) if "key_blocks" in curve.data_path]
    assert values and all(len(found) == 1 for found in values), values


def test_a_mesh_named_as_a_bone_is_warned_of_in_fbx(tmp_path):
    """A glTF import names a mesh hanging from a bone after another bone (RobotExpressive's 'Torso' hangs
    from 'Body', above the bone 'Torso'): assimp finds the take's 'Torso' in the mesh, first depth first."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    _sword(obj, "root").name = "hips"
    report = api.export(obj, str(tmp_path / "legs.fbx"), clips=["Walk"])
    assert report.warnings == ("the mesh 'hips' is named as a bone of the skeleton: FBX readers that find a take's "
                               "bones by name (assimp, and engines built on it) may move the mesh instead; rename "
                               "the mesh or the bone",)
    assert api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"]).warnings == ()


@pytest.mark.parametrize("fmt", ["glb", "fbx"])
def test_a_character_as_blender_s_fbx_importer_delivers_it(tmp_path, fmt):
    """The glTF Fox through FBX, as a character bought as FBX arrives: its bones re-oriented by the
    importer, its three takes kept as actions named 'Armature|Take', its armature object turned 90
    degrees about X and scaled 0.01 as a centimetre file's are (set here: Blender's own FBX comes back
    unturned); rigged with its motion baked onto the controls, then exported with every clip."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    bpy.ops.export_scene.fbx(filepath=str(tmp_path / "fox_in.fbx"), bake_anim_use_all_actions=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.fbx(filepath=str(tmp_path / "fox_in.fbx"), automatic_bone_orientation=True)
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    obj.rotation_euler.x = math.pi / 2
    obj.scale = (0.01, 0.01, 0.01)
    api.auto_rig(obj, animation="BAKE")
    bpy.ops.object.mode_set(mode="OBJECT")
    before = state()
    report = api.export(obj, str(tmp_path / f"fox.{fmt}"))
    assert state() == before and len(report.clips) == 3 and report.meshes
    if fmt == "glb":
        assert_three_plays_the_rig(obj, tmp_path / "fox.glb", report)
    else:
        assert_fbx_plays_the_rig(obj, tmp_path / "fox.fbx", report)


def test_a_clip_of_one_frame_is_a_pose_held(tmp_path):
    """Godot's platformer robot has clips of one frame (poses): the files hold each for a frame, both
    frames the pose."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "godot_platformer_robot.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    api.auto_rig(obj, animation="BAKE")
    bpy.ops.object.mode_set(mode="OBJECT")
    report = api.export(obj, str(tmp_path / "robot.glb"))
    assert any(clip.frames == 1 for clip in report.clips) and any(clip.frames > 1 for clip in report.clips)
    assert_three_plays_the_rig(obj, tmp_path / "robot.glb", report)


def test_shape_keys_a_modifier_drops_are_warned_of(tmp_path):
    """Modifiers applied in the file leave a mesh without its shape keys (as Blender's exporters leave it
    with theirs applied): the warning names the mesh, the modifiers and how many keys."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    body = bpy.data.objects["Body"]
    body.shape_key_add(name="Basis")
    body.shape_key_add(name="Smile")
    body.modifiers.new("Mirror", "MIRROR")
    body.modifiers.move(1, 0)
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert report.warnings == ("the mesh 'Body' has modifiers besides Armature (Mirror), applied in the file, which "
                               "then holds none of its 1 shape keys (apply the modifiers to the mesh, or turn them "
                               "off, to keep them)",)
    assert "targets" not in glb_json(tmp_path / "legs.glb")["meshes"][0]["primitives"][0]


def test_a_take_another_armature_fits_as_well_is_named_not_exported(tmp_path):
    """The same character twice in the scene (imported twice): a take kept without playing fits both, so
    neither exports it. Before, it was left out without a word."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    twin = obj.copy()
    twin.data = obj.data.copy()
    twin.animation_data_clear()
    twin.name = "Twin"
    bpy.context.scene.collection.objects.link(twin)
    for bone in twin.pose.bones:  # its own rig's constraints follow its own bones
        for constraint in bone.constraints:
            if getattr(constraint, "target", None) == obj:
                constraint.target = twin
            if getattr(constraint, "pole_target", None) == obj:
                constraint.pole_target = twin
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert [clip.name for clip in report.clips] == ["Walk"]
    assert report.warnings == ("the action 'Kick' keys bones of 'Rig' but is not exported: the armature 'Twin' "
                               "fits it as well, with as many of the bones it keys (make it the armature's action, "
                               "or put it on an NLA strip of the armature, to export it)",)
    assert api.export(obj, str(tmp_path / "walk.glb"), clips=["Walk"]).warnings == ()


def test_a_take_kept_by_blender_4_2_is_exported_by_later_blenders(tmp_path):
    """A file saved by Blender 4.2 with a take kept with a fake user, never assigned (as 4.2's FBX importer
    keeps a file's other takes): Blender 4.4 and later open it with a slot of no type, 'XXLegacy Slot'.
    Before, only the playing action was exported there, and the take was passed over."""
    bpy.ops.wm.open_mainfile(filepath=str(DATA / "legacy_takes_4.2.blend"))
    obj = bpy.data.objects["Rig"]
    api.auto_rig(obj)
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert [clip.name for clip in report.clips] == ["Kick", "Walk"] and report.warnings == ()
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)


def test_a_gltf_never_replaces_a_different_file_beside_it(tmp_path):
    """A .gltf writes its images beside it: exported into the folder of the character's texture, painted
    since it was saved, it replaced that texture without asking. Now it refuses, writing nothing; the
    texture as saved (the same bytes as the export's) is no obstacle."""
    obj = legs_character()
    image = bpy.data.images.new("skin", 4, 4)
    image.pixels = [0.5] * 64
    image.filepath_raw = str(tmp_path / "skin.png")
    image.file_format = "PNG"
    image.save()
    material = bpy.data.materials.new("Skin")
    material.use_nodes = True
    texture = material.node_tree.nodes.new("ShaderNodeTexImage")
    texture.image = image
    material.node_tree.links.new(texture.outputs[0], material.node_tree.nodes["Principled BSDF"].inputs[0])
    bpy.data.objects["Body"].data.materials.append(material)
    report = api.export(obj, str(tmp_path / "legs.gltf"), clips=["Walk"])
    assert sorted(Path(path).name for path in report.files) == ["legs.bin", "legs.gltf", "skin.png"]
    saved = (tmp_path / "skin.png").read_bytes()
    image.pixels = [0.9] * 64  # painted, not saved
    before = state()
    with pytest.raises(api.RigError) as raised:
        api.export(obj, str(tmp_path / "again.gltf"), clips=["Walk"])
    assert f"'{tmp_path / 'skin.png'}'" in str(raised.value) and state() == before
    assert (tmp_path / "skin.png").read_bytes() == saved
    assert sorted(path.name for path in tmp_path.iterdir()) == ["legs.bin", "legs.gltf", "skin.png"]


def test_the_skinned_mesh_plays_in_three_js_as_blender_deforms_it(tmp_path):
    """The mesh, not only the joints: a mirrored half body (Mirror before Armature) on an armature object
    turned, moved and scaled, the mesh object moved off the armature's origin, skinned by three.js on every
    frame, each vertex where Blender's Armature modifier puts it. Before, the file's mesh was the half."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    body = bpy.data.objects["Body"]
    body.modifiers.new("Mirror", "MIRROR").use_axis = (False, True, False)
    body.modifiers.move(1, 0)
    body.location = (0.1, 0.0, 0.05)
    obj.location, obj.rotation_euler, obj.scale = (0.5, -0.2, 0.1), (0.0, 0.0, 0.7), (1.5, 1.5, 1.5)
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    scene = bpy.context.scene
    rest, clips = three_skins(str(tmp_path / "legs.glb"), scene.render.fps / scene.render.fps_base)
    frames = list(range(report.clips[0].first, report.clips[0].last + 1))
    expected = blender_skins(obj, ["Body"], bpy.data.actions["Walk"], frames)
    worst = max(skin_gap(played, wanted, Y_UP) for played, wanted in zip(clips["Walk"], expected))
    assert len(clips["Walk"]) == len(expected) and worst < POSITION * height(obj), worst


def test_a_mesh_under_another_object_is_skinned_where_it_stands(tmp_path):
    """The skinned mesh hangs from an Empty (a glTF import's node), parented by a script just before the
    export: before, the copy took the mesh's matrix_world, stale as the bake keeps the mesh out of Blender's
    evaluation, and three.js skinned it 0.3 away from where Blender shows it."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    holder = bpy.data.objects.new("Node", None)
    bpy.context.scene.collection.objects.link(holder)
    holder.location = (0.3, 0.3, 0.0)
    bpy.data.objects["Body"].parent = holder
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    _, clips = three_skins(str(tmp_path / "legs.glb"), bpy.context.scene.render.fps)
    frames = list(range(report.clips[0].first, report.clips[0].last + 1))
    expected = blender_skins(obj, ["Body"], bpy.data.actions["Walk"], frames)
    worst = max(skin_gap(played, wanted, Y_UP) for played, wanted in zip(clips["Walk"], expected))
    assert worst < POSITION * height(obj), worst


def test_an_armature_a_script_just_moved_exports_its_rest_where_it_stands(tmp_path):
    """No clip played, no update since a script moved the armature: before, the file placed it where it
    stood before the move."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.location = (1.0, 2.0, 0.5)
    api.export(obj, str(tmp_path / "legs.glb"), clips=[])
    bpy.context.view_layer.update()
    played = three_play(str(tmp_path / "legs.glb"), 24.0)
    rest = blender_rest(obj, ["root", "foot.L"])
    for name, matrix in rest.items():
        assert np.allclose(played.rest[name][:3, 3], Y_UP @ matrix[:3, 3], atol=1e-5), name


def test_a_curve_the_armature_deforms_is_warned_of(tmp_path):
    """A belt made of a curve, deformed by the armature: the exporters write meshes only. Before, it was
    left out without a word."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    curve = bpy.data.curves.new("Belt", "CURVE")
    curve.splines.new("POLY").points.add(2)
    belt = bpy.data.objects.new("Belt", curve)
    bpy.context.scene.collection.objects.link(belt)
    belt.modifiers.new("Armature", "ARMATURE").object = obj
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert report.meshes == ("Body",)
    assert report.warnings == ("the curve 'Belt' moves with the armature but is not a mesh: it is left out of the "
                               "file (Object > Convert > Mesh makes it one)",)


def test_the_export_dialog_opens_for_an_armature_named_with_a_slash(monkeypatch):
    """The file browser offers the armature's name beside the .blend file: a name with '/' (a path
    separator) made that a traceback before the dialog opened."""
    from types import SimpleNamespace

    from bpy_extras.io_utils import ExportHelper

    from ik_rigger import export_operators

    obj = legs_character()
    obj.name = "Hero/Body"
    monkeypatch.setattr(ExportHelper, "invoke", lambda self, context, event: {"RUNNING_MODAL"})
    operator = SimpleNamespace(clips=[], filepath="", properties=SimpleNamespace(is_property_set=lambda name: False))
    operator.clips = SimpleNamespace(clear=lambda: None, add=lambda: SimpleNamespace(name=""))
    context = SimpleNamespace(active_object=obj, scene=bpy.context.scene)
    assert export_operators.IKRIG_OT_export.invoke(operator, context, None) == {"RUNNING_MODAL"}
    assert Path(operator.filepath).name == "Hero_Body.glb"
