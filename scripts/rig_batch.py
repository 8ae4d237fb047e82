"""Batch-rig characters headless: the entry script for Blender and for the project's bpy.

    blender --background --factory-startup --python scripts/rig_batch.py -- ARGS
    scripts/rig_batch.sh ARGS             (the project's own bpy; sets it up first)

ARGS: input files (.blend, .fbx, .glb/.gltf, .bvh), folders and globs; --out DIR [--overwrite] |
--in-place | --dry-run; --config FILE.toml; --armature NAME; --allow-newer; --jobs N;
--report FILE.json. See README.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

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


def workers_ahead(argv: list[str]) -> list[subprocess.Popen]:
    """With --jobs N, start up to N - 1 worker Blenders (at most one per other core) before this
    process loads Blender, so that their start-up and this one's overlap rather than follow
    each other.

    Only as the PyPI module, where Blender is not loaded yet. Each worker is given the
    whole command line, so it reads the same config and options as this process; the
    batch command takes them over, or stops those it does not need (fewer files, a
    usage error).
    """
    if "bpy" in sys.modules or "--" in argv or "--worker" in argv:
        return []
    count = min(_jobs_asked(argv), os.cpu_count() or 1) - 1
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", *argv]
    # As the batch command starts its own workers (cli._start_worker): pipes for the
    # protocol, and a session of their own, out of the terminal's Ctrl-C.
    return [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, bufsize=1, start_new_session=True) for _ in range(max(count, 0))]


def main() -> int:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    ready = workers_ahead(argv)

    import ik_rigger
    from ik_rigger import cli

    ik_rigger.register()
    return cli.main(argv, cli.worker_command_for(Path(__file__).resolve()), ready)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from blender_exit import leave

    leave(main())
