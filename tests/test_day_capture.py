"""A day on one motion capture: the operators one after another on the same shot, saved and reopened.

The Mixamo capture in tests/data as Blender's BVH importer gives it (69 frames, motion kept): Auto-Rig, a
handle keyed by hand, keyed snaps both ways, a keyed parent switch, a bake over a range, feet planted over
another, a limb rebuilt with more options, the file saved and reopened, refused operations, a limb removed
and the clip exported. After every step ``Shot.step`` checks the frames and keys it was not asked to touch
play and stay exactly as before, and the test checks the step did what it says.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import bpy
import pytest
from day_shot import SAME_MOVE, SAME_TURN, Shot, played
from helpers import DATA, rotation_degrees, same, snapshot
from mathutils import Matrix, Vector
from test_export import assert_three_plays_the_rig
from test_packaging import blender_command, isolated_env

from ik_rigger import api
from ik_rigger.core.errors import RigError

ROOT = Path(__file__).resolve().parent.parent
PLAYER = ROOT / "tests" / "play_without_addon.py"
LEFT_LEG, RIGHT_LEG = "mixamorig:LeftLeg", "mixamorig:RightLeg"
LEFT_ARM = "mixamorig:LeftForeArm"
HIPS = "mixamorig:Hips"
FRAMES = range(1, 70)
# What a bake or a build keys plays the capture within these (README: 6.7e-4 of the height, 0.20 degree).
BAKED_MOVE, BAKED_TURN = 7e-4, 0.25
# A snap lands within 1e-4 of the chain and 0.01 degree (docs/animating.md); the chain is about half the size.
SNAPPED_MOVE, SNAPPED_TURN = 1e-4, 0.03


def limb_bones(obj: bpy.types.Object, name: str) -> set[str]:
    """The bones a limb's operations may move: its chain, its made bones and everything below them."""
    limb = next(item for item in api.limbs(obj) if item.name == name)
    tops = [*limb.chain, *limb.bones.values()]
    found = set()
    for top in tops:
        bone = obj.data.bones[top]
        found.add(bone.name)
        found.update(child.name for child in bone.children_recursive)
    return found


def made_bones(obj: bpy.types.Object, name: str) -> set[str]:
    return set(next(item for item in api.limbs(obj) if item.name == name).bones.values())


def assert_plays(expected: dict, shown: dict, bones, size: float, move: float, turn: float, where: str) -> None:
    for frame, poses in expected.items():
        for name in bones:
            moved = (poses[name].translation - shown[frame][name].translation).length / size
            turned = rotation_degrees(poses[name], shown[frame][name])
            assert moved < move and turned < turn, (where, frame, name, moved, turned)


def capture() -> tuple[bpy.types.Object, float, dict]:
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    return obj, max(obj.dimensions), played(obj, FRAMES)


def key_handle_by_hand(obj: bpy.types.Object, handle: str, frames: range, lift: float) -> None:
    """The user moves the handle up by ``lift`` on each of ``frames`` and keys its location there."""
    scene = bpy.context.scene
    pose_bone = obj.pose.bones[handle]
    for frame in frames:
        scene.frame_set(frame)
        world = pose_bone.matrix.copy()
        world.translation += Vector((0.0, 0.0, lift))
        pose_bone.matrix = world
        pose_bone.keyframe_insert("location", frame=frame)


