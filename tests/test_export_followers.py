"""A mesh modifier the file cannot play, following something that moves, is warned of by name.

The export applies a mesh's modifiers besides Armature (docs/export.md): the file holds the shape they give
on the current frame. A Hook on a bone of the character (or on an animated Empty) moves the mesh in Blender
as the clip plays, and the file's mesh did not, silently (16% of the character's height off on the frames
farthest from the current one, on the legs' character); the warning names the mesh, the modifier and what
it follows. A Hook on an Empty that stands still plays the same in the file, and says nothing."""

from __future__ import annotations

import bpy
import pytest
from test_export import legs_character, state

from ik_rigger import api


def _hooked(obj: bpy.types.Object, target: bpy.types.Object, bone: str = "") -> bpy.types.Object:
    bpy.ops.object.mode_set(mode="OBJECT")
    body = bpy.data.objects["Body"]
    hook = body.modifiers.new("Strap", "HOOK")
    hook.object, hook.subtarget = target, bone
    hook.falloff_type, hook.strength, hook.vertex_group = "NONE", 0.5, "thigh.L"
    if bone:
        hook.matrix_inverse = (target.matrix_world @ target.data.bones[bone].matrix_local).inverted()
    body.modifiers.move(1, 0)
    return body


def _mover(animated: bool) -> bpy.types.Object:
    mover = bpy.data.objects.new("Mover", None)
    bpy.context.scene.collection.objects.link(mover)
    if animated:
        for frame, z in {1: 0.0, 20: 0.2}.items():
            mover.location = (0.0, 0.0, z)
            mover.keyframe_insert("location", frame=frame)
    return mover


@pytest.mark.parametrize("what", ["a bone of the armature", "an animated Empty"])
def test_a_modifier_following_what_moves_is_named(tmp_path, what):
    obj = legs_character()
    if what == "a bone of the armature":
        _hooked(obj, obj, "shin.L")
        followed = f"the bone 'shin.L' of '{obj.name}'"
    else:
        _hooked(obj, _mover(animated=True))
        followed = "'Mover'"
    bpy.context.scene.frame_set(8)
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert state() == before
    said = [warning for warning in report.warnings if "Strap" in warning]
    assert len(said) == 1, report.warnings
    assert f"the mesh 'Body' has the modifier 'Strap' following {followed}" in said[0], said
    assert "current frame (8)" in said[0] and "weight the mesh to the bones" in said[0]


def test_a_modifier_following_what_stands_still_says_nothing(tmp_path):
    obj = legs_character()
    _hooked(obj, _mover(animated=False))
    report = api.export(obj, str(tmp_path / "legs.glb"), clips=["Walk"])
    assert not [warning for warning in report.warnings if "Strap" in warning], report.warnings
