"""What the batch shows on the terminal: the progress, the summary, and names escaped so a
terminal shows them rather than acts on them; streams that tolerate an encoding or a reader
that goes away."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import IO

from .inputs import Inputs
from .jobs import FileResult


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
        # A plan's lines under its armature, each indented: a line break in a name (escaped by ``printable``)
        # starts no line of its own at the left edge.
        return f"planned {result.input}\n" + "\n".join(
            f"  {armature.name}: " + "\n  ".join(plan.split("\n"))
            for armature in result.armatures for plan in armature.planned)
    limbs = "; ".join(f"{armature.name}: " + ", ".join(" > ".join(chain) for chain in armature.limbs)
                      for armature in result.armatures if armature.limbs)
    timing = result.seconds_open + result.seconds_rig + result.seconds_save
    exported = "".join(f" + {export}" for export in result.exports if not export.endswith(".bin"))
    return f"rigged {result.input} -> {result.output}{exported} ({limbs}; {timing:.2f} s)"


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
                         planned=["\n".join(shown(line) for line in plan.split("\n")) for plan in entry.planned],
                         skipped=[shown(reason) for reason in entry.skipped],
                         warnings=[shown(warning) for warning in entry.warnings],
                         notes=[shown(note) for note in entry.notes])
                 for entry in result.armatures]
    return replace(result, input=shown(result.input), output=None if result.output is None else shown(result.output),
                   error=shown(result.error), details="\n".join(shown(line) for line in result.details.split("\n")),
                   warnings=[shown(warning) for warning in result.warnings],
                   notes=[shown(note) for note in result.notes], armatures=armatures,
                   exports=[shown(export) for export in result.exports])


def _shown_inputs(inputs: Inputs) -> Inputs:
    """``inputs``' warnings and notes escaped for the terminal (``shown``)."""
    return replace(inputs, warnings=[shown(warning) for warning in inputs.warnings],
                   notes=[shown(note) for note in inputs.notes])


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
