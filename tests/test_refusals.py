"""Bad input: a clear message naming the bone or object, and the armature left as it was."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import (
    both_legs,
    chain_length,
    evaluate,
    leg_bones,
    make_armature,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
)
from mathutils import Quaternion, Vector

from ik_rigger import api
from ik_rigger.core.errors import RigError
from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig import records
from ik_rigger.rig.build import build_limbs


def refused(obj: bpy.types.Object, match: str, **options) -> None:
    """build_ik fails with a message matching ``match`` and changes nothing."""
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match=match):
        bpy.ops.ik_rigger.build_ik(**options)
    assert same(snapshot(obj), before)


def test_active_object_not_an_armature():
    mesh = bpy.data.objects.new("Cube", bpy.data.meshes.new("Cube"))
    bpy.context.scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh
    with pytest.raises(RuntimeError, match="Make an armature the active object"):
        bpy.ops.ik_rigger.build_ik()
    with pytest.raises(RigError, match="'Cube' is a mesh, not an armature"):
        build_limbs(mesh, [("shin.L", LimbOptions())])


def test_no_active_bone():
    obj = make_armature(leg_bones())
    obj.data.bones.active = None
    with pytest.raises(RuntimeError, match="Make a bone active"):
        bpy.ops.ik_rigger.build_ik()


def test_object_mode_is_refused_by_poll():
    obj = make_armature(leg_bones(), mode="OBJECT")
    set_active_bone(obj, "shin.L")
    with pytest.raises(RuntimeError, match="Pose or Edit mode"):
        bpy.ops.ik_rigger.build_ik()


def test_chain_longer_than_the_hierarchy():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.L': has only 3 parent bone\(s\), so a chain of 5 bones", chain_length=5)


def test_missing_extremity_name():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, "'heel.L': is not a bone of this armature", extremity_mode="BONE", extremity_name="heel.L")


def test_extremity_inside_the_chain():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, "'thigh.L': is in the chain", extremity_mode="BONE", extremity_name="thigh.L")


@pytest.mark.parametrize("parent,match", [
    ("thigh.L", "dependency cycle"),
    ("toe.L", "dependency cycle"),
    ("hips", "moves with the chain's parent"),
    ("nowhere", "is not a bone of this armature"),
])
def test_handle_parent_inside_the_chain(parent, match):
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, f"'{parent}': .*{match}", handle_parent_mode="BONE", handle_parent=parent)


def test_user_ik_constraint_already_there():
    obj = make_armature(leg_bones())
    obj.pose.bones["shin.L"].constraints.new("IK")
    set_active_bone(obj, "shin.L")
    refused(obj, "'shin.L': already has an IK constraint")


def test_auto_rig_skips_a_limb_it_cannot_rig_and_rigs_the_others(capsys):
    """A limb detection is sure of may still be refused (here, the user's own IK on it): Auto-Rig and
    the API skip it with the reason and rig the other limbs, leaving that one as it was."""
    obj = make_armature(both_legs())
    user_ik = obj.pose.bones["shin.L"].constraints.new("IK")
    from ik_rigger import api

    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert [limb.name for limb in built] == ["shin.R"]
    assert skipped == [("shin.L", "already has an IK constraint 'IK'; delete that constraint, or rig another chain")]
    assert list(obj.pose.bones["shin.L"].constraints) == [user_ik]
    api.remove(obj, "shin.R")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    out = capsys.readouterr()
    assert "Skipped 'shin.L': already has an IK constraint 'IK'" in out.out + out.err


def test_chain_already_in_another_limb():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    set_active_bone(obj, "toe.L")
    refused(obj, "'shin.L': already belongs to the limb ending at 'shin.L'", chain_length=3)


def test_one_bad_limb_of_several_changes_nothing():
    obj = make_armature(both_legs())
    before = snapshot(obj)
    with pytest.raises(RigError, match="'nope'"):
        build_limbs(obj, [("shin.L", LimbOptions()), ("nope", LimbOptions())])
    assert same(snapshot(obj), before)


def test_remove_on_a_bone_without_limb():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    with pytest.raises(RuntimeError, match="not part of a limb rigged by IK Rigger"):
        bpy.ops.ik_rigger.remove_ik()


def _linked_rig(tmp_path) -> bpy.types.Object:
    make_armature(leg_bones(), mode="OBJECT")
    library = str(tmp_path / "library.blend")
    bpy.data.libraries.write(library, {bpy.data.objects["Rig"]})
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (source, target):
        target.objects = ["Rig"]
    obj = target.objects[0]
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    return obj


def test_linked_armature(tmp_path):
    obj = _linked_rig(tmp_path)
    with pytest.raises(RigError, match="'Rig' is linked from the library"):
        build_limbs(obj, [("shin.L", LimbOptions())])
    assert "foot_IK.L" not in obj.data.bones


def test_library_override(tmp_path):
    linked = _linked_rig(tmp_path)
    obj = linked.override_create(remap_local_usages=True)
    assert obj.override_library is not None
    before = snapshot(obj)
    with pytest.raises(RigError, match="library override"):
        build_limbs(obj, [("shin.L", LimbOptions())])
    assert same(snapshot(obj), before)


def test_armature_in_a_hidden_collection():
    obj = make_armature(leg_bones(), mode="OBJECT")
    collection = bpy.data.collections.new("Characters")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)
    collection.hide_viewport = True
    before = snapshot(obj)
    with pytest.raises(RigError, match="the collection 'Characters', disabled in viewports"):
        build_limbs(obj, [("shin.L", LimbOptions())])
    assert same(snapshot(obj), before)
    assert not obj.hide_viewport


def test_hidden_armature_is_shown_for_the_build_and_hidden_again():
    obj = make_armature(leg_bones(), mode="OBJECT")
    obj.hide_set(True)
    build_limbs(obj, [("shin.L", LimbOptions())])
    assert obj.hide_get()
    assert "foot_IK.L" in obj.data.bones


# Rigs that would come out broken: refused by name, with what to do, nothing changed.

def _leg(thigh_head=(0.2, 0.0, 1.0), knee=(0.2, -0.05, 0.55), shin_head=None, end=(0.2, 0.0, 0.1)):
    """hips > thigh.L > shin.L > foot.L with the chain's joints where a test wants them."""
    shin_head = knee if shin_head is None else shin_head
    return [
        ("root", (0, 0, 0), (0, 0.5, 0), None, False),
        ("hips", (0, 0, 1.0), (0, 0, 1.2), "root", False),
        ("thigh.L", thigh_head, knee, "hips", False),
        ("shin.L", shin_head, end, "thigh.L", shin_head == knee),
        ("foot.L", end, (end[0], end[1] - 0.2, end[2] - 0.1), "shin.L", True),
    ]


def _at_rest_unchanged(obj: bpy.types.Object, before: dict, chain: list[str]) -> None:
    """Every bone that was there is posed as before the build (no jump, no flip)."""
    after = evaluate(obj)
    length = chain_length(obj, chain)
    for name, matrix in before.items():
        assert rotation_degrees(matrix, after[name]) < 0.05, name
        assert (matrix.translation - after[name].translation).length < 1e-4 * length, name


def test_shin_starting_at_the_thigh_head():
    obj = make_armature(_leg(shin_head=(0.2, 0.0, 1.0)))
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.L': starts where 'thigh.L' starts .*no joint between them\. In Edit Mode, move the head "
                 r"of 'shin.L' to the tail of 'thigh.L'")


