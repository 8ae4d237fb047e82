"""Export for game engines (api.export), proved by readers that are not IK Rigger's: Khronos'
glTF Validator, three.js playing the .glb in Node, and Blender's FBX importer in a fresh
process, each held against the rig Blender evaluates, every deform bone on every frame."""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import numpy as np
import pytest
from export_readers import (
    ASSIMP_UNIT,
    DEGREES,
    POSITION,
    Y_UP,
    assimp_play,
    blender_rest,
    blender_world,
    compare,
    fbx_play,
    height,
    three_play,
    validate,
)
from helpers import both_legs, make_armature
from mathutils import Quaternion

from ik_rigger import api
from ik_rigger.rig import records
from ik_rigger.rig.animation import action_fcurves

# Every collection of bpy.data: objects, meshes, armatures, actions, scenes, images...
_COLLECTIONS = tuple(name for name in dir(bpy.data)
                     if isinstance(getattr(bpy.data, name, None), bpy.types.bpy_prop_collection))


def skinned_mesh(obj: bpy.types.Object, names: list[str]) -> bpy.types.Object:
    """A mesh of one triangle per bone, each weighted to its bone, deformed by ``obj``."""
    vertices, faces = [], []
    for name in names:
        bone = obj.data.bones[name]
        head, tail = bone.head_local, bone.tail_local
        start = len(vertices)
        vertices += [tuple(head), tuple(tail), tuple(head + (tail - head) * 0.5 + bone.x_axis * 0.05)]
        faces.append((start, start + 1, start + 2))
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata(vertices, [], faces)
    body = bpy.data.objects.new("Body", mesh)
    bpy.context.scene.collection.objects.link(body)
    for index, name in enumerate(names):
        group = body.vertex_groups.new(name=name)
        group.add([3 * index, 3 * index + 1, 3 * index + 2], 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = obj
    body.parent = obj
    return body


def legs_character() -> bpy.types.Object:
    """Two rigged legs and a skinned mesh; the clip 'Walk' keys the left foot's handle up and down and
    past the leg's reach (the leg stretches), the clip 'Kick' (kept without playing) the right one."""
    obj = make_armature(both_legs())
    skinned_mesh(obj, [bone.name for bone in obj.data.bones])
    api.auto_rig(obj)
    handles = {limb.name: limb.bones["HANDLE"] for limb in api.limbs(obj)}
    left, right = obj.pose.bones[handles["shin.L"]], obj.pose.bones[handles["shin.R"]]
    left["stretch"] = 1.0
    # The handle's Z points down here: 0.6 pulls the foot below the ground, past the leg's reach.
    for frame, (y, z) in {1: (0.0, 0.0), 8: (-0.3, -0.3), 14: (0.0, 0.6), 20: (0.2, -0.1)}.items():
        left.location = (0.0, y, z)
        left.keyframe_insert("location", frame=frame)
    obj.animation_data.action.name = "Walk"
    walk = obj.animation_data.action
    kick = bpy.data.actions.new("Kick")
    kick.use_fake_user = True
    obj.animation_data.action = kick
    for frame, y in {5: 0.0, 12: -0.6, 18: 0.1}.items():
        right.location = (0.0, y, 0.2)
        right.keyframe_insert("location", frame=frame)
    right.location = (0.0, 0.0, 0.0)
    obj.animation_data.action = walk
    if hasattr(obj.animation_data, "action_slot") and walk.slots:
        obj.animation_data.action_slot = walk.slots[0]
    return obj


def state() -> dict:
    """What the user would see change: every datablock count, the frame, the scene and view layer each
    window shows, the modes, the selection,
    the active object, the armature's action and every pose bone's transform."""
    view_layer = bpy.context.view_layer
    view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return {
        "evaluated": {obj.name: [tuple(round(value, 5) for row in bone.matrix for value in row)
                                 for bone in obj.evaluated_get(depsgraph).pose.bones]
                      for obj in bpy.data.objects if obj.pose},
        "counts": {name: len(getattr(bpy.data, name)) for name in _COLLECTIONS},
        "names": sorted(item.name for name in _COLLECTIONS for item in getattr(bpy.data, name)),
        "frame": (bpy.context.scene.frame_current, bpy.context.scene.frame_subframe),
        "windows": [(window.scene.name, window.view_layer.name) for window in bpy.context.window_manager.windows],
        "modes": {obj.name: obj.mode for obj in bpy.data.objects},
        "selected": sorted(obj.name for obj in bpy.data.objects if obj.select_get()),
        "active": view_layer.objects.active.name if view_layer.objects.active else None,
        "actions": {obj.name: obj.animation_data.action.name for obj in bpy.data.objects
                    if obj.animation_data and obj.animation_data.action},
        "pose": {obj.name: [tuple(round(value, 6) for value in (*bone.location, *bone.rotation_quaternion,
                                                               *bone.rotation_euler, *bone.scale))
                            for bone in obj.pose.bones] for obj in bpy.data.objects if obj.pose},
        "deform": {obj.name: [bone.use_deform for bone in obj.data.bones] for obj in bpy.data.objects
                   if obj.type == "ARMATURE"},
        "constraints": {obj.name: sum(len(bone.constraints) for bone in obj.pose.bones)
                        for obj in bpy.data.objects if obj.pose},
        "keys": sorted((action.name, len(action_curves(action))) for action in bpy.data.actions),
    }


def action_curves(action: bpy.types.Action) -> list:
    if hasattr(action, "layers") and action.layers:
        return [curve for layer in action.layers for strip in layer.strips for bag in strip.channelbags
                for curve in bag.fcurves]
    return list(getattr(action, "fcurves", ()))


def expected_clips(obj: bpy.types.Object, report) -> dict[str, list]:
    """Each clip's frames as the rig plays them; a clip of one frame (a pose) is in the files held for a
    frame (both exporters make a clip last), so twice."""
    played = {clip.name: blender_world(obj, bpy.data.actions[clip.name], list(range(clip.first, clip.last + 1)),
                                       list(report.joints)) for clip in report.clips}
    return {name: frames * 2 if len(frames) == 1 else frames for name, frames in played.items()}


def assert_three_plays_the_rig(obj: bpy.types.Object, path: Path, report) -> None:
    issues = validate(str(path))["issues"]
    assert issues["numErrors"] == 0, issues["messages"]
    scene = bpy.context.scene
    played = three_play(str(path), scene.render.fps / scene.render.fps_base)
    assert sorted(played.joints) == sorted(report.joints)
    assert sorted(played.clips) == sorted(clip.name for clip in report.clips)
    rest = blender_rest(obj, list(report.joints))
    size = height(obj)
    for name, frames in expected_clips(obj, report).items():
        moved, turned = compare(played.clips[name], played.rest, frames, rest, size, Y_UP)
        assert moved < POSITION and turned < DEGREES, (name, moved, turned)


def assert_fbx_plays_the_rig(obj: bpy.types.Object, path: Path, report) -> None:
    """Blender's FBX importer in a fresh Blender, and assimp (an FBX reader that is not Blender's)
    played by three.js, each play every take as the rig does."""
    played = fbx_play(str(path))
    assert sorted(played.joints) == sorted(report.joints)
    assert sorted(played.clips) == sorted(clip.name for clip in report.clips)
    scene = bpy.context.scene
    independent = assimp_play(str(path), scene.render.fps / scene.render.fps_base)
    assert set(report.joints) <= set(independent.joints)
    assert sorted(independent.clips) == sorted(clip.name for clip in report.clips)
    rest = blender_rest(obj, list(report.joints))
    for name, frames in expected_clips(obj, report).items():
        moved, turned = compare(played.clips[name], played.rest, frames, rest, height(obj), np.eye(3))
        assert moved < POSITION and turned < DEGREES, (name, moved, turned)
        moved, turned = compare(independent.clips[name], independent.rest, frames, rest, height(obj), Y_UP,
                                ASSIMP_UNIT)
        assert moved < POSITION and turned < DEGREES, ("assimp", name, moved, turned)


def test_a_glb_plays_in_three_js_as_the_rig_does_and_the_scene_is_left_as_it_was(tmp_path):
    """Both clips (the playing one and one kept without playing), a leg stretched past its reach on
    some frames: three.js's AnimationMixer puts every joint where Blender's rig does, every frame;
    the file holds the user's deform bones only, and nothing of the export stays in the file: no
    datablock, the frame, the modes, the selection, and a pose moved by hand without a key (before,
    the clips played for the bake put the keys back over it)."""
    obj = legs_character()
    bpy.context.scene.frame_set(7)
    obj.pose.bones["foot_IK.L"].location.x = 0.1  # moved by hand, not keyed: it stays
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert state() == before
    assert report.files == (str(tmp_path / "legs.glb"),)
    assert sorted(report.joints) == sorted(bone.name for bone in obj.data.bones if records.marker(bone) is None)
    assert [(clip.name, clip.first, clip.last, clip.frames) for clip in report.clips] == [
        ("Kick", 5, 18, 14), ("Walk", 1, 20, 20)]
    assert report.meshes == ("Body",) and report.warnings == ()
    stretched = max(np.linalg.norm(frame["shin.L"][:3, :3], axis=0)[1]
                    for frame in blender_world(obj, bpy.data.actions["Walk"], list(range(1, 21)), ["shin.L"]))
    assert stretched > 1.05  # the leg stretched: its scale is in the file
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["legs.glb"]


def test_an_fbx_plays_in_blender_s_importer_as_the_rig_does(tmp_path):
    obj = legs_character()
    before = state()
    report = api.export(obj, str(tmp_path / "legs.fbx"), clips=["Walk"], frame_range=(3, 17))
    assert state() == before
    assert [(clip.name, clip.first, clip.last) for clip in report.clips] == [("Walk", 3, 17)]
    assert_fbx_plays_the_rig(obj, tmp_path / "legs.fbx", report)


def test_an_armature_object_scaled_turned_and_moved_exports_where_it_stands(tmp_path):
    obj = legs_character()
    obj.scale = (2.0, 2.0, 2.0)
    obj.rotation_euler = (0.0, 0.0, math.radians(30.0))
    obj.location = (1.0, -2.0, 0.5)
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)
    report = api.export(obj, str(tmp_path / "legs.fbx"), clips=["Walk"])
    assert_fbx_plays_the_rig(obj, tmp_path / "legs.fbx", report)


