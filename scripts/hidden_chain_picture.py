#!/usr/bin/env python3
"""Draw docs/hidden_chain.png: the glTF Fox at the importer's default bone shapes, rigged by Auto-Rig.

    python scripts/hidden_chain_picture.py OUT.png

The Fox's leg bones point wherever the file's joint axes did (red), so each leg is solved on a
hidden chain from joint to joint (yellow, shown for the picture: Blender hides it), which the
bones follow. The second row lifts the near hind leg's handle: the hidden chain bends, and the
Fox's own bones turn with it, as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
from mathutils import Matrix, Vector

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import rig_picture  # noqa: E402

import ik_rigger  # noqa: E402
from ik_rigger import api  # noqa: E402
from ik_rigger.rig import records  # noqa: E402

HIDDEN_CHAIN = "THEME09"  # yellow in the default theme


def main(output: str) -> None:
    ik_rigger.register()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(ROOT / "tests" / "data" / "gltf_fox.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    bpy.context.view_layer.objects.active = obj
    built = api.auto_rig(obj, animation="IGNORE")
    for limb in built:
        for name in records.resolve(obj, obj.ik_rigger.limb_of(limb.name)).solver:
            obj.data.bones[name].hide = False
            obj.pose.bones[name].color.palette = HIDDEN_CHAIN

    def lift_hind_leg() -> None:
        handle = obj.pose.bones[obj.ik_rigger.limb_of("b_RightFoot01_021").handle]
        bpy.context.view_layer.update()
        handle.matrix = Matrix.Translation(obj.matrix_world.inverted().to_3x3() @ Vector((0.0, -0.12, 0.12))) \
            @ handle.matrix
        bpy.context.view_layer.update()

    rig_picture.draw_rig(obj, output, posed=lift_hind_leg, title="The glTF Fox at the importer's default bone shapes",
                         legend=[(HIDDEN_CHAIN, "Hidden chain (IK solves here)")])


if __name__ == "__main__":
    main(sys.argv[-1])
