"""Make a small rigged character with an earlier IK Rigger, for the tests of files it saved.

Run with a Blender's Python (the PyPI ``bpy`` module), naming a checkout of the release to rig with
and where to write:

    python tests/make_rigged_by.py CHECKOUT OUT_STEM

It imports ``ik_rigger`` from CHECKOUT, builds "Hero" (a two-legged, two-armed armature whose bones run
joint to joint, with a few-vertex skinned mesh and a keyed clip), "Robot" (the same body with its tails
turned off their next joints, as importers leave them, so a release with hidden chains rigs it on them)
and "Runner"; rigs Hero with every option set of ``LIMBS`` and Runner with ``RUNNER_LIMBS`` that the
release knows (the others dropped and listed), auto-rigs Robot, and writes OUT_STEM.blend and
OUT_STEM.poses.json: the evaluated pose, in armature space, of every bone the character had before
rigging at ``FRAMES`` (``poses``; ``before``: what it played before rigging), and the options each
limb was built with.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import sys
from pathlib import Path

FRAMES = [1, 4, 8, 12]
# Each limb's options, by its last bone: together they hold every option the option matrix varies
# (soft IK, stretch, Foot Roll, Hinge Joints, pole lines, parent switching, Follow Handle Rotation, a
# chain of 3, each clone mode, a distance limit, a manual pole angle), with the motion kept (the default
# animation handling) and an aim on the head.
LIMBS = {
    "shin.L": {"foot_roll": True, "max_stretch": 2.0, "soft_ik": 0.15, "parent_switch": True,
               "pole_parent": "HANDLE"},
    "shin.R": {"hinge_joints": True, "pole_line": False, "max_stretch": 1.0, "copy_mode": "TRANSFORMS",
               "handle_parent_mode": "NONE"},
    "forearm.L": {"use_rotation": True, "distance_limit": "INSIDE", "distance_radius": 0.9,
                  "copy_mode": "ROTATION_SCALE"},
    "forearm.R": {"chain_length": 3, "pole_angle_auto": False, "pole_angle": 0.5, "soft_ik": 0.25,
                  "pole_distance": 1.0},
}

# "Runner": Blender's iTaSC solver (which the iTaSC distance limit sets for the whole armature) and the
# motion played in FK or left alone.
RUNNER_LIMBS = {
    "forearm.L": {"distance_limit": "OUTSIDE", "distance_radius": 0.2, "distance_method": "ITASC"},
    "shin.L": {"animation": "FK"},
    "shin.R": {"animation": "IGNORE", "pole_parent": "HANDLE"},
}

BONES = [  # name, head, tail, parent
    ("root", (0, 0, 0), (0, 0.3, 0), None),
    ("hips", (0, 0, 1.0), (0, 0, 1.15), "root"),
    ("spine", (0, 0, 1.15), (0, 0, 1.4), "hips"),
    ("chest", (0, 0, 1.4), (0, 0, 1.6), "spine"),
    ("neck", (0, 0, 1.6), (0, 0, 1.7), "chest"),
    ("head", (0, 0, 1.7), (0, 0, 1.9), "neck"),
]
for _side, _x in (("L", 1), ("R", -1)):
    BONES += [
        (f"thigh.{_side}", (0.1 * _x, 0, 1.0), (0.1 * _x, -0.02, 0.55), "hips"),
        (f"shin.{_side}", (0.1 * _x, -0.02, 0.55), (0.1 * _x, 0.02, 0.1), f"thigh.{_side}"),
        (f"foot.{_side}", (0.1 * _x, 0.02, 0.1), (0.1 * _x, -0.12, 0.02), f"shin.{_side}"),
        (f"toe.{_side}", (0.1 * _x, -0.12, 0.02), (0.1 * _x, -0.2, 0.02), f"foot.{_side}"),
        (f"shoulder.{_side}", (0.03 * _x, 0, 1.55), (0.18 * _x, 0, 1.55), "chest"),
        (f"upper_arm.{_side}", (0.18 * _x, 0, 1.55), (0.45 * _x, 0.03, 1.55), f"shoulder.{_side}"),
        (f"forearm.{_side}", (0.45 * _x, 0.03, 1.55), (0.7 * _x, 0, 1.55), f"upper_arm.{_side}"),
        (f"hand.{_side}", (0.7 * _x, 0, 1.55), (0.8 * _x, 0, 1.55), f"forearm.{_side}"),
    ]
# The clip: per bone, (axis, angle in radians) at each of FRAMES' ends and middle.
MOTION = {
    "thigh.L": ("X", (0.0, 0.5, -0.3)), "shin.L": ("X", (0.0, -0.6, -0.2)),
    "thigh.R": ("X", (0.0, -0.3, 0.4)), "shin.R": ("X", (-0.1, -0.3, -0.7)),
    "upper_arm.L": ("Y", (0.0, 0.4, 0.8)), "forearm.L": ("Z", (0.0, 0.5, 0.2)),
    "upper_arm.R": ("Y", (0.0, -0.5, 0.3)), "forearm.R": ("Z", (0.0, -0.4, -0.8)),
    "head": ("Z", (0.0, 0.3, -0.3)), "spine": ("X", (0.0, 0.1, 0.05)),
}


def armature(bpy, name: str, tails_off: bool):
    from mathutils import Matrix, Vector

    rng = random.Random(7)
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    if tails_off:
        obj.location = (2.0, 0.0, 0.0)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    for bone_name, head, tail, parent in BONES:
        bone = data.edit_bones.new(bone_name)
        bone.head, bone.tail = Vector(head), Vector(tail)
        if tails_off and bone_name.split(".")[0] in {"thigh", "shin", "upper_arm", "forearm", "foot", "hand"}:
            turn = Matrix.Rotation(rng.uniform(0.6, 1.6), 3, Vector([rng.uniform(-1, 1) for _ in range(3)]))
            bone.tail = bone.head + turn @ (bone.tail - bone.head) * rng.uniform(0.4, 1.2)
            bone.roll = rng.uniform(-math.pi, math.pi)
        if parent:
            bone.parent = data.edit_bones[parent]
            bone.use_connect = not tails_off and (bone.parent.tail - bone.head).length < 1e-6
    bpy.ops.object.mode_set(mode="OBJECT")
    _skin(bpy, obj)
    _key(bpy, obj)
    return obj


def _skin(bpy, obj) -> None:
    """A mesh of one triangle along each bone (its head, its tail and a point beside its head), weighted to it."""
    points, groups, faces = [], [], []
    for bone in obj.data.bones:
        faces.append((len(points), len(points) + 1, len(points) + 2))
        for point in (bone.head_local, bone.tail_local, bone.head_local + bone.z_axis * 0.02):
            points.append(tuple(point))
            groups.append(bone.name)
    mesh = bpy.data.meshes.new(f"{obj.name} Body")
    mesh.from_pydata(points, [], faces)
    body = bpy.data.objects.new(f"{obj.name} Body", mesh)
    bpy.context.scene.collection.objects.link(body)
    body.parent = obj
    body.matrix_parent_inverse = obj.matrix_world.inverted()
    for index, name in enumerate(groups):
        group = body.vertex_groups.get(name) or body.vertex_groups.new(name=name)
        group.add([index], 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = obj


def _key(bpy, obj) -> None:
    from mathutils import Quaternion, Vector

    axes = {"X": Vector((1, 0, 0)), "Y": Vector((0, 1, 0)), "Z": Vector((0, 0, 1))}
    frames = (FRAMES[0], (FRAMES[0] + FRAMES[-1]) // 2, FRAMES[-1])
    for name, (axis, angles) in MOTION.items():
        pose_bone = obj.pose.bones[name]
        for frame, angle in zip(frames, angles, strict=True):
            pose_bone.rotation_quaternion = Quaternion(axes[axis], angle)
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
    hips = obj.pose.bones["hips"]
    for frame, height in zip(frames, (0.0, -0.08, 0.03), strict=True):
        hips.location = (0.0, height, 0.0)
        hips.keyframe_insert("location", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = FRAMES[0], FRAMES[-1]


def _known(checkout_options) -> set[str]:
    return {field.name for field in dataclasses.fields(checkout_options)}


def _poses(bpy, obj, names: list[str]) -> dict[str, dict[str, list]]:
    shown = {}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        bpy.context.view_layer.update()
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        shown[str(frame)] = {name: _rows(evaluated.pose.bones[name].matrix) for name in names}
    return shown


def _rows(matrix) -> list[list[float]]:
    return [[round(value, 7) for value in row] for row in matrix]


def _rest(obj) -> dict[str, list]:
    """Each bone's rest as the user made it: matrix, length, parent, connected, deforming."""
    return {bone.name: [_rows(bone.matrix_local), round(bone.length, 7), bone.parent.name if bone.parent else None,
                        bone.use_connect, bone.use_deform] for bone in obj.data.bones}


