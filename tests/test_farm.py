"""The batch on a Dask cluster and as an Open Job Description job (docs/farm.md).

Real separate processes: a scheduler and two worker processes on this machine, started by
scripts/farm.sh on free ports and stopped by their process ids at the end, and the batch
submitted to them by scripts/rig_batch.sh. Runs in the farm's environment (scripts/test.sh);
skipped where Dask is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import DATA
from test_batch import digest, limbs_in, save_character
from test_batch_safety import TEMP_MARK, _catch_temporary, _heavy, _worker_of, checksums, report_of, temporaries

distributed = pytest.importorskip("distributed")

from ik_rigger.batch import farm  # noqa: E402
from ik_rigger.batch.jobs import Job  # noqa: E402
from ik_rigger.core.config import Config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FARM = ROOT / "scripts" / "farm.sh"
RIG = ROOT / "scripts" / "rig_batch.sh"
WORKERS = 2


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> None:
    """Wait until something listens on ``port`` here."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on port {port}")


def _stop(processes: Iterable[subprocess.Popen]) -> None:
    """Stop each process by its id (SIGTERM, then SIGKILL if it lingers), and wait for it."""
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def _farm(logs: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """``start(role, *args)`` starts scripts/farm.sh ROLE ARGS (its output in ``logs``); every
    process it started is stopped by its id at the end, the last started first, whatever happened."""
    logs.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen] = []

    def start(role: str, *args: str) -> subprocess.Popen:
        with (logs / f"{role}-{len(started)}.log").open("w") as log:
            started.append(subprocess.Popen([str(FARM), role, *args], stdout=log, stderr=subprocess.STDOUT))
        return started[-1]

    try:
        yield start
    finally:
        _stop(reversed(started))


def _scheduler(start: Callable[..., subprocess.Popen]) -> str:
    """A scheduler of its own on a free port, listening: its address."""
    port = _free_port()
    start("scheduler", "--port", str(port))
    _listening(port)
    return f"tcp://127.0.0.1:{port}"


