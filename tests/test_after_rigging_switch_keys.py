"""After rigging, the IK/FK switch keyed mid-shot: a snap keyed on a frame switches there, as a cut, and
the frames before it play as they did (no blend from the key before, no switch over the whole shot)."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, chain_length, evaluate, import_bvh, rotation_degrees

from ik_rigger import api

LEG = "LeftLeg"


@pytest.fixture
def animated() -> bpy.types.Object:
    """The motion-capture skeleton rigged, in Pose mode, its left leg animated in IK: the handle keyed
    on frames 1 and 30."""
    obj = import_bvh("pymo_walk.bvh")
    api.auto_rig(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    handle = obj.pose.bones["LeftFoot_IK"]
    handle.location = (0.0, 0.0, 0.0)
    handle.keyframe_insert("location", frame=1)
    handle.location = (0.0, 10.0, 15.0)
    handle.keyframe_insert("location", frame=30)
    return obj


def _played(obj: bpy.types.Object, frames: range) -> dict[int, tuple[float, dict]]:
    """Each frame's IK/FK switch and the leg's evaluated pose."""
    chain = [limb for limb in api.limbs(obj) if limb.name == LEG][0].chain
    shown = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        pose = evaluate(obj)
        shown[frame] = (obj.pose.bones["LeftFoot_IK"]["ik_fk"], {name: pose[name] for name in chain})
    return shown


@pytest.mark.parametrize("keyed_before", [True, False], ids=["switch keyed by hand on frame 1", "switch not animated"])
def test_a_snap_keyed_mid_shot_leaves_the_frames_before_it_as_they_played(animated, keyed_before):
    obj = animated
    handle = obj.pose.bones["LeftFoot_IK"]
    handle["ik_fk"] = 1.0
    if keyed_before:
        handle.keyframe_insert('["ik_fk"]', frame=1)  # Bezier, as Blender keys by hand
    before = _played(obj, range(1, 20))
    bpy.context.scene.frame_set(20)
    shown = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_fk_to_ik(limb=LEG, keyframe=True) == {"FINISHED"}
    after = _played(obj, range(1, 21))
    length = chain_length(obj, ["LeftUpLeg", "LeftLeg"])
    assert after[20][0] == 0.0
    assert all(moved < 1e-4 * length and turned < 0.01 for moved, turned in (
        ((shown[name].translation - matrix.translation).length, rotation_degrees(shown[name], matrix))
        for name, matrix in after[20][1].items()))
    for frame in range(1, 20):
        assert after[frame][0] == 1.0, frame
        for name, matrix in before[frame][1].items():
            # Blender's IK starts from the chain's own pose, which the snap keyed: a tenth of a degree.
            assert (matrix.translation - after[frame][1][name].translation).length < 3e-3 * length, (frame, name)
            assert rotation_degrees(matrix, after[frame][1][name]) < 0.3, (frame, name)


def test_a_snap_keyed_on_a_limb_whose_switch_was_deleted_makes_it_again_and_keys_it(animated):
    obj = animated
    del obj.pose.bones["LeftFoot_IK"]["ik_fk"]  # from the handle's Custom Properties, by hand
    bpy.context.scene.frame_set(20)
    assert bpy.ops.ik_rigger.snap_fk_to_ik(limb=LEG, keyframe=True) == {"FINISHED"}
    shown = _played(obj, range(19, 21))
    assert (shown[19][0], shown[20][0]) == (1.0, 0.0)


def test_a_snap_keyed_in_nla_tweak_mode_cuts_the_switch_in_the_strip_s_time(animated):
    """Tweaking a strip that plays the action ten frames later, blending from IK to FK by linear keys:
    the snap's cut lands on the strip's frames, holding the blend as it played."""
    obj = animated
    handle = obj.pose.bones["LeftFoot_IK"]
    for frame, value in ((1, 1.0), (25, 0.0)):
        handle["ik_fk"] = value
        handle.keyframe_insert('["ik_fk"]', frame=frame)
    curve = next(curve for curve in all_fcurves(obj) if curve.data_path.endswith('["ik_fk"]'))
    for point in curve.keyframe_points:
        point.interpolation = "LINEAR"
    data = obj.animation_data
    track = data.nla_tracks.new()
    strip = track.strips.new("Walk", 11, data.action)  # the action's frame 1 plays on frame 11
    data.action = None
    track.select = strip.select = True
    data.use_tweak_mode = True
    before = _played(obj, range(11, 30))
    bpy.context.scene.frame_set(30)
    assert bpy.ops.ik_rigger.snap_fk_to_ik(limb=LEG, keyframe=True) == {"FINISHED"}
    after = _played(obj, range(11, 31))
    assert [round(after[frame][0], 5) for frame in range(11, 30)] == [round(before[frame][0], 5)
                                                                      for frame in range(11, 30)]
    assert after[30][0] == 0.0
    cut = [(point.co.x, point.interpolation) for point in curve.keyframe_points if point.co.x in (19.0, 20.0)]
    assert cut == [(19.0, "CONSTANT"), (20.0, "CONSTANT")]