def test_the_file_names_the_armature_and_its_data_as_the_user_does(tmp_path):
    """The copies exported carry the user's names, and give them back."""
    obj = legs_character()
    obj.data.name = "Skeleton"
    api.export(obj, str(tmp_path / "legs.fbx"), clips=["Walk"])
    data = (tmp_path / "legs.fbx").read_bytes()
    assert b"Rig\x00\x01Model" in data and b"Walk\x00\x01AnimStack" in data
    assert b".001" not in data and b"IK Rigger" not in data
    assert (obj.name, obj.data.name) == ("Rig", "Skeleton")


def test_no_clip_chosen_writes_the_rest_pose_and_says_so(tmp_path):
    obj = legs_character()
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=[])
    assert report.clips == () and report.warnings == ("no clip was chosen: the file holds its rest pose only",)
    assert three_play(str(tmp_path / "legs.glb"), 24.0).clips == {}


def test_a_mesh_in_edit_mode_is_exported_as_shown_and_stays_in_edit_mode(tmp_path):
    """Before, glTF's exporter failed on the mesh's Edit-mode data (an IndexError)."""
    obj = legs_character()
    bpy.ops.object.mode_set(mode="OBJECT")
    body = bpy.data.objects["Body"]
    bpy.context.view_layer.objects.active = body
    bpy.ops.object.mode_set(mode="EDIT")
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert state() == before and body.mode == "EDIT" and report.meshes == ("Body",)
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)


