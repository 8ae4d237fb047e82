"""The benchmarks' floors make IK Rigger's rig: the same bones, constraints, shapes and drivers, posing the same.

A ratio against a floor that makes less (no stretch drivers, say) would flatter or blame IK Rigger for
work the floor never did; ``build_speed.compare`` is what every benchmark run checks this with. Nothing
here is timed.
"""

from __future__ import annotations

import addon_utils
import bpy
import pytest
from helpers import make_armature
from mathutils import Vector

from benchmarks import build_speed, creature, floor
from ik_rigger import api

# (IK Rigger's options, the floor's switches): the default options, no stretch, a plain script's.
SETS = {"default": ({}, {}), "without_stretch": ({"max_stretch": 1.0}, {"stretch": False}),
        "plain": (build_speed.PLAIN, floor.PLAIN)}


def metarig() -> bpy.types.Object:
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    obj = bpy.context.active_object
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def rigged_metarigs(chosen: dict, switches: dict) -> tuple[bpy.types.Object, bpy.types.Object, set[str]]:
    """IK Rigger's four limbs on one metarig, the floor's on another beside it; the metarig's own bones."""
    ours = metarig()
    original = set(ours.data.bones.keys())
    api.build_many(ours, [(last, api.options(**chosen)) for last in build_speed.LASTS])
    theirs = metarig()
    floor.rig_four_limbs(theirs, **switches)
    return ours, theirs, original


def reach_far(obj: bpy.types.Object, handle: str, chain: tuple[str, str], stretch: float) -> Vector:
    """Where the chain's end goes, in armature space, with the handle 1.4 chain lengths out from its rest
    along the leg and its ``stretch`` switch at ``stretch`` (if it has one)."""
    pose_bone = obj.pose.bones[handle]
    if "stretch" in pose_bone:
        pose_bone["stretch"] = stretch
    length = sum(obj.data.bones[name].length for name in chain)
    bone = obj.data.bones[handle]
    down = (obj.data.bones[chain[1]].tail_local - obj.data.bones[chain[0]].head_local).normalized()
    pose_bone.location = bone.matrix_local.to_3x3().inverted() @ (down * 0.4 * length)
    bpy.context.view_layer.update()
    return obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones[chain[1]].tail.copy()


@pytest.mark.parametrize("options", list(SETS))
def test_the_floor_makes_ik_riggers_rig_on_the_metarig_drivers_and_all(options):
    """With each set of options the floor makes IK Rigger's bones, constraints, shapes and drivers (the
    stretch drivers of every chain bone with stretch on), and the rig poses as IK Rigger's: the leg
    stretched as far when the handle's Stretch is 1, and not at all at 0."""
    chosen, switches = SETS[options]
    ours, theirs, original = rigged_metarigs(chosen, switches)
    mine, floors = build_speed.signature(ours, original), build_speed.signature(theirs, original)
    assert build_speed.compare(floors, mine)["same"], build_speed.compare(floors, mine)["problems"]
    stretching = options == "default"
    assert len(floors["drivers"]) == 4 * 2 + (8 if stretching else 0)
    assert bool(floors["shapes"]) == (options != "plain")
    chain = ("thigh.L", "shin.L")
    length = sum(ours.data.bones[name].length for name in chain)
    for stretch in (0.0, 1.0):
        mine_end, floors_end = (reach_far(obj, "foot_IK.L", chain, stretch) for obj in (ours, theirs))
        assert (mine_end - floors_end).length < 1e-4 * length
        root = ours.data.bones[chain[0]].head_local
        reached = (mine_end - root).length / length
        assert reached > 1.3 if stretching and stretch else reached < 1.0 + 1e-3


def test_a_floor_without_the_drivers_is_not_ik_riggers_rig():
    """The comparison counts drivers: a floor leaving them out is told apart, by what it lacks."""
    ours, theirs, original = rigged_metarigs({}, {"drivers": False})
    found = build_speed.compare(build_speed.signature(theirs, original), build_speed.signature(ours, original))
    assert not found["same"]
    assert any("drivers differ" in problem and "shin.L:ik_stretch" in problem for problem in found["problems"])


