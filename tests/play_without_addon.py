"""Play a rigged .blend in a Blender where IK Rigger is not installed; print what it shows.

Run as its own process (``python tests/play_without_addon.py FILE [FRAME ...] [--move BONE]
[--also FILE ...]``) by tests that prove a rig is self-contained: it checks that IK Rigger cannot
be imported, opens the file, evaluates each frame and prints one JSON object: the armature-space
pose matrix of every bone of every armature per frame, the drivers that are not valid, and,
with ``--move``, the pose after moving that bone 10% of the armature's size. Each ``--also``
file is opened and printed the same after it, one line each, in one Blender.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys

import bpy


def poses(obj: bpy.types.Object) -> dict[str, list[list[float]]]:
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {bone.name: [list(row) for row in bone.matrix] for bone in evaluated.pose.bones}


def main() -> None:
    arguments = argparse.ArgumentParser()
    arguments.add_argument("file")
    arguments.add_argument("frames", nargs="*", type=int)
    arguments.add_argument("--move", default="")
    arguments.add_argument("--also", action="append", default=[])
    options = arguments.parse_args()
    for path in (options.file, *options.also):
        if importlib.util.find_spec("ik_rigger") is not None or "ik_rigger" in bpy.context.preferences.addons.keys():
            sys.exit("IK Rigger is importable here: this check needs a Blender without it")
        play(path, options)


def play(path: str, options: argparse.Namespace) -> None:
    bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
    armatures = [obj for obj in bpy.data.objects if obj.type == "ARMATURE"]
    result: dict = {"frames": {}, "invalid_drivers": [], "addons": sorted(bpy.context.preferences.addons.keys())}
    for frame in options.frames:
        bpy.context.scene.frame_set(frame)
        result["frames"][str(frame)] = {obj.name: poses(obj) for obj in armatures}
    for obj in bpy.data.objects:
        data = obj.animation_data
        for curve in data.drivers if data is not None else ():
            if not curve.driver.is_valid or not all(map(_resolves, curve.driver.variables)):
                result["invalid_drivers"].append(f"{obj.name}: {curve.data_path}")
    if options.move:
        obj = next(obj for obj in armatures if options.move in obj.pose.bones)
        before = poses(obj)
        size = max(obj.dimensions) / max(max(obj.scale), 1e-9)
        obj.pose.bones[options.move].matrix = _moved(obj.pose.bones[options.move].matrix, 0.1 * size)
        bpy.context.view_layer.update()
        result["moved"] = {"before": before, "after": poses(obj)}
    print("RESULT " + json.dumps(result))


def _resolves(variable) -> bool:
    """True when every target of a driver variable reads something that exists."""
    for target in variable.targets:
        if target.id is None:
            return False
        if variable.type != "SINGLE_PROP":  # a distance or a transform reads a bone (or the object), no path
            if target.bone_target and target.bone_target not in getattr(target.id, "pose", target.id).bones:
                return False
            continue
        try:
            target.id.path_resolve(target.data_path)
        except ValueError:
            return False
    return True


def _moved(matrix, distance: float):
    moved = matrix.copy()
    moved.translation.z += distance
    moved.translation.y -= distance
    return moved


if __name__ == "__main__":
    main()
