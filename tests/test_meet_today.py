"""Today's behaviours meet the options, the ways in and the files earlier releases rigged.

A muted IK of the user's on the chain is kept with a note, Plant Feet on the current frame keys with
auto-keying on, and a rebuild keeps the collections, colour and shape size the user gave the controls: each
with soft IK, stretch off and on, Hinge Joints, Fix Bone Orientation, Foot Roll, parent switching, each copy
mode, a chain of 3, Both Sides, the pole on the handle and Bone Shapes off, through the API, the operators'
redo, the batch with a config naming the limb's options, Remove, the files rigged by earlier releases, and
in a Blender without IK Rigger. On evaluated poses, tolerances relative to the leg's length.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import pytest
from helpers import at_rest_alone, both_legs, chain_length, evaluate, make_armature, same, set_active_bone, snapshot
from mathutils import Matrix
from option_matrix import no_cycles
from test_game_rig_feet_elsewhere import _foot_controls_outside
from test_hidden_chain import import_gltf
from test_hostile_held import _ground, _held_here, _plays, _state, _walking_in_fk
from test_idle_user_constraints import _keyed_on_later, _users_ik
from test_keying_preferences import _after_a_scrub, _keyed_handles
from test_pipeline import as_matrix, play_elsewhere
from test_rigged_earlier import COMMITS, _open

from ik_rigger import api
from ik_rigger.batch import rig_file as files
from ik_rigger.batch.command import config_schema
from ik_rigger.limb.config import parse_config
from ik_rigger.limb.options import schema
from ik_rigger.rig import records

LEG = ["thigh.L", "shin.L"]
OPTIONS: dict[str, dict[str, object]] = {
    "defaults": {},
    "soft IK": {"soft_ik": 0.2},
    "stretch off": {"max_stretch": 1.0},
    "stretch on": {"max_stretch": 2.0},
    "hinge joints": {"hinge_joints": True},
    "fix orientation": {"fix_orientation": True},
    "foot roll": {"foot_roll": True},
    "parent switching": {"parent_switch": True, "other_parent": "hips"},
    "copy rotation and scale": {"copy_mode": "ROTATION_SCALE"},
    "copy transforms": {"copy_mode": "TRANSFORMS"},
    "chain of 3": {"chain_length": 3},
    "pole on the handle": {"pole_parent": "HANDLE"},
    "bone shapes off": {"shapes": False},
}


def _sides(option: str) -> bool:
    """Both Sides, but for a chain of 3 (both legs would take in the hips: refused)."""
    return option != "chain of 3"


def _moved_toward_hips(obj: bpy.types.Object, handle: str, chain: list[str]) -> tuple[Matrix, dict[str, Matrix]]:
    """The handle moved 30% of the way to the chain's root, in the leg's own plane (a hinge can follow, soft
    IK does not ease it); returns how the handle moved and the evaluated pose."""
    rested = evaluate(obj)
    start = rested[handle].translation
    goal = start.lerp(rested[chain[0]].translation, 0.3)
    obj.pose.bones[handle].matrix = Matrix.Translation(goal - start) @ rested[handle]
    posed = evaluate(obj)
    return posed[handle] @ rested[handle].inverted(), posed


def _assert_foot_carried(obj: bpy.types.Object, limb: api.Limb, rested: dict[str, Matrix]) -> None:
    """Moving the handle carries the foot with it and bends the knee forward."""
    length = chain_length(obj, limb.chain)
    delta, posed = _moved_toward_hips(obj, limb.bones["HANDLE"], list(limb.chain))
    foot = limb.extremity
    wanted = delta @ rested[foot]
    assert (posed[foot].translation - wanted.translation).length < 1e-3 * length, f"{foot} left its handle"
    knee = posed[limb.chain[-1]].translation
    assert knee.y < rested[limb.chain[-1]].translation.y - 0.05 * length, "the knee did not come forward"
    obj.pose.bones[limb.bones["HANDLE"]].matrix_basis = Matrix.Identity(4)
    evaluate(obj)


@pytest.mark.parametrize("option", list(OPTIONS))
def test_a_muted_ik_of_the_users_is_kept_with_each_option_and_given_back_by_remove(option: str) -> None:
    obj = make_armature(both_legs())
    users = _users_ik(obj, "muted")
    before = snapshot(obj)
    rested = evaluate(obj)
    built = api.build(obj, "shin.L", both_sides=_sides(option), **OPTIONS[option])
    left = built[0]
    assert any("'Old IK'" in note and "(muted)" in note and not api.is_warning(note) for note in left.notes)
    assert not [note for limb in built for note in limb.notes if api.is_warning(note)]
    assert (users.mute, users.subtarget) == (True, "old_foot_target.L")
    _assert_foot_carried(obj, left, rested)
    # A rebuild with another option keeps it too; removing every limb gives the armature back as it was.
    api.build(obj, "shin.L", pole_distance=1.5)
    assert obj.pose.bones["shin.L"].constraints["Old IK"] == users
    for limb in built:
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)


PLAYED = {"Soft": OPTIONS["soft IK"], "Rolled": {**OPTIONS["foot roll"], **OPTIONS["parent switching"]},
          "Hinged": {**OPTIONS["hinge joints"], **OPTIONS["fix orientation"], "copy_mode": "TRANSFORMS"}}


def test_rigs_beside_a_muted_ik_of_the_users_play_the_same_without_ik_rigger(tmp_path: Path) -> None:
    expected = {}
    for name, values in PLAYED.items():
        obj = make_armature(both_legs(), name=name)
        _users_ik(obj, "muted")
        limb = api.build(obj, "shin.L", both_sides=True, **values)[0]
        bpy.ops.object.mode_set(mode="OBJECT")
        _moved_toward_hips(obj, limb.bones["HANDLE"], list(limb.chain))
        expected[name] = (evaluate(obj), chain_length(obj, LEG))
    path = tmp_path / "muted.blend"
    _assert_plays_elsewhere(path, expected, tmp_path)


@pytest.mark.parametrize("option", list(OPTIONS))
def test_plant_feet_on_the_current_frame_with_auto_keying_keys_with_each_option(option: str) -> None:
    """From the operator, as the sidebar calls it: the feet stay planted after a scrub away and back."""
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(both_sides=_sides(option), **OPTIONS[option]) == {"FINISHED"}
    handles = _keyed_handles(obj)
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    obj.ik_rigger.ground = _ground(0.2)
    bpy.context.scene.frame_set(5)
    assert bpy.ops.ik_rigger.plant_feet(frames="CURRENT") == {"FINISHED"}
    planted = evaluate(obj)
    feet = [limb.extremity for limb in api.limbs(obj)]
    assert all(abs(planted[foot].translation.z - planted["foot.L"].translation.z) < 1e-4 for foot in feet)
    assert planted["foot.L"].translation.z > 0.15
    shown = _after_a_scrub(obj, 5)
    for name in (*feet, *handles, "hips"):
        assert (shown[name].translation - planted[name].translation).length < 1e-5, name


def _dress(obj: bpy.types.Object, limb: api.Limb) -> None:
    """The animator's touches: the handle moved from IK Controls into 'Feet', coloured, its shape sized;
    the pole in both."""
    bones = obj.data.bones
    handle, pole = bones[limb.bones["HANDLE"]], bones[limb.bones["POLE"]]
    feet = obj.data.collections_all.get("Feet") or obj.data.collections.new("Feet")
    for collection in list(handle.collections):
        collection.unassign(handle)
    feet.assign(handle)
    feet.assign(pole)
    handle.color.palette = "THEME09"
    obj.pose.bones[handle.name].custom_shape_scale_xyz = (2.0, 2.0, 2.0)


def _assert_dressed(obj: bpy.types.Object, limb: api.Limb) -> None:
    bones = obj.data.bones
    handle, pole = bones[limb.bones["HANDLE"]], bones[limb.bones["POLE"]]
    assert sorted(c.name for c in handle.collections) == ["Feet"]
    assert "Feet" in {c.name for c in pole.collections} and len(pole.collections) == 2
    assert handle.color.palette == "THEME09"
    assert tuple(obj.pose.bones[handle.name].custom_shape_scale_xyz) == pytest.approx((2.0, 2.0, 2.0))


@pytest.mark.parametrize("option", [name for name in OPTIONS if name != "defaults"])
def test_the_build_operators_redo_with_each_option_keeps_what_the_user_gave_the_controls(option: str) -> None:
    """Built from the sidebar, dressed, then Build IK Limb run again with the option and once more without
    it (its redo); Remove IK Limb then takes the rig out, leaving the user's collection."""
    obj = make_armature(both_legs())
    rested = evaluate(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(both_sides=_sides(option)) == {"FINISHED"}
    left = api.limbs(obj)[0]
    _dress(obj, left)
    defaults = {declared.name: declared.default for declared in schema()}
    for values in (OPTIONS[option], {name: defaults[name] for name in OPTIONS[option]}):
        set_active_bone(obj, left.bones["HANDLE"])
        assert bpy.ops.ik_rigger.build_ik(both_sides=_sides(option), **values) == {"FINISHED"}
        now = next(limb for limb in api.limbs(obj) if limb.name == left.name)
        _assert_dressed(obj, now)
        _assert_foot_carried(obj, now, rested)
    for limb in api.limbs(obj):
        set_active_bone(obj, limb.bones["HANDLE"])
        assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert not len(obj.ik_rigger.limbs) and not len(obj.data.collections_all["Feet"].bones)
    assert obj.pose.bones["shin.L"].constraints.keys() == []


def test_the_batch_with_a_config_naming_the_limbs_options_keeps_the_users_touches(tmp_path: Path) -> None:
    obj = make_armature(both_legs(), name="Hero")
    _users_ik(obj, "muted")
    left = api.build(obj, "shin.L", both_sides=True)[0]
    _dress(obj, left)
    source = tmp_path / "hero.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    config = parse_config('[[armature]]\nname = "Hero"\n\n[[armature.limb]]\nlast = "shin.L"\nboth_sides = true\n'
                          'foot_roll = true\nsoft_ik = 0.2\nhinge_joints = true\ncopy_mode = "TRANSFORMS"\n'
                          'pole_parent = "HANDLE"\n', config_schema())
    result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "hero.blend")), config)
    assert result.status == "rigged", result.error
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "hero.blend"), use_scripts=False)
    obj = bpy.data.objects["Hero"]
    rested = _at_rest(obj)
    for name in ("shin.L", "shin.R"):
        record = obj.ik_rigger.limbs[name].to_options()
        assert (record.foot_roll, record.soft_ik, record.hinge_joints, record.copy_mode, record.pole_parent) == (
            True, pytest.approx(0.2), True, "TRANSFORMS", "HANDLE"), name
    now = next(limb for limb in api.limbs(obj) if limb.name == "shin.L")
    _assert_dressed(obj, now)
    assert obj.pose.bones["shin.L"].constraints["Old IK"].mute
    _assert_foot_carried(obj, now, rested)


