"""What Blender prints: held back, so a command's own lines stay readable."""

from __future__ import annotations

import ctypes
import functools
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr
from typing import IO


@functools.cache
def _c_library() -> ctypes.CDLL:
    """This process's C library, opened once (each opening looks it up anew)."""
    return ctypes.CDLL(None)


def _flush_c_stdout() -> None:
    """Blender prints through C's stdio, whose buffer must be out before fd 1 changes."""
    if os.name == "posix":
        _c_library().fflush(None)


# Emptied sinks kept for the next hold (a batch holds Blender's lines twice a file): on POSIX a temporary
# file is nameless from the start, so one kept open leaves nothing behind in any folder.
_SPARE_SINKS: list[IO[bytes]] = []


@contextmanager
def blender_output() -> Iterator[list[str]]:
    """Hold back what Blender prints (to the process's stdout) and hand its lines over on exit,
    so its warnings can be reported while the batch command's own lines stay readable."""
    lines: list[str] = []
    sys.stdout.flush()
    saved = os.dup(1)
    sink = _SPARE_SINKS.pop() if _SPARE_SINKS else tempfile.TemporaryFile()
    try:
        os.dup2(sink.fileno(), 1)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            _flush_c_stdout()
            os.dup2(saved, 1)
            os.close(saved)
            lines.extend(_written(sink.fileno()).decode("utf-8", errors="replace").splitlines())
    except BaseException:
        sink.close()
        raise
    if os.name == "posix":
        # The next hold writes from the start again and reads up to where it stopped: what this one left
        # beyond that is never read, so the file is not emptied (that cost several times the rest of a hold).
        os.lseek(sink.fileno(), 0, os.SEEK_SET)
        _SPARE_SINKS.append(sink)
    else:  # elsewhere a temporary file has a name until it is closed
        sink.close()


def _written(descriptor: int) -> bytes:
    """What was written to the file ``descriptor`` from its start up to where its writing stopped."""
    end = os.lseek(descriptor, 0, os.SEEK_CUR)
    os.lseek(descriptor, 0, os.SEEK_SET)
    chunks = []
    while end > 0 and (chunk := os.read(descriptor, end)):
        chunks.append(chunk)
        end -= len(chunk)
    return b"".join(chunks)


@contextmanager
def quiet() -> Iterator[None]:
    """Hold back what Blender itself prints (read and save notices)."""
    with blender_output():
        yield


@contextmanager
def held_output() -> Iterator[Callable[[], None]]:
    """Hold back what Blender prints and what Python writes to stderr in the block (an add-on's operator
    that fails prints its traceback to both); yields a call that drops it all. What is not dropped is
    printed as it was when the block ends, failing or not: a failure the caller explains drops the
    traceback the user would otherwise read twice, any other stays as loud as it was."""
    errors = io.StringIO()
    lines: list[str] = []
    dropped: list[bool] = []
    try:
        with blender_output() as printed, redirect_stderr(errors):
            lines = printed
            yield lambda: dropped.append(True)
    finally:
        if not dropped:
            sys.stdout.write("".join(line + "\n" for line in lines))
            sys.stdout.flush()
            sys.stderr.write(errors.getvalue())
