"""A limb's switch keyed in the active clip, held in the armature's other clips as they played it.

A custom property keyed in one action keeps, in a clip that does not key it, whatever value it last had:
a snap keyed in one take switched the limb in every other take (Quaternius' T-rex's Death clip, made
active after a snap to FK keyed in its Attack clip, played its front leg in FK, 15 degrees off). Where a
snap, a bake or a parent switch keys a switch in the active clip, each other clip of the armature (an NLA
strip's, a stored take) that moves the limb and does not key that switch gets one constant key of the
value it played with, at its first frame. Runs in any mode.
"""

from __future__ import annotations

import bpy

from ..parts.handle import IK_FK
from . import records
from .animation import other_fcurve_owners
from .journal import Journal


def hold_in_other_clips(obj: bpy.types.Object, parts: records.Parts, key: str, value: float,
                        journal: Journal | None = None) -> list[str]:
    """Key the handle's switch ``key`` constant at ``value`` in each other clip that moves the limb and does not
    key it (logged in ``journal``, when given); returns the clips' names."""
    if parts.handle is None:
        return []
    path = f'pose.bones["{records.quoted(parts.handle)}"]["{key}"]'
    bones = [*parts.chain, *parts.made.values(), *([parts.extremity] if parts.extremity else [])]
    prefixes = tuple(f'pose.bones["{records.quoted(name)}"]' for name in bones)
    held = []
    for owner in list(other_fcurve_owners(obj)):
        curves = owner.fcurves
        if curves.find(path, index=0) is not None or not any(curve.data_path.startswith(prefixes) for curve in curves):
            continue
        point = curves.new(path, index=0).keyframe_points.insert(owner.id_data.frame_range[0], value)
        point.interpolation = "CONSTANT"
        held.append(owner.id_data.name)
        if journal is not None:
            journal.data(lambda curves=curves: _remove(curves, path))
    return held


def _remove(curves: bpy.types.bpy_struct, path: str) -> None:
    curve = curves.find(path, index=0)
    if curve is not None:
        curves.remove(curve)


def key_ik_fk(obj: bpy.types.Object, parts: records.Parts, value: float, frame: int) -> None:
    """``records.key_ik_fk`` (the switch cut at ``frame`` in the active clip), the value it had held in the others."""
    before = records.ik_fk(obj, parts)
    records.key_ik_fk(obj, parts, value, frame)
    hold_in_other_clips(obj, parts, IK_FK, before)