def test_a_day_on_a_motion_capture(tmp_path):
    obj, size, captured = capture()
    users = [bone.name for bone in obj.data.bones]
    assert len(api.auto_rig(obj)) == 4
    assert_plays(captured, played(obj, FRAMES, users), users, size, BAKED_MOVE, BAKED_TURN, "auto-rigged")
    shot = Shot(obj, FRAMES, size)
    left_leg = limb_bones(obj, LEFT_LEG)
    handle = api.limbs(obj)[0].bones["HANDLE"]

    # The user lifts the left foot's handle by hand over frames 10-20.
    key_handle_by_hand(obj, handle, range(10, 21), 0.05 * size)
    moved = shot.step("handle keyed by hand", range(10, 21), left_leg, owned={handle})
    assert set(moved) == set(range(10, 21)), sorted(moved)

    # Snap IK to FK, keyed at 15: the leg plays the capture there again, and only there.
    api.snap_limb(obj, LEFT_LEG, "IK", key=True, frame=15)
    moved = shot.step("snap IK to FK at 15", {15}, left_leg, owned=made_bones(obj, LEFT_LEG))
    assert 15 in moved
    assert_plays({15: captured[15]}, shot.shown, left_leg & set(users), size, SNAPPED_MOVE, SNAPPED_TURN,
                 "snapped IK to FK at 15")

    # FK over 30-40: keyed snaps at both ends; the leg plays its own (the capture's) keys between.
    api.snap_limb(obj, LEFT_LEG, "FK", key=True, frame=30)
    api.snap_limb(obj, LEFT_LEG, "IK", key=True, frame=40)
    shot.step("FK over 30-40", range(30, 41), left_leg, owned=left_leg)
    assert_plays({f: captured[f] for f in range(30, 41)}, shot.shown, left_leg & set(users), size, BAKED_MOVE,
                 BAKED_TURN, "FK over 30-40")

    # The left hand may follow the hips: the arm rebuilt with parent switching plays as before.
    api.build(obj, LEFT_ARM, both_sides=False, parent_switch=True)
    left_arm = limb_bones(obj, LEFT_ARM)
    moved = shot.step("arm rebuilt with parent switching", FRAMES, left_arm, owned=made_bones(obj, LEFT_ARM))
    assert all(gap[0] < 1e-4 and gap[1] < 0.05 for poses in moved.values() for gap in poses.values()), moved

    # Switch Parent of the hand to the hips at 35, keyed: the hand stays put there, and its keys after are
    # keyed anew under the hips, so the whole shot plays as before.
    api.switch_parent(obj, LEFT_ARM, "Root", key=True, frame=35)
    socket = {api.limbs(obj)[2].bones["SOCKET"]}  # the hidden bone the controls hang from follows the hips
    shot.step("hand switched to the hips at 35", range(35, 70), socket, owned=made_bones(obj, LEFT_ARM),
              switches=False)
    assert api.limbs(obj)[2].name == LEFT_ARM
    bpy.context.scene.frame_set(36)
    assert obj.pose.bones[api.limbs(obj)[2].bones["HANDLE"]]["parent"] == 1

    # Bake FK to IK over 25-45: every limb's controls keyed from the FK motion there, and nothing else.
    controls = set().union(*(made_bones(obj, limb.name) for limb in api.limbs(obj)))
    api.bake(obj, "FK_TO_IK", range(25, 46))
    shot.step("baked FK to IK over 25-45", range(25, 46), owned=controls, switches=False)
    assert_plays({f: captured[f] for f in range(25, 46)}, shot.shown, users, size, BAKED_MOVE, BAKED_TURN,
                 "baked FK to IK over 25-45")

    # Plant Feet over 50-60 on a floor under the feet's lowest point there.
    lowest = min((obj.matrix_world @ shot.shown[f][foot].translation).z
                 for f in range(50, 61) for foot in ("mixamorig:LeftFoot", "mixamorig:RightFoot"))
    ground = floor(lowest - 0.02 * size)
    legs = limb_bones(obj, LEFT_LEG) | limb_bones(obj, RIGHT_LEG)
    result = api.plant_feet(obj, ground, range(50, 61))
    assert len(result.feet) == 2
    hips = {HIPS} if result.hips else set()
    shot.step("feet planted over 50-60", range(50, 61), legs | hips | ({*users} if result.hips else set()),
              owned=controls | hips, switches=False)

    # The right leg rebuilt with Foot Roll and soft IK: the shot plays as before.
    api.build(obj, RIGHT_LEG, both_sides=False, foot_roll=True, soft_ik=0.1)
    moved = shot.step("right leg rebuilt with foot roll and soft IK", FRAMES, limb_bones(obj, RIGHT_LEG),
                      owned=made_bones(obj, RIGHT_LEG), switches=False)
    # Keyed anew from what played, the leg plays it again; on the planted frames within what Blender's IK gives
    # from the chain's own keys it starts from (the planted handles and the capture's keys: Bake IK to FK there
    # alone, the leg in IK, moves the knee as much).
    for frame, poses in moved.items():
        for name, gap in poses.items():
            move, turn = (0.01, 3.0) if frame in range(50, 61) else (1e-4, 0.05)
            assert name not in users or (gap[0] < move and gap[1] < turn), (frame, name, gap)

    # Saved and reopened, it plays the same.
    path = tmp_path / "day.blend"
    name = obj.name
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects[name]
    shot.obj = obj
    shot.step("saved and reopened", switches=False)

    # Refused in the middle: each leaves everything as it was.
    kept = snapshot(obj)
    for refused in (lambda: api.switch_parent(obj, LEFT_ARM, "Nowhere", key=True, frame=50),
                    lambda: api.plant_feet(obj, None, range(1, 10)),
                    lambda: api.bake(obj, "SIDEWAYS", range(1, 10)),
                    lambda: api.build(obj, LEFT_LEG, pole_distance=-3.0)):
        with pytest.raises(RigError):
            refused()
        assert same(kept, snapshot(obj))
        shot.step("refused", switches=False)

    # The arm removed, its motion kept: the user's bones play as before.
    api.remove(obj, LEFT_ARM)
    moved = shot.step("arm removed", FRAMES, left_arm, owned=left_arm, switches=False)
    worst = max((gap for frame, poses in moved.items() for name, gap in poses.items() if name in users),
                default=(0.0, 0.0))
    assert worst[0] < SAME_MOVE * 10 and worst[1] < 0.05, worst

    # Saved again and played in a Blender without IK Rigger (and in the other Blender, where it opens the file):
    # every bone as here.
    path = tmp_path / "day_removed.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    checked = [1, 15, 35, 55, 69]
    for python in [None, *other_blenders()]:
        shown = play_elsewhere(path, checked, tmp_path, python)
        assert not shown["invalid_drivers"], shown["invalid_drivers"]
        for frame in checked:
            for name, rows in shown["frames"][str(frame)][obj.name].items():
                matrix = Matrix(rows)
                expected = shot.shown[frame][name]
                assert (matrix.translation - expected.translation).length / size < SAME_MOVE, (python, frame, name)
                assert rotation_degrees(matrix, expected) < SAME_TURN, (python, frame, name)

    # Exported: three.js plays every frame of the clip as Blender does.
    report = api.export(obj, str(tmp_path / "day.glb"))
    assert [clip.name for clip in report.clips] == [obj.animation_data.action.name]
    assert_three_plays_the_rig(obj, tmp_path / "day.glb", report)
    shot.step("exported")


