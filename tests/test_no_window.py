"""The API called where the context has no window (a script run by a timer or an application handler, a
pipeline's load_post that rigs what it opens, or under ``temp_override(window=None)``) or overrides the scene with
one the window does not show. Blender's mode switch found no active object there, and its glTF exporter crashed.
Each step is done to two identical characters in one scene, one from the usual context and one from the other:
both must end the same, and the window where the user left it."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, evaluate, make_armature, same
from test_export import assert_three_plays_the_rig, skinned_mesh

from ik_rigger import api

STEPS = ("auto_rig", "snap", "bake", "plant_feet", "export", "remove")


def _character(name: str) -> bpy.types.Object:
    """Two legs and a skinned mesh; the clip kicks the left thigh forward and back (FK keys)."""
    obj = make_armature(both_legs(), name=name, mode="POSE")
    thigh = obj.pose.bones["thigh.L"]
    thigh.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (10, -0.8), (20, 0.3)):
        thigh.rotation_euler = (angle, 0.0, 0.0)
        thigh.keyframe_insert("rotation_euler", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    skinned_mesh(obj, [bone.name for bone in obj.data.bones])
    return obj


def _step(step: str, obj: bpy.types.Object, ground: bpy.types.Object, folder) -> object:
    if step == "auto_rig":
        return len(api.auto_rig(obj))
    if step == "snap":
        return api.snap_limb(obj, "shin.L", "FK", key=True, frame=10)
    if step == "bake":
        return api.bake(obj, "IK_TO_FK", range(1, 21))
    if step == "plant_feet":
        return api.plant_feet(obj, ground).feet
    if step == "export":
        report = api.export(obj, str(folder / f"{obj.name}.glb"))
        return (report.joints, [clip.name for clip in report.clips], report.warnings)
    return api.remove(obj, "shin.R")


def _poses(obj: bpy.types.Object) -> dict[int, dict]:
    scene = bpy.context.scene
    played = {}
    for frame in (1, 7, 10, 15, 20):
        scene.frame_set(frame)
        played[frame] = evaluate(obj)
    scene.frame_set(1)
    return played


@pytest.mark.parametrize("how", ["no window", "another scene"])
@pytest.mark.parametrize("last", STEPS)
def test_each_step_from_a_windowless_context_ends_as_from_the_window(tmp_path, last, how):
    """``how``: the context has no window, or a script overrides the scene (and view layer) with one the window
    does not show, ``temp_override(scene=shot)``, where the export crashed Blender and the context's scene was the
    window's after a switch. The steps are done to the one character so, to the other with the scene shown."""
    window = bpy.context.window_manager.windows[0]
    bpy.context.scene.name = "Character"
    bpy.data.scenes.new("Hero")  # a scene next to the export's by name
    shown = layout = bpy.context.scene
    if how == "another scene":
        layout.name = "Layout"
        shown = window.scene = bpy.data.scenes.new("Character")
    usual, windowless = _character("Usual"), _character("Windowless")
    bpy.ops.mesh.primitive_plane_add(size=6.0, location=(0.0, 0.0, -0.2))
    ground = bpy.context.active_object
    view_layer = shown.view_layers[0]
    for step in STEPS[:STEPS.index(last) + 1]:
        window.scene = shown
        view_layer.objects.active = usual
        expected = _step(step, usual, ground, tmp_path)
        window.scene = layout
        view_layer.objects.active = windowless
        override = {"window": None} if how == "no window" else {"scene": shown, "view_layer": view_layer}
        with bpy.context.temp_override(**override):
            assert bpy.context.scene == shown and (bpy.context.window is None if how == "no window" else
                                                   window.scene == layout != shown)
            got = _step(step, windowless, ground, tmp_path)
            assert bpy.context.scene == shown and bpy.context.view_layer == view_layer, step
        assert str(got).replace("Windowless", "Usual") == str(expected).replace("Windowless", "Usual"), step
        assert (window.scene, window.view_layer.name) == (layout, "ViewLayer"), step
    window.scene = shown
    length = usual.data.bones["shin.L"].length
    played, playing = _poses(usual), _poses(windowless)
    for frame, bones in played.items():
        for name, matrix in bones.items():
            assert same(playing[frame][name], matrix, 1e-4 * length), (last, frame, name)
    assert any(not same(bones["thigh.L"], played[1]["thigh.L"], 0.01) for bones in played.values())  # it moves
    if last == "export":
        report = api.export(windowless, str(tmp_path / "again.glb"))
        assert_three_plays_the_rig(windowless, tmp_path / "again.glb", report)
