"""The builder on imported characters: glTF, FBX round trips, Y-up, centimetres, any facing, tails off joints.

Importers keep the file's joint axes: a bone's tail need not lie on the next joint,
the armature may be Y-up inside a turned object, and the character may face any way.
Every limb must keep its rest (bones and skinned mesh), reach, bend toward its pole,
keep its foot or hand planted while the body moves, come out cleanly and survive a
save and reload; straight knees bend forward and straight elbows backward, in the
character's own frame.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

import bpy
import pytest
from helpers import DATA, at_rest_alone, chain_length, evaluate, import_bvh, same, set_active_bone, snapshot
from mathutils import Matrix, Vector

from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig import records, solver
from ik_rigger.rig.build import build_limbs


@dataclass(frozen=True)
class Limb:
    """A limb to rig by name, and which way its middle joint must bend (``None``: no claim)."""

    last: str
    length: int
    extremity: str | None
    bends: str | None  # "FRONT" (a knee) or "BACK" (an elbow)


@dataclass(frozen=True)
class Character:
    """An imported armature, where its body is, and its front and up in world space."""

    obj: bpy.types.Object
    body: str
    origin: str | None  # the handles' parent; None leaves them unparented
    front: Vector
    up: Vector


def import_gltf(filename: str, heuristic: str) -> bpy.types.Object:
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename), bone_heuristic=heuristic)
    obj = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    at_rest_alone(obj)
    return obj


def skinned_vertices(obj: bpy.types.Object) -> list[Vector]:
    """World positions of every evaluated vertex of the meshes ``obj`` deforms."""
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    points = []
    for mesh in bpy.data.objects:
        if mesh.type == "MESH" and any(m.type == "ARMATURE" and m.object == obj for m in mesh.modifiers):
            evaluated = mesh.evaluated_get(depsgraph)
            points.extend(evaluated.matrix_world @ v.co for v in evaluated.data.vertices)
    return points


def limb_chain(obj: bpy.types.Object, limb: Limb) -> list[str]:
    names = [limb.last]
    while len(names) < limb.length:
        names.append(obj.data.bones[names[-1]].parent.name)
    return names[::-1]


def turn_degrees(a: Matrix, b: Matrix) -> float:
    """The largest angle between matching axes of two matrices, in degrees.

    From the sine and cosine of each pair (single-precision matrices leave a
    quaternion's angle blind below about 0.03 degree).
    """
    angles = []
    for index in range(3):
        u, v = a.col[index].xyz.normalized(), b.col[index].xyz.normalized()
        angles.append(math.atan2(u.cross(v).length, u.dot(v)))
    return math.degrees(max(angles))


def assert_at_rest(obj: bpy.types.Object, rest: dict[str, Matrix], scale: float) -> None:
    """Every bone's evaluated pose is its rest: within 0.01 degree and 1e-4 of ``scale``."""
    posed = evaluate(obj)
    for name, matrix in rest.items():
        assert turn_degrees(matrix, posed[name]) < 0.01, name
        assert (matrix.translation - posed[name].translation).length < 1e-4 * scale, name


def turn_body(obj: bpy.types.Object, body: str, toward: Vector, point: Vector, distance: float) -> None:
    """Turn ``body`` about its head so that ``point`` moves about ``distance`` toward ``toward``.

    Only a turn: importers connect a body bone to its parent, which leaves it no move.
    """
    rest = obj.data.bones[body].matrix_local
    head = rest.translation
    axis = (point - head).cross(toward - point)
    angle = min(distance / max((point - head).length, 1e-9), math.radians(10.0))
    turn = Matrix.Rotation(angle, 4, axis.normalized())
    obj.pose.bones[body].matrix = Matrix.Translation(head) @ turn @ Matrix.Translation(-head) @ rest


def hanging_objects(obj: bpy.types.Object) -> dict[str, Matrix]:
    """World matrices of the objects parented to bones of ``obj`` (a robot's plates, a sword)."""
    bpy.context.view_layer.update()
    return {child.name: child.matrix_world.copy() for child in obj.children if child.parent_type == "BONE"}


def check_character(character: Character, limbs: list[Limb], tmp_path, fix: bool = False) -> None:
    """Every check the builder's own tests make, on each limb of an imported character.

    ``fix`` turns on the option that points the chain bones' tails at their next joint.
    """
    obj = character.obj
    obj_name = obj.name
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(obj)
    vertices = skinned_vertices(obj)
    hanging = hanging_objects(obj)
    requests = [(limb.last, LimbOptions(chain_length=limb.length,
                                        handle_parent_mode="BONE" if character.origin else "NONE",
                                        handle_parent=character.origin or "",
                                        extremity_mode="BONE" if limb.extremity else "NONE",
                                        extremity_name=limb.extremity or "", fix_orientation=fix)) for limb in limbs]
    plans = build_limbs(obj, requests)
    bones = obj.data.bones
    # Measured from joint to joint: an importer's bones may be far shorter than their segments.
    shortest = min(max(chain_length(obj, limb_chain(obj, limb)), joints_length(obj, limb)) for limb in limbs)
    prebent = {edit.name for plan in plans for edit in plan.bone_edits}
    for name in set(bones.keys()) - prebent:
        if name in before["bones"]:
            assert same(before["bones"][name][:3], (tuple(bones[name].head_local), tuple(bones[name].tail_local),
                        tuple(v for row in bones[name].matrix_local for v in row))), name
    rest = {bone.name: bone.matrix_local.copy() for bone in bones}
    # Rest untouched: bones, the skinned mesh and the objects hanging from bones.
    assert_at_rest(obj, rest, shortest)
    for old, new in zip(vertices, skinned_vertices(obj), strict=True):
        assert (old - new).length < 1e-4 * shortest * _world_scale(obj)
    for name, matrix in hanging_objects(obj).items():
        assert turn_degrees(hanging[name], matrix) < 0.01, name
        assert (hanging[name].translation - matrix.translation).length < 1e-4 * shortest * _world_scale(obj), name
    if fix:
        for limb in limbs:
            _check_fixed(obj, limb, shortest)
    world = obj.matrix_world.to_3x3()
    for limb in limbs:
        record = obj.ik_rigger.limb_of(limb.last)
        chain = limb_chain(obj, limb)
        assert list(records.inventory(record).chain) == chain
        assert record.extremity == (limb.extremity or "")
        if limb.bends is not None:
            # The pole stands out from the middle joint in front of a knee, behind an elbow.
            middle = bones[chain[len(chain) // 2]].head_local
            out = world @ (bones[record.pole].head_local - middle)
            sign = 1.0 if limb.bends == "FRONT" else -1.0
            assert sign * out.normalized().dot(character.front) > 0.7, (limb.last, out, character.front)
    for limb in limbs:
        _check_planted(obj, character, limb, rest)
    for limb in limbs:
        reach_and_bend(obj, limb)
    assert_at_rest(obj, rest, shortest)
    _check_reload(obj, limbs, rest, shortest, tmp_path)
    obj = bpy.data.objects[obj_name]
    for limb in limbs:
        set_active_bone(obj, limb.last)
        assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert same(snapshot(obj), before)


def joints_length(obj: bpy.types.Object, limb: Limb) -> float:
    """The chain's length from joint to joint: its heads, then the extremity's head or its last tail."""
    bones = obj.data.bones
    chain = limb_chain(obj, limb)
    joints = [bones[name].head_local for name in chain] + [
        bones[limb.extremity].head_local if limb.extremity else bones[chain[-1]].tail_local]
    return sum((b - a).length for a, b in zip(joints, joints[1:]))


def _check_fixed(obj: bpy.types.Object, limb: Limb, scale: float) -> None:
    """Each chain bone's tail on the next joint, the last one's on the extremity; X the hinge."""
    bones = obj.data.bones
    chain = limb_chain(obj, limb)
    ends = [bones[name].head_local for name in chain[1:]]
    if limb.extremity:
        ends.append(bones[limb.extremity].head_local)
    for name, end in zip(chain, ends):
        assert (bones[name].tail_local - end).length < 1e-4 * scale, name
    joints = [bones[name].head_local for name in chain] + [bones[chain[-1]].tail_local]
    hinge = (joints[1] - joints[0]).cross(joints[-1] - joints[1]).normalized()
    for name in chain:
        assert abs(bones[name].matrix_local.col[0].xyz.normalized().dot(hinge)) > 0.999, name


def _world_scale(obj: bpy.types.Object) -> float:
    return max(obj.matrix_world.to_scale())


def _check_planted(obj: bpy.types.Object, character: Character, limb: Limb, rest: dict[str, Matrix]) -> None:
    """The extremity keeps its place and turn while the body moves (and the chain with it)."""
    if limb.extremity is None:
        return
    chain = limb_chain(obj, limb)
    length = chain_length(obj, chain)
    # The chain's root moves toward the extremity, so that it stays within reach.
    planted = evaluate(obj)[limb.extremity]
    turn_body(obj, character.body, obj.data.bones[limb.extremity].head_local, obj.data.bones[chain[0]].head_local,
              0.05 * length)
    moved = evaluate(obj)
    assert turn_degrees(planted, moved[limb.extremity]) < 0.01, limb.extremity
    assert (planted.translation - moved[limb.extremity].translation).length < 1e-3 * length, limb.extremity
    # The body did move the chain: the planted foot is the rig's doing, not a still pose.
    assert (moved[chain[0]].translation - rest[chain[0]].translation).length > 1e-3 * length
    obj.pose.bones[character.body].matrix_basis = Matrix.Identity(4)


def reach_and_bend(obj: bpy.types.Object, limb: Limb, count: int = 12) -> None:
    """Move the handle to reachable targets: the chain's end lands on each, and no joint flips.

    Measured on the joints (each bone's head, then the last bone's tail): a bone's
    own length says nothing of the reach when its tail is off the next joint. Every
    inner joint stays on the side of the root-target line it had at rest, measured
    against the pole: a 2-bone limb bends toward its pole, and a zigzag (a hind leg's
    stifle and hock) keeps its fold.
    """
    record = obj.ik_rigger.limb_of(limb.last)
    chain = limb_chain(obj, limb)
    bones = obj.data.bones
    parts = records.resolve(obj, record)
    # A bone IK keeps in line (the second half of a split segment) is no joint: the chain bends at the others,
    # read on the chain IK solves (a hidden chain's joint bones, pre-bent where the chain was read as straight).
    solving = dict(zip(chain, parts.solver or chain))
    bending = [solving[name] for name in chain if name not in kept_in_line(obj, chain)]
    # The chain's end: its last tail, or where a hidden chain ends (the extremity's head) when the bones
    # do not run joint to joint.
    tip = solver.end_point(obj, parts)
    joints = [bones[name].head_local.copy() for name in bending] + [bones[limb.last].matrix_local @ tip]
    length = sum((b - a).length for a, b in zip(joints, joints[1:]))
    root, end_rest = joints[0], joints[-1]
    pole = bones[record.pole].head_local

    def sides(points: list[Vector], target: Vector) -> list[float]:
        axis = (target - root).normalized()
        pole_side = (pole - root) - axis * (pole - root).dot(axis)
        return [((p - root) - axis * (p - root).dot(axis)).dot(pole_side) for p in points[1:-1]]

    at_rest = sides(joints, end_rest)
    rng = random.Random(len(chain))
    handle_rest = bones[record.handle].matrix_local
    tried = 0
    while tried < count:
        direction = Vector((rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1))).normalized()
        target = end_rest + direction * rng.uniform(0.0, 0.3) * length
        if not 0.3 * length < (target - root).length < 0.9 * length:
            continue
        tried += 1
        moved = handle_rest.copy()
        moved.translation = handle_rest.translation + (target - end_rest)
        obj.pose.bones[record.handle].matrix = moved
        posed = evaluate(obj)
        end = posed[limb.last] @ tip
        assert (end - target).length < 1e-3 * length, (limb.last, target, end)
        points = [posed[name].translation for name in bending] + [end]
        for before, after in zip(at_rest, sides(points, target)):
            if abs(before) > 1e-6 * length * length:
                assert before * after > 0.0, (limb.last, target)
    obj.pose.bones[record.handle].matrix_basis = Matrix.Identity(4)


def _check_reload(obj: bpy.types.Object, limbs: list[Limb], rest: dict[str, Matrix], scale: float, tmp_path) -> None:
    bpy.ops.object.mode_set(mode="OBJECT")
    path = str(tmp_path / "imported.blend")
    obj_name = obj.name
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects[obj_name]
    assert {limb.name for limb in obj.ik_rigger.limbs} == {limb.last for limb in limbs}
    assert_at_rest(obj, rest, scale)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")


# The fox: a quadruped whose elbows (front legs) bend backward and stifles (hind legs) forward.
FOX_LIMBS = [
    Limb("b_LeftForeArm_010", 2, "b_LeftHand_011", "BACK"),
    Limb("b_RightForeArm_07", 2, "b_RightHand_08", "BACK"),
    Limb("b_LeftLeg02_016", 2, "b_LeftFoot01_017", "FRONT"),
    Limb("b_RightFoot01_021", 3, "b_RightFoot02_022", None),
]


@pytest.mark.parametrize("heuristic", ["BLENDER", "TEMPERANCE"])
def test_gltf_fox(heuristic, tmp_path):
    obj = import_gltf("gltf_fox.glb", heuristic)
    character = Character(obj, "b_Hip_01", "b_Root_00", Vector((0.0, -1.0, 0.0)), Vector((0.0, 0.0, 1.0)))
    limbs = FOX_LIMBS
    if heuristic == "BLENDER":
        # The importer's own tail of the hind shin points 25 units ahead of the hock, and
        # Blender's IK moves that tail: the chain it solves folds backward at the stifle.
        limbs = [replace(limb, bends=None) if limb.last == "b_LeftLeg02_016" else limb for limb in limbs]
    check_character(character, limbs, tmp_path)


def test_gltf_robot_in_a_y_up_armature(tmp_path):
    obj = import_gltf("gltf_robot_expressive.glb", "TEMPERANCE")
    # Y-up inside: the world's up is the armature's -Y.
    assert (obj.matrix_world.to_3x3() @ Vector((0.0, -1.0, 0.0))).normalized().z > 0.99
    character = Character(obj, "Body", "Bone", Vector((0.0, -1.0, 0.0)), Vector((0.0, 0.0, 1.0)))
    # The robot's elbows are modelled bent 4 degrees forward: IK keeps bending them that
    # way, with the poles put there.
    check_character(character, [
        Limb("LowerArm.L", 2, "Palm2.L", "FRONT"),
        Limb("LowerArm.R", 2, "Palm2.R", "FRONT"),
        Limb("LowerLeg.L", 2, None, "FRONT"),
    ], tmp_path)


def _bvh_limbs(prefix: str, names: dict[str, str]) -> list[Limb]:
    return [Limb(f"{prefix}{names[side + 'forearm']}", 2, f"{prefix}{names[side + 'hand']}", None)
            for side in ("l", "r")] + [
        Limb(f"{prefix}{names[side + 'shin']}", 2, f"{prefix}{names[side + 'foot']}", "FRONT") for side in ("l", "r")]


BVH = {
    "mixamo_freebvh.bvh": ("mixamorig:Hips", _bvh_limbs("mixamorig:", {
        "lforearm": "LeftForeArm", "lhand": "LeftHand", "rforearm": "RightForeArm", "rhand": "RightHand",
        "lshin": "LeftLeg", "lfoot": "LeftFoot", "rshin": "RightLeg", "rfoot": "RightFoot"})),
    "threejs_pirouette_rest.bvh": ("hip", _bvh_limbs("", {
        "lforearm": "lforearm", "lhand": "lhand", "rforearm": "rforearm", "rhand": "rhand",
        "lshin": "lshin", "lfoot": "lfoot", "rshin": "rshin", "rfoot": "rfoot"})),
}


# MakeHuman's default skeleton: every segment in two bones, the thigh's meeting at 17 degrees. Its
# file is Z-up: Blender's importer, at its default settings (Y-up), lays it along -Y, facing -Z.
BVH["makehuman_benchmark.bvh"] = ("root", [
    Limb(f"{segment}02.{side}", 4, f"{end}.{side}", bends)
    for side in ("L", "R") for segment, end, bends in (("lowerarm", "wrist", None), ("lowerleg", "foot", "FRONT"))])


@pytest.mark.parametrize("filename", sorted(BVH))
def test_bvh(filename, tmp_path):
    obj = import_bvh(filename)
    at_rest_alone(obj)
    body, limbs = BVH[filename]
    front, up = ((0.0, 0.0, -1.0), (0.0, -1.0, 0.0)) if filename.startswith("makehuman") else ((0.0, -1.0, 0.0),
                                                                                                (0.0, 0.0, 1.0))
    # The hips are the root: the handles hang from nothing, so moving the hips leaves them.
    check_character(Character(obj, body, None, Vector(front), Vector(up)), limbs, tmp_path)


# An invented biped in its own frame (facing -Y, Z up, metres): straight arms, legs
# straight or bent, feet and toes pointing forward.
def biped(bend: float, arm_bend: float = 0.0) -> list[tuple[str, Vector, Vector, str | None]]:
    bones: list[tuple[str, Vector, Vector, str | None]] = [
        ("root", Vector((0, 0, 0)), Vector((0, 0.3, 0)), None),
        ("hips", Vector((0, 0, 1.0)), Vector((0, 0, 1.1)), "root"),
        ("spine", Vector((0, 0, 1.1)), Vector((0, 0, 1.4)), "hips"),
        ("chest", Vector((0, 0, 1.4)), Vector((0, 0, 1.6)), "spine"),
        ("head", Vector((0, 0, 1.6)), Vector((0, 0, 1.8)), "chest"),
    ]
    for side, s in (("L", 1.0), ("R", -1.0)):
        bones += [
            (f"shoulder.{side}", Vector((0.05 * s, 0, 1.55)), Vector((0.18 * s, 0, 1.55)), "chest"),
            (f"upper_arm.{side}", Vector((0.18 * s, 0, 1.55)), Vector((0.48 * s, arm_bend, 1.55)), f"shoulder.{side}"),
            (f"forearm.{side}", Vector((0.48 * s, arm_bend, 1.55)), Vector((0.75 * s, 0, 1.55)), f"upper_arm.{side}"),
            (f"hand.{side}", Vector((0.75 * s, 0, 1.55)), Vector((0.85 * s, 0, 1.55)), f"forearm.{side}"),
            (f"thigh.{side}", Vector((0.1 * s, 0, 1.0)), Vector((0.1 * s, -bend, 0.55)), "hips"),
            (f"shin.{side}", Vector((0.1 * s, -bend, 0.55)), Vector((0.1 * s, 0, 0.1)), f"thigh.{side}"),
            (f"foot.{side}", Vector((0.1 * s, 0, 0.1)), Vector((0.1 * s, -0.15, 0.02)), f"shin.{side}"),
            (f"toe.{side}", Vector((0.1 * s, -0.15, 0.02)), Vector((0.1 * s, -0.22, 0.02)), f"foot.{side}"),
        ]
    return bones


BIPED_LIMBS = [
    Limb("forearm.L", 2, "hand.L", "BACK"),
    Limb("forearm.R", 2, "hand.R", "BACK"),
    Limb("shin.L", 2, "foot.L", "FRONT"),
    Limb("shin.R", 2, "foot.R", "FRONT"),
]


# Skeletons whose thigh, upper arm or forearm is cut in two bones along its length: each
# family's names for the biped's bones, a pair where the segment is split.
SPLIT_FAMILIES: dict[str, dict[str, tuple[str, ...]]] = {
    # DAZ Genesis 3 and 8: a twist bone after the bend bone; the shin is whole.
    "daz": {"shoulder": ("{l}Collar",), "upper_arm": ("{l}ShldrBend", "{l}ShldrTwist"),
            "forearm": ("{l}ForearmBend", "{l}ForearmTwist"), "hand": ("{l}Hand",),
            "thigh": ("{l}ThighBend", "{l}ThighTwist"), "shin": ("{l}Shin",), "foot": ("{l}Foot",), "toe": ("{l}Toe",)},
    # MakeHuman and MPFB's default skeleton: every segment in two.
    "makehuman": {"shoulder": ("clavicle.{L}",), "upper_arm": ("upperarm01.{L}", "upperarm02.{L}"),
                  "forearm": ("lowerarm01.{L}", "lowerarm02.{L}"), "hand": ("wrist.{L}",),
                  "thigh": ("upperleg01.{L}", "upperleg02.{L}"), "shin": ("lowerleg01.{L}", "lowerleg02.{L}"),
                  "foot": ("foot.{L}",), "toe": ("toe1-1.{L}",)},
    # Rigify's deform bones exported alone: halves numbered as Blender numbers copies.
    "rigify export": {"shoulder": ("DEF-shoulder.{L}",), "upper_arm": ("DEF-upper_arm.{L}", "DEF-upper_arm.{L}.001"),
                      "forearm": ("DEF-forearm.{L}", "DEF-forearm.{L}.001"), "hand": ("DEF-hand.{L}",),
                      "thigh": ("DEF-thigh.{L}", "DEF-thigh.{L}.001"), "shin": ("DEF-shin.{L}", "DEF-shin.{L}.001"),
                      "foot": ("DEF-foot.{L}",), "toe": ("DEF-toe.{L}",)},
    # Auto-Rig Pro's exports: twist and stretch halves, the twist first in the thigh and upper arm.
    "autorigpro": {"shoulder": ("shoulder.{l}",), "upper_arm": ("c_arm_twist_offset.{l}", "arm_stretch.{l}"),
                   "forearm": ("forearm_stretch.{l}", "forearm_twist.{l}"), "hand": ("hand.{l}",),
                   "thigh": ("thigh_twist.{l}", "thigh_stretch.{l}"), "shin": ("leg_stretch.{l}", "leg_twist.{l}"),
                   "foot": ("foot.{l}",), "toe": ("toes_01.{l}",)},
}


def split_biped(bend: float, family: str, arm_bend: float = 0.0) -> list[tuple[str, Vector, Vector, str | None]]:
    """The biped named as ``family`` names it, its split segments cut in two at their middle."""
    names = SPLIT_FAMILIES[family]
    renamed: dict[str, str] = {}  # each biped bone's last bone, the parent of what hangs below it
    bones: list[tuple[str, Vector, Vector, str | None]] = []
    for name, head, tail, parent in biped(bend, arm_bend):
        base, _, side = name.partition(".")
        parent = renamed.get(parent, parent) if parent else None
        if base not in names:
            bones.append((name, head, tail, parent))
            continue
        parts = [part.format(l=side.lower(), L=side) for part in names[base]]
        cuts = [head.lerp(tail, index / len(parts)) for index in range(len(parts) + 1)]
        for part, start, stop in zip(parts, cuts, cuts[1:]):
            bones.append((part, start, stop, parent))
            parent = part
        renamed[name] = parts[-1]
    return bones


def split_limbs(family: str) -> list[Limb]:
    names = SPLIT_FAMILIES[family]
    limbs = []
    for side in ("L", "R"):
        def bones(base: str, side: str = side) -> tuple[str, ...]:
            return tuple(part.format(l=side.lower(), L=side) for part in names[base])
        arm, leg = bones("upper_arm") + bones("forearm"), bones("thigh") + bones("shin")
        limbs += [Limb(arm[-1], len(arm), bones("hand")[0], "BACK"), Limb(leg[-1], len(leg), bones("foot")[0], "FRONT")]
    return limbs


def make_character(inside: Matrix, outside: Matrix, bend: float = 0.0, tails_off: int | None = None,
                   gaps: bool = True, name: str = "Character", family: str | None = None,
                   arm_bend: float = 0.0) -> Character:
    """The biped placed in armature space by ``inside`` (4x4) and in the world by ``outside``.

    ``tails_off`` seeds tails turned off their next joint and random rolls, as
    importers leave them, and with ``gaps`` feet and hands starting a little away
    from the chain's end.
    """
    rng = random.Random(tails_off)
    armature = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(obj)
    obj.matrix_world = outside
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    extremities = {"hand", "foot"} if family is None else {
        part.format(l=side.lower(), L=side) for base in ("hand", "foot") for part in SPLIT_FAMILIES[family][base]
        for side in ("L", "R")}
    for bone_name, head, tail, parent in biped(bend, arm_bend) if family is None else split_biped(bend, family,
                                                                                                   arm_bend):
        if tails_off is not None and gaps and (bone_name.split(".")[0] in extremities or bone_name in extremities):
            head = head + Vector((rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1))) * 0.03
        if tails_off is not None:
            turn = Matrix.Rotation(rng.uniform(0.5, 2.5), 3, Vector(rng.uniform(-1, 1) for _ in range(3)))
            tail = head + turn @ (tail - head) * rng.uniform(0.3, 1.5)
        bone = armature.edit_bones.new(bone_name)
        bone.head = inside @ head
        bone.tail = inside @ tail
        bone.roll = rng.uniform(-math.pi, math.pi) if tails_off is not None else 0.0
        if parent:
            bone.parent = armature.edit_bones[parent]
            bone.use_connect = tails_off is None and (armature.edit_bones[parent].tail - bone.head).length < 1e-6
    bpy.ops.object.mode_set(mode="OBJECT")
    to_world = outside.to_3x3() @ inside.to_3x3()
    return Character(obj, "hips", "root", (to_world @ Vector((0, -1, 0))).normalized(),
                     (to_world @ Vector((0, 0, 1))).normalized())


Y_UP = Matrix.Rotation(math.radians(-90.0), 4, "X")  # the character's up along the armature's +Y
TURNED_BACK = Matrix.Rotation(math.radians(90.0), 4, "X")


@pytest.mark.parametrize("units", [1.0, 100.0])
@pytest.mark.parametrize("bend", [0.0, 0.05])
def test_y_up_armature_in_a_turned_object(units, bend, tmp_path):
    character = make_character(Matrix.Scale(units, 4) @ Y_UP, TURNED_BACK @ Matrix.Scale(1.0 / units, 4), bend)
    assert character.up.z > 0.99 and character.front.y < -0.99
    check_character(character, BIPED_LIMBS, tmp_path)


@pytest.mark.parametrize("degrees", [37.0, 90.0, 180.0, 250.0])
def test_facing_any_direction(degrees, tmp_path):
    # Half the cases turn the object, half turn the bones inside an unturned object.
    turn = Matrix.Rotation(math.radians(degrees), 4, "Z")
    inside, outside = (turn, Matrix.Identity(4)) if degrees in (37.0, 180.0) else (Matrix.Identity(4), turn)
    check_character(make_character(inside, outside), BIPED_LIMBS, tmp_path)


@pytest.mark.parametrize("seed", range(3))
def test_tails_off_joints_rolls_and_gaps(seed, tmp_path):
    character = make_character(Matrix.Identity(4), Matrix.Identity(4), bend=0.05, tails_off=seed)
    limbs = [Limb(limb.last, limb.length, limb.extremity, None) for limb in BIPED_LIMBS]
    check_character(character, limbs, tmp_path)


def _fbx_round_trip(character: Character, tmp_path, export_options: dict, import_options: dict) -> Character:
    path = str(tmp_path / "character.fbx")
    bpy.ops.export_scene.fbx(filepath=path, **export_options)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.fbx(filepath=path, **import_options)
    obj = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    at_rest_alone(obj)
    return Character(obj, character.body, character.origin, character.front, character.up)


# Blender's exporter writes bones along Y, which its importer reads back on the joints;
# writing them along X, as other tools do, gives the importer's default: tails off joints.
@pytest.mark.parametrize("axes,automatic", [("Y", False), ("X", False), ("X", True)])
@pytest.mark.parametrize("bend", [0.0, 0.05])
def test_fbx_round_trip(axes, automatic, bend, tmp_path):
    export_options = {"primary_bone_axis": "X", "secondary_bone_axis": "Y"} if axes == "X" else {}
    character = _fbx_round_trip(make_character(Matrix.Identity(4), Matrix.Identity(4), bend), tmp_path,
                                export_options, {"automatic_bone_orientation": automatic})
    bones = character.obj.data.bones
    off = (bones["thigh.L"].tail_local - bones["shin.L"].head_local).length
    tails_off = axes == "X" and not automatic
    assert (off > 0.01) == tails_off
    # Blender's IK moves the last bone's tail: with tails off the joints, the chain it
    # solves bends where those tails say, whatever the body.
    limbs = [replace(limb, bends=None) for limb in BIPED_LIMBS] if tails_off else BIPED_LIMBS
    check_character(character, limbs, tmp_path)


# The option that fixes imported bones: tails onto the next joint, X the hinge.

def test_fixing_orientation_of_fbx_bones_with_tails_off_joints(tmp_path):
    character = _fbx_round_trip(make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05), tmp_path,
                                {"primary_bone_axis": "X", "secondary_bone_axis": "Y"}, {})
    check_character(character, BIPED_LIMBS, tmp_path, fix=True)


