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
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import bpy
import pytest
from helpers import DATA
from test_batch import digest, limbs_in, save_character
from test_batch_safety import TEMP_MARK, _heavy, _paused_worker, checksums, report_of, temporaries

distributed = pytest.importorskip("distributed")

from benchmarks.common import stop_processes  # noqa: E402
from ik_rigger.batch import farm, farm_tasks  # noqa: E402
from ik_rigger.batch.jobs import Job  # noqa: E402
from ik_rigger.limb.config import Config  # noqa: E402

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
    """Stop each process by its id, as the farm's benchmark does, and wait for it."""
    stop_processes(processes)


@contextmanager
def _farm(logs: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """``start(role, *args, **popen)`` starts scripts/farm.sh ROLE ARGS (its output in ``logs``); every
    process it started is stopped by its id at the end, the last started first, whatever happened."""
    logs.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen] = []

    def start(role: str, *args: str, **popen) -> subprocess.Popen:
        with (logs / f"{role}-{len(started)}.log").open("w") as log:
            started.append(subprocess.Popen([str(FARM), role, *args], stdout=log, stderr=subprocess.STDOUT, **popen))
        return started[-1]

    try:
        yield start
    finally:
        _stop(reversed(started))


def _scheduler(start: Callable[..., subprocess.Popen]) -> str:
    """A scheduler of its own, listening: its address."""
    return _scheduler_started(start)[0]


def _scheduler_started(start: Callable[..., subprocess.Popen]) -> tuple[str, subprocess.Popen]:
    """A scheduler of its own on a port the system gives it as it listens (one found free beforehand may be
    taken meanwhile by any process's connection), listening: its address here, and its process."""
    # In the temporary folder of the tests, removed at their end.
    told = Path(tempfile.mkdtemp(dir=os.environ.get("TMPDIR"))) / "scheduler.json"
    process = start("scheduler", "--port", "0", "--scheduler-file", str(told))
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, f"the scheduler ended (exit code {process.returncode})"
        try:
            port = int(json.loads(told.read_text())["address"].rsplit(":", 1)[1])
            break
        except (OSError, ValueError, KeyError):  # not written yet, or not whole
            assert time.monotonic() < deadline, "the scheduler did not say where it listens"
            time.sleep(0.2)
    _listening(port)
    return f"tcp://127.0.0.1:{port}", process


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


# Loaded by every Python the cluster starts (on PYTHONPATH): once a test has written the file
# FARM_PAUSE_ARMED names (holding the path of a file to tell), the first worker to have written a file
# (Blender's save done, the file whole in the save's own folder, not yet in place) takes it, writes its
# process id to the path it holds and waits there, where the run's stop is let through at once (the save
# checks that Blender wrote the file, outside any held block). A kill or an interrupt then lands on a file
# in progress, with files left after it, however fast or loaded the machine. Once the run's stop mark is
# there, it waits out the grace a worker gives a file it was told to stop (STOP_GRACE_SECONDS) and goes on
# with the file, as a worker the stop failed to reach would (300 s at most in all).
_PAUSE_ARMED = """
import os, time
if "FARM_PAUSE_ARMED" in os.environ:
    _armed = os.environ["FARM_PAUSE_ARMED"]
    _stat = os.stat

    def _pausing(path, *args, **kwargs):
        name = os.path.basename(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else ""
        if isinstance(name, str) and name.startswith("file.ik_rigger-tmp") and name.endswith(".blend"):
            taken = f"{_armed}.{os.getpid()}"
            try:
                os.rename(_armed, taken)
            except OSError:  # not armed, or another worker took it first
                return _stat(path, *args, **kwargs)
            with open(taken) as armed:
                told = armed.read()
            with open(told + ".part", "w") as part:
                part.write(str(os.getpid()))
            os.rename(told + ".part", told)
            deadline = time.monotonic() + 300
            folder = os.path.dirname(os.path.dirname(os.fspath(path)))  # beside the output
            while time.monotonic() < deadline:
                if any(name.startswith(".ik_rigger-farm-") and name.endswith("-stop") for name in os.listdir(folder)):
                    deadline = min(deadline, time.monotonic() + GRACE)
                time.sleep(0.05)
        return _stat(path, *args, **kwargs)

    os.stat = _pausing
""".replace("GRACE", str(farm_tasks.STOP_GRACE_SECONDS + 2))


class Cluster:
    """A scheduler and its workers, each process known by its id; ``armed``: the file that arms the
    workers' pause (see _PAUSE_ARMED, ``pause_next_written``)."""

    def __init__(self, address: str, client: distributed.Client, armed: Path) -> None:
        self.address = address
        self.client = client
        self.armed = armed
        self.worker_pids: set[int] = set()

    def pause_next_written(self, told: Path) -> None:
        """The next worker to have written a file waits there, and names itself in ``told``
        (read it with _paused_worker)."""
        part = self.armed.with_name(self.armed.name + ".part")
        part.write_text(str(told))
        part.rename(self.armed)

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
    hook = tmp_path_factory.mktemp("farm_hook")
    (hook / "sitecustomize.py").write_text(_PAUSE_ARMED)
    armed = hook / "armed"
    try:
        with _farm(tmp_path_factory.mktemp("farm_logs")) as start:
            address = _scheduler(start)
            start("worker", address, "--nworkers", str(WORKERS),
                  env={**os.environ, "PYTHONPATH": str(hook), "FARM_PAUSE_ARMED": str(armed)})
            found = Cluster(address, distributed.Client(address, timeout=120), armed)
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


