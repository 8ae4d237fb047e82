"""A stray key in a clip a build keeps the motion of: in one of the file's other clips it is named as in the
action that plays (before, it was kept without a word), and one far enough to cost more than the clip is
worth (the glTF Fox's Run stretched to frame 100000 took 15 s and 1.4 GB more memory) is refused before
anything changes, naming the clip, the bone and the frame (tests/test_build_stray_key.py: the action that
plays, a stray key near enough to keep)."""

from __future__ import annotations

import time

import bpy
import pytest
from helpers import DATA, same, snapshot
from test_scene_far_key import _curves, _stray_key

from ik_rigger import api
from ik_rigger.rig.stray_keys import MOST_FRAMES


def _fox() -> tuple[bpy.types.Object, bpy.types.Action, bpy.types.Action]:
    """The glTF Fox, its action that plays and its clip Run (Run_root... on Blender 4.2), which does not."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    playing = obj.animation_data.action
    run = next(action for action in bpy.data.actions if action.name.startswith("Run") and action != playing)
    return obj, playing, run


def _warnings(limbs) -> list[str]:
    return [note for limb in limbs for note in limb.warnings if "because of a key" in note]


def test_a_stray_key_in_another_clip_is_kept_and_named():
    obj, _, run = _fox()
    last = int(run.frame_range[1])
    bone = _stray_key(run, last + 1500)
    built = api.auto_rig(obj)
    said = _warnings(built)
    assert len(said) == 1, said
    assert f"the clip '{run.name}'" in said[0] and f"the bone '{bone}'" in said[0]
    assert f"at frame {last + 1500}" in said[0] and "delete that key" in said[0]
    # Kept, on every frame up to the key: the handles are keyed in the clip's own action up to it.
    handles = {f'pose.bones["{limb.bones["HANDLE"]}"]' for limb in built}
    keyed = [point.co[0] for curve in _curves(run) if curve.data_path.rsplit(".", 1)[0] in handles
             for point in curve.keyframe_points]
    assert keyed and max(keyed) == last + 1500 < MOST_FRAMES


@pytest.mark.parametrize("where", ["another clip", "the action that plays"])
def test_a_stray_key_too_far_is_refused_naming_it_and_changing_nothing(where):
    obj, playing, run = _fox()
    action = run if where == "another clip" else playing
    assert MOST_FRAMES < 100000
    bone = _stray_key(action, 100000)
    before = snapshot(obj)
    keys = {item.name: [tuple(point.co) for curve in _curves(item) for point in curve.keyframe_points]
            for item in bpy.data.actions}
    started = time.process_time()
    with pytest.raises(api.RigError) as refused:
        api.auto_rig(obj)
    assert time.process_time() - started < 3.0
    said = str(refused.value)
    assert f"'{action.name}'" in said and f"the bone '{bone}'" in said and "at frame 100000" in said, said
    assert "Delete that key" in said and "Ignore" in said
    assert same(snapshot(obj), before)
    assert {item.name: [tuple(point.co) for curve in _curves(item) for point in curve.keyframe_points]
            for item in bpy.data.actions} == keys
    # Built with the motion ignored, as the refusal says, it goes through.
    assert api.auto_rig(obj, animation="IGNORE")

