"""Rig one file safely: open it without running its scripts (or import it), rig, save atomically.

Used by the batch command (``cli``); each call handles one file in this Blender and
returns a plain, JSON-ready result. Nothing here raises for a bad file: problems
become the result's ``error``, so one broken file never stops a run. Only an
interrupt (``Interrupted``) goes through, after the file's temporary output is removed.
"""

from __future__ import annotations

import ctypes
import gzip
import io
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, redirect_stderr
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import addon_utils
import bpy

from .. import api
from ..core.config import Config, OptionSpec
from ..core.errors import RigError
from ..core.notes import split
from ..core.plan import LimbOptions, Skeleton
from .asleep import reselect, selected, sleepers
from .auto import detected_requests
from .build import mirrored_request, plan_limbs, rig_able
from .skeleton import read_skeleton
from .upgrade import upgrade

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Blender writes zstd files in the seekable format, which ends with this footer.
_ZSTD_SEEKABLE_FOOTER = b"\xb1\xea\x92\x8f"
# "BLENDER-v402" (before 5.0) or "BLENDER17-01v0502": the version that saved the file.
_HEADER_VERSION = re.compile(rb"^BLENDER(?:[-_][vV](\d)(\d\d)|\d\d-\d\d[vV](\d\d)(\d\d))")
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
_LOAD_REPORT = re.compile(r"^(?:Warning|Error): (.*)$")


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: stop the file at hand (its temporary output removed) and the run.

    A BaseException, like KeyboardInterrupt, so no handler of a file's own problems
    takes it for one.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


@dataclass(frozen=True)
class Importer:
    """How one foreign format comes in: Blender's bundled importer and the batch's settings for it."""

    module: str  # the bundled add-on that registers the operator
    operator: str  # "category.name" under bpy.ops
    settings: Mapping[str, Any]


# Settings that keep the skeleton as it was authored: no re-oriented or added bones, no
# scaling beyond the file's own units, and the motion at its own frame rate. A config's
# [import.FORMAT] section overrides any of them (docs/batch.md).
IMPORTERS: dict[str, Importer] = {
    "fbx": Importer("io_scene_fbx", "import_scene.fbx", {
        "use_anim": True, "automatic_bone_orientation": False, "ignore_leaf_bones": False,
        "force_connect_children": False, "primary_bone_axis": "Y", "secondary_bone_axis": "X",
        "global_scale": 1.0, "bake_space_transform": False, "use_custom_props": True,
    }),
    # glTF has no bone tails; Blender's heuristic is the one that round-trips the rest pose.
    "gltf": Importer("io_scene_gltf2", "import_scene.gltf", {
        "bone_heuristic": "BLENDER", "guess_original_bind_pose": True, "merge_vertices": False,
    }),
    "bvh": Importer("io_anim_bvh", "import_anim.bvh", {
        "target": "ARMATURE", "global_scale": 1.0, "frame_start": 1, "use_fps_scale": False,
        "update_scene_fps": True, "update_scene_duration": True, "rotate_mode": "NATIVE",
    }),
}
INPUT_FORMATS = {".blend": "blend", ".fbx": "fbx", ".glb": "gltf", ".gltf": "gltf", ".bvh": "bvh"}


def input_format(path: Path) -> str | None:
    """The format a path's suffix names, whatever its case; None when it is no input."""
    return INPUT_FORMATS.get(path.suffix.lower())


@dataclass
class ArmatureResult:
    """One armature of a file: ``status`` is rigged, planned or untouched (nothing it is sure of).

    ``warnings`` ask the user to look at something; ``notes`` record what was done."""

    name: str
    status: str = "untouched"
    limbs: list[list[str]] = field(default_factory=list)
    planned: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def tell(self, messages: Iterable[str]) -> None:
        """Each of ``messages`` under its kind (see ``core.notes``)."""
        warnings, notes = split(messages)
        self.warnings.extend(warnings)
        self.notes.extend(notes)


