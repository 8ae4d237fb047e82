"""Auto-Rig on imported characters: the glTF fox (a quadruped), the stylised glTF robot, FBX files.

The glTF files import with Blender's bundled importer at its default settings; the robot
also with bone tails on the next joint, as the reasons given for skipping it advise.
Invented skeletons of several naming families go through Blender's FBX exporter and
importer, both at their default settings.
"""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, at_rest_alone, evaluate, make_armature, set_active_bone, through_fbx
from mathutils import Matrix, Vector
from test_detect import FAMILIES, QUADRUPEDS, human, mmd, sided

from ik_rigger import api
from ik_rigger.core import naming
from ik_rigger.core.detect import ARM, LEG, detect_limbs
from ik_rigger.rig import records, solver
from ik_rigger.rig.skeleton import read_skeleton


def import_gltf(filename: str, **options: str) -> bpy.types.Object:
    """Import a glTF file of tests/data; its armature is active and selected, at rest, in Pose mode."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename), **options)
    obj = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    at_rest_alone(obj)
    bpy.ops.object.mode_set(mode="POSE")
    return obj


def ik_constraints(obj: bpy.types.Object) -> dict[str, bpy.types.Constraint]:
    return {pose_bone.name: constraint for pose_bone in obj.pose.bones for constraint in pose_bone.constraints
            if constraint.type == "IK"}


def chain_of(obj: bpy.types.Object, last: str, count: int) -> list[str]:
    names = [last]
    while len(names) < count:
        names.append(obj.data.bones[names[-1]].parent.name)
    return names[::-1]


def assert_handles_move_chain_ends(obj: bpy.types.Object, limbs: dict[str, int]) -> None:
    """Each limb's IK runs over its chain (or the hidden chain it follows), and moving its handle carries
    the chain's end (its last tail, or where its hidden chain ends) onto it."""
    assert len(ik_constraints(obj)) == len(limbs)
    for last, count in limbs.items():
        chain = chain_of(obj, last, count)
        record = obj.ik_rigger.limb_of(last)
        if record is None:  # the file's own IK, left as it was
            constraint, solving, tip = ik_constraints(obj)[last], chain, Vector((0.0, obj.data.bones[last].length, 0.0))
        else:
            parts = records.resolve(obj, record)
            constraint, solving, tip = records.ik_constraint(obj, parts), parts.solver or chain, solver.end_point(
                obj, parts)
            assert parts.chain == chain
        assert constraint.chain_count == count
        reach = sum(obj.data.bones[name].length for name in solving)
        handle = obj.pose.bones[constraint.subtarget]
        posed = evaluate(obj)
        end = posed[last] @ tip
        assert (end - posed[handle.name].translation).length < 1e-3 * reach, last
        # Toward the limb's root: always within reach, and far enough to move every bone.
        target = end.lerp(posed[chain[0]].translation, 0.2)
        handle.matrix = Matrix.Translation(target - posed[handle.name].translation) @ posed[handle.name]
        moved = evaluate(obj)
        new_end = moved[last] @ tip
        assert (new_end - target).length < 1e-3 * reach, last
        assert (new_end - end).length > 0.5 * (target - end).length, last
        handle.matrix_basis = Matrix.Identity(4)
    evaluate(obj)


FOX_LIMBS = [
    (LEG, "L", ("b_LeftLeg01_015", "b_LeftLeg02_016", "b_LeftFoot01_017"), "b_LeftFoot02_018"),
    (LEG, "R", ("b_RightLeg01_019", "b_RightLeg02_020", "b_RightFoot01_021"), "b_RightFoot02_022"),
    (ARM, "L", ("b_LeftUpperArm_09", "b_LeftForeArm_010"), "b_LeftHand_011"),
    (ARM, "R", ("b_RightUpperArm_06", "b_RightForeArm_07"), "b_RightHand_08"),
]


def test_fox_four_legs_found_hind_legs_of_three_bones():
    obj = import_gltf("gltf_fox.glb")
    detection = detect_limbs(read_skeleton(obj))
    assert [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs] == FOX_LIMBS
    assert detection.skipped == ()
    # Every limb mirrors onto its other side, though the exporter numbered the two sides differently.
    names = set(obj.data.bones.keys())
    for (_, _, left, left_end), (_, _, right, right_end) in (FOX_LIMBS[0:2], FOX_LIMBS[2:4]):
        for bone, mirror in zip((*left, left_end), (*right, right_end)):
            assert naming.flip_name(bone, names) == mirror
            assert naming.flip_name(mirror, names) == bone


