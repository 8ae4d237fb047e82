"""Rig one opened file: the armatures it holds, the limbs chosen from the config or detected,
built through ``api``, the other objects put to sleep meanwhile; then its atomic save.

Each call handles one file in this Blender and returns a plain, JSON-ready result. Nothing here
raises for a bad file: problems become the result's ``error``, so one broken file never stops a
run. Only an interrupt (``Interrupted``) goes through, after the file's temporary output is removed.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import bpy

from .. import api
from ..core.errors import RigError
from ..core.model import Skeleton
from ..limb.config import Config
from ..limb.options import LimbOptions
from ..limb.requests import detected_requests, unnamed
from ..rig import records
from ..rig.asleep import reselect, selected, sleepers
from ..rig.build import mirrored_request, plan_limbs, rig_able
from ..rig.modes import kept_mode
from ..rig.scene_state import in_its_scene, library_file
from ..rig.skeleton import check_editable, followed_bones, read_skeleton
from ..rig.upgrade import prepare, upgrade
from .exporting import export_rigged
from .jobs import INPUT_FORMATS, ArmatureResult, FileResult, Interrupted, Job, input_format
from .opening import check_blend_file, import_foreign, open_untrusted
from .saving import _writer, file_identity, interrupts_held, room_left, save_atomically, unchanged_since


def _armatures(job: Job) -> list[bpy.types.Object]:
    """The armatures to rig: the file's own, and those a scene shows linked from a library (a shot's
    character), to be refused as such; not one that an override of the file stands in for."""
    overridden = {obj.override_library.reference.as_pointer() for obj in bpy.data.objects
                  if obj.override_library is not None and obj.override_library.reference is not None}
    armatures = [obj for obj in bpy.data.objects if obj.type == "ARMATURE" and (
        obj.library is None or (obj.users_scene and obj.as_pointer() not in overridden))]
    if job.armature:
        chosen = [obj for obj in armatures if obj.name == job.armature]
        if not chosen:
            names = ", ".join(sorted(obj.name for obj in armatures)) or "none"
            raise RigError(f"no armature named '{job.armature}' (armatures: {names})", hint="Check --armature.")
        return chosen
    missing = sorted(library_file(library) for library in bpy.data.libraries if library.is_missing)
    if not armatures and missing:  # the character may be what the file links from there
        raise RigError(f"the file has no armature of its own, and the library '{missing[0]}' it links is missing",
                       hint="Put the library back where the file looks for it (see the warnings), or rig the "
                       "character in its own file.")
    if not armatures:
        raise RigError("the file has no armature", hint="Batch rigging needs a character with an armature.")
    return sorted(armatures, key=lambda obj: obj.name)


def _requests(obj: bpy.types.Object, skeleton: Skeleton, config: Config, filename: str,
              result: ArmatureResult) -> tuple[list[tuple[str, LimbOptions]], list[tuple[str, LimbOptions]], bool]:
    """The limbs to build on ``obj``: the config's, and the detected ones it does not cover; and
    whether detection skipped a limb only because its bones' tails lie off their joints.

    Bones as an importer left them (tails off their joints) are rigged as the API rigs them, on
    a hidden chain (``parts.hidden``): the same limbs, the user's bones untouched.
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
        # As the API does: limbs whose bones do not run joint to joint are solved on a hidden chain.
        found, detection = detected_requests(skeleton, config.defaults, covered, followed_bones(obj))
        result.skipped.extend(f"{item.bone}: {item.reason}" for item in detection.skipped)
        tails_off = any(item.tails_off for item in detection.skipped)
        if not named and (why := unnamed(detection, skeleton.bones)):
            result.notes.append(f"no limbs found: {why}")
    return named, found, tails_off


def _own_options(obj: bpy.types.Object, found: list[tuple[str, LimbOptions]]) -> list[tuple[str, LimbOptions]]:
    """Each detected limb rigged already with its own options, as Rebuild Limb and ``api.build`` rebuild it (its
    Foot Roll, soft IK or stretch kept, not the defaults'); the others as they are. Name a limb in the config
    to change its options."""
    if not obj.ik_rigger.limbs:
        return found
    prepare(obj)  # the records' names up to date after renames, as a build brings them
    own = []
    for last, options in found:
        record = records.limb_of(obj, last)
        chain = records.resolve(obj, record).chain if record is not None else []
        own.append((last, record.to_options() if record is not None and chain and chain[-1] == last else options))
    return own


def _rig_armature(obj: bpy.types.Object, job: Job, config: Config, filename: str, entry: ArmatureResult,
                  kept_out: list[RigError]) -> bool:
    """Rig ``obj`` as ``entry`` then says; True when detection skipped a limb only because its
    bones' tails lie off their joints. An armature no limb of which can be rigged where the file keeps
    it (a collection excluded, hidden or disabled in viewports, no collection of the scene's view
    layer; linked from a library or overridden) is left as it is, its refusal appended to ``kept_out``,
    as the API refuses it."""
    entered = False
    try:
        check_editable(obj)  # linked from a library, or an override: rigged in the character's own file
        # One block for reading and building, as api.auto_rig's: the armature checked once for them all.
        with kept_mode(obj):
            entered = True
            return _rig_in_place(obj, job, config, filename, entry)
    except RigError as error:
        if entered:
            raise
        hint = error.hint.rstrip(".")
        entry.skipped.append(f"every limb: {error.problem}; {hint[:1].lower()}{hint[1:]}")
        kept_out.append(error)
        return False