def test_a_gltf_with_its_bin_validates(tmp_path):
    obj = legs_character()
    report = api.export(obj, str(tmp_path / "legs.gltf"), clips=["Kick"])
    assert sorted(Path(path).name for path in report.files) == ["legs.bin", "legs.gltf"]
    issues = validate(str(tmp_path / "legs.gltf"))["issues"]
    assert issues["numErrors"] == 0, issues["messages"]


def test_a_clip_moving_the_armature_object_and_several_roots_are_warned_of(tmp_path):
    obj = legs_character()
    obj.keyframe_insert("location", frame=1)
    obj.location.x += 0.5
    obj.keyframe_insert("location", frame=14)
    obj.data.bones["thigh.R"].use_deform = True
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode="EDIT")
        obj.data.edit_bones["thigh.R"].parent = None
        bpy.ops.object.mode_set(mode="POSE")
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert report.warnings == (
        "the deform bones of 'Rig' have 2 roots ('root', 'thigh.R'): Unreal and Unity's Humanoid want one root bone; "
        "parent them under one deform bone",
        "the clip 'Walk' moves the armature object 'Rig' itself, which is not exported: key the root bone instead "
        "(engines read root motion from it)")


def test_a_clip_keying_the_armature_object_still_is_not_warned_of_until_it_moves(tmp_path):
    """Before: any key on the object's transform was warned of as motion, though importers (glTF's armature
    node) key the object with its one transform on every frame of a clip."""
    obj = legs_character()
    obj.rotation_mode = "QUATERNION"
    obj.location = (0.2, -0.1, 0.05)
    obj.rotation_quaternion = Quaternion((0.0, 0.0, 1.0), 0.3)
    obj.scale = (0.01, 0.01, 0.01)
    for frame in (1, 8, 14, 20):
        for path in ("location", "rotation_quaternion", "scale"):
            obj.keyframe_insert(path, frame=frame)
    report = api.export(obj, str(tmp_path / "still.glb"), clips=["Walk"])
    assert report.warnings == ()
    # One key off the others moves the object on the frames around it.
    curve = next(curve for curve in action_fcurves(obj.animation_data.action)
                 if curve.data_path == "location" and curve.array_index == 2)
    curve.keyframe_points[2].co.y += 0.001
    report = api.export(obj, str(tmp_path / "moved.glb"), clips=["Walk"])
    assert report.warnings == ("the clip 'Walk' moves the armature object 'Rig' itself, which is not exported: key "
                               "the root bone instead (engines read root motion from it)",)


