"""A stray key far from the others (a slip of the mouse in the Graph editor) stretches the action a build
keeps the motion of: Auto-Rig keeps it exactly, on every frame up to the key, and says so, naming the key
and what to do (the export refuses such a clip: tests/test_scene_far_key.py)."""

from __future__ import annotations

import bpy
from helpers import all_fcurves, chain_length
from test_bake import assert_plays_the_same, import_mocap, played

from ik_rigger import api

STRAY = 1500  # frames beyond the capture's last key


def _capture() -> tuple[bpy.types.Object, int]:
    obj = import_mocap()
    return obj, int(obj.animation_data.action.frame_range[1])


def _warnings(limbs) -> list[str]:
    return [note for limb in limbs for note in limb.warnings]


def test_a_stray_key_is_kept_and_named_after_auto_rig():
    obj, last = _capture()
    leg = "mixamorig:LeftLeg"
    curve = next(curve for curve in all_fcurves(obj) if curve.data_path.startswith(f'pose.bones["{leg}"].rotation'))
    curve.keyframe_points.insert(last + STRAY, curve.keyframe_points[-1].co[1] + 0.2)
    expected = played(obj, [1, last, last + STRAY // 2, last + STRAY])
    limbs = api.auto_rig(obj)
    said = [note for note in _warnings(limbs) if "because of a key" in note]
    assert len(said) == 1, _warnings(limbs)
    assert f"the action '{obj.animation_data.action.name}'" in said[0] and f"the bone '{leg}'" in said[0]
    assert f"at frame {last + STRAY}" in said[0] and "delete that key" in said[0]
    # Kept exactly, the stray key's slow turn included.
    assert_plays_the_same(obj, expected, chain_length(obj, ["mixamorig:LeftUpLeg", leg]))


def test_a_capture_without_one_says_nothing_of_it():
    obj, _last = _capture()
    assert not [note for note in _warnings(api.auto_rig(obj)) if "because of a key" in note]