@pytest.mark.parametrize("length", [1e-5, 1e-3, 0.01])
def test_near_zero_length_shin(length):
    obj = make_armature(_leg(end=(0.2, -0.05 - 0.3 * length, 0.55 - length)))
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.L': is .* long, too short for IK .*In Edit Mode, move its tail away from its head")


def test_near_zero_length_thigh():
    obj = make_armature(_leg(thigh_head=(0.2, -0.05, 0.5505), knee=(0.2, -0.05, 0.55)))
    set_active_bone(obj, "shin.L")
    refused(obj, r"'thigh.L': is .* long, too short for IK")


@pytest.mark.parametrize("degrees_apart", [0.0, 2.0])
def test_chain_folded_back_on_itself(degrees_apart):
    # The shin runs back up along the thigh, to half its length.
    angle = math.radians(degrees_apart)
    thigh = Vector((0.0, -0.05, -0.45))
    back = Quaternion(Vector((1.0, 0.0, 0.0)), angle) @ -thigh * 0.5
    knee = Vector((0.2, -0.05, 0.55))
    obj = make_armature(_leg(knee=tuple(knee), end=tuple(knee + back)))
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.L': turns back along 'thigh.L' .*folded back on itself.*open the joint between 'thigh.L' "
                 r"and 'shin.L'")


