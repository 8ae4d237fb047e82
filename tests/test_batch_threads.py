"""A batch process loads Blender on one core: its thread pools are one thread (a process rigs one
file at a time in its main thread), and it runs on every core once Blender has loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_batch import ENTRY, limbs_in, save_character

from ik_rigger.batch import pool

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                                reason="needs two cores and Linux's affinity calls")


def _worker_after_a_file(source: Path, output: Path, core: int | None) -> tuple[int, set[int]]:
    """A worker's threads and cores once it has rigged ``source``, waiting for its next job; kept to
    ``core`` for good when one is given (as with one process per core)."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("IK_RIGGER_BATCH")}
    if core is not None:
        environment[pool.CORE_VARIABLE] = str(core)
    answers, told = os.pipe()
    environment[pool.WORKER_VARIABLE] = str(told)
    process = subprocess.Popen([sys.executable, str(ENTRY)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, text=True, pass_fds=(told,), env=environment)
    os.close(told)
    try:
        with open(answers, encoding="utf-8") as channel:
            assert process.stdin is not None
            process.stdin.write(json.dumps({"input": str(source), "output": str(output)}) + "\n")
            process.stdin.flush()
            result = next(line for line in channel if line.startswith("IK-RIGGER-RESULT "))
            assert json.loads(result.split(" ", 1)[1])["status"] == "rigged"
            threads = len(os.listdir(f"/proc/{process.pid}/task"))
            cores = os.sched_getaffinity(process.pid)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=120)
    return threads, cores


def test_a_worker_works_in_one_thread_on_every_core(tmp_path):
    """A worker that keeps to no core of its own (--jobs 1's) has as many threads as one kept to a
    core from its start, after the same file (Blender's pools sized to one thread, not one per
    core), and runs on every core of the run."""
    source = save_character(tmp_path / "in" / "a.blend")
    cores = os.sched_getaffinity(0)
    kept_threads, kept_cores = _worker_after_a_file(source, tmp_path / "kept" / "a.blend", min(cores))
    threads, free_cores = _worker_after_a_file(source, tmp_path / "free" / "a.blend", None)
    assert kept_cores == {min(cores)}
    assert free_cores == cores
    assert threads == kept_threads
    assert limbs_in(tmp_path / "free" / "a.blend") == ["shin.L", "shin.R"]
