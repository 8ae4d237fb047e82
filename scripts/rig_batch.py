"""Batch-rig characters headless: the entry script for Blender and for the project's bpy.

    blender --background --factory-startup --python scripts/rig_batch.py -- ARGS
    scripts/rig_batch.sh ARGS             (the project's own bpy; sets it up first)

ARGS: input files (.blend, .fbx, .glb/.gltf, .bvh), folders and globs; --out DIR [--overwrite] |
--in-place | --dry-run; --config FILE.toml; --armature NAME; --allow-newer; --animation MODE;
--jobs N; --report FILE.json; --quiet | --verbose (errors and warnings only, or every note too).
After ``--``, every argument is an input. See docs/batch.md.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_JOBS = re.compile(r"^--jobs(?:=(.*))?$")


def _jobs_asked(argv: list[str]) -> int:
    """The --jobs value as written (``--jobs N`` or ``--jobs=N``; the last one counts), else 1."""
    jobs = 1
    for index, argument in enumerate(argv):
        match = _JOBS.match(argument)
        if match is None:
            continue
        value = match.group(1) if match.group(1) is not None else (argv[index + 1] if index + 1 < len(argv) else "")
        jobs = int(value) if value.isdigit() else 1
    return jobs


# The core a worker started ahead keeps to, or only loads Blender on (see keep_to_one_core).
_CORE_VARIABLE = "IK_RIGGER_BATCH_CORE"
_LOAD_CORE_VARIABLE = "IK_RIGGER_BATCH_LOAD_CORE"
# What makes a process a worker, and where its answers go: ik_rigger.batch.pool.WORKER_VARIABLE.
_WORKER_VARIABLE = "IK_RIGGER_BATCH_ANSWERS"


def is_worker() -> bool:
    """Whether a run started this process as one of its workers (see batch.pool.answers_channel)."""
    return _WORKER_VARIABLE in os.environ


def command_line() -> list[str]:
    """The batch command's arguments: as the PyPI module, all of them; in a Blender binary,
    those after Blender's own ``--`` (a later ``--`` is the user's, ending the options)."""
    if "bpy" not in sys.modules:
        return sys.argv[1:]
    return sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []


def _cores() -> list[int]:
    """The cores this process may run on, in order."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _one_per_core(argv: list[str], cores: list[int]) -> bool:
    """Whether the run asks for exactly one process per core (more is the user's to schedule)."""
    return len(cores) > 1 and _jobs_asked(argv) == len(cores)


def workers_ahead(argv: list[str]) -> list[subprocess.Popen]:
    """With --jobs N, start up to N - 1 worker Blenders (at most one per other core; one with
    --jobs 1) before this process loads Blender, so that their start-up and this one's overlap
    rather than follow each other.

    Only as the PyPI module, where Blender is not loaded yet. Each worker is given the
    whole command line, so it reads the same config and options as this process; the
    batch command takes them over, or stops those it does not need (fewer files, a
    usage error). With one process per core, each worker is told the core it keeps to
    (see ``keep_to_one_core``).
    """
    if "bpy" in sys.modules or is_worker():
        return []
    cores = _cores()
    # One at least: one file at a time is rigged by a worker too (see batch.command._main).
    count = max(min(_jobs_asked(argv), len(cores) or os.cpu_count() or 1) - 1, 1)
    command = [sys.executable, str(Path(__file__).resolve()), *argv]
    workers = []
    for index in range(max(count, 0)):
        environment = {name: value for name, value in os.environ.items()
                       if name not in (_CORE_VARIABLE, _LOAD_CORE_VARIABLE)}
        if _one_per_core(argv, cores):
            environment[_CORE_VARIABLE] = str(cores[index + 1])
        elif len(cores) > 1:  # each loads on a core of its own, beside this process on the first
            environment[_LOAD_CORE_VARIABLE] = str(cores[(index + 1) % len(cores)])
        # As the batch command starts its own workers (batch.pool._start_worker): jobs on its input,
        # answers on a pipe of their own, and a session of their own, out of the terminal's Ctrl-C.
        answers, told = os.pipe()
        environment[_WORKER_VARIABLE] = str(told)
        worker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True,
                                  pass_fds=(told,), env=environment)
        os.close(told)
        worker.stdout = open(answers, encoding="utf-8")
        workers.append(worker)
    return workers


def _keep_to(core: str | None) -> bool:
    """Keep this process to ``core``; False when that is no core it may run on."""
    if core is None or not core.isdigit():
        return False
    try:
        os.sched_setaffinity(0, {int(core)})
    except OSError:  # a core taken away meanwhile, or none of this machine's
        return False
    return True