def test_chain_ending_where_it_starts():
    # Three bones round a triangle: no bone folds, but the end is back at the root.
    bones = [
        ("hips", (0, 0, 1.0), (0, 0, 1.2), None, False),
        ("a", (0.2, 0.0, 1.0), (0.2, 0.0, 0.5), "hips", False),
        ("b", (0.2, 0.0, 0.5), (0.2, -0.433, 0.75), "a", True),
        ("c", (0.2, -0.433, 0.75), (0.2, 0.0, 1.0), "b", True),
    ]
    obj = make_armature(bones)
    set_active_bone(obj, "c")
    refused(obj, r"'c': ends where the chain a > c starts .*move the joints so the tail of 'c' lies away from the "
                 r"head of 'a'", chain_length=3)


def test_chain_longer_than_blender_ik_allows():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.L': a chain of 300 bones is longer than Blender's IK allows \(255\)\. Set the chain length "
                 r"to 255 or less", chain_length=300)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_armature_object_scaled_to_zero(axis):
    obj = make_armature(leg_bones())
    obj.scale[axis] = 0.0
    set_active_bone(obj, "shin.L")
    refused(obj, f"'Rig' is scaled to 0 on {'XYZ'[axis]}, .*Give the object .*a non-zero scale on every axis")


def test_armature_scaled_to_zero_by_its_parent():
    obj = make_armature(leg_bones())
    parent = bpy.data.objects.new("Mover", None)
    bpy.context.scene.collection.objects.link(parent)
    obj.parent = parent
    parent.scale = (1.0, 1.0, 0.0)
    set_active_bone(obj, "shin.L")
    refused(obj, "'Rig' is scaled to 0 on Z by its parent or constraints")


def _user_ik(obj: bpy.types.Object, owner: str, kind: str = "IK", chain_count: int = 0,
             use_tail: bool = True) -> bpy.types.Constraint:
    constraint = obj.pose.bones[owner].constraints.new(kind)
    constraint.chain_count = chain_count
    if kind == "IK":
        target = bpy.data.objects.new("Target", None)
        bpy.context.scene.collection.objects.link(target)
        constraint.target = target
        constraint.use_tail = use_tail
    return constraint


@pytest.mark.parametrize("owner,kind,chain_count,use_tail,match", [
    ("thigh.L", "IK", 1, True, "'thigh.L': already has an IK constraint 'IK'. Delete that constraint"),
    ("foot.L", "IK", 1, True, "'foot.L': already has an IK constraint 'IK'"),
    ("toe.L", "IK", 0, True, "'foot.L': is already moved by the IK constraint 'IK' on 'toe.L', whose chain reaches "
                             "up to it. Delete that constraint, or lower its Chain Length so it stops below 'foot.L'"),
    ("foot.L", "IK", 1, False, "'shin.L': is already moved by the IK constraint 'IK' on 'foot.L'"),
    ("toe.L", "SPLINE_IK", 3, True, "'foot.L': is already moved by the Spline IK constraint 'Spline IK' on 'toe.L'"),
])
def test_chain_already_moved_by_another_ik(owner, kind, chain_count, use_tail, match):
    obj = make_armature(leg_bones())
    _user_ik(obj, owner, kind, chain_count, use_tail)
    set_active_bone(obj, "shin.L")
    refused(obj, match)


