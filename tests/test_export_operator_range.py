"""The export operator called from a script with Frame Range on and no Start or End bakes the scene's range,
as its panel offers it from File > Export (it baked frames 1 to 250, the properties' defaults)."""

from __future__ import annotations

import json
import struct

import bpy
import pytest
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


@pytest.mark.parametrize("frame_range, said", [
    ((10, 5), r"\(10, 5\) runs backwards"),
    ((1.5, 4), r"\(1.5, 4\) starts or ends between frames"),
    ((1,), r"\(1,\) is not a \(first, last\) pair of frames"),
    (("a", 5), r"\('a', 5\) is not a \(first, last\) pair of frames"),
    ("15", r"'15' is not a \(first, last\) pair of frames"),
    (5, r"5 is not a \(first, last\) pair of frames"),
    ((0, 2_000_000), r"reaches past frame 1048574, the last Blender plays"),
])
def test_a_frame_range_that_is_no_range_of_frames_is_refused_saying_what_and_writing_nothing(tmp_path, frame_range,
                                                                                             said):
    """(1.5, 4) baked from frame 1; "15" baked frames 1 to 5; ('a', 5) and 5 ended on a ValueError or
    TypeError; (0, 2000000) baked for more than ten minutes, taking ever more memory."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    api.auto_rig(obj)
    with pytest.raises(api.RigError, match=said + r".*Give the first frame, then the last one, as whole frames"):
        api.export(obj, str(tmp_path / "hero.glb"), frame_range=frame_range)
    assert list(tmp_path.iterdir()) == []
    assert frames_in(api.export(obj, str(tmp_path / "hero.glb"), frame_range=(3.0, 5)).path) == [3]