@pytest.mark.parametrize("commit", COMMITS)
def test_a_file_rigged_earlier_rebuilt_keeps_the_users_touches_and_a_muted_ik_of_theirs(commit: str) -> None:
    _open(commit)
    obj = bpy.data.objects["Hero"]
    rested = _at_rest(obj)
    left = next(limb for limb in api.limbs(obj) if limb.name == "shin.L")
    _dress(obj, left)
    constraint = obj.pose.bones["shin.L"].constraints.new("IK")
    constraint.name, constraint.mute = "Old IK", True
    constraint.target, constraint.subtarget, constraint.chain_count = obj, "hips", 2
    rebuilt = api.build(obj, "shin.L", pole_distance=1.25)[0]
    _assert_dressed(obj, rebuilt)
    assert any("'Old IK'" in note and not api.is_warning(note) for note in rebuilt.notes), rebuilt.notes
    assert obj.pose.bones["shin.L"].constraints["Old IK"].mute
    _assert_foot_carried(obj, rebuilt, rested)


def _at_rest(obj: bpy.types.Object) -> dict[str, Matrix]:
    """``obj`` without its clip, every bone at rest, in IK; each bone's rest (soft IK eases a foot off it
    where the leg is at full length: moved toward the hips, the foot reaches the handle again)."""
    if obj.animation_data is not None:
        obj.animation_data.action = None
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    for record in obj.ik_rigger.limbs:
        obj.pose.bones[record.handle]["ik_fk"] = 1.0
    return {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}