@pytest.mark.parametrize("options", ["default", "plain"])
def test_the_floor_operator_makes_ik_riggers_rig_on_the_creature(options):
    """The matrix's floors on the many-legged creature: the floor operator, told the legs, makes the rig
    ``api.build_many`` makes of them, from Pose mode, and leaves the armature in Pose mode."""
    chosen, switches = SETS[options]
    legs = 4
    ours = make_armature(creature.bones(legs), name="creature", mode="OBJECT")
    original = set(ours.data.bones.keys())
    api.build_many(ours, [(last, api.options(**chosen)) for _, last, _ in creature.legs(legs)])
    theirs = make_armature(creature.bones(legs), name="creature", mode="POSE")
    floor.register()
    try:
        assert bpy.ops.benchmark.floor(legs=legs, **switches) == {"FINISHED"}
    finally:
        floor.unregister()
    assert theirs.mode == "POSE"
    found = build_speed.compare(build_speed.signature(theirs, original), build_speed.signature(ours, original))
    assert found["same"], found["problems"]


def _undo_a_look(obj: bpy.types.Object, look: str) -> None:
    """Take one of IK Rigger's looks off the floor's rig: what a floor that did not make it would leave."""
    pose_bone = obj.pose.bones["foot_IK.L"]
    if look == "collections":
        obj.data.collections.remove(obj.data.collections_all[floor.MECHANISM])
    elif look == "colour":
        pose_bone.bone.color.palette = "DEFAULT"
    elif look == "chain colour":
        obj.pose.bones["shin.L"].color.palette = "DEFAULT"
    elif look == "slider":
        pose_bone.id_properties_ui("ik_fk").clear()
    elif look == "overridable":
        pose_bone.property_overridable_library_set('["ik_weight"]', False)
    elif look == "hidden":
        hidden = obj.pose.bones["foot_IK_target.L"]
        owner = hidden if "hide" in bpy.types.PoseBone.bl_rna.properties else hidden.bone
        owner.hide = False


@pytest.mark.parametrize("look", ["collections", "colour", "chain colour", "slider", "overridable", "hidden"])
def test_a_floor_without_ik_riggers_looks_is_not_ik_riggers_rig(look):
    """The comparison counts what an animator sees of the rig too: the floor makes IK Rigger's bone
    collections, colours, hidden mechanism and sliders, and a floor leaving any out is told apart."""
    ours, theirs, original = rigged_metarigs({}, {})
    assert build_speed.compare(build_speed.signature(theirs, original), build_speed.signature(ours, original))["same"]
    _undo_a_look(theirs, look)
    found = build_speed.compare(build_speed.signature(theirs, original), build_speed.signature(ours, original))
    assert not found["same"], look


@pytest.mark.parametrize("constraint", [False, True])
def test_the_mode_switches_operator_changes_nothing_but_its_one_constraint(constraint):
    """The scaling series' references: three mode switches give back the armature as it was, in Pose mode,
    and with ``constraint`` they add one Copy Rotation, which poses the first bone as the last."""
    obj = make_armature(creature.bones(2), name="creature", mode="POSE")
    obj.pose.bones[-1].rotation_mode = "XYZ"
    obj.pose.bones[-1].rotation_euler = (0.0, 0.0, 0.7)
    before = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    floor.register()
    try:
        assert bpy.ops.benchmark.mode_switches(constraint=constraint) == {"FINISHED"}
    finally:
        floor.unregister()
    assert obj.mode == "POSE"
    assert {bone.name: bone.matrix_local for bone in obj.data.bones} == before
    made = [(bone.name, item.type, item.subtarget) for bone in obj.pose.bones for item in bone.constraints]
    first, last = obj.pose.bones[0], obj.pose.bones[-1]
    assert made == ([(first.name, "COPY_ROTATION", last.name)] if constraint else [])
    bpy.context.view_layer.update()
    turned = first.matrix.to_quaternion().rotation_difference(last.matrix.to_quaternion()).angle
    assert (turned < 1e-4) == constraint