@dataclass
class FileResult:
    """What happened to one input file; ``status`` is rigged, planned, failed or interrupted."""

    input: str
    output: str | None
    status: str = "failed"
    error: str = ""
    details: str = ""  # the traceback, when IK Rigger itself failed on the file
    # Blender's and the importer's warnings and the armatures', each armature's named; its notes likewise.
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    armatures: list[ArmatureResult] = field(default_factory=list)
    seconds_open: float = 0.0
    seconds_rig: float = 0.0
    seconds_save: float = 0.0

    @property
    def limb_count(self) -> int:
        return sum(len(armature.limbs) for armature in self.armatures)


@dataclass(frozen=True)
class Job:
    """One file to rig, where its result goes and how (``output`` is the input for --in-place)."""

    input: str
    output: str
    in_place: bool = False
    dry_run: bool = False
    overwrite: bool = False
    allow_newer: bool = False
    armature: str | None = None


def _flush_c_stdout() -> None:
    """Blender prints through C's stdio, whose buffer must be out before fd 1 changes."""
    if os.name == "posix":
        ctypes.CDLL(None).fflush(None)


@contextmanager
def blender_output() -> Iterator[list[str]]:
    """Hold back what Blender prints (to the process's stdout) and hand its lines over on exit,
    so its warnings can be reported while the batch command's own lines stay readable."""
    lines: list[str] = []
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            _flush_c_stdout()
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", errors="replace").splitlines())


@contextmanager
def quiet() -> Iterator[None]:
    """Hold back what Blender itself prints (read and save notices)."""
    with blender_output():
        yield


def load_reports(lines: list[str]) -> list[str]:
    """Blender's warnings and errors among the lines it printed, without its prefixes."""
    found = [match.group(1).strip() for line in lines if (match := _LOAD_REPORT.match(line.strip()))]
    return list(dict.fromkeys(found))


def _header_version(head: bytes) -> tuple[int, int] | None:
    match = _HEADER_VERSION.match(head)
    if match is None:
        return None
    major, minor = (int(part) for part in (match.group(1, 2) if match.group(1) else match.group(3, 4)))
    return major, minor


def is_compressed(path: Path) -> bool:
    """True for a .blend Blender wrote compressed (zstd, or gzip before 3.0)."""
    with path.open("rb") as stream:
        head = stream.read(4)
    return head.startswith(_GZIP_MAGIC) or head.startswith(_ZSTD_MAGIC)


def check_blend_file(path: Path) -> None:
    """Refuse what is plainly not a complete .blend before Blender tries to read it."""
    if not path.exists():
        raise RigError(f"'{path}' does not exist", hint="Check the path.")
    if not path.is_file():
        raise RigError(f"'{path}' is not a regular file", hint="Give .blend files or folders holding them.")
    truncated = RigError(f"'{path}' is truncated (its end is missing)",
                         hint="Use an intact copy of the file (a .blend1 backup, for one).")
    with path.open("rb") as stream:
        head = stream.read(24)
        stream.seek(max(path.stat().st_size - 64, 0))
        tail = stream.read()
    if head.startswith(_ZSTD_MAGIC):
        if not tail.endswith(_ZSTD_SEEKABLE_FOOTER):
            raise truncated
        return
    if head.startswith(_GZIP_MAGIC):
        try:
            with gzip.open(path) as unpacked:
                while unpacked.read(1 << 20):
                    pass
        except (EOFError, gzip.BadGzipFile) as error:
            raise truncated from error
        return
    if not head.startswith(b"BLENDER"):
        raise RigError(f"'{path}' is not a .blend file", hint="Give .blend files saved by Blender.")
    # An uncompressed .blend ends with its ENDB block; a cut-off copy does not.
    if b"ENDB" not in tail:
        raise truncated


def _newer_than_this(version: tuple[int, int]) -> bool:
    return version > tuple(bpy.app.version[:2])


def _version_text(version: tuple[int, ...]) -> str:
    return f"{version[0]}.{version[1]}"


