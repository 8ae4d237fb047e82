"""Far from the world's origin for its size, Blender's IK misses its handle (it solves in single precision
from world-space matrices): the build warns, naming the armature, where the miss may pass 0.1% of the
chain, and never on an ordinary character."""

from __future__ import annotations

import bpy
import pytest
from helpers import evaluate, import_bvh, leg_bones, make_armature
from mathutils import Matrix, Vector
from test_detect_real import import_gltf

from ik_rigger import api


def _leg(size: float = 1.0) -> bpy.types.Object:
    """The test leg, its bones ``size`` times as large (a scale applied is a size of the bones)."""
    bones = [(name, tuple(size * value for value in head), tuple(size * value for value in tail), parent, connected)
             for name, head, tail, parent, connected in leg_bones()]
    return make_armature(bones)


def _miss(obj: bpy.types.Object, limb: api.Limb) -> float:
    """The worst distance from the chain's end to the handle over four poses in reach, a share of the chain."""
    handle, chain = limb.bones["HANDLE"], limb.chain
    length = sum(obj.data.bones[name].length for name in chain)
    rested = evaluate(obj)
    worst = 0.0
    for step in range(4):
        moved = Vector((0.03 * step, -0.1 - 0.02 * step, 0.15 + 0.03 * step)) * (length / 0.9055)
        obj.pose.bones[handle].matrix = Matrix.Translation(moved) @ rested[handle]
        posed = evaluate(obj)
        end = posed[chain[-1]] @ Vector((0.0, obj.data.bones[chain[-1]].length, 0.0))
        worst = max(worst, (end - posed[handle].translation).length / length)
    obj.pose.bones[handle].matrix_basis = Matrix.Identity(4)
    return worst


def _far_warnings(limb: api.Limb) -> list[str]:
    return [note for note in limb.notes if "from the world's origin" in note]


@pytest.mark.parametrize(("size", "scale"), [(1.0, 0.01), (0.01, 1.0)])
def test_a_small_leg_far_from_the_origin_is_warned_of(size: float, scale: float) -> None:
    """A leg of 9 mm in the world 10,000 units out: object scale 0.01, or that scale applied (the same
    leg in the world), which changes nothing. Its IK misses by more than 0.1% of the chain, as warned."""
    obj = _leg(size)
    obj.location = (10000.0, 0.0, 0.0)
    obj.scale = (scale,) * 3
    limb = api.build(obj, "shin.L", max_stretch=1.0)[0]
    (warned,) = _far_warnings(limb)
    assert api.is_warning(warned)
    assert warned.startswith("the armature 'Rig' has its chain 'thigh.L' > 'shin.L' 1e+04 units from the world's "
                             "origin")
    assert "move the character nearer the world's origin" in warned
    assert _miss(obj, limb) > 1e-3


@pytest.mark.parametrize(("far", "scale"), [(0.0, 0.01), (100.0, 1.0), (2000.0, 1.0), (20.0, 0.01)])
def test_an_ordinary_placing_is_not_warned_of_and_its_ik_reaches(far: float, scale: float) -> None:
    obj = _leg()
    obj.location = (far * 0.8, far * 0.6, 0.0)
    obj.scale = (scale,) * 3
    limb = api.build(obj, "shin.L", max_stretch=1.0)[0]
    assert not _far_warnings(limb)
    assert _miss(obj, limb) < 1e-3


def test_real_characters_are_not_warned_of() -> None:
    """A motion capture in centimetres and a glTF character as their importers leave them, and the capture
    a kilometre out."""
    capture = import_bvh("mixamo_freebvh.bvh")
    notes = [note for limb in api.auto_rig(capture, animation="IGNORE") for note in limb.notes]
    capture.location = (100000.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    notes += [note for limb in api.limbs(capture) for note in api.build(capture, limb.name)[0].notes]
    fox = import_gltf("gltf_fox.glb")
    notes += [note for limb in api.auto_rig(fox, animation="IGNORE") for note in limb.notes]
    assert not [note for note in notes if "from the world's origin" in note]
