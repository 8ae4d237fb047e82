"""F-curves of an object across Blender versions.

Blender 4.2 keeps an action's F-curves on ``Action.fcurves``; 5.0 moved them into
layered actions (layers > strips > channelbags, one channelbag per slot).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator

import bpy

_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]')


def fcurve_owners(obj: bpy.types.Object) -> Iterator[bpy.types.bpy_struct]:
    """Everything holding F-curves of ``obj``'s active action (an action, or its slot's channelbags)."""
    data = obj.animation_data
    if data is not None and data.action is not None:
        yield from action_owners(data.action, getattr(data, "action_slot", None))


def action_owners(action: bpy.types.Action, slot: bpy.types.bpy_struct | None) -> Iterator[bpy.types.bpy_struct]:
    """Everything holding ``action``'s F-curves for ``slot`` (an action, or the slot's channelbags)."""
    # Blender 4.4 and 4.5 keep the action's own ``fcurves`` beside its slots' channelbags, but as the first
    # slot's alone: an action that characters share through slots of their own is read through the slot's.
    if hasattr(action, "layers") and (not hasattr(action, "fcurves") or len(action.slots) > 1):
        for layer in action.layers:
            for strip in layer.strips:
                channelbag = strip.channelbag(slot) if slot is not None else None
                if channelbag is not None:
                    yield channelbag
    else:
        yield action


def ensure_fcurve(action: bpy.types.Action, owner: bpy.types.ID, path: str, index: int,
                  group: str) -> bpy.types.FCurve:
    """The F-curve of ``path`` and ``index`` in ``action`` (for ``owner``'s slot, from Blender 4.4), made if
    missing in the channel group ``group``."""
    if not hasattr(action, "fcurve_ensure_for_datablock"):  # before slots: 4.2, 4.3
        curve = action.fcurves.find(path, index=index)
        return curve if curve is not None else action.fcurves.new(path, index=index, action_group=group)
    if "group_name" in _ENSURE_PARAMETERS:  # 5.0 on
        return action.fcurve_ensure_for_datablock(owner, path, index=index, group_name=group)
    curve = action.fcurve_ensure_for_datablock(owner, path, index=index)  # 4.4, 4.5: no group named here
    if curve.group is None:
        bag = next(bag for layer in action.layers for strip in layer.strips for bag in strip.channelbags
                   if bag.fcurves.find(path, index=index) == curve)
        curve.group = next((found for found in bag.groups if found.name == group), None) or bag.groups.new(group)
    return curve


_ENSURE = bpy.types.Action.bl_rna.functions.get("fcurve_ensure_for_datablock")
_ENSURE_PARAMETERS = frozenset(_ENSURE.parameters.keys()) if _ENSURE is not None else frozenset()


def bone_of_path(path: str) -> str | None:
    """The pose bone a data path from an armature object points into, if any."""
    match = _BONE_PATH.match(path)
    return bpy.utils.unescape_identifier(match[1]) if match is not None else None


def action_fcurves(action: bpy.types.Action) -> Iterator[bpy.types.FCurve]:
    """Every F-curve of ``action``, for any slot."""
    if hasattr(action, "layers") and not hasattr(action, "fcurves"):
        for layer in action.layers:
            for strip in layer.strips:
                for channelbag in strip.channelbags:
                    yield from channelbag.fcurves
    else:
        yield from action.fcurves


def action_paths(action: bpy.types.Action) -> Iterator[str]:
    """The data paths ``action`` animates, for any slot."""
    return (curve.data_path for curve in action_fcurves(action))


# What an animator does to play through the rig a clip a build left as it was.
_REMEDY = "to play it through the rig, make it active on this armature and key the controls from it with Bake IK/FK " \
    "(FK to IK)"


def stored_clips(obj: bpy.types.Object) -> list[tuple[bpy.types.Action, bpy.types.bpy_struct | None]]:
    """Actions kept in the file for ``obj`` without playing anywhere, with the slot they would
    play through (None before Blender 4.4): an FBX file's other takes, kept with a fake user.
    See ``claimed_clips``."""
    return claimed_clips(obj)[0]


def claimed_clips(obj: bpy.types.Object) -> tuple[list[tuple[bpy.types.Action, bpy.types.bpy_struct | None]],
                                                  list[tuple[bpy.types.Action, str]]]:
    """The actions kept in the file for ``obj`` (``stored_clips``), and those that key bones of
    ``obj`` but are not taken for it, each with why (for the build's notes: no clip is passed
    over without a word).

    An action no datablock uses is ``obj``'s when ``obj``'s armature has more of the bones it
    keys than any other armature in the file: a take may also key bones this armature lacks
    (an exporter's helper bones, a bone deleted since), which play nothing. An action that
    another armature fits as well is left alone, as is one with several object slots.
    """
    armatures = [other for other in bpy.data.objects if other.type == "ARMATURE" and other.data != obj.data]
    found: list[tuple[bpy.types.Action, bpy.types.bpy_struct | None]] = []
    passed: list[tuple[bpy.types.Action, str]] = []
    for action in bpy.data.actions:
        if action.users != (1 if action.use_fake_user else 0):
            continue
        names = {name for name in map(bone_of_path, action_paths(action)) if name is not None}
        mine = sum(name in obj.data.bones for name in names)
        if not mine:
            continue
        shared = {other.name: sum(name in other.data.bones for name in names) for other in armatures}
        if any(count > mine for count in shared.values()):
            continue  # another armature's
        tied = [name for name, count in shared.items() if count == mine]
        if tied:
            passed.append((action, f"the armature '{tied[0]}' fits it as well, with as many of the bones it "
                                       f"keys; {_REMEDY}"))
            continue
        # A slot of no type yet is an object's to take: Blender 4.4 and later give one, 'XXLegacy Slot', to an
        # action a file of 4.3 or before kept without ever assigning it (an FBX import's other takes).
        slots = [slot for slot in getattr(action, "slots", ()) if slot.target_id_type in ("OBJECT", "UNSPECIFIED")]
        if hasattr(action, "slots") and len(slots) != 1:
            passed.append((action, f"it has {len(slots)} object slots, none of them this armature's alone; "
                                   f"{_REMEDY}"))
            continue
        found.append((action, slots[0] if slots else None))
    return found, passed


def strip_actions(data: bpy.types.AnimData) -> list[tuple[bpy.types.Action, bpy.types.bpy_struct | None]]:
    """The action of every NLA strip, muted or not, with the strip's slot (None before Blender 4.4)."""
    return [(strip.action, getattr(strip, "action_slot", None)) for track in data.nla_tracks
            for strip in track.strips if strip.action is not None]


def every_fcurve_owner(obj: bpy.types.Object) -> Iterator[bpy.types.bpy_struct]:
    """The F-curve owners of ``obj``'s active action, of every action its NLA strips hold,
    muted or not, and of its stored clips (see ``stored_clips``), each once; none of an action
    linked from a library, which is read-only."""
    data = obj.animation_data
    pairs = [(data.action, getattr(data, "action_slot", None))] if data is not None and data.action is not None \
        else []
    if data is not None:
        pairs += strip_actions(data)
    pairs += stored_clips(obj)
    seen: set[int] = set()
    for action, slot in pairs:
        if action.library is not None:
            continue
        for owner in action_owners(action, slot):
            if owner.as_pointer() not in seen:
                seen.add(owner.as_pointer())
                yield owner


def other_fcurve_owners(obj: bpy.types.Object) -> Iterator[bpy.types.bpy_struct]:
    """``every_fcurve_owner`` but the active action's (``fcurve_owners``): the armature's other clips."""
    active = {owner.as_pointer() for owner in fcurve_owners(obj)}
    return (owner for owner in every_fcurve_owner(obj) if owner.as_pointer() not in active)


def action_frame(obj: bpy.types.Object, frame: float) -> float:
    """The scene's ``frame`` in the time of ``obj``'s active action: in NLA tweak mode, the tweaked strip's
    (where Blender's own keying puts a key asked for on ``frame``)."""
    data = obj.animation_data
    if data is None or not data.use_tweak_mode:
        return frame
    return data.nla_tweak_strip_time_to_scene(frame, invert=True)


def existing_fcurve(obj: bpy.types.Object, path: str, index: int = 0):
    """The F-curve of ``obj``'s active action animating ``path`` (and ``index``), if there is one."""
    for owner in fcurve_owners(obj):
        curve = owner.fcurves.find(path, index=index)
        if curve is not None:
            return curve
    return None


def keyed_values(obj: bpy.types.Object, path: str, frames: Iterable[float]) -> list[float] | None:
    """What ``obj``'s active action plays on ``path`` on each of the scene's ``frames`` (``action_frame``);
    None where it does not animate ``path``."""
    curve = existing_fcurve(obj, path)
    return None if curve is None else [curve.evaluate(action_frame(obj, frame)) for frame in frames]


def remove_fcurves(obj: bpy.types.Object, unwanted: Callable[[str], bool], groups: Collection[str] = (),
                   everywhere: bool = False) -> int:
    """Remove the F-curves of ``obj``'s action (``everywhere``: and of its NLA strips' actions) whose
    data path is ``unwanted``, and the named groups once empty; returns how many F-curves went."""
    return drop_fcurves(every_fcurve_owner(obj) if everywhere else fcurve_owners(obj), unwanted, groups)


def drop_fcurves(owners: Iterable[bpy.types.bpy_struct], unwanted: Callable[[str], bool],
                 groups: Collection[str] = ()) -> int:
    """Remove the F-curves of ``owners`` (actions, or slots' channelbags) whose data path is
    ``unwanted``, and the named groups once empty; returns how many F-curves went."""
    removed = 0
    for owner in owners:
        for fcurve in list(owner.fcurves):
            if unwanted(fcurve.data_path):
                owner.fcurves.remove(fcurve)
                removed += 1
        for group in list(getattr(owner, "groups", ())):
            if group.name in groups and not group.channels:
                owner.groups.remove(group)
    return removed


def bone_paths(names: set[str]) -> Callable[[str], bool]:
    """A test for data paths that animate one of the named pose bones."""
    prefixes = tuple(f'pose.bones["{bpy.utils.escape_identifier(name)}"]' for name in names)
    return lambda path: path.startswith(prefixes)