# Arms bent under 2 degrees with their elbows forward (as they arrive: IK bends them so, a known limit) -------

def _arms(degrees: float = 0.5) -> list:
    """Two arms held out level along X, each elbow ``degrees`` forward (-Y), the way no elbow bends."""
    ahead = 0.3 * math.tan(math.radians(degrees))
    bones = [("root", (0, 0, 0), (0, 0.3, 0), None, False), ("spine", (0, 0, 1.0), (0, 0, 1.4), "root", False)]
    for side, x in (("L", 1.0), ("R", -1.0)):
        bones += [(f"shoulder.{side}", (0.05 * x, 0, 1.4), (0.15 * x, 0, 1.4), "spine", False),
                  (f"upper_arm.{side}", (0.15 * x, 0, 1.4), (0.45 * x, -ahead, 1.4), f"shoulder.{side}", True),
                  (f"forearm.{side}", (0.45 * x, -ahead, 1.4), (0.75 * x, 0, 1.4), f"upper_arm.{side}", True),
                  (f"hand.{side}", (0.75 * x, 0, 1.4), (0.85 * x, 0, 1.4), f"forearm.{side}", True)]
    return bones


# A game rig's deform foot following a foot control outside the chain ----------------------------------------

GAME_OPTIONS = ("foot roll", "soft IK", "hinge joints", "fix orientation", "copy transforms",
                "copy rotation and scale", "stretch on", "pole on the handle", "bone shapes off")


