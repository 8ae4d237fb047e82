"""Rig one .blend file safely: open without running its scripts, rig, save atomically.

Used by the batch command (``cli``); each call handles one file in this Blender and
returns a plain, JSON-ready result. Nothing here raises for a bad file: problems
become the result's ``error``, so one broken file never stops a run.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import bpy

from ..core.config import Config
from ..core.errors import RigError
from ..core.plan import LimbOptions, Skeleton
from .auto import detected_requests
from .build import build_limbs, mirrored_request, plan_limbs
from .skeleton import read_skeleton

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Blender writes zstd files in the seekable format, which ends with this footer.
_ZSTD_SEEKABLE_FOOTER = b"\xb1\xea\x92\x8f"
TEMP_SUFFIX = ".ik_rigger-tmp"


@dataclass
class ArmatureResult:
    name: str
    limbs: list[list[str]] = field(default_factory=list)
    planned: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class FileResult:
    """What happened to one input file; ``status`` is rigged, planned or failed."""

    input: str
    output: str | None
    status: str = "failed"
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    armatures: list[ArmatureResult] = field(default_factory=list)
    seconds_open: float = 0.0
    seconds_rig: float = 0.0
    seconds_save: float = 0.0

    @property
    def limb_count(self) -> int:
        return sum(len(armature.limbs) for armature in self.armatures)


@dataclass(frozen=True)
class Job:
    """One file to rig and where its result goes (``output`` is the input for --in-place)."""

    input: str
    output: str
    in_place: bool = False
    dry_run: bool = False


@contextmanager
def quiet() -> Iterator[None]:
    """Hold back what Blender itself prints (read and save notices) so the batch
    command's own lines stay readable; Blender writes them to the process's stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as sink:
            os.dup2(sink.fileno(), 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def check_blend_file(path: Path) -> None:
    """Refuse what is plainly not a complete .blend before Blender tries to read it."""
    if not path.exists():
        raise RigError(f"'{path}' does not exist", hint="Check the path.")
    if not path.is_file():
        raise RigError(f"'{path}' is not a file", hint="Give .blend files or folders holding them.")
    truncated = RigError(f"'{path}' is truncated (its end is missing)",
                         hint="Use an intact copy of the file (a .blend1 backup, for one).")
    with path.open("rb") as stream:
        head = stream.read(12)
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


def open_untrusted(path: Path) -> None:
    """Open a .blend with Python auto-run off: no registered text and no driver expression runs."""
    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    try:
        with quiet():
            bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False, use_scripts=False)
    except RuntimeError as error:
        raise RigError(f"Blender cannot read '{path}' ({str(error).strip()})",
                       hint="The file may be corrupt; use an intact copy.") from error


def save_atomically(target: Path, write: Callable[[Path], None], *, keep_backup: bool) -> None:
    """Write through ``write(temporary)`` beside ``target``, then rename it into place.

    An interrupted run leaves either the old file or the complete new one, never a
    broken one. ``keep_backup`` keeps the old file as ``.blend1``, as Blender does.
    """
    temporary = target.with_name(target.name + TEMP_SUFFIX)
    try:
        write(temporary)
        if keep_backup and target.exists():
            shutil.copy2(target, target.with_name(target.name + "1"))
        os.replace(temporary, target)
    finally:
        if temporary.exists():
            temporary.unlink()


def _write_blend(temporary: Path) -> None:
    with quiet():
        bpy.ops.wm.save_as_mainfile(filepath=str(temporary), copy=True, check_existing=False, compress=False)
    if not temporary.exists():
        raise RigError(f"Blender did not write '{temporary}'", hint="Check that the folder can be written.")


def _armatures(filter_name: str | None, config: Config, filename: str) -> list[bpy.types.Object]:
    armatures = [obj for obj in bpy.data.objects if obj.type == "ARMATURE" and obj.library is None]
    if filter_name:
        chosen = [obj for obj in armatures if obj.name == filter_name]
        if not chosen:
            names = ", ".join(sorted(obj.name for obj in armatures)) or "none"
            raise RigError(f"no armature named '{filter_name}' (armatures: {names})", hint="Check --armature.")
        return chosen
    if not armatures:
        raise RigError("the file has no armature", hint="Batch rigging needs a character with an armature.")
    named = [obj for obj in armatures if config.names_armature(obj.name, filename)]
    if named:
        return named
    if len(armatures) > 1:
        names = ", ".join(sorted(obj.name for obj in armatures))
        raise RigError(f"the file has several armatures ({names})",
                       hint="Pick one with --armature NAME, or name them in the --config file.")
    return armatures


def _requests(obj: bpy.types.Object, skeleton: Skeleton, config: Config, filename: str,
              result: ArmatureResult) -> list[tuple[str, LimbOptions]]:
    """The limbs to build on ``obj``: the config's, then detected ones it does not cover."""
    section = config.for_armature(obj.name, filename)
    requests: list[tuple[str, LimbOptions]] = []
    if section is not None:
        for limb in section.limbs:
            requests.append((limb.last, limb.options))
            if limb.both_sides:
                other = mirrored_request(obj, limb.last, limb.options)
                if other is None:
                    result.notes.append(f"'{limb.last}': no mirrored bone, rigged one side only")
                else:
                    requests.append(other)
    if section is None or section.detect:
        covered = {name for last, options in requests for name in skeleton.lineage(last, options.chain_length)}
        found, detection = detected_requests(skeleton, config.defaults, covered)
        requests.extend(found)
        result.skipped.extend(f"{item.bone}: {item.reason}" for item in detection.skipped)
    return requests


def rig_file(job: Job, config: Config, armature: str | None = None) -> FileResult:
    """Open, rig and save one file; every user-side problem ends up in the result."""
    result = FileResult(job.input, None if job.dry_run else job.output)
    source, target = Path(job.input), Path(job.output)
    try:
        if not job.in_place and not job.dry_run and target.resolve() == source.resolve():
            raise RigError(f"the output would overwrite the input '{source}'",
                           hint="Use --out with another folder, or --in-place.")
        check_blend_file(source)
        started = time.perf_counter()
        open_untrusted(source)
        result.seconds_open = time.perf_counter() - started
        started = time.perf_counter()
        for obj in _armatures(armature, config, source.name):
            entry = ArmatureResult(obj.name)
            result.armatures.append(entry)
            # Files open out of Edit mode, so the bones read here stay current for the build.
            skeleton = read_skeleton(obj)
            requests = _requests(obj, skeleton, config, source.name, entry)
            if not requests:
                raise RigError(f"no limbs found on the armature '{obj.name}'",
                               hint="Name the limbs in a --config file.")
            if job.dry_run:
                entry.planned = [plan.describe() for plan in plan_limbs(obj, requests, skeleton)]
                continue
            plans = build_limbs(obj, requests, skeleton)
            entry.limbs = [list(plan.chain) for plan in plans]
            entry.notes.extend(note for plan in plans for note in plan.notes)
        result.seconds_rig = time.perf_counter() - started
        if job.dry_run:
            result.status = "planned"
            return result
        started = time.perf_counter()
        if not target.parent.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
        save_atomically(target, _write_blend, keep_backup=job.in_place)
        result.seconds_save = time.perf_counter() - started
        result.status = "rigged"
    except RigError as error:
        result.error = error.message
    except OSError as error:
        result.error = f"cannot write '{target}' ({error.strerror or error})"
    result.warnings = [note for entry in result.armatures for note in entry.notes]
    return result

