"""A chain bone's own IK limits (Bone > Inverse Kinematics: Limit X/Y/Z) keep Blender's IK from bending it
as far as the FK motion does: a bake FK to IK then played up to 17 degrees off the captured motion and
nothing said so. The bake now plays the baked IK on limbs with such settings and warns, naming the bone,
its settings and the worst angle and frame, in the operator's report and the API's ``notes``. A lock or
stiffness the IK reproduces the motion through (the pole turns the chain past them) warns of nothing,
and a limb without any setting is not played (the bake stays reading keys). On the Mixamo capture's
left leg, and an invented leg for the lock."""

from __future__ import annotations

import math
import re

import bpy
import pytest
from helpers import DATA, both_legs, evaluate, make_armature, rotation_degrees

from ik_rigger import api
from ik_rigger.rig import bake_limits

KNEE = "mixamorig:LeftLeg"
LEG = ["mixamorig:LeftUpLeg", KNEE, "mixamorig:LeftFoot"]
FRAMES = range(1, 70)


def _capture() -> bpy.types.Object:
    """The Mixamo capture with its left leg rigged to play its keys in FK, in Pose mode."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 69
    api.build(obj, KNEE, animation="FK")
    bpy.ops.object.mode_set(mode="POSE")
    obj.data.bones.active = obj.data.bones[KNEE]
    return obj


def _knee_held(obj: bpy.types.Object) -> None:
    """The knee limited in IK to 10 degrees about each axis of its rest: the walk bends it far more."""
    knee = obj.pose.bones[KNEE]
    for axis in "xyz":
        setattr(knee, f"use_ik_limit_{axis}", True)
        setattr(knee, f"ik_min_{axis}", math.radians(-10.0))
        setattr(knee, f"ik_max_{axis}", math.radians(10.0))


def _worst(obj: bpy.types.Object, captured: dict) -> tuple[float, str, int]:
    worst = (0.0, "", 0)
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        shown = evaluate(obj)
        for name in LEG:
            worst = max(worst, (rotation_degrees(shown[name], captured[frame][name]), name, frame))
    return worst


def _played(obj: bpy.types.Object) -> dict:
    played = {}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        played[frame] = evaluate(obj)
    return played


def test_a_bake_the_knee_s_own_ik_limits_keep_off_the_motion_warns_with_the_bone_limit_angle_and_frame():
    obj = _capture()
    _knee_held(obj)
    captured = _played(obj)
    notes: list[str] = []
    api.bake(obj, "FK_TO_IK", FRAMES, switch=True, notes=notes)
    off, name, frame = _worst(obj, captured)
    assert off > 5.0  # the IK does play off the motion
    assert len(notes) == 1 and api.is_warning(notes[0])
    assert notes[0].startswith(f"'{KNEE}': its own IK settings (IK Limit X -10 to 10 degrees, IK Limit Y -10 to 10 "
                               "degrees, IK Limit Z -10 to 10 degrees)")
    said = re.search(r"'([^']+)' stands up to ([0-9.]+) degrees off it \(frame (\d+)\)", notes[0])
    assert said is not None and said.group(1) == name and int(said.group(3)) == frame
    assert abs(float(said.group(2)) - off) < 0.1


def test_the_bake_operator_reports_the_warning(capsys):
    obj = _capture()
    _knee_held(obj)
    capsys.readouterr()
    assert bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=69) == {"FINISHED"}
    out = capsys.readouterr().out
    assert re.search(rf"Warning: '{KNEE}': its own IK settings .* stands up to [0-9.]+ degrees off it", out), out
    assert obj.mode == "POSE"


def test_a_bake_without_ik_settings_plays_nothing_more_and_warns_of_nothing(monkeypatch):
    obj = _capture()
    captured = _played(obj)
    monkeypatch.setattr(bake_limits, "evaluated_poses", lambda *args, **kwargs: pytest.fail("played the frames"))
    notes: list[str] = []
    api.bake(obj, "FK_TO_IK", FRAMES, switch=True, notes=notes)
    assert notes == []
    assert _worst(obj, captured)[0] < 0.05


@pytest.mark.parametrize("setting", ["lock", "stiffness", "limits the motion keeps within"])
def test_a_lock_or_stiffness_the_ik_plays_the_motion_through_warns_of_nothing(setting):
    obj = make_armature(both_legs(), mode="POSE")
    api.build(obj, "shin.L")
    bones = obj.pose.bones
    for name in ("thigh.L", "shin.L"):
        bones[name].rotation_mode = "XYZ"
    for frame in range(1, 21):
        bones["thigh.L"].rotation_euler = (0.6 * math.sin(frame / 3), 0.0, 0.1)
        bones["shin.L"].rotation_euler = (-0.3 - 0.5 * (1 + math.sin(frame / 4)), 0.0, 0.0)
        for name in ("thigh.L", "shin.L"):
            bones[name].keyframe_insert("rotation_euler", frame=frame)
    bones["foot_IK.L"]["ik_fk"] = 0.0
    if setting == "lock":
        bones["thigh.L"].lock_ik_z = True  # the thigh turns 6 degrees about Z: the pole's turn gives it
    elif setting == "stiffness":
        bones["shin.L"].ik_stiffness_x = bones["thigh.L"].ik_stiffness_z = 0.9
    else:  # the knee bends up to 74 degrees; the thigh's twist is the pole's
        bones["shin.L"].use_ik_limit_x = bones["thigh.L"].use_ik_limit_y = True
        bones["shin.L"].ik_min_x, bones["shin.L"].ik_max_x = math.radians(-80.0), 0.0
        bones["thigh.L"].ik_min_y, bones["thigh.L"].ik_max_y = math.radians(-5.0), math.radians(5.0)
    captured = {}
    for frame in range(1, 21):
        bpy.context.scene.frame_set(frame)
        captured[frame] = evaluate(obj)
    notes: list[str] = []
    api.bake(obj, "FK_TO_IK", range(1, 21), switch=True, notes=notes)
    assert notes == []
    for frame in range(1, 21):
        bpy.context.scene.frame_set(frame)
        shown = evaluate(obj)
        assert all(rotation_degrees(shown[name], captured[frame][name]) < 0.05 for name in ("thigh.L", "shin.L"))


def test_rigging_the_capture_with_the_motion_kept_warns_of_the_knee_s_own_ik_limits():
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 69
    _knee_held(obj)
    captured = _played(obj)
    built = api.build(obj, KNEE)
    off, name, frame = _worst(obj, captured)
    warned = [note for note in built[0].warnings if "its own IK settings" in note]
    assert off > 5.0 and len(warned) == 1
    assert f"'{name}' stands up to {off:.1f} degrees off it (frame {frame})" in warned[0]