def test_a_deform_bone_under_bones_that_do_not_deform_hangs_from_its_nearest_deforming_ancestor(tmp_path):
    """The hips turned off Deform, a toe hung from a bone IK Rigger made: neither is in the file
    (before, FBX kept both to hold the bones below them), and the joints below them play as the
    rig shows them."""
    obj = legs_character()
    clone = next(limb.bones["CLONE"] for limb in api.limbs(obj) if limb.name == "shin.R")
    obj.data.bones["hips"].use_deform = False
    body = bpy.data.objects["Body"]
    # Its vertices to the root: glTF gives vertices that no deform bone moves a joint of their own.
    body.vertex_groups.remove(body.vertex_groups["hips"])
    body.vertex_groups["root"].add([3, 4, 5], 1.0, "REPLACE")
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones["toe.R"].use_connect = False
    obj.data.edit_bones["toe.R"].parent = obj.data.edit_bones[clone]
    bpy.ops.object.mode_set(mode="POSE")
    wanted = sorted(["root", "thigh.L", "shin.L", "foot.L", "toe.L", "thigh.R", "shin.R", "foot.R", "toe.R"])
    report = api.export(obj, str(tmp_path / "legs.fbx"))
    assert sorted(report.joints) == wanted and sorted(fbx_play(str(tmp_path / "legs.fbx")).joints) == wanted
    assert_fbx_plays_the_rig(obj, tmp_path / "legs.fbx", report)
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)


def test_vertices_no_deform_bone_moves_are_warned_of_in_gltf(tmp_path):
    obj = legs_character()
    obj.data.bones["hips"].use_deform = False  # the Body's hips triangle is weighted to it alone
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert report.warnings == ("3 vertices of 'Body' are weighted to no deform bone: glTF gives them a joint of "
                               "their own, 'neutral_bone' (weight them to a deform bone to avoid it)",)
    assert "neutral_bone" in three_play(str(tmp_path / "legs.glb"), 24.0).joints
    assert api.export(obj, str(tmp_path / "legs.fbx"), clips=["Walk"]).warnings == ()


