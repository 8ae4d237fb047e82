"""A rig Rigify generates from its human metarig, sent through Blender's own FBX exporter and importer at their
defaults: every bone kept (ORG-, DEF-, MCH- and controls), none of the constraints and drivers that moved them.
Its DEF- legs and arms, the bones the mesh deforms with, are rigged; the live rig is still refused."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from helpers import rest, rigify_generated, through_fbx
from test_detect_real import assert_handles_move_chain_ends

from ik_rigger import api
from ik_rigger.core.detect import detect_limbs
from ik_rigger.core.errors import RigError
from ik_rigger.rig.skeleton import read_skeleton

# Each limb by its last bone, Rigify's segments each cut in two: thigh, thigh.001, shin, shin.001.
LIMBS = {f"DEF-{bone}.{side}.001": 4 for bone in ("shin", "forearm") for side in "LR"}
ENDS = {f"DEF-{bone}.{side}.001": f"DEF-{end}.{side}" for bone, end in (("shin", "foot"), ("forearm", "hand"))
        for side in "LR"}


@pytest.fixture(scope="module")
def rigify_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rigify_generated(tmp_path_factory.mktemp("rigify") / "human.blend", "armature_human_metarig_add")


def generated_rig(path: Path) -> bpy.types.Object:
    """The rig Rigify generated from its human metarig (``rigify_generated``), without the metarig, in the scene,
    active and selected alone."""
    with bpy.data.libraries.load(str(path)) as (_source, target):
        target.objects = ["rig"]
    rig = target.objects[0]
    bpy.context.scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    for other in bpy.context.view_layer.objects:
        other.select_set(other == rig)
    return rig


def test_a_generated_rig_through_fbx_is_rigged_on_its_deform_legs_and_arms(tmp_path, rigify_file):
    rig = generated_rig(rigify_file)
    # Live, its DEF- bones follow its own controls: refused as a generated rig, the rig left as it was.
    skipped: list[tuple[str, str]] = []
    with pytest.raises(RigError, match="is a generated rig"):
        api.auto_rig(rig, skipped=skipped)
    why = dict(skipped)
    assert {"DEF-shin.L", "ORG-shin.L", "DEF-forearm.R", "ORG-forearm.R"} <= set(why)
    assert all("rig the metarig instead" in reason for reason in why.values())
    assert api.limbs(rig) == []

    obj = through_fbx(rig, tmp_path, leaf_bones=True)  # the exporter's default: a leaf bone below each end
    assert not any(bone.constraints for bone in obj.pose.bones) and obj.animation_data is None
    bpy.context.view_layer.objects.active = obj
    before = rest(obj)
    found = detect_limbs(read_skeleton(obj))
    skipped.clear()
    built = api.auto_rig(obj, skipped=skipped)
    assert {limb.name: limb.extremity for limb in built} == ENDS
    why = dict(skipped)
    assert {"ORG-shin.L", "ORG-shin.R", "ORG-forearm.L", "ORG-forearm.R"} <= set(why)
    assert all("DEF- chain is rigged" in why[bone] for bone in why if bone.startswith(("ORG-", "MCH-")))
    assert not any(bone.startswith("DEF-") for bone in why)
    after = rest(obj)
    scale = obj.data.bones["DEF-thigh.L"].length
    for name, matrix in before.items():  # the rest pose unchanged, IK Rigger's bones added beside it
        assert max(abs(a - b) for row_a, row_b in zip(matrix, after[name]) for a, b in zip(row_a, row_b)) \
            < 1e-4 * scale, name
    assert_handles_move_chain_ends(obj, LIMBS)
    # Rigged, its DEF- bones hold IK Rigger's own constraints, which make it no live generated rig: the same limbs
    # are found again (a limb removed and built again, the other side's by Both Sides, finds its foot or hand).
    assert detect_limbs(read_skeleton(obj)) == found
