"""A Dask worker's Blender (scripts/farm.sh worker).

As Dask's preload (``dask_setup``), in the project's ``bpy``: each worker process loads Blender
and registers IK Rigger as it starts, so that its first file does not wait for that.

As a script a Blender binary runs (``serve``, started by scripts/farm_blender.py):
``blender --background --factory-startup --python-exit-code 1 --python scripts/farm_worker.py
-- ADDRESS`` makes that Blender one Dask worker process of one thread.

It runs from a copy Dask makes: scripts/farm.sh puts the project and its scripts on the
module path. Dask imports this module in the nanny too, which must not load Blender: the
worker processes it starts would inherit the module path Blender sets up. Hence the work is
in ``dask_setup``, which Dask calls in each worker process alone.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sys
import tempfile
from pathlib import Path
from typing import IO

# Set by scripts/farm.sh when it starts one worker process per core.
ONE_PER_CORE = "IK_RIGGER_FARM_ONE_PER_CORE"
# Set by scripts/farm_blender.py: the folder with Dask for the Blender binary's own Python.
SITE = "IK_RIGGER_FARM_SITE"
# The lock on the core this process keeps to, held while it lives: a worker started in place
# of one that died takes the core that one freed.
_core_lock: list[IO[str]] = []


def keep_to_a_free_core() -> None:
    """With one worker process per core, keep this one to a core no other worker here holds, before
    Blender loads: Blender sizes its thread pools to the cores it may use, and a pool per core in
    each process would spin on the cores the others work on (see scripts/rig_batch.py)."""
    if os.environ.get(ONE_PER_CORE) != "1" or not hasattr(os, "sched_getaffinity"):
        return
    for core in sorted(os.sched_getaffinity(0)):
        lock = open(Path(tempfile.gettempdir()) / f"ik_rigger_farm_core_{core}.lock", "a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another worker's
            lock.close()
            continue
        _core_lock.append(lock)
        os.sched_setaffinity(0, {core})
        return


def own_session() -> None:
    """A session of this worker process's own. Linux shares the processors between sessions
    (its autogroups) before it shares them between the processes of a session: the worker
    processes of one ``dask worker`` would otherwise share one session's time against every
    other session on the machine, where the batch's own workers each have one (batch.pool._start_worker)."""
    try:
        os.setsid()
    except OSError:  # a session leader already
        pass


def dask_setup(worker: object) -> None:
    own_session()
    keep_to_a_free_core()
    from blender_startup import deferred_downloader

    with deferred_downloader():
        from ik_rigger.batch import farm_tasks
    farm_tasks.blender_ready()


def serve(arguments: list[str]) -> None:
    """Be a Dask worker of the scheduler at ``arguments[0]`` in this Blender binary, until it closes.

    Its event loop runs in Blender's main thread, as the worker's tasks must (see farm_tasks.rig_on_worker).
    scripts/farm_blender.py has set its session and its core before Blender started.
    """
    # Blender's Python ignores PYTHONPATH (unless started with --python-use-system-env): Dask's
    # folder and the project's are put on the module path here.
    root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [path for path in (os.environ.get(SITE), str(root), str(root / "scripts")) if path]
    from distributed import Worker

    from ik_rigger.batch import farm_tasks

    farm_tasks.blender_ready()

    async def work() -> None:
        async with Worker(arguments[0], nthreads=1, dashboard=False) as worker:
            await worker.finished()

    asyncio.run(work())


if __name__ == "__main__":
    serve(sys.argv[sys.argv.index("--") + 1:])
