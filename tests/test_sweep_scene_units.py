"""Export from a scene whose Unit Scale is not 1 (0.01: a Blender unit is a centimetre, as many who work for
Unreal set it). Each file holds the character at its size in its format's units, read back by readers that
are not IK Rigger's: three.js for .glb (metres), Blender's FBX importer in a fresh Blender and assimp for
.fbx (which says its unit)."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from export_readers import (
    ASSIMP_UNIT,
    DEGREES,
    POSITION,
    Y_UP,
    assimp_play,
    blender_rest,
    blender_skins,
    compare,
    fbx_play,
    height,
    skin_gap,
    three_play,
    three_skins,
)
from test_export import expected_clips, legs_character, state

from ik_rigger import api

CENTIMETRE = 0.01


def _worst(played, report, obj, axes, unit) -> tuple[float, float]:
    rest = blender_rest(obj, list(report.joints))
    gaps = [compare(played.clips[name], played.rest, frames, rest, height(obj), axes, unit)
            for name, frames in expected_clips(obj, report).items()]
    return max(moved for moved, _ in gaps), max(turned for _, turned in gaps)


def test_a_glb_from_a_centimetre_scene_holds_the_character_in_metres(tmp_path):
    """Blender's glTF exporter writes a Blender unit as a metre whatever the Unit Scale: before, a character
    1.2 units (centimetres) tall arrived 1.2 metres tall, a hundred times its size."""
    obj = legs_character()
    scene = bpy.context.scene
    scene.unit_settings.scale_length = CENTIMETRE
    before = state()
    report = api.export(obj, str(tmp_path / "legs.glb"))
    assert state() == before and scene.unit_settings.scale_length == pytest.approx(CENTIMETRE)
    played = three_play(str(tmp_path / "legs.glb"), scene.render.fps / scene.render.fps_base)
    moved, turned = _worst(played, report, obj, Y_UP, CENTIMETRE)
    assert moved < POSITION and turned < DEGREES, (moved, turned)
    # The skinned mesh, hanging from the armature, arrives at its size on the skeleton too.
    _rest, clips = three_skins(str(tmp_path / "legs.glb"), scene.render.fps / scene.render.fps_base)
    frames = list(range(report.clips[-1].first, report.clips[-1].last + 1))
    expected = blender_skins(obj, ["Body"], bpy.data.actions[report.clips[-1].name], frames)
    worst = max(skin_gap(played_skin, wanted, CENTIMETRE * Y_UP)
                for played_skin, wanted in zip(clips[report.clips[-1].name], expected))
    assert worst < POSITION * height(obj) * CENTIMETRE, worst


@pytest.mark.parametrize("system", ["METRIC", "NONE"])
def test_an_fbx_from_a_centimetre_scene_says_its_unit(tmp_path, system):
    """The FBX exporter writes the Unit Scale as the file's unit (none with the unit system None): Blender's
    importer, in a scene of unit scale 1, and assimp read the character at its size."""
    obj = legs_character()
    scene = bpy.context.scene
    scene.unit_settings.system = system
    scene.unit_settings.scale_length = CENTIMETRE
    report = api.export(obj, str(tmp_path / "legs.fbx"))
    unit = CENTIMETRE if system == "METRIC" else 1.0
    moved, turned = _worst(fbx_play(str(tmp_path / "legs.fbx")), report, obj, np.eye(3), unit)
    assert moved < POSITION and turned < DEGREES, (moved, turned)
    independent = assimp_play(str(tmp_path / "legs.fbx"), scene.render.fps / scene.render.fps_base)
    moved, turned = _worst(independent, report, obj, Y_UP, ASSIMP_UNIT * unit)
    assert moved < POSITION and turned < DEGREES, ("assimp", moved, turned)
