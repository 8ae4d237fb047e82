"""Blender's FBX importer on an exported file, in a fresh process: every take played.

    python fbx_reader.py FILE.fbx  ->  one JSON line: {"joints": [...], "rest": {bone: matrix},
    "clips": {take: [{bone: matrix}, ...]}}, world matrices as 16 values column by column,
    each take on every frame of its range (the importer names a take's action "Armature|take").
"""

from __future__ import annotations

import json
import math
import sys

import bpy


def _flat(matrix) -> list[float]:
    return [matrix[row][column] for column in range(4) for row in range(4)]


def _kind(action: bpy.types.Action) -> str:
    """The kind of datablock ``action`` animates (its slot's on Blender 4.4 and later; before, an action
    never assigned may tell none)."""
    slots = getattr(action, "slots", None)
    return slots[0].target_id_type if slots else action.id_root


def _disconnected(armature: bpy.types.Object) -> None:
    """Every bone free to move off its parent's tail. The importer connects a bone whose head lies on its
    parent's tail, and Blender then ignores the bone's keyed location, where the file moves it (a foot that
    copies an IK handle's transforms leaves the shin's end when the handle is out of reach); engines and
    assimp have no such link."""
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    for bone in armature.data.edit_bones:
        bone.use_connect = False
    bpy.ops.object.mode_set(mode="OBJECT")


def main(path: str) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.fbx(filepath=path, automatic_bone_orientation=False, ignore_leaf_bones=False)
    armature = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")
    _disconnected(armature)
    names = [bone.name for bone in armature.data.bones]
    out = {"joints": names, "rest": {bone.name: _flat(armature.matrix_world @ bone.matrix_local)
                                     for bone in armature.data.bones}, "clips": {}}
    scene = bpy.context.scene
    data = armature.animation_data
    for action in list(bpy.data.actions):
        if _kind(action) == "KEY":
            continue  # a take's shape-key values, which the importer keeps in an action of their own
        data.action = action
        if getattr(data, "action_slot", True) is None and action.slots:  # 4.4, 4.5 assign no slot of another name
            data.action_slot = action.slots[0]
        # The importer places a key at its time times the file's rate rounded (30 for NTSC's 29.97), and
        # sets the scene's base so that plays at the file's rate: a file's frame is that base apart.
        stretch = scene.render.fps_base
        first, last = action.frame_range
        frames = []
        for index in range(round((last - first) / stretch) + 1):
            frame = first + index * stretch
            scene.frame_set(math.floor(frame + 1e-6), subframe=max(0.0, frame - math.floor(frame + 1e-6)))
            evaluated = armature.evaluated_get(bpy.context.evaluated_depsgraph_get())
            frames.append({bone.name: _flat(evaluated.matrix_world @ bone.matrix) for bone in evaluated.pose.bones})
        out["clips"][action.name.partition("|")[2] or action.name] = frames
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[-1])