def open_untrusted(path: Path, allow_newer: bool = False) -> list[str]:
    """Open a .blend with Python auto-run off (no registered text and no driver expression runs).

    Returns Blender's load warnings (missing libraries, for one). A file saved by a newer
    Blender is refused unless ``allow_newer``: saving it here would drop what this
    version does not know.
    """
    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    try:
        with blender_output() as lines:
            with_blender_path(path, lambda name: bpy.ops.wm.open_mainfile(filepath=name, load_ui=False,
                                                                          use_scripts=False))
    except RuntimeError as error:
        with path.open("rb") as stream:
            version = _header_version(stream.read(24))
        if version is not None and _newer_than_this(version):
            raise RigError(f"'{path}' was saved by Blender {_version_text(version)}, which this Blender "
                           f"({_version_text(bpy.app.version)}) cannot read",
                           hint=f"Rig it with Blender {_version_text(version)} or newer.") from error
        # A compressed file hides the version that saved it: a newer Blender's may be why.
        newer = (f", or saved by a Blender newer than this one ({_version_text(bpy.app.version)})"
                 if is_compressed(path) else "")
        raise RigError(f"Blender cannot read '{path}' ({blender_error(error)})",
                       hint=f"The file may be corrupt{newer}; use an intact copy"
                       + (", or open it with the Blender that saved it." if newer else ".")) from error
    warnings = [text for text in load_reports(lines) if "newer Blender" not in text]
    version = tuple(bpy.data.version[:2])
    if _newer_than_this(version):
        loss = (f"saved by Blender {_version_text(version)}, newer than this Blender "
                f"({_version_text(bpy.app.version)}): saving it here loses what this version does not know")
        if not allow_newer:
            raise RigError(f"'{path}' was {loss}", hint=f"Rig it with Blender {_version_text(version)} or newer, "
                           "or pass --allow-newer to accept the loss.")
        warnings.insert(0, f"{loss} (--allow-newer)")
    return warnings


def with_blender_path(path: Path, call: Callable[[str], Any]) -> Any:
    """``call(path)``, Blender's operator given ``path``; through a link of a UTF-8 name where
    Blender (4.2) takes no path that is not UTF-8 (a Latin-1 file name) and fails before it
    reads anything."""
    try:
        return call(str(path))
    except UnicodeDecodeError:
        with tempfile.TemporaryDirectory() as folder:
            link = Path(folder) / f"input{path.suffix}"  # an input's suffix is ASCII (INPUT_FORMATS)
            link.symlink_to(os.path.abspath(path))
            try:
                return call(str(link))
            except RuntimeError as error:  # its message names the user's file, not the link
                raise RuntimeError(str(error).replace(str(link), str(path))) from error


def _operator(importer: Importer) -> Any:
    if addon_utils.check(importer.module)[1] is False:
        addon_utils.enable(importer.module)
    category, name = importer.operator.split(".")
    return getattr(getattr(bpy.ops, category), name)


# Importer properties a config must not set: the batch gives the file itself.
_IMPORTER_OWN = {"filepath", "filename", "directory", "files", "filter_glob"}
_RNA_KINDS = {"BOOLEAN": "bool", "INT": "int", "FLOAT": "float", "STRING": "str", "ENUM": "enum"}


def importer_options(fmt: str) -> dict[str, OptionSpec]:
    """The settings a config may give ``fmt``'s importer, as the operator itself declares them."""
    specs = {}
    for prop in _operator(IMPORTERS[fmt]).get_rna_type().properties:
        kind = _RNA_KINDS.get(prop.type)
        if prop.identifier in _IMPORTER_OWN or prop.identifier == "rna_type" or kind is None or \
                getattr(prop, "is_array", False) or getattr(prop, "is_enum_flag", False):
            continue
        specs[prop.identifier] = OptionSpec(
            kind, default=prop.default, description=prop.description,
            minimum=getattr(prop, "hard_min", None), maximum=getattr(prop, "hard_max", None),
            items=tuple(item.identifier for item in prop.enum_items) if kind == "enum" else ())
    return specs