def _characters(folder: Path, count: int = 3) -> list[Path]:
    """Characters the test makes, and imports from the test data."""
    made = [save_character(folder / f"c{index}.blend") for index in range(count)]
    copied = [Path(shutil.copy(DATA / name, folder / name)) for name in ("gltf_fox.glb", "mixamo_freebvh.bvh")]
    return sorted(made + copied)


def _limbs_of(report: Path) -> dict[str, tuple[str, list]]:
    return {name: (entry["status"], [armature["limbs"] for armature in entry["armatures"]])
            for name, entry in report_of(report).items()}


def _poses(path: Path) -> dict[tuple[int, str, str], tuple[list[float], float]]:
    """Every armature's evaluated pose matrices in ``path`` (opened without its scripts), at the scene's
    first frame and 10 frames on, each with its bone's length."""
    bpy.ops.wm.open_mainfile(filepath=str(path), use_scripts=False)
    scene = bpy.context.scene
    poses = {}
    for frame in (scene.frame_start, scene.frame_start + 10):
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for obj in bpy.data.objects:
            if obj.type == "ARMATURE":
                for bone in obj.evaluated_get(depsgraph).pose.bones:
                    poses[frame, obj.name, bone.name] = ([value for row in bone.matrix for value in row],
                                                         max(bone.length, 1e-3))
    return poses


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
    # The same rigs: every bone of every armature posed alike, at the first frame and at a later one.
    for name in outputs:
        if name != "report.json":
            farm_poses, local_poses = _poses(tmp_path / "out" / name), _poses(tmp_path / "local" / name)
            assert farm_poses.keys() == local_poses.keys() and farm_poses, name
            for key, (matrix, length) in farm_poses.items():
                assert max(abs(a - b) for a, b in zip(matrix, local_poses[key][0])) <= 1e-5 * length, (name, key)
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
    cluster.pause_next_written(tmp_path / "paused")  # its file written, not in place: where the kill lands
    process = cluster.submit(str(tmp_path / "in"), "--out", str(out), "--report", str(tmp_path / "report.json"))
    victim = _paused_worker(process, tmp_path / "paused")
    assert victim in pids
    assert temporaries(out)  # the save under way
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
    # Files that take a second or more each: when the first is done, its worker begins another.
    inputs = _heavy(14, tmp_path / "in", subdivisions=1000)
    before = checksums([tmp_path / "in"])
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    # A worker waits with its first file written: that file is in flight when the interrupt comes, and the
    # files queued behind are many (the other worker rigs one at a time meanwhile).
    cluster.pause_next_written(tmp_path / "paused")
    process = cluster.submit(str(tmp_path / "in"), "--out", str(out), "--report", str(report))
    _paused_worker(process, tmp_path / "paused")
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


def test_a_retried_task_gives_its_earlier_attempts_outcome(tmp_path):
    """An attempt that finds the output made by an earlier attempt of the same task (a worker that
    died before Dask had its result) gives that result; the same output made by anything else is
    "output exists", as locally."""
    source = save_character(tmp_path / "in" / "a.blend")
    job = Job(str(source), str(tmp_path / "out" / "a.blend"))
    first = farm_tasks.rig_staged(job, Config(), "run1", 0)
    assert first.status == "rigged", first.error
    made = (tmp_path / "out" / "a.blend").stat()
    again = farm_tasks.rig_staged(job, Config(), "run1", 0)
    assert again == first
    assert (tmp_path / "out" / "a.blend").stat().st_mtime_ns == made.st_mtime_ns  # not rigged twice
    other = farm_tasks.rig_staged(job, Config(), "run2", 0)
    assert other.status == "failed" and "exists" in other.error
    farm._clean("run1", [job])
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["a.blend"]


def test_a_file_a_worker_cannot_see_fails_naming_the_worker(tmp_path):
    job = Job(str(tmp_path / "elsewhere" / "a.blend"), str(tmp_path / "out" / "a.blend"))
    result = farm_tasks.rig_staged(job, Config(), "run", 0)
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


def _wait_until(condition: Callable[[], bool], what: str, process: subprocess.Popen | None = None,
                seconds: float = 600) -> None:
    """Wait for ``condition`` (generously: the machine is shared); fail naming ``what`` if it does not come,
    or at once if ``process`` ended meanwhile."""
    deadline = time.monotonic() + seconds
    while not condition():
        if process is not None and process.poll() is not None:
            stdout, stderr = process.communicate()
            raise AssertionError(f"the run ended (exit {process.returncode}) before {what}:\n{stdout}{stderr}")
        assert time.monotonic() < deadline, f"no {what} within {seconds:g} s"
        time.sleep(0.2)


