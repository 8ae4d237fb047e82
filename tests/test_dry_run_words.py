"""A dry run's plan in words a rigger places: a handle with no parent bone follows the armature itself
(as the sample command and the build's notes say), never 'parented to nothing'."""

from __future__ import annotations

import shutil

from helpers import DATA
from test_batch import run


def test_a_handle_with_no_parent_bone_is_said_to_follow_the_armature(tmp_path):
    source = shutil.copy(DATA / "mixamo_freebvh.bvh", tmp_path)
    result = run(str(source), "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "    handle mixamorig:LeftFoot_IK follows the armature itself (no parent bone)" in lines, result.stdout
    assert "    handle mixamorig:LeftHand_IK parented to mixamorig:Spine2" in lines, result.stdout
    assert "nothing" not in result.stdout
