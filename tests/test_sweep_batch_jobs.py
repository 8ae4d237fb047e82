"""The run's worker Blenders: as many at once as the memory holds, said (``--jobs 64`` on hundreds of
files started 64 Blenders of about 300 MB each, whatever the machine had: the system then kills
processes, the run's or anyone's, or swaps); one that dies before it took the file sent to it leaves that
file to the next, and one stopped from outside by SIGTERM is said to be.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from test_batch import ENTRY, limbs_in
from test_batch_safety import _heavy, _paused_worker, _paused_written, hooked_run, report_of, temporaries

from ik_rigger.batch.memory import processes_that_fit

# Loaded by every Python the run starts (on PYTHONPATH): the system says little memory is available.
_LITTLE_MEMORY = """
import builtins, io
_open = builtins.open

def _little(file, *args, **kwargs):
    if file == "/proc/meminfo":
        return io.StringIO("MemTotal: 1000000 kB\\nMemAvailable: 1000 kB\\n")
    return _open(file, *args, **kwargs)

builtins.open = _little
"""


def test_more_jobs_than_the_memory_holds_rig_as_many_at_once_as_it_holds_and_say_so(tmp_path):
    report = tmp_path / "report.json"
    inputs, result = hooked_run(tmp_path, _LITTLE_MEMORY, 3, "--jobs", "3", "--report", str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    whole = json.loads(report.read_text())
    assert whole["jobs"] == 1 and whole["workers_started"] == 1, whole
    assert any(warning.startswith("--jobs 3: 1 Blender(s) fit in the memory available (0.0 GB")
               for warning in whole["warnings"]), whole["warnings"]
    assert "warning: --jobs 3: 1 Blender(s) fit" in result.stdout, result.stdout
    assert all(entry["status"] == "rigged" for entry in report_of(report).values())
    assert limbs_in(tmp_path / "out" / inputs[2].name) == ["shin.L", "shin.R"]


def test_the_processes_that_fit(tmp_path):
    """One process per file up to --jobs, as many as the memory holds: a Blender (300 MB here) and three
    times the largest input (100 MB) each, this process among them."""
    sizes = (10, 100 * 2**20, 5, 5, 5, 5)
    names = []
    for index, size in enumerate(sizes):
        (tmp_path / f"c{index}.blend").write_bytes(bytes(size))
        names.append(str(tmp_path / f"c{index}.blend"))
    names.append(str(tmp_path / "gone.blend"))  # fails as it is, and is one of the files
    mb = 2**20
    count, warning = processes_that_fit(8, names, 1800 * mb, 300 * mb)
    assert count == 4 and warning == ("--jobs 8: 4 Blender(s) fit in the memory available (1.8 GB, about 600 MB "
                                      "each with the largest file open): rigging 4 file(s) at once")
    assert processes_that_fit(3, names, 1800 * mb, 300 * mb) == (3, "")  # what is asked fits
    assert processes_that_fit(100, names, 100 * 2**30, 300 * mb) == (7, "")  # one per file, no more
    assert processes_that_fit(8, names, None, 300 * mb) == (7, "")  # where the system does not say
    assert processes_that_fit(8, names, 0, 300 * mb)[0] == 1  # this process rigs alone
    assert processes_that_fit(1, names, 0, 300 * mb) == (1, "")


# Loaded by every Python the run starts (on PYTHONPATH): a worker dies (SIGKILL) as it reads its first
# file's line, before it could begin that file, once in the run (the file KILL_ON_TAKE names tells).
_DIES_ON_TAKING = """
import os, signal, sys
if "IK_RIGGER_BATCH_ANSWERS" in os.environ:
    class _Dies:
        def __init__(self, stream):
            self.stream = stream

        def __iter__(self):
            for line in self.stream:
                try:
                    told = os.open(os.environ["KILL_ON_TAKE"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    yield line
                    continue
                os.close(told)
                os.kill(os.getpid(), signal.SIGKILL)

        def __getattr__(self, name):
            return getattr(self.stream, name)

    sys.stdin = _Dies(sys.stdin)
"""


def test_a_worker_that_dies_before_it_took_its_file_leaves_it_to_the_next(tmp_path):
    """The file was failed, 'worker died (signal 9) while rigging it', though no worker had begun it."""
    report = tmp_path / "report.json"
    inputs, result = hooked_run(tmp_path, _DIES_ON_TAKING, 3, "--jobs", "1", "--report", str(report),
                                KILL_ON_TAKE=str(tmp_path / "killed"))
    assert (tmp_path / "killed").exists()  # a worker did die so
    assert result.returncode == 0, result.stdout + result.stderr
    whole = json.loads(report.read_text())
    assert whole["workers_started"] == 2, whole
    assert all(entry["status"] == "rigged" for entry in report_of(report).values()), whole
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [path.name for path in inputs]
    assert limbs_in(tmp_path / "out" / inputs[0].name) == ["shin.L", "shin.R"]


def test_a_worker_stopped_from_outside_by_sigterm_is_said_to_be(tmp_path):
    """Its own handler ends it with exit code 143: the file failed as 'worker died (exit code 143)'."""
    inputs = _heavy(4, tmp_path / "in")
    out, report = tmp_path / "out", tmp_path / "report.json"
    # The worker waits with its first file written, where a signal stops it at once: a save seen in
    # progress could be in place by the time the signal came, the file rigged.
    environment, told = _paused_written(tmp_path, dict(os.environ))
    process = subprocess.Popen([sys.executable, str(ENTRY), str(tmp_path / "in"), "--out", str(out), "--jobs", "1",
                                "--report", str(report)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment)
    os.kill(_paused_worker(process, told), signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stdout + stderr
    files = report_of(report)
    stopped = [name for name, entry in files.items() if entry["status"] != "rigged"]
    assert len(stopped) == 1 and files[stopped[0]]["error"] == "worker died (signal 15) while rigging it", files
    rigged = sorted(path.name for path in inputs if path.name not in stopped)
    assert sorted(path.name for path in out.iterdir()) == rigged
    assert not temporaries(tmp_path)