@pytest.mark.parametrize("bend", [0.0, 0.05])
def test_fixing_orientation_of_invented_bones(bend, tmp_path):
    character = make_character(Matrix.Scale(100.0, 4) @ Y_UP, TURNED_BACK @ Matrix.Scale(0.01, 4), bend, tails_off=7,
                               gaps=False)
    check_character(character, BIPED_LIMBS, tmp_path, fix=True)


def test_fixing_orientation_of_the_gltf_fox(tmp_path):
    obj = import_gltf("gltf_fox.glb", "BLENDER")
    character = Character(obj, "b_Hip_01", "b_Root_00", Vector((0.0, -1.0, 0.0)), Vector((0.0, 0.0, 1.0)))
    check_character(character, FOX_LIMBS, tmp_path, fix=True)


def test_fixing_orientation_keeps_the_robots_parts_in_place(tmp_path):
    obj = import_gltf("gltf_robot_expressive.glb", "BLENDER")
    assert any(child.parent_bone == "UpperArm.L" for child in obj.children)
    character = Character(obj, "Body", "Bone", Vector((0.0, -1.0, 0.0)), Vector((0.0, 0.0, 1.0)))
    # Its bones are a hundredth of the joints' spacing: only fixed can they carry IK.
    check_character(character, [Limb("LowerArm.L", 2, "Palm2.L", "FRONT"),
                                Limb("LowerArm.R", 2, "Palm2.R", "FRONT")], tmp_path, fix=True)


