"""The batch on a Dask cluster (docs/farm.md) against local worker processes, on the same files.

Files per second through ``--scheduler`` with two local worker processes (scripts/farm.sh
worker --nworkers 2), against ``--jobs 2`` (the batch's own two processes) on the same
realistic characters (``batch._make_realistic``): on a two-core machine the two must be
within 10%. Each run is a fresh submitting process, timed from outside (wall clock), as a
user would time it; the cluster's workers are started once, before the runs, as a farm's
are. Next to it, the scheduler's own cost per file: a task that does nothing, sent and
answered one at a time through the same scheduler and workers.

Alone: ``.venvs/farm/bin/python -m benchmarks.farm [--quick]`` (``scripts/setup.sh farm``
first); prints its figures as JSON. Not part of scripts/benchmark.sh, whose environment has
no Dask.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import bpy

from benchmarks import batch, common

FARM = common.ROOT / "scripts" / "farm.sh"
WORKERS = 2
FILES = batch.REALISTIC_FILES
REPEATS = {"full": 3, "quick": 2}
ROUND_TRIPS = 100
TARGET = 0.90  # the cluster's files per second over --jobs 2's, at least


@contextmanager
def _cluster(logs: Path) -> Iterator[tuple[str, object]]:
    """A scheduler and two worker processes on this machine, stopped by their process ids at the end."""
    from distributed import Client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    processes = []
    client = None
    try:
        for role, args in (("scheduler", ["--port", str(port)]), ("worker", [address, "--nworkers", str(WORKERS)])):
            with (logs / f"{role}.log").open("w") as log:
                processes.append(subprocess.Popen([str(FARM), role, *args], stdout=log, stderr=subprocess.STDOUT))
        client = Client(address, timeout=120)
        client.wait_for_workers(WORKERS, timeout=300)
        yield address, client
    finally:
        if client is not None:
            client.close()
        common.stop_processes(reversed(processes))


def _run(inputs: Path, work: Path, how: list[str]) -> tuple[float, float]:
    """Wall seconds of one batch run rigging ``inputs`` into a new folder (removed after), and the
    seconds its report gives: from its first file to its last, its Blender (and Dask) started."""
    out = Path(tempfile.mkdtemp(dir=work))
    report = work / f"report_{out.name}.json"
    try:
        seconds, _, _ = batch._run([sys.executable, str(batch.BATCH_SCRIPT), str(inputs), "--out", str(out / "rigged"),
                                 "--report", str(report), *how])
    finally:
        shutil.rmtree(out)
    written = json.loads(report.read_text(encoding="utf-8"))
    entries = written["files"]
    if any(entry["status"] != "rigged" for entry in entries):
        raise RuntimeError(f"a file was not rigged: {[entry['error'] for entry in entries if entry['error']]}")
    return seconds, written["seconds"]


async def _nothing() -> None:
    """A task as the batch's are (a coroutine, run on the worker's main thread) that does nothing."""


def _round_trip_ms(client: object) -> common.Stats:
    """Milliseconds from sending a task to having its answer, one task at a time."""
    samples = []
    for _ in range(ROUND_TRIPS):
        started = time.perf_counter()
        client.submit(_nothing, pure=False).result()  # type: ignore[attr-defined]
        samples.append((time.perf_counter() - started) * 1000)
    return common.Stats.of(samples)


def measure(work: Path, count: int, repeats: int) -> dict[str, object]:
    sources = work / "sources"
    sources.mkdir()
    common.make_sources(sources)
    paths = batch._make_realistic(sources, work / "characters", count)
    local, farm = [], []
    with _cluster(work) as (address, client):
        cluster = ["--scheduler", address]
        _run(paths[0].parent, work, cluster)  # untimed: the workers' and the files' first reads
        _run(paths[0].parent, work, ["--jobs", "2"])
        for _ in range(repeats):  # interleaved, so that the machine's drift falls on both alike
            local.append(_run(paths[0].parent, work, ["--jobs", "2"]))
            farm.append(_run(paths[0].parent, work, cluster))
        overhead = _round_trip_ms(client)
    # The cluster's files per second over --jobs 2's: as timed from outside, and from the first file
    # to the last (without the submitting process's start-up, which a longer run spreads thinner).
    ratios = common.paired_ratios([wall for wall, _ in local], [wall for wall, _ in farm])
    rigging = common.paired_ratios([files for _, files in local], [files for _, files in farm])
    return {
        "files": count,
        "file_megabytes": paths[0].stat().st_size / 1e6,
        "cores": os.cpu_count(),
        "workers": WORKERS,
        "files_per_second_jobs_2": common.Stats.of([count / wall for wall, _ in local]).as_dict(),
        "files_per_second_scheduler": common.Stats.of([count / wall for wall, _ in farm]).as_dict(),
        "scheduler_over_jobs_2": ratios.as_dict(),
        "first_to_last_file_scheduler_over_jobs_2": rigging.as_dict(),
        "scheduler_ms_per_file": overhead.as_dict(),
        "target": TARGET,
        "met": ratios.median >= TARGET,
    }


def main(argv: list[str]) -> int:
    usage = argparse.ArgumentParser(prog="python -m benchmarks.farm",
                                    description="The batch through a Dask scheduler against --jobs 2.")
    usage.add_argument("--quick", action="store_true", help=f"{FILES['quick']} files, {REPEATS['quick']} repeats")
    args = usage.parse_args(argv)
    kind = "quick" if args.quick else "full"
    with tempfile.TemporaryDirectory() as temporary:
        try:
            result = measure(Path(temporary), FILES[kind], REPEATS[kind])
        finally:
            shutil.rmtree(batch._PYCACHE, ignore_errors=True)
    print(json.dumps({"machine": common.machine_line(common.machine()), **result}, indent=2))
    return 0 if result["met"] else 1


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    # Leave as the batch command does, skipping Blender's exit cleanup (see benchmarks/batch.py).
    shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
    os._exit(status)