def blender_error(error: RuntimeError) -> str:
    """What went wrong, from the error an operator raised: its last line, but for the place a
    Python operator's traceback names (an importer's bug ends "Location: ..."); the whole
    traceback stays with the error the caller chains."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    told = [line for line in lines if not line.startswith("Location:")]
    return (told or lines or [type(error).__name__])[-1]


def import_foreign(path: Path, fmt: str, config: Config) -> list[str]:
    """Bring an .fbx, .glb/.gltf or .bvh into an empty scene; returns the importer's warnings."""
    if not path.is_file():
        raise RigError(f"'{path}' is not a regular file" if path.exists() else f"'{path}' does not exist",
                       hint="Check the path.")
    importer = IMPORTERS[fmt]
    operator = _operator(importer)
    settings = {**importer.settings, **config.imports.get(fmt, {})}
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True, load_ui=False)
    # What an importer prints itself (the FBX importer prints the traceback of a file it cannot
    # read) is held back with Blender's lines: the error says what went wrong.
    held = io.StringIO()
    try:
        with blender_output() as lines, redirect_stderr(held):
            done = with_blender_path(path, lambda name: operator(filepath=name, **settings))
    except RuntimeError as error:
        raise RigError(f"Blender's {fmt.upper()} importer cannot read '{path}' ({blender_error(error)})",
                       hint="The file may be corrupt or use what the importer does not support.") from error
    lines.extend(held.getvalue().splitlines())
    if "FINISHED" not in done:
        raise RigError(f"Blender's {fmt.upper()} importer did not import '{path}'",
                       hint="Check the file in Blender: File > Import.")
    return load_reports(lines)


def private_folder(folder: Path) -> Path:
    """A new folder of this process's own in ``folder``, for a save's temporary files.

    Made by ``mkdtemp``: a name no one can guess, created only if nothing has that name,
    that only this user may enter. No link planted beside a target (at a name a run could
    be expected to use) is ever written through, and nothing in it is taken for an input.
    """
    return Path(tempfile.mkdtemp(prefix=".", suffix=f".{os.getpid()}{TEMP_SUFFIX}", dir=folder))


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


def save_atomically(target: Path, write: Callable[[Path], None], *, keep_backup: bool,
                    overwrite: bool = True, committed: Callable[[], None] | None = None) -> None:
    """Write through ``write(temporary)`` in a folder of this save's own beside ``target``
    (``private_folder``), then move it into place.

    An interrupted run leaves either the old file or the complete new one, never a
    broken one, and no temporary file once Python unwinds. ``keep_backup`` keeps the old
    file as ``.blend1``, as Blender does: the copy is moved to that name, so a link there
    is replaced, never written through. Without ``overwrite`` a ``target`` that exists
    (even one that appeared while writing) is left alone and the save fails. A failure
    names ``target`` (or the backup), never a temporary file. ``committed`` runs with the
    move, before any interrupt is let through.
    """
    private: Path | None = None
    try:
        with interrupts_held():  # an interrupt right after the folder is made still finds it to remove
            private = _named(target.parent, lambda: private_folder(target.parent))
        temporary = private / f"file{TEMP_SUFFIX}"
        write(temporary)
        with interrupts_held():
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
            if overwrite:
                _named(target, lambda: os.replace(temporary, target))
            else:
                # A hard link fails where a file exists: nothing that appeared meanwhile is replaced.
                _named(target, lambda: os.link(temporary, target))
            if committed is not None:
                committed()
    finally:
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)


def _named(path: Path, step: Callable[[], Any]) -> Any:
    """``step()``; an OSError it raises names ``path``, the user's, never a temporary file."""
    try:
        return step()
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from error


# Below this much free space, a failed save names it: Blender's own error for a full disk
# ("No such file or directory") does not.
_LITTLE_ROOM = 256 * 1024 * 1024


def _room(folder: Path) -> str:
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
            raise RigError(f"Blender cannot write '{folder}' ({blender_error(error)}){_room(folder)}",
                           hint="Check that the folder can be written and that its disk has room.") from error
        if not temporary.exists():
            raise RigError(f"Blender did not write '{target}'", hint="Check that the folder can be written.")

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


def _armatures(job: Job) -> list[bpy.types.Object]:
    armatures = [obj for obj in bpy.data.objects if obj.type == "ARMATURE" and obj.library is None]
    if job.armature:
        chosen = [obj for obj in armatures if obj.name == job.armature]
        if not chosen:
            names = ", ".join(sorted(obj.name for obj in armatures)) or "none"
            raise RigError(f"no armature named '{job.armature}' (armatures: {names})", hint="Check --armature.")
        return chosen
    if not armatures:
        raise RigError("the file has no armature", hint="Batch rigging needs a character with an armature.")
    return sorted(armatures, key=lambda obj: obj.name)