def test_a_made_bone_never_deforms_in_the_file_whatever_its_flag(tmp_path):
    """Deform bones only means the user's: a bone IK Rigger made stays out by its mark, even with
    Deform turned on by hand."""
    obj = legs_character()
    limb = api.limbs(obj)[0]
    obj.data.bones[limb.bones["HANDLE"]].use_deform = True
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert limb.bones["HANDLE"] not in report.joints
    assert sorted(three_play(str(tmp_path / "legs.glb"), 24.0).joints) == sorted(report.joints)


@pytest.mark.parametrize("case", ["suffix", "folder", "directory", "clip", "control", "nothing", "edit", "disabled"])
def test_refusals_name_what_and_write_nothing(tmp_path, case):
    obj = legs_character()
    path = tmp_path / "legs.glb"
    kwargs: dict = {}
    if case == "suffix":
        path = tmp_path / "legs.obj"
    elif case == "folder":
        path = tmp_path / "missing" / "legs.glb"
    elif case == "directory":
        path = tmp_path / "legs.glb"
        path.mkdir()
    elif case == "clip":
        kwargs["clips"] = ["Run"]
    elif case == "control":
        obj.data.bones["toe.L"].name = "toe\x01L"
        path = tmp_path / "legs.fbx"
    elif case == "nothing":
        for bone in obj.data.bones:
            bone.use_deform = False
    elif case == "edit":
        bpy.ops.object.mode_set(mode="EDIT")
    else:
        bpy.ops.object.mode_set(mode="OBJECT")
        obj.hide_viewport = True
    before = state()
    with pytest.raises(api.RigError) as raised:
        api.export(obj, str(path), **kwargs)
    expected = {"suffix": "legs.obj", "folder": "does not exist", "directory": "it is a folder", "clip": "'Run'",
                "control": "toe\\x01L", "nothing": "nothing to export", "edit": "Edit mode",
                "disabled": "disabled in viewports"}[case]
    assert expected in str(raised.value)
    assert list(tmp_path.iterdir()) == ([path] if case == "directory" else [])
    assert state() == before


def test_a_motion_capture_with_a_foot_keyed_by_hand_over_it(tmp_path):
    """A real BVH walk rigged (its motion baked onto the controls), then the left foot's handle keyed
    by hand higher on some frames: the engine gets the deform bones as the rig plays it."""
    bpy.ops.import_anim.bvh(filepath=str(Path(__file__).parent / "data" / "pymo_walk.bvh"))
    obj = bpy.context.active_object
    start, end = (int(value) for value in obj.animation_data.action.frame_range)
    api.auto_rig(obj, animation="BAKE")
    handle = obj.pose.bones[next(limb.bones["HANDLE"] for limb in api.limbs(obj) if limb.side == "L"
                                 and "Leg" in limb.name or "Knee" in limb.name)]
    scene = bpy.context.scene
    for frame in (start + 10, start + 30):
        scene.frame_set(frame)
        handle.location.z += 5.0 * (1.0 if frame == start + 10 else -1.0)
        handle.keyframe_insert("location", frame=frame)
    report = api.export(obj, str(tmp_path / "walk.glb"))
    assert report.clips[0].frames == end - start + 1
    assert_three_plays_the_rig(obj, tmp_path / "walk.glb", report)
    report = api.export(obj, str(tmp_path / "walk.fbx"))
    assert_fbx_plays_the_rig(obj, tmp_path / "walk.fbx", report)