def test_ik_rigger_keep_option_does_not_let_another_ik_through():
    obj = make_armature(leg_bones())
    _user_ik(obj, "foot.L", chain_count=1)
    set_active_bone(obj, "shin.L")
    refused(obj, "'foot.L': already has an IK constraint", keep_extremity_constraints=True)


def _foot_control(obj: bpy.types.Object) -> bpy.types.Constraint:
    """A user Copy Rotation on foot.L from a control bone lying exactly on it at rest."""
    modes_before = obj.mode
    bpy.ops.object.mode_set(mode="EDIT")
    foot = obj.data.edit_bones["foot.L"]
    control = obj.data.edit_bones.new("foot_FK.L")
    control.head, control.tail, control.roll = foot.head, foot.tail, foot.roll
    control.parent = obj.data.edit_bones["root"]
    bpy.ops.object.mode_set(mode=modes_before)
    constraint = obj.pose.bones["foot.L"].constraints.new("COPY_ROTATION")
    constraint.target = obj
    constraint.subtarget = "foot_FK.L"
    return constraint


@pytest.mark.parametrize("kind,copy_mode", [("COPY_ROTATION", "ROTATION"), ("LIMIT_ROTATION", "ROTATION"),
                                            ("LIMIT_SCALE", "ROTATION_SCALE"), ("LIMIT_LOCATION", "TRANSFORMS"),
                                            ("CHILD_OF", "ROTATION")])
def test_extremity_constraint_the_copy_would_override(kind, copy_mode):
    obj = make_armature(leg_bones())
    constraint = obj.pose.bones["foot.L"].constraints.new(kind)
    set_active_bone(obj, "shin.L")
    refused(obj, f"'foot.L': has its own .* constraint '{constraint.name}', which IK Rigger's .* would override "
                 "while IK is on. Turn on Keep Extremity Constraints to keep it", copy_mode=copy_mode)


def test_extremity_constraint_the_copy_leaves_alone_is_kept_without_asking():
    obj = make_armature(leg_bones())
    obj.pose.bones["foot.L"].constraints.new("LIMIT_SCALE")
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(copy_mode="ROTATION") == {"FINISHED"}
    names = [constraint.type for constraint in obj.pose.bones["foot.L"].constraints]
    assert names == ["LIMIT_SCALE", "COPY_ROTATION"]


