"""F-curves of an object across Blender versions.

Blender 4.2 keeps an action's F-curves on ``Action.fcurves``; 5.0 moved them into
layered actions (layers > strips > channelbags, one channelbag per slot).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

import bpy


def fcurve_owners(obj: bpy.types.Object) -> Iterator[bpy.types.bpy_struct]:
    """Everything holding F-curves of ``obj``'s active action (an action, or its slot's channelbags)."""
    data = obj.animation_data
    action = data.action if data is not None else None
    if action is None:
        return
    if hasattr(action, "layers") and not hasattr(action, "fcurves"):
        slot = data.action_slot
        for layer in action.layers:
            for strip in layer.strips:
                channelbag = strip.channelbag(slot) if slot is not None else None
                if channelbag is not None:
                    yield channelbag
    else:
        yield action


def existing_fcurve(obj: bpy.types.Object, path: str, index: int = 0):
    """The F-curve of ``obj``'s active action animating ``path`` (and ``index``), if there is one."""
    for owner in fcurve_owners(obj):
        curve = owner.fcurves.find(path, index=index)
        if curve is not None:
            return curve
    return None


def remove_fcurves(obj: bpy.types.Object, unwanted: Callable[[str], bool], groups: Collection[str] = ()) -> int:
    """Remove the F-curves of ``obj``'s action whose data path is ``unwanted``, and the named
    groups once empty; returns how many F-curves went."""
    removed = 0
    for owner in fcurve_owners(obj):
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
