"""The batch command with a studio's files: nothing lost or hidden, interrupts, failures kept to one file.

Every run is a separate process, as a user starts it, and every run checks that the
inputs it must not touch have the same checksums afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import bpy
import pytest
from helpers import DATA, both_legs, leg_bones, make_armature
from test_batch import ENTRY, digest, limbs_in, save_character

TEMP_MARK = "ik_rigger-tmp"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def checksums(paths: Iterable[Path]) -> dict[Path, str]:
    """Every file at or under ``paths`` (links not followed) with its checksum."""
    found: dict[Path, str] = {}
    for path in paths:
        files = [path] if path.is_file() else sorted(item for item in path.rglob("*") if item.is_file())
        found.update((item, digest(item)) for item in files if not item.is_symlink() and stat.S_ISREG(
            item.stat().st_mode) and os.access(item, os.R_OK))
    return found


def run(*args: str, keep: Iterable[Path] = (), prefix: Iterable[str] = (), **popen) -> subprocess.CompletedProcess:
    """The batch command in a process of its own; ``keep`` must come out byte for byte."""
    before = checksums(keep)
    result = subprocess.run([*prefix, sys.executable, str(ENTRY), *args], capture_output=True, text=True,
                            timeout=300, **popen)
    assert checksums(keep) == before, result.stdout + result.stderr
    return result


def report_of(path: Path) -> dict[str, dict]:
    return {Path(entry["input"]).name: entry for entry in json.loads(path.read_text())["files"]}


def temporaries(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if TEMP_MARK in path.name]


# Point 1: nothing lost or hidden.

def test_the_report_may_not_be_an_input_an_output_or_the_config(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    out = tmp_path / "out"
    config = tmp_path / "rig.toml"
    config.write_text("[defaults]\n")
    for report, extra in ((source, ("--out", str(out))), (out / "a.blend", ("--out", str(out))),
                          (source, ("--in-place",)), (config, ("--out", str(out), "--config", str(config)))):
        result = run(str(tmp_path / "in"), *extra, "--report", str(report), keep=[tmp_path / "in", config])
        assert result.returncode == 2, result.stdout + result.stderr
        assert "is an input, an output or a folder" in result.stderr
        assert not out.exists()
        assert not (tmp_path / "in" / "a.blend1").exists()


def test_out_is_never_searched_and_its_files_never_overwritten_unless_asked(tmp_path):
    inputs = tmp_path / "in"
    save_character(inputs / "a.blend")
    save_character(inputs / "b.blend")
    out = tmp_path / "rigged"
    mine = save_character(out / "a.blend", name="Mine")  # the user's own file, where an output would go
    # The --out folder inside an input folder: a usage error, and nothing written.
    result = run(str(inputs), "--out", str(inputs / "rigged"), "--report", str(tmp_path / "report.json"),
                 keep=[inputs])
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"--out '{inputs / 'rigged'}' is the input folder '{inputs}' or inside it" in result.stderr
    assert sorted(path.name for path in inputs.iterdir()) == ["a.blend", "b.blend"]
    assert not (tmp_path / "report.json").exists()
    # A link into the --out folder is not searched.
    (inputs / "link").symlink_to(out)
    result = run(str(inputs), "--out", str(out), "--report", str(tmp_path / "report.json"),
                 keep=[inputs / "a.blend", inputs / "b.blend", mine])
    assert result.returncode == 1, result.stdout
    assert f"the output '{mine}' exists. Pass --overwrite" in result.stdout
    assert f"not searched: '{inputs / 'link'}' is the --out folder" in result.stdout
    report = report_of(tmp_path / "report.json")
    assert sorted(report) == ["a.blend", "b.blend"]
    assert report["a.blend"]["status"] == "failed" and report["b.blend"]["status"] == "rigged"
    assert sorted(path.name for path in out.iterdir()) == ["a.blend", "b.blend"]
    # Asked to, it replaces the file; the rigged copies under --out are still no inputs.
    result = run(str(inputs), "--out", str(out), "--overwrite", keep=[inputs / "a.blend", inputs / "b.blend"])
    assert result.returncode == 0, result.stdout
    assert "2 file(s)" in result.stdout
    assert limbs_in(mine) == ["shin.L", "shin.R"]
    assert sorted(path.name for path in out.iterdir()) == ["a.blend", "b.blend"]


def test_in_place_writes_through_a_symbolic_link(tmp_path):
    real = save_character(tmp_path / "real" / "a.blend")
    original = digest(real)
    link = tmp_path / "links" / "a.blend"
    link.parent.mkdir()
    link.symlink_to(real)
    result = run(str(link.parent), "--in-place")
    assert result.returncode == 0, result.stdout
    assert link.is_symlink() and link.resolve() == real
    assert digest(tmp_path / "real" / "a.blend1") == original
    assert limbs_in(real) == ["shin.L", "shin.R"]
    assert not (tmp_path / "links" / "a.blend1").exists()


def _save(path: Path, compress: bool) -> Path:
    save_character(path)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, compress=compress)
    return path


def test_outputs_keep_the_inputs_compression(tmp_path):
    packed = _save(tmp_path / "in" / "packed.blend", compress=True)
    plain = _save(tmp_path / "in" / "plain.blend", compress=False)
    assert packed.read_bytes()[:4] == ZSTD_MAGIC and plain.read_bytes()[:7] == b"BLENDER"
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "out" / "packed.blend").read_bytes()[:4] == ZSTD_MAGIC
    assert (tmp_path / "out" / "plain.blend").read_bytes()[:7] == b"BLENDER"
    result = run(str(packed), "--in-place")
    assert result.returncode == 0, result.stdout
    assert packed.read_bytes()[:4] == ZSTD_MAGIC
    assert limbs_in(packed) == ["shin.L", "shin.R"]


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_temporary_files_are_never_inputs_and_killed_runs_leftovers_are_cleaned(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    # A leftover inside the inputs: a complete .blend by content, never taken for one.
    shutil.copy(source, tmp_path / "in" / f".b.blend.{_dead_pid()}.{TEMP_MARK}")
    out = tmp_path / "out"
    out.mkdir()
    dead = [out / f".a.blend.{_dead_pid()}.{TEMP_MARK}", out / f".c.blend.{_dead_pid()}.{TEMP_MARK}@"]
    live = out / f".d.blend.{os.getpid()}.{TEMP_MARK}"  # a run still going (this one) keeps its file
    for path in (*dead, live):
        path.write_bytes(b"partial")
    result = run(str(tmp_path / "in"), "--out", str(out), keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout
    assert "1 file(s)" in result.stdout
    assert all(f"removed '{path}', left by a run that was killed" in result.stdout for path in dead)
    assert not any(path.exists() for path in dead) and live.exists()
    assert sorted(path.name for path in out.iterdir()) == [live.name, "a.blend"]


# Point 2: interrupts and workers that die.

def _heavy(count: int, folder: Path, subdivisions: int = 400) -> list[Path]:
    """Characters with a mesh big enough that saving one takes a moment to catch (a grid of
    ``subdivisions`` squared faces)."""
    def mesh() -> None:
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=subdivisions, y_subdivisions=subdivisions)

    first = save_character(folder / "c0.blend", extra=mesh)
    for index in range(1, count):
        shutil.copy(first, folder / f"c{index}.blend")
    return sorted(folder.iterdir())


def _processes_naming(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("signum,jobs", [(signal.SIGINT, 1), (signal.SIGTERM, 1), (signal.SIGTERM, 2),
                                         (signal.SIGINT, 2)])
def test_an_interrupt_stops_cleanly_with_a_report(tmp_path, signum, jobs):
    inputs = _heavy(5, tmp_path / "in")
    before = {path: digest(path) for path in inputs}
    config = tmp_path / "rig.toml"  # names this run's workers, to find them afterwards
    config.write_text("[defaults]\n")
    report = tmp_path / "report.json"
    system_temp = _system_temp(tmp_path)
    # A worker waits with its first file written: the signal comes while that file is in progress.
    environment, told = _paused_written(tmp_path, system_temp.environment)
    process = subprocess.Popen([sys.executable, str(ENTRY), str(tmp_path / "in"), "--in-place", "--jobs", str(jobs),
                                "--config", str(config), "--report", str(report)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    _paused_worker(process, told)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, stdout + stderr
    assert "Traceback" not in stderr
    assert not temporaries(tmp_path)
    assert not _processes_naming(str(config))
    assert system_temp.left() == []
    files = report_of(report)
    assert json.loads(report.read_text())["interrupted_by"] == signal.Signals(signum).name
    assert sorted(files) == [path.name for path in inputs]
    assert any(entry["status"] == "interrupted" for entry in files.values())  # the paused worker's file
    for path in inputs:
        # Each input is whole: rigged (the original kept as .blend1) or untouched.
        status = files[path.name]["status"]
        assert status in ("rigged", "interrupted", "not started")
        if status == "rigged":
            assert digest(path.with_suffix(".blend1")) == before[path]
            assert limbs_in(path) == ["shin.L", "shin.R"]
        else:
            assert digest(path) == before[path] and not path.with_suffix(".blend1").exists()


def _assert_killed_file_reported_as_on_disk(files: dict, out: Path, inputs: list[Path], returncode: int,
                                           output: str) -> None:
    """One file's worker was killed: the report says what is on disk. The file is failed and absent,
    or (the kill landed in the moment after it went into place, before its worker said so) rigged and
    there whole; every other file is rigged."""
    died = [name for name, entry in files.items() if "worker died (signal 9)" in " ".join([entry["error"],
                                                                                             *entry["notes"]])]
    assert len(died) == 1, output
    written = sorted(path.name for path in out.iterdir())
    if died[0] in written:
        assert files[died[0]]["status"] == "rigged" and returncode == 0, output
        assert limbs_in(out / died[0]) == ["shin.L", "shin.R"]
    else:
        assert files[died[0]]["status"] == "failed" and returncode == 1, output
        assert "worker died (signal 9) while rigging it" in files[died[0]]["error"]
    assert sorted(name for name, entry in files.items() if entry["status"] == "rigged") == written
    assert sorted({*written, died[0]}) == sorted(path.name for path in inputs)


# In the hooks below, the run's own process (not a worker): with --jobs 2 or more it rigs files too, from
# the start, and on a loaded machine could rig every one before a worker has started. At its first save it
# waits for a worker to have paused (at most 300 s), so that one always does, with files left after it.
_MAIN_WAITS = """
def _wait_for(told):
    deadline = time.monotonic() + 300
    while not os.access(told, os.F_OK) and time.monotonic() < deadline:
        time.sleep(0.01)
