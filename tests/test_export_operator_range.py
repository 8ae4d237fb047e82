"""The export operator called from a script with Frame Range on and no Start or End bakes the scene's range,
as its panel offers it from File > Export (it baked frames 1 to 250, the properties' defaults)."""

from __future__ import annotations

import json
import struct

import bpy
from helpers import DATA

from ik_rigger import api


def frames_in(path: str) -> list[int]:
    """Each animation's frame count in a .glb: the count of its first sampler's times."""
    with open(path, "rb") as stream:
        data = stream.read()
    length = struct.unpack_from("<I", data, 12)[0]
    document = json.loads(data[20:20 + length])
    return [document["accessors"][animation["samplers"][0]["input"]]["count"]
            for animation in document["animations"]]


def test_a_script_export_over_a_frame_range_takes_the_scenes(tmp_path):
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    api.auto_rig(obj)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 3, 9
    path = str(tmp_path / "hero.glb")
    assert bpy.ops.ik_rigger.export(filepath=path, use_frame_range=True) == {"FINISHED"}
    assert frames_in(path) == [7]
    assert bpy.ops.ik_rigger.export(filepath=path, use_frame_range=True, frame_end=5) == {"FINISHED"}
    assert frames_in(path) == [3]
