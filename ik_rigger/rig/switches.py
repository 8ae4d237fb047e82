"""A limb's switches checked before IK Rigger poses or keys it (``core.switches``).

The snaps, the bake and the parent switch read the handle's switches and pose what the rig's
drivers show from them: a switch made a text or a list, or deleted where a driver reads it,
leaves those drivers dead. Such a limb is refused, changing nothing, naming the handle, the
switch and what to do. Runs in any mode; reads only.
"""

from __future__ import annotations

from collections.abc import Iterable

import bpy

from ..core.errors import RigError
from ..core.switches import DELETED_HINT, is_number, not_a_number
from ..parts.handle import IK_FK
from ..parts.ik import IK_WEIGHT
from ..parts.parents import PARENT, ROLE_SOCKET
from ..parts.soft_ik import ROLE_SOFT, SOFT_IK
from ..parts.stretch import ROLE_REACH, STRETCH
from . import records

# The handle's switches, in the order the user meets them, each with the made bone's role whose part
# plans it (None: every limb has it).
SWITCHES = ((IK_FK, None), (IK_WEIGHT, None), (STRETCH, ROLE_REACH), (SOFT_IK, ROLE_SOFT), (PARENT, ROLE_SOCKET))


def check(obj: bpy.types.Object, parts: records.Parts, restored: Iterable[str] = ()) -> None:
    """Refuse a limb whose handle holds a switch that is no number, or lacks one a driver of the rig reads
    (but those in ``restored``, which the caller writes anew)."""
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if handle is None:
        return
    missing = []
    for key, role in SWITCHES:
        value = handle.get(key)
        if value is None:
            if role is None or role in parts.made:  # the limb has it: its drivers are looked at only then
                missing.append(key)
        elif not is_number(value):
            raise not_a_number(handle.name, key, value)
    missing = [key for key in missing if key not in set(restored)]
    if missing:
        read = _read_by_drivers(obj, handle.name)
        gone = [key for key in missing if key in read]
        if gone:
            raise RigError(f"its switch '{gone[0]}' was deleted, and the rig's drivers read it", bone=handle.name,
                           hint=DELETED_HINT)


def _read_by_drivers(obj: bpy.types.Object, bone: str) -> set[str]:
    """The custom properties of pose bone ``bone`` that the armature's drivers read."""
    data = obj.animation_data
    if data is None:
        return set()
    prefix = f'pose.bones["{records.quoted(bone)}"]["'
    return {target.data_path[len(prefix):-2] for curve in data.drivers for variable in curve.driver.variables
            for target in variable.targets
            if target.id == obj and target.data_path.startswith(prefix) and target.data_path.endswith('"]')}


def kept_value(owner: bpy.types.PoseBone, key: str) -> object:
    """A copy of the custom property ``key`` of ``owner`` (None where it has none) that outlives the property:
    a list's or a group's values, not Blender's view of them."""
    value = owner.get(key)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "to_list"):
        return value.to_list()
    return value


def put_back(owner: bpy.types.PoseBone, key: str, value: object) -> None:
    """Give ``owner`` the custom property ``key`` = ``value`` (from ``kept_value``) again, whatever it holds now
    (Blender refuses to set a text over a number)."""
    owner.pop(key, None)
    if value is not None:
        owner[key] = value
