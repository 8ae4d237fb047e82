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
import os
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, NoReturn

from ..core.errors import RigError
from ..limb.config import Config, Schema, load_config, option_specs, spec_of
from ..limb.options import BOTH_SIDES
from .conclusion import conclude
from .farm_runs import clean_dead_runs
from .inputs import Inputs, plan_jobs
from .jobs import EXIT_USAGE, FileResult, Interrupted, Job, UsageError
from .memory import available_memory, own_memory, processes_that_fit
from .opening import IMPORTERS, importer_options
from .pool import _dismiss, _Pool, _Stop, answers_channel, run_worker
from .rig_file import new_result, rig_file
from .saving import clean_stale, clean_stale_scratch, folders_kept, new_scratch
from .terminal import Progress, _open_standard_streams, _tolerant_terminal, printable, shown

_USAGE = ("usage: ik_rigger [OPTIONS] [--] FILE|FOLDER|GLOB... (--out DIR | --in-place | --dry-run) [--overwrite] "
          "[--config FILE] [--armature NAME] [--allow-newer] [--animation bake|fk|ignore] [--export glb|gltf|fbx] "
          "[--jobs N | --scheduler ADDRESS [--worker-wait SECONDS]] [--report FILE.json] [--quiet | --verbose]; "
          "--help says more")


# The command as the user typed it, for --help and the usage line: main()'s ``program``.
_program = ["scripts/rig_batch.sh"]


def _epilog(program: str) -> str:
    return (f"example:\n  {program} characters/ --out rigged/ --report rigged/report.json\n\n"
            "exit codes:\n"
            "  0         every file rigged (or planned, with --dry-run)\n"
            "  1         a file failed or was not rigged (the summary and the report say why)\n"
            "  2         a usage error: nothing was written\n"
            "  130, 143  stopped by SIGINT or SIGTERM (the report says what was done)\n\n"
            "All of it: docs/batch.md; on a Dask cluster or a render farm: docs/farm.md.")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit the whole Blender
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    usage = _Parser(prog=_program[0], allow_abbrev=False, description="Rig the legs and arms of characters in "
                    ".blend, .fbx, .glb/.gltf and .bvh files. After '--' every argument is an input, whatever "
                    "its name.", epilog=_epilog(_program[0]), formatter_class=argparse.RawDescriptionHelpFormatter)
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
    usage.add_argument("--export", choices=("glb", "gltf", "fbx"),
                       help="also write each rigged armature for game engines beside its .blend (OUT/NAME.glb...): "
                       "its deform bones, meshes and every clip baked (docs/export.md)")
    usage.add_argument("--dry-run", action="store_true", help="print what would be rigged; write nothing")
    usage.add_argument("--jobs", type=int, default=1,
                       help="files rigged at once: by this Blender and N-1 worker Blenders, each taking many files "
                       "(with 1, by one worker: a Blender that crashes on a file fails that file alone)")
    usage.add_argument("--scheduler", metavar="ADDRESS", help="rig on the Dask cluster of this scheduler "
                       "(tcp://HOST:PORT), one task per file; see docs/farm.md")
    usage.add_argument("--worker-wait", type=float, metavar="SECONDS",
                       help="with --scheduler: how long to wait for a worker, before the first file and whenever "
                       "none is left, before giving up (60 by default)")
    usage.add_argument("--report", type=Path, help="write a JSON report here (a report already there is kept "
                       "beside it, named by the time it was written)")
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


def _worker_arguments(args: argparse.Namespace) -> list[str]:
    return ([f"--config={args.config}"] if args.config else []) + (
        [f"--animation={args.animation}"] if args.animation else [])


def _usage(message: str) -> int:
    print(f"ik_rigger: {shown(message)}", file=sys.stderr)
    print(_USAGE.replace("usage: ik_rigger", f"usage: {_program[0]}", 1), file=sys.stderr)
    return EXIT_USAGE


def _current_folder_told() -> None:
    """Make $PWD this process's working folder: Blender resolves a relative path against $PWD when
    set, and a process started in another folder (``cwd=`` of a subprocess) can inherit a stale
    one, which would open the other tree's file of that name."""
    try:
        os.environ["PWD"] = os.getcwd()
    except OSError:  # a working folder that was removed: relative inputs fail on their own
        pass