def test_keep_extremity_constraints_puts_ik_riggers_after_the_users():
    obj = make_armature(leg_bones())
    user = _foot_control(obj)
    before = evaluate(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(keep_extremity_constraints=True) == {"FINISHED"}
    constraints = obj.pose.bones["foot.L"].constraints
    assert constraints[0] == user and constraints[0].subtarget == "foot_FK.L"
    assert [c.type for c in constraints[1:]] == ["COPY_ROTATION"] and constraints[1].subtarget == "foot_IK_clone.L"
    _at_rest_unchanged(obj, before, ["thigh.L", "shin.L"])
    at_rest = evaluate(obj)
    # While IK is on, IK Rigger's copy, coming after, decides: the foot no longer
    # follows the user's control but turns with the handle.
    control = obj.pose.bones["foot_FK.L"]
    control.rotation_mode = "XYZ"
    control.rotation_euler = (0.0, 0.0, math.radians(40.0))
    assert rotation_degrees(evaluate(obj)["foot.L"], at_rest["foot.L"]) < 0.05
    handle = obj.pose.bones["foot_IK.L"]
    handle.rotation_mode = "XYZ"
    handle.rotation_euler = (math.radians(30.0), 0.0, 0.0)
    posed = evaluate(obj)
    turn = posed["foot_IK.L"].to_quaternion() @ at_rest["foot_IK.L"].to_quaternion().inverted()
    expected = (turn @ at_rest["foot.L"].to_quaternion()).to_matrix().to_4x4()
    assert rotation_degrees(posed["foot.L"], expected) < 0.05
    assert rotation_degrees(posed["foot.L"], at_rest["foot.L"]) > 29.0


def test_rebuild_judges_the_users_extremity_constraints_by_their_place():
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    constraints = obj.pose.bones["foot.L"].constraints
    # Put after IK Rigger's copy, a limit applies after it: nothing is overridden.
    constraints.new("LIMIT_ROTATION")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert [c.type for c in constraints] == ["COPY_ROTATION", "LIMIT_ROTATION"]
    # Moved before it, the copy would override it.
    constraints.move(1, 0)
    refused(obj, "'foot.L': has its own Limit Rotation constraint 'Limit Rotation'")
    assert bpy.ops.ik_rigger.build_ik(keep_extremity_constraints=True) == {"FINISHED"}
    assert [c.type for c in constraints] == ["LIMIT_ROTATION", "COPY_ROTATION"]


# Near cases that are sound rigs: they must still build, and the rest pose must not move.

def _builds_unchanged(obj: bpy.types.Object, last: str = "shin.L", **options) -> None:
    before = evaluate(obj)
    set_active_bone(obj, last)
    assert bpy.ops.ik_rigger.build_ik(**options) == {"FINISHED"}
    assert obj.ik_rigger.limbs[0].name == last
    _at_rest_unchanged(obj, before, list(records.inventory(obj.ik_rigger.limbs[0]).chain))


def test_slightly_bent_chain_builds():
    _builds_unchanged(make_armature(leg_bones(bend=0.012)))


def test_chain_bent_150_degrees_at_the_knee_builds():
    # The shin turns 150 degrees from the thigh's direction: a knee bent far up.
    knee = Vector((0.2, 0.0, 0.55))
    thigh = Vector((0.0, 0.0, -1.0))
    shin = Quaternion(Vector((1.0, 0.0, 0.0)), math.radians(150.0)) @ thigh * 0.45
    _builds_unchanged(make_armature(_leg(knee=tuple(knee), end=tuple(knee + shin))))


@pytest.mark.parametrize("ratio", [1 / 20, 20.0])
def test_two_bone_chain_of_very_unequal_lengths_builds(ratio):
    # The shin a twentieth of the thigh or twenty times it, bent 30 degrees at the knee.
    thigh_head, knee = Vector((0.2, 0.0, 1.0)), Vector((0.2, 0.0, 0.55))
    shin = Quaternion(Vector((1.0, 0.0, 0.0)), math.radians(30.0)) @ (knee - thigh_head) * ratio
    _builds_unchanged(make_armature(_leg(thigh_head=tuple(thigh_head), knee=tuple(knee), end=tuple(knee + shin))))


def test_short_bone_whose_child_starts_away_from_its_tail_builds():
    # A thigh of 1% of the leg, its shin starting at the knee: the lever is the gap.
    thigh_head, knee = Vector((0.2, 0.0, 1.0)), Vector((0.2, -0.05, 0.55))
    stub = thigh_head + (knee - thigh_head) * 0.02
    bones = _leg(thigh_head=tuple(thigh_head), knee=tuple(stub), shin_head=tuple(knee))
    _builds_unchanged(make_armature(bones))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_negative_scale_on_one_axis_builds(axis):
    obj = make_armature(leg_bones())
    obj.scale[axis] = -1.0
    _builds_unchanged(obj)


def test_ik_elsewhere_on_the_armature_builds():
    obj = make_armature(leg_bones())
    _user_ik(obj, "toe.L", chain_count=1)
    _builds_unchanged(obj)


# Both Sides: the other side must mirror this one, bone for bone.

def _both_legs_without(*removed: str, reparent: dict[str, str] | None = None) -> list:
    bones = []
    for name, head, tail, parent, connected in both_legs():
        if name in removed:
            continue
        if reparent and name in reparent:
            parent, connected = reparent[name], False
        bones.append((name, head, tail, parent, connected))
    return bones


def test_both_sides_with_a_bone_missing_on_the_other_side():
    obj = make_armature(_both_legs_without("thigh.R", reparent={"shin.R": "hips"}))
    set_active_bone(obj, "shin.L")
    refused(obj, r"'thigh.R': is missing, so the other side's chain would be hips > shin.R instead of thigh.R > "
                 r"shin.R, the mirror of thigh.L > shin.L\. Add 'thigh.R' as the parent of 'shin.R'.*or turn Both "
                 r"Sides off", both_sides=True)


def test_both_sides_with_a_bone_parented_elsewhere():
    obj = make_armature(_both_legs_without(reparent={"shin.R": "hips"}))
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.R': is parented to 'hips' where 'shin.L' is parented to 'thigh.L'.*Parent 'shin.R' to "
                 r"'thigh.R'", both_sides=True)