def test_fox_auto_rig_rigs_the_four_legs_and_nothing_else():
    obj = import_gltf("gltf_fox.glb")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert_handles_move_chain_ends(obj, {chain[-1]: len(chain) for _, _, chain, _ in FOX_LIMBS})
    rigged = {bone for _, _, chain, _ in FOX_LIMBS for bone in chain}
    for name in ("b_Tail01_012", "b_Tail02_013", "b_Tail03_014", "b_Spine01_02", "b_Neck_04", "b_Head_05"):
        assert name not in rigged
        assert not obj.pose.bones[name].constraints


def test_fox_build_both_sides_mirrors_across_the_exporters_numbers():
    obj = import_gltf("gltf_fox.glb")
    set_active_bone(obj, "b_LeftForeArm_010")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    assert_handles_move_chain_ends(obj, {"b_LeftForeArm_010": 2, "b_RightForeArm_07": 2})


def test_robot_with_the_default_bone_shapes_is_rigged_on_hidden_chains():
    # The importer's default bone shapes leave the robot's limb bones a hundredth of their segments long:
    # read as they are, detection skips them, naming the importer's setting that puts tails on the joints.
    obj = import_gltf("gltf_robot_expressive.glb")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.limbs == ()
    why = {item.bone: item.reason for item in detection.skipped}
    assert set(why) == {"LowerArm.L", "LowerArm.R", "LowerLeg.L", "LowerLeg.R"}
    assert all("Bone Dir set to Temperance" in reason for reason in why.values())
    # Auto-Rig solves the legs from joint to joint on hidden chains, the bones as they are; the arms have
    # no hand to end at (before, nothing was rigged until Fix Bone Orientation turned the bones).
    before = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert {limb.name for limb in obj.ik_rigger.limbs} == {"LowerLeg.L", "LowerLeg.R"}
    assert all(obj.data.bones[name].matrix_local == matrix for name, matrix in before.items())
    for side in "LR":
        limb = obj.ik_rigger.limb_of(f"LowerLeg.{side}")
        foot = obj.data.bones[f"Foot.{side}"].head_local
        assert (obj.data.bones[limb.handle].head_local - foot).length < 1e-4 * (foot - obj.data.bones[
            f"UpperLeg.{side}"].head_local).length


def test_robot_with_tails_on_the_next_joint_is_rigged():
    obj = import_gltf("gltf_robot_expressive.glb", bone_heuristic="TEMPERANCE")
    detection = detect_limbs(read_skeleton(obj))
    # Its feet hang from the root, as the rig it was made with left them for its own IK: they start
    # below the legs' ends, so they are the legs' feet.
    assert [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs] == [
        (LEG, "L", ("UpperLeg.L", "LowerLeg.L"), "Foot.L"), (LEG, "R", ("UpperLeg.R", "LowerLeg.R"), "Foot.R"),
        (ARM, "L", ("UpperArm.L", "LowerArm.L"), None), (ARM, "R", ("UpperArm.R", "LowerArm.R"), None),
    ]  # no hand: Palm1, Palm2 and Palm3 start at the wrist side by side, each with its own finger (skeletons.md)
    assert detection.skipped == ()
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert_handles_move_chain_ends(obj, {"LowerLeg.L": 2, "LowerLeg.R": 2, "LowerArm.L": 2, "LowerArm.R": 2})
    # Its fingers, palms and its own pole-target bones are not limbs.
    for name in ("Palm2.L", "Middle1.L", "Thumb.R", "PoleTarget.L", "Shoulder.L", "Head"):
        assert not obj.pose.bones[name].constraints
    # The feet, pinned to their clones, go with the legs' handles: before, they stayed behind.
    for side in "LR":
        limb = obj.ik_rigger.limb_of(f"LowerLeg.{side}")
        offset = evaluate(obj)[f"Foot.{side}"].translation - evaluate(obj)[limb.handle].translation
        handle = obj.pose.bones[limb.handle]
        handle.matrix = Matrix.Translation((0.0, 0.0, 0.001)) @ handle.matrix
        moved = evaluate(obj)
        assert (moved[f"Foot.{side}"].translation - moved[limb.handle].translation - offset).length < 1e-7
        handle.matrix_basis = Matrix.Identity(4)


@pytest.mark.parametrize("family", ["3ds max biped", "character creator", "daz genesis", "vroid", "wolf",
                                    "mikumikudance"])
def test_fbx_round_trip_of_each_family_is_auto_rigged(family, tmp_path):
    if family == "mikumikudance":  # Japanese names, arms split by twist bones
        specs = mmd(suffixed=False)
    else:
        specs = sided(QUADRUPEDS[family]) if family in QUADRUPEDS else human(FAMILIES[family])
    made = make_armature([(name, head, tail, parent, False) for name, parent, head, tail in specs], mode="OBJECT")
    before = detect_limbs(read_skeleton(made))
    obj = through_fbx(made, tmp_path)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    detection = detect_limbs(read_skeleton(obj))
    assert len(before.limbs) == 4
    assert [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs] == [
        (limb.kind, limb.side, limb.chain, limb.extremity) for limb in before.limbs]
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert_handles_move_chain_ends(obj, {limb.last: len(limb.chain) for limb in detection.limbs})
    if family == "mikumikudance":
        for side in "左右":  # the feet follow the root on the floor, not the lower body (下半身)
            handle = obj.ik_rigger.limb_of(f"{side}ひざ").handle
            assert obj.data.bones[handle].parent.name == "全ての親"
            # The hands follow the chest, past the helpers at the shoulder (肩C, 肩P), not the shoulder.
            handle = obj.ik_rigger.limb_of(f"{side}手捩").handle
            assert obj.data.bones[handle].parent.name == "上半身2"


