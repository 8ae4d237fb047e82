"""The farm's edges: a scheduler without workers, workers that all leave, workers in a Blender
binary, and a worker told to stop the file it rigs (docs/farm.md).

Real separate processes, as in tests/test_farm.py: schedulers and workers started by
scripts/farm.sh on free ports, each stopped by its process id at the end, and the batch
submitted by scripts/rig_batch.sh. Runs in the farm's environment (scripts/test.sh); skipped
where Dask is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_batch import limbs_in, save_character
from test_batch_safety import _heavy, report_of, temporaries

distributed = pytest.importorskip("distributed")

from test_farm import (  # noqa: E402
    FARM,
    RIG,
    ROOT,
    _alive,
    _characters,
    _farm,
    _scheduler,
    _scheduler_started,
    _stop,
    _wait_for_workers,
)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a process whose parent died is reaped whenever its new parent gets to it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _stop_after_the_first_file(arguments: list[str], victim: subprocess.Popen,
                               interrupt: bool = False) -> tuple[subprocess.Popen, str, str]:
    """Run the batch with ``arguments``, stop ``victim`` (a worker, the scheduler) once the first of
    12 files is told, and let the run end (``interrupt``: Ctrl-C on it right away, before it can
    notice): the run's process and what it printed."""
    process = subprocess.Popen([str(RIG), *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert any(line.startswith("[1/12]") for line in process.stdout)
        if interrupt:
            victim.terminate()
            process.send_signal(signal.SIGINT)
        _stop([victim])
        stdout, stderr = process.communicate(timeout=300)
    finally:
        _stop([process])
    return process, stdout, stderr


def test_a_scheduler_without_workers_is_a_usage_error_after_the_wait(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    with _farm(tmp_path / "logs") as start:
        address = _scheduler(start)
        started = time.monotonic()
        result = subprocess.run([str(RIG), str(source), "--out", str(tmp_path / "out"), "--report",
                                 str(tmp_path / "report.json"), "--scheduler", address, "--worker-wait", "3"],
                                capture_output=True, text=True, timeout=180)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"waiting up to 3 s for a worker to join the Dask scheduler at '{address}'" in result.stderr
    assert (f"no worker joined the Dask scheduler at '{address}' within 3 s: start one with scripts/farm.sh "
            f"worker {address}") in result.stderr
    assert time.monotonic() - started < 90
    assert sorted(path.name for path in (tmp_path / "in").rglob("*")) == ["a.blend"]
    assert not (tmp_path / "out").exists() and not (tmp_path / "report.json").exists()
    alone = subprocess.run([str(RIG), str(source), "--out", str(tmp_path / "out"), "--worker-wait", "3"],
                           capture_output=True, text=True, timeout=300)
    assert alone.returncode == 2 and "--worker-wait is for --scheduler" in alone.stderr


def test_a_run_whose_workers_all_leave_fails_the_files_left_after_the_wait(tmp_path):
    """The only worker stops mid-run: after --worker-wait seconds with no worker, the files left fail
    with a line that says why and what to do, rather than wait for ever."""
    inputs = _heavy(12, tmp_path / "in")
    out = tmp_path / "out"
    with _farm(tmp_path / "logs") as start:
        address = _scheduler(start)
        worker = start("worker", address, "--nworkers", "1")
        with distributed.Client(address, timeout=120) as client:
            _wait_for_workers(client, 1, worker)
        process, stdout, stderr = _stop_after_the_first_file(
            [str(tmp_path / "in"), "--out", str(out), "--report", str(tmp_path / "report.json"), "--scheduler",
             address, "--worker-wait", "3"], worker)
    assert process.returncode == 1, stdout + stderr
    line = (f"no worker was connected to the Dask scheduler at '{address}' for 3 s: start one with scripts/farm.sh "
            f"worker {address}")
    assert line in stderr
    files = report_of(tmp_path / "report.json")
    assert sorted(files) == [path.name for path in inputs]
    failed = [entry for entry in files.values() if entry["status"] == "failed"]
    assert failed and all(entry["error"] == line for entry in failed), files
    rigged = sorted(name for name, entry in files.items() if entry["status"] == "rigged")
    assert len(rigged) + len(failed) == len(inputs)
    assert sorted(os.listdir(out)) == rigged
    for name in rigged:
        assert limbs_in(out / name) == ["shin.L", "shin.R"]
    assert not temporaries(out)


# Stands in for a Blender binary's command line (see the test below); the Python it runs is given.
BLENDER_STAND_IN = """#!/usr/bin/env bash
python="$1"
shift
seen=""
script=""
while [ "$#" -gt 0 ]; do
    case "$1" in
        --background|--factory-startup) seen="$seen $1"; shift ;;
        --python-exit-code) seen="$seen $1 $2"; shift 2 ;;
        --python) script="$2"; shift 2 ;;
        --python-expr) exec "$python" -c "$2" ;;
        --) shift; break ;;
        *) echo "blender stand-in: '$1' is no option of this command line" >&2; exit 64 ;;
    esac
done
if [ "$seen" != " --background --factory-startup --python-exit-code 1" ] || [ -z "$script" ]; then
    echo "blender stand-in: not run in the background at factory settings with --python:$seen" >&2
    exit 64
fi
exec "$python" "$script" -- "$@"
"""


def _blender_stand_in(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "blender-stand-in"
    script.write_text(BLENDER_STAND_IN)
    blender = folder / "blender"
    blender.write_text(f'#!/usr/bin/env bash\nexec "{script}" "{sys.executable}" "$@"\n')
    for path in (script, blender):
        path.chmod(0o755)
    return blender


def test_workers_in_a_blender_binary_rig_and_stop_with_their_supervisor(tmp_path):
    """scripts/farm.sh worker --blender BLENDER: each Dask worker process is a Blender binary running
    scripts/farm_worker.py, with the farm's Dask installed for that Blender's Python. No Blender
    binary is installed here: the ``blender`` given is a stand-in this test writes, which takes
    Blender's command line (--background --factory-startup --python-exit-code 1 --python SCRIPT
    -- ARGS, and --python-expr) and runs the project's real Blender, the bpy module in the farm's
    Python, on SCRIPT with ARGS after '--' in sys.argv, in its own process: only the launcher is
    stood in. Stopping the worker by its process id stops its Blenders."""
    blender = _blender_stand_in(tmp_path / "bin")
    inputs = _characters(tmp_path / "in", count=2)
    out = tmp_path / "out"
    site = ROOT / ".venvs" / f"farm-blender-{sys.version_info.major}.{sys.version_info.minor}"
    with _farm(tmp_path / "logs") as start:
        address = _scheduler(start)
        supervisor = start("worker", address, "--nworkers", "2", "--blender", str(blender))
        with distributed.Client(address, timeout=120) as client:
            _wait_for_workers(client, 2, supervisor)
            # A lambda: Dask sends it whole (a function of this module would be imported there).
            workers = list(client.run(lambda: (os.getpid(), os.getppid(), sys.argv, distributed.__file__)).values())
        assert len(workers) == 2
        for _pid, parent, argv, module in workers:
            assert parent == supervisor.pid
            assert argv[-2:] == ["--", address]
            assert Path(module).is_relative_to(site)  # Dask from the folder set up for this Python
        result = subprocess.run([str(RIG), str(tmp_path / "in"), "--out", str(out), "--report",
                                 str(tmp_path / "report.json"), "--scheduler", address],
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        assert sorted(os.listdir(out)) == sorted(path.with_suffix(".blend").name for path in inputs)
        assert limbs_in(out / "c1.blend") == ["shin.L", "shin.R"]
        assert len(limbs_in(out / "gltf_fox.blend")) == 4
        supervisor.terminate()
        supervisor.wait(timeout=60)
        assert not [pid for pid, *_ in workers if _alive(pid)]
        # Killed outright, it takes its Blender with it all the same.
        killed = start("worker", address, "--nworkers", "1", "--blender", str(blender))
        with distributed.Client(address, timeout=120) as client:
            _wait_for_workers(client, 1, killed)
            orphans = list(client.run(os.getpid).values())
        killed.kill()
        killed.wait()
        deadline = time.monotonic() + 30
        while [pid for pid in orphans if _running(pid)] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [pid for pid in orphans if _running(pid)]


def test_a_blender_that_is_no_blender_is_a_usage_error(tmp_path):
    result = subprocess.run([str(FARM), "worker", "tcp://127.0.0.1:8786", "--blender", str(tmp_path / "blender")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"farm: '{tmp_path / 'blender'}' did not run as Blender" in result.stderr
    assert "give --blender a Blender binary" in result.stderr


STOP_WATCH = """
import sys, time
from pathlib import Path
from ik_rigger.batch import farm_tasks
from ik_rigger.batch.jobs import Interrupted
from ik_rigger.batch.saving import interrupts_held

mark = Path(sys.argv[1])
farm_tasks.STOP_GRACE_SECONDS = 2
watch = farm_tasks._StopWatch(mark)
mark.touch()
try:
    time.sleep(60)
except Interrupted:
    print("stopped", flush=True)
watch.end()
watch = farm_tasks._StopWatch(mark)
print("held", time.monotonic(), flush=True)
with interrupts_held():  # as Blender in a call that does not come back to Python
    time.sleep(60)
print("finished", flush=True)
"""


def test_a_worker_stops_its_file_when_the_run_is_stopped_or_ends(tmp_path):
    """The run's stop mark stops the file a worker rigs (Interrupted in its main thread); a file
    that cannot be stopped ends with its worker process after the grace, never finished."""
    result = subprocess.run([sys.executable, "-c", STOP_WATCH, str(tmp_path / "stop")], capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    ended = time.monotonic()
    told = result.stdout.split()
    assert told[:2] == ["stopped", "held"] and len(told) == 3, result.stdout + result.stderr
    assert result.returncode == -signal.SIGKILL
    # Killed after the grace, counted from the held call (the same clock for every process here; the
    # Blender's start before it takes what the machine gives it).
    assert ended - float(told[2]) < 30



def _losing_the_scheduler(tmp_path: Path, interrupt: bool = False) -> tuple[list[Path], Path, str, tuple]:
    """12 characters rigged through a scheduler of their own and one worker, the scheduler stopped
    after the first file (``interrupt``: Ctrl-C on the run right away): the inputs, the output
    folder, the scheduler's address and what ``_stop_after_the_first_file`` gives."""
    inputs = _heavy(12, tmp_path / "in", subdivisions=700)
    out = tmp_path / "out"
    with _farm(tmp_path / "logs") as start:
        address, scheduler = _scheduler_started(start)
        worker = start("worker", address, "--nworkers", "1")
        with distributed.Client(address, timeout=120) as client:
            _wait_for_workers(client, 1, worker)
        ran = _stop_after_the_first_file(
            [str(tmp_path / "in"), "--out", str(out), "--report", str(tmp_path / "report.json"), "--scheduler",
             address], scheduler, interrupt)
    return inputs, out, address, ran


def test_a_scheduler_that_goes_away_mid_run_fails_the_files_left_and_writes_the_report(tmp_path):
    """The scheduler is stopped mid-run: the files it held fail with a line naming it, those rigged
    by then are reported rigged, and the run ends with its report, without a traceback."""
    inputs, out, address, (process, stdout, stderr) = _losing_the_scheduler(tmp_path)
    assert process.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr
    files = report_of(tmp_path / "report.json")
    assert sorted(files) == [path.name for path in inputs]
    failed = [entry for entry in files.values() if entry["status"] == "failed"]
    assert failed and all(entry["error"].startswith(f"the Dask scheduler at '{address}' ") for entry in failed), files
    rigged = sorted(name for name, entry in files.items() if entry["status"] == "rigged")
    assert len(rigged) + len(failed) == len(inputs)
    time.sleep(5)  # the worker lost its scheduler: it begins no file the run sent it and puts none in place
    assert sorted(os.listdir(out)) == rigged
    assert not temporaries(out)


def test_an_interrupt_after_the_scheduler_went_away_writes_the_report(tmp_path):
    """Ctrl-C on a run whose scheduler has just gone away: the run stops without a traceback, with
    its report (each input once: rigged, or stopped by the interrupt), and what it calls rigged is
    whole. (A file a worker still held may be finished once the run has ended: docs/farm.md.)"""
    inputs, out, address, (process, stdout, stderr) = _losing_the_scheduler(tmp_path, interrupt=True)
    assert process.returncode == 128 + signal.SIGINT, stdout + stderr
    assert "Traceback" not in stderr
    files = report_of(tmp_path / "report.json")
    assert sorted(files) == [path.name for path in inputs]
    assert {entry["status"] for entry in files.values()} <= {"rigged", "interrupted", "not started"}, files
    rigged = [name for name, entry in files.items() if entry["status"] == "rigged"]
    for name in rigged:
        assert limbs_in(out / name) == ["shin.L", "shin.R"]


def _release() -> str:
    return re.search(r'^version = "([^"]+)"', (ROOT / "blender_manifest.toml").read_text(), re.MULTILINE)[1]


def _other_release(tmp_path: Path) -> Path:
    """A copy of the project whose manifest says release 0.0.1, with the same environments."""
    other = tmp_path / "other"
    shutil.copytree(ROOT, other, symlinks=True, ignore=shutil.ignore_patterns(
        ".venvs", ".git", "tests", "benchmarks", "docs", "out", "dist", "__pycache__", ".*_cache"))
    (other / ".venvs").symlink_to((ROOT / ".venvs").resolve())
    manifest = other / "blender_manifest.toml"
    manifest.write_text(manifest.read_text().replace(f'version = "{_release()}"', 'version = "0.0.1"'))
    return other


def _worker_of_release(other: Path, address: str, log: Path) -> subprocess.Popen:
    with log.open("w") as stream:
        return subprocess.Popen([str(other / "scripts" / "farm.sh"), "worker", address, "--nworkers", "1"],
                                stdout=stream, stderr=subprocess.STDOUT)


def test_a_worker_of_another_release_is_refused_naming_both_before_any_file(tmp_path):
    """A worker started from a copy of the project whose release differs: the submitter asks every
    worker its release before it sends a file, and refuses (a usage error) naming both."""
    other = _other_release(tmp_path)
    source = save_character(tmp_path / "in" / "a.blend")
    with _farm(tmp_path / "logs") as start:
        address = _scheduler(start)
        worker = _worker_of_release(other, address, tmp_path / "logs" / "other-worker.log")
        try:
            client = distributed.Client(address, timeout=120)
            try:
                _wait_for_workers(client, 1, worker)
            finally:
                client.close()
            result = subprocess.run([str(RIG), str(source), "--out", str(tmp_path / "out"), "--report",
                                     str(tmp_path / "report.json"), "--scheduler", address],
                                    capture_output=True, text=True, timeout=300)
        finally:
            _stop([worker])
    assert result.returncode == 2, result.stdout + result.stderr
    assert "runs IK Rigger 0.0.1" in result.stderr, result.stderr
    assert f"this submitter runs IK Rigger {_release()}" in result.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "report.json").exists()


def test_a_worker_of_another_release_that_joins_mid_run_is_sent_no_file(tmp_path):
    """Such a worker joining once the run is under way (the run's own worker held still meanwhile, so
    that the run cannot end first): asked before any file is sent to it, it gets none; the files not
    sent yet fail naming both releases, those sent are rigged."""
    other = _other_release(tmp_path)
    inputs = _heavy(12, tmp_path / "in")
    out = tmp_path / "out"
    with _farm(tmp_path / "logs") as start:
        address = _scheduler(start)
        ours = start("worker", address, "--nworkers", "1")
        client = distributed.Client(address, timeout=120)
        _wait_for_workers(client, 1, ours)
        (pid,) = client.run(os.getpid).values()
        process = subprocess.Popen([str(RIG), str(tmp_path / "in"), "--out", str(out), "--report",
                                    str(tmp_path / "report.json"), "--scheduler", address],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        worker = None
        try:
            assert process.stdout is not None
            assert any(line.startswith("[1/12]") for line in process.stdout)
            os.kill(pid, signal.SIGSTOP)
            try:
                worker = _worker_of_release(other, address, tmp_path / "logs" / "other-worker.log")
                _wait_for_workers(client, 2, worker)  # before the next file is sent: it asks it first
            finally:
                os.kill(pid, signal.SIGCONT)
            stdout, stderr = process.communicate(timeout=600)
        finally:
            client.close()
            _stop([process, *([worker] if worker else [])])
    assert process.returncode == 1, stdout + stderr
    told = f"runs IK Rigger 0.0.1; this submitter runs IK Rigger {_release()}"
    assert told in stderr
    files = report_of(tmp_path / "report.json")
    assert sorted(files) == [path.name for path in inputs]
    refused = [name for name, entry in files.items() if entry["status"] == "failed"]
    assert refused and all(told in files[name]["error"] for name in refused)
    rigged = sorted(name for name, entry in files.items() if entry["status"] == "rigged")
    assert len(rigged) + len(refused) == len(inputs)
    assert sorted(entry.name for entry in out.iterdir()) == rigged
    for name in rigged:
        assert limbs_in(out / name) == ["shin.L", "shin.R"]
