"""Bake IK/FK called from a script (EXEC, as `bpy.ops.ik_rigger.bake(...)` runs) without Start and End bakes
the scene's (or preview) range, as docs/motion_capture.md says and as from a menu or F3: it baked frames 1 to
250, the properties' defaults, whatever the scene's range (Plant Feet over Frame Range already took it)."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, both_legs_rigged


@pytest.fixture
def rigged() -> bpy.types.Object:
    return both_legs_rigged()


def keyed_frames(obj: bpy.types.Object, bone: str) -> set[int]:
    """The frames ``bone``'s transforms are keyed on (its IK/FK switch is keyed on the frames around too)."""
    return {round(point.co.x) for curve in all_fcurves(obj)
            if curve.data_path.startswith(f'pose.bones["{bone}"].') for point in curve.keyframe_points}


@pytest.mark.parametrize("preview", [False, True])
def test_a_script_bake_without_a_range_bakes_the_scenes(rigged, preview):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 3, 9
    if preview:
        scene.use_preview_range = True
        scene.frame_preview_start, scene.frame_preview_end = 5, 7
    handle = rigged.ik_rigger.limbs[0].handle
    assert bpy.ops.ik_rigger.bake(direction="FK_TO_IK") == {"FINISHED"}
    assert keyed_frames(rigged, handle) == (set(range(5, 8)) if preview else set(range(3, 10)))


def test_a_script_bake_with_one_end_given_takes_the_other_from_the_scene(rigged):
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 3, 9
    handle = rigged.ik_rigger.limbs[0].handle
    assert bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_end=5) == {"FINISHED"}
    assert keyed_frames(rigged, handle) == {3, 4, 5}
