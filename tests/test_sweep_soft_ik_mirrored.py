"""Soft IK under any object scale: mirrored (a negative axis, as mirroring a character in Object mode
leaves it) or other along each axis (a character squashed or stretched in Object mode): the limb plays in
the armature as it does unscaled, and Snap IK to FK lands. Earlier SOFT distance drivers divided the world
distance by the armature's world scale, which Blender reads negative on a mirrored one (the Mixamo
capture's leg turned 180 degrees, in every pose), then by its size, off by the ratio of the axes along
the handle's line (the leg at 1:3:2 snapped about 1% of the chain off); it measures the distance in the
armature's own space now, with constraints and a simple expression only."""

from __future__ import annotations

import bpy
import pytest
from helpers import chain_length, evaluate, rotation_degrees
from test_bake import import_mocap

from ik_rigger import api

LEG = "mixamorig:LeftLeg"


def _off(a: dict, b: dict, names, length: float) -> tuple[float, float]:
    """The most the named bones moved (in chain lengths) and turned (degrees) from ``a`` to ``b``."""
    return (max((a[name].translation - b[name].translation).length / length for name in names),
            max(rotation_degrees(a[name], b[name]) for name in names))


@pytest.mark.parametrize("scale", [(-1.0, 1.0, 1.0), (1.0, 1.0, -1.0), (-2.0, -2.0, -2.0),
                                   (1.0, 3.0, 2.0), (0.5, 1.0, 2.0), (-1.0, 2.0, 1.0)])
@pytest.mark.parametrize("max_stretch", [1.0, 1.5], ids=["no stretch", "stretch"])
def test_soft_ik_plays_and_snaps_the_same_under_any_object_scale(scale, max_stretch):
    obj = import_mocap()
    api.auto_rig(obj, soft_ik=0.1, max_stretch=max_stretch, animation="FK")
    limb = next(limb for limb in api.limbs(obj) if limb.name == LEG)
    names = [*limb.chain, limb.extremity]
    length = chain_length(obj, limb.chain)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    bpy.context.scene.frame_set(30)
    handle["ik_fk"] = 1.0
    handle.location.y -= 0.05 * length  # into soft IK's easing, near full reach
    obj.update_tag()
    shown = evaluate(obj)
    obj.scale = scale
    obj.update_tag()
    moved, turned = _off(shown, evaluate(obj), names, length)
    assert moved < 1e-5 and turned < 1e-3, (moved, turned)
    handle["ik_fk"] = 0.0
    obj.update_tag()
    fk = evaluate(obj)
    api.snap_limb(obj, LEG, "IK")
    moved, turned = _off(fk, evaluate(obj), names, length)
    assert moved < 2e-5 and turned < 0.01, (moved, turned)


def test_a_limb_built_before_is_put_right_by_a_rebuild():
    """A limb built by an earlier release read the world distance over the world scale (``D/w``, then
    ``D/abs(w)``); a rebuild measures it in the armature's space, reading no scale."""
    obj = import_mocap()
    api.auto_rig(obj, soft_ik=0.1, animation="IGNORE")
    path = 'pose.bones["mixamorig:LeftFoot_IK_soft"].constraints["IK Rigger Soft"].distance'
    now = obj.animation_data.drivers.find(path).driver.expression
    obj.animation_data.drivers.find(path).driver.expression = now.replace("D", "D/w")  # as earlier releases built it
    api.build(obj, LEG)
    soft = obj.animation_data.drivers.find(path).driver
    assert soft.expression == now and "w" not in soft.variables and soft.is_simple_expression