"""


# Loaded by every Python the batch starts (on PYTHONPATH): the first worker to put a file in place
# (its save written, not yet moved) writes its process id to the file PAUSE_FIRST_SAVE names and waits
# there to be killed. A kill from outside then lands on a worker's first file, files left for the one
# that takes its place however fast or loaded the machine (watching for a save in progress may first
# see one near the end of the run).
_PAUSE_FIRST_SAVE = """
import os, time
_told = os.environ["PAUSE_FIRST_SAVE"]
_worker = "IK_RIGGER_BATCH_ANSWERS" in os.environ

def _pause_first(move):
    def moving(source, target, *args, **kwargs):
        if "ik_rigger-tmp" in str(source) and str(target).endswith(".blend"):
            if not _worker:  # see _MAIN_WAITS
                _wait_for(_told)
                return move(source, target, *args, **kwargs)
            try:
                os.close(os.open(_told + ".claimed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:  # another worker paused first
                return move(source, target, *args, **kwargs)
            with open(_told + ".part", "w") as told:
                told.write(str(os.getpid()))
            os.rename(_told + ".part", _told)
            time.sleep(300)
        return move(source, target, *args, **kwargs)
    return moving

os.link, os.replace = _pause_first(os.link), _pause_first(os.replace)
""" + _MAIN_WAITS


def _paused_first_save(tmp_path: Path, environment: dict[str, str]) -> tuple[dict[str, str], Path]:
    """``environment`` for a run whose first worker to save waits (see _PAUSE_FIRST_SAVE), and the file
    that will name it."""
    hook = tmp_path / "pause_hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_PAUSE_FIRST_SAVE)
    told = tmp_path / "paused_worker"
    return {**environment, "PYTHONPATH": str(hook), "PAUSE_FIRST_SAVE": str(told)}, told


# Loaded by every Python the batch starts (on PYTHONPATH): the first worker to have written a file (its
# Blender save done, the file whole in the save's own folder, not yet in place) writes its process id to
# the file PAUSE_WRITTEN names and waits there, where an interrupt is let through at once (the save
# checks that Blender wrote the file, outside any held block), until the process that started it is
# gone. A signal or a kill from outside then lands on a file in progress, its temporary file there to
# remove and files left after it, however fast or loaded the machine: a save watched for in progress
# may be missed every time, or be in place by the time the signal comes, or be the run's last.
_PAUSE_WRITTEN = """
import os, time
_told = os.environ["PAUSE_WRITTEN"]
_worker = "IK_RIGGER_BATCH_ANSWERS" in os.environ
_stat = os.stat

def _pausing(path, *args, **kwargs):
    name = os.path.basename(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else ""
    if isinstance(name, str) and name.startswith("file.ik_rigger-tmp") and name.endswith(".blend"):
        if not _worker:  # see _MAIN_WAITS
            _wait_for(_told)
            return _stat(path, *args, **kwargs)
        try:
            os.close(os.open(_told + ".claimed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:  # another worker paused first
            return _stat(path, *args, **kwargs)
        parent = os.getppid()
        with open(_told + ".part", "w") as told:
            told.write(str(os.getpid()))
        os.rename(_told + ".part", _told)
        deadline = time.monotonic() + 300
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.05)
    return _stat(path, *args, **kwargs)

os.stat = _pausing
""" + _MAIN_WAITS


def _paused_written(tmp_path: Path, environment: dict[str, str]) -> tuple[dict[str, str], Path]:
    """``environment`` for a run whose first worker to write a file waits before putting it in place, where
    a signal stops it at once (see _PAUSE_WRITTEN), and the file that will name that worker (read it with
    _paused_worker)."""
    hook = tmp_path / "pause_written_hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_PAUSE_WRITTEN)
    told = tmp_path / "worker_paused_written"
    return {**environment, "PYTHONPATH": str(hook), "PAUSE_WRITTEN": str(told)}, told


def _paused_worker(process: subprocess.Popen, told: Path) -> int:
    """The process id of the worker a hook paused (see _PAUSE_FIRST_SAVE, _PAUSE_WRITTEN), once ``told``
    names it (the Blenders' start, and the file's open, rig and save before it, take what a loaded machine
    gives them)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if told.exists():
            return int(told.read_text())
        time.sleep(0.01)
    raise AssertionError("no worker reached its first save")


def test_a_worker_that_dies_fails_only_its_file_and_is_replaced(tmp_path):
    inputs = _heavy(24, tmp_path / "in")
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    before = checksums([tmp_path / "in"])
    system_temp = _system_temp(tmp_path)
    environment, told = _paused_first_save(tmp_path, system_temp.environment)
    process = subprocess.Popen([sys.executable, str(ENTRY), str(tmp_path / "in"), "--out", str(out), "--jobs", "3",
                                "--report", str(report)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment)
    os.kill(_paused_worker(process, told), signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=300)
    files = report_of(report)
    _assert_killed_file_reported_as_on_disk(files, out, inputs, process.returncode, stdout + stderr)
    assert not temporaries(out)
    assert checksums([tmp_path / "in"]) == before
    whole = json.loads(report.read_text())
    # The workers beside this process and one in place of the dead one (where the memory holds fewer
    # Blenders at once, the run says so: one worker, or one alone, and the one in its place).
    assert whole["jobs"] == 3 or "fit in the memory available" in stdout + stderr, whole
    assert whole["workers_started"] == max(whole["jobs"], 2), whole
    assert system_temp.left() == []  # the killed worker's Blender session folder too


# Loaded by every Python the batch starts (on PYTHONPATH): in a worker, the first save's move into
# place of the whole run (a file made once, naming the output) is followed at once by a SIGKILL,
# before the worker can say the file is rigged.
_KILL_AFTER_MOVE = """
import os, signal
if "IK_RIGGER_BATCH_ANSWERS" in os.environ:
    _once = os.environ["KILL_AFTER_MOVE"]

    def _then_die(move):
        def moved(source, target, *args, **kwargs):
            move(source, target, *args, **kwargs)
            if "ik_rigger-tmp" in str(source) and str(target).endswith(".blend"):
                try:
                    told = os.open(_once, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return
                os.write(told, os.path.basename(target).encode())
                os.close(told)
                os.kill(os.getpid(), signal.SIGKILL)
        return moved

    # A new output is linked into place, one replaced (--overwrite, --in-place) renamed there.
    os.link, os.replace = _then_die(os.link), _then_die(os.replace)
"""


def hooked_run(tmp_path: Path, hook_text: str, count: int, *arguments: str, **variables: str):
    """A run of ``count`` characters from ``tmp_path``/in to ``tmp_path``/out, every Python it starts loading
    ``hook_text`` first (a sitecustomize on its path) with ``variables`` in its environment: the inputs and
    the run."""
    inputs = [save_character(tmp_path / "in" / f"c{index}.blend") for index in range(count)]
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(hook_text)
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), *arguments, keep=[tmp_path / "in"],
                 env={**os.environ, "PYTHONPATH": str(hook), **variables})
    return inputs, result


def _killed_once(tmp_path: Path, hook_text: str, variable: str, arguments: list[str]):
    """A --jobs 1 run of four characters whose worker ``hook_text`` kills once (on the file it names in the
    file ``variable`` gives): the inputs, the output folder, the run, its report's files and that file's name."""
    killed, report = tmp_path / "killed", tmp_path / "report.json"
    inputs, result = hooked_run(tmp_path, hook_text, 4, "--jobs", "1", "--report", str(report), *arguments,
                                **{variable: str(killed)})
    name = killed.read_text()  # the hook did kill a worker
    return inputs, tmp_path / "out", result, report_of(report), name


@pytest.mark.parametrize("export", [False, True])
def test_a_worker_killed_right_after_its_file_went_into_place_counts_it_rigged(tmp_path, export):
    """The file a worker put in place whole before it died is rigged in the report (as its
    worker recorded it, with a note), never failed while it is there; with --export, whose file
    the worker did not live to write, it is failed saying so, its .blend in place."""
    inputs, out, result, files, name = _killed_once(tmp_path, _KILL_AFTER_MOVE, "KILL_AFTER_MOVE",
                                                    ["--export", "glb"] if export else [])
    entry = files[name]
    assert "its worker died (signal 9) right after putting it in place: the file is there whole" in entry["notes"]
    assert entry["armatures"][0]["limbs"] and entry["armatures"][0]["status"] == "rigged"
    assert limbs_in(out / name) == ["shin.L", "shin.R"]
    if export:
        assert result.returncode == 1, result.stdout + result.stderr
        assert entry["status"] == "failed" and entry["error"].startswith(
            "rigged and saved, but not exported: its worker died (signal 9) before writing the export")
        assert not (out / name).with_suffix(".glb").exists()
    else:
        assert result.returncode == 0, result.stdout + result.stderr
        assert entry["status"] == "rigged" and not entry["error"]
        assert "4 rigged (8 limbs on 4 armature(s))" in result.stdout
    assert all(files[path.name]["status"] == "rigged" for path in inputs if path.name != name)
    assert not temporaries(out)


# As _KILL_AFTER_MOVE, but the SIGKILL comes right before the move: the worker has told the run
# which file it was about to put in place, and that file never got there.
_KILL_BEFORE_MOVE = """
import os, signal
if "IK_RIGGER_BATCH_ANSWERS" in os.environ:
    _once = os.environ["KILL_BEFORE_MOVE"]

    def _die_first(move):
        def moving(source, target, *args, **kwargs):
            if "ik_rigger-tmp" in str(source) and str(target).endswith(".blend"):
                try:
                    told = os.open(_once, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return move(source, target, *args, **kwargs)
                os.write(told, os.path.basename(target).encode())
                os.close(told)
                os.kill(os.getpid(), signal.SIGKILL)
            return move(source, target, *args, **kwargs)
        return moving

    os.link, os.replace = _die_first(os.link), _die_first(os.replace)
"""


def test_a_worker_killed_right_before_its_file_went_into_place_fails_it(tmp_path):
    """The run is told which file a worker is about to put in place; should the worker die before the
    move, the file is not there: failed (worker died), never counted rigged, the other files rigged."""
    inputs, out, result, files, name = _killed_once(tmp_path, _KILL_BEFORE_MOVE, "KILL_BEFORE_MOVE", [])
    assert result.returncode == 1, result.stdout + result.stderr
    assert files[name]["status"] == "failed"
    assert files[name]["error"] == "worker died (signal 9) while rigging it"
    assert not (out / name).exists()
    assert all(files[path.name]["status"] == "rigged" for path in inputs if path.name != name)
    assert not temporaries(out)


# Loaded by every Python the batch starts: a worker's own folder beside the outputs, kept for all its files,
# is never removed by the worker itself, as when a signal stops it at the wrong moment.
_KEEP_WORKER_FOLDERS = """
import os, shutil
if "IK_RIGGER_BATCH_ANSWERS" in os.environ:
    _remove = shutil.rmtree

    def _kept(path, *args, **kwargs):
        if str(path).endswith("ik_rigger-tmp"):
            return None
        return _remove(path, *args, **kwargs)

    shutil.rmtree = _kept
"""


def test_a_folder_a_worker_left_beside_the_outputs_is_removed_by_the_end_of_the_run(tmp_path):
    inputs, result = hooked_run(tmp_path, _KEEP_WORKER_FOLDERS, 3, "--jobs", "1")
    out = tmp_path / "out"
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(path.name for path in out.iterdir()) == sorted(path.name for path in inputs)
    assert "left by a run that was killed" not in result.stdout + result.stderr


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two cores and Linux's affinity calls")
def test_a_worker_in_place_of_a_dead_one_keeps_to_its_core(tmp_path):
    """With one process per core (--jobs 2 on two cores), the worker that takes a dead one's place
    keeps to the dead one's core, as the main process keeps to its own."""
    inputs = _heavy(24, tmp_path / "in")
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    two = sorted(os.sched_getaffinity(0))[:2]
    # The batch on a machine of two cores, whatever this one has.
    on_two = (f"import os, sys; os.sched_setaffinity(0, {set(two)!r}); "
              "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")
    environment, told = _paused_first_save(tmp_path, dict(os.environ))
    process = subprocess.Popen([sys.executable, "-c", on_two, str(ENTRY), str(tmp_path / "in"), "--out", str(out),
                                "--jobs", "2", "--report", str(report)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    first = _paused_worker(process, told)
    assert os.sched_getaffinity(first) == {two[1]} and os.sched_getaffinity(process.pid) == {two[0]}
    os.kill(first, signal.SIGKILL)
    # The worker in its place: it keeps to the core as it starts.
    second, cores = None, set()
    deadline = time.monotonic() + 60
    while cores != {two[1]} and time.monotonic() < deadline and process.poll() is None:
        second = next((pid for pid in _children(process.pid) if pid != first), second)
        try:
            cores = os.sched_getaffinity(second) if second is not None else set()
        except OSError:  # gone (it found no file): the last look stands
            break
    assert second is not None and cores == {two[1]}
    stdout, stderr = process.communicate(timeout=300)
    _assert_killed_file_reported_as_on_disk(report_of(report), out, inputs, process.returncode, stdout + stderr)
    assert json.loads(report.read_text())["workers_started"] == 2


@dataclass(frozen=True)
class _SystemTemp:
    """A system temporary folder of the test's own, for the batch's processes."""

    folder: Path

    @property
    def environment(self) -> dict[str, str]:
        return {**os.environ, "TMPDIR": str(self.folder)}

    def left(self) -> list[Path]:
        return sorted(self.folder.iterdir())


def _system_temp(tmp_path: Path) -> _SystemTemp:
    folder = tmp_path / "system_temp"
    folder.mkdir()
    return _SystemTemp(folder)


def _children(parent: int) -> list[int]:
    """The processes ``parent`` started that are still there."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_workers_started_ahead_never_outlive_the_run(tmp_path):
    """--jobs 2 starts a worker before the main Blender loads; when it has rigged the one file, or
    the command line is wrong, it is stopped before the run returns, and leaves no temporary folder."""
    source = save_character(tmp_path / "in" / "a.blend")
    config = tmp_path / "rig.toml"  # names this run's processes, to find them afterwards
    config.write_text("[defaults]\n")
    report = tmp_path / "report.json"
    system_temp = _system_temp(tmp_path)
    result = run(str(source), "--out", str(tmp_path / "out"), "--jobs", "2", "--config", str(config),
                 "--report", str(report), keep=[tmp_path / "in"], env=system_temp.environment)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(report.read_text())["workers_started"] == 1  # one file at a time: in a worker
    assert not _processes_naming(str(config))
    assert system_temp.left() == []
    result = run(str(source), "--jobs", "2", "--config", str(config), keep=[tmp_path / "in"],
                 env=system_temp.environment)
    assert result.returncode == 2 and "say where results go" in result.stderr
    assert not _processes_naming(str(config))
    assert system_temp.left() == []


def test_a_killed_runs_temporary_folder_is_removed_by_the_next_run(tmp_path):
    """Blender keeps a session folder in the system's temporary folder; a run's Blenders keep theirs
    in the run's own folder there, which a run killed outright cannot remove: the next run does,
    and leaves a running one's alone."""
    _heavy(6, tmp_path / "in")
    config = tmp_path / "rig.toml"
    config.write_text("[defaults]\n")
    system_temp = _system_temp(tmp_path)
    # A worker waits with its first file written until the run is gone: the kill lands mid-run.
    environment, told = _paused_written(tmp_path, system_temp.environment)
    process = subprocess.Popen([sys.executable, str(ENTRY), str(tmp_path / "in"), "--out", str(tmp_path / "out"),
                                "--jobs", "2", "--config", str(config)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=environment)
    _paused_worker(process, told)
    process.kill()
    process.wait()
    deadline = time.monotonic() + 120
    while _processes_naming(str(config)) and time.monotonic() < deadline:  # its worker, ending on its own
        time.sleep(0.1)
    assert [path.name.startswith(f"ik_rigger_batch_{process.pid}_") for path in system_temp.left()] == [True]
    running = system_temp.folder / f"ik_rigger_batch_{os.getpid()}_running"
    (running / "blender_session").mkdir(parents=True)
    result = run(str(save_character(tmp_path / "more" / "a.blend")), "--out", str(tmp_path / "more_out"),
                 env=system_temp.environment)
    assert result.returncode == 0, result.stdout + result.stderr
    assert system_temp.left() == [running]


# Point 3: every failure is one file's failure.

def _without_file_permission_override() -> list[str]:
    """How to run a child that file permissions apply to, on a machine that runs tests as root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no way to drop the capability to ignore permissions")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


@pytest.fixture
def restricted(tmp_path):
    """A command prefix subject to file permissions; chmods are undone afterwards."""
    prefix = _without_file_permission_override()
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    if subprocess.run([*prefix, "cat", str(probe)], capture_output=True).returncode == 0:
        pytest.skip("file permissions cannot be made to apply to a child process here")
    yield prefix
    for path in tmp_path.rglob("*"):
        if not path.is_symlink():
            path.chmod(0o755)


def test_unreadable_files_and_folders_fail_alone(tmp_path, restricted):
    inputs = tmp_path / "in"
    save_character(inputs / "ok.blend")
    locked = save_character(inputs / "locked.blend")
    closed = save_character(inputs / "closed" / "c.blend").parent
    keep = [inputs]
    locked.chmod(0)
    closed.chmod(0)
    result = run(str(inputs), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=keep, prefix=restricted)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"'{locked}': Permission denied" in result.stdout
    assert f"cannot search folder '{closed}' (Permission denied)" in result.stdout
    assert f"rigged {inputs / 'ok.blend'}" in result.stdout
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["ok.blend"]


def test_in_place_in_a_read_only_folder_fails_the_file_and_leaves_it_whole(tmp_path, restricted):
    source = save_character(tmp_path / "ro" / "a.blend")
    other = save_character(tmp_path / "rw" / "b.blend")
    (tmp_path / "ro").chmod(0o555)
    result = run(str(source), str(other), "--in-place", keep=[source], prefix=restricted)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED" in result.stdout and "of the input 'a.blend' cannot be written in" in result.stdout
    assert sorted(path.name for path in (tmp_path / "ro").iterdir()) == ["a.blend"]
    assert limbs_in(other) == ["shin.L", "shin.R"]


def test_what_dooms_the_run_is_refused_before_any_file(tmp_path, restricted):
    source = save_character(tmp_path / "in" / "a.blend")
    sealed = tmp_path / "sealed"
    sealed.mkdir()
    config = tmp_path / "rig.toml"
    config.write_text("[defaults]\n")
    sealed.chmod(0o555)
    for extra, message in (
        (("--report", str(sealed / "report.json")), "cannot write the report in"),
        (("--report", str(sealed / "deeper" / "report.json")), "cannot write the report in"),
    ):
        result = run(str(source), "--out", str(tmp_path / "out"), *extra, keep=[tmp_path / "in"], prefix=restricted)
        assert result.returncode == 2 and message in result.stderr, result.stdout + result.stderr
        assert not (tmp_path / "out").exists()
    result = run(str(source), "--out", str(sealed / "out"), keep=[tmp_path / "in"], prefix=restricted)
    assert result.returncode == 2 and "cannot write the rigged files" in result.stderr
    config.chmod(0)
    result = run(str(source), "--out", str(tmp_path / "out"), "--config", str(config), keep=[tmp_path / "in"],
                 prefix=restricted)
    assert result.returncode == 2 and "cannot read the config file" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_bad_limb_in_the_config_fails_only_its_file(tmp_path):
    inputs = tmp_path / "in"
    save_character(inputs / "a.blend")
    save_character(inputs / "b.blend")
    config = tmp_path / "rig.toml"
    config.write_text('[[armature]]\nfile = "b.blend"\ndetect = false\n\n[[armature.limb]]\nlast = "no_such_bone"\n')
    result = run(str(inputs), "--out", str(tmp_path / "out"), "--config", str(config), keep=[inputs])
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"FAILED {inputs / 'b.blend'}" in result.stdout and "armature 'Rig'" in result.stdout
    assert "no_such_bone" in result.stdout
    assert limbs_in(tmp_path / "out" / "a.blend") == ["shin.L", "shin.R"]
    assert not (tmp_path / "out" / "b.blend").exists()


def test_long_bone_names_in_a_config_limb_do_not_stop_the_run(tmp_path):
    """Names near Blender's 63-byte limit leave no room for the made bones' suffixes."""
    long = "x" * 57
    bones = [("root", (0, 0, 0), (0, 0.5, 0), None, False), ("hips", (0, 0, 1.0), (0, 0, 1.2), "root", False),
             (f"{long}a.L", (0.2, 0, 1.0), (0.2, -0.05, 0.55), "hips", False),
             (f"{long}b.L", (0.2, -0.05, 0.55), (0.2, 0, 0.1), f"{long}a.L", True),
             (f"{long}c.L", (0.2, 0, 0.1), (0.2, -0.2, 0.0), f"{long}b.L", True)]
    inputs = tmp_path / "in"
    save_character(inputs / "long.blend", bones=bones)
    save_character(inputs / "plain.blend")
    config = tmp_path / "rig.toml"
    config.write_text(f'[[armature]]\nfile = "long.blend"\ndetect = false\n\n[[armature.limb]]\nlast = "{long}b.L"\n')
    result = run(str(inputs), "--out", str(tmp_path / "out"), "--config", str(config), "--report",
                 str(tmp_path / "report.json"), keep=[inputs])
    report = report_of(tmp_path / "report.json")
    assert report["plain.blend"]["status"] == "rigged", result.stdout + result.stderr
    assert result.returncode == (0 if report["long.blend"]["status"] == "rigged" else 1)
    if report["long.blend"]["status"] == "rigged":
        assert limbs_in(tmp_path / "out" / "long.blend") == [f"{long}b.L"]
    else:
        assert f"FAILED {inputs / 'long.blend'}" in result.stdout


def test_ik_riggers_own_failure_on_a_file_is_that_files_failure(tmp_path, monkeypatch):
    """A bug a file triggers is reported loudly, with its traceback, and is that file's failure."""
    from ik_rigger.batch import rig_file as files
    from ik_rigger.limb.config import Config

    source = save_character(tmp_path / "a.blend")

    def broken(*args, **kwargs):
        raise KeyError("a bone that should be there")

    monkeypatch.setattr(files.api, "build_many", broken)
    result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "a.blend")), Config())
    assert result.status == "failed"
    assert result.error.startswith("IK Rigger failed on this file (KeyError: 'a bone that should be there')")
    assert "please report it" in result.error and "Traceback" in result.details and "broken" in result.details
    assert not (tmp_path / "out").exists()


# Point 4: the config is checked against the build options' schema before any file.

@pytest.mark.parametrize("text,message", [
    ("[defaults]\npole_distance = nan\n", "'pole_distance' = nan is not allowed. 'pole_distance' takes a finite "
                                          "number from 0.05"),
    ("[defaults]\niterations = -5\n", "'iterations' takes an integer from 1 up to 10000"),
    ("[defaults]\npole_distence = 1.0\n", "did you mean 'pole_distance'"),
])
def test_config_mistakes_are_usage_errors(tmp_path, text, message):
    source = save_character(tmp_path / "in" / "a.blend")
    config = tmp_path / "rig.toml"
    config.write_text(text)
    result = run(str(source), "--out", str(tmp_path / "out"), "--config", str(config), keep=[tmp_path / "in"])
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


# Point 5: Blender's warnings reach the user; nothing is left out without a word.

def _as_newer(path: Path) -> Path:
    """The file with its header claiming a newer Blender saved it (one minor version up)."""
    data = bytearray(path.read_bytes())
    major, minor = bpy.app.version[:2]
    if data.startswith(b"BLENDER17"):  # 5.0 onwards: "BLENDER17-01v0502"
        data[13:17] = f"{major:02d}{minor + 1:02d}".encode()
    else:  # "BLENDER-v402"
        data[9:12] = f"{major}{minor + 1:02d}".encode()
    path.write_bytes(bytes(data))
    return path


def test_a_file_from_a_newer_blender_is_refused_unless_allowed(tmp_path):
    source = _as_newer(_save(tmp_path / "in" / "a.blend", compress=False))
    newer = f"{bpy.app.version[0]}.{bpy.app.version[1] + 1}"
    result = run(str(source), "--out", str(tmp_path / "out"), keep=[tmp_path / "in"])
    assert result.returncode == 1
    assert f"was saved by Blender {newer}, newer than this Blender" in result.stdout and "--allow-newer" in \
        result.stdout
    assert not (tmp_path / "out").exists()
    result = run(str(source), "--out", str(tmp_path / "out"), "--allow-newer", "--report",
                 str(tmp_path / "report.json"), keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout
    assert "warning: a.blend: saved by Blender" in result.stdout
    assert "(--allow-newer)" in report_of(tmp_path / "report.json")["a.blend"]["warnings"][0]


def test_missing_libraries_are_warnings_in_the_terminal_and_the_report(tmp_path):
    library = tmp_path / "library.blend"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.data.objects.new("Prop", bpy.data.meshes.new("Prop"))
    bpy.data.objects["Prop"].use_fake_user = True
    bpy.ops.wm.save_as_mainfile(filepath=str(library), copy=True)

    def link() -> None:
        with bpy.data.libraries.load(str(library), link=True) as (source, target):
            target.objects = ["Prop"]
        bpy.context.scene.collection.objects.link(target.objects[0])

    source = save_character(tmp_path / "in" / "a.blend", extra=link)
    library.unlink()
    result = run(str(source), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout
    assert "warning: a.blend: " in result.stdout and "missing" in result.stdout
    warnings = report_of(tmp_path / "report.json")["a.blend"]["warnings"]
    assert any("libraries and 1 linked data-blocks are missing" in warning for warning in warnings)


def test_what_is_not_taken_is_always_said(tmp_path):
    inputs = tmp_path / "in"
    save_character(inputs / "UPPER.BLEND")
    os.mkfifo(inputs / "pipe.blend")
    (inputs / "gone.blend").symlink_to(tmp_path / "nowhere.blend")
    (inputs / "sub").mkdir()
    (inputs / "sub" / "loop").symlink_to(inputs)
    result = run(str(inputs), "--out", str(tmp_path / "out"), keep=[inputs / "UPPER.BLEND"])
    assert result.returncode == 1, result.stdout
    assert f"'{inputs / 'pipe.blend'}' is a FIFO, not a file" in result.stdout
    assert f"'{inputs / 'gone.blend'}' is a broken symbolic link" in result.stdout
    assert f"not searched again: '{inputs / 'sub' / 'loop'}' links back" in result.stdout
    assert f"rigged {inputs / 'UPPER.BLEND'}" in result.stdout
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["UPPER.BLEND"]


# Point 6: several characters in one file.

def test_every_armature_it_is_sure_of_is_rigged_and_reported(tmp_path):
    def more() -> None:
        make_armature(leg_bones("L"), name="Other", mode="OBJECT")
        make_armature([("root", (0, 0, 0), (0, 0.5, 0), None, False), ("lid", (0, 0, 0.5), (0, 0, 1), "root", False)],
                      name="Chest", mode="OBJECT")

    source = save_character(tmp_path / "in" / "three.blend", bones=both_legs(), extra=more)
    result = run(str(source), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout
    assert "Other: thigh.L > shin.L; Rig: thigh.L > shin.L, thigh.R > shin.R" in result.stdout
    armatures = {entry["name"]: entry for entry in report_of(tmp_path / "report.json")["three.blend"]["armatures"]}
    assert {name: entry["status"] for name, entry in armatures.items()} == {
        "Chest": "untouched", "Other": "rigged", "Rig": "rigged"}
    assert "no limbs it is sure of: left as it is" in armatures["Chest"]["notes"]
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "three.blend"), use_scripts=False)
    assert {obj.name: len(obj.ik_rigger.limbs) for obj in bpy.data.objects if obj.type == "ARMATURE"} == {
        "Chest": 0, "Other": 1, "Rig": 2}


# Point 8: speed, and the progress bar on a terminal.

def _body_and_hidden() -> None:
    """Two meshes beside the rig: one shown and selected, one disabled in viewports."""
    for name, hidden in (("Body", False), ("Hidden", True)):
        mesh = bpy.data.objects.new(name, bpy.data.meshes.new(name))
        bpy.context.scene.collection.objects.link(mesh)
        mesh.hide_viewport = hidden
        mesh.parent = bpy.data.objects["Rig"]
    bpy.data.objects["Body"].select_set(True)


def test_other_objects_come_out_as_they_were_shown(tmp_path):
    """Rigging puts the other objects' geometry to sleep (speed); the saved file shows them as before."""
    source = save_character(tmp_path / "in" / "a.blend", extra=_body_and_hidden)
    result = run(str(source), "--out", str(tmp_path / "out"), keep=[tmp_path / "in"])
    assert result.returncode == 0, result.stdout
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "a.blend"), use_scripts=False)
    shown = {obj.name: obj.hide_viewport for obj in bpy.data.objects if obj.name in ("Body", "Hidden", "Rig")}
    assert shown == {"Body": False, "Hidden": True, "Rig": False}
    assert bpy.data.objects["Body"].select_get()  # Blender deselects what it disables: selected again
    assert len(bpy.data.objects["Rig"].ik_rigger.limbs) == 2


def test_the_save_evaluates_only_the_selected_objects_it_gives_back(tmp_path):
    """Rigging a file puts its other objects to sleep; the save shows them again, and Blender
    evaluates before it writes. An object it selects again is evaluated with the scene it is
    selected in; one not selected is not evaluated at all (a character's skinned meshes are
    most of a file's evaluation), and the saved file shows both as they were."""
    from ik_rigger.batch import rig_file as files
    from ik_rigger.limb.config import Config

    def three_meshes() -> None:
        _body_and_hidden()
        cloth = bpy.data.objects.new("Cloth", bpy.data.meshes.new("Cloth"))
        bpy.context.scene.collection.objects.link(cloth)
        cloth.modifiers.new("Armature", "ARMATURE").object = bpy.data.objects["Rig"]
        # An importer's root: the armature's parent, evaluated with it even while asleep.
        root = bpy.data.objects.new("Root", None)
        bpy.context.scene.collection.objects.link(root)
        bpy.data.objects["Rig"].parent = root
        root.select_set(True)

    source = save_character(tmp_path / "a.blend", extra=three_meshes)
    evaluated: set[str] = set()

    @bpy.app.handlers.persistent
    def seen(_scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
        evaluated.update(instance.name for instance in depsgraph.objects)

    bpy.app.handlers.depsgraph_update_post.append(seen)
    try:
        result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "a.blend")), Config())
    finally:
        bpy.app.handlers.depsgraph_update_post.remove(seen)
    assert result.status == "rigged", result.error
    assert "Rig" in evaluated and "Body" in evaluated  # the update before the save saw them
    assert "Cloth" not in evaluated and "Hidden" not in evaluated
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "a.blend"), use_scripts=False)
    others = ("Body", "Cloth", "Hidden", "Root")
    assert {name: (bpy.data.objects[name].hide_viewport, bpy.data.objects[name].select_get()) for name in others} == {
        "Body": (False, True), "Cloth": (False, False), "Hidden": (True, False), "Root": (False, True)}


