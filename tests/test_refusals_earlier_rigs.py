"""A refusal leaves a rig made by an earlier release exactly as it was; a rebuild that would key anew the
controls of a limb played from an NLA strip not replacing at full influence refuses.

Every operation first upgrades a rig of IK Rigger 0.1 or 0.2 (``rig/upgrade.py``): its IK/FK blend moved to
the handles with its keys and drivers, its records compacted, its bones marked. When the operation then
refused (a Snap keyed over strips, a Switch Parent on a limb without it, a Bake over a driven bone, Plant Feet
with no ground below, a Rebuild of an armature sharing its data, a Remove keying where keys do not play), the
upgrade stayed with no undo step (a refused operator pushes none). Now everything is as before the call:
drivers with their variables and targets, records, keys and their paths, constraints, custom properties and
the pose played; the same operation, once it can be done, upgrades the rig and works.
"""

from __future__ import annotations

from collections.abc import Callable

import bpy
import pytest
from helpers import DATA, chain_length, evaluate_world, keys_by_curve, rotation_degrees
from mathutils import Quaternion
from test_scene_objects import _leg
from test_undo_operators import differences, state

from ik_rigger import api
from ik_rigger.rig import records
from ik_rigger.rig.animation import action_fcurves
from ik_rigger.rig.upgrade import needs_upgrade

HERO = "Hero"
# Each release's file and the limb the operations name.
RELEASES = {"0.1.0": "shin.L", "0.2.0": "mixamorig:LeftLeg"}
FRAMES = (1, 6, 12)


def _plain(value: object) -> object:
    """An ID property's value as plain Python (groups and arrays too)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "to_list"):
        return value.to_list()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _properties(owner: bpy.types.bpy_struct) -> dict:
    return {key: _plain(owner[key]) for key in owner.keys()}


def everything(obj: bpy.types.Object) -> dict:
    """What the undo tests compare (drivers, keys, records, constraints, the pose on ``FRAMES``) and what an
    upgrade changes besides: every custom property of the bones, pose bones and limb records, each record's
    names and lists, and the keys of every action (those of NLA strips too) by F-curve path."""
    found = state(obj.name, FRAMES)
    found["bone properties"] = {bone.name: _properties(bone) for bone in obj.data.bones}
    found["pose bone properties"] = {bone.name: _properties(bone) for bone in obj.pose.bones}
    found["records"] = [
        (limb.name, limb.uid, limb.inventory, limb.handle, limb.pole, limb.clone, limb.extremity,
         [item.name for item in limb.chain], [(item.name, item.role) for item in limb.made_bones],
         [(item.name, item.constraint) for item in limb.constraints], limb.get("ik_blend"))
        for limb in obj.ik_rigger.limbs] + [obj.ik_rigger.version, obj.ik_rigger.next_uid]
    found["all keys"] = {action.name: keys_by_curve(action_fcurves(action)) for action in bpy.data.actions}
    return found


def _open(release: str) -> bpy.types.Object:
    bpy.ops.wm.open_mainfile(filepath=str(DATA / f"rigged_by_{release}.blend"))
    obj = bpy.data.objects[HERO]
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="POSE")
    bpy.context.scene.frame_set(6)
    return obj


def _tolerance(obj: bpy.types.Object) -> float:
    return 1e-5 * max(bone.length for bone in obj.data.bones)


# What each refusing operation needs: the state that makes it refuse, set up first, and what gives the
# state back so it can be done.

def _over_strips(obj: bpy.types.Object, limb: str) -> None:
    """The action pushed down onto an NLA strip: no action of its own to key."""
    data = obj.animation_data
    data.nla_tracks.new().strips.new("walk", 1, data.action).name = "walk"
    data.action = None


def _own_action_back(obj: bpy.types.Object, limb: str) -> None:
    data = obj.animation_data
    track = data.nla_tracks[-1]
    data.action = track.strips[0].action
    data.nla_tracks.remove(track)


def _chain_driven(obj: bpy.types.Object, limb: str) -> None:
    """A driver of the user's on the rotation of the limb's first chain bone."""
    pose_bone = obj.pose.bones[records.resolve(obj, records.limb_of(obj, limb)).chain[0]]
    path = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(pose_bone.rotation_mode,
                                                                                          "rotation_euler")
    pose_bone.driver_add(path, 1).driver.expression = "0.0"


def _chain_undriven(obj: bpy.types.Object, limb: str) -> None:
    pose_bone = obj.pose.bones[records.resolve(obj, records.limb_of(obj, limb)).chain[0]]
    for path in ("rotation_quaternion", "rotation_axis_angle", "rotation_euler"):
        pose_bone.driver_remove(path, 1)


def _ground_aside(obj: bpy.types.Object, limb: str) -> None:
    """A ground mesh far beside the character: no ground below its feet."""
    mesh = bpy.data.meshes.new("Ground")
    size = 100 * chain_length(obj, records.resolve(obj, records.limb_of(obj, limb)).chain)
    mesh.from_pydata([(-size, -size, 0.0), (size, -size, 0.0), (size, size, 0.0), (-size, size, 0.0)], [],
                     [(0, 1, 2, 3)])
    ground = bpy.data.objects.new("Ground", mesh)
    bpy.context.scene.collection.objects.link(ground)
    ground.location.x = 1000 * size


def _ground_below(obj: bpy.types.Object, limb: str) -> None:
    """The ground under the feet, a little below the lowest, every leg in IK on the frame planted."""
    ground = bpy.data.objects["Ground"]
    ground.location = (0.0, 0.0, min(matrix.translation.z for matrix in evaluate_world(obj).values()) - 0.01)
    for record in obj.ik_rigger.limbs:
        handle = records.resolve(obj, record).handle
        data = obj.animation_data
        for curve in [*(data.drivers if data else ()), *action_fcurves(data.action)] if data and data.action else []:
            if curve.data_path in (records.ik_fk_path(handle), f'ik_rigger.limbs["{record.name}"].ik_blend'):
                curve.mute = True
        if "ik_blend" in record.keys():
            record["ik_blend"] = 1.0
        if records.IK_FK in obj.pose.bones[handle]:
            obj.pose.bones[handle][records.IK_FK] = 1.0


def _shared(obj: bpy.types.Object, limb: str) -> None:
    """Another object sharing the armature's data."""
    other = obj.copy()
    other.name = "Hero's double"
    bpy.context.scene.collection.objects.link(other)