def _requests(obj: bpy.types.Object, skeleton: Skeleton, config: Config, filename: str, result: ArmatureResult,
              imported: bool) -> tuple[list[tuple[str, LimbOptions]], list[tuple[str, LimbOptions]], bool]:
    """The limbs to build on ``obj``: the config's, and the detected ones it does not cover; and
    whether detection skipped a limb only because its bones' tails lie off their joints.

    ``imported``: the armature comes from an FBX, glTF or BVH file, whose bones' tails are the
    importer's guess. A limb skipped only for its tails is then rigged with Fix Bone
    Orientation (its motion is kept), as a folder of downloads needs; a .blend's are the
    user's, and stay so unless the config says otherwise.
    """
    section = config.for_armature(obj.name, filename)
    wanted = config.defaults.extremity_name
    if config.defaults.extremity_mode == "BONE" and wanted not in obj.data.bones:
        result.warnings.append(f"[defaults] extremity_name '{wanted}': no bone of that name on this armature; "
                               "each limb found keeps the extremity found with it")
    named: list[tuple[str, LimbOptions]] = []
    found: list[tuple[str, LimbOptions]] = []
    tails_off = False
    if section is not None:
        for limb in section.limbs:
            named.append((limb.last, limb.options))
            if limb.both_sides:
                other = mirrored_request(obj, limb.last, limb.options)
                if other is None:
                    result.warnings.append(f"'{limb.last}': no mirrored bone, rigged one side only")
                else:
                    named.append(other)
    if section is None or section.detect:
        covered = {name for last, options in named for name in skeleton.lineage(last, options.chain_length)}
        found, detection = detected_requests(skeleton, config.defaults, covered)
        if imported and not config.defaults.fix_orientation:
            # Limbs skipped for their tails, and those whose tails point elsewhere though their lengths
            # fit (IK would carry those tails, not the joints, to the handles), rigged with it.
            sure = {limb.last for limb in detection.limbs if not limb.tails_elsewhere}
            if any(item.tails_off for item in detection.skipped):
                found, detection = detected_requests(skeleton, replace(config.defaults, fix_orientation=True),
                                                     covered)
            found = [(last, replace(options, fix_orientation=last not in sure)) for last, options in found]
        result.skipped.extend(f"{item.bone}: {item.reason}" for item in detection.skipped)
        tails_off = any(item.tails_off for item in detection.skipped)
    return named, found, tails_off


def _fixed_note(last: str) -> str:
    return (f"'{last}': its bones' tails lay far off their joints, as the importer left them: rigged with Fix Bone "
            "Orientation (its motion kept)")


def _rig_armature(obj: bpy.types.Object, job: Job, config: Config, filename: str, entry: ArmatureResult) -> bool:
    """Rig ``obj`` as ``entry`` then says; True when detection skipped a limb only because its
    bones' tails lie off their joints."""
    # Files open out of Edit mode, so the bones read here stay current for the build.
    skeleton = read_skeleton(obj)
    imported = input_format(Path(job.input)) != "blend"
    named, found, tails_off = _requests(obj, skeleton, config, filename, entry, imported)
    # Limbs of an import rigged with Fix Bone Orientation though the config did not ask (see _requests).
    fixed = set() if config.defaults.fix_orientation else {last for last, options in found if options.fix_orientation}
    # A rig from an earlier IK Rigger plays only where the add-on is installed.
    upgraded = [] if job.dry_run else upgrade(obj)
    entry.notes.extend(upgraded)
    if job.dry_run:
        found, refused = rig_able(obj, found, skeleton)  # what the build would skip
        entry.skipped.extend(f"{bone}: {why}" for bone, why in refused)
        if named or found:
            entry.planned = [plan.describe() for plan in plan_limbs(obj, [*named, *found], skeleton)]
            entry.notes.extend(_fixed_note(last) for last, _ in found if last in fixed)
            entry.status = "planned"
            return tails_off
    elif named or found:
        # Motion already on the armature (an animated file, an imported clip) is kept by the
        # build as each limb's ``animation`` option says; its notes say what was kept.
        built, refused = api.build_found(obj, named, found, skeleton)
        entry.skipped.extend(f"{bone}: {why}" for bone, why in refused)
        if built:
            entry.limbs = [list(limb.chain) for limb in built]
            entry.notes.extend(_fixed_note(limb.name) for limb in built if limb.name in fixed)
            entry.tell(note for limb in built for note in limb.notes)
            entry.status = "rigged"
            return tails_off
    if upgraded:
        entry.status = "rigged"
    else:
        entry.notes.append("no limbs it is sure of: left as it is")
    return tails_off


