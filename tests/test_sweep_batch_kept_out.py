"""The batch on a .blend whose character the file keeps out of Blender's evaluation or editing (its collection
excluded, disabled in viewports or hidden in the view layer): the file fails with what keeps it out and
what to do, as the API and Auto-Rig say, never "no limbs found ... name the limbs in a --config file"
(which would fail the same way); with another armature the file rigs, that one is rigged and the one
kept out is said among the skipped."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, make_armature
from test_batch_safety import report_of, run


def _kept_out(how: str, name: str = "Rig") -> None:
    obj = bpy.data.objects[name]
    collection = bpy.data.collections.new("Characters")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)
    if how == "excluded":
        bpy.context.view_layer.layer_collection.children[collection.name].exclude = True
    elif how == "disabled":
        collection.hide_viewport = True
    else:
        bpy.context.view_layer.layer_collection.children[collection.name].hide_viewport = True


def _save(path, how: str, other: bool = False) -> None:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    make_armature(both_legs(), name="Rig", mode="OBJECT")
    _kept_out(how)
    if other:
        make_armature(both_legs(), name="Other", mode="OBJECT")
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)


WHY = {"excluded": ("in the collection 'Characters', excluded from the view layer", "Include it in the view layer"),
       "disabled": ("in the collection 'Characters', disabled in viewports", "Enable it in viewports"),
       "hidden": ("in the hidden collection 'Characters'", "Show its collection in the viewport")}


@pytest.mark.parametrize("how", sorted(WHY))
def test_a_character_its_collection_keeps_out_fails_saying_why_and_what_to_do(tmp_path, how):
    source = tmp_path / "in" / "hero.blend"
    _save(source, how)
    result = run(str(source), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[tmp_path / "in"])
    assert result.returncode == 1, result.stdout + result.stderr
    problem, remedy = WHY[how]
    failed = next(line for line in result.stdout.splitlines() if "FAILED" in line)
    assert f"the armature 'Rig' is {problem}" in failed and remedy in failed, failed
    assert "no limbs found" not in result.stdout and "--config" not in failed, result.stdout
    assert not (tmp_path / "out" / "hero.blend").exists()


def test_the_other_armature_of_the_file_is_rigged_and_the_one_kept_out_said(tmp_path):
    source = tmp_path / "in" / "two.blend"
    _save(source, "excluded", other=True)
    result = run(str(source), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout + result.stderr
    armatures = {entry["name"]: entry for entry in report_of(tmp_path / "report.json")["two.blend"]["armatures"]}
    assert armatures["Other"]["status"] == "rigged" and armatures["Rig"]["status"] == "untouched"
    assert any("excluded from the view layer" in why for why in armatures["Rig"]["skipped"]), armatures["Rig"]
