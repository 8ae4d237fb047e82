"""--jobs asks for files rigged at once, each by a Blender in memory: as many as the memory holds, said.

``--jobs 64`` on a run of hundreds of files started 64 Blenders of about 300 MB each, whatever the
machine had: the system then kills processes (the run's, or anyone's) or swaps.
"""

from __future__ import annotations

import json
import os

from test_batch import limbs_in, save_character
from test_batch_safety import report_of, run

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
    inputs = [save_character(tmp_path / "in" / f"c{index}.blend") for index in range(3)]
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_LITTLE_MEMORY)
    report = tmp_path / "report.json"
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--jobs", "3", "--report", str(report),
                 keep=[tmp_path / "in"], env={**os.environ, "PYTHONPATH": str(hook)})
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