def test_a_gltf_character_with_several_clips_and_a_skinned_mesh(tmp_path):
    bpy.ops.import_scene.gltf(filepath=str(Path(__file__).parent / "data" / "gltf_fox.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    api.auto_rig(obj, animation="BAKE")
    before = state()
    report = api.export(obj, str(tmp_path / "fox.glb"))
    assert state() == before
    # Survey, Walk and Run (Blender 4.2's importer names them Run_root...).
    assert len(report.clips) == 3 and report.meshes
    assert_three_plays_the_rig(obj, tmp_path / "fox.glb", report)
    report = api.export(obj, str(tmp_path / "fox.fbx"))
    assert_fbx_plays_the_rig(obj, tmp_path / "fox.fbx", report)


def test_rigify_s_human_metarig_with_keyed_handles(tmp_path):
    import addon_utils

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    obj = bpy.context.active_object
    api.auto_rig(obj)
    for number, limb in enumerate(api.limbs(obj)):
        handle = obj.pose.bones[limb.bones["HANDLE"]]
        for frame, offset in {1: 0.0, 12: 0.15, 24: -0.1}.items():
            handle.location = (offset, -offset, offset * math.cos(number))
            handle.keyframe_insert("location", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    before = state()
    report = api.export(obj, str(tmp_path / "human.glb"))
    assert state() == before
    assert_three_plays_the_rig(obj, tmp_path / "human.glb", report)
    report = api.export(obj, str(tmp_path / "human.fbx"))
    assert_fbx_plays_the_rig(obj, tmp_path / "human.fbx", report)



def test_the_operator_exports_the_clips_ticked_over_the_frame_range(tmp_path):
    """File > Export's entry (and IK Rigger's menu) calls the same export with its panel's clips and
    frames; a refusal is an error report that writes nothing."""
    from ik_rigger import export_operators

    obj = legs_character()
    assert export_operators.draw_export_menu in bpy.types.TOPBAR_MT_file_export.draw._draw_funcs
    path = tmp_path / "legs.fbx"
    with bpy.context.temp_override(active_object=obj, object=obj):
        done = bpy.ops.ik_rigger.export(filepath=str(path), file_format="FBX", use_frame_range=True,
                                        frame_start=2, frame_end=9, clips=[{"name": "Walk", "use": True},
                                                                           {"name": "Kick", "use": False}])
    assert done == {"FINISHED"}
    played = fbx_play(str(path))
    assert list(played.clips) == ["Walk"] and len(played.clips["Walk"]) == 8
    with bpy.context.temp_override(active_object=obj, object=obj), pytest.raises(RuntimeError, match="'Run'"):
        bpy.ops.ik_rigger.export(filepath=str(tmp_path / "again.glb"), clips=[{"name": "Run", "use": True}])
    assert sorted(item.name for item in tmp_path.iterdir()) == ["legs.fbx"]


def test_the_operator_panel_draws_its_real_properties():
    """The panel beside the file browser: the format, a tick box per clip, the frame range."""
    from types import SimpleNamespace

    from test_ui import RecordingLayout

    from ik_rigger import export_operators

    log: list = []
    clip_rna = export_operators.IKRIG_PG_export_clip.bl_rna
    clips = [SimpleNamespace(bl_rna=clip_rna, name=name, use=True) for name in ("Kick", "Walk")]
    operator = SimpleNamespace(layout=RecordingLayout(log), bl_rna=bpy.ops.ik_rigger.export.get_rna_type(),
                               clips=clips, use_frame_range=False)
    export_operators.IKRIG_OT_export.draw(operator, bpy.context)
    drawn = [entry[2] for entry in log if entry[0] == "prop"]
    assert drawn == ["file_format", "use", "use", "use_frame_range", "frame_start", "frame_end"]


@pytest.mark.parametrize(("given", "chosen", "expected"), [
    ("/a/hero.glb", "FBX", "/a/hero.fbx"), ("/a/hero.fbx", "GLTF", "/a/hero.gltf"), ("/a/hero", "GLB", "/a/hero.glb"),
    ("/a/hero.v2", "FBX", "/a/hero.v2.fbx"), ("/a/hero.glb", "GLB", "/a/hero.glb")])
def test_the_file_s_suffix_follows_the_format_chosen(given, chosen, expected):
    from types import SimpleNamespace

    from ik_rigger import export_operators

    operator = SimpleNamespace(filepath=given, file_format=chosen)
    changed = export_operators.IKRIG_OT_export.check(operator, bpy.context)
    assert (operator.filepath, changed) == (expected, given != expected)