def test_auto_rig_rigs_bones_far_off_their_segments_on_a_hidden_chain():
    """An importer's bones three times their segments (a glTF robot at the default bone shapes): rigged
    as they are on a hidden chain, each handle on its foot; with Fix Bone Orientation, on the bones turned."""
    obj = make_armature([("hips", (0, 0, 1.0), (0, 0, 1.2), None, False),
                         ("thigh.L", (0.1, 0, 1.0), (0.1, -1.4, 1.0), "hips", False),
                         ("shin.L", (0.1, -0.02, 0.55), (0.1, -1.4, 0.55), "thigh.L", False),
                         ("foot.L", (0.1, 0, 0.1), (0.1, -0.1, 0.0), "shin.L", False)])
    tails = {bone.name: bone.tail_local.copy() for bone in obj.data.bones}
    foot = obj.data.bones["foot.L"].head_local.copy()
    for fix in (False, True):
        assert bpy.ops.ik_rigger.auto_rig(fix_orientation=fix) == {"FINISHED"}
        limb = obj.ik_rigger.limb_of("shin.L")
        assert list(records.inventory(limb).chain) == ["thigh.L", "shin.L"]
        assert (obj.data.bones[limb.handle].head_local - foot).length < 1e-4
        assert bool(records.resolve(obj, limb).solver) != fix
        assert ((obj.data.bones["shin.L"].tail_local - foot).length < 1e-4) == fix
        assert_handles_move_chain_ends(obj, {"shin.L": 2})
        if not fix:
            assert all(obj.data.bones[name].tail_local == tail for name, tail in tails.items())
            api.remove(obj, "shin.L")


def test_godots_robot_with_bones_three_times_their_segments():
    """A real import whose bones run far past their joints: the legs are skipped with the reason (their
    handles would float below the feet), and Auto-Rig with Fix Bone Orientation rigs them on the feet."""
    obj = import_gltf("godot_platformer_robot.glb")
    detection = detect_limbs(read_skeleton(obj))
    why = {item.bone: item.reason for item in detection.skipped}
    for leg in ("l-leg", "r-leg"):
        assert "far past the foot, to the handle" in why[leg] and "Fix Bone Orientation" in why[leg]
    # Auto-Rig solves them on hidden chains that end on the feet.
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert {limb.name for limb in obj.ik_rigger.limbs} == {"l-leg", "r-leg", "l-forearm", "r-forearm"}
    bones = obj.data.bones
    for side in "lr":
        limb = obj.ik_rigger.limb_of(f"{side}-leg")
        assert list(records.inventory(limb).chain) == [f"{side}-thigh", f"{side}-leg"]
        assert limb.extremity == f"{side}-foot"
        reach = bones[f"{side}-thigh"].length + bones[f"{side}-leg"].length
        assert (bones[limb.handle].head_local - bones[f"{side}-foot"].head_local).length < 1e-4 * reach
    assert_handles_move_chain_ends(obj, {"l-leg": 2, "r-leg": 2, "l-forearm": 2, "r-forearm": 2})


def test_godots_bug_with_glued_positions_and_copy_numbers():
    """``l-frontleg > l-frontleg001``: front glued to leg, and the second segment numbered as Blender numbers a copy."""
    obj = import_gltf("godot_platformer_bug.glb")
    detection = detect_limbs(read_skeleton(obj))
    assert sorted((limb.label, limb.chain) for limb in detection.limbs) == sorted(
        (f"{word} {position} leg", (f"{side}-{position.replace('hind', 'back')}leg",
                                    f"{side}-{position.replace('hind', 'back')}leg001"))
        for side, word in (("l", "left"), ("r", "right")) for position in ("front", "hind"))
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert_handles_move_chain_ends(obj, {f"{side}-{part}leg001": 2 for side in "lr" for part in ("front", "back")})


