"""A character whose armature hangs from another object, as downloads often arrive (a Sketchfab-style
root turned 90 degrees and scaled a hundredth, here also moving): the Mixamo capture written so by
Blender's glTF and FBX exporters and read back by their importers at their defaults (glTF also with
the Temperance bone shapes, FBX also with Automatic Bone Orientation), then rigged by Auto-Rig. Every
deforming bone plays as it did on every frame checked, the knees' poles stand in front, a handle
carries its foot, Remove gives the motion back as it was, and the rigged file plays the same where
IK Rigger is not installed."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import DATA, evaluate, evaluate_world, rotation_degrees
from mathutils import Matrix
from test_batch_safety import report_of, run
from test_pipeline import play_elsewhere

from ik_rigger import api

FRAMES = [1, 9, 23, 37, 51, 69]
IMPORTS = {
    "glTF": {},
    "glTF, Temperance": {"bone_heuristic": "TEMPERANCE"},
    "FBX": {},
    "FBX, Automatic Bone Orientation": {"automatic_bone_orientation": True},
}


def _parented(kind: str, folder, name: str = "character") -> bpy.types.Object:
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    character = bpy.context.active_object
    root = bpy.data.objects.new("Sketchfab_model", None)
    bpy.context.scene.collection.objects.link(root)
    root.rotation_euler, root.scale = (math.radians(-90.0), 0.0, 0.0), (0.01, 0.01, 0.01)
    for frame, ahead in ((1, 0.0), (69, 1.5)):
        root.location.y = ahead
        root.keyframe_insert("location", frame=frame)
    character.parent = root
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 69
    bpy.ops.object.select_all(action="SELECT")
    path = str(folder / (f"{name}.glb" if kind.startswith("glTF") else f"{name}.fbx"))
    if kind.startswith("glTF"):
        bpy.ops.export_scene.gltf(filepath=path)
    else:
        bpy.ops.export_scene.fbx(filepath=path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if kind.startswith("glTF"):
        bpy.ops.import_scene.gltf(filepath=path, **IMPORTS[kind])
    else:
        bpy.ops.import_scene.fbx(filepath=path, **IMPORTS[kind])
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    assert obj.parent is not None and obj.parent.type == "EMPTY"
    bpy.context.view_layer.objects.active = obj
    return obj


def _played(obj: bpy.types.Object) -> dict[int, dict[str, Matrix]]:
    shown = {}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        shown[frame] = {name: pose for name, pose in evaluate_world(obj).items() if obj.data.bones[name].use_deform}
    return shown


def _worst(before: dict[int, dict[str, Matrix]], after: dict[int, dict[str, Matrix]], size: float):
    moved = max((pose.translation - after[frame][name].translation).length / size
                for frame, poses in before.items() for name, pose in poses.items())
    turned = max(rotation_degrees(pose, after[frame][name]) for frame, poses in before.items()
                 for name, pose in poses.items())
    return moved, turned


@pytest.mark.parametrize("kind", IMPORTS)
def test_a_character_hanging_from_a_turned_scaled_moving_root_is_rigged_as_it_arrives(kind, tmp_path):
    obj = _parented(kind, tmp_path)
    size = 1.7  # the capture's height in the world: 170 centimetres
    before = _played(obj)
    bpy.ops.object.mode_set(mode="POSE")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    limbs = api.limbs(obj)
    assert sorted(limb.name.split(":")[-1] for limb in limbs) == ["LeftForeArm", "LeftLeg", "RightForeArm",
                                                                 "RightLeg"]
    moved, turned = _worst(before, _played(obj), size)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
    # At rest: each knee's pole stands in front of it (the way the toes point), in the world.
    bpy.context.scene.frame_set(1)
    world, bones = obj.matrix_world, obj.data.bones
    up = (world @ bones["mixamorig:Head"].head_local - world @ bones["mixamorig:Hips"].head_local).normalized()
    for limb in limbs:
        if limb.name.endswith("Leg"):
            knee, toe = world @ bones[limb.chain[1]].head_local, bones[limb.extremity].children[0]
            front = world @ toe.head_local - world @ bones[limb.extremity].head_local
            front = (front - up * front.dot(up)).normalized()
            assert (world @ bones[limb.bones["POLE"]].head_local - knee).normalized().dot(front) > 0.7, limb.name
    # A handle carries its foot: raised a tenth of the leg, the foot's head goes with it.
    leg = next(limb for limb in limbs if limb.name.endswith("LeftLeg"))
    handle = obj.pose.bones[leg.bones["HANDLE"]]
    start = evaluate(obj)
    raised = start[handle.name].copy()
    raised.translation += (start[leg.chain[0]].translation - raised.translation) * 0.1
    handle.matrix = raised
    posed = evaluate(obj)
    shift = raised.translation - start[handle.name].translation
    assert (posed[leg.extremity].translation - (start[leg.extremity].translation + shift)).length < 1e-3 * (
        start[leg.chain[0]].translation - start[leg.extremity].translation).length
    handle.matrix_basis = Matrix.Identity(4)
    if kind == "glTF":
        path = tmp_path / "rigged.blend"
        bpy.ops.object.mode_set(mode="OBJECT")
        bpy.ops.wm.save_as_mainfile(filepath=str(path))
        played = play_elsewhere(path, FRAMES, tmp_path)
        assert played["invalid_drivers"] == []
        here = {}
        for frame in FRAMES:
            bpy.context.scene.frame_set(frame)
            here[frame] = evaluate(obj)
        for frame in FRAMES:
            shown = played["frames"][str(frame)][obj.name]
            for name, pose in here[frame].items():
                assert (pose.translation - Matrix(shown[name]).translation).length < 1e-5 * 170.0, (frame, name)
    for limb in limbs:
        api.remove(obj, limb.name)
    moved, turned = _worst(before, _played(obj), size)
    assert moved < 1e-4 and turned < 0.05, (moved, turned)


def test_the_batch_rigs_a_folder_of_such_files_as_they_arrive(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    expected = {}
    for kind in ("glTF", "FBX"):
        _parented(kind, inputs, kind.lower())
        expected[kind] = _played(next(found for found in bpy.data.objects if found.type == "ARMATURE"))
        bpy.ops.wm.read_factory_settings(use_empty=True)
    result = run(str(inputs), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[inputs])
    assert result.returncode == 0, result.stdout + result.stderr
    report = report_of(tmp_path / "report.json")
    assert all(entry["status"] == "rigged" and entry["warnings"] == [] for entry in report.values()), report
    for kind in ("glTF", "FBX"):
        bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / f"{kind.lower()}.blend"))
        obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
        assert len(obj.ik_rigger.limbs) == 4
        moved, turned = _worst(expected[kind], _played(obj), 1.7)
        assert moved < 1e-3 and turned < 0.25, (kind, moved, turned)


@pytest.mark.parametrize("filename, armature", [("gltf_robot_expressive.glb", "RobotArmature"),
                                                ("gltf_quaternius_trex.glb", "Armature")])
def test_after_a_gltf_import_the_greyed_out_auto_rig_names_the_armature_to_click(filename, armature):
    """Blender's glTF importer leaves the empty at the file's root active and the armature selected below
    it: Auto-Rig, greyed out, names the armature to click (before, only "make an armature active")."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename))
    assert bpy.context.view_layer.objects.active.type == "EMPTY"
    with pytest.raises(RuntimeError, match=f"Make an armature the active object \\(click '{armature}'\\)"):
        bpy.ops.ik_rigger.auto_rig()
    bpy.context.view_layer.objects.active = bpy.data.objects[armature]
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
