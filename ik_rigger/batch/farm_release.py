"""Which release of IK Rigger each Dask worker runs, asked before any file is sent.

A worker started from another release cannot take this release's tasks: the classes a task
carries (a job, a config) are not the ones it knows, and it fails unpickling its first task,
which the submitter could only tell as a worker gone. So the submitter asks every worker
its release first (``check_workers``), with a function that a worker of any release runs:
this module is sent by value (cloudpickle), and the function reads only the standard
library and the worker's own files (``blender_manifest.toml`` beside its ``ik_rigger``).

Nothing here imports Blender or Dask at import time.
"""

from __future__ import annotations

import sys
from typing import Any

# What the release reads when no manifest tells it (a copy of the package alone).
UNKNOWN = "unknown"


def release_in(package: str | None) -> str:
    """The release of the IK Rigger package in the folder ``package``: its manifest's ``version``,
    inside it (an installed extension) or beside it (a checkout)."""
    import os
    import re

    if package:
        for manifest in (os.path.join(package, "blender_manifest.toml"),
                         os.path.join(os.path.dirname(package), "blender_manifest.toml")):
            try:
                with open(manifest, encoding="utf-8") as stream:
                    found = re.search(r'^version\s*=\s*"([^"]*)"', stream.read(), re.MULTILINE)
            except OSError:
                continue
            if found:
                return found.group(1)
    return UNKNOWN


def worker_release() -> str:
    """The release of the IK Rigger this process imports (run on a worker: see the module's docstring)."""
    import importlib.util
    import os

    module = sys.modules.get("ik_rigger")
    origin = getattr(module, "__file__", None)
    if origin is None:
        spec = importlib.util.find_spec("ik_rigger")
        origin = spec.origin if spec is not None else None
    return release_in(os.path.dirname(origin) if origin else None)


def this_release() -> str:
    """The release of the IK Rigger that runs this submitter."""
    import os

    return release_in(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def other_releases(client: Any, workers: list[str] | None = None) -> str:
    """The workers (``workers``, or all) that run another release than this submitter's, each with
    its release, and this one's; '' when there are none."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        releases = client.run(worker_release, workers=workers, on_error="return")
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ours = this_release()
    others = {worker: release for worker, release in releases.items() if release != ours}
    if not others:
        return ""
    told = ", ".join(f"{worker} runs IK Rigger {release}" if isinstance(release, str) else
                     f"{worker} could not tell its release ({type(release).__name__}: {release})"
                     for worker, release in sorted(others.items()))
    return f"{told}; this submitter runs IK Rigger {ours}"


def check_workers(client: Any, address: str) -> set[str]:
    """Refuse a cluster with a worker of another release than this submitter's (a usage error
    naming both), before any file is sent; the workers asked."""
    from .jobs import UsageError

    asked = set(client.nthreads())
    if told := other_releases(client, sorted(asked)):
        raise UsageError(f"the Dask scheduler at '{address}' has workers of another release: {told}. Start every "
                         f"worker from this release (scripts/farm.sh worker {address} in a checkout of it), and stop "
                         "the others")
    return asked
