"""A limb skipped because the importer left its bones off their joints says which importer setting gives them
tails on their joints, by the name the importer's panel shows (it said 'the importer's bone shape setting',
which no glTF or FBX importer panel has)."""

from __future__ import annotations

import bpy
from helpers import DATA

from ik_rigger import api


def test_the_skipped_arms_of_robot_expressive_name_the_importers_setting():
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_robot_expressive.glb"))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    # The glTF importer's own label for the setting the hint names (Blender 4.2 to 5.2).
    assert bpy.ops.import_scene.gltf.get_rna_type().properties["bone_heuristic"].name == "Bone Dir"
    assert "Temperance" in bpy.ops.import_scene.gltf.get_rna_type().properties["bone_heuristic"].enum_items[
        "TEMPERANCE"].name
    assert bpy.ops.import_scene.fbx.get_rna_type().properties["automatic_bone_orientation"].name == \
        "Automatic Bone Orientation"
    skipped: list[tuple[str, str]] = []
    api.auto_rig(obj, skipped=skipped)
    reasons = [reason for bone, reason in skipped if bone.startswith("LowerArm")]
    assert len(reasons) == 2, skipped
    for reason in reasons:
        assert "import a glTF with Bone Dir set to Temperance, an FBX with Automatic Bone Orientation" in reason
