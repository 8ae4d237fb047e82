"""The batch, the sample job and the export against a hostile file system: files and folders marked
read-only or immutable (the tests run as root, whom permissions do not stop: ``chattr +i`` does), folders
whose names are taken by files or files' by folders, links that loop. Each ends with a line naming the file
and what to do, never a traceback, and leaves no file half-written, overwritten or added (a .blend1).

(Elsewhere: a disk that fills, tests/test_batch_safety.py and tests/test_sweep_batch_inputs.py; an
interrupt while a file is written, tests/test_batch_safety.py; names with a newline, an invalid UTF-8 byte,
the same file twice, a .blend1 or a truncated .blend given, tests/test_batch_hostile.py,
tests/test_batch.py and tests/test_sweep_batch_inputs.py.)"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import bpy
import pytest
from helpers import both_legs, make_armature
from test_batch import ENTRY, digest, limbs_in, save_character
from test_batch_safety import (
    TEMP_MARK,
    _heavy,
    _paused_worker,
    _paused_written,
    _system_temp,
    checksums,
    report_of,
    run,
)

from ik_rigger import api

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def immutable(*paths: Path) -> Iterator[None]:
    """``paths`` made immutable (``chattr +i``) for the block, or the test skipped where that cannot be."""
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr to make a file that no one, root neither, may change")
    done: list[Path] = []
    try:
        for path in paths:
            if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
                pytest.skip("this file system does not let the tests make a file immutable (it needs root)")
            done.append(path)
        yield
    finally:
        for path in done:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def _no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr


def _failure(result: subprocess.CompletedProcess, name: str) -> str:
    return next(line for line in result.stdout.splitlines() if "FAILED" in line and name in line)


def test_an_input_marked_read_only_is_not_rigged_in_place(tmp_path):
    """Root may write a file marked read-only, and the batch did, silently: the mark says not to."""
    source = save_character(tmp_path / "in" / "locked.blend")
    other = save_character(tmp_path / "in" / "open.blend")
    source.chmod(0o444)
    result = run(str(source), str(other), "--in-place", keep=[source])
    assert result.returncode == 1, result.stdout + result.stderr
    failed = _failure(result, "locked.blend")
    assert f"the input '{source}' is read-only" in failed and "chmod u+w" in failed and "--out" in failed, failed
    assert sorted(path.name for path in source.parent.iterdir()) == ["locked.blend", "open.blend", "open.blend1"]
    assert oct(source.stat().st_mode & 0o777) == oct(0o444)
    assert limbs_in(other) == ["shin.L", "shin.R"]
    _no_traceback(result)
    result = run(str(source), "--out", str(tmp_path / "out"), keep=[source])  # read, never written: rigged
    assert result.returncode == 0 and limbs_in(tmp_path / "out" / "locked.blend") == ["shin.L", "shin.R"]


def test_an_immutable_input_or_its_folder_is_not_rigged_in_place_and_gets_no_backup(tmp_path):
    """The backup was written beside an immutable file before the file could not be replaced: a .blend1 left
    after a failure (over the one there was), and a bare "Operation not permitted"."""
    source = save_character(tmp_path / "in" / "sealed.blend")
    folder = save_character(tmp_path / "sealed" / "a.blend")
    with immutable(source, folder.parent):
        result = run(str(source), str(folder), "--in-place", keep=[source, folder])
    assert result.returncode == 1, result.stdout + result.stderr
    failed = _failure(result, "sealed.blend")
    assert f"the input '{source}' is read-only" in failed and "chattr -i" in failed, failed
    failed = _failure(result, "a.blend")
    assert f"the folder '{folder.parent}' of the input 'a.blend' cannot be written in" in failed, failed
    assert "chattr -i" in failed and "--out" in failed, failed
    assert [path.name for path in source.parent.iterdir()] == ["sealed.blend"]
    assert [path.name for path in folder.parent.iterdir()] == ["a.blend"]
    _no_traceback(result)


def test_an_output_that_may_not_be_replaced_fails_naming_it_and_what_to_do(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    kept = save_character(tmp_path / "out" / "a.blend", bones=both_legs(bend=0.1))
    marked = save_character(tmp_path / "out2" / "a.blend", bones=both_legs(bend=0.1))
    marked.chmod(0o444)
    with immutable(kept):
        result = run(str(source), "--out", str(tmp_path / "out"), "--overwrite", keep=[kept])
    assert result.returncode == 1, result.stdout + result.stderr
    failed = _failure(result, "a.blend")
    assert f"the output '{kept}' is read-only" in failed and "another --out" in failed, failed
    result = run(str(source), "--out", str(tmp_path / "out2"), "--overwrite", keep=[marked])
    assert result.returncode == 1 and f"the output '{marked}' is read-only" in result.stdout, result.stdout
    for folder in ("out", "out2"):
        assert [path.name for path in (tmp_path / folder).iterdir()] == ["a.blend"]
    _no_traceback(result)


def test_an_out_folder_it_cannot_make_or_write_in_stops_the_run_before_any_file(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    (tmp_path / "a_file").write_text("a file where a folder should be")
    sealed = tmp_path / "sealed"
    sealed.mkdir()
    with immutable(sealed):
        for out, why in ((tmp_path / "a_file" / "out", "is not a folder"), (sealed, "Operation not permitted"),
                         (sealed / "out", "Operation not permitted")):
            result = run(str(source), "--out", str(out), keep=[tmp_path / "in"])
            assert result.returncode == 2, result.stdout + result.stderr
            assert f"cannot write the rigged files in '{out}'" in result.stderr and why in result.stderr, result.stderr
            _no_traceback(result)
    assert list(sealed.iterdir()) == []


def test_a_folder_named_like_a_blend_is_no_input(tmp_path):
    folder = tmp_path / "in"
    (folder / "x.blend").mkdir(parents=True)
    save_character(folder / "a.blend")
    result = run(str(folder), "--out", str(tmp_path / "out"), keep=[folder])
    assert result.returncode == 0 and [path.name for path in (tmp_path / "out").iterdir()] == ["a.blend"]
    result = run(str(folder / "x.blend"), "--out", str(tmp_path / "out2"), keep=[folder])
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"no input files in '{folder / 'x.blend'}'" in result.stderr and "check the path" in result.stderr
    assert not (tmp_path / "out2").exists()
    _no_traceback(result)


def test_links_that_loop_fail_each_naming_it_and_what_to_do(tmp_path):
    folder = tmp_path / "in"
    save_character(folder / "a.blend")
    os.symlink("self.blend", folder / "self.blend")
    os.symlink("pong.blend", folder / "ping.blend")
    os.symlink("ping.blend", folder / "pong.blend")
    os.symlink(".", folder / "here")
    for given, names in ((folder, ("self.blend", "ping.blend", "pong.blend")), (folder / "self.blend", ("self",))):
        result = run(str(given), "--out", str(tmp_path / "out"), "--overwrite", keep=[folder])
        assert result.returncode == 1, result.stdout + result.stderr
        for name in names:
            failed = next(line for line in result.stdout.splitlines() if "failed:" in line and name in line)
            assert "is a symbolic link that leads back to itself" in failed and "Point it at a file" in failed
        _no_traceback(result)
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["a.blend"]


def _sample(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "rig_sample.py"), "--out", str(out),
                           "--no-picture"], capture_output=True, text=True, timeout=600)


def test_the_sample_job_refuses_an_out_it_cannot_write_in_before_any_work(tmp_path):
    """It rigged the sample and then stopped on a traceback."""
    (tmp_path / "a_file").write_text("x")
    sealed = tmp_path / "sealed"
    sealed.mkdir()
    with immutable(sealed):
        for out in (tmp_path / "a_file" / "out", sealed):
            result = _sample(out)
            assert result.returncode == 2, result.stdout + result.stderr
            assert f"rig_sample: error: cannot write the samples in '{out}'" in result.stderr, result.stderr
            assert "Give --out a folder you can write in" in result.stderr
            assert "Rigged" not in result.stdout
            _no_traceback(result)
    assert (tmp_path / "a_file").read_text() == "x" and list(sealed.iterdir()) == []


@pytest.mark.parametrize("name", ["sample_rigged.blend", "sample_capture_rigged.blend", "sample_rigged.blend1"])
def test_the_sample_job_refuses_a_folder_where_it_writes_a_file_before_any_work(tmp_path, name):
    """Blender's save moved a folder named as the .blend aside as its .blend1 backup (with what it held) and
    wrote the file in its place; a folder at a later sample's name failed that sample after the first."""
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)
    (out / name / "keep.txt").write_text("mine")
    result = _sample(out)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"rig_sample: error: '{out / name}' is there and is not a file" in result.stderr, result.stderr
    assert "Rigged" not in result.stdout
    _no_traceback(result)
    assert sorted(path.name for path in out.iterdir()) == [name]
    assert (out / name / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("where", ["under a file", "a folder", "in an immutable folder"])
def test_the_export_refuses_a_path_it_cannot_write_naming_it_and_writing_nothing(tmp_path, where):
    obj = make_armature(both_legs(), mode="OBJECT")
    api.auto_rig(obj)
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "taken.glb").mkdir()
    sealed = tmp_path / "sealed"
    sealed.mkdir()
    path = {"under a file": tmp_path / "a_file" / "hero.glb", "a folder": tmp_path / "taken.glb",
            "in an immutable folder": sealed / "hero.glb"}[where]
    before = checksums([tmp_path])
    with immutable(sealed):
        with pytest.raises(api.RigError) as refused:
            api.export(obj, str(path))
    assert str(path) in str(refused.value) or str(path.parent) in str(refused.value), str(refused.value)
    assert checksums([tmp_path]) == before
    assert not [item for item in tmp_path.rglob("*") if TEMP_MARK in item.name or item.name.endswith(".glb")
                and item.is_file()]
    assert bpy.context.object is None or bpy.context.object.mode == "OBJECT"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_outputs_are_replaced_leaves_the_old_ones_whole(tmp_path, signum):
    """Outputs there from a run before, replaced with --overwrite and exported: a worker paused with its file
    written, not yet in place (a hook, see tests/test_batch_safety.py), and the run stopped then. Every old
    output is whole or replaced by a whole new one, no temporary file is left, and the inputs are as they
    were."""
    inputs = _heavy(3, tmp_path / "in", subdivisions=60)
    out = tmp_path / "out"
    old = [save_character(out / path.name, bones=both_legs(bend=0.1)) for path in inputs]
    before = checksums(old)
    system_temp = _system_temp(tmp_path)
    environment, told = _paused_written(tmp_path, system_temp.environment)
    report = tmp_path / "report.json"
    process = subprocess.Popen([sys.executable, str(ENTRY), str(tmp_path / "in"), "--out", str(out), "--overwrite",
                                "--export", "glb", "--jobs", "1", "--report", str(report)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=environment)
    keep = checksums([tmp_path / "in"])
    _paused_worker(process, told)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, stdout + stderr
    assert "Traceback" not in stdout + stderr
    assert not [path for path in tmp_path.rglob("*") if TEMP_MARK in path.name]
    assert checksums([tmp_path / "in"]) == keep
    files = report_of(report)
    for path in old:
        if files[path.name]["status"] == "rigged":
            assert limbs_in(path) == ["shin.L", "shin.R"] and (out / f"{path.stem}.glb").is_file()
        else:
            assert checksums([path]) == {path: before[path]}, files[path.name]
    assert any(entry["status"] == "interrupted" for entry in files.values())


_EXPORT_ON_A_SMALL_DISK = """
import os, sys
import bpy
import ik_rigger
from ik_rigger import api
from helpers import both_legs, make_armature
bpy.ops.wm.read_factory_settings(use_empty=True)
ik_rigger.register()
obj = make_armature(both_legs(), mode="OBJECT")
bpy.ops.mesh.primitive_grid_add(x_subdivisions=120, y_subdivisions=120)  # more than the disk holds, exported
mesh = bpy.context.active_object
mesh.parent = obj
mesh.modifiers.new("Armature", "ARMATURE").object = obj
mesh.vertex_groups.new(name="hips").add(range(len(mesh.data.vertices)), 1.0, "REPLACE")
api.auto_rig(obj)
try:
    api.export(obj, sys.argv[1])
except api.RigError as error:
    print("REFUSED:", error)
print("LEFT:", sorted(os.listdir(os.path.dirname(sys.argv[1]))))
sys.stdout.flush()
os._exit(0)  # before the exit cleanup bpy 4.2 crashes in once an add-on was registered (tests/conftest.py)
"""


@pytest.mark.parametrize("suffix", [".glb", ".gltf", ".fbx"])
def test_an_export_on_a_disk_that_fills_is_refused_naming_the_file_and_its_room_leaving_nothing(tmp_path, suffix):
    """The glTF exporter's OSError came through Blender as a RuntimeError with the exporter's traceback; once
    that was a clear error, Blender and the exporter still printed the traceback to the terminal, twice."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to give the export a small disk of its own")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = tmp_path / "export_small_disk.py"
    script.write_text(_EXPORT_ON_A_SMALL_DISK)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    result = subprocess.run(["unshare", "-m", "sh", "-c", 'mount -t tmpfs -o size=100k none "$0" || exit 77; "$@"',
                             str(disk), sys.executable, str(script), str(disk / f"hero{suffix}")],
                            capture_output=True, text=True, timeout=300, env=environment)
    if result.returncode == 77:
        pytest.skip("this machine does not let the tests mount a small disk (it needs root)")
    assert result.returncode == 0, result.stdout + result.stderr
    refused = next(line for line in result.stdout.splitlines() if "REFUSED:" in line).partition("REFUSED:")[2]
    assert f"could not write '{disk / f'hero{suffix}'}': No space left on device" in refused, refused
    assert "MB free" in refused and "Make room on its disk" in refused, refused
    assert "LEFT: []" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize("suffix", [".glb", ".gltf", ".fbx"])
def test_an_export_to_a_name_that_is_not_text_is_refused_naming_it(tmp_path, suffix):
    """Blender's exporters failed on it with a traceback (glTF's .bin address, FBX's own file name)."""
    obj = make_armature(both_legs(), mode="OBJECT")
    api.auto_rig(obj)
    path = os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xffname" + suffix.encode())
    with pytest.raises(api.RigError, match=r"its path is not valid text \(UTF-8\).*Rename the file"):
        api.export(obj, path)
    assert os.listdir(tmp_path) == []


def test_a_file_named_with_bytes_that_are_not_text_fails_its_export_saying_so_and_the_summary_counts_it(tmp_path):
    """Its .blend was rigged and saved, its export failed inside Blender's exporter: the line said rigged, the
    summary said nothing of it, the exit code was 0, and only the report held the failure."""
    folder = tmp_path / "in"
    save_character(folder / "good.blend")
    bad = os.fsencode(str(folder)) + b"/bad\xffname.blend"
    shutil.copy(folder / "good.blend", bad)
    out = tmp_path / "out"
    result = run(str(folder), "--out", str(out), "--export", "glb", "--report", str(tmp_path / "report.json"),
                 keep=[folder])
    assert result.returncode == 1, result.stdout + result.stderr
    failed = _failure(result, "bad")
    assert "rigged and saved, but not exported" in failed and "not valid text (UTF-8)" in failed, failed
    assert sorted(os.listdir(os.fsencode(str(out)))) == [b"bad\xffname.blend", b"good.blend", b"good.glb"]
    assert "Traceback" not in result.stdout


def test_a_failure_after_the_save_is_the_files_failure(tmp_path, monkeypatch):
    """IK Rigger's own bug in the export, after the .blend was saved: the file stayed 'rigged' with an error."""
    from ik_rigger.batch import exporting
    from ik_rigger.batch import rig_file as files
    from ik_rigger.limb.config import Config

    source = save_character(tmp_path / "a.blend")

    def broken(*args, **kwargs):
        raise KeyError("a clip that should be there")

    monkeypatch.setattr(exporting.api, "export", broken)
    result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "a.blend"), export="glb"), Config())
    assert result.status == "failed"
    assert result.error.startswith("rigged and saved, but then IK Rigger failed on this file (KeyError: ")
    assert "please report it" in result.error and "broken" in result.details
    assert limbs_in(tmp_path / "out" / "a.blend") == ["shin.L", "shin.R"]


