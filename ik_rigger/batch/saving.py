"""Saving safely: atomic saves beside the target, temporary files and folders (and those a
killed run left), and signals held while a file is being put in place."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import bpy

from ..core.errors import RigError
from ..rig.output import quiet
from .jobs import Interrupted
from .opening import blender_error, check_blend_file

TEMP_SUFFIX = ".ik_rigger-tmp"
# A save's own folder beside its target, ".RANDOM.PID.ik_rigger-tmp" (see private_folder); and
# the files ".NAME.PID.ik_rigger-tmp" and "@" earlier versions wrote there. A leading dot and a
# suffix no input has: no later run takes one for an input; a later run removes those of a
# process no longer alive.
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)" + re.escape(TEMP_SUFFIX) + "@?$")
# A batch run's own temporary folder, in the system's: each Blender the run starts (and, from
# scripts/rig_batch.py, the run's own) keeps its session folder there, so that a worker stopped
# while it loads, or killed, leaves nothing behind. Named with the run's process id, as
# scripts/rig_batch.py names the one it makes before Blender loads.
SCRATCH_PREFIX = "ik_rigger_batch_"
_SCRATCH_NAME = re.compile(rf"^{SCRATCH_PREFIX}(?P<pid>\d+)_")


def private_folder(folder: Path) -> Path:
    """A new folder of this process's own in ``folder``, for a save's temporary files.

    Made by ``mkdtemp``: a name no one can guess, created only if nothing has that name,
    that only this user may enter. No link planted beside a target (at a name a run could
    be expected to use) is ever written through, and nothing in it is taken for an input
    (a search for inputs never enters it: ``is_temporary``).
    """
    return Path(tempfile.mkdtemp(prefix=".", suffix=f".{os.getpid()}{TEMP_SUFFIX}", dir=folder))


def file_place(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at ``path`` itself (a link there is not followed): a file moved
    into place keeps both, so they tell the very file a save moved there (``save_atomically``'s
    ``placing``); None when nothing is there."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def is_temporary(name: str) -> bool:
    """Whether ``name`` is that of a save's own folder (``private_folder``) or of a file an earlier
    version left: this run's, another's or a killed one's, never searched for inputs."""
    return _TEMP_NAME.match(name) is not None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def clean_stale(folder: Path) -> list[Path]:
    """Remove the temporary files that killed runs (processes no longer alive) left in ``folder``."""
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if match is None or int(match.group("pid")) == os.getpid() or _alive(int(match.group("pid"))):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except FileNotFoundError:
            continue
        except OSError:  # another user's, or a folder it cannot empty: left as it is
            continue
        removed.append(entry)
    return removed


def new_scratch() -> Path:
    """A new temporary folder for this run (see SCRATCH_PREFIX)."""
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}_"))


def clean_stale_scratch(folder: Path) -> None:
    """Remove the run folders (see SCRATCH_PREFIX) that killed runs left in ``folder``."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = _SCRATCH_NAME.match(entry.name)
        if match is None or int(match["pid"]) == os.getpid() or _alive(int(match["pid"])):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)


# The signal an interrupt() call held back while a save was being committed, if any.
_holding: list[int] = []


def interrupt(signum: int) -> None:
    """Stop the file at hand for SIGINT or SIGTERM: raise ``Interrupted`` now, or right after
    the save being committed (a signal handler calls this)."""
    if _holding:
        _holding[0] = signum
        return
    raise Interrupted(signum)


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Interrupts wait for the end of the block, so that a file is either saved and recorded
    as such, or neither. (Masking the signals would not do: Blender's own threads would
    take them, and Python runs its handler regardless.)"""
    _holding.append(0)
    try:
        yield
    finally:
        signum = _holding.pop()
    if signum:
        raise Interrupted(signum)


