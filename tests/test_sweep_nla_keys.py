"""Keys IK Rigger writes at the scene's frames play as keyed, or it refuses, changing nothing.

With NLA strips, the action that takes the keys plays over them by its blending and influence, and in
NLA tweak mode the keys go into a strip's action, played through the strip's timing: an action at 50%
influence, one blended as Add, or a strip starting at frame 20 or played at half speed made the baked
controls play the capture up to 128 degrees off. Auto-Rig (which keys the motion) and Bake refuse
those states by name with what to do; with Animation set to Ignore nothing is keyed, and it builds.
"""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, evaluate, rotation_degrees, same, snapshot

from ik_rigger import api


def _on_strip(obj: bpy.types.Object, start: float = 1.0) -> tuple[bpy.types.AnimData, bpy.types.NlaStrip]:
    data = obj.animation_data
    action = data.action
    track = data.nla_tracks.new()
    strip = track.strips.new("capture", int(start), action)
    data.action = None
    return data, strip


def _tweaked_late(obj):
    data, strip = _on_strip(obj, 20)
    strip.select = True
    data.nla_tracks[0].select = True
    data.use_tweak_mode = True


def _tweaked_slow(obj):
    data, strip = _on_strip(obj)
    strip.scale = 2.0
    strip.select = True
    data.nla_tracks[0].select = True
    data.use_tweak_mode = True


def _half_influence(obj):
    data, strip = _on_strip(obj)
    data.action = strip.action.copy()
    data.action_influence = 0.5


def _added(obj):
    data, strip = _on_strip(obj)
    data.action = strip.action.copy()
    data.action_blend_type = "ADD"


STATES = {"tweak-mode-strip-at-20": (_tweaked_late, "NLA tweak mode"),
          "tweak-mode-strip-at-half-speed": (_tweaked_slow, "NLA tweak mode"),
          "action-at-half-influence": (_half_influence, "blended as Replace at 50% influence"),
          "action-added": (_added, "blended as Add at 100% influence")}


def _capture(state) -> bpy.types.Object:
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    state(obj)
    bpy.context.scene.frame_set(1)
    return obj


@pytest.mark.parametrize("name", sorted(STATES))
def test_auto_rig_refuses_keys_that_would_not_play_as_keyed_and_changes_nothing(name):
    state, said = STATES[name]
    obj = _capture(state)
    before = snapshot(obj)
    with pytest.raises(api.RigError) as refused:
        api.auto_rig(obj)
    assert said in str(refused.value) and "'mixamo_freebvh'" in str(refused.value), str(refused.value)
    assert "Animation set to Ignore" in str(refused.value)
    assert same(snapshot(obj), before)
    assert not obj.ik_rigger.limbs


@pytest.mark.parametrize("name", sorted(STATES))
def test_with_animation_ignored_it_builds_and_bake_refuses_alike(name):
    state, said = STATES[name]
    obj = _capture(state)
    built = api.auto_rig(obj, animation="IGNORE")
    assert len(built) == 4
    with pytest.raises(api.RigError, match=said) as refused:
        api.bake(obj, "FK_TO_IK", range(1, 10))
    assert "Animation set to Ignore" not in str(refused.value)  # a bake has no such option
    if name.startswith("tweak-mode"):  # a snap's keys, inserted as Blender's, go into the strip's time
        _snap_keys_play_as_keyed(obj, built[0].name)
    else:
        with pytest.raises(api.RigError, match=said):
            api.snap_limb(obj, built[0].name, "FK", key=True)


def _snap_keys_play_as_keyed(obj: bpy.types.Object, limb: str) -> None:
    scene = bpy.context.scene
    scene.frame_set(30)
    api.snap_limb(obj, limb, "FK", key=True)
    snapped = evaluate(obj)
    scene.frame_set(40)
    scene.frame_set(30)
    size = max(obj.dimensions)
    for name, matrix in evaluate(obj).items():
        assert (matrix.translation - snapped[name].translation).length < 1e-4 * size, name
        assert rotation_degrees(matrix, snapped[name]) < 0.01, name


def test_a_snap_in_tweak_mode_on_a_strip_not_replacing_at_full_influence_refuses():
    """Tweaking a strip blended as Add, or at an animated influence, a snap's keys would not play as keyed."""
    def blended(obj):
        _tweaked_late(obj)
        obj.animation_data.nla_tracks[0].strips[0].blend_type = "ADD"

    obj = _capture(blended)
    built = api.auto_rig(obj, animation="IGNORE")
    before = snapshot(obj)
    with pytest.raises(api.RigError, match="NLA tweak mode"):
        api.snap_limb(obj, built[0].name, "FK", key=True)
    assert same(snapshot(obj), before)


def test_an_action_at_full_influence_over_strips_keeps_the_capture_playing():
    """What still builds: the action that takes the keys plays over the strips at Replace and 100%."""
    obj = _capture(lambda obj: _on_strip(obj, 10))
    frames = range(1, 85, 4)
    before = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        before[frame] = evaluate(obj)
    api.auto_rig(obj)
    size = max(obj.dimensions)
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        now = evaluate(obj)
        for name, matrix in before[frame].items():  # the user's bones: the rig's were not there before
            assert (matrix.translation - now[name].translation).length < 1e-3 * size, (frame, name)
            assert rotation_degrees(matrix, now[name]) < 0.25, (frame, name)


def test_a_rebuild_that_would_key_its_controls_anew_refuses_alike_and_changes_nothing():
    obj = _capture(lambda obj: None)
    built = api.auto_rig(obj)
    _half_influence_over_own_strip(obj)
    bpy.context.scene.frame_set(1)  # the pose as the strips now play it
    before = snapshot(obj)
    with pytest.raises(api.RigError, match="50% influence"):
        api.build(obj, built[0].name, both_sides=False, pole_parent="HANDLE")
    assert same(snapshot(obj), before)


def _half_influence_over_own_strip(obj):
    """The rigged capture's action, keys of the controls and all, also on a strip, played over it at 50%."""
    data = obj.animation_data
    data.nla_tracks.new().strips.new("capture", 1, data.action)
    data.action_influence = 0.5