@pytest.mark.parametrize("option", GAME_OPTIONS)
def test_auto_rig_and_its_redo_rig_a_game_rigs_foot_control_with_each_option(option: str) -> None:
    """The control an Unreal-like deform foot follows is rigged as the foot, from the operator and from its
    redo with the option, and the deform foot goes where the handle takes it."""
    obj = _foot_controls_outside("DEF-", "")
    before = snapshot(obj)
    rested = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    for values in ({}, OPTIONS[option]):
        assert bpy.ops.ik_rigger.auto_rig(**values) == {"FINISHED"}
        built = api.limbs(obj)
        assert sorted((limb.chain, limb.extremity) for limb in built) == [
            ((f"thigh.{side}", f"shin.{side}"), f"ik_foot.{side}") for side in "LR"]
    for limb in built:
        record = obj.ik_rigger.limbs[limb.name].to_options()
        assert {name: getattr(record, name) for name in OPTIONS[option]} == pytest.approx(OPTIONS[option])
        delta, posed = _moved_toward_hips(obj, limb.bones["HANDLE"], list(limb.chain))
        foot = f"DEF-foot.{limb.name[-1]}"
        off = (posed[foot].translation - (delta @ rested[foot]).translation).length
        assert off < 1e-3 * chain_length(obj, limb.chain), f"{foot} stayed behind"
        obj.pose.bones[limb.bones["HANDLE"]].matrix_basis = Matrix.Identity(4)
    for limb in built:
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)


# A hidden chain (bones that do not run joint to joint) beside a muted IK of the user's ---------------------

@pytest.mark.parametrize("option", ["defaults", "hinge joints", "fix orientation", "soft IK", "foot roll",
                                    "copy transforms"])
def test_a_muted_ik_of_the_users_stays_on_its_bone_beside_a_hidden_chain(option: str) -> None:
    obj, users = _robot_with_a_muted_ik(2)
    before = snapshot(obj)
    rested = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    limb = api.build(obj, "l-leg", extremity_mode="BONE", extremity_name="l-foot", **OPTIONS[option])[0]
    # Fix Bone Orientation runs the bones joint to joint: no hidden chain is needed.
    solver = records.resolve(obj, obj.ik_rigger.limb_of("l-leg")).solver
    assert bool(solver) != (option == "fix orientation"), solver
    assert any("'Old IK'" in note and not api.is_warning(note) for note in limb.notes), limb.notes
    assert obj.pose.bones["l-leg"].constraints["Old IK"] == users
    assert users.mute and users.subtarget == "MASTER"
    delta, posed = _moved_toward_hips(obj, limb.bones["HANDLE"], list(limb.chain))
    foot = limb.extremity
    reach = sum(obj.data.bones[name].length for name in limb.chain)
    assert (posed[foot].translation - (delta @ rested[foot]).translation).length < 1e-3 * reach
    api.remove(obj, limb.name)
    assert same(snapshot(obj), before)


def _robot_with_a_muted_ik(chain_count: int) -> tuple[bpy.types.Object, bpy.types.Constraint]:
    obj = import_gltf("godot_platformer_robot.glb")
    at_rest_alone(obj)
    bpy.ops.object.mode_set(mode="POSE")
    users = obj.pose.bones["l-leg"].constraints.new("IK")
    users.name, users.mute = "Old IK", True
    users.target, users.subtarget, users.chain_count = obj, "MASTER", chain_count
    return obj, users