def test_both_sides_with_one_sides_bone_renamed_without_its_side():
    """The left thigh renamed 'upper_leg_custom': the refusal told the user to parent the right shin to the
    left thigh. Its mirror is a name it lacks, which is what to give it."""
    obj = make_armature(both_legs())
    obj.data.bones["thigh.L"].name = "upper_leg_custom"
    set_active_bone(obj, "shin.L")
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match=r"'shin.R': is parented to 'thigh.R' where 'shin.L' is parented to "
                       r"'upper_leg_custom', whose name says no side.*Give 'upper_leg_custom' the name of its side, "
                       r"'thigh.L' \(the mirror of 'thigh.R'\)") as refusal:
        bpy.ops.ik_rigger.build_ik(both_sides=True)
    assert "Parent 'shin.R'" not in str(refusal.value)
    assert same(snapshot(obj), before)
    with pytest.raises(api.RigError, match="Give 'upper_leg_custom' the name of its side, 'thigh.L'"):
        api.build(obj, "shin.L", both_sides=True)


def test_both_sides_from_a_shared_bone_parented_elsewhere_on_the_other_side():
    """A chain of 3 from the hips (no side, shared by both legs), the right thigh under a 'pelvis.R' where the left
    is under the hips: whether the hips are one side's bone or both sides' is not in the names, so both ways out
    are given."""
    bones = both_legs()
    hips = next(bone for bone in bones if bone[0] == "hips")
    pelvis = [(f"pelvis.{side}", hips[1], hips[2], "hips", False) for side in "LR"]
    legs = _both_legs_without(reparent={"thigh.R": "pelvis.R"})
    obj = make_armature([*legs[:2], *pelvis, *legs[2:]])
    set_active_bone(obj, "shin.L")
    refused(obj, r"'thigh.R': is parented to 'pelvis.R' where 'thigh.L' is parented to 'hips', whose name says no "
                 r"side.*If 'hips' is one side's bone: give 'hips' the name of its side, 'pelvis.L' \(the mirror of "
                 r"'pelvis.R'\), so the two sides' names mirror\. If both sides share it: parent 'thigh.R' to it\. Or "
                 r"turn Both Sides off\.", both_sides=True, chain_length=3)

def test_both_sides_with_the_extremity_missing_on_the_other_side():
    obj = make_armature(_both_legs_without("foot.R", "toe.R"))
    set_active_bone(obj, "shin.L")
    refused(obj, r"'foot.R': is missing, so the chain ending at 'shin.R' has no extremity mirroring 'foot.L'",
            both_sides=True)


