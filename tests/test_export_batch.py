"""The batch's --export: each rigged .blend's character also written for game engines beside it."""

from __future__ import annotations

import json
from pathlib import Path

import bpy
import pytest
from export_readers import fbx_play, three_play, validate
from test_batch import run, save_character


def _walk() -> None:
    """The character's legs keyed: a clip 'Walk' the batch keeps on the controls and exports."""
    obj = bpy.data.objects["Rig"]
    obj.animation_data_create()
    for frame, angle in {1: 0.0, 10: 0.6, 20: -0.3}.items():
        for side in ("L", "R"):
            bone = obj.pose.bones[f"thigh.{side}"]
            bone.rotation_mode = "XYZ"
            bone.rotation_euler = (angle if side == "L" else -angle, 0.0, 0.0)
            bone.keyframe_insert("rotation_euler", frame=frame)
    obj.animation_data.action.name = "Walk"


@pytest.mark.parametrize("suffix", ["glb", "fbx"])
def test_the_batch_writes_name_dot_suffix_beside_each_rigged_blend_and_lists_it(tmp_path, suffix):
    source = save_character(tmp_path / "in" / "hero.blend", extra=_walk)
    out = tmp_path / "out"
    done = run(str(source), "--out", str(out), "--export", suffix, "--report", str(tmp_path / "report.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    exported = out / f"hero.{suffix}"
    assert sorted(path.name for path in out.iterdir()) == sorted(["hero.blend", exported.name])
    assert json.loads((tmp_path / "report.json").read_text())["files"][0]["exports"] == [str(exported)]
    assert f"+ {exported}" in done.stdout
    if suffix == "glb":
        assert validate(str(exported))["issues"]["numErrors"] == 0
        played = three_play(str(exported), 24.0)
    else:
        played = fbx_play(str(exported))
    assert list(played.clips) == ["Walk"]
    assert sorted(played.joints) == ["foot.L", "foot.R", "hips", "root", "shin.L", "shin.R", "thigh.L", "thigh.R",
                                     "toe.L", "toe.R"]


def test_an_unknown_export_format_is_a_usage_error(tmp_path):
    source = save_character(tmp_path / "hero.blend")
    done = run(str(source), "--out", str(tmp_path / "out"), "--export", "obj")
    assert done.returncode == 2 and not (tmp_path / "out").exists()
    assert "--export" in done.stderr
    assert not Path(tmp_path / "out" / "hero.obj").exists()


def test_each_armature_of_a_file_is_written_beside_it_whatever_its_name(tmp_path):
    """Two armatures, one named with a slash: NAME_ARMATURE.glb for each, the slash made '_' (before, the
    file failed with a ValueError of Python's path)."""

    def second() -> None:
        from helpers import both_legs, make_armature

        make_armature(both_legs(), name="Hero/Body", mode="OBJECT")

    source = save_character(tmp_path / "in" / "hero.blend", extra=second)
    out = tmp_path / "out"
    done = run(str(source), "--out", str(out), "--export", "glb")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(path.name for path in out.iterdir()) == ["hero.blend", "hero_Hero_Body.glb", "hero_Rig.glb"]