def file_identity(path: Path) -> tuple[int, int, int, int] | None:
    """What tells one version of a file from the next: its device, inode, size and time of change
    (Blender's save makes a new file and renames it into place; another program's changes the size
    or the time); None when nothing is there."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def unchanged_since(path: Path, identity: tuple[int, int, int, int] | None) -> Callable[[], None]:
    """A check for ``save_atomically``: refuses to replace ``path`` once it is no longer the version
    read (``identity``, taken before the read): someone saved it meanwhile, and that save stays."""
    def check() -> None:
        if file_identity(path) != identity:
            raise RigError(f"'{path}' changed while it was being rigged (saved again meanwhile, in Blender or "
                           "another program): left as that save made it, not rigged",
                           hint="Rig it again once no one is saving it.")

    return check


# The folders of this process's own (``private_folder``) kept from one save to the next, by the folder
# each serves: one set per ``folders_kept`` block, the innermost last (none outside any: each save makes
# its own and removes it).
_KEPT: list[dict[str, Path]] = []


@contextmanager
def folders_kept() -> Iterator[None]:
    """Within the block, the saves beside one folder share one folder of this process's own, made at the
    first, emptied after each and removed at the end of the block: making and removing a folder for each
    file was a tenth of the batch's own cost per small file. Should the process be killed meanwhile, the
    next run (or, for a worker, its run) removes it as any killed process's (``clean_stale``)."""
    kept: dict[str, Path] = {}
    _KEPT.append(kept)
    try:
        yield
    finally:
        with interrupts_held():
            _KEPT.remove(kept)
            for private in kept.values():
                shutil.rmtree(private, ignore_errors=True)


def _emptied(private: Path) -> bool:
    """Remove what a save left in its folder (files only: a save makes no folder there); False when
    anything is left, so that the folder goes whole."""
    try:
        with os.scandir(private) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    return False
                os.unlink(entry.path)
    except OSError:
        return False
    return True


def _still_a_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def save_atomically(target: Path, write: Callable[[Path], None], *, keep_backup: bool,
                    overwrite: bool = True, committed: Callable[[], None] | None = None,
                    unchanged: Callable[[], None] | None = None,
                    placing: Callable[[tuple[int, int]], None] | None = None) -> None:
    """Write through ``write(temporary)`` in a folder of this save's own beside ``target``
    (``private_folder``; within ``folders_kept``, this process's, emptied after), then move it
    into place.

    An interrupted run leaves either the old file or the complete new one, never a
    broken one, and no temporary file once Python unwinds. ``keep_backup`` keeps the old
    file as ``.blend1``, as Blender does: the copy is moved to that name, so a link there
    is replaced, never written through. Without ``overwrite`` a ``target`` that exists
    (even one that appeared while writing) is left alone and the save fails. A failure
    names ``target`` (or the backup), never a temporary file. ``committed`` runs with the
    move, before any interrupt is let through. ``unchanged`` runs right before the old file is
    touched, and may refuse the save (``unchanged_since``): then nothing is moved. ``placing`` is told,
    right before the move, where the new file is (``file_place``): a process waiting for this one,
    should this one die between the move and its own word, finds that very file at ``target``.
    """
    private: Path | None = None
    kept = _KEPT[-1] if _KEPT else None
    try:
        with interrupts_held():  # an interrupt right after the folder is made still finds it to remove
            private = kept.get(str(target.parent)) if kept is not None else None
            if private is None or not _still_a_folder(private):
                private = _named(target.parent, lambda: private_folder(target.parent))
                if kept is not None:
                    kept[str(target.parent)] = private
        # The target's own suffix: Blender writes a file whose name does not end in .blend more
        # slowly (about 0.7 ms more of a small file's few ms: checks of its colour management).
        temporary = private / f"file{TEMP_SUFFIX}{target.suffix}"
        write(temporary)
        with interrupts_held():
            if unchanged is not None:
                unchanged()
            if os.path.lexists(target):
                if not overwrite:
                    raise FileExistsError(17, "it exists (--overwrite replaces it)", str(target))
                if target.is_dir():
                    raise IsADirectoryError(21, "it is a folder, not a file", str(target))
                if keep_backup:
                    copy, backup = private / f"backup{TEMP_SUFFIX}", target.with_name(target.name + "1")
                    _named(target, lambda: shutil.copy2(target, copy))
                    _named(backup, lambda: os.replace(copy, backup))  # a link there is replaced, not followed
                _named(target, lambda: shutil.copymode(target, temporary))
            if placing is not None and (place := file_place(temporary)) is not None:
                placing(place)
            if overwrite:
                _named(target, lambda: os.replace(temporary, target))
            else:
                # A hard link fails where a file exists: nothing that appeared meanwhile is replaced.
                _named(target, lambda: os.link(temporary, target))
            if committed is not None:
                committed()
    finally:
        if private is not None:
            with interrupts_held():  # an interrupt midway would leave the folder half removed
                if kept is None or not _emptied(private):
                    shutil.rmtree(private, ignore_errors=True)
                    if kept is not None:
                        kept.pop(str(target.parent), None)