# In a mount namespace of the run's own: a disk of SIZE bytes at $0, the inputs copied there with "in"
# given (for --in-place), the command run, and what the disk holds then listed beside it.
_ON_A_SMALL_DISK = ('mount -t tmpfs -o size="$SIZE" none "$0" || exit 77; if [ -n "$COPY" ]; then mkdir "$0/in" && '
                    'cp "$COPY" "$0/in/"; fi; "$@"; code=$?; (cd "$0" && find . -type f | sort) > "$0.listing"; '
                    'if [ -n "$COPY" ]; then sha256sum "$0/in/"* | cut -d" " -f1 > "$0.sum"; fi; exit $code')


@pytest.mark.parametrize("where", ["out", "in place"])
def test_a_disk_that_fills_as_blender_writes_the_end_fails_the_file_and_puts_nothing_in_place(tmp_path, where):
    """Where the disk fills up as Blender 5.x writes the last of a file, Blender says nothing: the batch put a
    .blend cut short in place, said rigged and exited 0. Rigged in place, the backup's copy failed first."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to give the run a small disk of its own")
    source = save_character(tmp_path / "in" / "hero.blend")
    size = source.stat().st_size
    disk = tmp_path / "disk"
    disk.mkdir()
    if where == "out":
        environment = {**os.environ, "SIZE": str(size // 2 // 4096 * 4096), "COPY": ""}
        args = [str(source), "--out", str(disk / "out")]
    else:
        environment = {**os.environ, "SIZE": str((size * 3 // 2) // 4096 * 4096 + 4096), "COPY": str(source)}
        args = [str(disk / "in" / "hero.blend"), "--in-place"]
    result = run(*args, "--report", str(tmp_path / "report.json"), keep=[source], env=environment,
                 prefix=["unshare", "-m", "sh", "-c", _ON_A_SMALL_DISK, str(disk)])
    if result.returncode == 77:
        pytest.skip("this machine does not let the tests mount a small disk (it needs root)")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = _failure(result, "hero.blend")
    # Blender 4.2 says its save failed ("No such file or directory"); 5.x says nothing.
    assert "incomplete, its end missing" in failed or "Blender cannot write" in failed, failed
    assert "MB free" in failed and ("Make room on its disk" in failed or "its disk has room" in failed), failed
    listing = (tmp_path / "disk.listing").read_text().split()
    assert listing == ([] if where == "out" else ["./in/hero.blend"]), listing
    if where == "in place":  # the user's file whole, as it was
        assert (tmp_path / "disk.sum").read_text().split() == [digest(source)]
    _no_traceback(result)


def test_the_sample_job_on_a_disk_that_fills_says_so_and_leaves_no_file_cut_short(tmp_path):
    """Blender 5.x wrote the sample cut short and said nothing; the job listed it as written."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to give the job a small disk of its own")
    disk = tmp_path / "disk"
    disk.mkdir()
    result = subprocess.run(["unshare", "-m", "sh", "-c", _ON_A_SMALL_DISK, str(disk), sys.executable,
                             str(ROOT / "scripts" / "rig_sample.py"), "--out", str(disk), "--no-picture"],
                            capture_output=True, text=True, timeout=600,
                            env={**os.environ, "SIZE": "65536", "COPY": ""})
    if result.returncode == 77:
        pytest.skip("this machine does not let the tests mount a small disk (it needs root)")
    assert result.returncode == 1, result.stdout + result.stderr
    blend = disk / "sample_rigged.blend"  # Blender 4.2 says its save failed; 5.x says nothing
    assert (f"rig_sample: error: Blender wrote '{blend}' incomplete" in result.stderr
            or f"rig_sample: error: could not write '{blend}'" in result.stderr), result.stderr
    assert "Make room on its disk" in result.stderr and "Wrote:" not in result.stdout
    assert (tmp_path / "disk.listing").read_text().split() == []
    _no_traceback(result)


