"""Today's behaviours meet the options, the ways in and the files earlier releases rigged.

A muted IK of the user's on the chain is kept with a note, Plant Feet on the current frame keys with
auto-keying on, and a rebuild keeps the collections, colour and shape size the user gave the controls: each
with soft IK, stretch off and on, Hinge Joints, Fix Bone Orientation, Foot Roll, parent switching, each copy
mode, a chain of 3, Both Sides, the pole on the handle and Bone Shapes off, through the API, the operators'
redo, the batch with a config naming the limb's options, Remove, the files rigged by earlier releases, and
in a Blender without IK Rigger. On evaluated poses, tolerances relative to the leg's length.
"""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from helpers import both_legs, chain_length, evaluate, make_armature, same, set_active_bone, snapshot
from mathutils import Matrix
from test_hostile_held import _ground
from test_idle_user_constraints import _users_ik
from test_keying_preferences import _after_a_scrub, _keyed_handles
from test_pipeline import as_matrix, play_elsewhere
from test_rigged_earlier import COMMITS, _open

from ik_rigger import api
from ik_rigger.batch import rig_file as files
from ik_rigger.batch.command import config_schema
from ik_rigger.limb.config import parse_config
from ik_rigger.limb.options import schema

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
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    played = play_elsewhere(path, [1], tmp_path)
    assert played["invalid_drivers"] == []
    for name, (posed, length) in expected.items():
        shown = played["frames"]["1"][name]
        for bone, matrix in posed.items():
            assert (as_matrix(shown[bone]).translation - matrix.translation).length < 1e-4 * length, (name, bone)


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