def main(checkout: Path, out: Path) -> None:
    sys.path.insert(0, str(checkout))
    import bpy

    import ik_rigger
    from ik_rigger import api

    try:
        from ik_rigger.limb.options import LimbOptions
    except ImportError:  # 0.2.0 kept them in core
        from ik_rigger.core.options import LimbOptions  # type: ignore[no-redef]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ik_rigger.register()
    known = _known(LimbOptions)
    result: dict[str, object] = {"blender": bpy.app.version_string, "frames": FRAMES, "limbs": {}, "dropped": {},
                                 "poses": {}, "auto_rig": {}, "made_by": checkout.name}
    hero = armature(bpy, "Hero", tails_off=False)
    robot = armature(bpy, "Robot", tails_off=True)
    runner = armature(bpy, "Runner", tails_off=False)
    runner.location = (-2.0, 0.0, 0.0)
    everyone = (hero, robot, runner)
    originals = {obj.name: [bone.name for bone in obj.data.bones] for obj in everyone}
    result["rest"] = {obj.name: _rest(obj) for obj in everyone}
    result["before"] = {obj.name: _poses(bpy, obj, originals[obj.name]) for obj in everyone}
    for obj, limbs, key in ((hero, LIMBS, "limbs"), (runner, RUNNER_LIMBS, "runner_limbs")):
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="POSE")
        result.setdefault(key, {})
        for last, wanted in limbs.items():
            given = {name: value for name, value in wanted.items() if name in known}
            result["dropped"][f"{obj.name} {last}"] = sorted(set(wanted) - set(given))  # type: ignore[index]
            api.build(obj, last, **given)
            result[key][last] = given  # type: ignore[index]
        if obj is hero:
            api.add_aim(hero, "HEAD")
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.objects.active = robot
    bpy.ops.object.mode_set(mode="POSE")
    try:
        result["auto_rig"] = {"Robot": [limb.name for limb in api.auto_rig(robot)]}
    except Exception as error:  # noqa: BLE001 - an earlier release may refuse; say so in the record
        result["auto_rig"] = {"Robot": f"refused: {error}"}
    bpy.ops.object.mode_set(mode="OBJECT")
    for obj in everyone:
        result["poses"][obj.name] = _poses(bpy, obj, originals[obj.name])  # type: ignore[index]
    bpy.context.scene.frame_set(FRAMES[0])
    bpy.ops.wm.save_as_mainfile(filepath=str(out.with_suffix(".blend")), compress=True)
    out.with_suffix(".poses.json").write_text(json.dumps(result, indent=None, separators=(",", ":")) + "\n")
    print("MADE", out, result["auto_rig"], result["dropped"])


if __name__ == "__main__":
    main(Path(sys.argv[-2]).resolve(), Path(sys.argv[-1]).resolve())