# Segments split in two bones (DAZ Genesis, MakeHuman): the second half is in the chain, and IK
# keeps it rigid, so the limb bends at the knee and the elbow only, never halfway along.

def kept_in_line(obj: bpy.types.Object, chain: list[str]) -> list[str]:
    """The chain's bones whose bending IK holds as stiff as it can: the second halves of split segments
    (on a hidden chain, those whose bone there it holds so)."""
    record = obj.ik_rigger.limb_of(chain[-1])
    hidden_chain = records.resolve(obj, record).solver if record is not None else []
    solving = dict(zip(chain, hidden_chain)) if hidden_chain else {name: name for name in chain}
    return [name for name in chain[1:] if min(obj.pose.bones[solving[name]].ik_stiffness_x,
                                               obj.pose.bones[solving[name]].ik_stiffness_z) > 0.98]


# How far IK may bend a second half away from its first half's line: Blender's stiffest
# setting still lets it give a little (0.87 degree at most over targets all around the limb,
# out of reach too).
IN_LINE_DEGREES = 1.0


def _check_rigid_halves(obj: bpy.types.Object, limbs: list[Limb]) -> None:
    """Each second half stays in line with its first half while the handle moves (it may twist);
    the knee or elbow bends."""
    bones = obj.data.bones
    for limb in limbs:
        record = obj.ik_rigger.limb_of(limb.last)
        chain = limb_chain(obj, limb)
        halves = kept_in_line(obj, chain)
        hidden_chain = records.resolve(obj, record).solver
        solving = dict(zip(chain, hidden_chain)) if hidden_chain else {name: name for name in chain}
        assert not any(getattr(obj.pose.bones[solving[name]], f"lock_ik_{axis}") for name in halves for axis in "xyz")
        assert len(halves) == len(chain) - 2, (limb.last, halves)
        handle = obj.pose.bones[record.handle]
        length = chain_length(obj, chain)
        rest = {name: bones[name].matrix_local for name in chain}
        moved = bones[record.handle].matrix_local.copy()
        moved.translation = moved.translation + (bones[chain[0]].head_local - moved.translation) * 0.3
        handle.matrix = moved
        posed = evaluate(obj)
        for half in halves:
            first = bones[half].parent.name
            # The half keeps its place and direction on its first half: it may twist about its own axis.
            at_rest, now = rest[first].inverted() @ rest[half], posed[first].inverted() @ posed[half]
            assert at_rest.col[1].xyz.angle(now.col[1].xyz, 0.0) < math.radians(IN_LINE_DEGREES), half
            assert (at_rest.translation - now.translation).length < 1e-4 * length, half
        segments = [name for name in chain if name not in halves]
        assert turn_degrees(posed[segments[0]].inverted() @ posed[segments[1]],
                            rest[segments[0]].inverted() @ rest[segments[1]]) > 10.0, limb.last
        end = posed[limb.last] @ solver.end_point(obj, records.resolve(obj, record))
        assert (end - moved.translation).length < 1e-3 * length, limb.last
        handle.matrix_basis = Matrix.Identity(4)


