"""What a batch run is made of: its jobs, their results, its exit codes and the errors that end it early.

Plain data, JSON-ready: a worker sends a ``FileResult`` as it is, and the report holds them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.notes import split

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments: exit code 2 before any file is opened."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: stop the file at hand (its temporary output removed) and the run.

    A BaseException, like KeyboardInterrupt, so no handler of a file's own problems
    takes it for one.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


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
    exports: list[str] = field(default_factory=list)  # the game-engine files written beside it (--export)

    def gather(self) -> None:
        """Each armature's warnings and notes among the file's, under its name (once it is done)."""
        self.warnings.extend(f"{entry.name}: {text}" for entry in self.armatures for text in entry.warnings)
        self.notes.extend(f"{entry.name}: {text}" for entry in self.armatures for text in entry.notes)

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
    export: str | None = None  # "glb", "gltf" or "fbx": also write each rigged armature for game engines

    @property
    def target(self) -> Path:
        """The file the job writes: its output, or in place the file its input points to (a
        symbolic link stays a link: the file it points to is the one rewritten)."""
        return Path(os.path.realpath(self.input)) if self.in_place else Path(self.output)
