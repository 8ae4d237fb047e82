"""The worker Blenders of a run: started, fed one file at a time, and heard through a pipe of their own.

A worker is the batch command in worker mode (``run_worker``): jobs as JSON lines on its
input, results as marked lines on the pipe its starter passed on (``answers_channel``).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import stat
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from types import FrameType
from typing import IO

from ..limb.config import Config
from .jobs import EXIT_OK, ArmatureResult, FileResult, Interrupted, Job, UsageError
from .rig_file import new_result, rig_file
from .saving import clean_stale, file_place, folders_kept, interrupt, interrupts_held

_RESULT_MARK = "IK-RIGGER-RESULT "
_READY_MARK = "IK-RIGGER-READY"
# Said right before a worker moves a rigged file into place: where that file is and what the worker
# would answer for it, should it die before it can (see _Slot._lost).
_PLACING_MARK = "IK-RIGGER-PLACING "
# Said as a worker takes a file, before it begins it: a worker that dies before saying so never held
# the file, which goes to the next worker (see _Slot._feed).
_TAKEN_MARK = "IK-RIGGER-TAKEN"
# A worker's answers channel: the descriptor of the pipe its starter passed on (see answers_channel).
WORKER_VARIABLE = "IK_RIGGER_BATCH_ANSWERS"
# The core a worker keeps to, told before it loads Blender (see scripts/rig_batch.py, keep_to_one_core).
CORE_VARIABLE = "IK_RIGGER_BATCH_CORE"


def _result_from_json(data: dict) -> FileResult:
    armatures = [ArmatureResult(**entry) for entry in data.pop("armatures")]
    return FileResult(**data, armatures=armatures)


class _Stop:
    """The first SIGINT or SIGTERM: remembered, and raised as ``Interrupted`` once.

    Later ones are let go, so the clean stop (workers, report) is never cut short.
    """

    def __init__(self) -> None:
        self.signum = 0
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.signum:
            return
        self.signum = signum
        interrupt(signum)

    def came_before(self, signum: int) -> None:
        """Take ``signum`` (0 for none), which came before ``install`` (see batch.command.main), as the
        first, without raising: nothing has begun that it should cut short."""
        if signum and not self.signum:
            self.signum = signum

    def install(self) -> None:
        for number in (signal.SIGINT, signal.SIGTERM):
            self._previous[number] = signal.signal(number, self)

    def restore(self) -> None:
        """Put back the handlers ``install`` replaced (none where it did not get that far)."""
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()


def _send(channel: IO[str], line: str) -> None:
    channel.write(line + "\n")
    channel.flush()


def answers_channel() -> IO[str] | None:
    """In a worker, where its answers go: the pipe the process that started it passed on (its
    descriptor named by WORKER_VARIABLE), never the standard output Blender prints to (a name
    in a file could print a line that looks like an answer). None outside a worker: no
    argument a user types makes a worker. A variable that names no such pipe is a
    ``UsageError``: the process was started as a worker, and must not run the whole command
    line it was given."""
    told = os.environ.pop(WORKER_VARIABLE, None)
    if told is None:
        return None
    try:
        if told.isdigit() and int(told) > 2 and stat.S_ISFIFO(os.fstat(int(told)).st_mode):
            return open(int(told), "w", encoding="utf-8")
    except OSError:
        pass
    raise UsageError(f"{WORKER_VARIABLE} is set, but names no pipe from a run: "
                     "a batch worker is started by the batch command itself")


def run_worker(config: Config, stop: _Stop, channel: IO[str]) -> int:
    """Worker mode: jobs as JSON lines on stdin, results as marked JSON lines on ``channel``.

    SIGTERM stops the file at hand (its temporary output removed) and the worker.
    """
    try:
        with folders_kept():
            _serve(config, stop, channel)
    except Interrupted:
        pass
    return 128 + stop.signum if stop.signum else EXIT_OK


def _serve(config: Config, stop: _Stop, channel: IO[str]) -> None:
    """Rig each job read from stdin, telling ``channel`` of each, until stdin ends or a signal came."""
    _send(channel, _READY_MARK)
    for line in sys.stdin:
        if not line.strip():
            continue
        job = Job(**json.loads(line))
        _send(channel, _TAKEN_MARK)
        result = new_result(job)
        try:
            rig_file(job, config, result, lambda told, place: _send(
                channel, _PLACING_MARK + json.dumps({"file": list(place), "record": asdict(told)})))
        finally:
            # A file saved before the signal is told, whole: the main process must know.
            if result.status == "rigged" or not stop.signum:
                with interrupts_held():
                    _send(channel, _RESULT_MARK + json.dumps(asdict(result)))
        if stop.signum:
            break


def _pipe(stream: IO[str] | None) -> IO[str]:
    """A worker's pipe; Popen was asked for it, so it is there."""
    assert stream is not None
    return stream