# The objects put to sleep for the file at hand (see _geometry_asleep), and those of them selected.
_asleep: list[bpy.types.Object] = []
_selected: list[bpy.types.Object] = []


def _put_to_sleep() -> None:
    """Disable in viewports the objects rigging never reads (``asleep.sleepers``)."""
    sleeping = sleepers()
    _selected.extend(selected(sleeping))
    for obj in sleeping:
        obj.hide_viewport = True
        _asleep.append(obj)


@bpy.app.handlers.persistent
def _asleep_on_load(*_args: object) -> None:
    # Blender calls version_update handlers on a file it has just read, before it first
    # evaluates it. Persistent: a file load drops the other handlers before calling these.
    _put_to_sleep()


@contextmanager
def _geometry_asleep() -> Iterator[None]:
    """From opening a file (its load, before Blender first evaluates it) to saving it: the
    objects rigging never reads put to sleep, and shown again for the save, selected as they
    were; the save evaluates the selected ones alone.

    A character's skinned meshes, with their shape keys, are most of what Blender would
    evaluate: once as the file loads, again at each of rigging's mode switches, and once
    more as the save brings the scene up to date. What a visible armature depends on (a
    constraint's target) Blender still evaluates. An import is put to sleep once it is in
    (``_put_to_sleep`` at rigging).
    """
    _asleep.clear()
    _selected.clear()
    bpy.app.handlers.version_update.append(_asleep_on_load)
    try:
        yield
    finally:
        while _asleep_on_load in bpy.app.handlers.version_update:
            bpy.app.handlers.version_update.remove(_asleep_on_load)
        # The save keeps what was selected. Shown with Blender told, an object is selectable
        # again once the view layer syncs (the selection syncs it), and the save's evaluation,
        # which gives the selection of what it evaluates back to the file, sees it shown
        # (one that the armature depends on, its parent, was evaluated while asleep).
        for obj in _selected:
            obj.hide_viewport = False
        reselect(_selected)
        # The others are shown after that sync, unevaluated: the save evaluates what is shown
        # in the synced view layer, the selected objects alone.
        _shown_unevaluated(_asleep)
        _asleep.clear()
        _selected.clear()


def _shown_unevaluated(objects: list[bpy.types.Object]) -> None:
    """Clear ``hide_viewport`` on ``objects`` without telling the dependency graph.

    The file is saved and closed next, and the save reads the objects' data, not their
    evaluation; yet every operator call (the save's too) first brings the scene up to
    date, which, told of the change, would evaluate the skinned meshes after all.
    ``foreach_set`` writes the flags without that notice.
    """
    if not objects:
        return
    shown = {obj.as_pointer() for obj in objects}
    flags = [False] * len(bpy.data.objects)
    bpy.data.objects.foreach_get("hide_viewport", flags)
    for index, obj in enumerate(bpy.data.objects):
        if obj.as_pointer() in shown:
            flags[index] = False
    bpy.data.objects.foreach_set("hide_viewport", flags)


def _rig_armatures(job: Job, config: Config, filename: str, result: FileResult) -> None:
    _put_to_sleep()  # what the load did not: an import's objects
    _rig_each(job, config, filename, result)


def _rig_each(job: Job, config: Config, filename: str, result: FileResult) -> None:
    seen: dict[str, str] = {}
    tails_off = False
    for obj in _armatures(job):
        entry = ArmatureResult(obj.name)
        result.armatures.append(entry)
        # Two objects sharing one armature share its bones: rigging the first rigs those.
        if obj.data.name in seen:
            entry.notes.append(f"shares its bones with '{seen[obj.data.name]}': not rigged twice")
            continue
        seen[obj.data.name] = obj.name
        try:
            tails_off = _rig_armature(obj, job, config, filename, entry) or tails_off
        except RigError as error:
            raise RigError(f"armature '{obj.name}': {error.problem}", bone=error.bone, hint=error.hint) from error
    if not any(entry.status != "untouched" for entry in result.armatures):
        names = ", ".join(f"'{entry.name}'" for entry in result.armatures)
        if tails_off:  # a .blend's: an import's are fixed (see _requests)
            raise RigError(f"no limbs rigged on the armature(s) {names}: their bones' tails lie far off their joints "
                           "(see what was skipped)", hint="In a --config file, set fix_orientation = true under "
                           "[defaults] (it points the tails at the joints, and keeps the motion).")
        raise RigError(f"no limbs found on the armature(s) {names}", hint="Name the limbs in a --config file.")


