"""The batch against what a studio's folders hold beside characters: Blender's .blend1 backups and
other files a shell's ``*`` hands over, and shots whose character is linked from a library or
overridden. Each is said for what it is, naming the file and what to do, and nothing else fails.

Every run is a separate process, as a user starts it; what it must not touch keeps its checksums.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import bpy
import pytest
from helpers import DATA, both_legs, chain_length, evaluate, linked_override, make_armature
from mathutils import Matrix, Vector
from test_batch import limbs_in, save_character
from test_batch_safety import report_of, run


def _folder_with_a_backup(folder: Path) -> list[Path]:
    """A character, Blender's backup of its previous save beside it, and a note: what ``*`` names."""
    source = save_character(folder / "hero.blend")
    shutil.copy(source, folder / "hero.blend1")
    (folder / "notes.txt").write_text("to rig on Monday")
    return sorted(folder.iterdir())


def test_a_backup_and_a_note_named_beside_a_character_fail_alone_and_it_is_rigged(tmp_path):
    """``rig_batch.sh shots/* --out rigged`` where Blender left ``hero.blend1``: the run was refused,
    saying the backup and the character would both be written to ``rigged/hero.blend``."""
    named = _folder_with_a_backup(tmp_path / "in")
    out, report = tmp_path / "out", tmp_path / "report.json"
    result = run(*map(str, named), "--out", str(out), "--report", str(report), keep=[tmp_path / "in"])
    assert result.returncode == 1, result.stdout + result.stderr
    files = report_of(report)
    assert files["hero.blend"]["status"] == "rigged" and limbs_in(out / "hero.blend") == ["shin.L", "shin.R"]
    backup = files["hero.blend1"]["error"]
    assert "is Blender's backup of an earlier save" in backup and "rename a copy to end in .blend" in backup
    assert "'notes.txt' is not an input IK Rigger reads" in files["notes.txt"]["error"].replace(f"{tmp_path}/in/", "")
    assert sorted(path.name for path in out.iterdir()) == ["hero.blend"]


def test_a_character_and_its_export_side_by_side_are_a_usage_error_saying_what_to_do(tmp_path):
    """hero.blend and a hero.bvh beside it (or the hero.fbx exported from it) would both be written to
    out/hero.blend: the run is refused before any file, saying so, and now what to do."""
    source = save_character(tmp_path / "in" / "hero.blend")
    shutil.copy(DATA / "mixamo_freebvh.bvh", tmp_path / "in" / "hero.bvh")
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), keep=[tmp_path / "in"])
    assert result.returncode == 2 and not (tmp_path / "out").exists(), result.stdout + result.stderr
    target = tmp_path / "out" / "hero.blend"
    assert (f"'{source}' and '{source.with_suffix('.bvh')}' would both be written to '{target}': rig one of them, "
            "or each into an --out folder of its own") in result.stderr, result.stderr