def test_a_muted_ik_reaching_past_a_hidden_chain_is_refused_naming_the_chain_length_that_keeps_it() -> None:
    """Blender's dependency graph links a muted IK's chain still: one reaching up to the hips from the shin
    groups the user's leg with the hips the hidden chain hangs from, a cycle that played the leg elsewhere
    (by a tenth of its length) once the file was opened again. Refused, changing nothing; at the chain length
    the error names, the leg is built without a cycle. Where the bones are fixed to run joint to joint (no
    hidden chain) it is kept."""
    obj, users = _robot_with_a_muted_ik(3)
    before = snapshot(obj)
    with pytest.raises(api.RigError, match=r"'l-leg': is in the chain of the IK constraint 'Old IK' on 'l-leg' "
                                           r"\(muted\), which reaches up past the limb to 'hip'.*dependency cycle.*"
                                           r"set its Chain Length to 2 so it stops at 'l-thigh'"):
        api.build(obj, "l-leg", extremity_mode="BONE", extremity_name="l-foot")
    assert same(snapshot(obj), before)
    with no_cycles("a build beside the muted IK reaching the hips, its bones fixed"):
        api.build(obj, "l-leg", extremity_mode="BONE", extremity_name="l-foot", fix_orientation=True)
    api.remove(obj, "l-leg")
    users.chain_count = 2
    with no_cycles("a build beside the muted IK at the chain length named"):
        limb = api.build(obj, "l-leg", extremity_mode="BONE", extremity_name="l-foot")[0]
    _moved_toward_hips(obj, limb.bones["HANDLE"], list(limb.chain))
    shown = evaluate(obj)
    obj.update_tag()
    bpy.context.scene.frame_set(bpy.context.scene.frame_current)
    again = evaluate(obj)
    assert all((again[name].translation - matrix.translation).length < 1e-5 for name, matrix in shown.items())


def test_the_arms_the_game_rig_and_the_hidden_chain_play_the_same_without_ik_rigger(tmp_path: Path) -> None:
    arms = make_armature(_arms(), name="Arms")
    arm = api.build(arms, "forearm.L", both_sides=True, hinge_joints=True, soft_ik=0.2, fix_orientation=True)[0]
    bpy.ops.object.mode_set(mode="OBJECT")
    game = _foot_controls_outside("DEF-", "")
    game.name = "Game"
    leg = api.auto_rig(game, foot_roll=True, copy_mode="TRANSFORMS")[0]
    bpy.ops.object.mode_set(mode="OBJECT")
    robot = import_gltf("godot_platformer_robot.glb")
    robot = next(obj for obj in bpy.data.objects if obj.type == "ARMATURE" and obj.name not in ("Arms", "Game"))
    bpy.context.view_layer.objects.active = robot
    at_rest_alone(robot)
    muted = robot.pose.bones["l-leg"].constraints.new("IK")
    muted.mute, muted.target, muted.subtarget, muted.chain_count = True, robot, "MASTER", 2
    hidden = api.build(robot, "l-leg", extremity_mode="BONE", extremity_name="l-foot", hinge_joints=True)[0]
    expected = {}
    for obj, limb in ((arms, arm), (game, leg), (robot, hidden)):
        _moved_toward_hips(obj, limb.bones["HANDLE"], list(limb.chain))
        expected[obj.name] = (evaluate(obj), chain_length(obj, limb.chain))
    path = tmp_path / "today.blend"
    _assert_plays_elsewhere(path, expected, tmp_path)


# Bake FK to IK and Plant Feet over frames, past a constraint of the user's keyed on later ---------------------

HELD_OPTIONS = ("foot roll", "parent switching", "soft IK", "hinge joints", "pole on the handle", "chain of 3")


