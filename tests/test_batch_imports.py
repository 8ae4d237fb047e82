"""The batch command on .fbx, .glb/.gltf and .bvh inputs: imported as authored, rigged, written as .blend."""

from __future__ import annotations

import shutil
from pathlib import Path

import bpy
from helpers import DATA, both_legs, evaluate_world
from mathutils import Vector
from test_batch import save_character
from test_batch_safety import report_of, run

BONES = {name: Vector(head) for name, head, _tail, _parent, _connected in both_legs()}


def _export(folder: Path) -> list[Path]:
    """The test character as FBX (no added leaf bones) and as text glTF."""
    save_character(folder / "source.blend")
    fbx, gltf = folder / "hero.fbx", folder / "hero_text.gltf"
    bpy.ops.export_scene.fbx(filepath=str(fbx), add_leaf_bones=False, bake_anim=False)
    bpy.ops.export_scene.gltf(filepath=str(gltf), export_format="GLTF_SEPARATE", export_animations=False)
    (folder / "source.blend").unlink()
    return [fbx, gltf]


def _open(path: Path) -> bpy.types.Object:
    bpy.ops.wm.open_mainfile(filepath=str(path), use_scripts=False)
    return next(obj for obj in bpy.data.objects if obj.type == "ARMATURE")


def _evaluated_heads(obj: bpy.types.Object) -> dict[str, Vector]:
    return {name: matrix.translation for name, matrix in evaluate_world(obj).items()}


