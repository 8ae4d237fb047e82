"""Each clip of a glTF export is an animation of its own frames on every Blender: the glTF exporter of
Blender 4.4 gives each NLA track but the last the next track's strips (``rig/gltf_tracks.py``)."""

from __future__ import annotations

import importlib
import importlib.util

from test_export import legs_character
from test_scene_far_key import _sampler_inputs

from ik_rigger import api

TRACKS = "io_scene_gltf2.blender.exp.animation.tracks"  # 4.3 on; 4.2's exporter has no such module
GROUPING = "__get_nla_tracks_obj"


def _grouping():
    if importlib.util.find_spec(TRACKS.rpartition(".")[0]) is None or importlib.util.find_spec(TRACKS) is None:
        return None
    return getattr(importlib.import_module(TRACKS), GROUPING, None)


def test_each_clip_is_an_animation_of_its_own_frames_and_the_exporter_is_left_as_it_was(tmp_path):
    obj = legs_character()
    grouping = _grouping()
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert _grouping() is grouping
    frames = {name: count for name, (count, _) in _sampler_inputs(tmp_path / "legs.glb").items()}
    assert frames == {clip.name: clip.frames for clip in report.clips} == {"Kick": 14, "Walk": 20}