def _rig_in_place(obj: bpy.types.Object, job: Job, config: Config, filename: str, entry: ArmatureResult) -> bool:
    # Files open out of Edit mode, so the bones read here stay current for the build.
    skeleton = read_skeleton(obj)
    named, found, tails_off = _requests(obj, skeleton, config, filename, entry)
    # A rig from an earlier IK Rigger plays only where the add-on is installed.
    upgraded = [] if job.dry_run else upgrade(obj)
    entry.notes.extend(upgraded)
    if job.dry_run:
        found, refused = rig_able(obj, found, skeleton)  # what the build would skip
        entry.skipped.extend(f"{bone}: {why}" for bone, why in refused)
        if named or found:
            entry.planned = [plan.describe() for plan in plan_limbs(obj, [*named, *found], skeleton)]
            entry.status = "planned"
            return tails_off
    elif named or found:
        # Motion already on the armature (an animated file, an imported clip) is kept by the
        # build as each limb's ``animation`` option says; its notes say what was kept.
        built, refused = api.build_found(obj, named, _own_options(obj, found), skeleton)
        entry.skipped.extend(f"{bone}: {why}" for bone, why in refused)
        if built:
            entry.limbs = [list(limb.chain) for limb in built]
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
        # A rebuild drops a bone shape no limb uses any more (an earlier release's pole line's): it is gone.
        chosen = _still_there(_selected)
        for obj in chosen:
            obj.hide_viewport = False
        reselect(chosen)
        # The others are shown after that sync, unevaluated: the save evaluates what is shown
        # in the synced view layer, the selected objects alone.
        _shown_unevaluated(_still_there(_asleep))
        _asleep.clear()
        _selected.clear()


def _still_there(objects: list[bpy.types.Object]) -> list[bpy.types.Object]:
    """Those of ``objects`` rigging did not remove."""
    there = []
    for obj in objects:
        try:
            obj.as_pointer()
        except ReferenceError:
            continue
        there.append(obj)
    return there


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
    seen: dict[int, str] = {}  # by the data itself: a linked armature's may have a local one's name
    tails_off = False
    kept_out: list[RigError] = []
    for obj in _armatures(job):
        entry = ArmatureResult(obj.name)
        result.armatures.append(entry)
        # Two objects sharing one armature share its bones: rigging the first rigs those.
        if obj.data.as_pointer() in seen:
            entry.notes.append(f"shares its bones with '{seen[obj.data.as_pointer()]}': not rigged twice")
            continue
        seen[obj.data.as_pointer()] = obj.name
        try:
            with in_its_scene(obj) as elsewhere:
                if elsewhere:
                    entry.notes.append(elsewhere)
                tails_off = _rig_armature(obj, job, config, filename, entry, kept_out) or tails_off
        except RigError as error:
            raise RigError(f"armature '{obj.name}': {error.problem}", bone=error.bone, hint=error.hint) from error
    if not any(entry.status != "untouched" for entry in result.armatures):
        names = ", ".join(f"'{entry.name}'" for entry in result.armatures)
        if tails_off:  # a .blend's: an import's are fixed (see _requests)
            raise RigError(f"no limbs rigged on the armature(s) {names}: their bones' tails lie far off their joints "
                           "(see what was skipped)", hint="In a --config file, set fix_orientation = true under "
                           "[defaults] (it points the tails at the joints, and keeps the motion).")
        if kept_out:  # what keeps the first out is what to do first
            raise RigError(f"no limbs rigged on the armature(s) {names}: {kept_out[0].problem}", hint=kept_out[0].hint)
        raise RigError(f"no limbs found on the armature(s) {names}", hint="Name the limbs in a --config file.")


# What Blender names the backups of a .blend it saves over (Save Versions: .blend1, .blend2, ...).
_BACKUP = re.compile(r"\.blend\d+", re.IGNORECASE)


