"""The ways in (operators from F3 and Python, the API) called as users and scripts do, at the edges: each is
refused with a report naming what and what to do, the data as it was."""

from __future__ import annotations

import time

import bpy
import pytest
from helpers import both_legs, make_armature, same, set_active_bone, snapshot

from ik_rigger import api

# Blender's frames run from -1048574 to 1048574 (the scene's current frame's limits).
LAST_FRAME = 1048574


@pytest.fixture
def rigged() -> bpy.types.Object:
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    return obj


@pytest.mark.parametrize("start, end", [(LAST_FRAME - 3, LAST_FRAME + 3), (1, 2**31 - 1), (-(2**31), 3)])
def test_a_bake_outside_blenders_frames_is_refused_at_once(rigged, start, end):
    """A range to 2**31 listed every frame first (Python filled the memory until the process was killed); one
    a few frames past Blender's last was baked, keyed where Blender cannot play."""
    before = snapshot(rigged)
    began = time.process_time()
    with pytest.raises(RuntimeError, match="outside Blender's frames, -1048574 to 1048574"):
        bpy.ops.ik_rigger.bake(frame_start=start, frame_end=end)
    with pytest.raises(api.RigError, match="outside Blender's frames"):
        api.bake(rigged, "IK_TO_FK", range(start, end + 1))
    assert time.process_time() - began < 5.0
    assert same(before, snapshot(rigged))


def test_plant_feet_outside_blenders_frames_is_refused(rigged):
    bpy.ops.mesh.primitive_plane_add(size=10)
    ground = bpy.context.active_object
    bpy.context.view_layer.objects.active = rigged
    before = snapshot(rigged)
    with pytest.raises(api.RigError, match="frame 1048575 lies outside Blender's frames"):
        api.plant_feet(rigged, ground, [1, LAST_FRAME + 1])
    with pytest.raises(api.RigError, match="outside Blender's frames"):
        api.plant_feet(rigged, ground, range(1, 2**40))
    assert same(before, snapshot(rigged))