def _named(path: Path, step: Callable[[], Any]) -> Any:
    """``step()``; an OSError it raises names ``path``, the user's, never a temporary file."""
    try:
        return step()
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from error


# Below this much free space, a failed save names it: Blender's own error for a full disk
# ("No such file or directory") does not.
_LITTLE_ROOM = 256 * 1024 * 1024


def room_left(folder: Path) -> str:
    """'; its disk has 0.2 MB free' when the disk holding ``folder`` is nearly full, else ''."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return ""
    return f"; its disk has {free / 1e6:.1f} MB free" if free < _LITTLE_ROOM else ""


def _writer(compress: bool, source: Path | None, target: Path) -> Callable[[Path], None]:
    """How Blender writes the file bound for ``target`` (a failure names ``target``'s folder);
    ``source``: the folder of the .blend it was opened from, None for an import."""
    def write(temporary: Path) -> None:
        folder = target.parent
        try:
            with interrupts_held(), quiet():  # see rig_file
                # Relative paths are made relative to the target's folder here: Blender would
                # make them relative to the temporary file's, one folder deeper.
                if source is not None:
                    rebase_relative_paths(source, folder)
                bpy.ops.wm.save_as_mainfile(filepath=str(temporary), copy=True, check_existing=False,
                                            compress=compress, relative_remap=False)
        except UnicodeDecodeError as error:  # as with_blender_path says
            raise RigError(f"Blender cannot write in '{folder}': its path is not UTF-8",
                           hint="Give an --out folder whose path is UTF-8.") from error
        except RuntimeError as error:
            raise RigError(f"Blender cannot write '{folder}' ({blender_error(error)}){room_left(folder)}",
                           hint="Check that the folder can be written and that its disk has room.") from error
        if not temporary.exists():
            raise RigError(f"Blender did not write '{target}'", hint="Check that the folder can be written.")
        try:
            check_blend_file(temporary)
        except RigError as error:  # a disk that filled up as Blender wrote the end: it said nothing
            raise RigError(f"Blender wrote '{target}' incomplete, its end missing{room_left(folder)}; it was not "
                           "put in place", hint="Make room on its disk, or rig it with --out on another disk."
                           ) from error

    return write


# The data with a file path of its own, where Blender has no call to visit every path (4.2).
_PATH_OWNERS = ("images", "libraries", "sounds", "movieclips", "fonts", "texts", "cache_files", "volumes")


def rebase_relative_paths(folder: Path, destination: Path) -> None:
    """Make the open file's relative paths (``//textures/skin.png``), relative to ``folder`` where
    it was read, relative to ``destination`` where it is about to be saved, as Blender's own
    save does for the folder it writes in."""
    source, destination_text = os.path.abspath(folder), os.path.abspath(destination)
    if os.path.normpath(source) == os.path.normpath(destination_text):
        return

    def rebased(path: str) -> str | None:
        if not path.startswith("//"):
            return None
        return "//" + os.path.relpath(os.path.normpath(os.path.join(source, path[2:])), destination_text)

    if hasattr(bpy.data, "file_path_foreach"):
        bpy.data.file_path_foreach(lambda _owner, path, _meta: rebased(path),
                                   flags={"SKIP_LINKED", "SKIP_PACKED", "SKIP_WEAK_REFERENCES"})
        return
    for owners in _PATH_OWNERS:
        for owner in getattr(bpy.data, owners):
            if isinstance(owner, bpy.types.Library) or owner.library is None:
                key = "filepath_raw" if isinstance(owner, bpy.types.Image) else "filepath"
                if getattr(owner, "packed_file", None) is None and (path := rebased(getattr(owner, key))):
                    setattr(owner, key, path)
