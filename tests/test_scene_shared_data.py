"""Two characters sharing one armature data (a linked duplicate, Alt+D): bones live on the data, so an
edit of bones already there changed the other character. Before, removing an aim control or a limb,
or rebuilding one, on the first character of a pair duplicated rigged turned the second's head, bent
its legs or moved its poles, and an aim control gave the second bones that did nothing there. Those
edits are refused now, before anything changes, naming the other object and Make Single User."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from helpers import DATA

from ik_rigger import api

_HEAD = "mixamorig:Head"


def _mixamo() -> bpy.types.Object:
    """The Mixamo skeleton of tests/data, without its motion, in Object mode."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    obj.animation_data_clear()
    bpy.context.scene.frame_set(1)
    return obj


def _linked_duplicate(obj: bpy.types.Object) -> bpy.types.Object:
    """What Alt+D makes of ``obj``: a second object on the same armature data, its rig copied; set apart."""
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.duplicate(linked=True)
    second = bpy.context.active_object
    second.name = "Second"
    second.location.x += 3.0 * max(obj.dimensions)
    bpy.context.view_layer.objects.active = obj
    assert second.data == obj.data and second != obj
    return second


def _poses(obj: bpy.types.Object) -> dict[str, np.ndarray]:
    """Every bone's evaluated world matrix."""
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {bone.name: np.array(obj.matrix_world @ bone.matrix) for bone in evaluated.pose.bones}


def _unchanged(before: dict[str, np.ndarray], after: dict[str, np.ndarray], size: float) -> None:
    assert sorted(after) == sorted(before)
    for name, matrix in before.items():
        assert np.abs(after[name][:3, 3] - matrix[:3, 3]).max() < 1e-4 * size, name
        assert np.abs(after[name][:3, :3] - matrix[:3, :3]).max() < 1e-4, name


def _rigged_pair() -> tuple[bpy.types.Object, bpy.types.Object]:
    """The Mixamo character rigged with an aim control on its head, then duplicated with Alt+D."""
    obj = _mixamo()
    api.auto_rig(obj)
    api.add_aim(obj)
    second = _linked_duplicate(obj)
    # The second character posed its own way: its left foot's handle moved, its head aimed elsewhere.
    handle = api.limbs(second)[0].bones["HANDLE"]
    second.pose.bones[handle].location.y += 0.1 * max(obj.dimensions)
    second.pose.bones[f"{_HEAD}_aim"].location.x += 0.2 * max(obj.dimensions)
    return obj, second


_EDITS = {
    "remove_aim": lambda obj: api.remove_aim(obj, _HEAD),
    "add_aim_again": lambda obj: api.add_aim(obj, distance=6.0),
    "remove": lambda obj: api.remove(obj, api.limbs(obj)[0].name),
    "rebuild": lambda obj: api.build(obj, api.limbs(obj)[0].name, pole_distance=3.0),
    "auto_rig_again": lambda obj: api.auto_rig(obj, pole_distance=3.0),
}


@pytest.mark.parametrize("edit", sorted(_EDITS))
def test_an_edit_of_bones_a_duplicate_shares_is_refused_and_changes_neither_character(edit):
    obj, second = _rigged_pair()
    size = max(obj.dimensions)
    before, own = _poses(second), _poses(obj)
    bones = sorted(obj.data.bones.keys())
    with pytest.raises(api.RigError) as raised:
        _EDITS[edit](obj)
    message = str(raised.value)
    assert "'Second'" in message and "Make Single User" in message and f"'{obj.name}'" in message, message
    _unchanged(before, _poses(second), size)
    _unchanged(own, _poses(obj), size)
    assert sorted(obj.data.bones.keys()) == bones


def test_an_aim_control_is_refused_on_data_a_duplicate_shares_and_made_once_it_is_single_user():
    obj = _mixamo()
    second = _linked_duplicate(obj)
    second.pose.bones[_HEAD].rotation_mode = "XYZ"
    second.pose.bones[_HEAD].rotation_euler = (0.3, 0.0, 0.2)
    size = max(obj.dimensions)
    before = _poses(second)
    bones = sorted(obj.data.bones.keys())
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode="POSE")
        obj.data.bones.active = obj.data.bones[_HEAD]
        with pytest.raises(RuntimeError, match="shared with 'Second'"):
            bpy.ops.ik_rigger.add_aim()
        bpy.ops.object.mode_set(mode="OBJECT")
    assert sorted(obj.data.bones.keys()) == bones
    _unchanged(before, _poses(second), size)
    # Make Single User (Object & Data): the first character gets its own data, and its aim.
    obj.data = obj.data.copy()
    assert api.add_aim(obj) == [_HEAD]
    _unchanged(before, _poses(second), size)
    assert f"{_HEAD}_aim" in obj.data.bones and f"{_HEAD}_aim" not in second.data.bones
    target = obj.pose.bones[f"{_HEAD}_aim"]
    target.location.x += 0.3 * size
    head = _poses(obj)[_HEAD]
    target.location.x -= 0.3 * size
    assert np.abs(_poses(obj)[_HEAD][:3, :3] - head[:3, :3]).max() > 0.05  # the head follows its target


def test_a_new_limb_on_shared_data_is_still_built_and_warned_of():
    """Adding limbs only adds bones, which the build says of (as before): the other's pose is kept."""
    obj = _mixamo()
    second = _linked_duplicate(obj)
    size = max(obj.dimensions)
    before = _poses(second)
    built = api.auto_rig(obj)
    assert any("shared with 'Second'" in note for limb in built for note in limb.warnings)
    after = _poses(second)
    _unchanged(before, {name: after[name] for name in before}, size)


@pytest.mark.parametrize("build", ["auto_rig", "build"])
def test_rigging_an_unrigged_duplicate_of_a_rigged_character_is_refused(build):
    """Auto-Rig on the unrigged one of two characters sharing their data, the other rigged, made a second set
    of the same limbs in the data (79 bones to 103), each character showing the other's controls doing nothing;
    the batch rigs such data once. Refused, naming the rigged one; the duplicate made rigged may still add one."""
    obj = _mixamo()
    second = _linked_duplicate(obj)
    api.auto_rig(obj)
    bones = sorted(obj.data.bones.keys())
    size = max(obj.dimensions)
    before, own = _poses(second), _poses(obj)
    with pytest.raises(api.RigError, match=rf"^the armature data '{obj.data.name}' of 'Second' is shared with "
                       rf"'{obj.name}' \(a linked duplicate, Alt\+D\), which IK Rigger rigged.*Make Single User"):
        if build == "auto_rig":
            api.auto_rig(second)
        else:
            api.build(second, "mixamorig:LeftLeg")
    assert sorted(obj.data.bones.keys()) == bones and not second.ik_rigger.limbs
    _unchanged(before, _poses(second), size)
    _unchanged(own, _poses(obj), size)
    # A duplicate made rigged holds the same limbs: a new limb on it is built (and warned of) as on the first.
    third = _linked_duplicate(obj)
    third.name = "Third"
    built = api.build(third, "mixamorig:Neck", extremity_mode="NONE", chain_length=2)
    assert any("shared with" in note for limb in built for note in limb.warnings)
