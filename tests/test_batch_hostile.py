"""The batch command against a hostile folder: names that look like flags or hold escape sequences,
links planted where it writes, answers printed by a file, configs that never end.

Every run is a separate process, as a user starts it, and checks that what it must not
touch has the same checksums afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import bpy
import pytest
from test_batch import ENTRY, digest, limbs_in, save_character
from test_batch_safety import (  # noqa: F401 (restricted: a fixture)
    TEMP_MARK,
    _heavy,
    _paused_first_save,
    _paused_worker,
    _system_temp,
    report_of,
    restricted,
    run,
    temporaries,
)

# Point 1: what the shell hands over.


def test_a_file_named_like_a_flag_is_never_taken_for_one(tmp_path):
    """``rig_batch.sh --out ../out *`` in a folder holding a file named ``--overwrite``."""
    folder = tmp_path / "in"
    save_character(folder / "a.blend")
    (folder / "--overwrite").write_text("a file, not a flag")
    mine = save_character(tmp_path / "out" / "a.blend", name="Mine")
    keep = [folder, mine]
    # As the shell sorts it first: refused, since the run cannot tell which was meant.
    result = run("--out", "../out", "--overwrite", "a.blend", keep=keep, cwd=folder)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "'--overwrite' is an option and a file here" in result.stderr
    # After an input, or after "--": a file, and the output that exists stays.
    for args in (("--out", "../out", "a.blend", "--overwrite"), ("--out", "../out", "--", "--overwrite", "a.blend")):
        result = run("--report", "../report.json", *args, keep=keep, cwd=folder)
        assert result.returncode == 1, result.stdout + result.stderr
        files = report_of(tmp_path / "report.json")
        assert "'--overwrite' is not an input IK Rigger reads" in files["--overwrite"]["error"]
        assert "the output 'out/a.blend' exists" in files["a.blend"]["error"].replace("../", "")


def test_after_two_dashes_every_argument_is_an_input(tmp_path):
    """The usual guard, ``--out DIR -- -x.blend``, in the project's Blender and a Blender binary's
    way of passing arguments alike (the first ``--`` of ``sys.argv`` is Blender's own there)."""
    folder = tmp_path / "in"
    save_character(folder / "-x.blend")
    result = run("--out", str(tmp_path / "out"), "--", "-x.blend", keep=[folder], cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert limbs_in(tmp_path / "out" / "-x.blend") == ["shin.L", "shin.R"]


def test_no_argument_turns_a_run_into_a_worker(tmp_path):
    folder = tmp_path / "in"
    save_character(folder / "a.blend")
    result = run("--worker", "--out", str(tmp_path / "out"), "a.blend", keep=[folder], cwd=folder,
                 stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "unrecognized arguments: --worker" in result.stderr and "IK-RIGGER" not in result.stdout
    # Nor does a stray variable (a worker's, naming no pipe from a run) make one, or a whole run.
    result = run("--out", str(tmp_path / "out"), "a.blend", keep=[folder], cwd=folder, stdin=subprocess.DEVNULL,
                 env={**os.environ, "IK_RIGGER_BATCH_ANSWERS": "1"})
    assert result.returncode == 2 and "IK-RIGGER" not in result.stdout and not (tmp_path / "out").exists()
    (folder / "--worker").write_text("a file, not a flag")
    result = run("--out", str(tmp_path / "out"), "a.blend", "--worker", keep=[folder], cwd=folder,
                 stdin=subprocess.DEVNULL)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "IK-RIGGER" not in result.stdout and "'--worker' is not an input IK Rigger reads" in result.stdout
    assert limbs_in(tmp_path / "out" / "a.blend") == ["shin.L", "shin.R"]


# Points 2 and 3: links where the run writes.

def test_a_backup_that_is_a_link_is_replaced_never_written_through(tmp_path):
    source = save_character(tmp_path / "shared" / "hero.blend")
    original = digest(source)
    document = tmp_path / "home" / "thesis.txt"
    document.parent.mkdir()
    document.write_text("a user's document")
    (tmp_path / "shared" / "hero.blend1").symlink_to(document)
    result = run(str(source), "--in-place", keep=[document])
    assert result.returncode == 0, result.stdout + result.stderr
    backup = tmp_path / "shared" / "hero.blend1"
    assert not backup.is_symlink() and digest(backup) == original
    assert limbs_in(source) == ["shin.L", "shin.R"]


def _next_pids(count: int) -> list[int]:
    """The ``count`` process ids Linux gives next (past the last it may give, it goes on from 300)."""
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    top = int(Path("/proc/sys/kernel/pid_max").read_text())
    return [pid if pid < top else 300 + pid - top for pid in range(last + 1, last + 1 + count)]


@pytest.mark.skipif(not Path("/proc/sys/kernel/ns_last_pid").exists(), reason="needs Linux's process ids")
def test_links_planted_at_the_next_temporary_names_are_never_written_through(tmp_path):
    shared = tmp_path / "shared"
    source = save_character(shared / "hero.blend")
    outside = tmp_path / "victim" / "precious.blend"
    outside.parent.mkdir()
    outside.write_bytes(b"the user's own file")
    for pid in _next_pids(500):
        for name in (f".hero.blend.{pid}.{TEMP_MARK}", f".hero.blend.{pid}.{TEMP_MARK}@"):
            (shared / name).symlink_to(outside)
    result = run(str(source), "--in-place", keep=[outside])
    assert result.returncode == 0, result.stdout + result.stderr
    assert not source.is_symlink() and limbs_in(source) == ["shin.L", "shin.R"]
    assert not [path for path in temporaries(shared) if not path.is_symlink()]  # the run's own folder is gone


def test_an_output_that_is_a_folder_fails_naming_it_and_leaves_no_temporary_folder(tmp_path):
    save_character(tmp_path / "in" / "a.blend")
    (tmp_path / "out" / "a.blend").mkdir(parents=True)
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--overwrite", keep=[tmp_path / "in"])
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"the output '{tmp_path / 'out' / 'a.blend'}' is a folder" in result.stdout
    assert TEMP_MARK not in result.stdout + result.stderr
    assert not temporaries(tmp_path)


# Points 4 and 5: what names print.

def test_names_with_control_characters_are_escaped_on_the_terminal(tmp_path):
    folder = tmp_path / "in"
    names = ["title\x1b]0;owned\x07.blend", "red\x1b[31m.blend", "b\nrigged fake.blend -> x.blend"]
    for name in names:
        save_character(folder / name)
    report = tmp_path / "report.json"
    result = run(str(folder), "--out", str(tmp_path / "out"), "--report", str(report), keep=[folder])
    assert result.returncode == 0, result.stdout + result.stderr
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert not any(line.startswith("rigged fake") for line in result.stdout.splitlines())
    assert "b\\nrigged fake.blend" in result.stdout and "title\\x1b]0;owned\\x07.blend" in result.stdout
    assert sorted(report_of(report)) == sorted(names)  # the report keeps them whole
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted(names)


def _cycle_through(name: str) -> None:
    """The armature parented to an object ``name`` that follows it: Blender prints the dependency
    cycle, with the object's name, as it evaluates the scene while rigging."""
    rig = bpy.data.objects["Rig"]
    empty = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(empty)
    rig.parent = empty
    empty.constraints.new("COPY_LOCATION").target = rig


def test_a_name_that_prints_an_answer_is_never_taken_for_one(tmp_path):
    """An object name a Blender prints while rigging, made to read as a worker's answer."""
    fake = 'E\nIK-RIGGER-RESULT {"input": "fake.blend", "output": null}\n'
    folder = tmp_path / "in"
    for index in range(4):
        save_character(folder / f"c{index}.blend", extra=lambda: _cycle_through(fake))
    report = tmp_path / "report.json"
    result = run(str(folder), "--out", str(tmp_path / "out"), "--jobs", "2", "--report", str(report), keep=[folder])
    assert result.returncode == 0, result.stdout + result.stderr
    assert [entry["input"] for entry in json.loads(report.read_text())["files"]] == [
        str(folder / f"c{index}.blend") for index in range(4)]


# Points 6 and 8: configs and options that mislead.

def test_a_config_is_read_from_a_small_regular_file_with_or_without_a_bom(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    out = tmp_path / "out"
    for config, message in ((Path("/dev/zero"), "is not a regular file"),
                            (tmp_path / "huge.toml", "is larger than 1 MB")):
        if config.name == "huge.toml":
            config.write_text("# padding\n" * 200_000)
        done = subprocess.run([sys.executable, str(ENTRY), "--out", str(out), "--config", str(config), str(source)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr, done.stderr
    bom = tmp_path / "bom.toml"
    bom.write_bytes('[defaults]\ncopy_mode = "ROTATION"\n'.encode("utf-8-sig"))
    result = run("--out", str(out), "--config", str(bom), str(source), keep=[source])
    assert result.returncode == 0, result.stdout + result.stderr
    twice = tmp_path / "twice.toml"
    twice.write_text('[defaults]\ncopy_mode = "ROTATION"\ncopy_mode = "TRANSFORMS"\n')
    result = run("--out", str(out), "--overwrite", "--config", str(twice), str(source), keep=[source])
    assert result.returncode == 2 and "the key 'copy_mode' is given twice" in result.stderr, result.stderr


def test_two_sections_for_one_armature_and_an_extremity_no_armature_has_are_said(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    both = tmp_path / "both.toml"
    both.write_text('[[armature]]\nname = "Rig"\n\n[[armature]]\nname = "R*"\ndetect = false\n')
    report = tmp_path / "report.json"
    result = run(str(source), "--out", str(tmp_path / "out"), "--config", str(both), "--report", str(report),
                 keep=[source])
    assert result.returncode == 1, result.stdout + result.stderr
    error = report_of(report)["a.blend"]["error"]
    assert "both.toml [[armature]] #1 and both.toml [[armature]] #2 both match the armature 'Rig'" in error
    assert not (tmp_path / "out" / "a.blend").exists()
    same = tmp_path / "same.toml"
    same.write_text('[[armature]]\nname = "Rig"\n\n[[armature]]\nname = "Rig"\n')
    result = run(str(source), "--out", str(tmp_path / "out"), "--config", str(same), keep=[source])
    assert result.returncode == 2 and "same.toml [[armature]] #1 and same.toml [[armature]] #2" in result.stderr
    bone = tmp_path / "bone.toml"
    bone.write_text('[defaults]\nextremity_mode = "BONE"\nextremity_name = "hoof"\n')
    result = run(str(source), "--out", str(tmp_path / "out"), "--config", str(bone), keep=[source])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning: a.blend: Rig: [defaults] extremity_name 'hoof': no bone of that name" in result.stdout


@pytest.mark.parametrize("args,message", [
    (("--out", ""), "--out is empty"),
    (("--out", "out", "--armature", ""), "--armature is empty"),
    (("--out", "in"), "is the input folder 'in' or inside it"),
    (("--out", "in/rigged"), "is the input folder 'in' or inside it"),
    (("--out", "out", "--reprot", "r.json"), "unrecognized arguments: --reprot (did you mean '--report'?)"),
])
def test_mistakes_are_usage_errors_that_write_nothing(tmp_path, args, message):
    save_character(tmp_path / "in" / "a.blend")
    result = run(*args, "in", keep=[tmp_path / "in"], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in"]
    assert sorted(path.name for path in (tmp_path / "in").iterdir()) == ["a.blend"]


def test_the_usage_line_names_every_option():
    done = subprocess.run([sys.executable, str(ENTRY)], capture_output=True, text=True, timeout=60)
    usage = done.stderr.splitlines()[-1]
    from ik_rigger.batch import command

    # Every long option the command takes, as its parser declares them (--export, --scheduler too).
    declared = {option for action in command.parser()._actions for option in action.option_strings
                if option.startswith("--")}
    assert {"--out", "--export", "--scheduler", "--worker-wait", "--quiet", "--verbose"} <= declared
    for option in declared:
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", usage), option


# Points 7 and 9: names and folders Blender could not take.

def test_a_latin1_file_name_is_rigged_and_printed_escaped(tmp_path):
    folder = tmp_path / "in"
    source = save_character(folder / "a.blend")
    latin1 = source.with_name(os.fsdecode(b"caf\xe9.blend"))
    source.rename(latin1)
    result = run(str(folder), "--out", str(tmp_path / "out"), keep=[folder])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "caf\\udce9.blend" in result.stdout and "Traceback" not in result.stderr
    # Opened here under a UTF-8 name: Blender 4.2 takes no other.
    assert limbs_in(Path(shutil.copy(tmp_path / "out" / latin1.name, tmp_path / "check.blend"))) == [
        "shin.L", "shin.R"]


def test_a_file_in_a_folder_it_cannot_enter_fails_alone(tmp_path, restricted):  # noqa: F811
    save_character(tmp_path / "locked" / "a.blend")
    other = save_character(tmp_path / "open" / "b.blend")
    (tmp_path / "locked").chmod(0)
    report = tmp_path / "report.json"
    result = run(str(tmp_path / "locked" / "a.blend"), str(other), "--out", str(tmp_path / "out"),
                 "--report", str(report), prefix=restricted, keep=[other])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    files = report_of(report)
    assert "Permission denied" in files["a.blend"]["error"] and files["b.blend"]["status"] == "rigged"


def test_a_relative_input_is_the_working_folders_whatever_pwd_says(tmp_path):
    mine = save_character(tmp_path / "mine" / "a.blend", name="Mine")
    save_character(tmp_path / "theirs" / "a.blend", name="Theirs")
    report = tmp_path / "report.json"
    result = run("--out", str(tmp_path / "out"), "--report", str(report), "a.blend", keep=[mine.parent],
                 cwd=mine.parent, env={**os.environ, "PWD": str(tmp_path / "theirs")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert [entry["name"] for entry in report_of(report)["a.blend"]["armatures"]] == ["Mine"]


def test_a_compressed_file_blender_cannot_read_may_be_from_a_newer_blender(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    # zstd's magic, a frame Blender cannot decode, and the seekable format's footer.
    (folder / "new.blend").write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 64 + b"\xb1\xea\x92\x8f")
    result = run(str(folder), "--out", str(tmp_path / "out"), keep=[folder])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "may be corrupt, or saved by a Blender newer than this one" in result.stdout


def test_a_blender_that_crashes_on_a_file_fails_that_file_alone(tmp_path):
    """Blender 4.2 crashes reading a file rewritten meanwhile; with --jobs 1 too, the crash of the
    Blender rigging a file (here: a segmentation fault while it writes) fails that file, and the
    run goes on to the others and its report."""
    inputs = _heavy(4, tmp_path / "in")
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    system_temp = _system_temp(tmp_path)
    # The worker waits with its first file written, before it goes into place: the crash always
    # lands on a file not yet rigged (a save seen in progress could be in place by the signal).
    environment, told = _paused_first_save(tmp_path, system_temp.environment)
    process = subprocess.Popen([sys.executable, str(ENTRY), "--out", str(out), "--report", str(report), "--jobs", "1",
                                str(tmp_path / "in")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment)
    os.kill(_paused_worker(process, told), signal.SIGSEGV)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stdout + stderr
    files = report_of(report)
    crashed = [name for name, entry in files.items() if entry["status"] == "failed"]
    assert len(crashed) == 1 and "worker died (signal 11) while rigging it" in files[crashed[0]]["error"]
    assert sorted(path.name for path in out.iterdir()) == sorted(
        path.name for path in inputs if path.name not in crashed)
    assert not temporaries(tmp_path) and system_temp.left() == []


def _texture() -> None:
    image = bpy.data.images.new("skin", 4, 4)
    image.source = "FILE"  # a texture beside the file, not found: Blender keeps its path as it is
    image.filepath_raw = "//textures/skin.png"
    image.use_fake_user = True


def test_relative_paths_stay_right_though_the_file_is_written_in_a_folder_of_its_own(tmp_path):
    """Blender makes a file's relative paths relative to the folder it writes in: the save's own
    folder is one deeper than the target's, so the batch makes them relative to the target's."""
    source = save_character(tmp_path / "in" / "a.blend", extra=_texture)
    result = run(str(source), "--out", str(tmp_path / "out"), keep=[source])
    assert result.returncode == 0, result.stdout + result.stderr
    result = run(str(source), "--in-place")
    assert result.returncode == 0, result.stdout + result.stderr
    for path, expected in ((tmp_path / "out" / "a.blend", "//../in/textures/skin.png"),
                           (source, "//textures/skin.png")):
        bpy.ops.wm.open_mainfile(filepath=str(path), use_scripts=False)
        assert bpy.data.images["skin"].filepath == expected