def keep_to_one_core(argv: list[str]) -> set[int]:
    """Load Blender on one core: with one process per core (``--jobs`` at the core count),
    keep this one to its own core for good; otherwise only while Blender loads, and return the
    cores to give back once it has (``give_back``). Only as the PyPI module (a Blender binary
    has loaded already).

    Blender sizes its thread pools (its task scheduler, numpy's BLAS) to the cores it
    may use when it loads. A batch process works in its main thread: it opens, rigs and
    saves one file at a time, and asks Blender for evaluations too small to share (a
    mode switch, the save's update), in which a pool's waiting threads only spin (40% of
    a small file's CPU time with ``--jobs 1`` on an idle two-core machine). Loaded on one
    core, each Blender works in one thread; given its cores back, it runs on whichever is
    free. With one process per core, each keeps to its own core besides (this process to
    the first, each worker started ahead to the one it is told): a Blender per core would
    otherwise be moved between cores by the system; a worker started later in place of
    one that died takes that one's core (``batch.pool._Pool``). Otherwise each process
    loads on a core of its own, so that their start-ups still overlap: this one on the
    first, a worker started ahead on the one it is told, any other on the last.
    """
    cores = _cores()
    told = os.environ.pop(_CORE_VARIABLE, None)  # meant for a worker started ahead, and no other process
    loading = os.environ.pop(_LOAD_CORE_VARIABLE, None)
    if "bpy" in sys.modules:
        return set()
    kept = told if is_worker() else str(cores[0]) if _one_per_core(argv, cores) else None
    if _keep_to(kept) or len(cores) < 2:
        return set()
    if not is_worker():
        loading = str(cores[0])
    elif loading is None or not loading.isdigit() or int(loading) not in cores:
        loading = str(cores[-1])
    return set(cores) if _keep_to(loading) else set()


def give_back(cores: set[int]) -> None:
    """Let this process run on ``cores`` again (what ``keep_to_one_core`` held back while Blender loaded)."""
    if not cores:
        return
    try:
        os.sched_setaffinity(0, cores)
    except OSError:  # a core taken away meanwhile: it runs where it can
        pass


def run_scratch() -> Path | None:
    """The run's temporary folder, made before any Blender loads (none for a worker): this
    process and every worker keep their temporary files there, and the run removes it at its
    end. Named as ik_rigger.batch.saving.SCRATCH_PREFIX says, so a later run removes it if this
    one is killed."""
    if is_worker():
        return None
    scratch = Path(tempfile.mkdtemp(prefix=f"ik_rigger_batch_{os.getpid()}_"))
    os.environ["TMPDIR"] = str(scratch)
    return scratch


def standard_descriptors_open() -> None:
    """Descriptors 0 to 2 open, on /dev/null where the process was started without them (by a
    daemon, by ``>&-``), before any pipe is made: a pipe to a worker would take their numbers
    and be written to as the output. (``batch.command`` makes the same streams of them.)"""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: this one


class SignalWhileLoading:
    """SIGINT and SIGTERM while Blender and the add-on load: the first remembered, none raised, for the
    batch command to take over once it has handlers of its own (``batch.command.main``'s
    ``signalled_before``): it then stops before its first file, with its report.

    Raised there, Ctrl-C's KeyboardInterrupt would cut one of Blender's startup scripts short
    (Blender prints it and starts regardless, or crashes on what it left half-registered), and
    SIGTERM would end the process with no report. Python runs a handler between two of its own
    steps in the main thread, never inside Blender's C code, so Blender's start-up runs whole.
    """

    def __init__(self) -> None:
        self.signum = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if not self.signum:
            self.signum = signum

    def install(self) -> None:
        """Take SIGINT and SIGTERM from now on. Not in a worker: its run stops it with SIGTERM
        whenever it likes, and a worker stopped while it loads ends at once, as it always has."""
        if is_worker():
            return
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, self)
            # A system call Blender's C code makes as it loads is resumed after the handler rather
            # than failing half-way (Python retries its own either way).
            signal.siginterrupt(number, False)


def main() -> int:
    # From the first step: a signal later in start-up is remembered, not raised. Never given
    # back: once the run has its own handlers, it puts this one back as it ends, and a signal
    # that comes after the run has decided its exit code changes nothing.
    loading = SignalWhileLoading()
    loading.install()
    standard_descriptors_open()
    # How the user started it, for --help: a Blender binary has loaded bpy before this script.
    program = "blender --background --factory-startup --python scripts/rig_batch.py --" \
        if "bpy" in sys.modules else "scripts/rig_batch.sh"
    argv = command_line()
    scratch = run_scratch()
    ready = workers_ahead(argv)
    held = keep_to_one_core(argv)

    from blender_startup import deferred_downloader

    with deferred_downloader():
        import ik_rigger
    give_back(held)
    from ik_rigger.batch import command

    ik_rigger.register()
    return command.main(argv, command.worker_command_for(Path(__file__).resolve()), ready, scratch, program,
                        signalled_before=lambda: loading.signum)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # blender_exit, blender_startup
    from blender_exit import leave

    leave(main())
