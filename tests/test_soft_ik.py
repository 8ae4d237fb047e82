"""Soft IK: the end reaches the handle inside d_a, eases on the root -> handle line beyond (Andy
Nicholas' formula), never pops, snaps and bakes exactly, plays without IK Rigger; on Rigify's
metarig, an imported BVH and a glTF character, on evaluated poses."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bpy
import pytest
from helpers import DATA, at_rest_alone, evaluate, leg_bones, make_armature, rotation_degrees, same, snapshot
from mathutils import Euler, Matrix, Vector
from option_matrix import SKELETONS
from test_packaging import blender_command, isolated_env

from ik_rigger import api
from ik_rigger.core.errors import RigError
from ik_rigger.parts.soft_ik import reached, target_distance
from ik_rigger.rig import records, solver

PLAYER = Path(__file__).resolve().parent / "play_without_addon.py"


@dataclass
class Leg:
    obj: bpy.types.Object
    limb: api.Limb
    chain: list[str]
    handle: str
    length: float  # joint to joint, as the soft formula reads it
    tip: Vector  # where the chain IK solves ends, in its last bone's space (rig/solver.py, as snapping reads it)


def _cesium_man() -> bpy.types.Object:
    """A glTF character (Khronos' Cesium Man, its skeleton), at rest, scaled up as a scene may have it."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_cesium_man_skeleton.gltf"))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    at_rest_alone(obj)
    obj.scale = (2.0, 2.0, 2.0)
    return obj


def _gltf(filename: str) -> bpy.types.Object:
    """A glTF file as Blender's importer brings it in at its default settings, at rest."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    at_rest_alone(obj)
    return obj


# Limbs whose bones do not run joint to joint, on a hidden chain: the Fox's hind leg (3 bones) and
# RobotExpressive's leg (its bones a ten-thousandth of their segments long).
LOADS = {"cesium": _cesium_man, "fox": lambda: _gltf("gltf_fox.glb"),
         "robot": lambda: _gltf("gltf_robot_expressive.glb")}
LAST = {("cesium", "leg"): "leg_joint_L_2", ("fox", "leg"): "b_LeftFoot01_017", ("robot", "leg"): "LowerLeg.L"}
# As Auto-Rig builds them.
GIVEN = {("fox", "leg"): {"chain_length": 3, "extremity_mode": "BONE", "extremity_name": "b_LeftFoot02_018"},
         ("robot", "leg"): {"extremity_mode": "BONE", "extremity_name": "Foot.L"}}


def build(skeleton: str = "metarig", kind: str = "leg", **options) -> Leg:
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")  # a second character in the same scene
    if skeleton in LOADS:
        obj = LOADS[skeleton]()
        last = LAST[skeleton, kind]
    else:
        spec = SKELETONS[skeleton]
        obj = spec.load()
        last = spec.limbs[kind].last
    limb = api.build(obj, last, **{**GIVEN.get((skeleton, kind), {}), **options})[0]
    chain = list(limb.chain)
    bones = obj.data.bones
    # On a hidden chain (bones off their joints) the chain ends at the extremity's head, not the last tail.
    tip = solver.end_point(obj, records.resolve(obj, obj.ik_rigger.limb_of(last)))
    joints = [bones[name].head_local for name in chain] + [bones[chain[-1]].matrix_local @ tip]
    length = sum((b - a).length for a, b in zip(joints, joints[1:]))
    return Leg(obj, limb, chain, limb.bones["HANDLE"], length, tip)


def end_of(leg: Leg, posed: dict[str, Matrix]) -> Vector:
    return posed[leg.chain[-1]] @ leg.tip


def place(leg: Leg, distance: float, sideways: float = 0.0) -> tuple[Vector, Vector, dict[str, Matrix]]:
    """The handle ``distance`` chain lengths from the root, toward the rest end (turned ``sideways``
    radians about the chain's bend axis); returns the root, the handle and the evaluated pose."""
    obj = leg.obj
    rest = evaluate(obj)
    root = rest[leg.chain[0]].translation.copy()
    # Toward the handle at rest (soft IK may ease the rest pose's end in, short of it).
    aim = (rest[leg.handle].translation - root).normalized()
    if sideways:
        aim = Matrix.Rotation(sideways, 3, aim.orthogonal()) @ aim
    pose_bone = obj.pose.bones[leg.handle]
    wanted = rest[leg.handle].copy()
    wanted.translation = root + aim * distance * leg.length
    pose_bone.matrix = wanted
    posed = evaluate(obj)
    return root, posed[leg.handle].translation.copy(), posed


def set_switch(leg: Leg, **values: float) -> None:
    for key, value in values.items():
        leg.obj.pose.bones[leg.handle][key] = value
    leg.obj.update_tag()


def knee_angle(leg: Leg, posed: dict[str, Matrix]) -> float:
    """The angle between the chain's first two segments, degrees."""
    first, second = leg.chain[0], leg.chain[1]
    a = posed[second].translation - posed[first].translation
    b = end_of(leg, posed) - posed[second].translation
    return math.degrees(a.angle(b))


SOFT = 0.05
CASES = [("metarig", "leg"), ("mixamo", "leg"), ("cesium", "leg"), ("metarig", "arm"), ("fox", "leg"), ("robot", "leg")]


def test_the_formula_and_its_inverse_agree():
    for stretch in (0.0, 0.4, 1.0):
        for distance in (0.5, 0.96, 1.0, 1.1, 1.4):
            reach = reached(distance, SOFT, 1.0, stretch)
            assert target_distance(reach, SOFT, 1.0, stretch) == pytest.approx(distance, abs=1e-9)
    assert reached(0.9, SOFT, 1.0) == 0.9 and reached(1.5, SOFT, 1.0) < 1.0


@pytest.mark.parametrize("skeleton,kind", CASES)
def test_inside_the_reach_the_end_is_on_the_handle_beyond_it_eases_on_the_line(skeleton, kind):
    leg = build(skeleton, kind, soft_ik=SOFT, max_stretch=1.0)
    start = 1.0 - SOFT
    for distance in (0.7, 0.8, 0.9):
        root, handle, posed = place(leg, distance, sideways=0.2)
        assert (end_of(leg, posed) - handle).length < 1e-4 * leg.length, distance
    # Inside d_a soft IK is hard IK: a two-bone limb's knee bends toward the pole; a longer chain's joints
    # (the Fox's knee and hock) bend to the sides hard IK bends them to.
    hard = _bends(leg, root, handle, posed)
    assert len(leg.chain) > 2 or hard[0] > 0.0
    for distance in (start + 0.01, 0.98, 1.0, 1.05, 1.2):
        root, handle, posed = place(leg, distance, sideways=0.2)
        end = end_of(leg, posed)
        expected = reached((handle - root).length, SOFT, leg.length)
        assert (end - root).length == pytest.approx(expected, abs=1e-3 * leg.length), distance
        assert math.degrees((end - root).angle(handle - root)) < 0.05, distance
        assert all(bend * side > 0.0 for bend, side in zip(_bends(leg, root, handle, posed), hard)), distance


@pytest.mark.parametrize("skeleton", ["cesium", "fox", "robot"])
def test_on_a_hidden_chain_soft_ik_runs_from_its_root_over_its_joint_to_joint_length(skeleton):
    """Bones off their joints (the glTF importer's defaults) follow a hidden chain: SOFT_ROOT stands at its
    root, as long as the chain from joint to joint (to the extremity's head, not the last bone's tail), and
    the hidden chain's IK aims at SOFT."""
    leg = build(skeleton, "leg", soft_ik=SOFT)
    obj, bones = leg.obj, leg.obj.data.bones
    parts = records.resolve(obj, obj.ik_rigger.limb_of(leg.limb.name))
    assert parts.solver and parts.chain == leg.chain and leg.limb.name == leg.chain[-1]
    tail = bones[leg.chain[-1]].tail_local
    assert (bones[parts.solver[-1]].tail_local - tail).length > 0.05 * leg.length  # the ends differ
    root = bones[parts.made["SOFT_ROOT"]]
    assert (root.head_local - bones[parts.solver[0]].head_local).length < 1e-5 * leg.length
    assert root.length == pytest.approx(sum(bones[name].length for name in parts.solver), rel=1e-5)
    assert root.length == pytest.approx(leg.length, rel=1e-5)
    ik = records.ik_constraint(obj, parts)
    assert ik.id_data.pose.bones[parts.solver[-1]].constraints[ik.name] == ik
    assert ik.subtarget == parts.made["SOFT"]


def _bends(leg: Leg, root: Vector, handle: Vector, posed: dict[str, Matrix]) -> list[float]:
    """How far each inner joint stands off the root -> handle line toward the pole (times the pole's offset)."""
    line = (handle - root).normalized()
    pole = posed[leg.limb.bones["POLE"]].translation - root
    joints = [posed[name].translation - root for name in leg.chain[1:]]
    return [(joint - line * joint.dot(line)).dot(pole - line * pole.dot(line)) for joint in joints]


def test_animating_soft_ik_to_zero_gives_hard_ik_back_exactly():
    hard = build(max_stretch=1.0)
    hard_poses = [place(hard, distance, 0.2)[2] for distance in (0.9, 0.99, 1.1)]
    leg = build(soft_ik=SOFT, max_stretch=1.0)
    set_switch(leg, soft_ik=0.0)
    for distance, expected in zip((0.9, 0.99, 1.1), hard_poses):
        posed = place(leg, distance, 0.2)[2]
        for name in leg.chain:
            assert (posed[name].translation - expected[name].translation).length < 1e-5 * leg.length
            assert posed[name].to_quaternion().rotation_difference(expected[name].to_quaternion()).angle < 1e-4


def test_at_stretch_one_the_end_reaches_the_handle_up_to_the_maximum():
    leg = build(soft_ik=SOFT, max_stretch=1.5)
    set_switch(leg, stretch=1.0)
    for distance in (0.97, 1.0, 1.2, 1.45):
        _, handle, posed = place(leg, distance, 0.2)
        assert (end_of(leg, posed) - handle).length < 1e-4 * leg.length, distance
    root, handle, posed = place(leg, 1.8, 0.2)
    assert (end_of(leg, posed) - root).length == pytest.approx(1.5 * leg.length, abs=1e-3 * leg.length)


def sweep(leg: Leg, frames: int = 200) -> float:
    """The knee's largest change of angle (degrees) between two steps of a sweep of the handle at
    constant speed from 0.8 to 1.2 of the chain's length."""
    angles = [knee_angle(leg, place(leg, 0.8 + 0.4 * step / frames, 0.2)[2]) for step in range(frames + 1)]
    return max(abs(b - a) for a, b in zip(angles, angles[1:]))


def test_a_sweep_through_the_reach_never_pops():
    hard = sweep(build(max_stretch=1.0))
    soft = sweep(build(soft_ik=SOFT, max_stretch=1.0))
    assert soft < 0.25 * hard, (soft, hard)


@pytest.mark.parametrize("value", [-0.1, 0.5, float("nan"), "soft"])
def test_bad_values_are_refused_naming_soft_ik(value):
    spec = SKELETONS["metarig"]
    obj = spec.load()
    before = snapshot(obj)
    with pytest.raises(RigError, match="soft_ik"):
        api.build(obj, spec.limbs["leg"].last, soft_ik=value)
    assert same(snapshot(obj), before)


def test_soft_ik_zero_makes_no_bone_more():
    plain = build()
    assert not any(role.startswith("SOFT") for role in plain.limb.bones)
    assert "soft_ik" not in plain.obj.pose.bones[plain.handle]
    soft = build(soft_ik=SOFT)
    assert {"SOFT", "SOFT_ROOT", "SOFT_GAUGE"} <= set(soft.limb.bones)
    assert len(soft.limb.bones) == len(plain.limb.bones) + 3


def test_drivers_are_simple_expressions():
    leg = build(soft_ik=SOFT)
    drivers = [curve.driver for curve in leg.obj.animation_data.drivers]
    assert any("exp(" in driver.expression for driver in drivers)
    assert all(driver.is_simple_expression for driver in drivers if driver.type == "SCRIPTED")


def fk_pose(leg: Leg, bend: float, turn: float = 0.15) -> None:
    """An FK pose: the root turned, the middle joint bent ``bend`` radians further the way it bends."""
    bones = leg.obj.pose.bones
    for name in leg.chain:
        bones[name].rotation_mode = "XYZ"
    bones[leg.chain[0]].rotation_euler = Euler((turn, 0.0, 0.5 * turn))
    bones[leg.chain[1]].rotation_euler = Euler((bend, 0.0, 0.0))
    set_switch(leg, ik_fk=0.0)


def assert_fk_to_ik_bake_plays(leg: Leg, pose: Callable[[int], None], keyed: list[str], frames: int = 4) -> None:
    """Key FK on frames 1 to ``frames`` (``pose(frame)`` then ``keyed``'s rotations), bake FK to IK with
    the switch, and the IK plays each frame as FK did."""
    bones, scene = leg.obj.pose.bones, bpy.context.scene
    for frame in range(1, frames + 1):
        pose(frame)
        for name in keyed:
            bones[name].keyframe_insert("rotation_euler", frame=frame)
    fk = {}
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        fk[frame] = evaluate(leg.obj)
    api.bake(leg.obj, "FK_TO_IK", range(1, frames + 1), switch=True)
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        assert_same(leg, fk[frame], evaluate(leg.obj), f"frame {frame}")


def assert_same(leg: Leg, expected: dict[str, Matrix], shown: dict[str, Matrix], what: str) -> None:
    extremity = leg.limb.extremity
    # A foot hanging from the root (RobotExpressive's) stays in FK where it is, off the chain.
    below = extremity and getattr(leg.obj.data.bones[extremity].parent, "name", None) == leg.chain[-1]
    for name in leg.chain + ([extremity] if below else []):
        assert (shown[name].translation - expected[name].translation).length < 1e-4 * leg.length, (what, name)
        assert rotation_degrees(shown[name], expected[name]) < 0.01, (what, name)


@pytest.mark.parametrize("options", [{}, {"foot_roll": True}, {"max_stretch": 1.5}, {"use_rotation": True}],
                         ids=["plain", "foot roll", "stretch", "follow rotation"])
@pytest.mark.parametrize("bend", [0.0, 0.12, 0.3])
def test_snapping_ik_to_fk_reproduces_the_fk_pose_in_the_soft_zone(options, bend):
    leg = build(soft_ik=SOFT, **options)
    fk_pose(leg, bend)
    fk = evaluate(leg.obj)
    root = fk[leg.chain[0]].translation
    reach = (end_of(leg, fk) - root).length / leg.length
    api.snap_limb(leg.obj, leg.limb.name, "IK")
    assert leg.obj.pose.bones[leg.handle]["ik_fk"] == 1.0
    shown = evaluate(leg.obj)
    assert_same(leg, fk, shown, f"reach {reach:.4f}")
    if reach > 1.0 - SOFT:  # the handle stands past the end, where soft IK sends the end back to it
        handle = (shown[leg.handle].translation - root).length
        assert handle == pytest.approx(target_distance(reach * leg.length, SOFT, leg.length), rel=1e-4)


def _leg_with_its_root_keyed_off_its_rest(**options) -> tuple[Leg, dict[int, dict[str, Matrix]]]:
    """A made leg (hips > thigh > shin > foot) whose thigh's keys move its head off its rest (up to a fifth
    of the leg) and turn it, the knee near straight (in the soft zone); rigged with soft IK 0.2 and
    ``options``; with each frame as the clip played it before rigging."""
    obj = make_armature(leg_bones())
    thigh, shin = obj.pose.bones["thigh.L"], obj.pose.bones["shin.L"]
    for frame in range(1, 5):
        thigh.location = (0.06 * frame, 0.0, -0.03 * frame)
        thigh.rotation_quaternion = Euler((0.1 * frame, 0.0, 0.05 * frame)).to_quaternion()
        shin.rotation_quaternion = Euler((0.02 * (frame - 2), 0.0, 0.0)).to_quaternion()
        for bone in (thigh, shin):
            bone.keyframe_insert("location", frame=frame)
            bone.keyframe_insert("rotation_quaternion", frame=frame)
    scene = bpy.context.scene
    played = {}
    for frame in range(1, 5):
        scene.frame_set(frame)
        played[frame] = evaluate(obj)
    limb = api.build(obj, "shin.L", soft_ik=0.2, **options)[0]
    chain, bones = list(limb.chain), obj.data.bones
    length = sum(bones[name].length for name in chain)
    return Leg(obj, limb, chain, limb.bones["HANDLE"], length, Vector((0.0, bones[chain[-1]].length, 0.0))), played


def test_soft_ik_runs_from_where_the_roots_keys_move_it():
    """Soft IK measures the handle's distance from the chain root's head where its own keys move it, not
    from its rest: the clip baked onto the controls plays as before, and soft IK sends the end as far from
    that head as its formula says."""
    leg, played = _leg_with_its_root_keyed_off_its_rest()
    obj, scene = leg.obj, bpy.context.scene
    for frame, poses in played.items():
        scene.frame_set(frame)
        shown = evaluate(obj)
        assert (shown["thigh.L"].translation - obj.data.bones["thigh.L"].head_local).length > 0.05 * leg.length
        assert_same(leg, poses, shown, f"frame {frame}")
    root = shown[leg.chain[0]].translation
    handle = obj.pose.bones[leg.handle]
    wanted = shown[leg.handle].copy()
    wanted.translation = root + (end_of(leg, shown) - root).normalized() * 0.97 * leg.length
    handle.matrix = wanted
    posed = evaluate(obj)
    reach = (posed[leg.handle].translation - root).length
    assert (end_of(leg, posed) - root).length == pytest.approx(reached(reach, 0.2, leg.length), abs=1e-4 * leg.length)


def test_snapping_ik_to_fk_where_the_roots_keys_move_it():
    leg, played = _leg_with_its_root_keyed_off_its_rest(animation="FK")
    bpy.context.scene.frame_set(4)
    api.snap_limb(leg.obj, leg.limb.name, "IK")
    assert_same(leg, played[4], evaluate(leg.obj), "snapped on frame 4")


def test_a_limb_made_before_soft_ik_followed_the_root_still_snaps_and_bakes_exactly():
    """Made before SOFT_ROOT followed the root (its location undriven: it stays at the first bone's rest head,
    carried by the parent), soft IK measures from there; snapping and baking send the handle from there too."""
    leg, played = _leg_with_its_root_keyed_off_its_rest(animation="FK")
    obj, scene = leg.obj, bpy.context.scene
    root = obj.pose.bones[leg.limb.bones["SOFT_ROOT"]]
    root.driver_remove("location")
    root.location = (0.0, 0.0, 0.0)
    scene.frame_set(4)
    api.snap_limb(obj, leg.limb.name, "IK")
    assert_same(leg, played[4], evaluate(obj), "snapped on frame 4")
    obj.pose.bones[leg.handle]["ik_fk"] = 0.0
    api.bake(obj, "FK_TO_IK", range(1, 5), switch=True)
    for frame, poses in played.items():
        scene.frame_set(frame)
        assert_same(leg, poses, evaluate(obj), f"baked, frame {frame}")


def test_the_roots_keys_are_followed_again_once_ik_rigger_sees_it_renamed():
    """Blender renames a driver's path to a bone's property but not to one item of it: the first bone
    renamed, soft IK measures from its rest head again (the clip off) until IK Rigger next runs on the rig,
    which points its drivers at the bone again."""
    leg, played = _leg_with_its_root_keyed_off_its_rest()
    obj, scene = leg.obj, bpy.context.scene
    obj.data.bones["thigh.L"].name = leg.chain[0] = "Thigh"
    played = {frame: {("Thigh" if name == "thigh.L" else name): pose for name, pose in poses.items()}
              for frame, poses in played.items()}
    scene.frame_set(2)
    assert rotation_degrees(evaluate(obj)["Thigh"], played[2]["Thigh"]) > 1.0
    api.upgrade(obj)
    for frame, poses in played.items():
        scene.frame_set(frame)
        assert_same(leg, poses, evaluate(obj), f"frame {frame}")


def key_fk_motion(leg: Leg, frames: int = 24) -> None:
    """The knee straightens and bends again, in and out of the soft zone, the hip turning."""
    bones = leg.obj.pose.bones
    for frame in range(1, frames + 1):
        phase = math.sin(math.pi * (frame - 1) / (frames - 1))
        fk_pose(leg, 0.5 * (1.0 - phase), 0.3 * phase)
        for name in leg.chain:
            bones[name].keyframe_insert("rotation_euler", frame=frame)


@pytest.mark.parametrize("options", [{}, {"foot_roll": True}], ids=["plain", "foot roll"])
def test_baking_fk_to_ik_and_back_stays_exact(options):
    leg = build(soft_ik=SOFT, animation="FK", **options)
    key_fk_motion(leg)
    scene = bpy.context.scene
    fk = {}
    for frame in range(1, 25):
        scene.frame_set(frame)
        fk[frame] = evaluate(leg.obj)
    api.bake(leg.obj, "FK_TO_IK", range(1, 25), switch=True)
    reaches = []
    for frame in range(1, 25):
        scene.frame_set(frame)
        shown = evaluate(leg.obj)
        assert_same(leg, fk[frame], shown, f"IK at frame {frame}")
        reaches.append((end_of(leg, shown) - shown[leg.chain[0]].translation).length / leg.length)
    assert max(reaches) > 1.0 - SOFT > min(reaches)  # the motion went through the soft zone
    api.bake(leg.obj, "IK_TO_FK", range(1, 25), switch=True)
    for frame in range(1, 25):
        scene.frame_set(frame)
        assert_same(leg, fk[frame], evaluate(leg.obj), f"FK at frame {frame}")


def test_the_rig_plays_without_ik_rigger(tmp_path):
    leg = build(soft_ik=SOFT, foot_roll=True)
    handle = leg.obj.pose.bones[leg.handle]
    rest = evaluate(leg.obj)
    root = rest[leg.chain[0]].translation
    for frame, distance in ((1, 0.8), (10, 1.0), (20, 1.2)):
        wanted = rest[leg.handle].copy()
        wanted.translation = root + (rest[leg.handle].translation - root).normalized() * distance * leg.length
        handle.matrix = wanted
        evaluate(leg.obj)
        handle.keyframe_insert("location", frame=frame)
    expected = {}
    for frame in (1, 10, 15, 20):
        bpy.context.scene.frame_set(frame)
        expected[frame] = evaluate(leg.obj)
    path = tmp_path / "soft.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    home = tmp_path / "home"
    home.mkdir()
    result = subprocess.run(blender_command(PLAYER, str(path), "1", "10", "15", "20"), cwd=tmp_path,
                            env=isolated_env(home), capture_output=True, text=True, timeout=300, check=False)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stdout[-2000:] + result.stderr[-2000:]
    played = json.loads(lines[-1][len("RESULT "):])
    assert played["invalid_drivers"] == []
    for frame, poses in expected.items():
        shown = {name: Matrix(rows) for name, rows in played["frames"][str(frame)][leg.obj.name].items()}
        assert_same(leg, poses, shown, f"frame {frame} without IK Rigger")


def test_removing_or_rebuilding_without_it_gives_the_armature_back():
    spec = SKELETONS["metarig"]
    obj = spec.load()
    before = snapshot(obj)
    api.build(obj, spec.limbs["leg"].last, soft_ik=SOFT)
    api.remove(obj, spec.limbs["leg"].last)
    assert same(snapshot(obj), before)  # its driver too (Blender 4.2 keeps a removed constraint's drivers)
    plain = api.build(obj, spec.limbs["leg"].last)[0]
    plain_state = snapshot(obj)
    api.build(obj, spec.limbs["leg"].last, soft_ik=SOFT)
    rebuilt = api.build(obj, spec.limbs["leg"].last, soft_ik=0.0)[0]
    assert set(rebuilt.bones) == set(plain.bones)
    after = snapshot(obj)
    assert after["drivers"] == plain_state["drivers"] and after["bones"].keys() == plain_state["bones"].keys()


@pytest.mark.parametrize("form", ["bvh", "mixamo"])
def test_motion_kept_on_rigging_plays_within_todays_bounds(tmp_path, form):
    """A walk straight at rest with its T-pose frame first (the rest reach at the chain's length, in the
    soft zone): the handles are keyed where soft IK sends the ends onto the capture's, frame by frame."""
    from test_motion_fidelity import import_capture, played_in_world, t_pose_first, worst

    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.rig.build import build_limbs

    obj = import_capture(t_pose_first(tmp_path), form)
    before = played_in_world(obj)
    limbs = ["LeftLeg", "RightLeg", "LeftForeArm", "RightForeArm"]
    build_limbs(obj, [(name, LimbOptions(animation="BAKE", soft_ik=SOFT)) for name in limbs])
    assert all(record.handle and "soft_ik" in obj.pose.bones[record.handle] for record in obj.ik_rigger.limbs)
    moved, turned = worst(obj, before)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)


def test_a_rebuild_sets_the_handles_value_unless_the_animator_changed_it():
    spec = SKELETONS["metarig"]
    obj = spec.load()
    last = spec.limbs["leg"].last
    handle = api.build(obj, last, soft_ik=SOFT)[0].bones["HANDLE"]
    api.build(obj, last, soft_ik=0.1)
    assert obj.pose.bones[handle]["soft_ik"] == pytest.approx(0.1)
    obj.pose.bones[handle]["soft_ik"] = 0.07  # the animator's own
    api.build(obj, last, soft_ik=0.2)
    assert obj.pose.bones[handle]["soft_ik"] == pytest.approx(0.07)
    # A refused rebuild gives the value back with everything else.
    obj.pose.bones[handle]["soft_ik"] = 0.2
    with pytest.raises(RigError):
        api.build(obj, last, soft_ik=0.1, extremity_mode="BONE", extremity_name="no such bone")
    assert obj.pose.bones[handle]["soft_ik"] == pytest.approx(0.2)


def test_renamed_bones_keep_it_working():
    leg = build(soft_ik=SOFT)
    obj = leg.obj
    for role in ("SOFT", "SOFT_ROOT", "HANDLE"):
        obj.data.bones[leg.limb.bones[role]].name = f"renamed {role}"
    leg.handle = "renamed HANDLE"
    fk_pose(leg, 0.1)
    fk = evaluate(obj)
    api.snap_limb(obj, leg.limb.name, "IK")
    assert_same(leg, fk, evaluate(obj), "after renames")
    root, handle, posed = place(leg, 1.02)
    expected = reached((handle - root).length, SOFT, leg.length)
    assert (end_of(leg, posed) - root).length == pytest.approx(expected, abs=1e-3 * leg.length)


# Per limb, the axis of the middle joint's rotation and the angles that bend it further and (near) straight.
BENDS = {("mixamo", "leg"): (0, (0.0, -0.3, -0.9)), ("cesium", "leg"): (2, (-1.1, -1.2, -0.2)),
         ("metarig", "arm"): (0, (-0.4, -0.2, 0.3)), ("robot", "leg"): (0, (-0.9, -0.3, 0.9))}


@pytest.mark.parametrize("skeleton,kind", sorted(BENDS))
def test_snapping_ik_to_fk_on_an_import_and_an_arm(skeleton, kind):
    leg = build(skeleton, kind, soft_ik=SOFT)
    axis, angles = BENDS[skeleton, kind]
    reaches = []
    for angle in angles:
        fk_pose(leg, 0.0, turn=0.1)
        leg.obj.pose.bones[leg.chain[1]].rotation_euler[axis] = angle
        fk = evaluate(leg.obj)
        reaches.append((end_of(leg, fk) - fk[leg.chain[0]].translation).length / leg.length)
        api.snap_limb(leg.obj, leg.limb.name, "IK")
        assert_same(leg, fk, evaluate(leg.obj), f"reach {reaches[-1]:.4f}")
    assert max(reaches) > 1.0 - SOFT > min(reaches), reaches  # poses in the soft zone and out of it