def _not_shared(obj: bpy.types.Object, limb: str) -> None:
    bpy.data.objects.remove(bpy.data.objects["Hero's double"])


def _over_strips_at_half(obj: bpy.types.Object, limb: str) -> None:
    """A key of the animator's on the limb's handle (its motion no longer its chain's own keys'), the action also
    on an NLA strip, played over it at half influence: the motion keyed onto the chain would play halved."""
    parts = records.resolve(obj, records.limb_of(obj, limb))
    handle = obj.pose.bones[parts.handle]
    handle.location.z += 0.1 * chain_length(obj, parts.chain)
    handle.keyframe_insert("location", frame=9)
    data = obj.animation_data
    data.nla_tracks.new().strips.new("walk", 1, data.action).name = "walk"
    data.action_influence = 0.5


def _full_influence(obj: bpy.types.Object, limb: str) -> None:
    data = obj.animation_data
    data.nla_tracks.remove(data.nla_tracks[-1])
    data.action_influence = 1.0


Step = Callable[[bpy.types.Object, str], object]
# (what refuses, the state set up, the API call, the operator and its properties, what the refusal says, what gives
# the state back)
CASES: dict[str, tuple[Step, Step, tuple[str, dict], str, Step]] = {
    "snap keyed over strips": (
        _over_strips, lambda obj, limb: api.snap_limb(obj, limb, "FK", key=True),
        ("snap_fk_to_ik", {"keyframe": True}), "NLA strip 'walk'", _own_action_back),
    "switch parent of a limb built without": (
        lambda obj, limb: None, lambda obj, limb: api.switch_parent(obj, limb, 1),
        ("switch_parent", {"parent": 1}), "without Parent Switching",
        lambda obj, limb: api.build(obj, limb, both_sides=False, parent_switch=True)),
    "bake over a driven chain bone": (
        _chain_driven, lambda obj, limb: api.bake(obj, "IK_TO_FK", range(1, 13), [limb]),
        ("bake", {"direction": "IK_TO_FK", "frame_start": 1, "frame_end": 12}), "set by a driver",
        _chain_undriven),
    "plant feet with no ground below": (
        _ground_aside, lambda obj, limb: api.plant_feet(obj, bpy.data.objects["Ground"]),
        ("plant_feet", {"ground": "Ground"}), "no ground below|not fully in IK", _ground_below),
    "rebuild of shared data": (
        _shared, lambda obj, limb: api.build(obj, limb, both_sides=False),
        ("rebuild_limb", {}), "Hero's double", _not_shared),
    "remove keying where keys play halved": (
        _over_strips_at_half, lambda obj, limb: api.remove(obj, limb),
        ("remove_ik", {}), "50% influence", _full_influence),
}


def _run_operator(obj: bpy.types.Object, limb: str, name: str, properties: dict) -> None:
    """The operator as its button runs it (its own undo step), on the limb's last chain bone (active)."""
    if name != "remove_ik" and name != "plant_feet":
        properties = {"limb": limb, **properties}
    getattr(bpy.ops.ik_rigger, name)("EXEC_DEFAULT", True, **properties)