def _remove_all(obj: bpy.types.Object) -> None:
    for name in [limb.name for limb in obj.ik_rigger.limbs]:
        set_active_bone(obj, name)
        assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}


@pytest.mark.parametrize("family", sorted(SPLIT_FAMILIES))
@pytest.mark.parametrize("bend", [0.0, 0.05])
def test_split_segments(family, bend, tmp_path):
    character = make_character(Matrix.Identity(4), Matrix.Identity(4), bend, family=family)
    limbs = split_limbs(family)
    bpy.ops.object.mode_set(mode="POSE")
    # A user's own IK settings on a second half, given back on removal.
    half = limb_chain(character.obj, limbs[0])[1]
    character.obj.pose.bones[half].lock_ik_x = True
    character.obj.pose.bones[half].ik_stiffness_x = 0.3
    before = snapshot(character.obj)
    build_limbs(character.obj, [(limb.last, LimbOptions(chain_length=limb.length)) for limb in limbs])
    _check_rigid_halves(character.obj, limbs)
    assert not character.obj.pose.bones[half].lock_ik_x
    _remove_all(character.obj)
    # The halves' IK locks are given back with the rest.
    assert same(snapshot(character.obj), before)
    given_back = character.obj.pose.bones[half]
    assert given_back.lock_ik_x and given_back.ik_stiffness_x == pytest.approx(0.3)
    given_back.lock_ik_x = False
    check_character(character, limbs, tmp_path)


