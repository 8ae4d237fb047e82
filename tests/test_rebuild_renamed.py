"""A chain bone renamed and recoloured by hand is still the limb's: known by its place in the chain and its
rest (it runs to the next chain bone's head), it is rebuilt and removed as the bone it was. Where its rest
moved too, it cannot be told from the bone above a deleted one: refused, naming both, changing nothing."""

from __future__ import annotations

import bpy
import pytest
from helpers import evaluate, same, snapshot
from mathutils import Matrix, Vector
from test_rebuild_gone import _rigged

from ik_rigger import api


def _recolour(obj: bpy.types.Object, bone: str, palette: str) -> None:
    obj.pose.bones[bone].color.palette = palette


def _reaches(obj: bpy.types.Object, limb: api.Limb) -> None:
    """The handle moved, the foot goes with it and the knee bends toward the pole: the limb plays."""
    handle = limb.bones["HANDLE"]
    rested = evaluate(obj)
    obj.pose.bones[handle].matrix = Matrix.Translation((0.0, -0.1, 0.2)) @ rested[handle]
    posed = evaluate(obj)
    length = sum(obj.data.bones[name].length for name in limb.chain)
    end = posed[limb.chain[-1]] @ Vector((0.0, obj.data.bones[limb.chain[-1]].length, 0.0))
    assert (end - posed[handle].translation).length < 1e-4 * length
    assert (posed[limb.chain[0]].translation - rested[limb.chain[0]].translation).length < 1e-6 * length
    assert (posed[limb.chain[1]].translation - rested[limb.chain[1]].translation).length > 0.02 * length
    obj.pose.bones[handle].matrix_basis = Matrix.Identity(4)


@pytest.mark.parametrize("palette", ["DEFAULT", "THEME05"])
def test_a_renamed_and_recoloured_chain_bone_is_rebuilt_as_the_limb_s(palette):
    obj = _rigged(rename=("thigh.L", "upper_leg.L"), keyed=False)
    _recolour(obj, "upper_leg.L", palette)
    rebuilt = api.build(obj, "shin.L", pole_distance=0.75)[0]
    assert rebuilt.chain == ("upper_leg.L", "shin.L")
    assert api.limbs(obj)[0].chain == ("upper_leg.L", "shin.L")
    assert obj.ik_rigger.limbs[0].pole_distance == 0.75
    assert obj.pose.bones["hips"].color.palette == "DEFAULT"
    _reaches(obj, rebuilt)


def test_a_renamed_and_recoloured_chain_bone_is_removed_with_its_limb():
    bare = _rigged(rename=("thigh.L", "upper_leg.L"), rig=False, name="Bare", keyed=False)
    bpy.ops.object.mode_set(mode="OBJECT")
    obj = _rigged(rename=("thigh.L", "upper_leg.L"), keyed=False)
    _recolour(obj, "upper_leg.L", "DEFAULT")
    obj.pose.bones["hips"].rotation_euler = (0.3, 0.0, 0.0)
    bare.pose.bones["hips"].rotation_euler = (0.3, 0.0, 0.0)
    messages = api.remove(obj, "shin.L")
    assert not any("gone" in message for message in messages), messages
    assert len(obj.ik_rigger.limbs) == 0
    assert not any(bone.name not in bare.data.bones for bone in obj.data.bones)
    played, plain = evaluate(obj), evaluate(bare)
    for name in ("hips", "upper_leg.L", "shin.L", "foot.L"):
        assert same(played[name], plain[name], 1e-6), name
    assert not obj.pose.bones["upper_leg.L"].constraints and not obj.pose.bones["shin.L"].constraints


def test_renamed_recoloured_and_moved_is_refused_naming_both():
    """Its tail moved off the knee, the renamed thigh stands where the thigh stood but could as well be
    the bone above a deleted thigh: refused, naming the thigh and the bone, saying how to go on."""
    obj = _rigged(rename=("thigh.L", "upper_leg.L"), keyed=False)
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    edit_bones["shin.L"].use_connect = False
    edit_bones["upper_leg.L"].tail = (0.2, -0.05, 0.6)
    bpy.ops.object.mode_set(mode="POSE")
    _recolour(obj, "upper_leg.L", "DEFAULT")
    before = snapshot(obj)
    with pytest.raises(api.RigError) as refused:
        api.build(obj, "shin.L")
    assert refused.value.bone == "thigh.L"
    assert "or renamed to 'upper_leg.L', recoloured and moved, which cannot be told" in str(refused.value)
    assert "If 'upper_leg.L' is 'thigh.L' renamed, give it back the chain bones' colour" in refused.value.hint
    assert "Remove IK Limb" in refused.value.hint
    assert same(snapshot(obj), before)
    # As the hint says: given the chain's colour back, it is the limb's again.
    _recolour(obj, "upper_leg.L", "THEME01")
    assert api.build(obj, "shin.L")[0].chain == ("upper_leg.L", "shin.L")
