"""The newest refusals and paths (tests/newest_cases.py) in every scene state a character is met in
(tests/scene_states.py), through the API and through the operators as the UI calls them: each works or
refuses by name, and the scene comes out as it went in (modes, the active object, selection, visibility,
the frame, another character's pose and keys); a refusal leaves the character as it was."""

from __future__ import annotations

import re
from dataclasses import replace

import bpy
import pytest
from helpers import set_active_bone
from newest_cases import CASES, Case, floor
from scene_states import STATES, UI_STATES, other_character, rig_seen, scene_seen


def _shown_again(obj: bpy.types.Object) -> None:
    """Everything that kept the character from Blender's evaluation turned back on, for the check."""
    obj.hide_set(False)
    obj.hide_viewport = False
    for child in bpy.context.view_layer.layer_collection.children:
        child.hide_viewport = False
    if bpy.context.object is not None and bpy.context.object.mode == "EDIT":
        bpy.ops.object.mode_set(mode="OBJECT")


# What a build (Edit mode) in a collection hidden in the viewport says: Blender cannot edit it there.
HIDDEN_COLLECTION = r"the armature 'Rig' is in the hidden collection 'Hero Hidden'.*its eye in the Outliner"


EXCLUDED = r"the armature 'Rig' is in the collection 'Hero Excluded', excluded from the view layer"


def _outcome(case: Case, obj: bpy.types.Object, call, error_kind: type[Exception]) -> None:
    objects = {item.name for item in bpy.data.objects}
    collections = {child.name for child in bpy.context.view_layer.layer_collection.children}
    scene = scene_seen(objects, collections)
    rig = rig_seen(obj)
    if case.refusal:
        with pytest.raises(error_kind) as refused:
            call()
        assert re.search(case.refusal, str(refused.value), re.S), str(refused.value)
        assert "Traceback" not in str(refused.value)
        assert rig_seen(obj) == rig
    else:
        call()
    assert scene_seen(objects, collections) == scene
    if case.works is not None:
        _shown_again(obj)
        case.works(obj)


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("name", list(CASES))
def test_the_api_in_every_scene_state(name, state):
    case = CASES[name]
    obj = case.make()
    other_character()
    STATES[state](obj)
    if case.builds and state == "its collection hidden":
        case = replace(case, refusal=HIDDEN_COLLECTION, works=None)
    if state == "its collection excluded":  # Blender does not evaluate it: every operation refuses alike
        case = replace(case, refusal=EXCLUDED, works=None)
    _outcome(case, obj, lambda: case.by_api(obj), Exception)


def _ui_states(case: Case) -> list[str]:
    """The states of ``UI_STATES`` its operator works in (the others it greys out, saying why)."""
    return [state for state in UI_STATES if (case.in_object_mode or "Object mode" not in state)
            and (case.in_edit_mode or "Edit mode" not in state)]


@pytest.mark.parametrize("name,state", [(name, state) for name in CASES for state in _ui_states(CASES[name])])
def test_the_operators_in_every_scene_state(name, state):
    case = CASES[name]
    obj = case.make()
    other_character()
    UI_STATES[state](obj)
    _outcome(case, obj, case.by_ui, RuntimeError)


def _in_a_library(case: Case, tmp_path) -> str:
    """The character made for ``case``, in its collection 'Character', written to a library file; a fresh
    scene with a floor and another character."""
    obj = case.make()
    if obj.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    collection = bpy.data.collections.new("Character")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)
    library = str(tmp_path / "character.blend")
    bpy.data.libraries.write(library, {collection}, fake_user=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    floor()
    other_character()
    return library


@pytest.mark.parametrize("name,way", [(name, way) for name in CASES for way in ("api", "ui")
                                      if way == "api" or CASES[name].in_object_mode])
def test_a_character_linked_from_a_library_is_refused_naming_it_and_nothing_is_written(name, way, tmp_path):
    """Through the API, and through the operators with it active (in Object mode: Blender poses no linked
    armature)."""
    case = CASES[name]
    library = _in_a_library(case, tmp_path)
    with bpy.data.libraries.load(library, link=True) as (_source, target):
        target.objects = ["Rig"]
    obj = target.objects[0]
    bpy.context.scene.collection.objects.link(obj)
    linked = replace(case, refusal=r"'Rig'.*linked.*character\.blend", works=None)
    if way == "ui":
        bpy.context.view_layer.objects.active = obj
        obj.select_set(True)
    _outcome(linked, obj, (lambda: case.by_api(obj)) if way == "api" else case.by_ui,
             Exception if way == "api" else RuntimeError)


def _overridden(case: Case, tmp_path) -> bpy.types.Object:
    library = _in_a_library(case, tmp_path)
    with bpy.data.libraries.load(library, link=True) as (_source, target):
        target.collections = ["Character"]
    bpy.context.scene.collection.children.link(target.collections[0])
    target.collections[0].override_hierarchy_create(bpy.context.scene, bpy.context.view_layer,
                                                    do_fully_editable=True)
    obj = next(item for item in bpy.data.objects if item.override_library is not None and item.type == "ARMATURE")
    if obj.animation_data is not None and obj.animation_data.action is not None:
        # The shot's own action, as an animator keys into (keys are never written into the linked one).
        slot = getattr(obj.animation_data, "action_slot", None)
        obj.animation_data.action = obj.animation_data.action.copy()
        if slot is not None:
            obj.animation_data.action_slot = obj.animation_data.action.slots[slot.identifier]
    return obj


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("way", ["api", "ui"])
def test_a_library_override_is_worked_on_as_the_characters_own_file_is(name, way, tmp_path):
    """Snapping, baking, switching parents and Plant Feet work on an override (and refuse what they refuse
    in the character's own file); building changes the rest skeleton, which only that file can."""
    case = CASES[name]
    obj = _overridden(case, tmp_path)
    if case.builds:
        case = replace(case, refusal=r"'Rig' is a library override", works=None)
    if way == "ui":
        bpy.context.view_layer.objects.active = obj
        obj.select_set(True)
        bpy.ops.object.mode_set(mode="POSE")
        if obj.data.bones.active is None:
            set_active_bone(obj, "shin.L")
    _outcome(case, obj, (lambda: case.by_api(obj)) if way == "api" else case.by_ui,
             Exception if way == "api" else RuntimeError)
