"""After rigging, on a library override in a shot file: the animator's tools (the FK pivot helper,
the export for a game engine) work there as on the character's own file."""

from __future__ import annotations

import json
from pathlib import Path

import bpy
import pytest
from export_readers import three_play, validate
from helpers import all_fcurves, both_legs, evaluate, linked_override, make_armature, same, set_active_bone, snapshot
from test_export import assert_three_plays_the_rig, legs_character, skinned_mesh, state

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


def shot_override(character: Path, editable: bool = True, fresh: bool = True) -> bpy.types.Object:
    """A new shot file linking the character and overriding it (Object > Library Override > Make);
    the armature override is returned active (not ``editable``: as when the animator made the override
    from the character's mesh, and Blender made the armature's a system override; not ``fresh``: into
    the file open)."""
    if fresh:
        bpy.ops.wm.read_factory_settings(use_empty=True)
    override = linked_override(character)
    obj = next(item for item in override.all_objects if item.type == "ARMATURE")
    obj.override_library.is_system_override = not editable  # what Make does for the object picked
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


def _keys(obj: bpy.types.Object) -> int:
    data = obj.animation_data
    return sum(len(curve.keyframe_points) for curve in all_fcurves(obj)) if data and data.action else 0


@pytest.mark.parametrize("name, options", [
    ("snap_fk_to_ik", {"keyframe": True}), ("snap_ik_to_fk", {"keyframe": True}), ("reset_pole_angle", {}),
    ("bake", {"frame_start": 1, "frame_end": 4}), ("switch_parent", {"parent": 1, "keyframe": True}),
])
def test_an_override_blender_keeps_uneditable_is_refused_by_name_and_left_as_it_was(tmp_path, name, options):
    """Blender keeps a system override out of Pose mode, and Blender 4.2 drops the keys written to it: the
    operators that pose and key refuse it, saying how to make it editable, as they refuse a linked one."""
    obj = make_armature(both_legs(), name="Hero", mode="OBJECT")
    api.auto_rig(obj, parent_switch=True)
    ik = obj.pose.bones["shin.L"].constraints["IK Rigger IK"]
    ik.pole_angle += 0.5  # a manual angle the automatic one would replace
    obj = shot_override(saved_character(obj, tmp_path / "character.blend"), editable=False)
    bpy.context.scene.frame_set(3)
    before, posed, angle = snapshot(obj), evaluate(obj), obj.pose.bones["shin.L"].constraints["IK Rigger IK"].pole_angle
    with pytest.raises(RuntimeError) as refused:
        getattr(bpy.ops.ik_rigger, name)(limb="shin.L", **options)
    message = str(refused.value)
    assert "Traceback" not in message and "'Hero' is a library override that is not editable" in message, message
    assert "Library Override > Make" in message
    assert same(snapshot(obj), before) and _keys(obj) == 0
    assert obj.pose.bones["shin.L"].constraints["IK Rigger IK"].pole_angle == angle
    assert all(same(list(matrix), list(posed[bone])) for bone, matrix in evaluate(obj).items())
    # A build is refused for what it is: one an override never takes, editable or not.
    with pytest.raises(api.RigError, match="building or removing a limb changes the rest skeleton"):
        api.build(obj, "shin.L")


def test_the_automatic_pole_angle_is_refused_on_a_linked_armature_and_the_angle_kept(tmp_path):
    obj = make_armature(both_legs(), name="Hero", mode="OBJECT")
    api.auto_rig(obj)
    obj.pose.bones["shin.L"].constraints["IK Rigger IK"].pole_angle += 0.5
    character = saved_character(obj, tmp_path / "character.blend")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(str(character), link=True) as (_, target):
        target.objects = ["Hero"]
    linked = target.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    bpy.context.view_layer.objects.active = linked
    ik = linked.pose.bones["shin.L"].constraints["IK Rigger IK"]
    angle = ik.pole_angle
    with pytest.raises(RuntimeError, match="'Hero' is linked from the library .*character.blend"):
        bpy.ops.ik_rigger.reset_pole_angle(limb="shin.L")
    assert ik.pole_angle == angle