def other_blenders() -> list[Path]:
    """The Python of a newer Blender of this project's environments, which opens this one's files."""
    newer = ROOT / ".venvs" / "blender-5.2" / "bin" / "python"
    return [newer] if bpy.app.version < (5, 0) and newer.exists() else []


def play_elsewhere(path: Path, frames: list[int], tmp_path: Path, python: Path | None = None) -> dict:
    """What a Blender without IK Rigger shows of ``path`` (tests/play_without_addon.py): this one's, or the
    Blender of ``python``."""
    home = tmp_path / "home-without-addon"
    home.mkdir(exist_ok=True)
    command = blender_command(PLAYER, str(path), *map(str, frames))
    if python is not None:
        command = [str(python), *command[1:]]
    result = subprocess.run(command, cwd=tmp_path, env=isolated_env(home), capture_output=True, text=True,
                            timeout=300, check=False)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert result.returncode == 0 and lines, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(lines[-1][len("RESULT "):])


def floor(height: float) -> bpy.types.Object:
    mesh = bpy.data.meshes.new("Floor")
    mesh.from_pydata([(-1e3, -1e3, height), (1e3, -1e3, height), (1e3, 1e3, height), (-1e3, 1e3, height)], [],
                     [(0, 1, 2, 3)])
    ground = bpy.data.objects.new("Floor", mesh)
    bpy.context.scene.collection.objects.link(ground)
    return ground