@pytest.mark.parametrize("option", HELD_OPTIONS)
def test_a_users_constraint_keyed_on_later_stops_the_bake_and_plant_feet_with_each_option(option: str) -> None:
    """Off on the frame shown, on from frame 3: Bake FK to IK and Plant Feet over frames refuse, naming it and
    changing nothing; muted, both land."""
    obj = make_armature(both_legs())
    left = api.build(obj, "shin.L", both_sides=_sides(option), **OPTIONS[option])[0]
    handle = left.bones["HANDLE"]
    constraint = _held_here(obj, handle)
    _keyed_on_later(constraint)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"'{handle}': Plant Feet would not land: .*'Held \"here\"'"):
        api.plant_feet(obj, _ground(0.2), range(1, 5))
    assert _state(obj) == before
    played = _walking_in_fk(obj)
    bpy.context.scene.frame_set(1)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"'{handle}': Bake FK to IK would not land: .*'Held \"here\"'"):
        api.bake(obj, "FK_TO_IK", range(1, 6), switch=True)
    assert _state(obj) == before
    constraint.mute = True
    assert api.bake(obj, "FK_TO_IK", range(1, 6), switch=True)["shin.L"] == 5
    # The walk turns the shin off its hinge, which a hinged IK cannot play (muted constraint or none).
    assert _plays(obj, played) or option == "hinge joints"


@pytest.mark.parametrize("commit", COMMITS)
def test_plant_feet_keys_the_current_frame_on_a_file_rigged_earlier(commit: str) -> None:
    """``api.plant_feet(key=True)`` on a frame of the clip baked onto the controls: after a scrub away and back
    the feet stand where it planted them."""
    _open(commit)
    obj = bpy.data.objects["Hero"]
    scene = bpy.context.scene
    scene.frame_set(scene.frame_start + 2)
    shown = evaluate(obj)
    feet = [limb.extremity for limb in api.limbs(obj) if limb.extremity and limb.extremity.startswith("foot")]
    height = min((obj.matrix_world @ shown[foot].translation).z for foot in feet) + 0.02
    planted_limbs = api.plant_feet(obj, _ground(height), key=True).feet
    assert sorted(planted_limbs) == ["shin.L", "shin.R"]
    planted = evaluate(obj)
    scene.frame_set(scene.frame_start)
    scene.frame_set(scene.frame_start + 2)
    again = evaluate(obj)
    length = chain_length(obj, LEG)
    for foot in feet:
        assert (again[foot].translation - planted[foot].translation).length < 1e-4 * length, foot
    assert max((planted[foot].translation - shown[foot].translation).length for foot in feet) > 0.01 * length


@pytest.mark.parametrize("commit", ["c12aa73", "c22d343"])
def test_the_batch_rebuilding_a_file_rigged_earlier_with_a_limbs_options_keeps_the_users_touches(
        commit: str, tmp_path: Path) -> None:
    """The 0.2.0 release's file and the last landing's (hidden chains), dressed by the user and given a muted IK
    of theirs over the leg, rigged by the batch with a config naming the leg's options."""
    _open(commit)
    obj = bpy.data.objects["Hero"]
    _dress(obj, next(limb for limb in api.limbs(obj) if limb.name == "shin.L"))
    constraint = obj.pose.bones["shin.L"].constraints.new("IK")
    constraint.name, constraint.mute = "Old IK", True
    constraint.target, constraint.subtarget, constraint.chain_count = obj, "hips", 2
    source = tmp_path / "hero.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    config = parse_config('[[armature]]\nname = "Hero"\ndetect = false\n\n[[armature.limb]]\nlast = "shin.L"\n'
                          'pole_distance = 1.25\nsoft_ik = 0.1\n', config_schema())
    result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "hero.blend")), config)
    assert result.status == "rigged", result.error
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "hero.blend"), use_scripts=False)
    obj = bpy.data.objects["Hero"]
    record = obj.ik_rigger.limbs["shin.L"].to_options()
    assert (record.pole_distance, record.soft_ik) == (pytest.approx(1.25), pytest.approx(0.1))
    left = next(limb for limb in api.limbs(obj) if limb.name == "shin.L")
    _assert_dressed(obj, left)
    assert obj.pose.bones["shin.L"].constraints["Old IK"].mute
    rested = _at_rest(obj)
    _assert_foot_carried(obj, left, rested)


def _assert_plays_elsewhere(path: Path, expected: dict, tmp_path: Path) -> None:
    """Saved at ``path``, each armature of ``expected`` (its evaluated pose, its chain's length) plays the same
    in a Blender without IK Rigger, every driver valid."""
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    played = play_elsewhere(path, [1], tmp_path)
    assert played["invalid_drivers"] == []
    for name, (posed, length) in expected.items():
        shown = played["frames"]["1"][name]
        for bone, matrix in posed.items():
            assert (as_matrix(shown[bone]).translation - matrix.translation).length < 1e-4 * length, (name, bone)
