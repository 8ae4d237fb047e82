"""A character mirrored by its object's scale (X at -1, as a mirrored duplicate is): Plant Feet refused it,
saying there was no ground below its feet (the rays started under the ground: the object's mean scale came
out negative), and once past that would have turned each foot over (its sole's normal read through a
rotation Blender decomposes with every scale negative). Now it plants as the same character unmirrored."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs_rigged, evaluate
from mathutils import Vector

from ik_rigger import api


def _planted(scale: tuple[float, float, float], frames) -> dict[str, tuple[float, ...]]:
    """The world heights of the feet and toes (head and tail) of two legs rigged anew and scaled by ``scale``,
    once planted on a floor of their own 0.3 below the toes."""
    if bpy.context.object is not None:  # the twin rigged before, left in Pose mode
        bpy.ops.object.mode_set(mode="OBJECT")
    obj = both_legs_rigged()
    obj.scale = scale
    mesh = bpy.data.meshes.new("Floor")
    mesh.from_pydata([(-20, -20, -0.3), (20, -20, -0.3), (20, 20, -0.3), (-20, 20, -0.3)], [], [(0, 1, 2, 3)])
    floor = bpy.data.objects.new("Floor", mesh)
    bpy.context.scene.collection.objects.link(floor)
    result = api.plant_feet(obj, floor, frames)
    assert result.feet == ["shin.L", "shin.R"]
    bpy.context.scene.frame_set(1)
    shown = evaluate(obj)
    world = obj.matrix_world
    heights = {}
    for name in ("foot.L", "foot.R", "toe.L", "toe.R"):
        length = obj.data.bones[name].length
        heights[name] = tuple((world @ shown[name] @ point).z for point in (Vector(), Vector((0, length, 0))))
    return heights


@pytest.mark.parametrize("frames", [None, range(1, 4)])
@pytest.mark.parametrize("scale", [(-1.0, 1.0, 1.0), (1.0, -1.0, 1.0), (-1.5, 1.5, 1.5)])
def test_a_mirrored_character_plants_its_feet_as_the_same_character_unmirrored(scale, frames):
    mirrored = _planted(scale, frames)
    unmirrored = _planted(tuple(abs(axis) for axis in scale), frames)
    for name, heights in unmirrored.items():
        assert mirrored[name] == pytest.approx(heights, abs=1e-4), name
    assert min(min(heights) for heights in mirrored.values()) == pytest.approx(-0.3, abs=1e-4)
