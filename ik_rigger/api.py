"""IK Rigger's Python API for pipeline scripts: stable across releases.

Everything here takes the armature object and bone names and never reads the
context (the active object, the selection, the mode), so it works the same in a
script, the batch command and a test. A problem with the user's data raises
``RigError`` (``str(error)`` names the bone and says what to do) and leaves the
armature exactly as it was.

With the extension installed, Blender names the package ``bl_ext.user_default.ik_rigger``::

    from bl_ext.user_default.ik_rigger import api

    api.build(obj, "shin.L", both_sides=True, pole_parent="HANDLE")
    for limb in api.limbs(obj):
        print(limb.name, limb.chain, limb.bones["HANDLE"], limb.ik_fk)
    api.bake(obj, "IK_TO_FK", switch=True)
    api.remove(obj, "shin.L")
"""

from __future__ import annotations

import difflib
import functools
import warnings
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import ParamSpec, TypeVar

import bpy

from . import parts as limb_parts
from .core import checks, naming
from .core.errors import RigError
from .core.model import Skeleton, quick_init
from .core.notes import is_warning, warning
from .limb.options import BOTH_SIDES, LimbOptions, check_kinds, check_values, current_keys, values_of
from .limb.plan import LimbPlan
from .limb.requests import detected_requests, no_limbs
from .parts.handle import ROLE_HANDLE
from .rig import aim as _aim
from .rig import bake as _bake
from .rig import clip_hold, records, scene_state, snap, windows
from .rig import clips as _clips
from .rig import export as _export
from .rig import ground as _ground
from .rig import parents as _parents
from .rig.build import build_limbs, mirrored_request, rig_able
from .rig.modes import kept_mode, leave_edit_mode
from .rig.remove import remove_limb
from .rig.skeleton import FollowedBones, check_editable, read_skeleton
from .rig.upgrade import prepare, prepared

__all__ = ["PARTS", "ROLES", "Limb", "RigError", "add_aim", "auto_rig", "bake", "build", "build_found", "build_many",
           "export", "is_warning", "limbs", "options", "parent_choices", "plant_feet", "remove", "remove_aim",
           "snap_limb", "switch_parent", "upgrade"]

