"""Opening one file for the batch: a .blend without running its scripts, after reading its header, or a
foreign format through Blender's bundled importer with the batch's settings for it."""

from __future__ import annotations

import errno
import gzip
import io
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import addon_utils
import bpy

from ..core.errors import RigError
from ..limb.config import Config, OptionSpec
from ..rig.output import blender_output

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Blender writes zstd files in the seekable format, which ends with this footer.
_ZSTD_SEEKABLE_FOOTER = b"\xb1\xea\x92\x8f"
# What a path that is not there fails with (as ``Path.exists`` takes them): any other failure is the file's own.
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
# "BLENDER-v402" (before 5.0) or "BLENDER17-01v0502": the version that saved the file.
_HEADER_VERSION = re.compile(rb"^BLENDER(?:[-_][vV](\d)(\d\d)|\d\d-\d\d[vV](\d\d)(\d\d))")


_LOAD_REPORT = re.compile(r"^(?:Warning|Error): (.*)$")


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


def _zstd_start(stream: IO[bytes], size: int) -> bytes | None:
    """The first ``size`` bytes a zstd frame holds, from the stream just past its magic number.

    Through the ``zstandard`` module where this Python has it (Blender bundles it, and the ``bpy``
    module requires it); otherwise read off the frame's first block when zstd stored it as it was
    (raw) or as one repeated byte, None when it is compressed."""
    try:
        import zstandard
    except ImportError:
        pass
    else:
        stream.seek(0)
        try:
            return zstandard.ZstdDecompressor().stream_reader(stream).read(size)
        except zstandard.ZstdError:
            return None
    descriptor = stream.read(1)
    if not descriptor:
        return None
    flags = descriptor[0]
    single_segment = bool(flags & 0x20)
    content_size = (1 if single_segment else 0, 2, 4, 8)[flags >> 6]
    stream.seek((0 if single_segment else 1) + (0, 1, 2, 4)[flags & 3] + content_size, os.SEEK_CUR)
    block = stream.read(3)
    if len(block) < 3:
        return None
    header = int.from_bytes(block, "little")
    kind, length = (header >> 1) & 3, header >> 3
    if kind == 0:  # raw
        return stream.read(min(length, size))
    if kind == 1:  # one byte, repeated
        return stream.read(1) * min(length, size)
    return None


def blend_header(path: Path, size: int = 24) -> bytes | None:
    """The first ``size`` bytes of the .blend at ``path`` as Blender reads them: plain, or
    unpacked from gzip (before 3.0) or zstd; None when they cannot be read (see ``_zstd_start``)."""
    try:
        with path.open("rb") as stream:
            magic = stream.read(4)
            if magic.startswith(_GZIP_MAGIC):
                stream.seek(0)
                with gzip.open(stream) as unpacked:
                    return unpacked.read(size)
            if magic == _ZSTD_MAGIC:
                return _zstd_start(stream, size)
            stream.seek(0)
            return stream.read(size)
    except (OSError, EOFError):
        return None


def is_compressed(path: Path) -> bool:
    """True for a .blend Blender wrote compressed (zstd, or gzip before 3.0)."""
    with path.open("rb") as stream:
        head = stream.read(4)
    return head.startswith(_GZIP_MAGIC) or head.startswith(_ZSTD_MAGIC)


def check_blend_file(path: Path) -> bool:
    """Refuse what is plainly not a complete .blend before Blender tries to read it; True when Blender
    wrote it compressed (zstd, or gzip before 3.0). One look at the file and one read of its two ends:
    the batch asks this of every input and every file it writes."""
    try:
        info = path.stat()
    except OSError as error:
        if error.errno not in _NOT_THERE:
            raise
        raise RigError(f"'{path}' does not exist", hint="Check the path.") from error
    if not stat.S_ISREG(info.st_mode):
        raise RigError(f"'{path}' is not a regular file", hint="Give .blend files or folders holding them.")
    truncated = RigError(f"'{path}' is truncated (its end is missing)",
                         hint="Use an intact copy of the file (a .blend1 backup, for one).")
    with path.open("rb") as stream:
        head = stream.read(24)
        stream.seek(max(info.st_size - 64, 0))
        tail = stream.read()
    if head.startswith(_ZSTD_MAGIC):
        if not tail.endswith(_ZSTD_SEEKABLE_FOOTER):
            raise truncated
        return True
    if head.startswith(_GZIP_MAGIC):
        try:
            with gzip.open(path) as unpacked:
                while unpacked.read(1 << 20):
                    pass
        except (EOFError, gzip.BadGzipFile) as error:
            raise truncated from error
        return True
    if not head.startswith(b"BLENDER"):
        raise RigError(f"'{path}' is not a .blend file", hint="Give .blend files saved by Blender.")
    # An uncompressed .blend ends with its ENDB block; a cut-off copy does not.
    if b"ENDB" not in tail:
        raise truncated
    return False


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
        head = blend_header(path)
        version = _header_version(head) if head is not None else None
        if version is not None and _newer_than_this(version):
            raise RigError(f"'{path}' was saved by Blender {_version_text(version)}, which this Blender "
                           f"({_version_text(bpy.app.version)}) cannot read",
                           hint=f"Rig it with Blender {_version_text(version)} or newer.") from error
        # A compressed file whose start could not be unpacked hides the version that saved it: a newer
        # Blender's may be why.
        newer = (f", or saved by a Blender newer than this one ({_version_text(bpy.app.version)})"
                 if head is None and is_compressed(path) else "")
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