def test_a_snap_keyed_on_another_frame_keys_the_pose_shown_there():
    """``api.snap_limb(..., key=True, frame=15)`` with the scene on frame 40: the leg at 15 plays the FK pose of
    15 (it keyed frame 40's pose at 15, the thigh 129 degrees off), and the scene is back on 40."""
    obj, size, captured = capture()
    api.auto_rig(obj)
    shot = Shot(obj, FRAMES, size)
    handle = api.limbs(obj)[0].bones["HANDLE"]
    key_handle_by_hand(obj, handle, range(10, 21), 0.05 * size)
    shot.remember()
    bpy.context.scene.frame_set(40)
    api.snap_limb(obj, LEFT_LEG, "IK", key=True, frame=15)
    assert bpy.context.scene.frame_current == 40
    left_leg = limb_bones(obj, LEFT_LEG)
    shot.step("snap IK to FK at 15 from frame 40", {15}, left_leg, owned=made_bones(obj, LEFT_LEG))
    assert_plays({15: captured[15]}, shot.shown, left_leg & set(captured[15]), size, SNAPPED_MOVE, SNAPPED_TURN,
                 "snapped IK to FK at 15 from frame 40")


def test_a_parent_switch_keyed_on_another_frame_keeps_the_controls_where_they_play_there():
    obj, size, _ = capture()
    api.auto_rig(obj)
    api.build(obj, LEFT_ARM, both_sides=False, parent_switch=True)
    shot = Shot(obj, FRAMES, size)
    bpy.context.scene.frame_set(10)
    api.switch_parent(obj, LEFT_ARM, "Root", key=True, frame=35)
    assert bpy.context.scene.frame_current == 10
    socket = {api.limbs(obj)[2].bones["SOCKET"]}
    shot.step("hand switched to the hips at 35 from frame 10", range(35, 70), socket,
              owned=made_bones(obj, LEFT_ARM), switches=False)


@pytest.mark.parametrize("current", [30, 40])
def test_a_bake_over_a_keyed_parent_switch_follows_the_parent_each_frame_plays(current):
    """Baking FK to IK over frames where a keyed switch changes what the hand follows: each frame's controls are
    keyed under the parent that frame plays (they were keyed under the one of the current frame, 16 degrees
    off on the frames of the other)."""
    obj, size, captured = capture()
    api.auto_rig(obj)
    api.build(obj, LEFT_ARM, both_sides=False, parent_switch=True)
    api.switch_parent(obj, LEFT_ARM, "Root", key=True, frame=35)
    bpy.context.scene.frame_set(current)
    api.bake(obj, "FK_TO_IK", range(25, 46))
    arm = limb_bones(obj, LEFT_ARM) & set(captured[1])
    assert_plays({f: captured[f] for f in range(25, 46)}, played(obj, range(25, 46)), arm, size, BAKED_MOVE,
                 BAKED_TURN, "baked over the switch")


def test_feet_are_planted_over_a_range_the_legs_play_in_ik_whatever_the_current_frame_plays():
    """Plant Feet over 50-60 with the scene on a frame the left leg plays in FK (keyed over 30-40): planted (it
    was refused as 'not fully in IK', read on the current frame); over a range the leg plays in FK on, refused
    naming the frame, with nothing changed."""
    obj, size, _ = capture()
    api.auto_rig(obj)
    api.snap_limb(obj, LEFT_LEG, "FK", key=True, frame=30)
    api.snap_limb(obj, LEFT_LEG, "IK", key=True, frame=40)
    bpy.context.scene.frame_set(35)
    shot = Shot(obj, FRAMES, size)
    lowest = min((obj.matrix_world @ shot.shown[f][foot].translation).z
                 for f in range(50, 61) for foot in ("mixamorig:LeftFoot", "mixamorig:RightFoot"))
    ground = floor(lowest - 0.02 * size)
    kept = snapshot(obj)
    with pytest.raises(RigError, match="not fully in IK on frame 30"):
        api.plant_feet(obj, ground, range(25, 45))
    assert same(kept, snapshot(obj))
    shot.step("refused over 25-45")
    result = api.plant_feet(obj, ground, range(50, 61))
    assert sorted(result.feet) == [LEFT_LEG, RIGHT_LEG]
    legs = limb_bones(obj, LEFT_LEG) | limb_bones(obj, RIGHT_LEG)
    owned = made_bones(obj, LEFT_LEG) | made_bones(obj, RIGHT_LEG) | {HIPS}
    moved = shot.step("feet planted over 50-60", range(50, 61), set(shot.shown[1]) if result.hips else legs,
                      owned=owned, switches=False)
    assert moved