@pytest.mark.parametrize("family", sorted(SPLIT_FAMILIES))
def test_split_segments_in_centimetres_y_up(family, tmp_path):
    character = make_character(Matrix.Scale(100.0, 4) @ Y_UP, TURNED_BACK @ Matrix.Scale(0.01, 4), 0.05, family=family)
    check_character(character, split_limbs(family), tmp_path)


@pytest.mark.parametrize("family", sorted(SPLIT_FAMILIES))
@pytest.mark.parametrize("axes", ["Y", "X"])
def test_split_segments_through_fbx_found_by_auto_rig(family, axes, tmp_path):
    export_options = {"primary_bone_axis": "X", "secondary_bone_axis": "Y"} if axes == "X" else {}
    character = _fbx_round_trip(make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05, family=family),
                                tmp_path, export_options, {})
    obj = character.obj
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(obj)
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    limbs = split_limbs(family)
    assert {limb.name: list(records.inventory(limb).chain) for limb in obj.ik_rigger.limbs} == {
        limb.last: limb_chain(obj, limb) for limb in limbs}
    _check_rigid_halves(obj, limbs)
    _remove_all(obj)
    assert same(snapshot(obj), before)
    tails_off = axes == "X"
    check_character(character, [replace(limb, bends=None) for limb in limbs] if tails_off else limbs, tmp_path)