def test_objects_asleep_from_the_load_are_given_back_when_rigging_fails(tmp_path, monkeypatch):
    """The other objects sleep from the file's load through rigging, and are shown again even when
    rigging fails; nothing of it stays hooked into Blender."""
    from ik_rigger.batch import rig_file as files
    from ik_rigger.limb.config import Config

    source = save_character(tmp_path / "a.blend", extra=_body_and_hidden)
    handlers = list(bpy.app.handlers.version_update)
    while_rigging: dict[str, bool] = {}

    def broken(*args, **kwargs):
        while_rigging.update((obj.name, obj.hide_viewport) for obj in bpy.data.objects)
        raise KeyError("a bone that should be there")

    monkeypatch.setattr(files.api, "build_many", broken)
    result = files.rig_file(files.Job(str(source), str(tmp_path / "out" / "a.blend")), Config())
    assert result.status == "failed" and "KeyError" in result.error
    assert while_rigging == {"Body": True, "Hidden": True, "Rig": False}
    assert {obj.name: obj.hide_viewport for obj in bpy.data.objects} == {"Body": False, "Hidden": True, "Rig": False}
    assert bpy.data.objects["Body"].select_get()
    assert list(bpy.app.handlers.version_update) == handlers


def test_the_progress_bar_on_a_terminal(tmp_path):
    import pty

    for index in range(2):
        save_character(tmp_path / "in" / f"c{index}.blend")
    primary, secondary = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, str(ENTRY), str(tmp_path / "in"), "--out", str(tmp_path / "out")],
                                   stdout=subprocess.PIPE, stderr=secondary, text=True)
        os.close(secondary)
        stdout, _ = process.communicate(timeout=120)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(primary)
    assert process.returncode == 0, stdout
    text = shown.decode()
    # The files go largest first (a worker rigs them, even with one job): either may be the first.
    first, second = ("c0", "c1") if "1/2 c0.blend" in text else ("c1", "c0")
    assert f"\r[###############...............] 1/2 {first}.blend" in text
    assert f"\r[##############################] 2/2 {second}.blend" in text
    assert "[1/2]" not in stdout  # the per-file lines are for logs, not terminals


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_names_the_terminal_cannot_show_are_escaped_not_fatal(tmp_path, jobs):
    """A MikuMikuDance model, its file and bones named in Japanese, rigged on a Latin-1 terminal:
    before, printing the first file's line raised UnicodeEncodeError and ended the run with no
    report. The names are escaped on the terminal and kept whole in the report."""
    from test_detect import mmd

    bones = [(name, head, tail, parent, False) for name, parent, head, tail in mmd(suffixed=False)]
    sources = [save_character(tmp_path / "in" / name, bones, name="ミク") for name in ("ミク.blend", "b.blend")]
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--jobs", jobs,
                 "--report", str(tmp_path / "report.json"), keep=sources,
                 env={**os.environ, "PYTHONIOENCODING": "latin-1"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "\\u30df\\u30af.blend" in result.stdout and "Traceback" not in result.stderr
    report = report_of(tmp_path / "report.json")
    assert [report[name]["status"] for name in ("ミク.blend", "b.blend")] == ["rigged", "rigged"]
    assert limbs_in(tmp_path / "out" / "ミク.blend") == ["右ひざ", "右手捩", "左ひざ", "左手捩"]


def test_a_reader_that_goes_away_or_a_closed_output_never_stops_the_run(tmp_path):
    """Piped into ``head -1``, the run used to end in a broken pipe after the first file, with the
    other files not rigged and no report; started with its output closed, every file failed.
    Now the run goes on silently to the end and writes its report."""
    sources = [save_character(tmp_path / "in" / f"{name}.blend") for name in "abc"]
    command = [sys.executable, str(ENTRY), str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--report",
               str(tmp_path / "report.json")]
    before = checksums(sources)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    first = next(line for line in process.stdout if line.startswith("[1/"))  # past Blender's own start-up lines
    assert first.startswith("[1/3] rigged")
    process.stdout.close()  # as head does once it has its line
    assert process.wait(timeout=300) == 0
    assert [entry["status"] for entry in report_of(tmp_path / "report.json").values()] == ["rigged"] * 3
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["a.blend", "b.blend", "c.blend"]
    shutil.rmtree(tmp_path / "out")
    closed = run(*command[2:], keep=sources, prefix=["sh", "-c", 'exec "$@" >&- 2>&-', "sh"])
    assert closed.returncode == 0
    assert [entry["status"] for entry in report_of(tmp_path / "report.json").values()] == ["rigged"] * 3
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["a.blend", "b.blend", "c.blend"]
    assert checksums(sources) == before


def test_a_full_disk_fails_the_file_naming_its_free_space_and_leaves_nothing(tmp_path):
    """A disk that fills up: Blender's own error for it reads "No such file or directory". The
    file's failure names the disk's free space, nothing of it is left there (no temporary file),
    the files before it stay rigged, and the summary counts only the limbs of files rigged. The
    run gets a disk of 1 MB of its own (a mount of its own, in a namespace of its own)."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare to give the run a small disk of its own")
    small_file = save_character(tmp_path / "in" / "a.blend")
    motion = tmp_path / "in" / "b.bvh"
    shutil.copy(DATA / "mixamo_freebvh.bvh", motion)  # rigged, about 2 MB: more than the disk holds
    disk = tmp_path / "disk"
    disk.mkdir()
    script = ('mount -t tmpfs -o size=1m none "$0" || exit 77; "$@"; code=$?; '
              'ls -A "$0/out" > "$0.listing"; exit $code')
    result = run(str(tmp_path / "in"), "--out", str(disk / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[small_file, motion], prefix=["unshare", "-m", "sh", "-c", script, str(disk)])
    if result.returncode == 77:
        pytest.skip("this machine does not let the tests mount a small disk (it needs root)")
    assert result.returncode == 1, result.stdout + result.stderr
    report = report_of(tmp_path / "report.json")
    assert report["a.blend"]["status"] == "rigged"
    assert report["b.bvh"]["status"] == "failed"
    assert "MB free" in report["b.bvh"]["error"] and "its disk has room" in report["b.bvh"]["error"]
    assert (tmp_path / "disk.listing").read_text().split() == ["a.blend"]
    assert "1 rigged (2 limbs on 1 armature(s))" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_name_near_the_file_systems_limit_is_rigged(tmp_path):
    """A 252-byte file name fits the file system, but the temporary file beside its output (the
    name, the process and the mark) did not: "File name too long". The temporary name is cut."""
    source = save_character(tmp_path / "in" / ("é" * 122 + "_x.blend"))
    assert len(source.name.encode("utf-8")) == 252
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[source])
    assert result.returncode == 0, result.stdout + result.stderr
    assert [path.name for path in (tmp_path / "out").iterdir()] == [source.name]
    assert limbs_in(tmp_path / "out" / source.name) == ["shin.L", "shin.R"]
