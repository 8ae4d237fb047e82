"""A farm run's mark in each folder it writes in, and the removal of what a dead run left there.

A submitter that ends without its cleaning (killed, its machine gone) leaves its staged files,
records and stop mark beside the outputs (``.ik_rigger-farm-RUN-...``, a staged file about the
size of a rigged one), which nothing else would ever remove. So each run marks itself alive in
every folder it writes in (``.ik_rigger-farm-RUN-run``: its machine, its process and when that
started; touched as the run goes), and a later run there, on the farm or not, removes the
leftovers of a run that is dead by its mark: on this machine, its process is gone (or is another
by now); on another machine, its mark was not touched for ``STALE_SECONDS``. Leftovers without
a mark (a run of an earlier release) go once none of them was touched for as long. A live run's
are never removed, as local runs never remove a live process's temporary files
(``saving.clean_stale``).
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from collections.abc import Iterable
from pathlib import Path

from .farm_tasks import STAGE

# How long a run on another machine may leave its mark untouched before it counts as dead.
STALE_SECONDS = 600.0
# How often a live run touches its marks.
TOUCH_SECONDS = 10.0
_LEFTOVER = re.compile(rf"^\.{re.escape(STAGE)}(?P<run>[0-9a-f]+)-")


def run_mark(folder: Path, token: str) -> Path:
    """The file that says the run ``token`` is alive, in ``folder``."""
    return folder / f".{STAGE}{token}-run"


def _started(pid: int) -> str | None:
    """When the process ``pid`` started (in the system's clock ticks since boot), None if unknown:
    a process id taken again by another process is told apart by it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def mark_runs(folders: Iterable[Path], token: str) -> list[Path]:
    """Mark the run ``token`` (this process) alive in each of ``folders``; the marks made."""
    mark = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "started": _started(os.getpid())})
    made = []
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            run_mark(folder, token).write_text(mark, encoding="utf-8")
        except OSError:  # a folder no task can write in either: its files fail alone
            continue
        made.append(run_mark(folder, token))
    return made


def touch(marks: Iterable[Path]) -> None:
    """Say the run is still alive, in each of its ``marks``."""
    for mark in marks:
        try:
            os.utime(mark)
        except OSError:
            pass


def _alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return started is None or _started(pid) in (None, started)


def _dead(mark: Path | None, entries: list[Path], now: float) -> bool:
    """Whether the run of ``mark`` (None: it has none) that left ``entries`` is dead."""
    def untouched(path: Path) -> bool:
        try:
            return now - path.lstat().st_mtime > STALE_SECONDS
        except FileNotFoundError:
            return True

    if mark is None:
        return all(untouched(entry) for entry in entries)
    try:
        told = json.loads(mark.read_text(encoding="utf-8"))
        host, pid, started = str(told["host"]), int(told["pid"]), told.get("started")
    except (OSError, ValueError, KeyError, TypeError):  # a mark being written, or not one: by its age
        return untouched(mark)
    if host == socket.gethostname():
        return not _alive(pid, started)
    return untouched(mark)


def clean_dead_runs(folder: Path, token: str = "") -> list[Path]:
    """Remove from ``folder`` what farm runs that are dead left there (never the run ``token``'s,
    nor a live run's); the paths removed."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    runs: dict[str, list[Path]] = {}
    for entry in entries:
        match = _LEFTOVER.match(entry.name)
        if match is not None and match["run"] != token:
            runs.setdefault(match["run"], []).append(entry)
    now = time.time()
    removed = []
    for run, left in sorted(runs.items()):
        mark = run_mark(folder, run)
        if not _dead(mark if mark in left else None, left, now):
            continue
        for entry in sorted(left, key=lambda path: path == mark):  # the mark last: a run cut short is found again
            try:
                entry.unlink()
            except FileNotFoundError:
                continue
            except OSError:  # another user's, or a folder: left as it is
                continue
            removed.append(entry)
    return removed
