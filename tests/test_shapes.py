"""Bone shapes: made in code, shared by every limb, never duplicated, gone with the last user."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, make_armature, set_active_bone

from ik_rigger.rig import build, shapes


def shape_objects() -> list[bpy.types.Object]:
    return [obj for obj in bpy.data.objects if obj.get(shapes.MARK)]


def test_controls_get_shared_shapes_in_one_hidden_collection():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    handle, pole, clone = (obj.pose.bones[name] for name in ("foot_IK.L", "shin_IK_pole.L", "foot_IK_clone.L"))
    assert handle.custom_shape is not None and pole.custom_shape is not None and clone.custom_shape is None
    assert handle.custom_shape == obj.pose.bones["foot_IK.R"].custom_shape != pole.custom_shape
    line = obj.pose.bones["shin_IK_pole_line.L"]
    assert line.custom_shape is not None and obj.data.bones[line.name].hide_select
    assert len(shape_objects()) == 3
    collections = [collection for collection in bpy.data.collections if collection.get(shapes.MARK)]
    assert len(collections) == 1 and collections[0].hide_viewport and collections[0].hide_render
    assert set(collections[0].objects) == set(shape_objects())
    assert len(handle.custom_shape.data.edges) > 0 and len(handle.custom_shape.data.polygons) == 0
    # A second character in the file shares them.
    other = make_armature(both_legs(), name="Other")
    set_active_bone(other, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert len(shape_objects()) == 3


def test_rebuilds_never_duplicate_and_the_last_removal_takes_them():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    for _ in range(4):  # a build and three rebuilds
        assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    assert len(shape_objects()) == 3
    meshes = len(bpy.data.meshes)
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert len(shape_objects()) == 3  # the right leg still uses them
    set_active_bone(obj, "shin.R")
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert shape_objects() == [] and len(bpy.data.meshes) == meshes - 3
    assert not [collection for collection in bpy.data.collections if collection.get(shapes.MARK)]


def test_shapes_can_be_turned_off_and_a_failed_build_makes_none(monkeypatch):
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(shapes=False) == {"FINISHED"}
    assert obj.pose.bones["foot_IK.L"].custom_shape is None and shape_objects() == []
    assert bpy.ops.ik_rigger.build_ik(shapes=True) == {"FINISHED"}
    assert len(shape_objects()) == 3
    assert bpy.ops.ik_rigger.build_ik(shapes=False) == {"FINISHED"}
    assert obj.pose.bones["foot_IK.L"].custom_shape is None and shape_objects() == []
    objects = len(bpy.data.objects)

    def fail(*args, **kwargs):
        raise RuntimeError("injected")

    set_active_bone(obj, "shin.R")
    monkeypatch.setattr(build, "_set_version", fail)  # fails after the shapes were given
    with pytest.raises(RuntimeError, match="injected"):
        bpy.ops.ik_rigger.build_ik(shapes=True)
    assert len(bpy.data.objects) == objects and shape_objects() == []