def _wait_for_workers(client: distributed.Client, count: int, process: subprocess.Popen) -> None:
    """Wait until ``count`` workers are connected; fail at once if ``process``, that starts them, ended."""
    deadline = time.monotonic() + 300
    while len(client.nthreads()) < count:
        assert process.poll() is None, f"the workers' process ended (exit code {process.returncode})"
        assert time.monotonic() < deadline, "the workers did not connect"
        time.sleep(0.5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Cluster:
    """A scheduler and its workers, each process known by its id."""

    def __init__(self, address: str, client: distributed.Client) -> None:
        self.address = address
        self.client = client
        self.worker_pids: set[int] = set()

    def ready(self) -> list[int]:
        """Both workers there (one killed by a test is back): their process ids."""
        self.client.wait_for_workers(WORKERS, timeout=180)
        deadline = time.monotonic() + 180
        while len(pids := self._pids()) < WORKERS and time.monotonic() < deadline:
            time.sleep(0.2)
        self.worker_pids.update(pids)
        return pids

    def _pids(self) -> list[int]:
        return [pid for pid in self.client.run(os.getpid).values() if _alive(pid)]

    def submit(self, *args: str, **popen) -> subprocess.Popen:
        return subprocess.Popen([str(RIG), *args, "--scheduler", self.address], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **popen)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    found: Cluster | None = None
    try:
        with _farm(tmp_path_factory.mktemp("farm_logs")) as start:
            address = _scheduler(start)
            start("worker", address, "--nworkers", str(WORKERS))
            found = Cluster(address, distributed.Client(address, timeout=120))
            found.ready()
            yield found
            found.client.close()
    finally:
        for pid in found.worker_pids if found is not None else ():
            deadline = time.monotonic() + 30
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a process whose parent died is reaped whenever its new parent gets to it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _characters(folder: Path, count: int = 3) -> list[Path]:
    """Characters the test makes, and imports from the test data."""
    made = [save_character(folder / f"c{index}.blend") for index in range(count)]
    copied = [Path(shutil.copy(DATA / name, folder / name)) for name in ("gltf_fox.glb", "mixamo_freebvh.bvh")]
    return sorted(made + copied)


def _limbs_of(report: Path) -> dict[str, tuple[str, list]]:
    return {name: (entry["status"], [armature["limbs"] for armature in entry["armatures"]])
            for name, entry in report_of(report).items()}


def _counts(stdout: str) -> str:
    """The summary's counts, without its time."""
    return stdout.split(" file(s) in ")[1].split(" s: ", 1)[1].splitlines()[0]


def test_a_folder_rigged_on_the_cluster_is_what_a_local_run_gives(tmp_path, cluster):
    cluster.ready()
    inputs = _characters(tmp_path / "in")
    before = checksums([tmp_path / "in"])
    process = cluster.submit(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--report",
                             str(tmp_path / "out" / "report.json"))
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stdout + stderr
    assert checksums([tmp_path / "in"]) == before
    local = subprocess.run([str(RIG), str(tmp_path / "in"), "--out", str(tmp_path / "local"), "--report",
                            str(tmp_path / "local.json")], capture_output=True, text=True, timeout=600)
    assert local.returncode == 0, local.stdout + local.stderr
    # The same files, progress, summary and report as the local run.
    outputs = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert outputs == sorted([path.name for path in (tmp_path / "local").iterdir()] + ["report.json"])
    assert _limbs_of(tmp_path / "out" / "report.json") == _limbs_of(tmp_path / "local.json")
    assert f"{len(inputs)} file(s)" in stdout and f"[{len(inputs)}/{len(inputs)}]" in stdout
    assert _counts(stdout) == _counts(local.stdout)
    for name in ("c0.blend", "c2.blend"):
        assert limbs_in(tmp_path / "out" / name) == ["shin.L", "shin.R"]
    assert len(limbs_in(tmp_path / "out" / "gltf_fox.blend")) == 4
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["scheduler"] == cluster.address and report["exit_code"] == 0
    # A second run finds the outputs there: refused, as a local run refuses them.
    again = cluster.submit(str(inputs[0]), "--out", str(tmp_path / "out"))
    stdout, stderr = again.communicate(timeout=600)
    assert again.returncode == 1 and f"the output '{tmp_path / 'out' / inputs[0].name}' exists" in stdout


def test_a_worker_killed_mid_file_fails_nothing(tmp_path, cluster):
    """SIGKILL on a worker while it saves a file: Dask runs that file again on a worker, and every
    file comes out rigged once, with nothing else left in the output folder."""
    pids = cluster.ready()
    inputs = _heavy(12, tmp_path / "in")
    before = checksums([tmp_path / "in"])
    out = tmp_path / "out"
    process = cluster.submit(str(tmp_path / "in"), "--out", str(out), "--report", str(tmp_path / "report.json"))
    victim = _worker_of(_catch_temporary(process, out, not_by=[process.pid]))
    assert victim in pids
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stdout + stderr
    files = report_of(tmp_path / "report.json")
    assert sorted(files) == [path.name for path in inputs]
    assert all(entry["status"] == "rigged" for entry in files.values()), files
    assert sorted(entry.name for entry in out.iterdir()) == [path.name for path in inputs]
    assert not temporaries(out)
    for path in inputs:
        assert limbs_in(out / path.name) == ["shin.L", "shin.R"]
    assert checksums([tmp_path / "in"]) == before
    assert not _alive(victim)


def test_an_interrupt_stops_the_files_in_flight_and_cancels_the_rest(tmp_path, cluster):
    """SIGINT on the submitter while files are being rigged: those stop (their workers see the run's
    stop mark), the queued ones are cancelled, and the report lists every input once; the output
    folder holds only files rigged whole, and nothing is made after the submitter exits."""
    cluster.ready()
    # Files that take a second or more each: when the first is done, its worker has begun another.
    inputs = _heavy(14, tmp_path / "in", subdivisions=1000)
    before = checksums([tmp_path / "in"])
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    process = cluster.submit(str(tmp_path / "in"), "--out", str(out), "--report", str(report))
    assert process.stdout is not None
    assert any(line.startswith("[1/14]") for line in process.stdout)  # under way (after Blender's own lines)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    listing = sorted(os.listdir(out))
    data = json.loads(report.read_text())
    assert data["interrupted_by"] == "SIGINT" and data["exit_code"] == 130
    files = report_of(report)
    assert sorted(files) == [path.name for path in inputs]
    statuses = {entry["status"] for entry in files.values()}
    assert {"interrupted", "not started"} <= statuses <= {"rigged", "interrupted", "not started"}, files
    rigged = sorted(name for name, entry in files.items() if entry["status"] == "rigged")
    assert listing == rigged
    for name in rigged:
        assert limbs_in(out / name) == ["shin.L", "shin.R"]
    assert not temporaries(out)
    assert checksums([tmp_path / "in"]) == before
    time.sleep(5)  # a worker that went on with a file would put it here now
    assert sorted(os.listdir(out)) == listing


def test_a_scheduler_out_of_reach_is_a_usage_error_before_anything_is_made(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    started = time.monotonic()
    result = subprocess.run([str(RIG), str(source), "--out", str(tmp_path / "out"), "--report",
                             str(tmp_path / "report.json"), "--scheduler", address],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"cannot reach the Dask scheduler at '{address}' within 30 s" in result.stderr
    assert time.monotonic() - started < 120
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["a.blend", "in"]
    both = subprocess.run([str(RIG), str(source), "--out", str(tmp_path / "out"), "--jobs", "2", "--scheduler",
                           address], capture_output=True, text=True, timeout=300)
    assert both.returncode == 2 and "--jobs and --scheduler exclude each other" in both.stderr


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
        process = subprocess.Popen([str(RIG), str(tmp_path / "in"), "--out", str(out), "--report",
                                    str(tmp_path / "report.json"), "--scheduler", address, "--worker-wait", "3"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            assert any(line.startswith("[1/12]") for line in process.stdout)
            _stop([worker])
            stdout, stderr = process.communicate(timeout=300)
        finally:
            _stop([process])
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
from ik_rigger.batch import farm
from ik_rigger.batch.jobs import Interrupted
from ik_rigger.batch.saving import interrupts_held

mark = Path(sys.argv[1])
farm.STOP_GRACE_SECONDS = 2
watch = farm._StopWatch(mark)
mark.touch()
try:
    time.sleep(60)
except Interrupted:
    print("stopped", flush=True)
watch.end()
watch = farm._StopWatch(mark)
with interrupts_held():  # as Blender in a call that does not come back to Python
    time.sleep(60)
print("finished", flush=True)
"""


def test_a_worker_stops_its_file_when_the_run_is_stopped_or_ends(tmp_path):
    """The run's stop mark stops the file a worker rigs (Interrupted in its main thread); a file
    that cannot be stopped ends with its worker process after the grace, never finished."""
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", STOP_WATCH, str(tmp_path / "stop")], capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.split() == ["stopped"], result.stdout + result.stderr
    assert result.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 40


def test_a_retried_task_gives_its_earlier_attempts_outcome(tmp_path):
    """An attempt that finds the output made by an earlier attempt of the same task (a worker that
    died before Dask had its result) gives that result; the same output made by anything else is
    "output exists", as locally."""
    source = save_character(tmp_path / "in" / "a.blend")
    job = Job(str(source), str(tmp_path / "out" / "a.blend"))
    first = farm.rig_staged(job, Config(), "run1", 0)
    assert first.status == "rigged", first.error
    made = (tmp_path / "out" / "a.blend").stat()
    again = farm.rig_staged(job, Config(), "run1", 0)
    assert again == first
    assert (tmp_path / "out" / "a.blend").stat().st_mtime_ns == made.st_mtime_ns  # not rigged twice
    other = farm.rig_staged(job, Config(), "run2", 0)
    assert other.status == "failed" and "exists" in other.error
    farm._clean("run1", [job])
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["a.blend"]


def test_a_file_a_worker_cannot_see_fails_naming_the_worker(tmp_path):
    job = Job(str(tmp_path / "elsewhere" / "a.blend"), str(tmp_path / "out" / "a.blend"))
    result = farm.rig_staged(job, Config(), "run", 0)
    assert result.status == "failed"
    assert f"is not there on worker {socket.gethostname()}" in result.error and "same paths" in result.error
    assert not (tmp_path / "out").exists()


OPENJD = ROOT / ".venvs" / "farm" / "bin" / "openjd"
TEMPLATE = ROOT / "farm" / "openjd" / "rig_batch.yaml"


def test_the_open_job_description_template_checks():
    if not OPENJD.exists():
        pytest.skip("openjd-cli is in the farm environment only")
    result = subprocess.run([str(OPENJD), "check", str(TEMPLATE)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_open_job_description_job_rigs_every_file_in_chunks(tmp_path):
    if not OPENJD.exists():
        pytest.skip("openjd-cli is in the farm environment only")
    inputs = _characters(tmp_path / "in", count=4)
    before = checksums([tmp_path / "in"])
    out = tmp_path / "out"
    result = subprocess.run([str(OPENJD), "run", str(TEMPLATE), "-p", f"InputFolder={tmp_path / 'in'}",
                             "-p", f"OutputFolder={out}", "-p", f"BatchCommand={RIG}", "-p", "Chunks=3"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert checksums([tmp_path / "in"]) == before
    names = sorted(path.with_suffix(".blend").name for path in inputs)
    assert sorted(path.name for path in out.iterdir()) == sorted([*names, "report.json"])
    files = report_of(out / "report.json")
    assert sorted(files) == sorted(path.name for path in inputs)  # each input once
    assert json.loads((out / "report.json").read_text())["parts"] == 3  # one report from each chunk
    assert all(entry["status"] == "rigged" for entry in files.values())
    assert limbs_in(out / "c1.blend") == ["shin.L", "shin.R"]
    assert TEMP_MARK not in " ".join(path.name for path in out.rglob("*"))
    assert digest(inputs[0]) == before[inputs[0]]
