"""The batch's ``--export``: each rigged armature of a file written for game engines beside its .blend."""

from __future__ import annotations

from pathlib import Path

import bpy

from .. import api
from ..core.errors import RigError
from ..rig.export import file_stem
from ..rig.scene_state import in_its_scene
from .jobs import FileResult, Job


def _as_named(written: Path, path: Path) -> str:
    """A file the export wrote, named as ``path`` is (relative where --out was): the export's report
    names it absolute, while the line and the report name the .blend beside it as the user did."""
    return str(path.parent / written.name) if written.parent == path.resolve().parent else str(written)


def export_rigged(job: Job, target: Path, result: FileResult) -> None:
    """Write OUT/NAME.glb (.gltf, .fbx) beside the saved ``target`` for its rigged armature, or
    OUT/NAME_ARMATURE.glb for each of several; each file written is listed in the result, and its
    warnings under its armature's name. A refusal fails the file, naming it (its .blend stays saved)."""
    rigged = [entry for entry in result.armatures if entry.status == "rigged"]
    try:
        for entry in rigged:
            stem = target.stem if len(rigged) == 1 else f"{target.stem}_{file_stem(entry.name)}"
            path = target.with_name(f"{stem}.{job.export}")
            if path.exists() and not (job.overwrite or job.in_place):
                raise RigError(f"the export '{path}' exists", hint="Pass --overwrite to replace it, or another --out.")
            obj = bpy.data.objects[entry.name]
            with in_its_scene(obj):
                report = api.export(obj, str(path))
            result.exports.extend(_as_named(Path(file), path) for file in report.files)
            entry.warnings.extend(f"export: {warning}" for warning in report.warnings)
    except RigError as error:
        result.status, result.error = "failed", f"rigged and saved, but not exported: {error.message}"
