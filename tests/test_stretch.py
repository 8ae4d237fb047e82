"""Stretch done right: one value per limb (the handle's ``stretch``), a maximum, clean scales at 0."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, chain_length, evaluate, make_armature, same, set_active_bone, snapshot
from mathutils import Vector
from test_build import move_handle

CHAIN = ["thigh.L", "shin.L"]


def rig(**options) -> bpy.types.Object:
    obj = make_armature(both_legs(bend=0.08))
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(**options) == {"FINISHED"}
    return obj


def pull(obj: bpy.types.Object, reach: float) -> tuple[Vector, Vector, dict]:
    """Move the handle straight away from the hip to ``reach`` chain lengths; return the handle, the chain end
    and the evaluated pose."""
    bones = obj.data.bones
    root = bones["thigh.L"].head_local
    end = bones["shin.L"].tail_local
    length = chain_length(obj, CHAIN)
    direction = (end - root).normalized()
    move_handle(obj, "foot_IK.L", root + direction * reach * length - end)
    posed = evaluate(obj)
    tip = posed["shin.L"] @ Vector((0.0, bones["shin.L"].length, 0.0))
    return posed["foot_IK.L"].translation, tip, posed


def set_stretch(obj: bpy.types.Object, value: float) -> None:
    obj.pose.bones["foot_IK.L"]["stretch"] = value
    obj.update_tag()


def test_at_zero_nothing_stretches_and_deforming_scales_stay_one():
    obj = rig()
    set_stretch(obj, 0.0)
    _, _, posed = pull(obj, 1.5)
    for name in CHAIN + ["foot.L"]:
        scale = posed[name].to_scale()
        assert max(abs(value - 1.0) for value in scale) < 1e-5, name
        length = (posed[name] @ Vector((0.0, obj.data.bones[name].length, 0.0)) - posed[name].translation).length
        assert length == pytest.approx(obj.data.bones[name].length, abs=1e-5)


@pytest.mark.parametrize("reach", [1.1, 1.3, 1.49])
def test_at_one_the_chain_reaches_the_handle_up_to_the_maximum(reach):
    obj = rig(max_stretch=1.5)
    set_stretch(obj, 1.0)
    handle, tip, _ = pull(obj, reach)
    assert (tip - handle).length < 1e-4 * chain_length(obj, CHAIN)


def test_beyond_the_maximum_the_chain_stops_there_and_the_handle_moves_on():
    obj = rig(max_stretch=1.25)
    set_stretch(obj, 1.0)
    handle, tip, _ = pull(obj, 2.0)
    length = chain_length(obj, CHAIN)
    root = obj.data.bones["thigh.L"].head_local
    assert (handle - root).length == pytest.approx(2.0 * length, rel=1e-4)  # the control itself is free
    assert (tip - root).length == pytest.approx(1.25 * length, abs=1e-4 * length)


def test_the_handle_value_is_the_only_source_and_remove_gives_everything_back():
    obj = make_armature(both_legs(bend=0.08))
    obj.pose.bones["shin.L"].ik_stretch = 0.2  # the user's own
    before = snapshot(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    set_stretch(obj, 0.7)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    bpy.context.view_layer.update()
    assert [evaluated.pose.bones[name].ik_stretch for name in CHAIN] == pytest.approx([0.7, 0.7])
    assert bpy.ops.ik_rigger.build_ik(max_stretch=2.0) == {"FINISHED"}  # a rebuild keeps the value
    assert obj.pose.bones["foot_IK.L"]["stretch"] == pytest.approx(0.7)
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert obj.pose.bones["shin.L"].ik_stretch == pytest.approx(0.2)
    assert same(snapshot(obj), before)
