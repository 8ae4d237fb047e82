"""The batch on a Dask cluster: one task per file, rigged by the Blender of a worker process.

``--scheduler ADDRESS`` (``submit``, from ``command``) plans the run as a local one does, sends
each file to the cluster as a task (``rig_on_worker``) and takes the results as they come,
with the same progress, summary, report and exit codes. Files live on storage every worker
sees, at the same paths. See docs/farm.md.

Dask retries a file whose worker died on another worker. So that a task's outcome is the
same whichever attempt produced it, a task rigs into a staged file of its own beside the
output (``.ik_rigger-farm-RUN-INDEX.blend``) and records its result beside it before it
links the staged file into place: an attempt that finds the output to be that very file (the
same inode) knows an earlier attempt of this run made it, and gives that attempt's result
rather than rigging again or failing on "output exists". The submitter removes the staged
files, the records and what a killed worker was writing at the end of the run.

Nothing here imports Blender or Dask at import time: the worker side loads Blender when its
first task comes (or its preload, scripts/farm_worker.py), the submit side Dask when it runs.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..limb.config import Config
    from .jobs import FileResult, Job
    from .pool import _Stop

# How long the submitter waits for the scheduler before calling it a usage error.
CONNECT_SECONDS = 30
# What marks a run's staged files, records and their temporaries beside the outputs.
_STAGE = "ik_rigger-farm-"


def _connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address``, or a usage error naming it."""
    from .jobs import UsageError

    try:
        from distributed import Client
    except ImportError as error:
        raise UsageError("--scheduler needs Dask (dask[distributed]) beside this Blender; scripts/rig_batch.sh "
                         "sets up the farm's environment that has it (docs/farm.md)") from error

    # Dask logs a connection's retries and a version mismatch's warnings: the batch's own
    # lines say what matters.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        return Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        raise UsageError(f"cannot reach the Dask scheduler at '{address}' within {CONNECT_SECONDS} s "
                           f"({error}); start one with scripts/farm.sh scheduler, or check the address") from error


def submit(args: argparse.Namespace, config: Config, stop: _Stop) -> int:
    """Run the batch on the cluster of ``args.scheduler``; the exit code as a local run gives it."""
    from .conclusion import conclude
    from .inputs import plan_jobs
    from .jobs import UsageError
    from .terminal import Progress, printable

    if args.jobs != 1:
        raise UsageError("--jobs and --scheduler exclude each other: the cluster's workers rig the files")
    client = _connect(args.scheduler)
    try:
        jobs, inputs = plan_jobs(args)
        inputs.notes.extend(config.notes)
        started = time.perf_counter()
        token = uuid.uuid4().hex[:12]
        results: dict[int, FileResult] = {}
        progress = Progress(len(jobs), quiet=args.quiet)

        def record(index: int, result: FileResult) -> None:
            results[index] = result
            progress.update(printable(result))

        try:
            _run(client, jobs, config, token, record)
        finally:
            progress.finish()
            _clean(token, jobs)
        workers = client.scheduler_info().get("workers", {})
        return conclude(args, jobs, inputs, results, {}, started, stop, {
            "jobs": sum(worker.get("nthreads", 0) for worker in workers.values()), "workers_started": 0,
            "scheduler": args.scheduler})
    finally:
        client.close()


def _run(client: Any, jobs: list[Job], config: Config, token: str,
         record: Callable[[int, FileResult], None]) -> None:
    """Send every job as a task, the largest first, and record each result as it comes.

    An interrupt cancels the tasks no worker has begun (they are reported as not started)
    and waits for the files being rigged, so that the report says what was done.
    """
    from distributed import as_completed

    from .jobs import Interrupted
    from .pool import _largest_first
    from .saving import interrupts_held

    futures = {client.submit(rig_on_worker, job, config, token, index, key=f"{_STAGE}{token}-{index}",
                             pure=False): index for index, job in _largest_first(jobs)}
    recorded: set[int] = set()

    def take(future: Any) -> None:
        index = futures[future]
        if index not in recorded:
            with interrupts_held():
                record(index, _outcome(future, jobs[index]))
                recorded.add(index)

    try:
        for future in as_completed(futures, loop=client.loop):
            take(future)
    except Interrupted:
        # What is done or being rigged is waited for; the rest is cancelled, never begun. A task a
        # worker takes up as the cancel goes out finds the run's stop mark and begins nothing.
        for folder in _folders(job for job in jobs if not job.dry_run):
            try:
                folder.mkdir(parents=True, exist_ok=True)
                _stop_mark(folder, token).touch()
            except OSError:  # a folder no task can write in either
                pass
        running = {key for keys in client.processing().values() for key in keys}
        kept = [future for future in futures if future.done() or future.key in running]
        client.cancel([future for future in futures if future not in kept])
        for future in as_completed(kept, loop=client.loop):
            take(future)


