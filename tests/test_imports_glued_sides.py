"""Sides glued after the name as one capital ("ThighL > CalfL > FootL", "UpperArmR"), as hand-built
game skeletons and some exporters write them: found when the other side's name is there too, through
Blender's FBX importer at its defaults and rigged by Auto-Rig; a name that ends in a capital with no
other side beside it keeps no side."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from helpers import at_rest_alone, make_armature, through_fbx
from test_detect import expected, family, human, make_skeleton, summary

from ik_rigger import api
from ik_rigger.core import naming
from ik_rigger.core.detect import detect_limbs

GLUED = family("Thigh{L}", "Calf{L}", "Foot{L}", "Toe{L}", "Clavicle{L}", "UpperArm{L}", "ForeArm{L}", "Hand{L}",
               "Finger{L}")


@pytest.mark.parametrize("twists", [False, True])
def test_both_legs_and_arms_are_found(twists):
    assert summary(detect_limbs(make_skeleton(human(GLUED, twists=twists)))) == expected(GLUED)


def test_a_capital_at_the_end_is_a_side_only_beside_the_other_side():
    assert naming.split_side("ThighL", {"ThighL", "ThighR"}).side == "L"
    assert naming.split_side("UpperArmR", {"UpperArmL", "UpperArmR"}).side == "R"
    assert naming.split_side("ThighL", {"ThighL", "ThighR"}).flipped() == "ThighR"
    # Alone, the capital is the name's own: a bone of the middle, a point of a tool.
    assert naming.split_side("ThighL").side is None
    assert naming.split_side("SpineR", {"SpineR"}).side is None
    # Glued sides before a limb word still read as before.
    assert naming.split_side("lThigh").side == "L" and naming.split_side("LThigh").side == "L"


def _fbx_imported(folder: Path) -> bpy.types.Object:
    made = make_armature([(name, head, tail, parent, False) for name, parent, head, tail in human(GLUED, twists=True)],
                         name="Glued", mode="OBJECT")
    obj = through_fbx(made, folder, leaf_bones=True)  # the exporter's defaults
    at_rest_alone(obj)
    return obj


def test_a_skeleton_through_fbx_is_auto_rigged_both_sides(tmp_path):
    obj = _fbx_imported(tmp_path)
    bpy.ops.object.mode_set(mode="POSE")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    limbs = {limb.name: (limb.side, limb.chain, limb.extremity) for limb in api.limbs(obj)}
    assert limbs == {chain[-1]: (side, chain, end) for _kind, side, chain, end in expected(GLUED)}
    # The made bones are named for their side as the user's are.
    handles = {limb.name: limb.bones["HANDLE"] for limb in api.limbs(obj)}
    assert all(handle.endswith(name[-1]) for name, handle in handles.items()), handles
