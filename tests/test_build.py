"""The IK limb builder on invented skeletons: rest, reach, pole side, clone, records."""

from __future__ import annotations

import math
import random

import bpy
import pytest
from helpers import (
    both_legs,
    chain_length,
    evaluate,
    leg_bones,
    make_armature,
    rest,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
    tail,
)
from mathutils import Matrix, Vector

from ik_rigger import api
from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig import records
from ik_rigger.rig.build import build_limbs
from ik_rigger.rig.selection import is_selected


def build(obj: bpy.types.Object, last: str, **options) -> set[str]:
    set_active_bone(obj, last)
    return bpy.ops.ik_rigger.build_ik(**options)


def limb(obj: bpy.types.Object, last: str):
    found = obj.ik_rigger.limb_of(last)
    assert found is not None
    return found


def assert_rest_kept(obj: bpy.types.Object, before: dict[str, Matrix], names=None, degrees: float = 0.01) -> None:
    """Evaluated pose equals the rest given in ``before``: no bone moved or twisted."""
    posed = evaluate(obj)
    scale = max(bone.length for bone in obj.data.bones)
    for name in names or before:
        assert rotation_degrees(before[name], posed[name]) < degrees, name
        assert (before[name].translation - posed[name].translation).length < 1e-5 * scale, name


def move_handle(obj: bpy.types.Object, handle: str, offset: Vector, turn: Matrix | None = None) -> None:
    """Pose the handle by an armature-space offset (and rotation about its head)."""
    rest_matrix = obj.data.bones[handle].matrix_local
    target = rest_matrix.copy()
    if turn is not None:
        target = Matrix.Translation(rest_matrix.translation) @ turn.to_4x4() @ Matrix.Translation(
            -rest_matrix.translation) @ rest_matrix
    target.translation = rest_matrix.translation + offset
    obj.pose.bones[handle].matrix = target


@pytest.mark.parametrize("seed", range(6))
def test_building_changes_nothing_at_rest_whatever_rolls_and_object_transform(seed):
    rng = random.Random(seed)
    rolls = {name: rng.uniform(-math.pi, math.pi) for name in ("thigh.L", "shin.L", "foot.L", "toe.L")}
    obj = make_armature(leg_bones(bend=rng.choice((-1, 1)) * rng.uniform(0.02, 0.2)), rolls=rolls)
    obj.location = (rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(-3, 3))
    obj.rotation_euler = (rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(-3, 3))
    obj.scale = (1.5, 1.5, 1.5) if seed % 2 else (0.5, 2.0, 1.3)
    before = rest(obj)
    assert build(obj, "shin.L") == {"FINISHED"}
    assert_rest_kept(obj, before)


def test_handle_and_pole_sit_outside_the_chain():
    obj = make_armature(both_legs())
    assert build(obj, "shin.L") == {"FINISHED"}
    record = limb(obj, "shin.L")
    bones = obj.data.bones
    handle, pole = bones[record.handle], bones[record.pole]
    assert (handle.head_local - bones["shin.L"].tail_local).length < 1e-6
    assert not handle.use_connect and not pole.use_connect
    # The guide's Origin: the bone above the chain's parent.
    assert handle.parent.name == "root"
    assert pole.parent.name == "root"
    for made in (handle, pole):
        ancestors = {bone.name for bone in made.parent_recursive}
        assert not ancestors & {"thigh.L", "shin.L", "hips"}
    ik = obj.pose.bones["shin.L"].constraints[records.inventory(record).constraints[0][1]]
    # The IK aims at the stretch target, which follows the handle (never further than Maximum Stretch).
    target = obj.data.bones[ik.subtarget]
    assert ik.type == "IK" and target.parent.name == record.handle and ik.pole_subtarget == record.pole
    assert ik.chain_count == 2 and ik.target == obj and ik.pole_target == obj
    # The pole stands in front of the knee, on the side the chain bends (-Y here).
    knee = bones["shin.L"].head_local
    assert pole.head_local.y < knee.y - 0.1