def _outcome(future: Any, job: Job) -> FileResult:
    """A task's result; a task Dask gave up on, or that failed outside the file, fails its file."""
    from distributed.scheduler import KilledWorker

    from .jobs import FileResult

    if future.cancelled():
        return FileResult(job.input, job.output, status="not started", error="not started: the run was interrupted")
    try:
        return future.result()
    except KilledWorker as error:
        return FileResult(job.input, job.output, error=f"every worker that took it died while rigging it ({error})")
    except Exception as error:  # the cluster's own failure (a task it could not run): this file's alone
        return FileResult(job.input, job.output, error=f"the cluster could not run it ({type(error).__name__}: "
                          f"{error})")


def _clean(token: str, jobs: Iterable[Job]) -> None:
    """Remove what this run's tasks left beside the outputs: staged files, records, and the
    temporary files of a worker killed while it wrote one."""
    from .saving import clean_stale

    mark = f"{_STAGE}{token}-"
    for folder in _folders(jobs):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if mark in entry.name:
                Path(entry.path).unlink(missing_ok=True)
        # A worker killed mid-save leaves its save's private folder, named by its process, not the run: once
        # every task is done, one whose process is gone from this machine is no live save's.
        clean_stale(folder)


def _folders(jobs: Iterable[Job]) -> list[Path]:
    """The folders the jobs write in."""
    return sorted({_target(job).parent for job in jobs})


def _stop_mark(folder: Path, token: str) -> Path:
    """The file that tells a run's tasks in ``folder`` that the run was interrupted."""
    return folder / f".{_STAGE}{token}-stop"


def _target(job: Job) -> Path:
    """The file a job writes: its output, or in place the file its input points to."""
    return Path(os.path.realpath(job.input)) if job.in_place else Path(job.output)


def _worker_name() -> str:
    from distributed import get_worker

    try:
        return f"{socket.gethostname()} ({get_worker().address})"
    except ValueError:  # run outside a worker
        return socket.gethostname()


# Whether this process has registered IK Rigger for the tasks it runs.
_registered: list[bool] = []


def blender_ready() -> None:
    """Load Blender and register IK Rigger in this process, once (a worker's preload, or its first task)."""
    if not _registered:
        from .. import register

        register()
        _registered.append(True)


async def rig_on_worker(job: Job, config: Config, token: str, index: int) -> FileResult:
    """One file, on a worker. A coroutine function so that Dask runs it on the worker's main thread,
    the only one Blender runs in (it crashes opening a file in another): the worker's event loop
    waits for the file, as its one thread would."""
    blender_ready()
    return rig_staged(job, config, token, index)


def rig_staged(job: Job, config: Config, token: str, index: int) -> FileResult:
    """Rig ``job`` as a local run does, through a staged file, so that any attempt of this task
    gives the same outcome (see the module's docstring)."""
    from ..core.errors import RigError
    from .jobs import FileResult, input_format
    from .pool import _result_from_json
    from .rig_file import check_target, new_result, rig_file
    from .saving import save_atomically

    if not os.path.exists(job.input):
        return FileResult(
            job.input, job.output, error=f"'{job.input}' is not there on worker {_worker_name()}: every worker must "
            "see the files at the same paths (shared storage)")
    target = _target(job)
    if _stop_mark(target.parent, token).exists():
        return FileResult(job.input, job.output, status="not started", error="not started: the run was interrupted")
    if job.dry_run:
        return rig_file(job, config)
    staged = target.parent / f".{_STAGE}{token}-{index}.blend"
    made = staged.with_suffix(".json")
    try:
        if os.path.samefile(staged, target):  # an earlier attempt of this task made it
            return _result_from_json(json.loads(made.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    result = new_result(job)
    try:
        check_target(job, Path(job.input), target, input_format(Path(job.input)))
    except RigError as error:
        result.error = error.message
        return result
    rig_file(replace(job, output=str(staged), in_place=False, overwrite=True), config, result)
    result.output = job.output
    if result.status != "rigged":
        staged.unlink(missing_ok=True)
        return result

    def write_record(temporary: Path) -> None:
        temporary.write_text(json.dumps(asdict(result)), encoding="utf-8")

    try:
        save_atomically(made, write_record, keep_backup=False)
        save_atomically(target, lambda temporary: os.link(staged, temporary), keep_backup=job.in_place,
                        overwrite=job.overwrite or job.in_place)
    except OSError as error:
        staged.unlink(missing_ok=True)
        made.unlink(missing_ok=True)
        result.status, result.error = "failed", f"'{error.filename or target}': {error.strerror or error}"
    return result
