"""Build skeletons and read evaluated poses for the tests."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import bpy
from mathutils import Matrix, Vector

DATA = Path(__file__).resolve().parent / "data"

# (name, head, tail, parent, connected)
BoneSpec = tuple[str, tuple[float, float, float], tuple[float, float, float], str | None, bool]


def make_armature(bones: Iterable[BoneSpec], name: str = "Rig", rolls: dict[str, float] | None = None,
                  mode: str = "POSE") -> bpy.types.Object:
    """An armature object in the scene, active, with ``bones``, left in ``mode``."""
    armature = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    for bone_name, head, tail, parent, connected in bones:
        bone = armature.edit_bones.new(bone_name)
        bone.head = head
        bone.tail = tail
        if rolls and bone_name in rolls:
            bone.roll = rolls[bone_name]
        if parent:
            bone.parent = armature.edit_bones[parent]
            bone.use_connect = connected
    bpy.ops.object.mode_set(mode=mode)
    return obj


def leg_bones(side: str = "L", x: float = 0.2, bend: float = 0.05) -> list[BoneSpec]:
    """A root > hips > thigh > shin > foot > toe leg; ``bend`` pushes the knee forward (-Y)."""
    return [
        ("root", (0, 0, 0), (0, 0.5, 0), None, False),
        ("hips", (0, 0, 1.0), (0, 0, 1.2), "root", False),
        (f"thigh.{side}", (x, 0, 1.0), (x, -bend, 0.55), "hips", False),
        (f"shin.{side}", (x, -bend, 0.55), (x, 0, 0.1), f"thigh.{side}", True),
        (f"foot.{side}", (x, 0, 0.1), (x, -0.2, 0.0), f"shin.{side}", True),
        (f"toe.{side}", (x, -0.2, 0.0), (x, -0.3, 0.0), f"foot.{side}", True),
    ]


def both_legs(bend: float = 0.05) -> list[BoneSpec]:
    left = leg_bones("L", 0.2, bend)
    right = leg_bones("R", -0.2, bend)[2:]
    return left + right


def set_active_bone(obj: bpy.types.Object, name: str) -> None:
    obj.data.bones.active = obj.data.bones[name]


def evaluate(obj: bpy.types.Object) -> dict[str, Matrix]:
    """Armature-space evaluated pose matrices of every bone after a depsgraph update."""
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {bone.name: bone.matrix.copy() for bone in evaluated.pose.bones}


def deforming(obj: bpy.types.Object, frames, bones=None) -> dict[int, dict[str, Matrix]]:
    """What moves the mesh on each of ``frames``: each bone's evaluated pose times its rest's inverse, in
    armature space, of the bones named in ``bones`` (all by default)."""
    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        shown[frame] = {name: matrix @ obj.data.bones[name].matrix_local.inverted()
                        for name, matrix in evaluate(obj).items() if bones is None or name in bones}
    return shown


def evaluate_world(obj: bpy.types.Object) -> dict[str, Matrix]:
    """World-space evaluated pose matrices of every bone after a depsgraph update."""
    world = obj.matrix_world
    return {name: world @ matrix for name, matrix in evaluate(obj).items()}


def rest(obj: bpy.types.Object) -> dict[str, Matrix]:
    """Armature-space rest matrices of every bone."""
    return {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}


def rotation_degrees(a: Matrix, b: Matrix) -> float:
    """Angle between the rotations of two matrices (scale removed), in degrees.

    Worked in Python's double precision from the axes: mathutils' single-precision
    quaternions read any turn below about 0.02 degree as none at all.
    """

    def axes(matrix: Matrix) -> list[list[float]]:
        columns = [[float(matrix[row][column]) for row in range(3)] for column in range(3)]
        return [[value / math.sqrt(sum(v * v for v in column)) for value in column] for column in columns]

    ca, cb = axes(a), axes(b)
    # r = a^T b: r[i][j] is column i of a dotted with column j of b.
    r = [[sum(ca[i][k] * cb[j][k] for k in range(3)) for j in range(3)] for i in range(3)]
    sine = math.sqrt((r[2][1] - r[1][2]) ** 2 + (r[0][2] - r[2][0]) ** 2 + (r[1][0] - r[0][1]) ** 2) / 2.0
    cosine = (r[0][0] + r[1][1] + r[2][2] - 1.0) / 2.0
    return math.degrees(math.atan2(sine, cosine))


def tail(matrix: Matrix, length: float) -> Vector:
    """World tail of a bone with world pose ``matrix`` and rest ``length``."""
    return matrix @ Vector((0.0, length, 0.0))


def import_bvh(filename: str) -> bpy.types.Object:
    """Import one of the real skeletons in tests/data; the armature is active, in Object mode."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / filename))
    obj = bpy.context.active_object
    bpy.context.scene.frame_set(0)
    obj.animation_data_clear()
    for bone in obj.pose.bones:
        bone.location = (0.0, 0.0, 0.0)
        bone.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        bone.rotation_euler = (0.0, 0.0, 0.0)
    return obj


