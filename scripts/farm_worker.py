"""Dask worker preload (scripts/farm.sh worker): each worker process loads Blender and registers
IK Rigger as it starts, so that its first file does not wait for that.

It runs from a copy Dask makes: scripts/farm.sh puts the project and its scripts on the
module path. Dask imports this module in the nanny too, which must not load Blender: the worker processes
it starts would inherit the module path Blender sets up. Hence the work is in ``dask_setup``,
which Dask calls in each worker process alone.
"""

from __future__ import annotations


def dask_setup(worker: object) -> None:
    from blender_startup import deferred_downloader

    with deferred_downloader():
        from ik_rigger import farm
    farm.blender_ready()
