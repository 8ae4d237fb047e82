"""Hinge Joints with Fix Bone Orientation on the legs a hidden chain would otherwise carry: Quaternius'
T-rex, whose three-bone legs bend at the knee and the ankle about hinges 20 degrees apart. Its hidden chain
is rolled on each joint's own hinge (tests/test_imports_hinged_hidden_chain.py); turning the user's bones
instead rolled them all on the chain's one plane, so Hinge Joints refused every leg ("no limbs found").
Each bone is now rolled on its own joint's hinge. Where the user's bones run joint to joint but are rolled
off their hinge (Godot's platformer robot's forearms, 59 and 31 degrees off), Hinge Joints refused the arms;
they are now solved on a hidden chain rolled on its hinges, which the user's bones follow, left as they were.
"""

from __future__ import annotations

import math

import bpy
from helpers import DATA, at_rest_alone, evaluate, same, snapshot
from mathutils import Matrix
from option_matrix import no_cycles

from ik_rigger import api
from ik_rigger.rig import records


def _imported(filename: str) -> bpy.types.Object:
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    at_rest_alone(obj)
    return obj


def _free_axis(obj: bpy.types.Object, name: str) -> str:
    free = [axis for axis in "xyz" if not getattr(obj.pose.bones[name], f"lock_ik_{axis}")]
    assert len(free) == 1 and free[0] in "xz", (name, free)
    return free[0]


def _assert_on_hinges(obj: bpy.types.Object, chain) -> None:
    """Each joint of ``chain`` has its free axis on the bend of its rest (rolled onto its hinge)."""
    bones = obj.data.bones
    for parent, joint in zip(chain, chain[1:]):
        up = bones[parent].tail_local - bones[parent].head_local
        down = bones[joint].tail_local - bones[joint].head_local
        axis = bones[joint].matrix_local.col["xyz".index(_free_axis(obj, joint))].xyz
        assert abs(axis.normalized().dot(up.cross(down).normalized())) > math.cos(math.radians(0.1)), joint


def _pulled_in(obj: bpy.types.Object, handle_name: str, root: str, chain) -> dict:
    """The evaluated pose with the handle moved a fifth of the way toward ``root``'s head, which must bend
    ``chain``'s first joint."""
    bones = obj.data.bones
    moved = bones[handle_name].matrix_local.copy()
    moved.translation += (bones[root].head_local - moved.translation) * 0.2
    obj.pose.bones[handle_name].matrix = moved
    posed = evaluate(obj)
    first, second = chain[0], chain[1]
    rest_bend = bones[first].matrix_local.inverted() @ bones[second].matrix_local
    assert (rest_bend.inverted() @ posed[first].inverted() @ posed[second]).to_quaternion().angle > 1e-3
    return posed


def test_fix_bone_orientation_rolls_each_joint_on_its_own_hinge_and_the_legs_bend_about_them():
    obj = _imported("gltf_quaternius_trex.glb")
    skipped: list[tuple[str, str]] = []
    limbs = api.auto_rig(obj, hinge_joints=True, fix_orientation=True, skipped=skipped)
    assert len(limbs) == 4 and not skipped, skipped
    bones = obj.data.bones
    for limb in limbs:
        parts = records.resolve(obj, obj.ik_rigger.limb_of(limb.name))
        assert not parts.solver, limb.name  # on the user's bones, turned
        _assert_on_hinges(obj, limb.chain)
        # The handle moved toward the hip: each joint turns about its hinge alone, and the leg does bend.
        posed = _pulled_in(obj, parts.handle, limb.chain[0], limb.chain)
        for parent, joint in zip(limb.chain, limb.chain[1:]):
            index = "xyz".index(_free_axis(obj, joint))
            rest = bones[parent].matrix_local.inverted() @ bones[joint].matrix_local
            now = posed[parent].inverted() @ posed[joint]
            assert rest.col[index].xyz.normalized().dot(now.col[index].xyz.normalized()) > 0.9999, joint
        obj.pose.bones[parts.handle].matrix_basis = Matrix.Identity(4)


def test_bones_rolled_off_their_hinges_are_hinged_on_a_hidden_chain_and_left_as_they_are():
    obj = _imported("godot_platformer_robot.glb")
    rests = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    skipped: list[tuple[str, str]] = []
    limbs = {limb.name: limb for limb in api.auto_rig(obj, hinge_joints=True, skipped=skipped)}
    assert len(limbs) == 4, (limbs, skipped)
    assert not [why for _, why in skipped if "hinge" in why], skipped
    bones = obj.data.bones
    for name in ("l-forearm", "r-forearm"):
        limb = next(limb for limb in limbs.values() if name in limb.chain)
        assert any(f"{name} is rolled so neither its X nor its Z axis" in note for note in limb.notes), limb.notes
        parts = records.resolve(obj, obj.ik_rigger.limb_of(limb.name))
        assert parts.solver, limb.name  # a hidden chain, the user's bones kept
        _assert_on_hinges(obj, parts.solver)
        posed = _pulled_in(obj, parts.handle, limb.chain[0], parts.solver)
        # The user's forearm follows the hidden chain's joint: it bends with it.
        assert (posed[name].translation - bones[name].matrix_local.translation).length > 1e-3 * bones[name].length
        obj.pose.bones[parts.handle].matrix_basis = Matrix.Identity(4)
    for name, rest in rests.items():  # the user's bones, rolls included, as they were
        assert max(abs(a - b) for row_a, row_b in zip(bones[name].matrix_local, rest)
                   for a, b in zip(row_a, row_b)) < 1e-5, name


def test_a_rebuild_turning_hinge_joints_on_and_off_moves_the_arm_onto_its_hidden_chain_and_back():
    """Rigged without Hinge Joints, the robot's forearm runs its IK on the user's bones; a rebuild with them
    moves it onto a hidden chain, one without them back, and Remove gives everything back."""
    obj = _imported("godot_platformer_robot.glb")
    bare = snapshot(obj)
    arm = next(limb for limb in api.auto_rig(obj) if "l-forearm" in limb.chain)
    steps = [({"hinge_joints": True}, True), ({"hinge_joints": False}, False)]
    for options, hidden in steps:
        with no_cycles(f"a rebuild with {options}"):
            api.build(obj, arm.name, both_sides=False, **options)
        parts = records.resolve(obj, obj.ik_rigger.limb_of(arm.name))
        assert bool(parts.solver) == hidden, options
    for limb in [limb.name for limb in obj.ik_rigger.limbs]:
        api.remove(obj, limb)
    assert same(snapshot(obj), bare)