def test_a_file_named_twice_is_rigged_once(tmp_path):
    """A folder and a file in it, or two globs that overlap: the run was refused as 'in/a.blend' and
    'in/a.blend' both written to 'out/a.blend'."""
    source = save_character(tmp_path / "in" / "a.blend")
    out = tmp_path / "out"
    result = run(str(tmp_path / "in"), str(source), str(tmp_path / "in" / "*.blend"), "--out", str(out), "-v",
                 keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 file(s)" in result.stdout and f"'{source}' is the same file as '{source}': rigged once" in result.stdout
    assert limbs_in(out / "a.blend") == ["shin.L", "shin.R"]


def test_a_glob_takes_the_inputs_it_matches_as_a_folder_does(tmp_path):
    """A quoted glob is searched by the batch as a folder is: a backup or a note it matches is no input."""
    _folder_with_a_backup(tmp_path / "in")
    out = tmp_path / "out"
    result = run(str(tmp_path / "in" / "*"), "--out", str(out), keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(path.name for path in out.iterdir()) == ["hero.blend"]
    result = run(str(tmp_path / "in" / "*.txt"), "--out", str(out), keep=[tmp_path / "in"])
    assert result.returncode == 1 and "matches no input file (.blend, .bvh, .fbx, .glb, .gltf)" in result.stdout


def _library(folder: Path) -> Path:
    """A character's own file: its armature in a collection 'Character'."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    obj = make_armature(both_legs(), name="Hero", mode="OBJECT")
    collection = bpy.data.collections.new("Character")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)
    path = folder / "character.blend"
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def _shot(path: Path, library: Path, how: str) -> Path:
    """A shot linking the character's collection (``linked``), overriding it (``override``), or linking
    it beside a character of its own (``beside``)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if how == "override":
        linked_override(library)
    else:
        with bpy.data.libraries.load(str(library), link=True) as (_source, target):
            target.collections = ["Character"]
        bpy.context.scene.collection.children.link(target.collections[0])
    if how == "beside":
        make_armature(both_legs(), name="Extra", mode="OBJECT")
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def test_a_character_linked_or_overridden_fails_saying_so_and_where_to_rig_it(tmp_path):
    """A shot's linked character failed as 'the file has no armature', an overridden one as 'no limbs
    found: name the limbs in a --config file'; --armature naming the linked one said it had none."""
    library = _library(tmp_path / "lib")
    linked = _shot(tmp_path / "in" / "linked.blend", library, "linked")
    overridden = _shot(tmp_path / "in" / "override.blend", library, "override")
    result = run(str(linked), str(overridden), "--out", str(tmp_path / "out"), keep=[tmp_path / "in", library])
    assert result.returncode == 1, result.stdout + result.stderr
    failed = {line.split(":")[0].rsplit("/", 1)[-1]: line for line in result.stdout.splitlines() if "FAILED" in line}
    assert f"'Hero' is linked from the library '{library}'" in failed["linked.blend"], result.stdout
    assert "rig it there" in failed["linked.blend"]
    assert "armature(s) 'Hero': the object 'Hero' is a library override" in failed["override.blend"], result.stdout
    assert "Rig the character in its own file" in failed["override.blend"]
    assert "has no armature" not in result.stdout and "--config" not in result.stdout, result.stdout
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    result = run(str(linked), "--out", str(tmp_path / "out"), "--armature", "Hero", keep=[tmp_path / "in", library])
    assert result.returncode == 1 and f"'Hero' is linked from the library '{library}'" in result.stdout, result.stdout


def test_a_shots_own_character_is_rigged_and_the_linked_one_said(tmp_path):
    library = _library(tmp_path / "lib")
    shot = _shot(tmp_path / "in" / "shot.blend", library, "beside")
    report = tmp_path / "report.json"
    result = run(str(shot), "--out", str(tmp_path / "out"), "--report", str(report), keep=[tmp_path / "in", library])
    assert result.returncode == 0, result.stdout + result.stderr
    armatures = {entry["name"]: entry for entry in report_of(report)["shot.blend"]["armatures"]}
    assert armatures["Extra"]["status"] == "rigged" and armatures["Hero"]["status"] == "untouched"
    assert any("is linked from the library" in why for why in armatures["Hero"]["skipped"]), armatures
    assert limbs_in(tmp_path / "out" / "shot.blend") == ["shin.L", "shin.R"]
    rigged = bpy.data.objects["Extra"]
    assert rigged.library is None and bpy.data.objects["Hero"].library is not None


def test_a_shot_whose_library_is_missing_fails_naming_the_library(tmp_path):
    """Its linked character is a placeholder: the failure said only 'the file has no armature'."""
    library = _library(tmp_path / "lib")
    shot = _shot(tmp_path / "in" / "shot.blend", library, "linked")
    library.rename(tmp_path / "moved.blend")
    result = run(str(shot), "--out", str(tmp_path / "out"), keep=[tmp_path / "in"])
    assert result.returncode == 1, result.stdout + result.stderr
    failed = next(line for line in result.stdout.splitlines() if "FAILED" in line)
    assert f"no armature of its own, and the library '{library}' it links is missing" in failed, failed
    assert "Put the library back" in failed


def test_rigging_in_place_on_a_full_disk_fails_saying_what_to_do_and_leaves_the_file_whole(tmp_path):
    """The backup beside the file did not fit: the failure said only "No space left on device". The run
    gets a small disk of its own (a mount in a namespace of its own), as the --out disk's test does."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to give the run a small disk of its own")
    disk = tmp_path / "disk"
    disk.mkdir()
    character = save_character(tmp_path / "hero.blend")
    assert run(str(character), "--out", str(tmp_path / "rigged")).returncode == 0
    size, rigged = character.stat().st_size, (tmp_path / "rigged" / "hero.blend").stat().st_size
    room = size + rigged + size // 2  # the rigged file fits beside it, not its backup as well
    script = (f'mount -t tmpfs -o size={room // 1024 + 64}k none "$0" || exit 77; cp "$1" "$0/hero.blend"; '
              f'head -c 65536 /dev/zero > "$0/filler"; sha256sum < "$0/hero.blend" > "$0.before"; shift; "$@"; '
              'code=$?; sha256sum < "$0/hero.blend" > "$0.after"; ls -A "$0" > "$0.listing"; exit $code')
    result = run(str(disk / "hero.blend"), "--in-place", prefix=["unshare", "-m", "sh", "-c", script, str(disk),
                                                                 str(character)])
    if result.returncode == 77:
        pytest.skip("this machine does not let the tests mount a small disk (it needs root)")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = next(line for line in result.stdout.splitlines() if "FAILED" in line)
    assert "No space left on device; its disk has 0." in failed and "MB free. Make room on its disk" in failed
    assert ".blend1 backup" in failed and "or rig it with --out on another disk" in failed, failed
    assert (tmp_path / "disk.before").read_text() == (tmp_path / "disk.after").read_text()
    assert (tmp_path / "disk.listing").read_text().split() == ["filler", "hero.blend"]


def _in_another_scene() -> None:
    """The character in a scene of its own, the file opening on a layout scene first."""
    obj = bpy.data.objects["Rig"]
    bpy.data.scenes.new("Layout").collection.objects.link(obj)
    bpy.context.scene.collection.objects.unlink(obj)


def test_a_character_in_another_scene_is_rigged_and_exported_there_and_the_file_opens_as_it_did(tmp_path):
    """It failed, saying to link it into the scene the file opens on, "or open the file on the scene
    'Layout'": a batch has no scene to switch to. It is rigged (and exported) in its scene, said in a note,
    and the file opens on its first scene as before; the rig plays there."""
    source = save_character(tmp_path / "in" / "other.blend", extra=_in_another_scene)
    opens_on = bpy.context.scene.name
    out, report = tmp_path / "out", tmp_path / "report.json"
    result = run(str(source), "--out", str(out), "--export", "glb", "--report", str(report), keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout + result.stderr
    armature = report_of(report)["other.blend"]["armatures"][0]
    assert any(f"worked on in the scene 'Layout' (view layer 'ViewLayer'), which holds it; the file opens on the "
               f"scene '{opens_on}' as before" in note for note in armature["notes"]), armature
    assert (out / "other.glb").stat().st_size > 0
    assert limbs_in(out / "other.blend") == ["shin.L", "shin.R"]
    assert bpy.context.scene.name == opens_on and bpy.context.window.scene.name == opens_on
    obj = bpy.data.objects["Rig"]
    assert [scene.name for scene in obj.users_scene] == ["Layout"]
    bpy.context.window.scene = bpy.data.scenes["Layout"]
    limb = next(limb for limb in obj.ik_rigger.limbs if limb.name == "shin.L")
    length = chain_length(obj, ("thigh.L", "shin.L"))
    bones = obj.data.bones
    rest_ankle, hip = bones["shin.L"].tail_local.copy(), bones["thigh.L"].head_local
    evaluate(obj)  # the pose current, so the handle's matrix below is read against its parent's pose
    handle = obj.pose.bones[limb.handle]
    handle.matrix = Matrix.Translation((hip - rest_ankle) * 0.2) @ bones[limb.handle].matrix_local
    posed = evaluate(obj)
    target = rest_ankle + (hip - rest_ankle) * 0.2
    assert (posed[limb.handle].translation - target).length < 1e-4 * length
    ankle = (posed["shin.L"] @ Vector((0.0, bones["shin.L"].length, 0.0, 1.0))).to_3d()
    assert (ankle - target).length < 1e-3 * length  # the foot went with the handle, in the scene it is in


def test_a_character_in_no_scene_fails_naming_the_scene(tmp_path):
    def in_none() -> None:
        obj = bpy.data.objects["Rig"]
        obj.use_fake_user = True
        bpy.context.scene.collection.objects.unlink(obj)

    orphan = save_character(tmp_path / "in" / "orphan.blend", extra=in_none)
    result = run(str(orphan), "--out", str(tmp_path / "out"), keep=[tmp_path / "in"])
    assert result.returncode == 1, result.stdout + result.stderr
    failed = next(line for line in result.stdout.splitlines() if "FAILED" in line)
    scene = bpy.data.scenes[0].name  # as the file opens
    assert f"the armature 'Rig' is not in the view layer 'ViewLayer' of the scene '{scene}' (in no scene)" in failed
    assert f"into a collection of the scene '{scene}'," in failed, failed