def test_foreign_inputs_are_imported_rigged_and_written_as_blend(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    _export(inputs)
    shutil.copy(DATA / "mixamo_freebvh.bvh", inputs / "mocap.BVH")
    out = tmp_path / "out"
    result = run(str(inputs), "--out", str(out), "--report", str(tmp_path / "report.json"), keep=[inputs])
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(path.name for path in out.iterdir() if path.suffix == ".blend") == [
        "hero.blend", "hero_text.blend", "mocap.blend"]
    report = report_of(tmp_path / "report.json")
    assert all(entry["status"] == "rigged" for entry in report.values())
    # The FBX keeps the skeleton where it was authored, and the rig holds it there.
    obj = _open(out / "hero.blend")
    assert sorted(limb.name for limb in obj.ik_rigger.limbs) == ["shin.L", "shin.R"]
    heads = _evaluated_heads(obj)
    for name, head in BONES.items():
        assert (heads[name] - head).length < 1e-4 * 0.45, name
    # The glTF character too, and the motion capture comes with its motion.
    obj = _open(out / "hero_text.blend")
    assert sorted(limb.name for limb in obj.ik_rigger.limbs) == ["shin.L", "shin.R"]
    heads = _evaluated_heads(obj)
    assert all((heads[name] - head).length < 1e-4 * 0.45 for name, head in BONES.items())
    obj = _open(out / "mocap.blend")
    assert len(obj.ik_rigger.limbs) >= 2
    assert obj.animation_data is not None and obj.animation_data.action is not None
    assert bpy.context.scene.frame_end - bpy.context.scene.frame_start + 1 >= 69


def test_importer_settings_come_from_the_config_and_in_place_is_refused(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    fbx, _gltf = _export(inputs)
    # Blender's glTF bone shapes leave this robot's bones too short to read as limbs.
    robot = shutil.copy(DATA / "gltf_robot_expressive.glb", inputs / "robot.glb")
    # Imported with the importer's own bone shapes, its legs' tails lie off their joints: those legs are
    # rigged on hidden chains, as the API rigs them, the bones as they are, and said so.
    result = run(str(robot), "--out", str(tmp_path / "as_authored"), "--verbose", keep=[inputs])
    assert result.returncode == 0, result.stdout
    assert ("note: robot.glb: RobotArmature: the bones UpperLeg.L > LowerLeg.L do not run joint to joint (as the "
            "importer left them), so IK solves a hidden chain that does") in result.stdout
    assert "skipped in robot.glb (RobotArmature): LowerArm.L" in result.stdout
    assert sorted(_open(tmp_path / "as_authored" / "robot.blend").ik_rigger.limbs.keys()) == ["LowerLeg.L",
                                                                                             "LowerLeg.R"]
    config = tmp_path / "rig.toml"
    config.write_text('[import.fbx]\nglobal_scale = 2.0\n\n[import.gltf]\nbone_heuristic = "TEMPERANCE"\n')
    result = run(str(fbx), str(robot), "--out", str(tmp_path / "out"), "--config", str(config), keep=[inputs])
    assert result.returncode == 0, result.stdout + result.stderr
    obj = _open(tmp_path / "out" / "hero.blend")
    heads = _evaluated_heads(obj)
    assert all((heads[name] - 2 * head).length < 1e-4 * 0.9 for name, head in BONES.items())
    assert len(_open(tmp_path / "out" / "robot.blend").ik_rigger.limbs) >= 2
    result = run(str(fbx), "--in-place", keep=[inputs])
    assert result.returncode == 1
    assert "is not a .blend: it cannot be rigged in place. Use --out DIR" in result.stdout


def test_a_file_an_importer_cannot_read_fails_alone_with_the_importers_reason(tmp_path):
    """A truncated BVH makes the importer itself fail with a Python error, an ASCII FBX is one it
    refuses: each fails alone, named with what the importer said (not where its code stopped),
    and the good file beside them is rigged."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "cut.bvh").write_text("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0\n")
    (inputs / "text.fbx").write_text("; FBX 7.4.0 project file\nFBXHeaderExtension:  {\n}\n")
    save_character(inputs / "good.blend")
    shutil.copy(inputs / "good.blend", inputs / "renamed.fbx")  # the FBX importer prints its own traceback
    result = run(str(inputs), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[inputs])
    assert result.returncode == 1, result.stdout
    report = report_of(tmp_path / "report.json")
    assert report["good.blend"]["status"] == "rigged"
    errors = {name: entry["error"] for name, entry in report.items()}
    assert errors["cut.bvh"].startswith(f"Blender's BVH importer cannot read '{inputs / 'cut.bvh'}' (IndexError: ")
    assert "ASCII FBX files are not supported" in errors["text.fbx"]
    assert "(Invalid header)" in errors["renamed.fbx"]
    assert not any("Location:" in error for error in errors.values() if error)
    assert "Traceback" not in result.stdout + result.stderr  # held back with Blender's lines
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["good.blend"]


def test_an_imports_tails_that_point_elsewhere_are_solved_so_the_handle_is_on_the_ankle(tmp_path):
    """Cesium Man's glTF bones are as long as their segments but point elsewhere: IK on them would
    carry the shin's tail, far from the ankle. The batch rigs such legs on a hidden chain from joint
    to joint, says so, and the handle carries the ankle."""
    source = tmp_path / "cesium.gltf"
    shutil.copy(DATA / "gltf_cesium_man_skeleton.gltf", source)
    result = run(str(source), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[source])
    assert result.returncode == 0, result.stdout
    notes = report_of(tmp_path / "report.json")["cesium.gltf"]["armatures"][0]["notes"]
    assert any("leg_joint_L_1 > leg_joint_L_2 do not run joint to joint" in note for note in notes)
    obj = _open(tmp_path / "out" / "cesium.blend")
    for side in "LR":
        limb = next(limb for limb in obj.ik_rigger.limbs if limb.name == f"leg_joint_{side}_2")
        ankle = obj.data.bones[f"leg_joint_{side}_3"].head_local
        span = (ankle - obj.data.bones[f"leg_joint_{side}_2"].head_local).length
        assert (obj.data.bones[limb.handle].head_local - ankle).length < 1e-4 * span
        handle = obj.pose.bones[limb.handle]
        handle.location = (0.0, 0.1 * span, 0.0)  # along the handle's own axis, within reach
        moved = evaluate_world(obj)
        assert (moved[f"leg_joint_{side}_3"].translation - moved[limb.handle].translation).length < 1e-3 * span
        handle.location = (0.0, 0.0, 0.0)


GOOD_FILES = ("mixamo_freebvh.bvh", "makehuman_benchmark.bvh", "gltf_fox.glb", "godot_platformer_robot.glb")


def test_good_files_print_no_warning_and_say_what_was_done_when_asked(tmp_path):
    """Rigging good files is not a warning: what was done (motion kept, bones turned) is a note, shown
    with --verbose and always in the report; --quiet leaves the summary alone."""
    sources = [str(DATA / name) for name in GOOD_FILES]
    result = run(*sources, "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning" not in result.stdout + result.stderr
    assert "note: mixamo_freebvh.bvh" not in result.stdout
    report = report_of(tmp_path / "report.json")
    assert all(entry["warnings"] == [] for entry in report.values())
    assert any("baked 69 frames" in note for note in report["mixamo_freebvh.bvh"]["notes"])
    assert any("hidden chain" in note for note in report["gltf_fox.glb"]["notes"])

    verbose = run(*sources, "--out", str(tmp_path / "verbose"), "--verbose")
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    assert "warning" not in verbose.stdout
    assert "note: mixamo_freebvh.bvh: mixamo_freebvh: kept the motion of mixamorig:LeftLeg: baked 69 frames" in (
        verbose.stdout)
    assert ("note: gltf_fox.glb: root: the bones b_LeftLeg01_015 > b_LeftFoot01_017 do not run joint to joint"
            in verbose.stdout)

    quiet = run(*sources, "--out", str(tmp_path / "quiet"), "--quiet")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert any(line.startswith(f"{len(sources)} file(s) in ") for line in quiet.stdout.splitlines()), quiet.stdout
    assert "rigged tests" not in quiet.stdout and "note:" not in quiet.stdout


def test_a_real_problem_is_still_a_warning(tmp_path):
    """Motion the rig will not play (the file's other clips, under --animation ignore) is for the user to act on."""
    result = run(str(DATA / "gltf_fox.glb"), "--out", str(tmp_path / "out"), "--animation", "ignore", "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    warnings = [line for line in result.stdout.splitlines() if line.lstrip().startswith("warning: gltf_fox.glb: ")]
    assert warnings and all("also move" in line and "Bake IK/FK" in line for line in warnings), result.stdout