def test_cesium_mans_numbered_legs_found_and_its_foot_is_no_third_segment():
    """A COLLADA export's skeleton numbers each leg's joints after one word (``leg_joint_L_1 > _2 >
    _3 > _5``): the first two are thigh and shin, the third, a short foot, is the foot; its
    arms' numbers count COLLADA's copies of one name, so the hierarchy orders them."""
    obj = import_gltf("gltf_cesium_man_skeleton.gltf")
    detection = detect_limbs(read_skeleton(obj))
    assert [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs] == [
        (LEG, "L", ("leg_joint_L_1", "leg_joint_L_2"), "leg_joint_L_3"),
        (LEG, "R", ("leg_joint_R_1", "leg_joint_R_2"), "leg_joint_R_3"),
        (ARM, "L", ("Skeleton_arm_joint_L__4_", "Skeleton_arm_joint_L__3_"), "Skeleton_arm_joint_L__2_"),
        (ARM, "R", ("Skeleton_arm_joint_R", "Skeleton_arm_joint_R__2_"), "Skeleton_arm_joint_R__3_")]
    # The importer guessed each bone's direction: as long as its segment, pointing elsewhere.
    assert all(limb.tails_elsewhere for limb in detection.limbs)
    assert detection.skipped == ()  # the toes below the feet are no limbs to report


def test_bones_pointing_elsewhere_are_solved_on_a_hidden_chain_with_the_handle_on_the_ankle():
    """Cesium Man's bones are as long as their segments but point elsewhere (the importer's guess): IK
    runs on a hidden chain from joint to joint, the handle on the ankle; Fix Bone Orientation, asked
    for, turns the bones instead, the handle on the ankle too."""
    obj = import_gltf("gltf_cesium_man_skeleton.gltf")
    for fix in (False, True):
        built = api.auto_rig(obj, fix_orientation=fix)
        assert [limb.name for limb in built] == ["leg_joint_L_2", "leg_joint_R_2", "Skeleton_arm_joint_L__3_",
                                                 "Skeleton_arm_joint_R__2_"]
        assert all(any("hidden chain" in note for note in limb.notes) != fix for limb in built)
        for limb in built:
            ankle = obj.data.bones[limb.extremity].head_local
            assert (obj.data.bones[limb.bones["HANDLE"]].head_local - ankle).length < 1e-4
        assert_handles_move_chain_ends(obj, {limb.name: 2 for limb in built})
        for limb in built:
            api.remove(obj, limb.name)
def test_rigged_figures_numbered_arms_end_at_the_hand():
    """Numbered in turn, ``arm_joint_L_1 > _2 > _3``: the third, a leaf, is the hand, not a third
    segment; the legs' third, short, is the foot."""
    obj = import_gltf("gltf_rigged_figure_skeleton.gltf")
    detection = detect_limbs(read_skeleton(obj))
    assert [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs] == [
        (LEG, "L", ("leg_joint_L_1", "leg_joint_L_2"), "leg_joint_L_3"),
        (LEG, "R", ("leg_joint_R_1", "leg_joint_R_2"), "leg_joint_R_3"),
        (ARM, "L", ("arm_joint_L_1", "arm_joint_L_2"), "arm_joint_L_3"),
        (ARM, "R", ("arm_joint_R_1", "arm_joint_R_2"), "arm_joint_R_3")]
    built = api.auto_rig(obj, fix_orientation=True)
    assert len(built) == 4
    assert_handles_move_chain_ends(obj, {limb.name: 2 for limb in built})


@pytest.mark.parametrize("suffixed", [False, True], ids=["japanese sides", "mmd_tools sides"])
def test_a_mikumikudance_models_own_leg_ik_is_left_alone_and_its_arms_rigged(suffixed):
    """mmd_tools gives each knee the model's own IK (to 足ＩＫ, the leg IK bone): Auto-Rig rigs the
    arms, twist bones and all, and refuses the legs, naming that constraint, which it leaves as it was."""
    obj = make_armature([(name, head, tail, parent, False) for name, parent, head, tail in mmd(suffixed)])
    sided_name = (lambda word, side: f"{word}.{side}") if suffixed else (
        lambda word, side: f"{'左' if side == 'L' else '右'}{word}")
    for side in "LR":
        own = obj.pose.bones[sided_name("ひざ", side)].constraints.new("IK")
        own.name, own.target, own.subtarget, own.chain_count = "IK", obj, sided_name("足ＩＫ", side), 2
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert sorted(limb.name for limb in built) == sorted(sided_name("手捩", side) for side in "LR")
    refused = dict(skipped)
    for side in "LR":
        assert "already has an IK constraint 'IK'" in refused[sided_name("ひざ", side)]
        own = obj.pose.bones[sided_name("ひざ", side)].constraints
        assert [(c.type, c.subtarget, c.chain_count) for c in own] == [("IK", sided_name("足ＩＫ", side), 2)]
    # Each arm's IK spans its four bones; the hand's handle carries the wrist.
    assert_handles_move_chain_ends(obj, {**{sided_name("手捩", side): 4 for side in "LR"},
                                         **{sided_name("ひざ", side): 2 for side in "LR"}})
