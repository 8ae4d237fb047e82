"""The end of a run, however its files were rigged (by local workers or on a farm): every job's
result, the summary, the report and the exit code."""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from .inputs import Inputs
from .jobs import EXIT_FAILED, EXIT_OK, FileResult, Job
from .pool import _Stop
from .saving import save_atomically
from .terminal import _shown_inputs, printable, shown, summary


def _write_report(path: Path, report: dict) -> None:
    def write(temporary: Path) -> None:
        temporary.write_text(json.dumps(report, indent=2), encoding="utf-8")

    path.parent.mkdir(parents=True, exist_ok=True)
    save_atomically(path, write, keep_backup=False)


def keep_earlier_report(path: Path) -> Path | None:
    """Keep the report a run before left at ``path``, under a name of its own beside it (the time
    it was written: ``report.2026-11-29T021000.json``), so that a run, a failing one too, never
    loses the record of the one before; where it is kept, or None when there was none.

    A hard link: the earlier report stays at ``path`` until this run's replaces it. Anything
    but a regular file there (a link, for one) is replaced as before, never followed."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        written = time.strftime("%Y-%m-%dT%H%M%S", time.localtime(path.lstat().st_mtime))
    except OSError:
        return None
    for count in range(100):
        kept = path.with_name(f"{path.stem}.{written}{f'-{count}' if count else ''}{path.suffix}")
        try:
            os.link(path, kept)
        except FileExistsError:
            continue
        except OSError:  # a folder it cannot write in: the report's own write fails next, and says so
            return None
        return kept
    return None


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
    if args.report and (kept := keep_earlier_report(Path(args.report))):
        inputs.notes.append(f"the report of the run before is kept as '{kept}'")
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