def _run_keys(keys: Iterable) -> list[str]:
    return [str(key) for key in keys if str(key).startswith(farm_tasks.STAGE)]


def _leftovers(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir() if farm_tasks.STAGE in entry.name)


def test_a_worker_that_hangs_holds_one_file_while_the_others_take_the_rest(tmp_path, cluster):
    """A worker stopped (SIGSTOP) mid-file: the scheduler gave it that file alone, and the other worker
    rigs every other file meanwhile; the run ends once the hung worker goes on."""
    cluster.ready()
    pids = cluster.client.run(os.getpid)
    inputs = _heavy(8, tmp_path / "in", subdivisions=1000)  # long enough a file to be seen taken
    out = tmp_path / "out"
    process = cluster.submit(str(tmp_path / "in"), "--out", str(out), "--report", str(tmp_path / "report.json"))
    hung: list[str] = []
    try:
        def one_is_busy() -> bool:
            busy = [worker for worker, keys in cluster.client.processing().items() if _run_keys(keys)]
            if busy:
                os.kill(pids[busy[0]], signal.SIGSTOP)
                hung.append(busy[0])
            return bool(busy)

        _wait_until(one_is_busy, "file taken by a worker", process)

        def the_rest_rigged() -> bool:
            held = _run_keys(cluster.client.processing().get(hung[0], ()))
            assert len(held) <= 1, f"the hung worker holds {len(held)} files: {held}"
            rigged = [entry for entry in out.iterdir() if not entry.name.startswith(".")] if out.exists() else []
            return len(rigged) + len(held) == len(inputs)

        _wait_until(the_rest_rigged, "file but the hung worker's rigged", process)
    finally:
        for worker in hung:
            os.kill(pids[worker], signal.SIGCONT)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stdout + stderr
    assert all(entry["status"] == "rigged" for entry in report_of(tmp_path / "report.json").values())
    assert sorted(entry.name for entry in out.iterdir()) == [path.name for path in inputs]


def test_a_killed_submitters_leftovers_are_removed_by_the_next_run_there(tmp_path, cluster):
    """A submitter killed (SIGKILL) mid-run leaves its staged files, records and marks; the next run
    in that folder removes them (the run is dead), and leaves the output folder clean."""
    cluster.ready()
    _heavy(6, tmp_path / "in")
    out = tmp_path / "out"
    process = cluster.submit(str(tmp_path / "in"), "--out", str(out))
    try:
        _wait_until(lambda: out.exists() and any(name.endswith(".json") for name in _leftovers(out)),
                    "file rigged and recorded", process)
    finally:
        process.kill()
        process.communicate()
    _wait_until(lambda: not any(_run_keys(keys) for keys in cluster.client.processing().values()),
                "end of the killed run's tasks")
    # A worker still rigging a file of it (the scheduler forgot the task) answers once that file is done:
    # its event loop runs the file.
    cluster.client.run(os.getpid)
    left = _leftovers(out)
    assert any(name.endswith(".blend") for name in left), left  # a staged file, about a rigged file's size
    more = save_character(tmp_path / "more" / "z.blend")
    again = cluster.submit(str(more), "--out", str(out))
    stdout, stderr = again.communicate(timeout=600)
    assert again.returncode == 0, stdout + stderr
    assert _leftovers(out) == [] and not temporaries(out)
    for name in left:
        assert f"note: removed '{out / name}', left by a farm run that was killed" in stdout
    assert limbs_in(out / "z.blend") == ["shin.L", "shin.R"]


def test_relative_paths_are_the_submitters_whatever_folder_a_worker_runs_in(tmp_path, cluster):
    cluster.ready()
    save_character(tmp_path / "in" / "a.blend")
    process = cluster.submit("in", "--out", "out", "--report", "report.json", cwd=tmp_path)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stdout + stderr
    assert limbs_in(tmp_path / "out" / "a.blend") == ["shin.L", "shin.R"]
    assert report_of(tmp_path / "report.json")["a.blend"]["status"] == "rigged"
    # A path no worker sees says where a relative one was taken from.
    missing = farm_tasks.rig_staged(Job(str(tmp_path / "gone.blend"), str(tmp_path / "out" / "gone.blend")),
                                    Config(), "run", 0)
    assert "a relative path was made whole in the submitter's working folder" in missing.error


def test_the_docs_open_job_description_commands_run_as_written():
    if not OPENJD.exists():
        pytest.skip("openjd-cli is in the farm environment only")
    commands = [line for line in (ROOT / "docs" / "farm.md").read_text().splitlines() if "openjd check" in line]
    assert commands
    for command in commands:
        result = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, command + result.stdout + result.stderr
