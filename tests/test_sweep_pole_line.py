"""The pole line ends on the pole: built on a posed limb, rebuilt with another Pole Distance (the redo panel's
or Build again), on a scaled armature."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, make_armature, set_active_bone

from ik_rigger import api


def gap(obj: bpy.types.Object, limb: api.Limb) -> float:
    """How far the line's end is from the pole, over the leg's length (world space)."""
    bpy.context.view_layer.update()
    line, pole = obj.pose.bones[limb.bones["POLE_LINE"]], obj.pose.bones[limb.bones["POLE"]]
    world = obj.matrix_world
    length = sum((world @ obj.data.bones[name].tail_local - world @ obj.data.bones[name].head_local).length
                 for name in limb.chain)
    return (world @ line.tail - world @ pole.head).length / length


@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_the_pole_line_ends_on_the_pole(scale):
    """Left to Blender, the line's rest length was measured on whatever pose the next update showed (a line
    0.3 short of the pole on a posed leg) and kept by a rebuild that moved the pole (a line running four times
    past it after Pole Distance 0.5 to 2)."""
    obj = make_armature(both_legs())
    obj.scale = (scale,) * 3
    thigh = obj.pose.bones["thigh.L"]
    thigh.rotation_mode = "XYZ"
    thigh.rotation_euler.x = 0.8
    obj.pose.bones["hips"].location.y = 0.3
    bpy.context.view_layer.update()
    (limb,) = api.build(obj, "shin.L")
    assert gap(obj, limb) < 1e-5
    obj.pose.bones[limb.bones["HANDLE"]].location.z += 0.3
    obj.pose.bones[limb.bones["POLE"]].location.x += 0.3
    assert gap(obj, limb) < 1e-5
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(pole_distance=2.0) == {"FINISHED"}
    (limb,) = api.limbs(obj)
    assert gap(obj, limb) < 1e-5
    assert bpy.ops.ik_rigger.rebuild_limb(limb="shin.L") == {"FINISHED"}
    assert gap(obj, limb) < 1e-5
