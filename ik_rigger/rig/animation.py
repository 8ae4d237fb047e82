"""F-curves of an object across Blender versions.

Blender 4.2 keeps an action's F-curves on ``Action.fcurves``; 5.0 moved them into
layered actions (layers > strips > channelbags, one channelbag per slot).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator

import bpy


def fcurve_owners(obj: bpy.types.Object) -> Iterator[bpy.types.bpy_struct]:
    """Everything holding F-curves of ``obj``'s active action (an action, or its slot's channelbags)."""
    data = obj.animation_data
    if data is not None and data.action is not None:
        yield from action_owners(data.action, getattr(data, "action_slot", None))


def action_owners(action: bpy.types.Action, slot: bpy.types.bpy_struct | None) -> Iterator[bpy.types.bpy_struct]:
    """Everything holding ``action``'s F-curves for ``slot`` (an action, or the slot's channelbags)."""
    if hasattr(action, "layers") and not hasattr(action, "fcurves"):
        for layer in action.layers:
            for strip in layer.strips:
                channelbag = strip.channelbag(slot) if slot is not None else None
                if channelbag is not None:
                    yield channelbag
    else:
        yield action


def every_fcurve_owner(obj: bpy.types.Object) -> Iterator[bpy.types.bpy_struct]:
    """The F-curve owners of ``obj``'s active action and of every action its NLA strips hold,
    muted or not (each once)."""
    data = obj.animation_data
    if data is None:
        return
    pairs = [(data.action, getattr(data, "action_slot", None))] if data.action is not None else []
    pairs += [(strip.action, getattr(strip, "action_slot", None)) for track in data.nla_tracks
              for strip in track.strips if strip.action is not None]
    seen: set[int] = set()
    for action, slot in pairs:
        for owner in action_owners(action, slot):
            if owner.as_pointer() not in seen:
                seen.add(owner.as_pointer())
                yield owner


def existing_fcurve(obj: bpy.types.Object, path: str, index: int = 0):
    """The F-curve of ``obj``'s active action animating ``path`` (and ``index``), if there is one."""
    for owner in fcurve_owners(obj):
        curve = owner.fcurves.find(path, index=index)
        if curve is not None:
            return curve
    return None


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
