"""Soft IK under an object scale that differs between the axes (a character squashed or stretched in Object
mode): the limb plays in the armature as it does unscaled, and Snap IK to FK lands. The SOFT distance's
driver measured the world distance and divided it by the armature's average scale, off by the ratio of the
axes along the handle's line (the Mixamo leg at 1:3:2 snapped 1.7e-4 of the chain off); it measures the
distance in the armature's own space now, with constraints and a simple expression only."""

from __future__ import annotations

import bpy
import pytest
from helpers import chain_length, evaluate
from test_bake import import_mocap
from test_sweep_soft_ik_mirrored import LEG, _off

from ik_rigger import api


@pytest.mark.parametrize("scale", [(1.0, 3.0, 2.0), (0.5, 1.0, 2.0), (-1.0, 2.0, 1.0)])
@pytest.mark.parametrize("max_stretch", [1.0, 1.5], ids=["no stretch", "stretch"])
def test_soft_ik_plays_and_snaps_the_same_under_a_scale_that_differs_between_axes(scale, max_stretch):
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
