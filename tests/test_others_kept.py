"""Rigging one armature leaves every other object's values as the user left them, keyed or not: a
build enters Edit mode, which sets every animated value from its keys (``rig/scene_state.others_kept``
gives them back, reading each animated array once)."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, leg_bones, make_armature

from ik_rigger import api


def _keyed_scene() -> tuple[dict[str, object], object]:
    """Another armature, a mesh with a shape key and an empty, each keyed on frames 1 and 10; returns
    what reads each value, and what sets them by hand to values no key holds."""
    other = make_armature(leg_bones(), name="Other")
    shin = other.pose.bones["shin.L"]
    shin.rotation_mode = "XYZ"
    shin["ik_fk"] = 1.0
    for frame in (1, 10):
        shin.keyframe_insert("rotation_euler", index=0, frame=frame)  # X alone is animated
        shin.keyframe_insert('["ik_fk"]', frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    mesh = bpy.data.objects.new("Face", bpy.data.meshes.new("Face"))
    bpy.context.scene.collection.objects.link(mesh)
    mesh.shape_key_add(name="Basis")
    smile = mesh.shape_key_add(name="smile")
    empty = bpy.data.objects.new("Prop", None)
    bpy.context.scene.collection.objects.link(empty)
    for frame in (1, 10):
        smile.keyframe_insert("value", frame=frame)
        empty.keyframe_insert("location", frame=frame)

    def pose() -> None:
        bpy.context.scene.frame_set(5)
        shin.rotation_euler = (0.7, 0.3, 0.1)
        shin["ik_fk"] = 0.25
        smile.value = 0.8
        empty.location = (1.0, 2.0, 3.0)

    return {"rotation": lambda: tuple(shin.rotation_euler), "switch": lambda: (shin["ik_fk"],),
            "shape key": lambda: (smile.value,), "location": lambda: tuple(empty.location)}, pose


def _now(values: dict[str, object]) -> dict[str, list[float]]:
    return {name: list(read()) for name, read in values.items()}


@pytest.mark.parametrize("mode", ["POSE", "EDIT"])
def test_rigging_leaves_every_other_objects_values_as_the_user_set_them(mode):
    values, pose = _keyed_scene()
    hero = make_armature(both_legs(), name="Hero", mode=mode)  # into Edit mode and out: before posing
    pose()
    expected = {"rotation": [0.7, 0.3, 0.1], "switch": [0.25], "shape key": [0.8], "location": [1.0, 2.0, 3.0]}
    assert _now(values) == {name: pytest.approx(value) for name, value in expected.items()}
    assert len(api.auto_rig(hero)) == 2 and hero.mode == mode
    assert _now(values) == {name: pytest.approx(value) for name, value in expected.items()}
