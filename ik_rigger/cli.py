"""The batch command: rig folders of .blend files headless, safely, with a report.

One code path, three ways in:

- ``blender --background --factory-startup --python scripts/rig_batch.py -- ARGS``
- ``blender --command ik_rigger ARGS`` with the extension installed
- ``scripts/rig_batch.sh ARGS`` with the project's own ``bpy``

Exit codes: 0 every file rigged (or planned, with --dry-run), 1 any file failed,
2 a usage error (bad arguments or config; nothing was opened).
"""

from __future__ import annotations

import argparse
import glob
import json
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO, NoReturn

from .core.config import Config, load_config
from .core.errors import RigError
from .rig.files import TEMP_SUFFIX, ArmatureResult, FileResult, Job, rig_file

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_RESULT_MARK = "IK-RIGGER-RESULT "
_READY_MARK = "IK-RIGGER-READY"


class UsageError(Exception):
    """Bad arguments: exit code 2 before any file is opened."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would exit the whole Blender
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    usage = _Parser(prog="ik_rigger", description="Rig the legs and arms of characters in .blend files.")
    usage.add_argument("inputs", nargs="*", help=".blend files, folders (searched recursively) and globs")
    usage.add_argument("--out", type=Path, help="folder for the rigged copies (inputs are never overwritten)")
    usage.add_argument("--in-place", action="store_true", help="overwrite the inputs, keeping a .blend1 backup")
    usage.add_argument("--config", type=Path, help="TOML file naming limbs and options per armature")
    usage.add_argument("--armature", help="rig only the armature object of this name")
    usage.add_argument("--dry-run", action="store_true", help="print what would be rigged; write nothing")
    usage.add_argument("--jobs", type=int, default=1,
                       help="Blenders rigging at once: this one and N-1 workers, each taking many files")
    usage.add_argument("--report", type=Path, help="write a JSON report here")
    usage.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return usage


def expand_inputs(inputs: Sequence[str]) -> list[tuple[Path, Path]]:
    """Each input file with its path relative to its folder argument (for the output tree).

    A missing path or a glob that matches nothing stays in the list, so that it is
    reported as a failed file rather than silently dropped.
    """
    found: list[tuple[Path, Path]] = []
    for text in inputs:
        path = Path(text)
        if path.is_dir():
            for child in sorted(path.rglob("*.blend")):
                if child.is_file() and not child.name.endswith(TEMP_SUFFIX):
                    found.append((child, child.relative_to(path)))
        elif any(mark in text for mark in "*?[") and not path.exists():
            matches = [Path(match) for match in sorted(glob.glob(text, recursive=True))]
            files = [match for match in matches if match.is_file()]
            found.extend((match, Path(match.name)) for match in files)
            if not files:
                found.append((path, Path(path.name)))
        else:
            found.append((path, Path(path.name)))
    return found


def plan_jobs(args: argparse.Namespace) -> list[Job]:
    """The files to rig and where each result goes; refuses clashing outputs."""
    if not args.inputs:
        raise UsageError("give at least one .blend file, folder or glob")
    if args.in_place and args.out:
        raise UsageError("--out and --in-place exclude each other")
    if not (args.in_place or args.out or args.dry_run):
        raise UsageError("say where results go: --out DIR (inputs stay untouched) or --in-place")
    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    jobs: list[Job] = []
    outputs: set[Path] = set()
    for source, relative in expand_inputs(args.inputs):
        target = source if args.in_place or args.out is None else args.out / relative
        key = target.resolve()
        if key in outputs:
            raise UsageError(f"two inputs would be written to the same output '{target}'")
        outputs.add(key)
        jobs.append(Job(str(source), str(target), in_place=args.in_place, dry_run=args.dry_run))
    return jobs


def _result_from_json(data: dict) -> FileResult:
    armatures = [ArmatureResult(**entry) for entry in data.pop("armatures")]
    return FileResult(**data, armatures=armatures)


def run_worker(config: Config, armature: str | None) -> int:
    """Worker mode: jobs as JSON lines on stdin, results as marked JSON lines on stdout."""
    print(_READY_MARK, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        result = rig_file(Job(**json.loads(line)), config, armature)
        sys.stdout.write(_RESULT_MARK + json.dumps(asdict(result)) + "\n")
        sys.stdout.flush()
    return EXIT_OK


def _in_process(jobs: list[Job], config: Config, armature: str | None) -> Iterator[FileResult]:
    for job in jobs:
        yield rig_file(job, config, armature)


def _pipe(stream: IO[str] | None) -> IO[str]:
    """A worker's pipe; Popen was asked for it, so it is there."""
    assert stream is not None
    return stream