def test_makehumans_real_skeleton_found_by_auto_rig():
    obj = import_bvh("makehuman_benchmark.bvh")
    at_rest_alone(obj)
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(obj)
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    limbs = BVH["makehuman_benchmark.bvh"][1]
    assert {limb.name: list(records.inventory(limb).chain) for limb in obj.ik_rigger.limbs} == {
        limb.last: limb_chain(obj, limb) for limb in limbs}
    _check_rigid_halves(obj, limbs)
    _remove_all(obj)
    assert same(snapshot(obj), before)


@pytest.mark.parametrize("family", sorted(SPLIT_FAMILIES))
def test_a_chain_starting_halfway_along_a_split_segment_is_refused(family):
    obj = make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05, family=family).obj
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(obj)
    leg = next(limb for limb in split_limbs(family) if limb.bends == "FRONT")  # the left one
    chain = limb_chain(obj, leg)
    set_active_bone(obj, leg.last)
    with pytest.raises(RuntimeError, match=f"is the second half of the segment that '{chain[0]}' begins") as refused:
        bpy.ops.ik_rigger.build_ik(chain_length=leg.length - 1)
    assert f"'{chain[1]}'" in str(refused.value) and f"Set the chain length to {leg.length}" in str(refused.value)
    assert same(snapshot(obj), before)
    # The chain length the message gives works.
    assert bpy.ops.ik_rigger.build_ik(chain_length=leg.length) == {"FINISHED"}