@pytest.mark.parametrize("first, then", [
    pytest.param({}, {"foot_roll": True}, id="foot-roll-on"),
    pytest.param({}, {"soft_ik": 0.1}, id="soft-ik-on"),
    pytest.param({"soft_ik": 0.1}, {"soft_ik": 0.2}, id="soft-ik-changed"),
    pytest.param({"soft_ik": 0.1}, {"soft_ik": 0.0}, id="soft-ik-off"),
    pytest.param({"foot_roll": True}, {"foot_roll": False}, id="foot-roll-off"),
    pytest.param({"soft_ik": 0.1}, {"pole_parent": "HANDLE"}, id="soft-ik-kept")])
def test_a_rebuild_turning_a_part_on_or_off_keeps_the_capture_playing(first, then):
    """A rebuild that turns on a Foot Roll or Soft IK, changes the Soft IK or turns either off keys the leg's
    controls anew, so the capture plays as before (the rebuilt leg's kept keys played through the new parts:
    the toes 11 degrees off with a foot roll, the knee 10 degrees with soft IK 0.1)."""
    obj, size, captured = capture()
    api.auto_rig(obj, **first)
    shot = Shot(obj, FRAMES, size)
    built = api.build(obj, RIGHT_LEG, both_sides=False, **then)
    moved = shot.step(f"rebuilt with {then}", FRAMES, limb_bones(obj, RIGHT_LEG), owned=limb_bones(obj, RIGHT_LEG),
                      switches=False)
    users = set(captured[1])
    worst = max((gap for poses in moved.values() for name, gap in poses.items() if name in users),
                default=(0.0, 0.0))
    assert worst[0] < 1e-4 and worst[1] < 0.05, worst
    baked = any("baked" in note for note in built[0].notes)
    assert baked == ("pole_parent" not in then), built[0].notes


def test_a_rebuild_keying_the_controls_anew_over_a_keyed_parent_switch_keeps_the_capture_playing():
    """The arm's hand switched to the hips at 35 (keyed), then the arm rebuilt with soft IK: its controls are keyed
    anew under the parent each frame plays (the build failed, the hips not read for the bake), the switch's keys
    kept, and the capture plays as before."""
    obj, size, captured = capture()
    api.auto_rig(obj)
    api.build(obj, LEFT_ARM, both_sides=False, parent_switch=True)
    api.switch_parent(obj, LEFT_ARM, "Root", key=True, frame=35)
    shot = Shot(obj, FRAMES, size)
    arm = limb_bones(obj, LEFT_ARM)
    api.build(obj, LEFT_ARM, both_sides=False, soft_ik=0.1)
    moved = shot.step("arm rebuilt with soft IK over its keyed switch", FRAMES, arm, owned=arm, switches=False)
    assert not any(name in captured[1] for poses in moved.values() for name in poses), moved
    handle = obj.pose.bones[next(item for item in api.limbs(obj) if item.name == LEFT_ARM).bones["HANDLE"]]
    for frame, chosen in ((34, 0), (35, 1), (69, 1)):
        bpy.context.scene.frame_set(frame)
        assert handle["parent"] == chosen, frame


def test_bakes_both_ways_over_a_range_then_every_limb_removed():
    """Bake IK to FK over 20-30 switching to FK and clearing the controls' keys there, back FK to IK switching
    to IK, then every limb removed keeping the motion: each step plays the capture as before, the frames
    outside 20-30 untouched by the bakes."""
    obj, size, captured = capture()
    api.auto_rig(obj)
    shot = Shot(obj, FRAMES, size)
    users = set(captured[1])
    rigged = set().union(*(limb_bones(obj, limb.name) for limb in api.limbs(obj)))
    bpy.context.scene.frame_set(60)
    for direction, clear in (("IK_TO_FK", True), ("FK_TO_IK", False)):
        api.bake(obj, direction, range(20, 31), switch=True, clear=clear)
        moved = shot.step(f"baked {direction} over 20-30", range(20, 31), owned=rigged, switches=False)
        assert not any(name in users for poses in moved.values() for name in poses), moved
    for limb in api.limbs(obj):
        api.remove(obj, limb.name)
    moved = shot.step("every limb removed", FRAMES, rigged, owned=rigged, switches=False)
    assert not any(name in users for poses in moved.values() for name in poses), moved
    assert not obj.ik_rigger.limbs