def test_an_override_beside_the_linked_character_it_overrides_is_posed_keyed_and_exported(tmp_path):
    """The shot showed the library's character itself (linked before the override was made, kept as a
    reference): both are named 'Hero', and the override is the one to snap, bake and export."""
    obj = make_armature(both_legs(), name="Hero", mode="OBJECT")
    skinned_mesh(obj, ["thigh.L", "shin.L", "foot.L"])
    api.auto_rig(obj)
    character = saved_character(obj, tmp_path / "character.blend")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(str(character), link=True) as (_, target):
        target.objects = ["Hero"]
    linked = target.objects[0]
    reference = bpy.data.collections.new("Reference")  # before the override's: the view layer lists it first
    bpy.context.scene.collection.children.link(reference)
    reference.objects.link(linked)
    obj = shot_override(character, fresh=False)
    bpy.context.view_layer.update()
    listed = [(item.name, item == linked) for item in bpy.context.view_layer.objects if item.type == "ARMATURE"]
    assert listed == [("Hero", True), ("Hero", False)]
    bpy.context.scene.frame_set(4)
    assert bpy.ops.ik_rigger.snap_fk_to_ik(limb="shin.L", keyframe=True) == {"FINISHED"}
    assert obj.pose.bones["foot_IK.L"]["ik_fk"] == 0.0 and linked.pose.bones["foot_IK.L"]["ik_fk"] == 1.0
    assert bpy.ops.ik_rigger.bake(limb="shin.L", frame_start=1, frame_end=6) == {"FINISHED"}
    report = api.export(obj, str(tmp_path / "shot.glb"))
    assert [clip.name for clip in report.clips] == [obj.animation_data.action.name]


def test_a_parent_choice_on_an_override_survives_save_and_reopen_or_is_refused_where_blender_drops_it(tmp_path):
    """Blender 4.2 saves no override of a custom property named as a bone setting (``parent``): there an
    unkeyed switch is refused, saying to key it, where it was lost on reopening; a keyed one is kept. From 4.3 on
    (4.3, 4.4, 4.5, 5.0, 5.1 and 5.2 checked) an unkeyed one is kept too."""
    obj = make_armature(both_legs(), name="Hero", mode="OBJECT")
    api.auto_rig(obj, parent_switch=True)
    obj = shot_override(saved_character(obj, tmp_path / "character.blend"))
    bpy.ops.object.mode_set(mode="POSE")
    handle = obj.pose.bones["foot_IK.L"]
    before = snapshot(obj)
    if bpy.app.version < (4, 3, 0):
        with pytest.raises(RuntimeError, match="'shin.L': is on the library override 'Hero'.*Insert Keyframes"):
            bpy.ops.ik_rigger.switch_parent(limb="shin.L", parent=1)
        assert same(snapshot(obj), before) and handle["parent"] == 0
    else:
        assert bpy.ops.ik_rigger.switch_parent(limb="shin.L", parent=1) == {"FINISHED"}
    bpy.context.scene.frame_set(5)
    assert bpy.ops.ik_rigger.switch_parent(limb="shin.R", parent=1, keyframe=True) == {"FINISHED"}
    posed = evaluate(obj)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "shot.blend"))
    obj = bpy.data.objects["Hero"]
    bpy.context.scene.frame_set(5)
    assert obj.pose.bones["foot_IK.R"]["parent"] == 1
    assert obj.pose.bones["foot_IK.L"]["parent"] == (1 if bpy.app.version >= (4, 3, 0) else 0)
    assert all(same(list(matrix), list(posed[bone])) for bone, matrix in evaluate(obj).items())


def _names_in(path: Path) -> dict[str, list]:
    """The names a .glb gives its nodes, skins, meshes and animations."""
    data = path.read_bytes()
    length = int.from_bytes(data[12:16], "little")
    document = json.loads(data[20:20 + length])
    return {kind: [item.get("name") for item in document.get(kind, [])]
            for kind in ("nodes", "skins", "meshes", "animations")}


def test_a_file_exported_from_an_override_names_everything_as_the_one_exported_from_the_character(tmp_path):
    """A game pipeline exporting from the shot finds the character by its names, as exported from its
    own file: no copy's number; the shot keeps its names."""
    obj = legs_character()
    obj.name = "Hero"
    api.export(obj, str(tmp_path / "character.glb"), clips=["Walk"])
    obj = shot_override(saved_character(obj, tmp_path / "character.blend"))
    names = sorted(item.name for item in bpy.data.objects), sorted(item.name for item in bpy.data.armatures)
    api.export(obj, str(tmp_path / "shot.glb"), clips=["Walk"])
    assert _names_in(tmp_path / "shot.glb") == _names_in(tmp_path / "character.glb")
    assert "Hero" in _names_in(tmp_path / "shot.glb")["skins"]
    assert (sorted(item.name for item in bpy.data.objects), sorted(item.name for item in bpy.data.armatures)) == names
