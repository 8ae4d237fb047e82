"""After rigging, on a library override in a shot file: the animator's tools (the FK pivot helper,
the export for a game engine) work there as on the character's own file."""

from __future__ import annotations

from pathlib import Path

import bpy
from export_readers import three_play, validate
from helpers import both_legs, make_armature, set_active_bone
from test_export import assert_three_plays_the_rig, legs_character, state

from ik_rigger import api
from ik_rigger.rig import selection


def saved_character(obj: bpy.types.Object, path: Path) -> Path:
    """``obj`` and what it deforms in a collection 'Character' of its own file, as a pipeline saves it."""
    collection = bpy.data.collections.new("Character")
    bpy.context.scene.collection.children.link(collection)
    for item in [obj, *obj.children]:
        collection.objects.link(item)
        bpy.context.scene.collection.objects.unlink(item)
    if obj.mode != "OBJECT":
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def shot_override(character: Path) -> bpy.types.Object:
    """A new shot file linking the character and overriding it (Object > Library Override > Make);
    the armature override is returned active."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(str(character), link=True) as (_, target):
        target.collections = ["Character"]
    scene = bpy.context.scene
    override = target.collections[0].override_hierarchy_create(scene, bpy.context.view_layer,
                                                               do_fully_editable=False)
    if override.name not in scene.collection.children:
        scene.collection.children.link(override)
    obj = next(item for item in override.all_objects if item.type == "ARMATURE")
    obj.override_library.is_system_override = False  # what Make does for the object picked
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    assert obj.override_library is not None
    return obj


def test_the_fk_pivot_helper_works_on_an_override_and_gives_everything_back(tmp_path):
    obj = make_armature(both_legs(), name="Hero")
    set_active_bone(obj, "shin.L")
    api.auto_rig(obj)
    obj = shot_override(saved_character(obj, tmp_path / "character.blend"))
    bpy.ops.object.mode_set(mode="POSE")
    tool_settings = bpy.context.scene.tool_settings
    tool_settings.transform_pivot_point = "MEDIAN_POINT"
    selection.select_only(obj, ["toe.L", "hips"], "thigh.L")
    assert bpy.ops.ik_rigger.fk_pivot() == {"FINISHED"}
    assert tool_settings.transform_pivot_point == "ACTIVE_ELEMENT"
    assert set(selection.selected_bones(obj)) == {"thigh.L", "foot_IK.L"}
    assert bpy.ops.ik_rigger.fk_pivot() == {"FINISHED"}
    assert tool_settings.transform_pivot_point == "MEDIAN_POINT"
    assert set(selection.selected_bones(obj)) == {"toe.L", "hips"}
    assert obj.data.bones.active.name == "thigh.L"


def test_an_override_exports_at_another_frame_as_its_rig_plays_and_the_shot_is_left_as_it_was(tmp_path):
    obj = shot_override(saved_character(legs_character(), tmp_path / "character.blend"))
    bpy.context.scene.frame_set(7)
    before = state()
    report = api.export(obj, str(tmp_path / "shot.glb"))
    assert state() == before
    assert [clip.name for clip in report.clips] == ["Walk"]  # the shot links what the character plays
    assert validate(str(tmp_path / "shot.glb"))["issues"]["numErrors"] == 0
    assert sorted(three_play(str(tmp_path / "shot.glb"), 24.0).joints) == sorted(report.joints)
    assert_three_plays_the_rig(obj, tmp_path / "shot.glb", report)