_Answer = tuple[int, FileResult] | None


def _start_worker(command: list[str], core: int | None = None) -> subprocess.Popen:
    """One worker Blender, in a session of its own: a Ctrl-C on the terminal reaches only the
    main process, which stops the workers itself, knowing which file each one holds.

    ``core``: the one core it keeps to, told and set as it starts (long before Blender sizes
    its thread pools), as a worker started ahead keeps to its own (scripts/rig_batch.py).
    """
    answers, told = os.pipe()
    environment = {**os.environ, WORKER_VARIABLE: str(told), **({CORE_VARIABLE: str(core)} if core is not None else {})}
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True,
                                   pass_fds=(told,), env=environment)
    except BaseException:
        os.close(answers)
        raise
    finally:
        os.close(told)
    # Read as its output was: the worker's answers, and none of what its Blender prints.
    process.stdout = open(answers, encoding="utf-8")
    if core is not None:
        try:
            os.sched_setaffinity(process.pid, {core})
        except OSError:  # gone already, or the core with it: it runs as it can
            pass
    return process


def _own_core(process: subprocess.Popen) -> int | None:
    """The one core a worker keeps to, if it keeps to one."""
    try:
        cores = os.sched_getaffinity(process.pid) if hasattr(os, "sched_getaffinity") else set()
    except OSError:
        return None
    return next(iter(cores)) if len(cores) == 1 else None


def _dismiss(workers: Iterable[subprocess.Popen]) -> None:
    """Stop workers that hold no file (started ahead, and not needed): none outlives the run."""
    workers = list(workers)
    for process in workers:
        if process.poll() is None:
            process.terminate()
    for process in workers:
        process.communicate()


def _largest_first(jobs: Sequence[Job]) -> list[tuple[int, Job]]:
    """The jobs with their indices, largest input first (input order among equals): the big files
    start early and the small ones fill the end, so no process waits long for the last file."""
    def size(item: tuple[int, Job]) -> int:
        try:
            return os.stat(item[1].input).st_size
        except OSError:
            return 0

    return sorted(enumerate(jobs), key=size, reverse=True)


@dataclass
class _Heard:
    """What a worker said of the file it was sent, short of its result: that it took it, and where it was
    putting it in place."""

    taken: bool = False
    placing: list[dict] = field(default_factory=list)


def _answer(process: subprocess.Popen, heard: _Heard) -> FileResult | None:
    """The worker's next result, or None when it is gone; what it said of the file meanwhile goes
    to ``heard``."""
    for line in _pipe(process.stdout):
        if line.startswith(_RESULT_MARK):
            return _result_from_json(json.loads(line[len(_RESULT_MARK):]))
        if line.startswith(_TAKEN_MARK):
            heard.taken = True
        elif line.startswith(_PLACING_MARK):
            heard.placing.append(json.loads(line[len(_PLACING_MARK):]))
    return None


class _Slot:
    """One of the pool's places for a worker, served by a thread of its own: one worker at a
    time, fed the next file whenever it is free. A worker that dies fails only the file it held,
    and a new one takes its place while files remain; after two that could not start in a row,
    the slot is given up and its share falls to the main process."""

    def __init__(self, pool: _Pool, first: subprocess.Popen | None) -> None:
        self.pool = pool
        self.first = first  # a worker started ahead, used before any other
        self.core: int | None = None  # the core this slot's workers keep to, if they keep to one

    def serve(self) -> None:
        failed_starts = 0
        while failed_starts < 2:
            process = self._next_worker()
            if process is None:
                return
            if not any(line.startswith(_READY_MARK) for line in _pipe(process.stdout)):
                process.wait()
                failed_starts += 1
                continue
            failed_starts = 0
            self.core = _own_core(process)
            if self._feed(process):
                return
        self.pool.answers.put(None)  # this worker could not start: its share falls to the main process

    def _next_worker(self) -> subprocess.Popen | None:
        """The worker started ahead, else a new one; None when no file is left for one."""
        first, self.first = self.first, None
        with self.pool.lock:
            if self.pool.stopping or not self.pool.pending:
                if first is not None:
                    _pipe(first.stdin).close()  # a worker started ahead that no file needs: it ends
                return None
        return first if first is not None else self.pool.start_worker(self.core)

    def _feed(self, process: subprocess.Popen) -> bool:
        """Feed ``process`` files until none is left (True: it has ended) or it dies (False)."""
        while (item := self.pool.take()) is not None:
            index, job = item
            heard = _Heard()
            try:
                _pipe(process.stdin).write(json.dumps(asdict(job)) + "\n")
                _pipe(process.stdin).flush()
            except OSError:
                result = None
            else:
                result = _answer(process, heard)
            if result is None:
                if not heard.taken and self.pool.give_back(index, job):  # gone before it took the file
                    process.wait()
                    return False
                self.pool.answers.put((index, self._lost(job, process, heard.placing)))
                return False
            self.pool.answers.put((index, result))
        _pipe(process.stdin).close()
        process.wait()
        return True

    def _lost(self, job: Job, process: subprocess.Popen, placing: list[dict]) -> FileResult:
        """The result of ``job`` when ``process`` died with it: rigged if the file it said it was
        putting in place (``placing``) is there, whole (it died before it could say so), else failed
        or interrupted."""
        code = process.wait()
        # A worker's own handler ends it with 128 + the signal for SIGINT and SIGTERM (from outside the run).
        signum = -code if code < 0 else code - 128 if code - 128 in (signal.SIGINT, signal.SIGTERM) else 0
        how = f"signal {signum}" if signum else f"exit code {code}"
        target = job.target
        placed = next((told["record"] for told in placing if file_place(target) == tuple(told["file"])), None)
        with self.pool.lock:
            clean_stale(target.parent)
        if placed is not None and not job.dry_run:
            return _placed(job, placed, how)
        if self.pool.stopping:
            return FileResult(job.input, job.output, status="interrupted", error="stopped by the interrupt")
        return FileResult(job.input, job.output, error=f"worker died ({how}) while rigging it")