# Roles of the bones IK Rigger makes for a limb, as ``Limb.bones`` keys them: HANDLE, POLE, CLONE,
# TARGET, REACH, POLE_LINE; with a foot roll ROLL, HEEL, TIP, TOE_PIVOT, TOE_CLONE, BANK_OUT, BANK_IN;
# with parent switching SOCKET.
ROLES = records.ROLES
# The parts a limb may be made of, in the order they plan (see ``ik_rigger.parts``).
PARTS = tuple(part.name for part in limb_parts.PARTS)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _takes_armature(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """Refuse, naming it, a first argument that is not an armature object (a mesh, its data, None), or a blank bone;
    run in a context with a window where the caller's has none (``rig.windows.in_a_window``)."""

    @functools.wraps(function)
    def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        obj = args[0] if args else kwargs.get("obj")
        if not isinstance(obj, bpy.types.Object) or obj.type != "ARMATURE":
            given = f"the {obj.type.lower()} '{obj.name}'" if isinstance(obj, bpy.types.Object) else repr(obj)
            raise RigError(f"api.{function.__name__} needs an armature object and was given {given}",
                           hint="Pass the armature object of the character (the mesh's Armature modifier names "
                           "it), not the mesh or other data.")
        named = dict(zip(getattr(function, "__wrapped__", function).__code__.co_varnames, args)) | kwargs
        checks.check_bones_named(f"api.{function.__name__}", obj.name, named, obj.data.bones)
        with windows.in_a_window():
            return function(*args, **kwargs)

    return checked


def _poses_armature(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """For an operation that reads evaluated poses and writes the rig's: refuse an armature linked from a
    library, and one Blender does not evaluate because of its collections; show one disabled in viewports
    for the call, as builds do, and give every other object back as it was (``rig/scene_state.py``). From
    Edit mode, it runs out of it (the edits written back, as a build does) and the mode is given back."""

    @functools.wraps(function)
    def posed(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        obj = args[0] if args else kwargs["obj"]
        assert isinstance(obj, bpy.types.Object)
        scene_state.check_posable(obj)
        if obj.mode == "EDIT":  # the bones' rests are current only out of Edit mode: run there, given back after
            with kept_mode(obj):
                leave_edit_mode(obj)
                return posed(*args, **kwargs)
        with scene_state.evaluated(obj), scene_state.others_kept(obj):
            return function(*args, **kwargs)

    return posed


@quick_init  # one per limb a build returns
@dataclass(frozen=True)
class Limb:
    """One rigged limb as it is now (after any renames)."""

    name: str  # the record's name: the last chain bone
    chain: tuple[str, ...]  # chain bones, root first
    extremity: str | None  # the foot or hand that copies its clone
    side: str | None  # "L", "R" or None, read from the names
    parts: tuple[str, ...]  # the parts it is made of ("chain", "handle", "pole", "foot_roll"...), as PARTS orders them
    bones: dict[str, str]  # role ("HANDLE", "POLE", "CLONE", "POLE_LINE", "ROLL", "HEEL"...) -> made bone name
    missing: tuple[str, ...]  # pieces deleted by hand, which a rebuild makes again
    ik_fk: float  # 1 is IK, 0 is FK (the handle's ``ik_fk`` property)
    # What building it had to tell (pre-bends, kept motion...); empty from limbs(). Those the user
    # should act on are warnings (``is_warning(note)``, or ``warnings``); the others record what was done.
    notes: tuple[str, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        """The notes the user should act on."""
        return tuple(note for note in self.notes if is_warning(note))


def options(**values: object) -> LimbOptions:
    """Build options from keyword values, refusing unknown names (with a did-you-mean). A name an earlier
    release used (``extremity``, now ``extremity_name``) is read as the option it became, with a warning."""
    chosen, notes = _options(values)
    for note in notes:
        warnings.warn(note, DeprecationWarning, stacklevel=2)
    return chosen


_OPTION_NAMES = frozenset(field.name for field in fields(LimbOptions))


def _options(given: dict[str, object], base: LimbOptions | None = None) -> tuple[LimbOptions, list[str]]:
    """Build options from keyword values, the others from ``base`` (a rebuilt limb's) or at their
    defaults, and a note for each name an earlier release used."""
    values, notes = current_keys(given)
    for key in values:
        if key not in _OPTION_NAMES:
            close = difflib.get_close_matches(key, sorted(_OPTION_NAMES), n=1)
            hint = f"Did you mean '{close[0]}'?" if close else f"Known options: {', '.join(sorted(_OPTION_NAMES))}."
            raise RigError(f"unknown build option '{key}'", hint=hint)
    chosen = replace(base, **values) if base is not None else LimbOptions(**values)  # type: ignore[arg-type]
    check_kinds(chosen)  # before anything reads them: a mirrored chain's length, say
    return chosen, notes


def _limb(obj: bpy.types.Object, record, notes: Sequence[str] = ()) -> Limb:
    parts = records.resolve(obj, record)
    last = parts.chain[-1] if parts.chain else record.name
    return Limb(name=record.name, chain=tuple(parts.chain), extremity=parts.extremity,
                side=naming.split_side(last, set(obj.data.bones.keys())).side,
                parts=_parts_used(record.to_options(), parts.made), bones=dict(parts.made),
                missing=tuple(parts.missing), ik_fk=records.ik_fk(obj, parts), notes=tuple(notes))


def _built(obj: bpy.types.Object, plan: LimbPlan, chosen: LimbOptions, names: Container[str],
           used: Sequence[tuple[str, frozenset[str] | None]] | None = None) -> Limb:
    """A limb just built, read from its plan: what ``_limb`` would find, without looking for it.
    ``used``: the parts ``chosen`` uses, when the caller has them."""
    made = {new.role: new.name for new in plan.new_bones}
    handle = obj.pose.bones[plan.handle]
    return Limb(
        name=plan.chain[-1], chain=tuple(plan.chain), extremity=plan.extremity,
        side=naming.split_side(plan.chain[-1], names).side, parts=_parts_used(chosen, made, used),
        bones=made, missing=(), ik_fk=float(handle.get(records.IK_FK, 1.0)), notes=tuple(plan.notes),
    )


# Each part's roles as a set, by the roles' identity (kept with it): hashing the hidden chain's hundreds
# of roles for a cache would cost as much as the look-up saves.
_ROLE_SETS: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}


def _role_set(roles: tuple[str, ...]) -> frozenset[str]:
    """A part's roles as a set, in which a limb's few made roles are looked up (the hidden chain has
    hundreds); made on first use, so a part registered later (``parts.PARTS``) has one too."""
    found = _ROLE_SETS.get(id(roles))
    if found is None or found[0] is not roles:
        found = _ROLE_SETS[id(roles)] = (roles, frozenset(roles))
    return found[1]


def _used_parts(chosen: LimbOptions) -> list[tuple[str, frozenset[str] | None]]:
    """The parts the options ``chosen`` use, in ``PARTS``' order: each one's name and roles (None: it
    makes no bone)."""
    return [(part.name, _role_set(part.roles) if part.roles else None) for part in limb_parts.PARTS
            if part.used(chosen)]


def _parts_used(chosen: LimbOptions, made: dict[str, str],
                used: Sequence[tuple[str, frozenset[str] | None]] | None = None) -> tuple[str, ...]:
    """The names of the parts a limb is made of: those its options use that need no made bone or have one
    (``used``: ``_used_parts(chosen)``, when the caller has it)."""
    return tuple([name for name, roles in (_used_parts(chosen) if used is None else used)
                  if roles is None or not roles.isdisjoint(made)])


@_takes_armature
def limbs(obj: bpy.types.Object) -> list[Limb]:
    """Every limb IK Rigger rigged on ``obj``, in the order they were built."""
    return [_limb(obj, record) for record in obj.ik_rigger.limbs]


def _record(obj: bpy.types.Object, bone: str):
    record = records.limb_named(obj, bone)
    if record is None:
        raise RigError("is not part of a limb rigged by IK Rigger", bone=bone,
                       hint="Name a bone of a rigged limb (chain, handle, pole or clone).")
    return record


def _rebuilt_options(obj: bpy.types.Object, last_bone: str) -> LimbOptions | None:
    """The options of the limb rigged on the chain ending at ``last_bone``, if there is one: a rebuild
    keeps every option it is not given (its chain length, its extremity)."""
    if not obj.ik_rigger.limbs:
        return None
    with kept_mode(obj):
        leave_edit_mode(obj)
        prepare(obj)  # the records' names up to date after renames, as the build brings them
    record = records.limb_of(obj, last_bone)
    if record is None:
        return None
    chain = records.resolve(obj, record).chain
    return record.to_options() if chain and chain[-1] == last_bone else None


@_takes_armature
def build(obj: bpy.types.Object, last_bone: str, *, both_sides: bool = BOTH_SIDES.default,
          **values: object) -> list[Limb]:
    """Rig (or rebuild) the chain ending at ``last_bone``; ``values`` are build options.

    A limb rigged already is rebuilt with the options it has but those given (its chain length,
    extremity and the rest kept). ``both_sides`` also rigs the mirrored chain (a note says when
    there is none); rigged already, it keeps its own options but those given. Returns the limbs built.
    """
    scene_state.check_local(obj)  # before the records are read for what a rebuild keeps
    # One block for reading the limbs there and building: from Edit mode, Edit mode is left once.
    with kept_mode(obj):
        leave_edit_mode(obj)
        with prepared(obj):  # a refusal gives back the upgrade of an earlier rig
            limb_options, notes = _options(values, _rebuilt_options(obj, last_bone))
            requests = [(last_bone, limb_options)]
            if both_sides:
                other = mirrored_request(obj, last_bone, limb_options)
                if other is not None:
                    # The other side rigged already keeps its own options but those named, mirrored.
                    kept = _rebuilt_options(obj, other[0])
                    named = current_keys(values)[0]
                    requests.append(other if kept is None else
                                    (other[0], replace(kept, **{key: getattr(other[1], key) for key in named})))
                else:
                    notes.append(warning("no mirrored bone found; rigged one side only"))
            built = build_many(obj, requests)
    return [replace(built[0], notes=(*notes, *built[0].notes)), *built[1:]]


@_takes_armature
def build_many(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
               skeleton: Skeleton | None = None) -> list[Limb]:
    """Rig (or rebuild) several chains at once, each (last bone, options from ``options()``): all of
    them, or nothing at all. ``skeleton`` saves reading the armature again (``read_skeleton``)."""
    plans = build_limbs(obj, requests, skeleton)
    # The bones looked up by name where a name's side depends on the others: no set of them all to make.
    bones = obj.data.bones
    built = []
    last: LimbOptions | None = None
    for plan, (_, chosen) in zip(plans, requests):
        if chosen is not last:  # a script mostly hands every limb the same options
            parts, last = _parts_of(chosen), chosen
        built.append(_built(obj, plan, chosen, bones, parts))
    return built


# The parts each set of options uses (``_used_parts``), by the options' values with their types and the parts
# registered then: scripts and batches build with a few sets of options, again and again.
_USED: dict[tuple, tuple[tuple, list[tuple[str, frozenset[str] | None]]]] = {}


def _parts_of(chosen: LimbOptions) -> list[tuple[str, frozenset[str] | None]]:
    values = values_of(chosen)
    key = (values, tuple(map(type, values)))
    found = _USED.get(key)
    if found is None or found[0] is not limb_parts.PARTS:  # parts registered since (a test's, an add-on's)
        if len(_USED) >= 64:
            _USED.clear()
        found = _USED[key] = (limb_parts.PARTS, _used_parts(chosen))
    return found[1]


@_takes_armature
def build_found(obj: bpy.types.Object, named: Sequence[tuple[str, LimbOptions]],
                found: Sequence[tuple[str, LimbOptions]],
                skeleton: Skeleton | None = None) -> tuple[list[Limb], list[tuple[str, str]]]:
    """Rig the limbs ``named`` (asked for) and ``found`` (detected) at once; a found limb the
    build refuses is skipped, with the build's reason, and the others are rigged.

    Returns the limbs built and the skipped ones as (bone, why). A limb detection is sure
    of may still be one IK Rigger will not rig (a bone too short for IK, another IK
    constraint on it). Only when the build of them all fails (and changes nothing) is each
    found limb planned alone to tell which; a failure no found limb explains is raised.
    """
    try:
        return build_many(obj, [*named, *found], skeleton), []
    except RigError:
        kept, refused = rig_able(obj, found, skeleton, together=False)  # refused together: each alone
        if not refused:
            raise
    if not named and not kept:
        return [], refused
    return build_many(obj, [*named, *kept], skeleton), refused


@_takes_armature
def auto_rig(obj: bpy.types.Object, *, skipped: list[tuple[str, str]] | None = None,
             notes: list[str] | None = None, **values: object) -> list[Limb]:
    """Find the legs and arms by their names and rig those it is sure of; returns them.

    The bones it was not sure of are appended to ``skipped`` as (bone, reason), when given;
    what it left alone on purpose (a skeleton's own IK bones) to ``notes``.
    """
    check_editable(obj)  # before detection: a linked or overridden armature is refused as itself
    chosen = options(**values)
    # Refused as itself, not limb by limb as 'no limbs found'; the chain's length is each found limb's own.
    check_values(replace(chosen, chain_length=LimbOptions.chain_length))  # the class holds the defaults
    # One block for reading and building: from Edit mode, the build goes back to Edit mode once at the end.
    with kept_mode(obj):
        leave_edit_mode(obj)
        skeleton = read_skeleton(obj)
        requests, detection = detected_requests(skeleton, chosen, follows=FollowedBones(obj))
        # Bones that do not run joint to joint (an importer's guess) are rigged on a hidden chain, as the batch does.
        built, refused = build_found(obj, [], requests, skeleton) if requests else ([], [])
    if skipped is not None:
        skipped.extend((item.bone, item.reason) for item in detection.skipped)
        skipped.extend(refused)
    if notes is not None:
        notes.extend(detection.notes)
    if not built:
        raise no_limbs(obj.name, detection, skeleton.bones)
    return built


@_takes_armature
def remove(obj: bpy.types.Object, bone: str, *, keep_motion: bool = True) -> list[str]:
    """Remove the limb of ``bone``; returns notes (moved bones, kept motion) and warnings (a constraint muted)."""
    return remove_limb(obj, bone, keep_motion).messages


@_takes_armature
@_poses_armature
def snap_limb(obj: bpy.types.Object, bone: str, to: str, *, key: bool = False, frame: int | None = None,
              switch: bool = True) -> list[str]:
    """Snap the limb of ``bone`` exactly: ``to`` "FK" (FK takes the IK pose) or "IK" (IK takes the FK pose).

    ``switch`` sets ``ik_fk`` to the mode snapped to; ``key`` keys what changed at ``frame``
    (the scene's current frame by default). Returns the bones changed.
    """
    if to not in ("FK", "IK"):
        raise RigError(f"unknown snap direction '{to}'", hint='Use "FK" or "IK".')
    record = _record(obj, bone)
    if key:  # keyed as Blender keys, in a tweaked strip's time too
        frame = scene_state.check_keyable(obj, mapped=True, frame=frame, shown=True)
    with prepared(obj):
        parts = records.require(obj, record, ROLE_HANDLE)
        if key:
            scene_state.check_keys_over_strips(obj, [*parts.chain, *parts.made.values(), parts.extremity or ""])
        function = snap.snap_fk_to_ik if to == "FK" else snap.snap_ik_to_fk
        with scene_state.on_frame(frame if key else None) as at:  # the pose keyed at ``frame``: the one shown there
            changed = function(obj, record, keyframe=key, frame=at)
            if switch and key:
                clip_hold.key_ik_fk(obj, parts, 0.0 if to == "FK" else 1.0, at)
            elif switch:
                records.set_ik_fk(obj, parts, 0.0 if to == "FK" else 1.0)
    return changed


@_takes_armature
@_poses_armature
def switch_parent(obj: bpy.types.Object, bone: str, parent: int | str, *, key: bool = False,
                  frame: int | None = None) -> list[str]:
    """Make the handle (and pole) of the limb of ``bone`` follow ``parent`` without moving them.

    ``parent`` is a number (0 the origin) or a label ("Origin", "Root", "Torso", "Other"); the
    limb must have been built with ``parent_switch=True``. ``key`` keys the switch and the
    controls at ``frame`` (default: the scene's current frame). Returns the bones kept in place.
    """
    record = _record(obj, bone)
    if key:
        frame = scene_state.check_keyable(obj, frame=frame, shown=True)
    with prepared(obj):
        if key:
            scene_state.check_keys_over_strips(obj, records.require(obj, record, ROLE_HANDLE).made.values())
        with scene_state.on_frame(frame if key else None) as at:  # the controls kept where they are shown there
            return _parents.switch_parent(obj, record, parent, keyframe=key, frame=at)


@_takes_armature
def parent_choices(obj: bpy.types.Object, bone: str) -> list[str]:
    """What the handle of the limb of ``bone`` may follow, by ``parent`` number ("Origin (root)"...)."""
    return _parents.parent_choices(obj, records.resolve(obj, _record(obj, bone)))


@_takes_armature
@_poses_armature
def bake(obj: bpy.types.Object, direction: str, frames: Iterable[int] | None = None,
         bones: Sequence[str] | str | None = None, *, switch: bool = False, clear: bool = False,
         notes: list[str] | None = None) -> dict[str, int]:
    """Bake limbs over ``frames`` (default: what plays, else the scene's range).

    ``direction`` "FK_TO_IK" keys the controls from the FK motion, "IK_TO_FK" the chains
    from what the IK shows. ``bones`` picks limbs by any of their bones, a name or a list of names (default: all).
    Returns the frames baked per limb; the warnings (``is_warning``: a chain bone's own IK
    limits keeping the IK off the FK motion) are appended to ``notes``, when given.
    """
    listed = scene_state.check_frames(frames) if frames is not None else None
    scene_state.check_keyable(obj)
    named = [bones] if isinstance(bones, str) else bones  # one bone's name, not its letters
    chosen = [_record(obj, bone) for bone in named] if named is not None else list(obj.ik_rigger.limbs)
    with prepared(obj):  # the limbs found first: their names as last listed are gone once it renames them
        if listed is None:
            scene = bpy.context.scene
            listed = list(_clips.played_frames(obj) or range(scene.frame_start, scene.frame_end + 1))
        results = _bake.bake_limbs(obj, chosen, direction, listed, switch=switch, clear=clear)
    if notes is not None:
        notes.extend(message for result in results for message in result.warnings)
    return {result.limb: result.frames for result in results}


@_takes_armature
@_poses_armature
def plant_feet(obj: bpy.types.Object, ground: bpy.types.Object | None,
               frames: Iterable[int] | None = None, *, key: bool = False) -> _ground.PlantResult:
    """Put the feet of ``obj``'s rigged legs on the mesh ``ground``, flat on its slope.

    The hips go down where a leg cannot reach (to 99.5% of its length, so no knee locks
    straight). ``frames`` None poses the current frame (``key``: keyed there); otherwise the handles
    (and hips) are keyed on every frame given, each foot held still while it is down. Returns the
    limbs planted, the hips bone lowered (or None) and how far, world units, and ``notes`` (soles' tails left out).
    """
    surface = _ground.check_ground(obj, ground)
    if frames is not None or key:  # the current frame's keys go in as Blender's own, as a snap's
        frames = scene_state.check_frames(frames) if frames is not None else None
        scene_state.check_keyable(obj, mapped=frames is None, shown=frames is None)
    with prepared(obj):
        return _ground.plant_feet(obj, surface, frames, key=key)


@_takes_armature
def add_aim(obj: bpy.types.Object, part: str = "AUTO", bone: str | None = None, distance: float = 3.0,
            influence: float = 1.0, notes: list[str] | None = None) -> list[str]:
    """Give a head, a neck or a pair of eyes an aim target ``distance`` head sizes in front.

    ``part`` is "AUTO" (``bone`` when its name says head, neck or eye, else the head), "HEAD", "NECK", "EYES" or
    "ACTIVE" (``bone`` whatever its name). Returns the aimed bones; ``notes`` gets why ``aim`` is 0 (``rig.aim``).
    """
    aim_plan, _ = _aim.add_aim(obj, part, bone, distance, influence, notes)
    return list(aim_plan.aimed)


@_takes_armature
def remove_aim(obj: bpy.types.Object, bone: str) -> list[str]:
    """Remove the aim rig that uses ``bone``; returns what the user should hear (as ``remove`` does)."""
    return _aim.remove_aim(obj, bone)[1]


@_takes_armature
def upgrade(obj: bpy.types.Object) -> list[str]:
    """Upgrade a rig made by an earlier IK Rigger so it plays without the add-on."""
    scene_state.check_local(obj)
    return prepare(obj)


@_takes_armature
def export(obj: bpy.types.Object, filepath: str, *, clips: Sequence[str] | str | None = None,
           frame_range: tuple[int, int] | None = None, overwrite: bool = True) -> _export.ExportReport:
    """Write ``obj`` for a game engine: ``.glb``, ``.gltf`` or ``.fbx`` by the suffix.

    The file holds the meshes ``obj`` deforms, skinned to its deform bones only (none IK Rigger
    made; one root, names and rest as they are), and each clip (action) that animates it, or
    those ``clips`` names (or the one it names), baked on every frame of its range (or ``frame_range``, first and
    last) as one glTF animation or FBX take named after it; stretch is the bones' scale. The
    scene and file are left exactly as they were. Returns what was written (``files``, ``joints``,
    ``clips`` with their frames, ``meshes``, ``warnings``); refuses, writing nothing, a suffix of
    no format, an unwritable path, a file there already with ``overwrite=False`` (the default
    replaces it, as every release did), a name the format cannot hold, an armature with nothing to
    export and, unless ``frame_range`` is given, a clip a stray key stretched (``rig/export_range``).
    """
    return _export.export(obj, filepath, clips, frame_range, overwrite)