def test_both_sides_with_an_extremity_that_does_not_mirror():
    # foot.R exists but starts far from the shin's end, so it is no extremity there.
    bones = [(name, (head[0], head[1], head[2] + 0.3) if name == "foot.R" else head, tail, parent,
              False if name == "foot.R" else connected)
             for name, head, tail, parent, connected in both_legs()]
    obj = make_armature(bones)
    set_active_bone(obj, "shin.L")
    refused(obj, r"'shin.R': its extremity would be none, where the other side's is 'foot.L'", both_sides=True)


def test_both_sides_with_the_extremity_bone_not_named():
    # Said as for one side, not as a mirror mismatch ("none, where the other side's is none").
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    refused(obj, r"no bone is named as Extremity Bone, which extremity_mode asks for \(option extremity_name\)\. "
            r"Name an existing bone in extremity_name, or change extremity_mode", both_sides=True,
            extremity_mode="BONE")


def test_both_sides_reads_the_bones_as_edited():
    # In Edit mode, the mirror is judged on the edit bones, not the last saved ones.
    obj = make_armature(both_legs(), mode="EDIT")
    obj.data.edit_bones["shin.R"].use_connect = False
    obj.data.edit_bones["shin.R"].parent = obj.data.edit_bones["hips"]
    obj.data.edit_bones.active = obj.data.edit_bones["shin.L"]
    with pytest.raises(RuntimeError, match="'shin.R': is parented to 'hips'"):
        bpy.ops.ik_rigger.build_ik(both_sides=True)
    assert obj.mode == "EDIT"
    assert not obj.ik_rigger.limbs


def test_motion_with_a_bone_scaled_to_zero_on_a_frame():
    """Before: 'Matrix.invert(ed): matrix does not have an inverse' (rolled back, no bone or frame named)."""
    obj = make_armature(leg_bones())
    shin = obj.pose.bones["shin.L"]
    for frame, size in ((1, 1.0), (5, 0.0), (10, 1.0)):
        shin.scale = (size, size, size)
        shin.keyframe_insert("scale", frame=frame)
    bpy.context.scene.frame_set(1)
    before = snapshot(obj)
    with pytest.raises(RigError, match=r"'shin\.L': is scaled to 0 on frame 5, so its motion cannot be baked onto IK "
                                       r"controls .*Leave Playing in FK or Ignore"):
        api.build(obj, "shin.L")
    assert same(snapshot(obj), before)
    # As the hint says: left playing in FK, nothing is baked.
    assert api.build(obj, "shin.L", animation="FK")[0].chain == ("thigh.L", "shin.L")


@pytest.mark.parametrize("distance", [1e30, 1e8])
def test_a_pole_farther_than_single_precision_holds_is_refused(distance):
    """Before, on Blender 4.2: KeyError, the pole bone gone (its head and tail one float apart, so
    Blender dropped it); on 5.2 a pole out past where single precision places a bone."""
    obj = make_armature(leg_bones())
    before = snapshot(obj)
    with pytest.raises(RigError, match=r"'shin\.L': pole distance 1e\+(30|08) is outside 0\.05 to 100 \(option "
                                       r"pole_distance\)\. Set pole_distance between 0\.05 and 100"):
        api.build(obj, "shin.L", pole_distance=distance)
    assert same(snapshot(obj), before)
    assert api.build(obj, "shin.L", pole_distance=100.0)[0].bones["POLE"] in obj.data.bones


@pytest.mark.parametrize("values", [{"chain_length": 2.0}, {"use_pole": 1}, {"chain_length": True, "use_pole": True}],
                         ids=["float", "int", "bool"])
def test_options_equal_to_ones_that_built_but_of_the_wrong_type_are_still_refused(values):
    """Options that passed are not checked again, but 2.0 equals 2 and 1 equals True: the value's type
    counts too, and the armature stays as it was."""
    obj = make_armature(both_legs())
    build_limbs(obj, [("shin.L", LimbOptions(chain_length=2, use_pole=True))])
    before = snapshot(obj)
    with pytest.raises(RigError, match="must be"):
        build_limbs(obj, [("shin.R", LimbOptions(**values))])
    assert same(snapshot(obj), before)
