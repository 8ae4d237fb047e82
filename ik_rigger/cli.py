"""The batch command: rig folders of characters headless, safely, with a report.

One code path, three ways in:

- ``blender --background --factory-startup --python scripts/rig_batch.py -- ARGS``
- ``blender --command ik_rigger ARGS`` with the extension installed
- ``scripts/rig_batch.sh ARGS`` with the project's own ``bpy``

Exit codes: 0 every file rigged (or planned, with --dry-run), 1 any file failed or was
skipped, 2 a usage error (bad arguments or config, an unwritable report or --out folder;
nothing was opened), 130 or 143 stopped by SIGINT or SIGTERM (the report says what was
done and what was not).
"""

from __future__ import annotations

import argparse
import difflib
import glob
import json
import os
import queue
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import IO, NoReturn

from .core.config import Config, Schema, load_config, option_specs, spec_of
from .core.errors import RigError
from .core.options import BOTH_SIDES
from .rig.files import (
    IMPORTERS,
    INPUT_FORMATS,
    ArmatureResult,
    FileResult,
    Interrupted,
    Job,
    clean_stale,
    clean_stale_scratch,
    importer_options,
    input_format,
    interrupt,
    interrupts_held,
    new_result,
    new_scratch,
    private_folder,
    rig_file,
    save_atomically,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_RESULT_MARK = "IK-RIGGER-RESULT "
_READY_MARK = "IK-RIGGER-READY"
# A worker's answers channel: the descriptor of the pipe its starter passed on (see answers_channel).
WORKER_VARIABLE = "IK_RIGGER_BATCH_ANSWERS"
_USAGE = ("usage: ik_rigger [OPTIONS] [--] FILE|FOLDER|GLOB... (--out DIR | --in-place | --dry-run) [--overwrite] "
          "[--config FILE] [--armature NAME] [--allow-newer] [--animation bake|fk|ignore] "
          "[--jobs N | --scheduler ADDRESS] [--report FILE.json] [--quiet | --verbose]; --help says more")


class UsageError(Exception):
    """Bad arguments: exit code 2 before any file is opened."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit the whole Blender
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    usage = _Parser(prog="ik_rigger", allow_abbrev=False, description="Rig the legs and arms of characters in "
                    ".blend, .fbx, .glb/.gltf and .bvh files. After '--' every argument is an input, whatever "
                    "its name.")
    usage.add_argument("inputs", nargs="*", help="files, folders (searched recursively) and globs")
    usage.add_argument("--out", type=Path, help="folder for the rigged .blend files (never searched for inputs)")
    usage.add_argument("--overwrite", action="store_true", help="replace files that already exist under --out")
    usage.add_argument("--in-place", action="store_true", help="overwrite the .blend inputs, keeping a .blend1 "
                       "backup (through a symbolic link, the file it points to)")
    usage.add_argument("--config", type=Path, help="TOML file naming limbs, options and importer settings")
    usage.add_argument("--armature", help="rig only the armature object of this name")
    usage.add_argument("--allow-newer", action="store_true",
                       help="rig files saved by a newer Blender (saving them here loses what it does not know)")
    usage.add_argument("--animation", choices=("bake", "fk", "ignore"),
                       help="motion already on an armature: bake it onto the new IK controls (the default), "
                       "leave the limbs playing it in FK, or ignore it; over the config's setting")
    usage.add_argument("--dry-run", action="store_true", help="print what would be rigged; write nothing")
    usage.add_argument("--jobs", type=int, default=1,
                       help="files rigged at once: by this Blender and N-1 worker Blenders, each taking many files "
                       "(with 1, by one worker: a Blender that crashes on a file fails that file alone)")
    usage.add_argument("--scheduler", metavar="ADDRESS", help="rig on the Dask cluster of this scheduler "
                       "(tcp://HOST:PORT), one task per file; see docs/farm.md")
    usage.add_argument("--report", type=Path, help="write a JSON report here")
    told = usage.add_mutually_exclusive_group()
    told.add_argument("--quiet", "-q", action="store_true", help="print only errors, warnings and the summary")
    told.add_argument("--verbose", "-v", action="store_true",
                      help="also print every note: what was done to each file (the motion kept, the bones turned)")
    return usage


def _split(argv: Sequence[str], usage: argparse.ArgumentParser) -> tuple[list[str], list[str]]:
    """The option arguments (a value joined to its option) and the inputs, apart.

    ``--`` ends the options: after it every argument is an input. Before any input, an
    argument that looks like an option but names a file here (a file called
    ``--overwrite`` that a ``*`` handed over) is refused: the run cannot tell which was
    meant. After the first input, such a file is an input.
    """
    actions = {name: action for action in usage._actions for name in action.option_strings}
    options: list[str] = []
    inputs: list[str] = []
    arguments = list(argv)
    while arguments:
        argument = arguments.pop(0)
        if argument == "--":
            inputs.extend(arguments)
            break
        name = argument.split("=", 1)[0] if argument.startswith("-") and argument != "-" else None
        if name is None or (inputs and os.path.lexists(argument)):
            inputs.append(argument)
            continue
        if os.path.lexists(argument):
            raise UsageError(f"'{argument}' is an option and a file here: write './{argument}' for the file, "
                             "or give files after '--'")
        if name not in actions:
            close = difflib.get_close_matches(name, sorted(actions), n=1)
            guess = f" (did you mean '{close[0]}'?)" if close else ""
            raise UsageError(f"unrecognized arguments: {name}{guess}")
        if actions[name].nargs is None and "=" not in argument:  # an option that takes a value
            if not arguments:
                raise UsageError(f"{name} needs a value")
            argument = f"{name}={arguments.pop(0)}"
        options.append(argument)
    return options, inputs


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """The command line as options and inputs (see ``_split``); a mistake is a ``UsageError``."""
    usage = parser()
    options, inputs = _split(argv, usage)
    args = usage.parse_args(options)
    args.inputs = inputs
    for name in ("--out", "--report", "--config", "--armature"):
        if f"{name}=" in options:
            raise UsageError(f"{name} is empty: give " + ("an armature object's name" if name == "--armature"
                                                          else "a path"))
    return args


def config_schema() -> Schema:
    """What a config may say: the build options and a limb's ``both_sides``, from their one declaration, and
    each importer's own settings."""
    return Schema(option_specs(), spec_of(BOTH_SIDES),
                  formats=tuple(sorted(IMPORTERS)), importer=importer_options)


@dataclass
class Inputs:
    """What the input arguments name: files to rig, paths that fail as they are, and what was left out."""

    found: list[tuple[Path, Path]] = field(default_factory=list)  # (file, path under --out)
    failed: list[FileResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _inside(path: Path, folder: Path | None) -> bool:
    return folder is not None and (path == folder or folder in path.parents)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _add_file(path: Path, relative: Path, inputs: Inputs, out: Path | None) -> None:
    """One candidate input: taken, failed with why, or left out with why.

    ``out`` is the --out folder when searching (folders and globs); a file named on
    the command line is always taken.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        broken = path.is_symlink()
        inputs.failed.append(FileResult(str(path), None, error=f"'{path}' " + (
            "is a broken symbolic link" if broken else "does not exist")))
        return
    except OSError as error:
        inputs.failed.append(FileResult(str(path), None, error=f"'{path}': {error.strerror or error}"))
        return
    if not stat.S_ISREG(mode):
        inputs.failed.append(FileResult(str(path), None, error=f"'{path}' is {_kind(mode)}, not a file"))
        return
    if _inside(Path(os.path.realpath(path)), out):
        inputs.notes.append(f"not an input: '{path}' is inside the --out folder")
        return
    inputs.found.append((path, relative))


def _walk(top: Path, inputs: Inputs, out: Path | None) -> None:
    """Every input under ``top``, following links once; unreadable folders fail, loops are said."""
    visited: set[tuple[int, int]] = set()

    def unreadable(error: OSError) -> None:
        inputs.failed.append(FileResult(str(error.filename), None,
                                        error=f"cannot search folder '{error.filename}' ({error.strerror})"))

    for folder, folders, files in os.walk(top, onerror=unreadable, followlinks=True):
        here = Path(folder)
        identity = os.stat(here)
        visited.add((identity.st_dev, identity.st_ino))
        kept = []
        for name in sorted(folders):
            child = here / name
            real = Path(os.path.realpath(child))
            try:
                child_stat = os.stat(child)
            except OSError as error:
                inputs.failed.append(FileResult(str(child), None, error=f"'{child}': {error.strerror or error}"))
                continue
            if _inside(real, out):
                inputs.notes.append(f"not searched: '{child}' is the --out folder or inside it")
            elif (child_stat.st_dev, child_stat.st_ino) in visited:  # walking top-down, ancestors are in
                inputs.notes.append(f"not searched again: '{child}' links back to '{real}' (a loop)")
            else:
                kept.append(name)
        folders[:] = kept
        for name in sorted(files):
            path = here / name
            if input_format(path) is not None:
                _add_file(path, path.relative_to(top), inputs, out)


def expand_inputs(arguments: Sequence[str], out: Path | None = None) -> Inputs:
    """The input files the arguments name, each with its path under --out.

    A missing path or a glob that matches nothing fails as a file rather than being
    dropped; nothing under ``out`` is ever taken.
    """
    inputs = Inputs()
    real_out = Path(os.path.realpath(out)) if out is not None else None
    for text in arguments:
        path = Path(text)
        try:
            folder = stat.S_ISDIR(os.stat(path).st_mode)
        except FileNotFoundError:
            folder = False
        except OSError as error:  # in a folder it may not enter: that file fails, the run goes on
            inputs.failed.append(FileResult(text, None, error=f"'{text}': {error.strerror or error}"))
            continue
        if folder:
            if _inside(Path(os.path.realpath(path)), real_out):
                inputs.notes.append(f"not searched: '{path}' is the --out folder or inside it")
            else:
                _walk(path, inputs, real_out)
        elif any(mark in text for mark in "*?[") and not path.exists():
            matches = [Path(match) for match in sorted(glob.glob(text, recursive=True))]
            files = [match for match in matches if not match.is_dir()]
            for match in files:
                _add_file(match, Path(match.name), inputs, real_out)
            if not files:
                inputs.failed.append(FileResult(text, None, error=f"'{text}' matches no file"))
        else:
            _add_file(path, Path(path.name), inputs, None)
    return inputs


def _output(relative: Path, out: Path) -> Path:
    """Where one input's rigged file goes: imported formats become .blend files."""
    return out / (relative if input_format(relative) == "blend" else relative.with_suffix(".blend"))


def _writable(folder: Path, what: str) -> None:
    """Refuse a folder this run could not write in, before any file is touched."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"cannot write the {what} in '{folder}': '{existing}' is not a folder")
    try:
        private_folder(existing).rmdir()
    except OSError as error:
        raise UsageError(f"cannot write the {what} in '{folder}' ({error.strerror or error})") from error


def _out_apart(out: Path, arguments: Sequence[str]) -> None:
    """Refuse an --out folder that is an input folder or inside one: its outputs would sit among
    the inputs, and the report with them."""
    real_out = Path(os.path.realpath(out))
    for text in arguments:
        if os.path.isdir(text) and _inside(real_out, Path(os.path.realpath(text))):
            raise UsageError(f"--out '{out}' is the input folder '{text}' or inside it: give a folder "
                             "outside the inputs")


def plan_jobs(args: argparse.Namespace) -> tuple[list[Job], Inputs]:
    """The files to rig and where each result goes; refuses clashing outputs and a report in the way."""
    if not args.inputs:
        raise UsageError("give at least one input file, folder or glob")
    if args.in_place and args.out:
        raise UsageError("--out and --in-place exclude each other")
    if not (args.in_place or args.out or args.dry_run):
        raise UsageError("say where results go: --out DIR (inputs stay untouched) or --in-place")
    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if args.out is not None:
        _out_apart(args.out, args.inputs)
    inputs = expand_inputs(args.inputs, None if args.in_place else args.out)
    jobs: list[Job] = []
    outputs: dict[Path, Path] = {}
    for source, relative in inputs.found:
        target = source if args.in_place or args.out is None else _output(relative, args.out)
        key = Path(os.path.realpath(target))
        if key in outputs:
            if args.in_place:  # the same file reached twice (a link and its target): rig it once
                inputs.notes.append(f"'{source}' is the same file as '{outputs[key]}': rigged once")
                continue
            raise UsageError(f"'{outputs[key]}' and '{source}' would both be written to '{target}'")
        outputs[key] = source
        jobs.append(Job(str(source), str(target), in_place=args.in_place, dry_run=args.dry_run,
                        overwrite=args.overwrite, allow_newer=args.allow_newer, armature=args.armature))
    if args.report is not None:
        report = Path(os.path.realpath(args.report))
        taken = {Path(os.path.realpath(source)) for source, _ in inputs.found} | set(outputs)
        if args.config is not None:
            taken.add(Path(os.path.realpath(args.config)))
        if report in taken or report.is_dir():
            raise UsageError(f"--report '{args.report}' is an input, an output or a folder: "
                             "it would be overwritten; give another file")
        _writable(report.parent, "report")
    if args.out is not None and not args.dry_run:
        _writable(args.out, "rigged files")
    return jobs, inputs


def _result_from_json(data: dict) -> FileResult:
    armatures = [ArmatureResult(**entry) for entry in data.pop("armatures")]
    return FileResult(**data, armatures=armatures)


class _Stop:
    """The first SIGINT or SIGTERM: remembered, and raised as ``Interrupted`` once.

    Later ones are let go, so the clean stop (workers, report) is never cut short.
    """

    def __init__(self) -> None:
        self.signum = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.signum:
            return
        self.signum = signum
        interrupt(signum)

    def install(self) -> Callable[[], None]:
        previous = {number: signal.signal(number, self) for number in (signal.SIGINT, signal.SIGTERM)}

        def restore() -> None:
            for number, handler in previous.items():
                signal.signal(number, handler)

        return restore


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
        _send(channel, _READY_MARK)
        for line in sys.stdin:
            if not line.strip():
                continue
            job = Job(**json.loads(line))
            result = new_result(job)
            try:
                rig_file(job, config, result)
            finally:
                # A file saved before the signal is told, whole: the main process must know.
                if result.status == "rigged" or not stop.signum:
                    with interrupts_held():
                        _send(channel, _RESULT_MARK + json.dumps(asdict(result)))
            if stop.signum:
                break
    except Interrupted:
        pass
    return 128 + stop.signum if stop.signum else EXIT_OK


def _pipe(stream: IO[str] | None) -> IO[str]:
    """A worker's pipe; Popen was asked for it, so it is there."""
    assert stream is not None
    return stream


_Answer = tuple[int, FileResult] | None


def _start_worker(command: list[str], core: int | None = None) -> subprocess.Popen:
    """One worker Blender, in a session of its own: a Ctrl-C on the terminal reaches only the
    main process, which stops the workers itself, knowing which file each one holds.

    ``core``: the one core it keeps to, set as it starts (long before Blender sizes its
    thread pools), as a worker started ahead keeps to its own (scripts/rig_batch.py).
    """
    answers, told = os.pipe()
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True,
                                   pass_fds=(told,), env={**os.environ, WORKER_VARIABLE: str(told)})
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


class _Pool:
    """Worker Blenders, each started once and taking the next file whenever it is free
    (as does the main process, between its own files), the largest first.

    One thread per worker feeds it and reads its answers, so no worker waits for another.
    A worker that dies fails only the file it held ("worker died"), and a new one takes
    its place while files remain. Workers started ahead (``ready``, by the entry script
    while this Blender loaded) are used first.
    """

    def __init__(self, command: list[str], count: int, jobs: Sequence[Job],
                 ready: Sequence[subprocess.Popen] = ()) -> None:
        self.command = command
        self.pending = deque(_largest_first(jobs))
        self.answers: queue.Queue[_Answer] = queue.Queue()
        self.lock = threading.Lock()
        self.stopping = False
        self.processes: list[subprocess.Popen] = list(ready[:count])
        firsts = [*self.processes, *[None] * (count - len(self.processes))]
        self.threads = [threading.Thread(target=self._serve, args=(first,), daemon=True) for first in firsts]
        for thread in self.threads:
            thread.start()

    def take(self) -> tuple[int, Job] | None:
        with self.lock:
            return None if self.stopping or not self.pending else self.pending.popleft()

    def _start(self, core: int | None) -> subprocess.Popen:
        process = _start_worker(self.command, core)
        with self.lock:
            self.processes.append(process)
        return process

    def _answer(self, process: subprocess.Popen) -> FileResult | None:
        """The worker's next result, or None when it is gone."""
        for line in _pipe(process.stdout):
            if line.startswith(_RESULT_MARK):
                return _result_from_json(json.loads(line[len(_RESULT_MARK):]))
        return None

    def _lost(self, job: Job, process: subprocess.Popen) -> FileResult:
        code = process.wait()
        clean_stale(Path(job.output).parent)
        if self.stopping:
            return FileResult(job.input, job.output, status="interrupted", error="stopped by the interrupt")
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return FileResult(job.input, job.output, error=f"worker died ({how}) while rigging it")

    def _serve(self, first: subprocess.Popen | None) -> None:
        failed_starts = 0
        core = None  # the core this slot's workers keep to, if they keep to one
        while failed_starts < 2:
            with self.lock:
                if self.stopping or not self.pending:
                    if first is not None:
                        _pipe(first.stdin).close()  # a worker started ahead that no file needs: it ends
                    return
            process = first if first is not None else self._start(core)
            first = None
            if not any(line.startswith(_READY_MARK) for line in _pipe(process.stdout)):
                process.wait()
                failed_starts += 1
                continue
            failed_starts = 0
            core = _own_core(process)
            while (item := self.take()) is not None:
                index, job = item
                try:
                    _pipe(process.stdin).write(json.dumps(asdict(job)) + "\n")
                    _pipe(process.stdin).flush()
                except OSError:
                    result = None
                else:
                    result = self._answer(process)
                if result is None:
                    self.answers.put((index, self._lost(job, process)))
                    break
                self.answers.put((index, result))
            else:
                _pipe(process.stdin).close()
                process.wait()
                return
        self.answers.put(None)  # this worker could not start: its share falls to the main process

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


class Progress:
    """A bar on a terminal, one line per file otherwise; ``quiet``, only the files that failed."""

    def __init__(self, total: int, quiet: bool = False) -> None:
        self.total = total
        self.done = 0
        self.tty = sys.stderr.isatty()
        self.quiet = quiet

    def update(self, result: FileResult) -> None:
        self.done += 1
        if self.quiet:
            if result.status in ("failed", "interrupted"):
                print(_line(result), flush=True)
        elif self.tty:
            width = 30
            filled = width * self.done // max(self.total, 1)
            name = Path(result.input).name
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {name[:40]:40}")
            if result.status in ("failed", "interrupted"):
                sys.stderr.write(f"\n{_line(result)}\n")
            elif self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
        else:
            print(f"[{self.done}/{self.total}] {_line(result)}", flush=True)

    def finish(self) -> None:
        if self.tty and not self.quiet and 0 < self.done < self.total:
            sys.stderr.write("\n")


def _line(result: FileResult) -> str:
    if result.status in ("failed", "interrupted", "not started"):
        return f"{result.status.upper()} {result.input}: {result.error}"
    if result.status == "planned":
        return f"planned {result.input}\n" + "\n".join(
            f"  {armature.name}: {plan}" for armature in result.armatures for plan in armature.planned)
    limbs = "; ".join(f"{armature.name}: " + ", ".join(" > ".join(chain) for chain in armature.limbs)
                      for armature in result.armatures if armature.limbs)
    timing = result.seconds_open + result.seconds_rig + result.seconds_save
    return f"rigged {result.input} -> {result.output} ({limbs}; {timing:.2f} s)"


_STATUSES = ("rigged", "planned", "failed", "interrupted", "not started")


def summary(results: list[FileResult], inputs: Inputs, seconds: float, told: str = "normal") -> str:
    """The run's last lines: the counts, the errors, what was skipped, the warnings, and the notes ``told``
    asks for (``quiet``: none; ``normal``: the run's own, on its inputs; ``verbose``: also every file's)."""
    counts = {status: sum(1 for result in results if result.status == status) for status in _STATUSES}
    rigged = [result for result in results if result.status == "rigged"]  # a failed save rigged nothing
    limbs = sum(result.limb_count for result in rigged)
    armatures = sum(1 for result in rigged for armature in result.armatures if armature.limbs)
    lines = [f"{len(results)} file(s) in {seconds:.1f} s: {counts['rigged']} rigged ({limbs} limbs on "
             f"{armatures} armature(s)), " + ", ".join(f"{counts[status]} {status}" for status in _STATUSES[1:]
                                                      if counts[status] or status in ("planned", "failed"))]
    lines.extend(f"  {result.status}: {result.input}: {result.error}" for result in results
                 if result.status in ("failed", "interrupted"))
    if counts["not started"]:
        lines.append(f"  not started: {counts['not started']} file(s) (listed in the report)")
    skipped = [f"  skipped in {Path(result.input).name} ({armature.name}): {reason}"
               for result in results for armature in result.armatures for reason in armature.skipped]
    lines.extend(skipped[:20])
    if len(skipped) > 20:
        lines.append(f"  ... and {len(skipped) - 20} more skipped (see the JSON report)")
    lines.extend(f"  warning: {Path(result.input).name}: {warning}" for result in results
                 for warning in result.warnings)
    lines.extend(f"  warning: {warning}" for warning in inputs.warnings)
    if told != "quiet":
        lines.extend(f"  note: {note}" for note in inputs.notes)
    if told == "verbose":
        lines.extend(f"  note: {Path(result.input).name}: {note}" for result in results for note in result.notes)
    return "\n".join(lines)


def _worker_arguments(args: argparse.Namespace) -> list[str]:
    return ([f"--config={args.config}"] if args.config else []) + (
        [f"--animation={args.animation}"] if args.animation else [])


def _write_report(path: Path, report: dict) -> None:
    def write(temporary: Path) -> None:
        temporary.write_text(json.dumps(report, indent=2), encoding="utf-8")

    path.parent.mkdir(parents=True, exist_ok=True)
    save_atomically(path, write, keep_backup=False)


# What a terminal would act on rather than show: control characters (escape sequences, BEL,
# a newline that would start a line of its own), the marks that reorder text, and the
# lone surrogates a name that is not UTF-8 decodes to.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                         "\ud800-\udfff]")


def shown(text: str) -> str:
    """``text`` as a terminal may print it: what it would act on, as escapes (``\\x1b``, ``\\n``)."""
    return _UNSHOWABLE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def printable(result: FileResult) -> FileResult:
    """``result`` with every name and message escaped for the terminal (``shown``); the report
    keeps the original."""
    armatures = [replace(entry, name=shown(entry.name), limbs=[[shown(bone) for bone in chain]
                                                               for chain in entry.limbs],
                         planned=[shown(plan) for plan in entry.planned],
                         skipped=[shown(reason) for reason in entry.skipped],
                         warnings=[shown(warning) for warning in entry.warnings],
                         notes=[shown(note) for note in entry.notes])
                 for entry in result.armatures]
    return replace(result, input=shown(result.input), output=None if result.output is None else shown(result.output),
                   error=shown(result.error), details="\n".join(shown(line) for line in result.details.split("\n")),
                   warnings=[shown(warning) for warning in result.warnings],
                   notes=[shown(note) for note in result.notes], armatures=armatures)


def _shown_inputs(inputs: Inputs) -> Inputs:
    """``inputs``' warnings and notes escaped for the terminal (``shown``)."""
    return replace(inputs, warnings=[shown(warning) for warning in inputs.warnings],
                   notes=[shown(note) for note in inputs.notes])


def _usage(message: str) -> int:
    print(f"ik_rigger: {shown(message)}", file=sys.stderr)
    print(_USAGE, file=sys.stderr)
    return EXIT_USAGE


class _Unread:
    """A terminal stream whose reader may go away (``| head``): from then on it writes nowhere,
    and the run goes on to its report instead of ending in a broken pipe."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._drop()

    def _drop(self) -> None:
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, self.stream.fileno())
        os.close(nowhere)

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def _open_standard_streams() -> None:
    """A process started with its output closed (by a daemon, by ``>&-``) writes into nothing
    instead: Blender's own lines, which the batch reads off its output, and the batch's."""
    for descriptor, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(descriptor)
        except OSError:
            nowhere = os.open(os.devnull, os.O_WRONLY)  # the lowest free descriptor: this one
            if nowhere != descriptor:
                os.dup2(nowhere, descriptor)
                os.close(nowhere)
        if getattr(sys, name) is None:
            setattr(sys, name, open(descriptor, "w", closefd=False))


def _tolerant_terminal(worker: bool) -> Callable[[], None]:
    """Let the terminal show what its encoding cannot as escapes (``\u5de6``), not fail: a file or
    bone named in Japanese on a Latin-1 terminal must not stop a run. Outside a worker (whose
    output is the run's own channel), a reader that goes away silences the run, never stops it.
    Returns how to undo both."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        errors = getattr(stream, "errors", None)
        if errors == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
            changed.append(stream)
    streams = sys.stdout, sys.stderr
    if not worker:
        sys.stdout, sys.stderr = _Unread(sys.stdout), _Unread(sys.stderr)  # type: ignore[assignment]

    def undo() -> None:
        sys.stdout, sys.stderr = streams
        for stream in changed:
            stream.reconfigure(errors="strict")

    return undo


def _current_folder_told() -> None:
    """Make $PWD this process's working folder: Blender resolves a relative path against $PWD when
    set, and a process started in another folder (``cwd=`` of a subprocess) can inherit a stale
    one, which would open the other tree's file of that name."""
    try:
        os.environ["PWD"] = os.getcwd()
    except OSError:  # a working folder that was removed: relative inputs fail on their own
        pass


def main(argv: Sequence[str], worker_command: list[str], ready: Sequence[subprocess.Popen] = (),
         scratch: Path | None = None) -> int:
    """Run the batch command with ``argv``; ``worker_command`` starts one worker Blender.

    ``ready``: workers already started with ``argv`` (see scripts/rig_batch.py): the run
    takes those it needs and stops the others, whatever happens; workers it starts itself
    (more, or in place of one that died) get only the options a worker reads.
    ``scratch``: the run's temporary folder, made before Blender loaded (see
    files.SCRATCH_PREFIX); the run makes it otherwise. Every worker keeps its temporary
    files there, and the run removes it at its end, with what any worker left.
    """
    try:
        channel = answers_channel()
    except UsageError as error:
        _dismiss(ready)
        return _usage(str(error))
    stop = _Stop()
    restore = stop.install()
    spare = list(ready)
    worker = channel is not None
    _open_standard_streams()
    tolerated = _tolerant_terminal(worker)
    system_temp = os.environ.get("TMPDIR")
    _current_folder_told()
    try:
        if not worker:
            scratch = scratch or new_scratch()
            clean_stale_scratch(scratch.parent)
            os.environ["TMPDIR"] = str(scratch)  # for the workers this process starts
        return _main(argv, worker_command, stop, spare, channel)
    except Interrupted:
        print("ik_rigger: interrupted before any file was opened", file=sys.stderr)
        return 128 + stop.signum
    finally:
        _dismiss(spare)
        if not worker and scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
            if system_temp is None:
                del os.environ["TMPDIR"]
            else:
                os.environ["TMPDIR"] = system_temp
        tolerated()
        restore()


def _main(argv: Sequence[str], worker_command: list[str], stop: _Stop, spare: list[subprocess.Popen],
          channel: IO[str] | None) -> int:
    try:
        args = parse_arguments(argv)
        config = load_config(args.config, config_schema()) if args.config else Config()
        if args.animation:
            config = config.with_animation(args.animation.upper())
        if channel is not None:
            return run_worker(config, stop, channel)
        if args.scheduler:
            from . import farm

            return farm.submit(args, config, stop)
        jobs, inputs = plan_jobs(args)
        inputs.notes.extend(config.notes)
    except UsageError as error:
        return _usage(str(error))
    except RigError as error:
        return _usage(error.message)
    started = time.perf_counter()
    for folder in sorted({Path(job.output).parent for job in jobs if not job.dry_run}):
        inputs.notes.extend(f"removed '{path}', left by a run that was killed" for path in clean_stale(folder))
    progress = Progress(len(jobs), quiet=args.quiet)
    count = min(args.jobs, len(jobs))
    if count > 1 and not worker_command:
        print("ik_rigger: no way to start worker Blenders here; rigging in this process", file=sys.stderr)
        count = 1
    results: dict[int, FileResult] = {}
    started_files: dict[int, FileResult] = {}
    # This process rigs too, from the start (one process per core with --jobs at the core
    # count): the workers join when their Blender has started. One file at a time is rigged
    # by a worker all the same: a Blender that crashes on a file (one rewritten while it is
    # read) then fails that file alone, and the run goes on to its report.
    alone = count == 1 and bool(worker_command)
    workers = 1 if alone else count - 1
    pool = None
    if workers:
        ready = [spare.pop() for _ in range(min(workers, len(spare)))]
        pool = _Pool(worker_command + _worker_arguments(args), workers, jobs, ready)
    _dismiss(spare)  # those no file needs: not left waiting through the run
    spare.clear()
    queued = deque(enumerate(jobs))
    take = pool.take if pool is not None else lambda: queued.popleft() if queued else None

    def record(index: int, result: FileResult) -> None:
        if stop.signum and result.status == "failed":  # what the interrupt cut short is not the file's fault
            result.status, result.error = "interrupted", "stopped by the interrupt"
        results[index] = result
        progress.update(printable(result))

    def rig_here() -> None:
        while not stop.signum and (item := take()) is not None:
            index, job = item
            started_files[index] = new_result(job)
            record(index, rig_file(job, config, started_files[index]))
            if pool is not None:
                pool.collect(record, wait=lambda: False)

    try:
        if not alone:
            rig_here()
        if pool is not None:
            pool.collect(record, wait=lambda: len(results) < len(jobs) and not stop.signum)
        rig_here()  # what a worker that could not start left
    except Interrupted:
        pass
    finally:
        if pool is not None:
            pool.stop()
            for index, result in pool.leftover():
                results.setdefault(index, result)
        progress.finish()
    return conclude(args, jobs, inputs, results, started_files, started, stop, {
        "jobs": count, "workers_started": len(pool.processes) if pool is not None else 0})


def conclude(args: argparse.Namespace, jobs: Sequence[Job], inputs: Inputs, results: dict[int, FileResult],
             started_files: Mapping[int, FileResult], started: float, stop: _Stop, how: dict) -> int:
    """The end of a run, however its files were rigged: every job's result (those the interrupt
    cut short or never started said so), the summary, the report (with ``how`` it ran) and the
    exit code."""
    for index, job in enumerate(jobs):
        if index in started_files and index not in results:  # the file the interrupt came during
            results[index] = started_files[index]
            if results[index].status != "rigged":
                results[index].status, results[index].error = "interrupted", "stopped by the interrupt"
        elif index not in results:
            results[index] = FileResult(job.input, job.output, status="not started",
                                        error="not started: the run was interrupted")
    ordered = inputs.failed + [results[index] for index in range(len(jobs))]
    if not ordered:
        inputs.warnings.append("no input files found (" + ", ".join(sorted(INPUT_FORMATS)) + ")")
    seconds = time.perf_counter() - started
    told = "quiet" if args.quiet else "verbose" if args.verbose else "normal"
    text = summary([printable(result) for result in ordered], _shown_inputs(inputs), seconds, told)
    print(text, flush=True)
    for result in ordered:
        if result.details:
            print(f"ik_rigger: {printable(result).input}:\n{printable(result).details}", file=sys.stderr)
    code = 128 + stop.signum if stop.signum else \
        EXIT_OK if ordered and all(result.status in ("rigged", "planned") for result in ordered) else EXIT_FAILED
    report = {"files": [asdict(result) for result in ordered], "warnings": inputs.warnings, "notes": inputs.notes,
              "summary": text, "seconds": seconds, **how, "exit_code": code,
              "interrupted_by": signal.Signals(stop.signum).name if stop.signum else None}
    try:
        if args.report:
            _write_report(args.report, report)
    except OSError as error:
        print(f"ik_rigger: cannot write the report '{shown(str(args.report))}' ({error.strerror or error})",
              file=sys.stderr)
        code = code or EXIT_FAILED
    return code


def worker_command_for(script: Path | None) -> list[str]:
    """How to start one more of this Blender as a worker; empty when there is no way.

    As the PyPI module: this Python with the entry script. As a Blender binary:
    that binary in the background, with the entry script or the installed command.
    """
    import bpy

    binary = bpy.app.binary_path
    if not binary or Path(binary).resolve() == Path(sys.executable).resolve():
        return [sys.executable, str(script)] if script else []
    if script:
        return [binary, "--background", "--factory-startup", "--python", str(script), "--"]
    return [binary, "--background", "--command", "ik_rigger"]


def command(argv: list[str]) -> int:
    """``blender --command ik_rigger ...``: the extension's registered command line."""
    return main(argv, worker_command_for(None))
