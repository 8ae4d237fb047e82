"""A rebuild keeps what the user changed on the controls it keeps, as a rig generator's regeneration is
expected to: the bone collections the user moved them into (out of IK Controls, or into both), their
colour and their shape's size or the user's own shape. Controls the rebuild makes anew go where a build
puts them; the mechanism the user does not see is set up as a build sets it."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from helpers import both_legs, make_armature

from ik_rigger import api
from ik_rigger.batch import rig_file as files
from ik_rigger.limb.config import Config


def _names(bone: bpy.types.Bone) -> list[str]:
    return sorted(collection.name for collection in bone.collections)


def _moved_about() -> tuple[bpy.types.Object, api.Limb, bpy.types.Object]:
    """Both legs rigged; the left handle moved into the user's 'Feet' only, the left pole into 'Feet' too,
    the handle's colour and shape size changed, the pole given a shape of the user's own."""
    obj = make_armature(both_legs())
    left = api.build(obj, "shin.L", both_sides=True)[0]
    bones = obj.data.bones
    handle, pole = bones[left.bones["HANDLE"]], bones[left.bones["POLE"]]
    feet = obj.data.collections.new("Feet")
    obj.data.collections_all["IK Controls"].unassign(handle)
    feet.assign(handle)
    feet.assign(pole)
    handle.color.palette = "THEME09"
    obj.pose.bones[handle.name].custom_shape_scale_xyz = (2.0, 2.0, 2.0)
    mesh = bpy.data.meshes.new("My Shape")
    mesh.from_pydata([(0, 0, 0), (0, 1, 0)], [(0, 1)], [])
    mine = bpy.data.objects.new("My Shape", mesh)
    obj.pose.bones[pole.name].custom_shape = mine
    obj.pose.bones[pole.name].custom_shape_scale_xyz = (0.5, 0.5, 0.5)
    obj.pose.bones[handle.name].color.palette = "THEME05"  # the pose bone's own colour, over the bone's
    obj.pose.bones[handle.name].custom_shape_translation = (0.0, 0.1, 0.0)
    return obj, left, mine


def _kept(obj: bpy.types.Object, left: api.Limb, mine: bpy.types.Object) -> None:
    bones, pose_bones = obj.data.bones, obj.pose.bones
    handle, pole = left.bones["HANDLE"], left.bones["POLE"]
    assert _names(bones[handle]) == ["Feet"]
    assert _names(bones[pole]) == ["Feet", "IK Controls"]
    assert bones[handle].color.palette == "THEME09"
    assert tuple(pose_bones[handle].custom_shape_scale_xyz) == pytest.approx((2.0, 2.0, 2.0))
    assert pose_bones[handle].color.palette == "THEME05"
    assert tuple(pose_bones[handle].custom_shape_translation) == pytest.approx((0.0, 0.1, 0.0))
    assert pose_bones[pole].custom_shape == mine
    assert tuple(pose_bones[pole].custom_shape_scale_xyz) == pytest.approx((0.5, 0.5, 0.5))
    assert _names(bones[left.bones["CLONE"]]) == ["IK Mechanism"]


REBUILDS = {
    "same options": lambda obj: api.build(obj, "shin.L"),
    "other options": lambda obj: api.build(obj, "shin.L", pole_distance=1.5, pole_parent="HANDLE"),
    "both sides": lambda obj: api.build(obj, "shin.R", both_sides=True, pole_distance=1.5),
    "many": lambda obj: api.build_many(obj, [("shin.L", api.options(pole_distance=1.5)), ("shin.R", api.options())]),
}


@pytest.mark.parametrize("rebuild", list(REBUILDS))
def test_a_rebuild_keeps_the_collections_colour_and_shape_the_user_gave_its_controls(rebuild: str) -> None:
    obj, left, mine = _moved_about()
    right = api.limbs(obj)[1]
    REBUILDS[rebuild](obj)
    _kept(obj, left, mine)
    # The other leg, as the user left it, stays as a build made it.
    assert _names(obj.data.bones[right.bones["HANDLE"]]) == ["IK Controls"]
    assert obj.data.bones[right.bones["HANDLE"]].color.palette == "THEME04"


def test_new_controls_of_a_rebuild_go_where_a_build_puts_them() -> None:
    obj, left, mine = _moved_about()
    rebuilt = api.build(obj, "shin.L", foot_roll=True)[0]
    _kept(obj, left, mine)
    roll = rebuilt.bones["ROLL"]
    assert _names(obj.data.bones[roll]) == ["IK Controls"]
    assert obj.pose.bones[roll].custom_shape is not None


def test_a_control_the_user_took_out_of_every_collection_goes_back_where_a_build_puts_it() -> None:
    """A control in no collection shows always: one the user's deleting IK Controls left so is put back in
    a new IK Controls, as the rest of the controls are."""
    obj = make_armature(both_legs())
    left = api.build(obj, "shin.L")[0]
    obj.data.collections.remove(obj.data.collections_all["IK Controls"])
    api.build(obj, "shin.L", pole_distance=1.5)
    for role in ("HANDLE", "POLE"):
        assert _names(obj.data.bones[left.bones[role]]) == ["IK Controls"], role


def test_a_rebuild_with_shapes_off_keeps_the_users_own_shape_and_takes_its_own() -> None:
    obj, left, mine = _moved_about()
    api.build(obj, "shin.L", shapes=False)
    assert obj.pose.bones[left.bones["POLE"]].custom_shape == mine
    assert obj.pose.bones[left.bones["HANDLE"]].custom_shape is None
    api.build(obj, "shin.L", shapes=True)
    assert obj.pose.bones[left.bones["POLE"]].custom_shape == mine
    assert obj.pose.bones[left.bones["HANDLE"]].custom_shape is not None


def test_the_batch_rebuilding_a_rigged_file_keeps_them(tmp_path: Path) -> None:
    obj, left, mine = _moved_about()
    mine.use_fake_user = True  # a shape object in no scene, kept in the file by the bone that uses it too
    source = tmp_path / "hero.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "hero.blend")), Config())
    assert result.status == "rigged", result.error
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "hero.blend"), use_scripts=False)
    _kept(bpy.data.objects["Rig"], left, bpy.data.objects["My Shape"])


def test_controls_all_in_the_users_collections_make_no_ik_controls_again() -> None:
    """The user moved every control into a collection of theirs and deleted IK Controls: a rebuild leaves
    them there and makes no empty IK Controls."""
    obj = make_armature(both_legs())
    left = api.build(obj, "shin.L")[0]
    legs = obj.data.collections.new("Legs")
    controls = [bone.name for bone in obj.data.collections_all["IK Controls"].bones]
    assert {left.bones["HANDLE"], left.bones["POLE"], left.bones["POLE_LINE"]} == set(controls)
    for name in controls:
        legs.assign(obj.data.bones[name])
    obj.data.collections.remove(obj.data.collections_all["IK Controls"])
    api.build(obj, "shin.L", pole_distance=1.5)
    assert "IK Controls" not in obj.data.collections_all
    for name in controls:
        assert _names(obj.data.bones[name]) == ["Legs"], name