def main(argv: Sequence[str], worker_command: list[str], ready: Sequence[subprocess.Popen] = (),
         scratch: Path | None = None, program: str = "scripts/rig_batch.sh",
         signalled_before: Callable[[], int] = lambda: 0) -> int:
    """Run the batch command with ``argv``; ``worker_command`` starts one worker Blender.

    ``ready``: workers already started with ``argv`` (see scripts/rig_batch.py): the run
    takes those it needs and stops the others, whatever happens; workers it starts itself
    (more, or in place of one that died) get only the options a worker reads.
    ``scratch``: the run's temporary folder, made before Blender loaded (see
    saving.SCRATCH_PREFIX); the run makes it otherwise. Every worker keeps its temporary
    files there, and the run removes it at its end, with what any worker left.
    ``program``: the command as the user types it, named by --help and the usage line.
    ``signalled_before``: the SIGINT or SIGTERM that came before this run had handlers of its own
    (while Blender loaded, see scripts/rig_batch.py), 0 for none; read once it has them. The run
    then stops as if the signal came now: it plans its files, opens none, and reports each not
    started.
    """
    _program[0] = program
    try:
        channel = answers_channel()
    except UsageError as error:
        _dismiss(ready)
        return _usage(str(error))
    stop = _Stop()
    spare = list(ready)
    worker = channel is not None
    _open_standard_streams()
    tolerated = _tolerant_terminal(worker)
    system_temp = os.environ.get("TMPDIR")
    _current_folder_told()
    try:
        # Inside the block: a signal the moment the handlers are in is this run's, as any later one.
        stop.install()
        stop.came_before(signalled_before())
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
        stop.restore()


def _main(argv: Sequence[str], worker_command: list[str], stop: _Stop, spare: list[subprocess.Popen],
          channel: IO[str] | None) -> int:
    try:
        args = parse_arguments(argv)
        config = load_config(args.config, config_schema()) if args.config else Config()
        if args.animation:
            config = config.with_animation(args.animation.upper())
        if channel is not None:
            return run_worker(config, stop, channel)
        if args.worker_wait is not None and not args.scheduler:
            raise UsageError("--worker-wait is for --scheduler: a local run starts its own workers")
        if args.scheduler and not stop.signum:  # a signal while Blender loaded: no cluster is asked
            from . import farm

            return farm.submit(args, config, stop)
        jobs, inputs = plan_jobs(args)
        inputs.notes.extend(config.notes)
    except UsageError as error:
        return _usage(str(error))
    except RigError as error:
        return _usage(error.message)
    started = time.perf_counter()
    if stop.signum:  # it came while Blender loaded (see main): no file is opened, no worker used
        return conclude(args, jobs, inputs, {}, {}, started, stop, {
            "jobs": 0, "workers_started": 0, **({"scheduler": args.scheduler} if args.scheduler else {})})
    output_folders = sorted({Path(job.output).parent for job in jobs if not job.dry_run})
    for folder in output_folders:
        inputs.notes.extend(f"removed '{path}', left by a run that was killed"
                            for path in [*clean_stale(folder), *clean_dead_runs(folder)])
    progress = Progress(len(jobs), quiet=args.quiet)
    count = _processes(args, jobs, inputs, worker_command)
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
        with folders_kept():
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
            _stop_pool(pool, results, output_folders)
        progress.finish()
    return conclude(args, jobs, inputs, results, started_files, started, stop, {
        "jobs": count, "workers_started": len(pool.processes) if pool is not None else 0})


def _processes(args: argparse.Namespace, jobs: Sequence[Job], inputs: Inputs, worker_command: list[str]) -> int:
    """How many processes rig at once: as many as --jobs asks and the memory holds (a warning in ``inputs``
    says when fewer), one where no worker Blender can be started."""
    count, crowded = processes_that_fit(args.jobs, [job.input for job in jobs], available_memory(), own_memory())
    if crowded:
        inputs.warnings.append(crowded)
    if count > 1 and not worker_command:
        print("ik_rigger: no way to start worker Blenders here; rigging in this process", file=sys.stderr)
        count = 1
    return count


def _stop_pool(pool: _Pool, results: dict[int, FileResult], output_folders: list[Path]) -> None:
    """Stop the workers and take the answers that came in meanwhile. A worker stopped between two files (the
    run's end, an interrupt) may leave the folder it keeps for all its files beside the outputs: every
    worker is gone now, so it goes too."""
    pool.stop()
    for index, result in pool.leftover():
        results.setdefault(index, result)
    for folder in output_folders:
        clean_stale(folder)


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
    return main(argv, worker_command_for(None), program="blender --command ik_rigger")