def test_pole_parent_handle_option():
    obj = make_armature(leg_bones())
    assert build(obj, "shin.L", pole_parent="HANDLE") == {"FINISHED"}
    record = limb(obj, "shin.L")
    assert obj.data.bones[record.pole].parent.name == record.handle


def test_unparented_handle_without_a_bone_above_the_chain_parent():
    obj = make_armature([("hips", (0, 0, 1.0), (0, 0, 1.2), None, False)] + leg_bones()[2:])
    assert build(obj, "shin.L") == {"FINISHED"}
    assert obj.data.bones[limb(obj, "shin.L").handle].parent is None


def reach_sweep(obj: bpy.types.Object, last: str, chain: list[str], count: int = 40, seed: int = 0,
                solves: int = 1) -> None:
    """Move the handle to reachable targets; the end lands on it, the middle joint bends to the pole (within
    ``solves`` solves from the rest pose: iTaSC, which starts from its last state, now and then lands on the
    other bend on a loaded machine and not when solved again alike)."""
    record = limb(obj, last)
    length = chain_length(obj, chain)
    bones = obj.data.bones
    root = bones[chain[0]].head_local
    pole_head = bones[record.pole].head_local
    rng = random.Random(seed)
    end_rest = bones[last].tail_local
    for _ in range(count):
        direction = Vector((rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1))).normalized()
        target = end_rest + direction * rng.uniform(0.0, 0.3) * length
        if (target - root).length > 0.95 * length or (target - root).length < 0.3 * length:
            continue
        axis = (target - root).normalized()
        pole_side = (pole_head - root) - axis * (pole_head - root).dot(axis)
        for _ in range(solves):
            # Each target from the rest pose: iTaSC solves from where it last was, so every solve starts alike.
            obj.pose.bones[record.handle].matrix_basis = Matrix.Identity(4)
            evaluate(obj)
            move_handle(obj, record.handle, target - end_rest)
            posed = evaluate(obj)
            end = tail(posed[last], bones[last].length)
            assert (end - target).length < 1e-3 * length, (target, end)
            # Bend side: the middle joint stands out from the root-target line toward the pole.
            middle = posed[chain[len(chain) // 2]].translation
            out = (middle - root) - axis * (middle - root).dot(axis)
            if out.dot(pole_side) > 0.0:
                break
        assert out.dot(pole_side) > 0.0, target


@pytest.mark.parametrize("solver", ["LEGACY", "ITASC"])
def test_chain_end_reaches_every_reachable_target_and_bends_to_the_pole(solver):
    obj = make_armature(both_legs())
    obj.pose.ik_solver = solver
    if solver == "ITASC":
        # iTaSC stops at its precision (0.001 by default, in armature units): tighter than the check below.
        obj.pose.ik_param.precision = 1e-5
        obj.pose.ik_param.iterations = 500
        # By default it iterates only on the first evaluation and then steps from the last solution: solve
        # each one whole.
        obj.pose.ik_param.reiteration_method = "ALWAYS"
    before = rest(obj)
    assert build(obj, "shin.L") == {"FINISHED"}
    assert_rest_kept(obj, before)
    reach_sweep(obj, "shin.L", ["thigh.L", "shin.L"], solves=2 if solver == "ITASC" else 1)


def tentacle(count: int, straight: bool = False) -> list:
    bones = [("root", (0, 0, 0), (0, 0.3, 0), None, False), ("base", (0, 0, 2.0), (0, 0, 2.2), "root", False)]
    z = 2.0
    parent = "base"
    for index in range(count):
        sway = 0.0 if straight else 0.04 * math.sin(math.pi * (index + 1) / count)
        name = f"tentacle_{index + 1:02d}"
        bones.append((name, (0, -0.04 * math.sin(math.pi * index / count) if not straight else 0, z),
                      (0, -sway, z - 0.3), parent, True))
        z -= 0.3
        parent = name
    return bones


@pytest.mark.parametrize("count", [3, 6])
def test_longer_chains(count):
    obj = make_armature(tentacle(count))
    chain = [f"tentacle_{index + 1:02d}" for index in range(count)]
    before = rest(obj)
    assert build(obj, chain[-1], chain_length=count) == {"FINISHED"}
    assert obj.pose.bones[chain[-1]].constraints[0].chain_count == count
    assert_rest_kept(obj, before)
    reach_sweep(obj, chain[-1], chain, count=25)


def test_connected_and_unconnected_chains():
    bones = leg_bones()
    bones[3] = ("shin.L", (0.2, -0.05, 0.5), (0.2, 0, 0.1), "thigh.L", False)  # gap below the knee
    obj = make_armature(bones)
    before = rest(obj)
    assert build(obj, "shin.L") == {"FINISHED"}
    assert_rest_kept(obj, before)
    reach_sweep(obj, "shin.L", ["thigh.L", "shin.L"], count=20)


def test_centimetre_skeleton():
    scaled = [(name, tuple(100 * v for v in head), tuple(100 * v for v in tail_), parent, connected)
              for name, head, tail_, parent, connected in leg_bones()]
    obj = make_armature(scaled)
    before = rest(obj)
    assert build(obj, "shin.L") == {"FINISHED"}
    assert_rest_kept(obj, before)
    reach_sweep(obj, "shin.L", ["thigh.L", "shin.L"], count=20)


def test_straight_leg_is_prebent_toward_the_toes_ends_fixed():
    obj = make_armature(leg_bones(bend=0.0))
    before = rest(obj)
    thigh_head = obj.data.bones["thigh.L"].head_local.copy()
    ankle = obj.data.bones["shin.L"].tail_local.copy()
    assert build(obj, "shin.L") == {"FINISHED"}
    bones = obj.data.bones
    assert (bones["thigh.L"].head_local - thigh_head).length < 1e-6
    assert (bones["shin.L"].tail_local - ankle).length < 1e-6
    for name in ("thigh.L", "shin.L"):
        turned = rotation_degrees(before[name], bones[name].matrix_local)
        assert 0.1 < turned <= 2.0, (name, turned)
    # The knee went forward (-Y): where the foot points.
    assert bones["shin.L"].head_local.y < -1e-4
    # Nothing twists against the new rest, and the leg bends when the foot comes up.
    assert_rest_kept(obj, rest(obj))
    record = limb(obj, "shin.L")
    move_handle(obj, record.handle, Vector((0, 0, 0.3)))
    posed = evaluate(obj)
    assert posed["shin.L"].translation.y < -0.1
    # Clearing the pose (Alt+R) keeps the fix: it lives in the rest skeleton.
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    move_handle(obj, record.handle, Vector((0, 0, 0.3)))
    assert evaluate(obj)["shin.L"].translation.y < -0.1


def test_straight_arm_bends_backwards():
    bones = [
        ("spine", (0, 0, 1.0), (0, 0, 1.4), None, False),
        ("shoulder.L", (0.05, 0, 1.4), (0.2, 0, 1.4), "spine", False),
        ("upper_arm.L", (0.2, 0, 1.4), (0.5, 0, 1.4), "shoulder.L", True),
        ("forearm.L", (0.5, 0, 1.4), (0.8, 0, 1.4), "upper_arm.L", True),
        ("hand.L", (0.8, 0, 1.4), (0.9, 0, 1.4), "forearm.L", True),
    ]
    obj = make_armature(bones)
    assert build(obj, "forearm.L") == {"FINISHED"}
    assert obj.data.bones["forearm.L"].head_local.y > 1e-4
    assert obj.data.bones[limb(obj, "forearm.L").handle].parent.name == "spine"


def test_straight_chain_bend_direction_can_be_chosen():
    obj = make_armature(leg_bones(bend=0.0))
    assert build(obj, "shin.L", bend_direction="X_POS") == {"FINISHED"}
    assert obj.data.bones["shin.L"].head_local.x > 0.2 + 1e-4


def test_clone_planted_foot():
    obj = make_armature(both_legs())
    assert build(obj, "shin.L") == {"FINISHED"}
    record = limb(obj, "shin.L")
    bones = obj.data.bones
    clone = bones[record.clone]
    assert record.extremity == "foot.L"
    assert clone.parent.name == record.handle
    for a, b in zip(clone.matrix_local, bones["foot.L"].matrix_local):
        assert max(abs(x - y) for x, y in zip(a, b)) < 1e-5
    foot_rest = bones["foot.L"].matrix_local
    # Rotating the handle rotates the foot identically.
    turn = Matrix.Rotation(math.radians(30), 3, Vector((1, 0.3, 0.2)).normalized())
    move_handle(obj, record.handle, Vector((0, -0.05, 0.1)), turn)
    posed = evaluate(obj)
    handle_turn = posed[record.handle].to_3x3() @ bones[record.handle].matrix_local.to_3x3().inverted()
    foot_turn = posed["foot.L"].to_3x3() @ foot_rest.to_3x3().inverted()
    assert rotation_degrees(handle_turn.to_4x4(), foot_turn.to_4x4()) < 0.01
    planted = posed["foot.L"].copy()
    # Moving the body leaves the planted foot where and how it was.
    obj.pose.bones["hips"].location = (0.03, -0.1, 0.02)  # down along the hips bone, within reach
    obj.pose.bones["hips"].rotation_quaternion = Matrix.Rotation(0.2, 3, "Z").to_quaternion()
    moved = evaluate(obj)
    assert rotation_degrees(planted, moved["foot.L"]) < 0.01
    assert (planted.translation - moved["foot.L"].translation).length < 1e-3 * chain_length(obj, ["thigh.L", "shin.L"])
    assert (moved["shin.L"].translation - posed["shin.L"].translation).length > 1e-3


@pytest.mark.parametrize("mode,types", [
    ("ROTATION", ["COPY_ROTATION"]),
    ("ROTATION_SCALE", ["COPY_ROTATION", "COPY_SCALE"]),
    ("TRANSFORMS", ["COPY_TRANSFORMS"]),
])
def test_copy_modes(mode, types):
    obj = make_armature(leg_bones())
    before = rest(obj)
    assert build(obj, "shin.L", copy_mode=mode) == {"FINISHED"}
    assert [c.type for c in obj.pose.bones["foot.L"].constraints] == types
    assert_rest_kept(obj, before)


def test_no_extremity_and_named_extremity():
    obj = make_armature(leg_bones())
    assert build(obj, "shin.L", extremity_mode="NONE") == {"FINISHED"}
    assert limb(obj, "shin.L").clone == ""
    assert not obj.pose.bones["foot.L"].constraints
    assert build(obj, "shin.L", extremity_mode="BONE", extremity_name="toe.L") == {"FINISHED"}
    assert limb(obj, "shin.L").extremity == "toe.L"
    assert obj.pose.bones["toe.L"].constraints


def test_manual_pole_angle_and_no_pole():
    obj = make_armature(leg_bones())
    assert build(obj, "shin.L", pole_angle_auto=False, pole_angle=0.5) == {"FINISHED"}
    record = limb(obj, "shin.L")
    ik_name = records.inventory(record).constraints[0][1]
    assert obj.pose.bones["shin.L"].constraints[ik_name].pole_angle == pytest.approx(0.5)
    assert build(obj, "shin.L", use_pole=False) == {"FINISHED"}
    record = limb(obj, "shin.L")
    assert record.pole == ""
    assert obj.pose.bones["shin.L"].constraints[0].pole_target is None


def test_rebuild_updates_in_place():
    obj = make_armature(both_legs())
    assert build(obj, "shin.L") == {"FINISHED"}
    names = set(obj.data.bones.keys())
    record = limb(obj, "shin.L")
    obj.pose.bones[record.handle].location = (0.0, 0.0, 0.1)
    set_active_bone(obj, record.handle)  # any bone of the limb finds it
    assert bpy.ops.ik_rigger.build_ik(copy_mode="TRANSFORMS") == {"FINISHED"}
    assert set(obj.data.bones.keys()) == names
    assert len(obj.ik_rigger.limbs) == 1
    assert [c.type for c in obj.pose.bones["shin.L"].constraints] == ["IK"]
    assert [c.type for c in obj.pose.bones["foot.L"].constraints] == ["COPY_TRANSFORMS"]
    assert tuple(obj.pose.bones[record.handle].location) == pytest.approx((0.0, 0.0, 0.1))


def test_what_was_done_is_a_note_and_what_to_look_at_a_warning():
    """A pre-bend records what the build did (a note); a constraint of the user's that IK overrides asks
    them to look (a warning). The operators report the first as INFO and the second as WARNING."""
    from ik_rigger import api
    from ik_rigger.operators import report_notes

    obj = make_armature(leg_bones(bend=0.0))
    obj.pose.bones["thigh.L"].constraints.new("LIMIT_ROTATION").use_limit_x = True
    limb = api.build(obj, "shin.L")[0]
    prebent = [note for note in limb.notes if "was pre-bent" in note]
    overridden = [note for note in limb.notes if "has its own Limit Rotation" in note]
    assert prebent and overridden
    assert limb.warnings == tuple(overridden)
    assert not any(api.is_warning(note) for note in prebent)

    class Reports:
        said: list[tuple[set[str], str]] = []

        def report(self, kind: set[str], text: str) -> None:
            self.said.append((kind, text))

    operator = Reports()
    report_notes(operator, limb.notes, about=limb.name)
    assert ({"INFO"}, f"shin.L: {prebent[0]}") in operator.said
    assert ({"WARNING"}, f"shin.L: {overridden[0]}") in operator.said
    assert [kind for kind, _ in operator.said].count({"WARNING"}) == 1


def test_rebuilding_a_prebent_chain_keeps_the_original_rest_for_removal():
    obj = make_armature(leg_bones(bend=0.0))
    before = snapshot(obj)
    assert build(obj, "shin.L") == {"FINISHED"}
    assert build(obj, "shin.L") == {"FINISHED"}
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert same(snapshot(obj), before)


def test_both_sides():
    obj = make_armature(both_legs())
    assert build(obj, "shin.L", both_sides=True) == {"FINISHED"}
    assert {item.name for item in obj.ik_rigger.limbs} == {"shin.L", "shin.R"}
    assert "foot_IK.R" in obj.data.bones and "foot_IK.L" in obj.data.bones
    reach_sweep(obj, "shin.R", ["thigh.R", "shin.R"], count=15)


def test_remove_restores_everything():
    obj = make_armature(both_legs())
    obj.data.collections.new("Body").assign(obj.data.bones["hips"])
    obj.pose.bones["thigh.L"].color.palette = "THEME09"
    before = snapshot(obj)
    assert build(obj, "shin.L", both_sides=True) == {"FINISHED"}
    set_active_bone(obj, "foot_IK.L")
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    set_active_bone(obj, "thigh.R")
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert same(snapshot(obj), before)


def test_collections_colours_and_names():
    obj = make_armature(both_legs())
    body = obj.data.collections.new("Body")
    for bone in obj.data.bones:
        body.assign(bone)
    assert build(obj, "shin.L") == {"FINISHED"}
    record = limb(obj, "shin.L")
    bones = obj.data.bones
    assert (record.handle, record.pole, record.clone) == ("foot_IK.L", "shin_IK_pole.L", "foot_IK_clone.L")
    for name in (record.handle, record.pole, record.clone):
        assert not bones[name].use_deform
        assert "Body" not in {c.name for c in bones[name].collections}
    assert [c.name for c in bones[record.handle].collections] == ["IK Controls"]
    assert [c.name for c in bones[record.clone].collections] == ["IK Mechanism"]
    assert {bone.name for bone in body.bones} == {"root", "hips", "thigh.L", "shin.L", "foot.L", "toe.L", "thigh.R",
                                                  "shin.R", "foot.R", "toe.R"}
    assert bones[record.handle].color.palette == "THEME04"
    assert bones[record.pole].color.palette == "THEME04"
    assert obj.pose.bones["thigh.L"].color.palette == "THEME01"
    assert bones[record.clone].color.palette not in {"THEME01", "THEME03", "THEME04", "DEFAULT"}


def test_existing_names_are_never_overwritten():
    bones = leg_bones() + [("foot_IK.L", (1, 1, 1), (1, 1, 1.2), None, False)]
    obj = make_armature(bones)
    assert build(obj, "shin.L") == {"FINISHED"}
    assert limb(obj, "shin.L").handle == "foot_IK2.L"
    assert obj.data.bones["foot_IK.L"].head_local == Vector((1, 1, 1))


def test_user_ends_in_the_mode_they_started_in():
    obj = make_armature(leg_bones(), mode="EDIT")
    obj.data.edit_bones.active = obj.data.edit_bones["shin.L"]
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert obj.mode == "EDIT"
    assert "foot_IK.L" in obj.data.edit_bones


def test_library_api_builds_several_limbs_in_one_call():
    obj = make_armature(both_legs())
    bpy.ops.object.mode_set(mode="OBJECT")
    plans = build_limbs(obj, [("shin.L", LimbOptions()), ("shin.R", LimbOptions(copy_mode="TRANSFORMS"))])
    assert [plan.chain for plan in plans] == [("thigh.L", "shin.L"), ("thigh.R", "shin.R")]
    assert obj.mode == "OBJECT"
    assert [c.type for c in obj.pose.bones["foot.R"].constraints] == ["COPY_TRANSFORMS"]


def test_save_and_reload(tmp_path):
    obj = make_armature(both_legs())
    assert build(obj, "shin.L") == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    path = str(tmp_path / "rigged.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Rig"]
    record = limb(obj, "shin.L")
    assert record.handle == "foot_IK.L" and list(records.inventory(record).chain) == ["thigh.L", "shin.L"]
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert len(obj.ik_rigger.limbs) == 1
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert "foot_IK.L" not in obj.data.bones


def test_a_chain_bones_own_turning_constraint_is_named_and_applies_at_fk():
    """A thigh already turned by a constraint of the user's (a Copy Rotation from a control, as a
    control rig leaves it): the build says IK turns it whatever the constraint says while IK is
    on, leaves the constraint as it was, and at FK the thigh turns as before the build."""
    from ik_rigger import api

    obj = make_armature([*leg_bones("L"), ("control", (0.6, 0, 1.0), (0.6, 0, 1.3), "root", False)])
    turned = obj.pose.bones["thigh.L"].constraints.new("COPY_ROTATION")
    turned.name, turned.target, turned.subtarget = "From control", obj, "control"
    obj.pose.bones["control"].rotation_mode = "XYZ"
    obj.pose.bones["control"].rotation_euler = (math.radians(20.0), 0.0, 0.0)
    muted = obj.pose.bones["shin.L"].constraints.new("LIMIT_ROTATION")
    muted.mute = True  # switched off: nothing to say
    before = evaluate(obj)
    limb = api.build(obj, "shin.L")[0]
    notes = [note for note in limb.notes if "own" in note and "constraint" in note]
    assert notes == ["'thigh.L' has its own Copy Rotation constraint 'From control': while IK is on, IK turns the "
                     "bone whatever it says (IK limits are what limit a chain); with IK/FK at FK it applies as before"]
    assert [(c.name, c.subtarget, c.mute) for c in obj.pose.bones["thigh.L"].constraints][0] == (
        "From control", "control", False)
    length = chain_length(obj, ("thigh.L", "shin.L"))
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    at_rest = evaluate(obj)
    target = at_rest[handle.name].translation.lerp(at_rest["thigh.L"].translation, 0.2)  # toward the hip
    handle.matrix = Matrix.Translation(target - at_rest[handle.name].translation) @ at_rest[handle.name]
    posed = evaluate(obj)
    assert (tail(posed["shin.L"], obj.data.bones["shin.L"].length) - target).length < 1e-3 * length
    handle["ik_fk"] = 0.0
    obj.update_tag()  # a custom property set from Python tells no one; the panel's switch does
    fk = evaluate(obj)
    assert rotation_degrees(fk["thigh.L"], before["thigh.L"]) < 0.01
    assert (fk["thigh.L"].translation - before["thigh.L"].translation).length < 1e-5 * length


def test_the_mechanism_is_hidden_and_the_controls_shown():
    """Before: on Blender 4.2 the stretch target and reach, the foot roll's pivots and the parent socket
    had Bone.hide off, and the IK Mechanism collection was visible on both; on 5.x they had Bone.hide on,
    which no longer hides a bone in Pose mode (PoseBone.hide does), so with the collection shown they
    could be grabbed. Read as Blender reads it: Select All in Pose mode passes over a hidden bone."""
    obj = make_armature(both_legs())
    limb = api.build(obj, "shin.L", foot_roll=True, parent_switch=True)[0]
    bones, collections = obj.data.bones, obj.data.collections_all
    hidden = ("TARGET", "REACH", "HEEL", "TIP", "BANK_OUT", "BANK_IN", "TOE_PIVOT", "SOCKET")
    assert not collections["IK Mechanism"].is_visible
    for role in ("TARGET", "REACH", "HEEL", "CLONE", "TOE_CLONE"):
        assert [collection.name for collection in bones[limb.bones[role]].collections] == ["IK Mechanism"], role
    # What animators grab, and the pole line they look at, stay in sight.
    assert collections["IK Controls"].is_visible
    for role in ("HANDLE", "POLE", "ROLL", "POLE_LINE"):
        assert [collection.name for collection in bones[limb.bones[role]].collections] == ["IK Controls"], role
    collections["IK Mechanism"].is_visible = True  # shown, for debugging: the hidden bones stay hidden
    bpy.ops.object.mode_set(mode="POSE")
    bpy.ops.pose.select_all(action="SELECT")
    assert {role: is_selected(obj, limb.bones[role]) for role in hidden} == dict.fromkeys(hidden, False)
    assert all(is_selected(obj, limb.bones[role]) for role in ("HANDLE", "POLE", "ROLL", "CLONE"))


def test_the_bone_stage_refuses_to_run_out_of_edit_mode():
    """Out of Edit mode the edit bones are a stale copy Blender drops: the stage stops before any change."""
    from ik_rigger.rig import edit_pass
    from ik_rigger.rig.build import plan_limbs
    from ik_rigger.rig.journal import Journal

    obj = make_armature(both_legs())
    plans = plan_limbs(obj, [("shin.L", LimbOptions())])
    bones = sorted(bone.name for bone in obj.data.bones)
    mode = obj.mode
    with pytest.raises(RuntimeError, match=f"runs in Edit mode, and 'Rig' is in {mode} mode"):
        edit_pass.bone_stage(obj, plans, {}, {}, Journal(obj))
    assert sorted(bone.name for bone in obj.data.bones) == bones
    assert obj.mode == mode != "EDIT" and not obj.ik_rigger.limbs
