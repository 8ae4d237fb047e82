"""A quicker start for the project's headless Blenders under the PyPI module.

``import bpy`` registers Blender's default add-ons. In Blender 5.2 the extensions add-on
then imports the downloader of remote asset libraries (with ``requests``, ``urllib3`` and
``cattrs``), about a fifth of Blender's start-up, to restore an interrupted download of a
remote asset library. A headless run at factory settings has no remote library, so the
module is never used. ``deferred_downloader`` has Python import it lazily (the standard
``importlib.util.LazyLoader``): the module is the real one, and it runs in full the
moment anything reads from it. Every batch process (the main one and each worker) pays
Blender's start-up, so this shortens every run.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType

# Modules Blender imports as it starts that a headless run at factory settings never reads.
DEFERRED = frozenset({"_bpy_internal.assets.remote_library.listing_downloader"})


class _Deferring:
    """Finds a module of DEFERRED as the other finders do, then loads it lazily (a meta path
    finder; not derived from ``importlib.abc``, whose import would cost more than it saves)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in DEFERRED:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        return None


@contextmanager
def deferred_downloader() -> Iterator[None]:
    """While Blender starts (``import bpy`` inside), import the modules of DEFERRED lazily.

    Only where Blender is not loaded yet (the PyPI module; a Blender binary has started
    before any script runs).
    """
    if "bpy" in sys.modules:
        yield
        return
    finder = _Deferring()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