def snapshot(obj: bpy.types.Object) -> dict:
    """Everything of ``obj``'s armature a user would notice changing; compare with ``same``."""

    def rounded(values: Iterable[float]) -> tuple[float, ...]:
        return tuple(values)

    bones = {}
    for bone in obj.data.bones:
        bones[bone.name] = (
            rounded(bone.head_local), rounded(bone.tail_local), rounded(v for row in bone.matrix_local for v in row),
            bone.parent.name if bone.parent else None, bone.use_connect, bone.use_deform,
            tuple(sorted(c.name for c in bone.collections)), bone.color.palette,
        )
    pose = {}
    for pose_bone in obj.pose.bones:
        pose[pose_bone.name] = (
            tuple((c.name, c.type) for c in pose_bone.constraints), pose_bone.color.palette,
            rounded(pose_bone.location), rounded(pose_bone.rotation_quaternion),
            # The bone's own IK settings, which Hinge Joints and split segments change while rigged.
            tuple(getattr(pose_bone, f"{prefix}_{axis}") for prefix in ("lock_ik", "use_ik_limit", "ik_min", "ik_max",
                                                                          "ik_stiffness") for axis in "xyz"),
            pose_bone.ik_stretch,
        )
    collections = tuple(sorted((c.name, c.is_visible) for c in obj.data.collections_all))
    data = obj.animation_data
    action = data.action if data is not None else None
    return {"bones": bones, "pose": pose, "collections": collections, "limbs": len(obj.ik_rigger.limbs),
            "mode": obj.mode, "mirror": obj.data.use_mirror_x,
            "props": {bone.name: tuple(sorted(bone.keys())) for bone in obj.data.bones if bone.keys()}
            | {f"pose:{bone.name}": tuple(sorted(bone.keys())) for bone in obj.pose.bones if bone.keys()},
            "drivers": tuple(sorted(curve.data_path for curve in data.drivers)) if data is not None else None,
            "fcurves": tuple(sorted(curve.data_path for curve in all_fcurves(obj))),
            "action": action.name if action is not None else None}


def all_fcurves(obj: bpy.types.Object) -> list:
    """The F-curves of the object's action, on Blender 4.2 and 5.x alike."""
    from ik_rigger.rig.animation import fcurve_owners

    return [curve for owner in fcurve_owners(obj) for curve in owner.fcurves]


def keys_by_curve(curves: Iterable) -> dict[tuple[str, int], list[float]]:
    """Every key of ``curves`` (frame and value, flat) by F-curve (data path, index)."""
    keys = {}
    for curve in curves:
        values = [0.0] * (2 * len(curve.keyframe_points))
        curve.keyframe_points.foreach_get("co", values)
        keys[(curve.data_path, curve.array_index)] = values
    return keys


def both_legs_rigged() -> bpy.types.Object:
    """Two legs (``both_legs``), rigged by Build IK Limb from shin.L with Both Sides."""
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    return obj


def chain_length(obj: bpy.types.Object, chain: Iterable[str]) -> float:
    return sum(obj.data.bones[name].length for name in chain)


def same(a, b, tolerance: float = 1e-4) -> bool:
    """Deep equality of snapshots, floats within ``tolerance`` (edit-mode round trips move the last digits)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key], tolerance) for key in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= tolerance
    return a == b


def at_rest_alone(obj: bpy.types.Object) -> None:
    """An imported armature with its animation and pose dropped, active and the only one selected."""
    if obj.animation_data is not None:
        obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    bpy.context.view_layer.objects.active = obj
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)


def linked_override(path: Path, collection: str = "Character") -> bpy.types.Collection:
    """Link ``collection`` from ``path`` into the scene and make it a library override, as File > Link and
    Object > Library Override > Make do: the linked collection sits in the scene first (Blender 5.3 overrides
    nothing otherwise, 4.2-5.2 did either way), and its override takes its place there."""
    with bpy.data.libraries.load(str(path), link=True) as (_source, target):
        target.collections = [collection]
    linked = target.collections[0]
    scene = bpy.context.scene
    if linked.name not in scene.collection.children or scene.collection.children[linked.name] != linked:
        scene.collection.children.link(linked)
    override = linked.override_hierarchy_create(scene, bpy.context.view_layer, do_fully_editable=False)
    assert override is not None, f"Blender made no override of the collection '{collection}'"
    if override.name not in scene.collection.children:
        scene.collection.children.link(override)
    return override


def through_fbx(made: bpy.types.Object, folder: Path, leaf_bones: bool = False) -> bpy.types.Object:
    """``made`` (selected, as ``make_armature`` leaves it) through Blender's FBX exporter and importer at their
    defaults, the exporter's leaf bones only with ``leaf_bones``: the imported armature, ``made`` removed."""
    path = folder / f"{made.name}.fbx"
    bpy.ops.export_scene.fbx(filepath=str(path), use_selection=True, add_leaf_bones=leaf_bones)
    bpy.data.objects.remove(made)
    bpy.ops.import_scene.fbx(filepath=str(path))
    return next(item for item in bpy.data.objects if item.type == "ARMATURE")


_RIGIFY_GENERATE = """
import os
import sys
import bpy
import addon_utils
bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable("rigify", default_set=True)
getattr(bpy.ops.object, sys.argv[-2])()
bpy.ops.pose.rigify_generate()
bpy.ops.object.mode_set(mode="OBJECT")
bpy.ops.wm.save_as_mainfile(filepath=sys.argv[-1])
sys.stdout.flush()
os._exit(0)  # bpy 4.2 as a module crashes in its exit cleanup once an add-on was registered (conftest.py)
"""


def rigify_generated(path: Path, metarig: str = "armature_basic_human_metarig_add") -> Path:
    """A .blend at ``path`` of the Rigify metarig ``metarig`` (its add operator) and the rig ("rig") Rigify
    generates from it, as its Generate Rig button does. Generated in a Blender of its own: with a rig generated
    in the tests' process, Blender 4.2's glTF importer and exporter crashed now and then in later tests (setting
    the window's scene), Rigify disabled again or not."""
    done = subprocess.run([sys.executable, "-c", _RIGIFY_GENERATE, metarig, str(path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and path.exists(), done.stderr[-2000:]
    return path