def check_target(job: Job, source: Path, target: Path, fmt: str | None) -> None:
    """Refuse, before any work, a job whose input is no input or whose output must not be written."""
    if fmt is None:
        raise RigError(f"'{source}' is not an input IK Rigger reads",
                       hint=f"Give {', '.join(sorted(INPUT_FORMATS))} files.")
    if job.dry_run:
        return
    if job.in_place:
        if fmt != "blend":
            raise RigError(f"'{source}' is not a .blend: it cannot be rigged in place",
                           hint="Use --out DIR; it is written there as a .blend.")
        return
    if target.resolve() == source.resolve():
        raise RigError(f"the output would overwrite the input '{source}'",
                       hint="Use --out with another folder, or --in-place.")
    if target.is_dir():
        raise RigError(f"the output '{target}' is a folder", hint="Move it away, or give another --out.")
    if target.exists() and not job.overwrite:
        raise RigError(f"the output '{target}' exists", hint="Pass --overwrite to replace it, or another --out.")


def new_result(job: Job) -> FileResult:
    """The result of ``job`` before any work: failed, with no reason yet."""
    return FileResult(job.input, None if job.dry_run else job.output)


def rig_file(job: Job, config: Config, result: FileResult | None = None) -> FileResult:
    """Open (or import), rig and save one file; every problem of the file ends up in the result.

    A caller that passes its own ``result`` still has it, as far as the file got, when an
    interrupt unwinds through here.
    """
    result = new_result(job) if result is None else result
    source = Path(job.input)
    # In place, a symbolic link stays a link: the file it points to is the one rewritten.
    target = Path(os.path.realpath(source)) if job.in_place else Path(job.output)
    fmt = input_format(source)
    try:
        check_target(job, source, target, fmt)
        # An interrupt waits for the end of opening and rigging (then of writing): Blender runs
        # Python inside them (handlers, importers), where it would swallow the exception.
        with interrupts_held(), _geometry_asleep():
            started = time.perf_counter()
            if fmt == "blend":
                check_blend_file(source)
                compress = is_compressed(source)
                result.warnings.extend(open_untrusted(source, job.allow_newer))
            else:
                compress = False
                result.warnings.extend(import_foreign(source, str(fmt), config))
            result.seconds_open = time.perf_counter() - started
            started = time.perf_counter()
            _rig_armatures(job, config, source.name, result)
        result.seconds_rig = time.perf_counter() - started
        if job.dry_run:
            result.status = "planned"
            return result
        started = time.perf_counter()

        def committed() -> None:
            result.seconds_save = time.perf_counter() - started
            result.status = "rigged"

        target.parent.mkdir(parents=True, exist_ok=True)
        opened = Path(os.path.abspath(source)).parent if fmt == "blend" else None
        save_atomically(target, _writer(compress, opened, target), keep_backup=job.in_place,
                        overwrite=job.overwrite or job.in_place, committed=committed)
    except Interrupted:
        if result.status != "rigged":
            result.status, result.error = "interrupted", "stopped by the interrupt"
        raise
    except RigError as error:
        result.error = error.message
    except OSError as error:
        where = error.filename or target
        result.error = f"'{where}': {error.strerror or error}"
    except Exception as error:  # IK Rigger's own bug on this file: loud in the report, the run goes on
        result.error = f"IK Rigger failed on this file ({type(error).__name__}: {error}); please report it"
        result.details = traceback.format_exc()
    finally:
        result.warnings.extend(f"{entry.name}: {text}" for entry in result.armatures for text in entry.warnings)
        result.notes.extend(f"{entry.name}: {text}" for entry in result.armatures for text in entry.notes)
    return result
