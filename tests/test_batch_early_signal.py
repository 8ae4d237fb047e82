"""The batch command stopped by Ctrl-C or SIGTERM while it starts: before Blender loads, in Blender's
startup scripts, while the add-on and the command load.

A signal then stops the run as one during the run does (exit 130 or 143, no traceback, the report
saying what was done), and before its first file: nothing opened, nothing written but the report.
Every run is a separate process, as a user starts it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_batch import ENTRY, save_character
from test_batch_safety import _processes_naming, _system_temp, checksums, report_of

from ik_rigger.batch.jobs import FileResult

# What a report says, as a run that an interrupt stopped among its files writes it.
REPORT_KEYS = {"files", "warnings", "notes", "summary", "seconds", "jobs", "workers_started", "exit_code",
               "interrupted_by"}

# Loaded by every Python the batch starts (a sitecustomize on PYTHONPATH): in the run's own process (a
# worker is left alone), the signal SIGNAL_AT names is sent to that process the moment the module it names
# is first looked for, and the file SIGNAL_SENT is made to say so. The moment is the same on any machine.
_SIGNAL_AT_IMPORT = """
import os, signal, sys
if "IK_RIGGER_BATCH_ANSWERS" not in os.environ:
    _module, _name = os.environ["SIGNAL_AT"].split()

    class _Signalling:
        def find_spec(self, fullname, path, target=None):
            if fullname == _module:
                sys.meta_path.remove(self)
                open(os.environ["SIGNAL_SENT"], "w").close()
                os.kill(os.getpid(), getattr(signal, _name))
            return None

    sys.meta_path.insert(0, _Signalling())
"""


@dataclasses.dataclass
class _Run:
    """A run started on two characters in ``folder``/in, to ``folder``/out, with a report."""

    folder: Path
    process: subprocess.Popen
    inputs: list[Path]
    before: dict[Path, str]
    config: Path  # names this run's processes, to find them afterwards

    @property
    def report(self) -> Path:
        return self.folder / "report.json"

    @property
    def out(self) -> Path:
        return self.folder / "out"


def _start(folder: Path, environment: dict[str, str]) -> _Run:
    inputs = [save_character(folder / "in" / f"c{index}.blend") for index in range(2)]
    config = folder / "rig.toml"
    config.write_text("[defaults]\n")
    before = checksums([folder / "in"])
    process = subprocess.Popen([sys.executable, str(ENTRY), str(folder / "in"), "--out", str(folder / "out"),
                                "--config", str(config), "--report", str(folder / "report.json")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    return _Run(folder, process, inputs, before, config)


def _assert_stopped_before_any_file(run: _Run, signum: int, left: Callable[[], list[Path]]) -> None:
    """The run ended as an interrupt ends it, and before its first file; ``left``: what is in the system's
    temporary folder the run was given."""
    stdout, stderr = run.process.communicate(timeout=120)
    told = stdout + stderr
    assert run.process.returncode == 128 + signum, told
    assert "Traceback" not in told and "KeyboardInterrupt" not in told, told
    report = json.loads(run.report.read_text())
    assert set(report) == REPORT_KEYS, report
    assert report["interrupted_by"] == signal.Signals(signum).name and report["exit_code"] == 128 + signum
    files = report_of(run.report)
    assert sorted(files) == [path.name for path in run.inputs]
    fields = {field.name for field in dataclasses.fields(FileResult)}
    for entry in files.values():
        assert set(entry) == fields
        assert (entry["status"], entry["error"]) == ("not started", "not started: the run was interrupted"), entry
    assert report["summary"] in stdout  # what the terminal shows, as after an interrupt among the files
    assert "not started: 2 file(s) (listed in the report)" in report["summary"]
    assert checksums([run.folder / "in"]) == run.before
    assert not run.out.exists()
    assert not _processes_naming(str(run.config))  # the worker started ahead is gone too
    assert left() == []


# Each where the add-on's import starts Blender, where Blender's startup scripts begin, in the middle of
# Blender registering its interface, and where the add-on has loaded and the command has not.
@pytest.mark.parametrize("module,signum", [
    ("ik_rigger", signal.SIGINT),
    ("bl_operators", signal.SIGTERM),
    ("bl_ui.space_userpref", signal.SIGINT),
    ("ik_rigger.batch.command", signal.SIGTERM),
])
def test_a_signal_at_a_moment_of_start_up_stops_the_run_before_any_file(tmp_path, module, signum):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_SIGNAL_AT_IMPORT)
    sent = tmp_path / "signal_sent"
    system_temp = _system_temp(tmp_path)
    run = _start(tmp_path, {**system_temp.environment, "PYTHONPATH": str(hook),
                            "SIGNAL_AT": f"{module} {signal.Signals(signum).name}", "SIGNAL_SENT": str(sent)})
    _assert_stopped_before_any_file(run, signum, system_temp.left)
    assert sent.exists()  # the moment did come


def test_a_signal_once_the_run_has_begun_stops_it_before_any_file(tmp_path):
    """The first thing a run does that shows from outside: its temporary folder, made before Blender loads."""
    system_temp = _system_temp(tmp_path)
    run = _start(tmp_path, system_temp.environment)
    deadline = time.monotonic() + 60
    while not system_temp.left() and run.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    run.process.send_signal(signal.SIGTERM)
    _assert_stopped_before_any_file(run, signal.SIGTERM, system_temp.left)


# Moments a user's Ctrl-C or a scheduler's SIGTERM may come, all before the first file where loading
# Blender takes a second (here, the run's and its worker's, side by side).
@pytest.mark.parametrize("delay,signum", [(0.25, signal.SIGINT), (0.5, signal.SIGINT),
                                          (0.5, signal.SIGTERM)])
def test_a_signal_soon_after_the_start_stops_the_run_before_any_file(tmp_path, delay, signum):
    system_temp = _system_temp(tmp_path)
    run = _start(tmp_path, system_temp.environment)
    time.sleep(delay)
    run.process.send_signal(signum)
    _assert_stopped_before_any_file(run, signum, system_temp.left)


def test_a_worker_stopped_while_it_loads_ends_at_once(tmp_path):
    """A worker is its run's to stop (with SIGTERM, at any time): while it loads, it ends then and there."""
    answers, told = os.pipe()
    try:
        process = subprocess.Popen([sys.executable, str(ENTRY)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, pass_fds=(told,),
                                   env={**os.environ, "IK_RIGGER_BATCH_ANSWERS": str(told)})
    finally:
        os.close(told)
    with open(answers, encoding="utf-8") as heard:
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == -signal.SIGTERM, stderr
        assert heard.read() == ""  # it never said it was ready
