"""What a farm run that died left beside its outputs is removed by a later run there, never what a
live run has (ik_rigger.batch.farm_runs; on a cluster: tests/test_farm.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from test_batch import run, save_character
from test_batch_safety import _dead_pid

from ik_rigger.batch import farm_runs


def _left(folder: Path, token: str, host: str, pid: int, started: str | None) -> list[Path]:
    """A run's leftovers as a killed submitter leaves them: a staged file, its record, a stop mark, its mark."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [f".ik_rigger-farm-{token}-0.blend", f".ik_rigger-farm-{token}-0.json", f".ik_rigger-farm-{token}-stop"]
    for name in names:
        (folder / name).write_bytes(b"x" * 1000)
    mark = farm_runs.run_mark(folder, token)
    mark.write_text(json.dumps({"host": host, "pid": pid, "started": started}))
    return [folder / name for name in names] + [mark]


def _age(paths: list[Path], seconds: float) -> None:
    then = time.time() - seconds
    for path in paths:
        os.utime(path, (then, then))


def test_a_dead_runs_leftovers_go_and_a_live_runs_stay(tmp_path):
    here = socket.gethostname()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = farm_runs._started(live.pid)
        alive = _left(tmp_path, "aaaaaaaaaaaa", here, live.pid, started)
        dead = _left(tmp_path, "bbbbbbbbbbbb", here, _dead_pid(), None)
        reused = _left(tmp_path, "cccccccccccc", here, live.pid, "1")  # its process id taken by another since
        elsewhere = _left(tmp_path, "dddddddddddd", "another-machine", 1, None)  # touched just now
        gone_elsewhere = _left(tmp_path, "eeeeeeeeeeee", "another-machine", 1, None)
        _age(gone_elsewhere, farm_runs.STALE_SECONDS + 60)
        mine = _left(tmp_path, "ffffffffffff", here, _dead_pid(), None)
        removed = farm_runs.clean_dead_runs(tmp_path, "ffffffffffff")
        assert sorted(removed) == sorted(dead + reused + gone_elsewhere)
        assert sorted(tmp_path.iterdir()) == sorted(alive + elsewhere + mine)
    finally:
        live.kill()
        live.wait()


def test_a_local_run_removes_a_dead_farm_runs_leftovers_in_its_output_folder(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    left = _left(tmp_path / "out", "abcdef012345", socket.gethostname(), _dead_pid(), None)
    result = run(str(source), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["a.blend"]
    for path in left:
        assert f"note: removed '{path}', left by a run that was killed" in result.stdout
