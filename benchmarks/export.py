"""Export speed: a four-limb rig with a 455-frame clip written to .glb, against a plain script.

The rig is the bake section's (the project's Mixamo capture playing 455 frames, its four
limbs rigged, the motion left on its bones). Within each repeat, on that same rig:

- IK Rigger's export (``api.export``): each clip played alone and read once per frame, the
  keys written in bulk onto a bare copy in a scene of its own, glTF's exporter, all removed;
- the plain script a user would write: a copy of the armature in the scene, Blender's own
  bake (``nla.bake`` of the deform bones with visual keying, clearing the constraints)
  frame by frame into it,
  the bones that do not deform deleted in Edit mode, glTF's exporter on the copy alone,
  then the copy, its armature and its action deleted.

Both write the same file (deform bones only, every frame sampled); the script leaves the
user's frame and selection changed, which the export does not. Target: the export at most
2 times the script.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import bpy

from benchmarks import bake, common

TARGET = 2.0


def _export(obj: bpy.types.Object, path: Path) -> None:
    from ik_rigger import api

    with common.quiet():
        api.export(obj, str(path))


def _plain_script(obj: bpy.types.Object, path: Path) -> None:
    scene = bpy.context.scene
    view_layer = bpy.context.view_layer
    copy = obj.copy()
    copy.data = obj.data.copy()
    copy.animation_data_clear()
    scene.collection.objects.link(copy)
    for other in view_layer.objects:
        other.select_set(False)
    copy.select_set(True)
    view_layer.objects.active = copy
    with common.quiet():
        bpy.ops.object.mode_set(mode="POSE")
        for pose_bone in copy.pose.bones:  # the deform bones alone are baked
            owner = pose_bone if hasattr(pose_bone, "select") else pose_bone.bone
            owner.select = pose_bone.bone.use_deform
        bpy.ops.nla.bake(frame_start=1, frame_end=bake.FRAMES, only_selected=True, visual_keying=True,
                         clear_constraints=True, use_current_action=False, bake_types={"POSE"})
        bpy.ops.object.mode_set(mode="EDIT")
        for bone in list(copy.data.edit_bones):
            if not bone.use_deform:
                copy.data.edit_bones.remove(bone)
        bpy.ops.object.mode_set(mode="OBJECT")
        bpy.ops.export_scene.gltf(filepath=str(path), export_format="GLB", use_selection=True,
                                  export_def_bones=True, export_animation_mode="ACTIONS",
                                  export_force_sampling=True, export_optimize_animation_size=False)
    action = copy.animation_data.action
    data = copy.data
    bpy.data.objects.remove(copy)
    bpy.data.armatures.remove(data)
    bpy.data.actions.remove(action)


def run(settings: common.Settings) -> dict[str, object]:
    exported, plain = [], []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(max(settings.eval_repeats // 2, 2)):
            rig = bake._rigged_capture()
            exported.append(common.timed(lambda rig=rig: _export(rig, Path(folder) / "export.glb")))
            rig = bake._rigged_capture()
            plain.append(common.timed(lambda rig=rig: _plain_script(rig, Path(folder) / "plain.glb")))
    return {
        "frames": bake.FRAMES,
        "limbs": len(bake.LIMBS),
        "export": common.Stats.of(exported).as_dict(),
        "plain_script": common.Stats.of(plain).as_dict(),
        "export_over_plain": common.paired_ratios(exported, plain).as_dict(),
        "targets": {"export_over_plain": TARGET},
    }


if __name__ == "__main__":
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    print(json.dumps(run(common.QUICK), indent=2))