def check_target(job: Job, source: Path, target: Path, fmt: str | None) -> None:
    """Refuse, before any work, a job whose input is no input or whose output must not be written."""
    if fmt is None and _BACKUP.fullmatch(source.suffix):
        raise RigError(f"'{source}' is Blender's backup of an earlier save of '{source.stem}.blend', not an input "
                       "IK Rigger reads", hint="To rig that save, rename a copy to end in .blend.")
    if fmt is None:
        raise RigError(f"'{source}' is not an input IK Rigger reads",
                       hint=f"Give {', '.join(sorted(INPUT_FORMATS))} files.")
    if job.dry_run:
        return
    if job.in_place:
        if fmt != "blend":
            raise RigError(f"'{source}' is not a .blend: it cannot be rigged in place",
                           hint="Use --out DIR; it is written there as a .blend.")
        _check_writable(target, "the input", "or rig it with --out DIR")  # through a link: the file it names
        return
    # An output that is not there yet is no input (an input that is not there either is compared, as its
    # path may be the output's): each path resolved costs a look at every folder on the way.
    if (os.path.lexists(target) or not os.path.lexists(source)) and target.resolve() == source.resolve():
        raise RigError(f"the output would overwrite the input '{source}'",
                       hint="Use --out with another folder, or --in-place.")
    try:
        there = target.stat().st_mode  # one look for all three questions: a folder, a file, none
    except OSError:
        return
    if stat.S_ISDIR(there):
        raise RigError(f"the output '{target}' is a folder", hint="Move it away, or give another --out.")
    if not job.overwrite:
        raise RigError(f"the output '{target}' exists", hint="Pass --overwrite to replace it, or another --out.")
    _check_writable(target, "the output", "or give another --out")


# The errors of a file or folder that may not be written, whoever asks (root too: an immutable file).
_NOT_WRITABLE = (errno.EPERM, errno.EACCES, errno.EROFS)


def _check_writable(path: Path, what: str, otherwise: str) -> None:
    """Refuse to replace ``path`` marked read-only (no one may write it: root may, but the mark says not
    to) or that this process may not write (an immutable file, a read-only disk), or whose folder it may
    not write in: the backup and the new file are moved in there."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # what is wrong with it is said where it is read
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK):
        raise RigError(f"{what} '{path}' is read-only, so it is not replaced",
                       hint=f"Make it writable (chmod u+w; chattr -i if it is immutable), {otherwise}.")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise RigError(f"the folder '{path.parent}' of {what} '{path.name}' cannot be written in",
                       hint=f"Make the folder writable (chmod u+w; chattr -i if it is immutable), {otherwise}.")


def _os_error(error: OSError, target: Path, in_place: bool) -> str:
    """The failure of a file for ``error``: what it names, and what to do when its disk is full."""
    where = Path(error.filename or target)
    said = f"'{where}': {error.strerror or error}"
    if error.errno in _NOT_WRITABLE:
        other = "rig it with --out DIR" if in_place else "give another --out"
        return f"{said}. Make it writable (its permissions; chattr -i if it is immutable), or {other}."
    if error.errno not in (errno.ENOSPC, errno.EDQUOT):
        return said
    backup = " (rigged in place, the file's .blend1 backup takes as much room again)" if in_place else ""
    return f"{said}{room_left(where.parent)}. Make room on its disk{backup}, or rig it with --out on another disk."


def new_result(job: Job) -> FileResult:
    """The result of ``job`` before any work: failed, with no reason yet."""
    return FileResult(job.input, None if job.dry_run else job.output)


def rig_file(job: Job, config: Config, result: FileResult | None = None,
             placing: Callable[[FileResult, tuple[int, int]], None] | None = None) -> FileResult:
    """Open (or import), rig and save one file; every problem of the file ends up in the result.

    A caller that passes its own ``result`` still has it, as far as the file got, when an
    interrupt unwinds through here. ``placing`` is told the result and where the rigged file is
    (``saving.file_place``) right before it goes into place: a worker tells the run, should it die
    before it can say the file is rigged.
    """
    result = new_result(job) if result is None else result
    source = Path(job.input)
    target = job.target
    fmt = input_format(source)
    try:
        check_target(job, source, target, fmt)
        # An interrupt waits for the end of opening and rigging (then of writing): Blender runs
        # Python inside them (handlers, importers), where it would swallow the exception.
        # The version read: a save made meanwhile (the artist's, in place) is never replaced by the
        # rig of the version before it.
        read = file_identity(target) if job.in_place else None
        with interrupts_held(), _geometry_asleep():
            started = time.perf_counter()
            if fmt == "blend":
                compress = check_blend_file(source)
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
                        overwrite=job.overwrite or job.in_place, committed=committed,
                        unchanged=unchanged_since(target, read) if job.in_place else None,
                        placing=(lambda place: placing(result, place)) if placing is not None else None)
        if job.export:
            export_rigged(job, target, result)
    except Interrupted:
        if result.status != "rigged":
            result.status, result.error = "interrupted", "stopped by the interrupt"
        raise
    except RigError as error:
        result.error = error.message
    except OSError as error:
        result.error = _os_error(error, target, job.in_place)
    except Exception as error:  # IK Rigger's own bug on this file: loud in the report, the run goes on
        # After the save (in the export) too: the file's failure, its .blend in place.
        saved = "rigged and saved, but then " if result.status == "rigged" else ""
        result.status = "failed"
        result.error = f"{saved}IK Rigger failed on this file ({type(error).__name__}: {error}); please report it"
        result.details = traceback.format_exc()
    finally:
        result.gather()
    return result
