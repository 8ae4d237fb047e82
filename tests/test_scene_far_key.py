"""A key slipped far away in the Graph editor (frame 100000 under a clip of a second) stretched the
clip's range, and the export baked every frame up to it: half a minute and 2 GB at frame 20000, over
10 GB at 100000. It is refused now before anything is baked, naming the clip, the bone and the frame;
with the action's Manual Frame Range set (or a frame range given) the clip's own frames are baked."""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

import bpy
import numpy as np
import pytest
from export_readers import three_play
from helpers import DATA

from ik_rigger import api
from ik_rigger.rig import export_bake, export_range


def _curves(action: bpy.types.Action) -> list:
    if hasattr(action, "layers") and not hasattr(action, "fcurves"):
        return [curve for layer in action.layers for strip in layer.strips for bag in strip.channelbags
                for curve in bag.fcurves]
    return list(action.fcurves)


def _fox() -> tuple[bpy.types.Object, bpy.types.Action]:
    """The glTF Fox rigged, with its clip Run (Run_root... on Blender 4.2)."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    api.auto_rig(obj)
    run = next(clip.action for clip in export_bake.rig_clips(obj) if clip.name.startswith("Run"))
    return obj, run


def _stray_key(action: bpy.types.Action, frame: int) -> str:
    """A key at ``frame`` on the first bone curve of ``action`` (holding its last value); its bone."""
    curve = next(curve for curve in _curves(action) if curve.data_path.startswith("pose.bones["))
    curve.keyframe_points.insert(frame, curve.keyframe_points[-1].co[1])
    curve.update()
    return bpy.utils.unescape_identifier(curve.data_path.split('"')[1])


def _keys(action: bpy.types.Action) -> list[tuple]:
    return [(curve.data_path, curve.array_index, tuple(tuple(point.co) for point in curve.keyframe_points))
            for curve in _curves(action)]


def _state(obj: bpy.types.Object) -> dict:
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return {"data": sorted((kind, item.name) for kind in ("objects", "actions", "armatures", "meshes", "scenes")
                           for item in getattr(bpy.data, kind)),
            "frame": bpy.context.scene.frame_current,
            "keys": {action.name: _keys(action) for action in bpy.data.actions},
            "poses": [tuple(round(value, 5) for row in bone.matrix for value in row)
                      for bone in obj.evaluated_get(depsgraph).pose.bones]}


def _sampler_inputs(path: Path) -> dict[str, tuple[int, float]]:
    """Per animation of the .glb, its samplers' input (time) accessor: how many keys, the last time."""
    data = path.read_bytes()
    length, kind = struct.unpack_from("<II", data, 12)
    assert kind == 0x4E4F534A  # the JSON chunk
    gltf = json.loads(data[20:20 + length])
    found = {}
    for animation in gltf["animations"]:
        inputs = {sampler["input"] for sampler in animation["samplers"]}
        accessors = [gltf["accessors"][index] for index in inputs]
        assert len({accessor["count"] for accessor in accessors}) == 1, animation["name"]
        found[animation["name"]] = (accessors[0]["count"], max(accessor["max"][0] for accessor in accessors))
    return found


@pytest.mark.parametrize("far", [3000, 100000, 1000000])
def test_a_stray_key_far_away_is_refused_before_anything_is_baked(tmp_path, far):
    obj, run = _fox()
    first, last = run.frame_range
    bone = _stray_key(run, far)
    assert run.frame_range[1] == far
    before = _state(obj)
    start = time.process_time()
    with pytest.raises(api.RigError) as raised:
        api.export(obj, str(tmp_path / "fox.glb"))
    assert time.process_time() - start < 5.0
    message = str(raised.value)
    assert f"'{run.name}'" in message and f"'{bone}'" in message and f"frame {far}" in message, message
    assert f"frames {first:g} to {last:g}" in message and "Manual Frame Range" in message, message
    assert not list(tmp_path.iterdir())
    assert _state(obj) == before


def test_with_the_manual_frame_range_set_the_clip_s_frames_are_baked_and_nothing_changes(tmp_path):
    obj, run = _fox()
    first, last = (round(value) for value in run.frame_range)
    _stray_key(run, 100000)
    run.use_frame_range = True
    run.frame_start, run.frame_end = first, last
    before = _state(obj)
    report = api.export(obj, str(tmp_path / "fox.glb"))
    assert _state(obj) == before
    frames = last - first + 1
    assert [(clip.first, clip.last) for clip in report.clips if clip.name == run.name] == [(first, last)]
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    count, end = _sampler_inputs(tmp_path / "fox.glb")[run.name]
    assert count == frames and end == pytest.approx((frames - 1) / fps, abs=1e-4)
    assert len(three_play(str(tmp_path / "fox.glb"), fps).clips[run.name]) == frames
    # A frame range given bakes it, whatever the keys.
    run.use_frame_range = False
    report = api.export(obj, str(tmp_path / "range.glb"), clips=[run.name], frame_range=(first, first + 9))
    assert _sampler_inputs(tmp_path / "range.glb")[run.name][0] == 10


def test_keys_that_fill_a_long_clip_are_not_taken_for_a_stray_one():
    """A hold of 1100 frames inside 3000 keyed ones, or 900 empty frames after a short clip, is the
    clip's own: only an empty stretch over 1000 frames and over half the range is refused."""
    obj, run = _fox()
    clip = next(clip for clip in export_bake.rig_clips(obj) if clip.action == run)
    curve = next(curve for curve in _curves(run) if curve.data_path.startswith("pose.bones["))
    value = curve.keyframe_points[-1].co[1]
    curve.keyframe_points.insert(900, value)
    export_range.refuse_far_keys(obj, [clip])
    for frame in np.arange(1000, 3001, 100):
        if not 1500 < frame < 2600:
            curve.keyframe_points.insert(float(frame), value)
    export_range.refuse_far_keys(obj, [clip])
    curve.keyframe_points.insert(8000, value)
    with pytest.raises(api.RigError, match="frame 8000"):
        export_range.refuse_far_keys(obj, [clip])