def test_in_place_through_a_link_in_a_folder_it_cannot_write_rigs_the_file_the_link_names(tmp_path):
    """The file is written where the link points, and so only that folder need be writable."""
    real = save_character(tmp_path / "real" / "a.blend")
    (tmp_path / "links").mkdir()
    os.symlink(real, tmp_path / "links" / "a.blend")
    with immutable(tmp_path / "links"):
        result = run(str(tmp_path / "links" / "a.blend"), "--in-place")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(path.name for path in real.parent.iterdir()) == ["a.blend", "a.blend1"]
    assert (tmp_path / "links" / "a.blend").is_symlink() and limbs_in(real) == ["shin.L", "shin.R"]


def test_the_sample_job_fails_when_a_later_sample_cannot_be_written(tmp_path):
    """An immutable file where the skinned sample's file goes: the first sample is written, the motion capture
    too, and the job says which could not be and exits 1 (it exited 0, the failure on stderr alone)."""
    out = tmp_path / "out"
    out.mkdir()
    taken = out / "sample_character_rigged.blend"
    taken.write_text("mine")
    with immutable(taken):
        result = _sample(out)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "rig_sample: error: no skinned sample:" in result.stderr, result.stderr
    assert "sample_character_rigged.blend" in result.stderr
    assert (out / "sample_rigged.blend").is_file() and (out / "sample_capture_rigged.blend").is_file()
    assert taken.read_text() == "mine"
    _no_traceback(result)
