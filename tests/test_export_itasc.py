"""iTaSC's export pose: iTaSC starts each frame's solve from the pose shown before, so a frame's pose depends on
the frames played before it (the metarig's limbs of the iTaSC option set, frame 10 reached from frame 9 or
from frame 25, 3.6% of the height apart). The export plays each clip from its first frame, as playback from the
start shows it (the export warns of iTaSC: docs/export.md), so the file is the same whichever frame the animator
stood on, and three.js plays it as Blender plays the clip from its first frame, on every frame: checked from
frame 25, the clip's far end (tests/test_export_options.py checks it from frame 1)."""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
from export_readers import height, three_play
from test_export import assert_three_plays_the_rig
from test_export_options import SETS, _rig_and_key

from ik_rigger import api


def _pose(obj: bpy.types.Object) -> np.ndarray:
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return np.array([np.array(bone.matrix) for bone in evaluated.pose.bones])


def test_an_itasc_clip_is_exported_as_it_plays_from_its_start_whatever_frame_is_shown(tmp_path: Path):
    obj = _rig_and_key(SETS["metarig-itasc-long-stretch"])
    scene = bpy.context.scene
    size = height(obj)
    scene.frame_set(9)
    scene.frame_set(10)
    from_before = _pose(obj)
    scene.frame_set(25)
    scene.frame_set(10)
    assert np.abs(_pose(obj) - from_before)[:, :3, 3].max() > 1e-2 * size, "this rig's iTaSC pose depends on the path"
    fps = scene.render.fps / scene.render.fps_base
    played = {}
    for start in (1, 25):
        scene.frame_set(start)
        report = api.export(obj, str(tmp_path / f"from_{start}.glb"))
        assert any("iTaSC" in warning for warning in report.warnings), report.warnings
        played[start] = three_play(str(tmp_path / f"from_{start}.glb"), fps)
    assert sorted(played[1].clips) == sorted(played[25].clips)
    for name, frames in played[1].clips.items():
        assert len(frames) == len(played[25].clips[name]), name
        for first, other in zip(frames, played[25].clips[name]):
            assert max(float(np.abs(first[joint] - other[joint]).max()) for joint in first) < 1e-6 * size, name
    scene.frame_set(25)
    assert_three_plays_the_rig(obj, tmp_path / "from_25.glb", report)
