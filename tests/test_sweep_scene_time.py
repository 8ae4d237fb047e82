"""Scenes whose time is set up otherwise than Blender's default: Time Stretching (Output properties, the
render settings' frame_map_old and frame_map_new), a start before frame 0, a frame step other than 1,
23.976 frames a second, chain bones turned by Axis Angle. Keys are written at the keys' own frames, so the
poses they are made from are read there; a key of the frame shown, which plays other keys, is refused."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length, evaluate, keys_by_curve, rotation_degrees
from test_bake import animated_leg, assert_plays_the_same, played
from test_export import action_curves, assert_fbx_plays_the_rig, assert_three_plays_the_rig, legs_character, state
from test_ground import assert_planted, plane, walking_biped

from ik_rigger import api


def _stretched(scene: bpy.types.Scene) -> None:
    """Every frame played twice as long: frame F plays the keys of frame F / 2."""
    scene.render.frame_map_old, scene.render.frame_map_new = 100, 200


def _keys(obj: bpy.types.Object) -> dict[tuple[str, int], list[float]]:
    return keys_by_curve(all_fcurves(obj))


def test_stretched_time_keeps_the_motion_through_auto_rig_the_bakes_and_remove():
    """Before, the motion was read on the scene's frames (the keys of half of them) and keyed on the keys'
    frames: rigged, the leg played 0.9 degree off. The scene's frames that play whole key frames are compared
    (those between play the keys' interpolation)."""
    obj, chain = animated_leg()
    _stretched(bpy.context.scene)
    length = chain_length(obj, chain)
    before = played(obj, range(2, 51, 2))
    api.auto_rig(obj)
    assert_plays_the_same(obj, before, length)
    api.bake(obj, "IK_TO_FK", switch=True)
    assert_plays_the_same(obj, before, length)
    api.bake(obj, "FK_TO_IK", switch=True)
    assert_plays_the_same(obj, before, length)
    api.remove(obj, "shin.L")
    assert_plays_the_same(obj, before, length)
    assert (bpy.context.scene.render.frame_map_old, bpy.context.scene.render.frame_map_new) == (100, 200)


def test_stretched_time_exports_each_clip_as_keyed(tmp_path):
    """Before, a clip of frames 1 to 20 was read on the scene's frames 1 to 20, which play its keys 0.5 to
    10: the file held the first half of each clip, its feet up to 0.4 of the character's height off."""
    obj = legs_character()
    scene = bpy.context.scene
    _stretched(scene)
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert state() == before
    scene.render.frame_map_new = 100  # the reader plays the clips' frames as keyed
    assert_three_plays_the_rig(obj, tmp_path / "legs.glb", report)


def test_stretched_time_plants_the_feet_over_a_range_on_the_frames_that_play_each_key():
    """Before, the feet were planted where the scene's frames showed them, half a stride early."""
    obj = walking_biped()
    _stretched(bpy.context.scene)
    ground = plane(location=(0.0, 0.0, 0.04))
    api.plant_feet(obj, ground, range(1, 25))
    for frame, side in ((2, "L"), (12, "R"), (20, "L"), (20, "R")):  # frames each foot is down, as keyed
        bpy.context.scene.frame_set(2 * frame)
        assert_planted(obj, ground, f"foot.{side}", f"thigh.{side}", f"shin.{side}")


def test_a_key_of_the_frame_shown_while_time_is_stretched_is_refused_and_changes_nothing():
    obj, chain = animated_leg()
    api.build(obj, "shin.L", both_sides=False, parent_switch=True)
    _stretched(bpy.context.scene)
    bpy.context.scene.frame_set(13)
    keys = _keys(obj)
    pose = {bone.name: bone.matrix_basis.copy() for bone in obj.pose.bones}
    handle = obj.pose.bones[obj.ik_rigger.limbs[0].handle]
    for call in (lambda: api.snap_limb(obj, "shin.L", "FK", key=True),
                 lambda: api.switch_parent(obj, "shin.L", 1, key=True)):
        with pytest.raises(api.RigError) as refused:
            call()
        assert "stretches time" in str(refused.value) and "Old 100, New 200" in str(refused.value), str(refused.value)
    assert _keys(obj) == keys and handle["ik_fk"] == 1.0 and handle["parent"] == 0
    assert {bone.name: bone.matrix_basis for bone in obj.pose.bones} == pose
    # Unkeyed, the snap lands on the pose shown.
    shown = evaluate(obj)
    api.snap_limb(obj, "shin.L", "FK")
    now = evaluate(obj)
    for name in chain:
        assert (shown[name].translation - now[name].translation).length < 1e-4 * chain_length(obj, chain), name
        assert rotation_degrees(shown[name], now[name]) < 0.01, name


def test_auto_keying_while_time_is_stretched_snaps_unkeyed_and_says_why(capsys):
    obj, _chain = animated_leg()
    api.build(obj, "shin.L", both_sides=False)
    _stretched(bpy.context.scene)
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    bpy.context.scene.frame_set(13)
    keys = _keys(obj)
    obj.data.bones.active = obj.data.bones["shin.L"]
    assert bpy.ops.ik_rigger.snap_fk_to_ik() == {"FINISHED"}
    assert "Not keyed, although auto-keying is on" in capsys.readouterr().out
    assert _keys(obj) == keys and obj.pose.bones[obj.ik_rigger.limbs[0].handle]["ik_fk"] == 0.0


def _shifted(obj: bpy.types.Object, by: float) -> None:
    for curve in all_fcurves(obj):
        for point in curve.keyframe_points:
            point.co.x += by
            point.handle_left.x += by
            point.handle_right.x += by


def _negative(obj: bpy.types.Object) -> range:
    bpy.context.scene.frame_start = -40
    _shifted(obj, -30)
    return range(-29, -4)


def _step(obj: bpy.types.Object) -> range:
    bpy.context.scene.frame_step = 3
    return range(1, 26)


def _ntsc_film(obj: bpy.types.Object) -> range:
    bpy.context.scene.render.fps, bpy.context.scene.render.fps_base = 24, 1.001
    return range(1, 26)


def _axis_angle(obj: bpy.types.Object) -> range:
    """The chain's turns keyed again as Axis Angle, as a file from another tool brings them."""
    chain = ["thigh.L", "shin.L"]
    frames = range(1, 26)
    turns = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        turns[frame] = {name: obj.pose.bones[name].matrix_basis.to_quaternion() for name in chain}
    from ik_rigger.rig.animation import fcurve_owners

    for owner in fcurve_owners(obj):
        for curve in [curve for curve in owner.fcurves if any(f'"{name}"' in curve.data_path for name in chain)]:
            owner.fcurves.remove(curve)
    for name in chain:
        obj.pose.bones[name].rotation_mode = "AXIS_ANGLE"
    for frame in frames:
        for name in chain:
            axis, angle = turns[frame][name].to_axis_angle()
            obj.pose.bones[name].rotation_axis_angle = (angle, *axis)
            obj.pose.bones[name].keyframe_insert("rotation_axis_angle", frame=frame)
    return frames


@pytest.mark.parametrize("setup", [_negative, _step, _ntsc_film, _axis_angle],
                         ids=["start before 0", "frame step 3", "23.976 fps", "axis angle"])
def test_motion_is_kept_snapped_and_baked_whatever_the_scene_s_time(setup):
    obj, chain = animated_leg()
    frames = setup(obj)
    length = chain_length(obj, chain)
    before = played(obj, frames)
    api.auto_rig(obj)
    assert_plays_the_same(obj, before, length)
    at = frames[12]
    bpy.context.scene.frame_set(at)
    shown = evaluate(obj)
    api.snap_limb(obj, "shin.L", "FK", key=True)
    bpy.context.scene.frame_set(at - 1)
    bpy.context.scene.frame_set(at)
    now = evaluate(obj)
    for name in chain:
        assert (shown[name].translation - now[name].translation).length < 1e-4 * length, name
        assert rotation_degrees(shown[name], now[name]) < 0.01, name
    api.bake(obj, "FK_TO_IK", frames, switch=True)
    assert_plays_the_same(obj, before, length)
    api.remove(obj, "shin.L")
    assert_plays_the_same(obj, before, length)


@pytest.mark.parametrize("suffix", ["glb", "fbx"])
def test_clips_before_frame_0_at_23_976_fps_with_axis_angle_bones_export_as_the_rig_plays_them(tmp_path, suffix):
    obj = legs_character()
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.001
    scene.frame_start = -40
    for action in bpy.data.actions:
        for curve in action_curves(action):
            for point in curve.keyframe_points:
                point.co.x -= 30
                point.handle_left.x -= 30
                point.handle_right.x -= 30
    for bone in obj.pose.bones:
        if not bone.name.startswith(("foot_IK", "shin_IK")):
            bone.rotation_mode = "AXIS_ANGLE"
    before = state()
    report = api.export(obj, str(tmp_path / f"legs.{suffix}"))
    assert state() == before
    assert {clip.name: (clip.first, clip.last) for clip in report.clips} == {"Walk": (-29, -10), "Kick": (-25, -12)}
    (assert_three_plays_the_rig if suffix == "glb" else assert_fbx_plays_the_rig)(obj, tmp_path / f"legs.{suffix}",
                                                                               report)


def test_the_operators_range_in_a_scene_that_stretches_time_is_the_keys_frames_it_plays():
    """Bake IK/FK and Plant Feet over Frame Range take the scene's (or preview) range: stretched, its frames
    1 to 48 play the keys of frames 0.5 to 24, which they bake (before, 1 to 48, keying 24 frames past the
    motion and lengthening its clip)."""
    from types import SimpleNamespace

    from ik_rigger.pose_operators import IKRIG_OT_bake

    obj = walking_biped()
    scene = bpy.context.scene
    _stretched(scene)
    scene.frame_start, scene.frame_end = 1, 48
    standin = SimpleNamespace(frame_start=1, frame_end=250, execute=lambda context: {"FINISHED"},
                              properties=SimpleNamespace(is_property_set=lambda name: False))
    assert IKRIG_OT_bake.invoke(standin, bpy.context, None) == {"FINISHED"}
    assert (standin.frame_start, standin.frame_end) == (1, 24)
    obj.ik_rigger.ground = plane(location=(0.0, 0.0, 0.04))
    handle = obj.ik_rigger.limbs[0].handle
    assert bpy.ops.ik_rigger.plant_feet(frames="RANGE") == {"FINISHED"}
    keyed = {round(point.co.x) for curve in all_fcurves(obj) if f'"{handle}"' in curve.data_path
             for point in curve.keyframe_points}
    assert keyed == set(range(1, 25))