@pytest.mark.parametrize("through", ["api", "operator"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("release", RELEASES)
def test_a_refusal_leaves_an_earlier_rig_as_it_was_and_the_operation_done_upgrades_it(release, case, through):
    obj = _open(release)
    limb = RELEASES[release]
    setup, call, (operator, properties), says, fix = CASES[case]
    setup(obj, limb)
    obj.data.bones.active = obj.data.bones[limb]
    bpy.context.view_layer.update()
    before = everything(obj)
    assert needs_upgrade(obj)
    with pytest.raises(api.RigError if through == "api" else RuntimeError, match=says):
        if through == "api":
            call(obj, limb)
        else:
            _run_operator(obj, limb, operator, properties)
    assert differences(everything(obj), before, _tolerance(obj)) == []
    assert needs_upgrade(obj)
    fix(obj, limb)
    if through == "api":
        call(obj, limb)
    else:
        _run_operator(obj, limb, operator, properties)
    assert not needs_upgrade(obj)
    # Upgraded: every driver reads the handles' switches, and none is invalid.
    drivers = obj.animation_data.drivers
    assert drivers and all(curve.driver.is_valid for curve in drivers)
    assert not [target.data_path for curve in drivers for variable in curve.driver.variables
                for target in variable.targets if "ik_blend" in target.data_path]


def test_a_rebuild_keying_anew_the_controls_of_a_strip_added_is_refused_naming_it_and_changes_nothing():
    """A leg whose only motion is an NLA strip blended as Add, its handle and pole keyed: a rebuild that gives the
    pole another parent keyed them anew from the strip's action played alone, and added they played the leg up
    to 17 degrees off. Refused, naming the strip and what to do, nothing changed; blended as Replace, the
    rebuild keeps the motion."""
    obj = _leg()
    api.build(obj, "shin.L", both_sides=False)
    made = api.limbs(obj)[0].bones
    for role in ("HANDLE", "POLE"):
        pose_bone = obj.pose.bones[made[role]]
        pose_bone.location.z += 0.05
        pose_bone.keyframe_insert("location", frame=9)
        pose_bone.rotation_quaternion = Quaternion((1.0, 0.0, 0.0), 0.3) @ pose_bone.rotation_quaternion
        pose_bone.keyframe_insert("rotation_quaternion", frame=9)
    data = obj.animation_data
    strip = data.nla_tracks.new().strips.new("walk", 1, data.action)
    strip.name = "walk"
    data.action = None
    strip.blend_type = "ADD"
    bpy.context.scene.frame_set(3)
    before = everything(obj)
    with pytest.raises(api.RigError, match="strip 'walk'.*Add.*Replace.*Pole Parent"):
        api.build(obj, "shin.L", both_sides=False, pole_parent="HANDLE")
    assert differences(everything(obj), before, _tolerance(obj)) == []
    strip.blend_type = "REPLACE"
    played = {}
    for frame in range(1, 26, 2):
        bpy.context.scene.frame_set(frame)
        played[frame] = evaluate_world(obj)
    api.build(obj, "shin.L", both_sides=False, pole_parent="HANDLE")
    length = chain_length(obj, ["thigh.L", "shin.L"])
    for frame, poses in played.items():
        bpy.context.scene.frame_set(frame)
        now = evaluate_world(obj)
        for name in ("thigh.L", "shin.L", "foot.L"):
            assert (now[name].translation - poses[name].translation).length < 1e-4 * length, (frame, name)
            assert rotation_degrees(now[name], poses[name]) < 0.01, (frame, name)


@pytest.mark.parametrize("release", RELEASES)
def test_after_a_refused_operator_undo_takes_back_the_users_last_step_on_an_earlier_rig(release):
    """The refusal pushes no step and leaves the rig as it was: Ctrl+Z then gives back the file as it was before
    the user's last step, not upgraded."""
    obj = _open(release)
    limb = RELEASES[release]
    obj.data.bones.active = obj.data.bones[limb]
    bpy.ops.ed.undo_push(message="before the user's step")
    first = everything(obj)
    obj.pose.bones[records.resolve(obj, records.limb_of(obj, limb)).chain[0]].location.z += 0.05
    bpy.ops.ed.undo_push(message="the user's step")
    moved = everything(obj)
    with pytest.raises(RuntimeError, match="without Parent Switching"):
        _run_operator(obj, limb, "switch_parent", {"parent": 1})
    assert differences(everything(obj), moved, _tolerance(obj)) == []
    bpy.ops.ed.undo()
    obj = bpy.data.objects[HERO]
    assert differences(everything(obj), first, _tolerance(obj)) == []
    assert needs_upgrade(obj)