def test_a_chain_that_is_one_split_segment_is_refused():
    obj = make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05, family="makehuman").obj
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(obj)
    set_active_bone(obj, "lowerleg02.L")
    with pytest.raises(RuntimeError, match="one segment split in two bones") as refused:
        bpy.ops.ik_rigger.build_ik(chain_length=2)
    # The thigh above is split too: a chain of 3 would start halfway along it.
    assert "Set the chain length to 4 or more" in str(refused.value)
    assert same(snapshot(obj), before)
    assert bpy.ops.ik_rigger.build_ik(chain_length=4) == {"FINISHED"}


def test_the_build_says_which_bones_ik_keeps_in_line():
    from ik_rigger import api

    obj = make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05, family="daz").obj
    built = api.build(obj, "lShin", chain_length=3)
    assert any("'lThighTwist' is the second half of the segment that 'lThighBend' begins: IK keeps it in line"
               in note for note in built[0].notes)


def test_mpfbs_default_rig_as_mpfb_builds_it(tmp_path):
    """MPFB's own bones (tails and rolls as MPFB makes them), every segment split in two: Auto-Rig finds the
    limbs, and every check holds."""
    import json

    bones = json.loads((DATA / "mpfb_rig_default.json").read_text(encoding="utf-8"))
    armature = bpy.data.armatures.new("MPFB")
    obj = bpy.data.objects.new("MPFB", armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for name, bone in bones.items():
        edit_bone = armature.edit_bones.new(name)
        edit_bone.head, edit_bone.tail = bone["head"]["default_position"], bone["tail"]["default_position"]
        edit_bone.roll = bone["roll"]
    for name, bone in bones.items():
        if bone["parent"]:
            armature.edit_bones[name].parent = armature.edit_bones[bone["parent"]]
            armature.edit_bones[name].use_connect = bone["use_connect"]
    bpy.ops.object.mode_set(mode="POSE")
    limbs = [Limb(f"{segment}02.{side}", 4, f"{end}.{side}", bends) for side in ("L", "R")
             for segment, end, bends in (("lowerarm", "wrist", None), ("lowerleg", "foot", "FRONT"))]
    before = snapshot(obj)
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert {limb.name: list(records.inventory(limb).chain) for limb in obj.ik_rigger.limbs} == {
        limb.last: limb_chain(obj, limb) for limb in limbs}
    _check_rigid_halves(obj, limbs)
    _remove_all(obj)
    assert same(snapshot(obj), before)
    check_character(Character(obj, "root", None, Vector((0.0, -1.0, 0.0)), Vector((0.0, 0.0, 1.0))), limbs, tmp_path)
