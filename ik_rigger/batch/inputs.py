"""The batch's inputs: files, folders and globs expanded to the files to rig, and each one's job."""

from __future__ import annotations

import argparse
import errno
import glob
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .jobs import INPUT_FORMATS, FileResult, Job, UsageError, input_format
from .saving import interrupts_held, is_temporary, private_folder


@dataclass
class Inputs:
    """What the input arguments name: files to rig, paths that fail as they are, and what was left out."""

    found: list[tuple[Path, Path]] = field(default_factory=list)  # (file, path under --out)
    failed: list[FileResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # folders named that hold no input file


def _inside(path: Path, folder: Path | None) -> bool:
    return folder is not None and (path == folder or folder in path.parents)


def _unreadable(path: Path | str, error: OSError) -> str:
    """The failure of an input that cannot be looked at, and what to do where that is plain."""
    if error.errno == errno.ELOOP:
        return (f"'{path}' is a symbolic link that leads back to itself ({error.strerror}). Point it at a file, "
                "or remove it.")
    return f"'{path}': {error.strerror or error}"


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _add_file(path: Path, relative: Path, inputs: Inputs, out: Path | None) -> None:
    """One candidate input: taken, failed with why, or left out with why.

    ``out`` is the --out folder when searching (folders and globs); a file named on
    the command line is always taken.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        broken = path.is_symlink()
        inputs.failed.append(FileResult(str(path), None, error=f"'{path}' " + (
            "is a broken symbolic link" if broken else "does not exist")))
        return
    except OSError as error:
        inputs.failed.append(FileResult(str(path), None, error=_unreadable(path, error)))
        return
    if not stat.S_ISREG(mode):
        inputs.failed.append(FileResult(str(path), None, error=f"'{path}' is {_kind(mode)}, not a file"))
        return
    if _inside(Path(os.path.realpath(path)), out):
        inputs.notes.append(f"not an input: '{path}' is inside the --out folder")
        return
    inputs.found.append((path, relative))


def _walk(top: Path, inputs: Inputs, out: Path | None) -> None:
    """Every input under ``top``, following links once; unreadable folders fail, loops are said."""
    visited: set[tuple[int, int]] = set()

    def unreadable(error: OSError) -> None:
        inputs.failed.append(FileResult(str(error.filename), None,
                                        error=f"cannot search folder '{error.filename}' ({error.strerror})"))

    for folder, folders, files in os.walk(top, onerror=unreadable, followlinks=True):
        here = Path(folder)
        identity = os.stat(here)
        visited.add((identity.st_dev, identity.st_ino))
        kept = []
        for name in sorted(folders):
            if is_temporary(name):  # a save's own folder: what it holds is being written, or left by a killed run
                continue
            child = here / name
            real = Path(os.path.realpath(child))
            try:
                child_stat = os.stat(child)
            except OSError as error:
                inputs.failed.append(FileResult(str(child), None, error=_unreadable(child, error)))
                continue
            if _inside(real, out):
                inputs.notes.append(f"not searched: '{child}' is the --out folder or inside it")
            elif (child_stat.st_dev, child_stat.st_ino) in visited:  # walking top-down, ancestors are in
                inputs.notes.append(f"not searched again: '{child}' links back to '{real}' (a loop)")
            else:
                kept.append(name)
        folders[:] = kept
        for name in sorted(files):
            path = here / name
            if input_format(path) is not None:
                _add_file(path, path.relative_to(top), inputs, out)


def expand_inputs(arguments: Sequence[str], out: Path | None = None) -> Inputs:
    """The input files the arguments name, each with its path under --out.

    A missing path or a glob that matches nothing fails as a file rather than being
    dropped; nothing under ``out`` is ever taken.
    """
    inputs = Inputs()
    real_out = Path(os.path.realpath(out)) if out is not None else None
    for text in arguments:
        path = Path(text)
        try:
            folder = stat.S_ISDIR(os.stat(path).st_mode)
        except FileNotFoundError:
            folder = False
        except OSError as error:  # in a folder it may not enter: that file fails, the run goes on
            inputs.failed.append(FileResult(text, None, error=_unreadable(text, error)))
            continue
        if folder:
            if _inside(Path(os.path.realpath(path)), real_out):
                inputs.notes.append(f"not searched: '{path}' is the --out folder or inside it")
            else:
                before = len(inputs.found) + len(inputs.failed)
                _walk(path, inputs, real_out)
                if len(inputs.found) + len(inputs.failed) == before:
                    inputs.empty.append(text)
        elif any(mark in text for mark in "*?[") and not path.exists():
            # Searched as a folder is: what it matches of no input's format (a .blend1 backup, a note) is left out.
            matches = [Path(match) for match in sorted(glob.glob(text, recursive=True))]
            files = [match for match in matches if input_format(match) is not None and not match.is_dir()]
            for match in files:
                _add_file(match, Path(match.name), inputs, real_out)
            if not files:
                inputs.failed.append(FileResult(text, None, error=f"'{text}' matches no input file ({_formats()})"))
        elif input_format(path) is None and not os.path.lexists(path):
            # A folder, by its name: a mistyped one would make a run of nothing.
            raise UsageError(f"'{text}' does not exist: no such folder or file; check the path")
        else:
            _add_file(path, Path(path.name), inputs, None)
    return inputs


def _formats() -> str:
    return ", ".join(sorted(INPUT_FORMATS))


def _output(relative: Path, out: Path) -> Path:
    """Where one input's rigged file goes: imported formats become .blend files; a file named that is no
    input keeps its name (it fails, writing nothing)."""
    return out / (relative if input_format(relative) in ("blend", None) else relative.with_suffix(".blend"))


def _writable(folder: Path, what: str) -> None:
    """Refuse a folder this run could not write in, before any file is touched."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"cannot write the {what} in '{folder}': '{existing}' is not a folder")
    try:
        with interrupts_held():  # an interrupt between the two would leave the folder behind
            private_folder(existing).rmdir()
    except OSError as error:
        raise UsageError(f"cannot write the {what} in '{folder}' ({error.strerror or error})") from error


def _out_apart(out: Path, arguments: Sequence[str]) -> None:
    """Refuse an --out folder that is an input folder or inside one: its outputs would sit among
    the inputs, and the report with them."""
    real_out = Path(os.path.realpath(out))
    for text in arguments:
        if os.path.isdir(text) and _inside(real_out, Path(os.path.realpath(text))):
            raise UsageError(f"--out '{out}' is the input folder '{text}' or inside it: give a folder "
                             "outside the inputs")


def plan_jobs(args: argparse.Namespace) -> tuple[list[Job], Inputs]:
    """The files to rig and where each result goes; refuses clashing outputs and a report in the way."""
    if not args.inputs:
        raise UsageError("give at least one input file, folder or glob")
    if args.in_place and args.out:
        raise UsageError("--out and --in-place exclude each other")
    if not (args.in_place or args.out or args.dry_run):
        raise UsageError("say where results go: --out DIR (inputs stay untouched) or --in-place")
    if args.jobs < 1:
        raise UsageError("--jobs must be 1 or more")
    if args.out is not None:
        _out_apart(args.out, args.inputs)
    inputs = expand_inputs(args.inputs, None if args.in_place else args.out)
    if inputs.empty:
        folders = ", ".join(f"'{folder}'" for folder in inputs.empty)
        if not (inputs.found or inputs.failed):  # nothing to do: the command names the wrong folder
            raise UsageError(f"no input files in {folders} (searched for {_formats()}, in folders within too): "
                             "nothing to rig; check the path")
        inputs.warnings.append(f"no input files in {folders} ({_formats()})")
    jobs: list[Job] = []
    outputs: dict[Path, Path] = {}
    for source, relative in inputs.found:
        target = source if args.in_place or args.out is None else _output(relative, args.out)
        key = Path(os.path.realpath(target))
        if key in outputs:
            if args.in_place or os.path.realpath(source) == os.path.realpath(outputs[key]):
                # The same file reached twice (a link and its target; a folder and a file in it): rig it once.
                inputs.notes.append(f"'{source}' is the same file as '{outputs[key]}': rigged once")
                continue
            raise UsageError(f"'{outputs[key]}' and '{source}' would both be written to '{target}': rig one of them, "
                             "or each into an --out folder of its own (a glob such as '*.fbx' names one format)")
        if input_format(source) is not None:  # one named that is no input (a .blend1) fails alone, writing nothing
            outputs[key] = source
        jobs.append(Job(str(source), str(target), in_place=args.in_place, dry_run=args.dry_run,
                        overwrite=args.overwrite, allow_newer=args.allow_newer, armature=args.armature,
                        export=getattr(args, "export", None)))
    if args.report is not None:
        report = Path(os.path.realpath(args.report))
        taken = {Path(os.path.realpath(source)) for source, _ in inputs.found} | set(outputs)
        if args.config is not None:
            taken.add(Path(os.path.realpath(args.config)))
        if report in taken or report.is_dir():
            raise UsageError(f"--report '{args.report}' is an input, an output or a folder: "
                             "it would be overwritten; give another file")
        _writable(report.parent, "report")
    if args.out is not None and not args.dry_run:
        _writable(args.out, "rigged files")
    return jobs, inputs
