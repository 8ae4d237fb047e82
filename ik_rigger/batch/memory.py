"""How many Blenders at once the memory holds: ``--jobs N`` asks for N files rigged at once, each by a
process holding a Blender and the file it rigs. More of them than the memory available holds would
have the system kill processes (the run's, or anyone's on the machine) or swap, so the run rigs as
many at once as fit, and says so."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# A file open in Blender takes a few times its size on disk (compressed files more: they are
# counted at that too, as a margin).
_FILE_IN_MEMORY = 3


def available_memory() -> int | None:
    """The memory the system can give without swapping (Linux's MemAvailable), in bytes; None where it
    does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def own_memory() -> int:
    """The most memory this process has held, in bytes: a Blender as loaded, before any file (0 where
    the system does not say)."""
    try:
        import resource
    except ImportError:  # Windows: no available_memory either
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def processes_that_fit(jobs: int, inputs: Sequence[str], available: int | None, each: int) -> tuple[int, str]:
    """How many of ``inputs`` to rig at once for ``--jobs jobs``: one process per file up to ``jobs``, as
    many as fit in ``available`` bytes at ``each`` bytes a process and the largest input open in each
    (this process is one of them, running already); and the warning saying why when fewer."""
    asked = min(jobs, len(inputs))
    if available is None or asked <= 1:
        return asked, ""
    sizes = []
    for path in inputs:
        try:
            sizes.append(Path(path).stat().st_size)
        except OSError:  # not there: it fails as it is
            continue
    per_process = each + _FILE_IN_MEMORY * max(sizes, default=0)
    fit = max(1, 1 + available // max(per_process, 1))
    if asked <= fit:
        return asked, ""
    return fit, (f"--jobs {jobs}: {fit} Blender(s) fit in the memory available ({available / 2**30:.1f} GB, about "
                 f"{per_process / 2**20:.0f} MB each with the largest file open): rigging {fit} file(s) at once")