def _placed(job: Job, record: dict, how: str) -> FileResult:
    """The result of ``job`` whose worker died (``how``) right after it put the file in place, whole:
    rigged as the worker recorded it before the move (``record``), with a note saying so; failed if
    the file's --export was still to be written."""
    try:
        result = _result_from_json(record)
    except (KeyError, ValueError, TypeError):  # not as this run's workers write it: what it rigged is not known
        result = FileResult(job.input, job.output)
    result.gather()
    result.status, result.error = "rigged", ""
    result.notes.append(f"its worker died ({how}) right after putting it in place: the file is there whole")
    if job.export:
        result.status = "failed"
        result.error = (f"rigged and saved, but not exported: its worker died ({how}) before writing "
                        "the export (run again with --overwrite to write it)")
    return result


class _Pool:
    """Worker Blenders, each started once and taking the next file whenever it is free
    (as does the main process, between its own files), the largest first.

    One thread per worker slot (``_Slot``) feeds it and reads its answers, so no worker waits
    for another. Workers started ahead (``ready``, by the entry script while this Blender
    loaded) are used first.
    """

    def __init__(self, command: list[str], count: int, jobs: Sequence[Job],
                 ready: Sequence[subprocess.Popen] = ()) -> None:
        self.command = command
        self.pending = deque(_largest_first(jobs))
        self.answers: queue.Queue[_Answer] = queue.Queue()
        self.lock = threading.Lock()
        self.stopping = False
        self.given_back: set[int] = set()
        self.processes: list[subprocess.Popen] = list(ready[:count])
        firsts = [*self.processes, *[None] * (count - len(self.processes))]
        self.threads = [threading.Thread(target=_Slot(self, first).serve, daemon=True) for first in firsts]
        for thread in self.threads:
            thread.start()

    def take(self) -> tuple[int, Job] | None:
        with self.lock:
            return None if self.stopping or not self.pending else self.pending.popleft()

    def give_back(self, index: int, job: Job) -> bool:
        """Put back first in line a file whose worker died before it took it; once a file, and not
        while stopping: False then, and the file is that worker's."""
        with self.lock:
            if self.stopping or index in self.given_back:
                return False
            self.given_back.add(index)
            self.pending.appendleft((index, job))
            return True

    def start_worker(self, core: int | None) -> subprocess.Popen:
        process = _start_worker(self.command, core)
        with self.lock:
            self.processes.append(process)
        return process

    def collect(self, record: Callable[[int, FileResult], None], *, wait: Callable[[], bool]) -> None:
        """Record the results that came in; while ``wait()`` says so, wait for more (until no worker is left).

        An interrupt waits while a result is taken and recorded, so none is dropped
        between the two.
        """
        while True:
            with interrupts_held():
                try:
                    answer = self.answers.get(timeout=0.2) if wait() else self.answers.get_nowait()
                except queue.Empty:
                    if not wait() or (not any(thread.is_alive() for thread in self.threads)
                                      and self.answers.empty()):
                        return
                    continue
                if answer is not None:
                    record(*answer)

    def stop(self) -> None:
        """Stop every worker (SIGTERM: each removes its temporary file), then make sure they are gone."""
        with self.lock:
            self.stopping = True
            processes = list(self.processes)
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for thread in self.threads:
            thread.join(timeout=30)
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    def leftover(self) -> Iterable[tuple[int, FileResult]]:
        """Answers that came in while stopping."""
        while not self.answers.empty():
            answer = self.answers.get()
            if answer is not None:
                yield answer
