"""What a Dask worker runs for the batch on a cluster: one file, rigged by the worker's Blender.

``rig_on_worker`` is the task ``farm.submit`` sends for each file. It rigs into a staged file
beside the output and records its result before it links it into place, so that whichever
attempt of a task Dask ran, the outcome is the same (see ``farm``). A run marked stopped
(``stop_mark``) stops the file at hand as a local interrupt does (``_StopWatch``), and a worker
that lost its scheduler begins no file and puts none in place: the run that sent it has ended,
or will end, without it (the submitter reports such files as failed).

Nothing here imports Blender or Dask at import time.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..limb.config import Config
    from .jobs import FileResult, Job

# How long a worker lets a file it was told to stop go on (its Blender in a call that does not
# come back to Python) before it ends its own process, which Dask replaces.
STOP_GRACE_SECONDS = 10.0
# What marks a run's staged files, records and their temporaries beside the outputs.
STAGE = "ik_rigger-farm-"
# What a task whose worker lost its scheduler answers (no one may hear it: the run went on without it).
_CUT_OFF = "the worker lost its Dask scheduler"


def stop_mark(folder: Path, token: str) -> Path:
    """The file that tells a run's tasks in ``folder`` that the run was interrupted."""
    return folder / f".{STAGE}{token}-stop"


def output_of(job: Job) -> Path:
    """The file a job writes: its output, or in place the file its input points to."""
    return job.target


def _staged(job: Job, token: str, index: int) -> Path:
    """The file a task rigs into before it links it into place; its record beside it, as .json."""
    return output_of(job).parent / f".{STAGE}{token}-{index}.blend"


def made_earlier(job: Job, token: str, index: int) -> FileResult | None:
    """The result an attempt of this task recorded, when the output is the very file it staged
    (the same inode): that attempt put it in place, whatever came to it afterwards."""
    from .pool import _result_from_json

    staged = _staged(job, token, index)
    try:
        if os.path.samefile(staged, output_of(job)):
            return _result_from_json(json.loads(staged.with_suffix(".json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    return None


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
    waits for the file, as its one thread would. An interrupted run stops it (``_StopWatch``)."""
    from .jobs import FileResult, Interrupted

    blender_ready()
    watch = _StopWatch(stop_mark(output_of(job).parent, token))
    try:
        try:
            return rig_staged(job, config, token, index)
        finally:
            watch.end()
    except Interrupted:
        watch.end()
        if made := made_earlier(job, token, index):  # stopped once the file was in place: rigged
            return made
        staged = _staged(job, token, index)
        staged.unlink(missing_ok=True)
        staged.with_suffix(".json").unlink(missing_ok=True)
        return FileResult(job.input, job.output, status="interrupted", error="stopped by the interrupt")


# The watch over the file this worker process rigs, if any (see _StopWatch).
_watching: list[_StopWatch] = []


def _stop_requested(signum: int, frame: object) -> None:
    """SIGUSR1, as _StopWatch sends it to the main thread: stop the file at hand."""
    from .saving import interrupt

    if _watching and _watching[0].active:
        interrupt(signum)


class _StopWatch:
    """While a worker rigs a file: a thread that looks for the run's stop mark and, once the
    submitter is interrupted, stops the file as a local run's interrupt does: ``Interrupted`` in
    the main thread, where Blender runs (a save in progress is finished or undone, its temporary
    files removed). A file still going STOP_GRACE_SECONDS later (its Blender in a call that does
    not come back to Python) ends with the worker process: it must not finish behind the
    submitter's back."""

    def __init__(self, mark: Path) -> None:
        self.active = True
        self.lock = threading.Lock()
        self.ended = threading.Event()
        if signal.getsignal(signal.SIGUSR1) is not _stop_requested:
            signal.signal(signal.SIGUSR1, _stop_requested)
        _watching[:] = [self]
        threading.Thread(target=self._watch, args=(mark,), daemon=True).start()

    def _watch(self, mark: Path) -> None:
        while not self.ended.wait(0.2):
            if mark.exists():
                break
        else:
            return
        with self.lock:
            if not self.active:
                return
            # A signal, as a local run's interrupt is one: Python runs its handler in the main
            # thread, and a wait of Python's own there (a sleep, a pipe) is cut short for it.
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)
        if not self.ended.wait(STOP_GRACE_SECONDS):
            os.kill(os.getpid(), signal.SIGKILL)

    def end(self) -> None:
        """The file is done: no stop is raised for it any more."""
        with self.lock:
            self.active = False
        self.ended.set()


def _scheduler_lost() -> bool:
    """Whether this worker's connection to its scheduler has closed. Its event loop, busy with the
    file, may not have heard of it yet: the connection's socket says so (the end of its stream
    waits there). Outside a worker (a task called directly) there is no scheduler to lose."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return False
    if worker.status.name not in ("running", "paused"):  # closing: Dask heard the scheduler went away
        return True
    comm = getattr(worker.batched_stream, "comm", None)
    if comm is None or comm.closed():
        return True
    connection = getattr(getattr(comm, "stream", None), "socket", None)
    if connection is None:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:  # open, nothing sent: the scheduler is there
        return False
    except ValueError:  # an encrypted connection cannot be peeked at: taken as open
        return False
    except OSError:  # reset
        return True


def rig_staged(job: Job, config: Config, token: str, index: int) -> FileResult:
    """Rig ``job`` as a local run does, through a staged file, so that any attempt of this task
    gives the same outcome (see the module's docstring)."""
    from ..core.errors import RigError
    from .jobs import FileResult, input_format
    from .rig_file import check_target, new_result, rig_file
    from .saving import file_identity, save_atomically, unchanged_since

    if not os.path.exists(job.input):
        return FileResult(
            job.input, job.output, error=f"'{job.input}' is not there on worker {_worker_name()}: every worker must "
            "see the files at the same paths (shared storage; a relative path was made whole in the submitter's "
            "working folder)")
    target = output_of(job)
    if stop_mark(target.parent, token).exists():
        return FileResult(job.input, job.output, status="not started", error="not started: the run was interrupted")
    if _scheduler_lost():
        return FileResult(job.input, job.output, status="not started", error=f"not started: {_CUT_OFF}")
    if job.dry_run:
        return rig_file(job, config)
    if earlier := made_earlier(job, token, index):
        return earlier
    staged = _staged(job, token, index)
    made = staged.with_suffix(".json")
    result = new_result(job)
    try:
        check_target(job, Path(job.input), target, input_format(Path(job.input)))
    except RigError as error:
        result.error = error.message
        return result
    read = file_identity(target) if job.in_place else None  # see rig_file: a save made meanwhile stays
    rig_file(replace(job, output=str(staged), in_place=False, overwrite=True), config, result)
    result.output = job.output
    if result.status == "rigged" and _scheduler_lost():
        result.status, result.error = "interrupted", f"not put in place: {_CUT_OFF}"
    if result.status != "rigged":
        staged.unlink(missing_ok=True)
        return result

    def write_record(temporary: Path) -> None:
        temporary.write_text(json.dumps(asdict(result)), encoding="utf-8")

    try:
        save_atomically(made, write_record, keep_backup=False)
        save_atomically(target, lambda temporary: os.link(staged, temporary), keep_backup=job.in_place,
                        overwrite=job.overwrite or job.in_place,
                        unchanged=unchanged_since(target, read) if job.in_place else None)
    except (OSError, RigError) as error:
        staged.unlink(missing_ok=True)
        made.unlink(missing_ok=True)
        result.status = "failed"
        result.error = error.message if isinstance(error, RigError) else \
            f"'{error.filename or target}': {error.strerror or error}"
    return result
