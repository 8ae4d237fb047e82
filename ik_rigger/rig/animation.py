"""F-curves of an object across Blender versions, and keeping them pointed at the right limb.

Blender 4.2 keeps an action's F-curves on ``Action.fcurves``; 5.0 moved them into
layered actions (layers > strips > channelbags). Blender 5 also records a key on a
limb's IK/FK blend as ``ik_rigger.limbs[2].ik_blend``, by index, so removing a limb
must move the keys of the limbs after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import bpy

_LIMB_INDEX = re.compile(r"^ik_rigger\.limbs\[(\d+)\]")


def fcurve_owners(obj: bpy.types.Object) -> Iterator[bpy.types.bpy_struct]:
    """Everything holding F-curves of ``obj``'s active action (an action or channelbags)."""
    data = obj.animation_data
    action = data.action if data is not None else None
    if action is None:
        return
    if hasattr(action, "layers") and not hasattr(action, "fcurves"):
        for layer in action.layers:
            for strip in layer.strips:
                yield from strip.channelbags
    else:
        yield action


def forget_limb(obj: bpy.types.Object, index: int) -> None:
    """Drop the keys of limb ``index`` and renumber those of the limbs after it."""
    for owner in fcurve_owners(obj):
        for fcurve in list(owner.fcurves):
            match = _LIMB_INDEX.match(fcurve.data_path)
            if match is None:
                continue
            number = int(match[1])
            if number == index:
                owner.fcurves.remove(fcurve)
            elif number > index:
                fcurve.data_path = f"ik_rigger.limbs[{number - 1}]" + fcurve.data_path[match.end():]
