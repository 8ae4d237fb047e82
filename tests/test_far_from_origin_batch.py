"""The batch says where a character stands too far from the world's origin for Blender's IK as a warning
naming the armature, as a build does, and leaves where it stands as it was."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from helpers import leg_bones, make_armature

from ik_rigger.batch import rig_file as files
from ik_rigger.limb.config import Config


def test_the_batch_warns_of_a_small_leg_far_from_the_origin(tmp_path: Path) -> None:
    obj = make_armature(leg_bones(), mode="OBJECT")
    obj.location = (10000.0, 0.0, 0.0)
    obj.scale = (0.01,) * 3
    source = tmp_path / "far.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(source), copy=True)
    result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "far.blend")), Config())
    assert result.status == "rigged", result.error
    warned = [text for text in result.warnings if "from the world's origin" in text]
    assert warned and "'Rig'" in warned[0] and "move the character nearer the world's origin" in warned[0], result
    assert not any("from the world's origin" in text for text in result.notes)
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "far.blend"), use_scripts=False)
    kept = bpy.data.objects["Rig"]
    assert tuple(kept.location) == (10000.0, 0.0, 0.0)
    assert tuple(kept.scale) == pytest.approx((0.01, 0.01, 0.01), rel=1e-6)
