"""Section 3, IK quality: IK Rigger's limbs on real skeletons, at rest and over a sweep of targets.

Skeletons: Rigify's human metarig and the two motion-capture skeletons in tests/data,
read with Blender's BVH importer. Each is rigged with the limbs IK Rigger detects (as
its Auto-Rig does). Three measures:

- rest: the largest rotation, in degrees, between any bone's evaluated pose and its
  rest (``Bone.matrix_local``) right after building; the rig must not move anything;
- reach: the handle of each limb is put on random targets the chain can reach (from
  0.3 to 0.95 of its length away from its root, in every direction); the worst
  distance from the chain's end to the target, as a fraction of the chain's length;
- flips: on the same targets, the middle joint (knee, elbow) must end on the pole's
  side of the root-to-target line. Targets within ``DEGENERATE_DEGREES`` of the
  root-to-pole line are left out and counted: there the pole says nothing about the side.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import bpy
from mathutils import Matrix, Vector

from benchmarks import common

DATA = common.ROOT / "tests" / "data"
BVH_FILES = ("mixamo_freebvh.bvh", "threejs_pirouette_rest.bvh")
REACH_RANGE = (0.3, 0.95)  # of the chain's length, from its root
DEGENERATE_DEGREES = 15.0
SEED = 20240
TARGETS = {"rest_degrees": 0.01, "reach_fraction": 1e-3, "flips": 0}


def _import_bvh(filename: str) -> bpy.types.Object:
    """The skeleton of a BVH file at rest: its animation is dropped and every pose cleared."""
    with common.quiet():
        bpy.ops.import_anim.bvh(filepath=str(DATA / filename))
    obj = bpy.context.active_object
    obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    return obj


def _rig(obj: bpy.types.Object) -> None:
    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.limb.requests import detected_requests
    from ik_rigger.rig.build import build_limbs
    from ik_rigger.rig.skeleton import read_skeleton

    requests, _ = detected_requests(read_skeleton(obj), LimbOptions())
    build_limbs(obj, requests)


def _evaluated(obj: bpy.types.Object) -> bpy.types.Object:
    bpy.context.view_layer.update()
    return obj.evaluated_get(bpy.context.evaluated_depsgraph_get())


def _rotation_degrees(a: Matrix, b: Matrix) -> float:
    angle = a.to_quaternion().rotation_difference(b.to_quaternion()).angle
    return math.degrees(min(angle, 2.0 * math.pi - angle))


def _perpendicular(vector: Vector, unit_axis: Vector) -> Vector:
    return vector - unit_axis * vector.dot(unit_axis)


def _sweep(obj: bpy.types.Object, limb, count: int, rng: random.Random) -> dict[str, object]:
    """Put the limb's handle on ``count`` reachable targets; the worst reach and the flips."""
    from ik_rigger.rig.records import inventory

    bones = obj.data.bones
    chain = list(inventory(limb).chain)
    last = chain[-1]
    root = bones[chain[0]].head_local
    length = sum(bones[name].length for name in chain)
    handle = bones[limb.handle]
    handle_pose = obj.pose.bones[limb.handle]
    to_local = handle.matrix_local.to_3x3().inverted()
    pole = bones[limb.pole].head_local
    worst = 0.0
    flips = 0
    degenerate = 0
    for _ in range(count):
        direction = Vector([rng.gauss(0.0, 1.0) for _ in range(3)]).normalized()
        target = root + direction * rng.uniform(*REACH_RANGE) * length
        # The handle's parents stay at rest, so its location is the offset in its rest frame.
        handle_pose.location = to_local @ (target - handle.head_local)
        posed = _evaluated(obj).pose.bones
        worst = max(worst, (posed[last].tail - target).length / length)
        if (pole - root).angle(direction) < math.radians(DEGENERATE_DEGREES):
            degenerate += 1
            continue
        middle = posed[chain[len(chain) // 2]].head
        if _perpendicular(middle - root, direction).dot(_perpendicular(pole - root, direction)) <= 0.0:
            flips += 1
    handle_pose.location = (0.0, 0.0, 0.0)
    return {"limb": last, "targets": count, "worst_reach_fraction": worst, "flips": flips,
            "left_out_degenerate": degenerate}


def _skeleton(label: str, obj: bpy.types.Object, count: int) -> dict[str, object]:
    _rig(obj)
    posed = _evaluated(obj).pose.bones
    rest_degrees = max(_rotation_degrees(posed[bone.name].matrix, bone.matrix_local) for bone in obj.data.bones)
    rng = random.Random(f"{SEED}:{label}")
    limbs = [_sweep(obj, limb, count, rng) for limb in obj.ik_rigger.limbs]
    return {
        "skeleton": label,
        "bones": len(obj.data.bones),
        "limbs": len(limbs),
        "rest_degrees": rest_degrees,
        "worst_reach_fraction": max(limb["worst_reach_fraction"] for limb in limbs),
        "flips": sum(limb["flips"] for limb in limbs),
        "targets": sum(limb["targets"] for limb in limbs),
        "left_out_degenerate": sum(limb["left_out_degenerate"] for limb in limbs),
        "per_limb": limbs,
    }


def run(sources: Path, settings: common.Settings) -> dict[str, object]:
    skeletons = []
    common.reset()
    skeletons.append(_skeleton("rigify_human_metarig", common.append_object(sources / common.HUMAN_FILE,
                                                                            common.METARIG),
                               settings.quality_targets))
    for filename in BVH_FILES:
        common.reset()
        skeletons.append(_skeleton(Path(filename).stem, _import_bvh(filename), settings.quality_targets))
    return {
        "skeletons": skeletons,
        "worst": {
            "rest_degrees": max(entry["rest_degrees"] for entry in skeletons),
            "reach_fraction": max(entry["worst_reach_fraction"] for entry in skeletons),
            "flips": sum(entry["flips"] for entry in skeletons),
        },
        "targets": TARGETS,
        "reach_range": list(REACH_RANGE),
        "seed": SEED,
    }
