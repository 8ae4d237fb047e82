"""Operators in Blender's multi-object modes: two armatures in Pose or Edit mode at once, one of them not
selected. The other armature is left in its mode, its bones and pose as they were."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, evaluate, make_armature, same, set_active_bone, snapshot

from ik_rigger import api


def two_in(mode: str, other_selected: bool) -> tuple[bpy.types.Object, bpy.types.Object]:
    """Armatures A (active) and B, both in ``mode``, B selected or not (deselected in the Outliner)."""
    other = make_armature(both_legs(), name="B", mode="OBJECT")
    obj = make_armature(both_legs(), name="A", mode="OBJECT")
    other.pose.bones["shin.L"].rotation_mode = "XYZ"
    other.pose.bones["shin.L"].rotation_euler.x = 0.4  # a pose of its own, not keyed
    other.select_set(True)
    bpy.ops.object.mode_set(mode=mode)
    assert other.mode == mode
    other.select_set(other_selected)
    return obj, other


OPERATIONS = {
    "build": lambda obj: bpy.ops.ik_rigger.build_ik(),
    "auto_rig": lambda obj: bpy.ops.ik_rigger.auto_rig(),
    "remove": lambda obj: bpy.ops.ik_rigger.remove_ik(),
    "rebuild": lambda obj: bpy.ops.ik_rigger.rebuild_limb(),
    "bake": lambda obj: bpy.ops.ik_rigger.bake(frame_start=1, frame_end=3),
    "api_build": lambda obj: api.build(obj, "shin.R"),
}


@pytest.mark.parametrize("mode", ["POSE", "EDIT"])
@pytest.mark.parametrize("other_selected", [False, True], ids=["other_deselected", "other_selected"])
@pytest.mark.parametrize("operation", OPERATIONS)
def test_the_other_armature_keeps_its_mode(mode, other_selected, operation):
    """The other armature left Pose mode for good when not selected: Blender takes only the selected
    ones back into it after the build's switch to Edit mode."""
    if mode == "EDIT" and operation == "bake":
        pytest.skip("Bake works in Pose and Object mode")
    obj, other = two_in(mode, other_selected)
    if operation in ("remove", "rebuild", "bake"):
        api.build(obj, "shin.L")
    set_active_bone(obj, "shin.L")
    if mode == "EDIT":
        obj.data.edit_bones.active = obj.data.edit_bones["shin.L"]
    bpy.context.view_layer.update()
    posed = evaluate(other)
    before = snapshot(other)
    result = OPERATIONS[operation](obj)
    assert result == {"FINISHED"} or isinstance(result, list)
    assert (obj.mode, other.mode) == (mode, mode)
    assert bpy.context.view_layer.objects.active == obj
    assert other.select_get() == other_selected
    bpy.context.view_layer.update()
    assert same(before, snapshot(other))
    after = evaluate(other)
    assert all(same(posed[name], after[name], 1e-5) for name in posed)


def test_a_bone_renamed_in_edit_mode_is_named_by_the_greyed_out_operators():
    """A chain bone renamed in Edit mode: Remove IK Limb said it was not part of a rigged limb; it is, and
    leaving Edit mode once makes it known. Out of it, Rebuild Limb and Remove IK Limb work on it."""
    obj = make_armature(both_legs())
    api.build(obj, "shin.L")
    bpy.ops.object.mode_set(mode="EDIT")
    bones = obj.data.edit_bones
    bones["shin.L"].name = "calf.L"
    bones.active = bones["calf.L"]
    with pytest.raises(RuntimeError, match="Leave Edit mode once: the bone 'calf.L' was renamed or added there"):
        bpy.ops.ik_rigger.remove_ik()
    bpy.ops.object.mode_set(mode="POSE")
    set_active_bone(obj, "calf.L")
    assert bpy.ops.ik_rigger.rebuild_limb() == {"FINISHED"}
    handle = obj.pose.bones[obj.ik_rigger.limbs[0].handle]
    handle.location.z += 0.2
    bpy.context.view_layer.update()
    assert evaluate(obj)["calf.L"] != obj.data.bones["calf.L"].matrix_local
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert not obj.ik_rigger.limbs
