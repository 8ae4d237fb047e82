"""The batch on a Dask cluster: one task per file, rigged by the Blender of a worker process.

``--scheduler ADDRESS`` (``submit``, from ``command``) plans the run as a local one does, sends
each file to the cluster as a task (``farm_tasks.rig_on_worker``) and takes the results as they come,
with the same progress, summary, report and exit codes. Files live on storage every worker
sees, at the same paths. See docs/farm.md.

Dask retries a file whose worker died on another worker. So that a task's outcome is the
same whichever attempt produced it, a task rigs into a staged file of its own beside the
output (``.ik_rigger-farm-RUN-INDEX.blend``) and records its result beside it before it
links the staged file into place: an attempt that finds the output to be that very file (the
same inode) knows an earlier attempt of this run made it, and gives that attempt's result
rather than rigging again or failing on "output exists". The submitter removes the staged
files, the records and what a killed worker was writing at the end of the run.

An interrupted submitter cancels the tasks no worker has begun and marks the run stopped in
each output folder (``farm_tasks.stop_mark``); a worker rigging a file of the run sees the mark
and stops that file as a local run's interrupt does, and the submitter takes those results
before it writes the report. A worker that lost its scheduler begins no file of the run and
puts none in place.

Nothing here imports Blender or Dask at import time: the worker side loads Blender when its
first task comes (or its preload, scripts/farm_worker.py), the submit side Dask when it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .farm_release import check_workers, other_releases
from .farm_runs import TOUCH_SECONDS, clean_dead_runs, mark_runs, touch
from .farm_tasks import STAGE, STOP_GRACE_SECONDS, made_earlier, output_of, rig_on_worker, stop_mark

if TYPE_CHECKING:
    from ..limb.config import Config
    from .jobs import FileResult, Job
    from .pool import _Stop

# How long the submitter waits for the scheduler before calling it a usage error.
CONNECT_SECONDS = 30
# How long the submitter waits for a worker, before the first file and whenever none is left
# (--worker-wait).
WORKER_WAIT_SECONDS = 60.0
# How long an interrupted submitter waits for the files being rigged to stop: past that grace.
_STOPPING_SECONDS = STOP_GRACE_SECONDS + 50


def _connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address``, or a usage error naming it."""
    from .jobs import UsageError

    try:
        from distributed import Client
    except ImportError as error:
        raise UsageError("--scheduler needs Dask (dask[distributed]) beside this Blender; scripts/rig_batch.sh "
                         "sets up the farm's environment that has it (docs/farm.md)") from error

    # Dask logs a connection's retries, a version mismatch's warnings, and the tracebacks of its
    # attempts to reach a scheduler gone (as does tornado, for a result it could not fetch from
    # one): the batch's own lines say what matters. (Dask's configuration gives some of its
    # loggers a level of their own.)
    for name in ("distributed", "distributed.client", "tornado", "tornado.application"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
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
    wait = WORKER_WAIT_SECONDS if args.worker_wait is None else args.worker_wait
    if not 0 < wait < math.inf:
        raise UsageError(f"--worker-wait must be a number of seconds above 0, not {args.worker_wait:g}")
    client = _connect(args.scheduler)
    try:
        jobs, inputs = plan_jobs(args)  # a mistake in the command line is told at once
        # The workers may run in other folders: every path as the submitter sees it.
        jobs = [replace(job, input=os.path.abspath(job.input), output=os.path.abspath(job.output)) for job in jobs]
        inputs.notes.extend(config.notes)
        _await_a_worker(client, args.scheduler, wait)
        asked = check_workers(client, args.scheduler)
        started = time.perf_counter()
        token = uuid.uuid4().hex[:12]
        folders = _folders(job for job in jobs if not job.dry_run)
        for folder in folders:  # what a killed run left, as a local run removes its temporary files
            inputs.notes.extend(f"removed '{path}', left by a farm run that was killed"
                                for path in clean_dead_runs(folder, token))
        marks = mark_runs(folders, token)
        results: dict[int, FileResult] = {}
        progress = Progress(len(jobs), quiet=args.quiet)

        def record(index: int, result: FileResult) -> None:
            results[index] = result
            progress.update(printable(result))

        try:
            _run(_Sending(client, jobs, config, token, marks, asked), record, (args.scheduler, wait))
        finally:
            progress.finish()
            # A file put in place by a task after its answer came (its scheduler gone): rigged.
            for index, result in list(results.items()):
                if result.status not in ("rigged", "planned") and (made := made_earlier(jobs[index], token, index)):
                    results[index] = made
            _clean(token, jobs)
        return conclude(args, jobs, inputs, results, {}, started, stop, {
            "jobs": sum(_workers(client).values()), "workers_started": 0, "scheduler": args.scheduler})
    finally:
        client.close()


def _workers(client: Any) -> dict[str, int]:
    """The threads of each worker connected to the scheduler; none when the scheduler is gone."""
    if client.status != "running":  # reconnecting to the scheduler, or given up on it
        return {}
    try:
        return client.nthreads()
    except OSError:  # the scheduler went away (Dask's CommClosedError is one)
        return {}


def _await_a_worker(client: Any, address: str, seconds: float) -> None:
    """Return once a worker is connected to the scheduler; a usage error after ``seconds`` without one."""
    from .jobs import UsageError

    if _workers(client):
        return
    print(f"ik_rigger: waiting up to {seconds:g} s for a worker to join the Dask scheduler at '{address}'",
          file=sys.stderr, flush=True)
    try:
        client.wait_for_workers(1, timeout=seconds)
    except TimeoutError as error:
        raise UsageError(f"no worker joined the Dask scheduler at '{address}' within {seconds:g} s: start one with "
                         f"scripts/farm.sh worker {address} (docs/farm.md), or wait longer with --worker-wait "
                         "SECONDS") from error


class _Sending:
    """The run's tasks, sent as the workers' threads free up: one task in each thread and none
    queued behind it on a worker (Dask sends a worker every task at once when there are few), so
    that a worker that hangs holds one file while the others take the rest. The largest files first.
    Meanwhile the run's marks say it is alive (``farm_runs``). A worker that joins is asked its
    release before any task is sent (``farm_release``): one of another release stops the sending,
    and the files not sent fail with ``refused``, which names both releases."""

    def __init__(self, client: Any, jobs: list[Job], config: Config, token: str, marks: list[Path],
                 asked: set[str]) -> None:
        from .pool import _largest_first

        self.client, self.jobs, self.config, self.token, self.marks = client, jobs, config, token, marks
        self.asked = set(asked)
        self.refused = ""
        self.queued = deque(_largest_first(jobs))
        self.futures: dict[Any, int] = {}
        self.flying: list[Any] = []  # the tasks sent that may not be done
        self.freed = threading.Event()  # set as a task sent is done: its thread takes the next at once
        self.touched = time.monotonic()

    def send(self, pending: Any = None) -> None:
        """Send a task to each free worker thread; ``pending`` (Dask's as_completed) follows them."""
        if not self.queued or self.refused:
            return
        workers = _workers(self.client)
        if joined := sorted(set(workers) - self.asked):
            self.asked.update(joined)
            if told := other_releases(self.client, joined):
                self.refused = f"a worker of another release joined the Dask scheduler: {told}; stop it"
                return
        self.flying = [future for future in self.flying if not future.done()]
        free = sum(workers.values()) - len(self.flying)
        for _ in range(min(free, len(self.queued))):
            index, job = self.queued.popleft()
            future = self.client.submit(rig_on_worker, job, self.config, self.token, index,
                                        key=f"{STAGE}{self.token}-{index}", pure=False)
            self.futures[future] = index
            self.flying.append(future)
            future.add_done_callback(lambda _done: self.freed.set())
            if pending is not None:
                pending.add(future)

    def alive(self, now: float) -> None:
        """Touch the run's marks now and then: a later run sees this one alive."""
        if now - self.touched >= TOUCH_SECONDS:
            self.touched = now
            touch(self.marks)


def _run(sending: _Sending, record: Callable[[int, FileResult], None], waiting: tuple[str, float]) -> None:
    """Send every job as a task (``_Sending``), and record each result as it comes.

    An interrupt cancels the tasks no worker has begun (they are reported as not started)
    and stops the files being rigged (see ``_stop``), so that the report says what was done.
    ``waiting``: the scheduler's address and how long the run goes on with no worker connected.
    """
    from .jobs import FileResult, Interrupted
    from .saving import interrupts_held

    jobs, token = sending.jobs, sending.token
    recorded: set[int] = set()
    stopping: set[int] = set()  # the files being rigged when the interrupt came
    interrupted: list[bool] = []
    dropped: list[bool] = []
    address = waiting[0]

    def take(index: int, answer: Any, future: Any = None) -> None:
        """Record a task's answer: what as_completed gave with its results, or a FileResult."""
        if index in recorded:
            return
        result = answer if isinstance(answer, FileResult) else _outcome(future, answer, jobs[index])
        if result.status not in ("rigged", "planned") and (made := made_earlier(jobs[index], token, index)):
            result = made  # stopped, dropped or given up once its file was in place: the file is rigged
        elif index in stopping and result.status in ("failed", "not started"):  # its worker stopped, or died
            result.status, result.error = "interrupted", "stopped by the interrupt"
        elif result.status == "not started" and not interrupted:  # cancelled, but not by this run
            result.status, result.error = "failed", (f"the Dask scheduler at '{address}' dropped it (the scheduler "
                                                     "went away, or another client cancelled it)")
            if not dropped:  # a worker may still rig files of the run, unknown to the scheduler: they stop them
                dropped.append(True)
                _mark_stopped(jobs, token)
        with interrupts_held():
            record(index, result)
            recorded.add(index)

    try:
        _follow(sending, take, recorded, *waiting)
    except Interrupted:
        interrupted.append(True)
        _stop(sending.client, sending.futures, jobs, token, take, stopping)


def _follow(sending: _Sending, take: Callable[..., None], recorded: set[int], address: str, wait: float) -> None:
    """Take each result as it comes, sending the next task as a thread frees up; once no worker has
    been connected for ``wait`` seconds, fail the files left (cancelled, or never sent) with a line
    that says so, rather than wait for ever."""
    from distributed import as_completed

    from .jobs import FileResult

    client, futures, jobs = sending.client, sending.futures, sending.jobs
    sending.send()
    # With the results, fetched as they come, in Dask's own thread: a result its worker has
    # not given yet (busy with its next file, or gone, the task then run again) holds up no other.
    pending = as_completed(list(futures), loop=client.loop, with_results=True, raise_errors=False)
    alone_since: float | None = None
    checked = 0.0

    def refuse() -> None:
        """The files not sent, once a worker of another release joined: failed, naming both releases."""
        if sending.refused and sending.queued:
            print(f"ik_rigger: {sending.refused}; {len(sending.queued)} file(s) left not rigged", file=sys.stderr,
                  flush=True)
            for index, job in list(sending.queued):
                take(index, FileResult(job.input, job.output, error=sending.refused))
            sending.queued.clear()

    while not pending.is_empty() or sending.queued:
        came = pending.next_batch(block=False)
        for future, answer in came:
            take(futures[future], answer, future)
        now = time.monotonic()
        if came or sending.freed.is_set():
            sending.freed.clear()
            sending.send(pending)
            refuse()
        if now - checked >= 1:
            checked = now
            sending.send(pending)  # workers that joined
            refuse()
            sending.alive(now)
            gone = client.status in ("closing", "closed")  # Dask gave up on reaching the scheduler again
            alone_since = None if _workers(client) else alone_since or now
            if gone or (alone_since is not None and now - alone_since >= wait):
                left = [future for future in futures if futures[future] not in recorded]
                unsent = list(sending.queued)
                sending.queued.clear()
                if gone:  # its workers may still rig files of the run: they stop them
                    _mark_stopped(jobs, sending.token)
                    _let_workers_stop()
                    line = f"the Dask scheduler at '{address}' went away; start it again and run the rest"
                else:
                    client.cancel(left, force=True)
                    line = (f"no worker was connected to the Dask scheduler at '{address}' for {wait:g} s: start "
                            f"one with scripts/farm.sh worker {address}")
                print(f"ik_rigger: {line}; {len(left) + len(unsent)} file(s) left not rigged", file=sys.stderr,
                      flush=True)
                for index in [futures[future] for future in left] + [index for index, _ in unsent]:
                    job = jobs[index]
                    take(index, FileResult(job.input, job.output, error=line))
                return
        sending.freed.wait(0.05)


def _stop(client: Any, futures: dict[Any, int], jobs: list[Job], token: str, take: Callable[..., None],
          stopping: set[int]) -> None:
    """The interrupt: cancel what no worker has begun, have the workers stop the files they rig
    (the run's stop mark, which a task a worker takes up as the cancel goes out also finds:
    it begins nothing), and take those results; a task that has not answered by then is cancelled."""
    from distributed import as_completed
    from distributed.client import ClosedClientError

    from .jobs import FileResult

    _mark_stopped(jobs, token)
    # The scheduler went away (Dask's CommClosedError is an OSError; a client that noticed is closed).
    gone = (OSError, RuntimeError, ClosedClientError)
    try:
        running = {key for keys in client.processing().values() for key in keys}
        kept = [future for future in futures if future.done() or future.key in running]
        client.cancel([future for future in futures if future not in kept], force=True)
    except gone:
        # What its workers still rig is unknown to this run; the stop mark stops it, and a file put
        # in place meanwhile is taken as rigged.
        _let_workers_stop()  # the run was marked stopped above
        for index in futures.values():
            job = jobs[index]
            take(index, FileResult(job.input, job.output, status="interrupted",
                                   error="stopped by the interrupt (the Dask scheduler had gone away)"))
        return
    stopping.update(futures[future] for future in kept if not future.done())
    answered: set[Any] = set()
    try:
        for future, answer in as_completed(kept, loop=client.loop, timeout=_STOPPING_SECONDS, with_results=True,
                                           raise_errors=False):
            take(futures[future], answer, future)
            answered.add(future)
    except TimeoutError:
        late = [future for future in kept if future not in answered]
        with contextlib.suppress(*gone):  # gone meanwhile: the stop mark has stopped them all the same
            client.cancel(late, force=True)
        for future in late:
            job = jobs[futures[future]]
            take(futures[future], FileResult(job.input, job.output, status="interrupted",
                                             error="stopped by the interrupt"))


def _outcome(future: Any, answer: Any, job: Job) -> FileResult:
    """A task's result from its ``answer`` (as_completed's, with the results); a task Dask gave up
    on, or that failed outside the file, fails its file."""
    from distributed.scheduler import KilledWorker

    from .jobs import FileResult

    if future.cancelled():
        return FileResult(job.input, job.output, status="not started", error="not started: the run was interrupted")
    if isinstance(answer, FileResult):
        return answer
    # A failed task's exception (with its type and traceback), or what stopped the fetch of a
    # result (the scheduler gone meanwhile).
    error = answer[1] if future.status == "error" else answer
    if isinstance(error, KilledWorker):
        return FileResult(job.input, job.output, error=f"every worker that took it died while rigging it ({error})")
    # The cluster's own failure (a task it could not run): this file's alone.
    return FileResult(job.input, job.output, error=f"the cluster could not run it ({type(error).__name__}: {error})")


def _clean(token: str, jobs: Iterable[Job]) -> None:
    """Remove what this run's tasks left beside the outputs: staged files, records, and the
    temporary files of a worker killed while it wrote one."""
    from .saving import clean_stale

    mark = f"{STAGE}{token}-"
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
    return sorted({output_of(job).parent for job in jobs})


def _mark_stopped(jobs: list[Job], token: str) -> None:
    """Mark the run stopped in each folder it writes in: a worker that rigs one of its files stops it
    (``farm_tasks``), and one that takes one up begins nothing."""
    for folder in _folders(job for job in jobs if not job.dry_run):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stop_mark(folder, token).touch()
        except OSError:  # a folder no task can write in either
            pass


def _let_workers_stop() -> None:
    """With no scheduler left to hear the workers' answers from, give them the time in which each
    stops a file of the marked run or ends (``STOP_GRACE_SECONDS``), before the mark is cleaned away."""
    print(f"ik_rigger: waiting {STOP_GRACE_SECONDS + 1:g} s for the workers to stop this run's files",
          file=sys.stderr, flush=True)
    time.sleep(STOP_GRACE_SECONDS + 1)
