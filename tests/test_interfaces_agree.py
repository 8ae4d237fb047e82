"""Auto-Rig in Blender's window, the API and the batch rig the same limbs of every character.

Each character of tests/data (and a VRM 0.0 avatar laid out as its family does) is imported
with the importer's default settings, glTF's default bone shapes included, and rigged by the
operator, by ``api.auto_rig`` and by the batch command: none of them turns the user's bones
(limbs whose bones do not run joint to joint are solved on a hidden chain), so all three find
and rig the same limbs, chain for chain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import bpy
import pytest
from helpers import DATA
from test_batch_safety import report_of, run
from test_detect_families import skinned_gltf, vrm0_humanoid

import ik_rigger
from ik_rigger import api

CHARACTERS = sorted(path.name for path in DATA.iterdir() if path.suffix in (".glb", ".gltf", ".bvh"))
AVATAR = "vrm0_avatar.gltf"
# Characters no interface rigs, each saying why: most of the dog's bones keep Blender's default names, the
# skeleton monster's legs and arms each have a copy that could be the limb as well, Kenney's mini character's
# legs and arms are one bone each.
REFUSED = {"gltf_quaternius_dog_skeleton.glb": "Blender's default names",
           "gltf_quaternius_skeleton_monster.glb": "2 chains could be the right leg",
           "gltf_kenney_mini_character_skeleton.glb": "its legs and arms are one bone each"}


def _import(path: Path) -> list[bpy.types.Object]:
    """``path`` imported with its importer's defaults into a fresh scene; its armatures."""
    ik_rigger.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ik_rigger.register()
    if path.suffix == ".bvh":
        bpy.ops.import_anim.bvh(filepath=str(path))
    else:
        bpy.ops.import_scene.gltf(filepath=str(path))
    return sorted((obj for obj in bpy.data.objects if obj.type == "ARMATURE"), key=lambda obj: obj.name)


def _by_api(path: Path) -> dict[str, list[list[str]]]:
    rigged = {}
    for obj in _import(path):
        try:
            built = api.auto_rig(obj)
        except api.RigError:
            built = []
        rigged[obj.name] = sorted(list(limb.chain) for limb in built)
    return rigged


def _by_operator(path: Path) -> dict[str, list[list[str]]]:
    rigged = {}
    for obj in _import(path):
        for other in bpy.context.view_layer.objects:
            other.select_set(other == obj)
        bpy.context.view_layer.objects.active = obj
        bpy.ops.object.mode_set(mode="POSE")
        try:
            bpy.ops.ik_rigger.auto_rig()
        except RuntimeError:  # nothing rigged: the operator's error
            pass
        bpy.ops.object.mode_set(mode="OBJECT")
        rigged[obj.name] = sorted(list(json.loads(limb.inventory)["chain"]) for limb in obj.ik_rigger.limbs)
    return rigged


@pytest.fixture(scope="module")
def batch_report(tmp_path_factory) -> dict[str, dict]:
    """One batch run over every character (headless Blender processes of its own)."""
    folder = tmp_path_factory.mktemp("characters")
    inputs = folder / "in"
    inputs.mkdir()
    for name in CHARACTERS:
        shutil.copy(DATA / name, inputs / name)
    (inputs / AVATAR).write_text(json.dumps(skinned_gltf(vrm0_humanoid(), "a VRM 0.0 humanoid's layout")))
    result = run(str(inputs), "--out", str(folder / "out"), "--report", str(folder / "report.json"), keep=[inputs])
    assert result.returncode in (0, 1), result.stdout + result.stderr
    report = report_of(folder / "report.json")
    report["_inputs"] = {"folder": str(inputs)}
    return report


@pytest.mark.parametrize("name", [*CHARACTERS, AVATAR])
def test_the_window_the_api_and_the_batch_rig_the_same_limbs(batch_report, name):
    path = Path(batch_report["_inputs"]["folder"]) / name
    entry = batch_report[name]
    by_batch = {armature["name"]: sorted(armature["limbs"]) for armature in entry["armatures"]}
    by_api = _by_api(path)
    assert {armature: chains for armature, chains in by_api.items() if chains} == {
        armature: chains for armature, chains in by_batch.items() if chains}, name
    assert _by_operator(path) == by_api, name
    if name in REFUSED:  # refused alike, saying why
        assert not any(by_api.values()) and entry["status"] == "failed", entry
        assert REFUSED[name] in " ".join([entry["error"], *entry["notes"], *(
            line for armature in entry["armatures"] for line in armature["skipped"])]), entry
        return
    # Every other character is rigged: no interface asks for its bones to be turned.
    assert any(by_api.values()), name