def _with_workers(jobs: list[Job], helpers: int, worker_command: list[str], args: argparse.Namespace,
                  config: Config) -> Iterator[FileResult]:
    """Rig in this Blender and in ``helpers`` more, each taking the next file when free.

    This process starts at once; the helpers join when their Blender has started,
    so a short run never waits for them, and a helper that got no file is stopped.
    """
    extra = ["--worker"] + (["--config", str(args.config)] if args.config else []) + \
        (["--armature", args.armature] if args.armature else [])
    workers = [subprocess.Popen(worker_command + extra, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, bufsize=1) for _ in range(helpers)]
    answers: queue.Queue[tuple[int, FileResult | str | None]] = queue.Queue()

    def listen(index: int) -> None:
        # One reader per worker: a pipe read by select() and readline() together can hide
        # a second buffered line, so each worker's lines go through a queue instead.
        for line in _pipe(workers[index].stdout):
            if line.startswith(_READY_MARK):
                answers.put((index, _READY_MARK))
            elif line.startswith(_RESULT_MARK):
                answers.put((index, _result_from_json(json.loads(line[len(_RESULT_MARK):]))))
        answers.put((index, None))

    for index in range(helpers):
        threading.Thread(target=listen, args=(index,), daemon=True).start()
    pending = deque(jobs)
    busy: dict[int, Job] = {}
    used: set[int] = set()

    def handle(index: int, message: FileResult | str | None) -> Iterator[FileResult]:
        if isinstance(message, FileResult):
            busy.pop(index, None)
            yield message
        elif message is None and index in busy:  # the worker died: its file failed, the others go on
            job = busy.pop(index)
            yield FileResult(job.input, job.output, error="the worker Blender stopped while rigging it")
            return
        if message is not None and pending:
            job = pending.popleft()
            busy[index] = job
            used.add(index)
            pipe = _pipe(workers[index].stdin)
            pipe.write(json.dumps(asdict(job)) + "\n")
            pipe.flush()

    try:
        while pending or busy:
            while not answers.empty():
                yield from handle(*answers.get())
            if pending:
                yield rig_file(pending.popleft(), config, args.armature)
            elif busy:
                yield from handle(*answers.get())
    finally:
        for index, worker in enumerate(workers):
            if index in used:
                _pipe(worker.stdin).close()
            else:
                worker.kill()
        for worker in workers:
            worker.wait(timeout=60)


class Progress:
    """A bar on a terminal, one line per file otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.tty = sys.stderr.isatty()

    def update(self, result: FileResult) -> None:
        self.done += 1
        name = Path(result.input).name
        if self.tty:
            width = 30
            filled = width * self.done // max(self.total, 1)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {name[:40]:40}")
            if self.done == self.total:
                sys.stderr.write("\n")
            if result.status == "failed":
                sys.stderr.write(f"\nfailed: {result.input}: {result.error}\n")
        else:
            print(f"[{self.done}/{self.total}] {_line(result)}", flush=True)


def _line(result: FileResult) -> str:
    if result.status == "failed":
        return f"FAILED {result.input}: {result.error}"
    limbs = "; ".join(" > ".join(chain) for armature in result.armatures for chain in armature.limbs)
    if result.status == "planned":
        return f"planned {result.input}\n" + "\n".join(
            plan for armature in result.armatures for plan in armature.planned)
    timing = result.seconds_open + result.seconds_rig + result.seconds_save
    return f"rigged {result.input} -> {result.output} ({limbs}; {timing:.2f} s)"


def summary(results: list[FileResult], seconds: float) -> str:
    counts = {status: sum(1 for result in results if result.status == status)
              for status in ("rigged", "planned", "failed")}
    limbs = sum(result.limb_count for result in results)
    lines = [f"{len(results)} file(s) in {seconds:.1f} s: {counts['rigged']} rigged ({limbs} limbs), "
             f"{counts['planned']} planned, {counts['failed']} failed"]
    lines.extend(f"  failed: {result.input}: {result.error}" for result in results if result.status == "failed")
    skipped = [f"  skipped in {Path(result.input).name} ({armature.name}): {reason}"
               for result in results for armature in result.armatures for reason in armature.skipped]
    lines.extend(skipped[:20])
    if len(skipped) > 20:
        lines.append(f"  ... and {len(skipped) - 20} more skipped (see the JSON report)")
    lines.extend(f"  warning: {Path(result.input).name}: {warning}" for result in results
                 for warning in result.warnings)
    return "\n".join(lines)


def main(argv: Sequence[str], worker_command: list[str]) -> int:
    """Run the batch command with ``argv``; ``worker_command`` starts one worker Blender."""
    try:
        args = parser().parse_args(list(argv))
        config = load_config(args.config) if args.config else Config()
        if args.worker:
            return run_worker(config, args.armature)
        jobs = plan_jobs(args)
    except (UsageError, RigError) as error:
        message = error.message if isinstance(error, RigError) else str(error)
        print(f"ik_rigger: {message}", file=sys.stderr)
        print("usage: ik_rigger FILE|FOLDER|GLOB... (--out DIR | --in-place | --dry-run) [--config FILE] "
              "[--armature NAME] [--jobs N] [--report FILE.json]", file=sys.stderr)
        return EXIT_USAGE
    started = time.perf_counter()
    progress = Progress(len(jobs))
    count = min(args.jobs, len(jobs))
    if count > 1 and not worker_command:
        print("ik_rigger: no way to start worker Blenders here; rigging in this process", file=sys.stderr)
        count = 1
    stream = _with_workers(jobs, count - 1, worker_command, args, config) if count > 1 else \
        _in_process(jobs, config, args.armature)
    results = []
    for result in stream:
        results.append(result)
        progress.update(result)
    seconds = time.perf_counter() - started
    text = summary(results, seconds)
    print(text, flush=True)
    if args.report:
        report = {"files": [asdict(result) for result in results], "summary": text, "seconds": seconds,
                  "jobs": count}
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return EXIT_OK if all(result.status != "failed" for result in results) else EXIT_FAILED


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
