"""Switch what a limb's handle and pole follow, without moving them.

The choice is the handle's integer property ``parent`` (see ``parts.parents``). Changing
it alone would make the controls jump to where the new parent carries them; switching
puts them back where they were, in armature space, and can key the switch.
Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

import bpy

from ..core.errors import RigError
from ..core.geometry import rotation_property
from ..core.switches import number
from ..parts.handle import ROLE_HANDLE
from ..parts.parents import ORIGIN_ARMATURE, PARENT, ROLE_SOCKET, choice_count, labels
from . import records, switches
from .animation import existing_fcurve, keyed_values
from .clip_hold import hold_in_other_clips
from .parents_keys import Rekeying
from .snap import evaluated_pose, key_pose, played_values


def parent_choices(obj: bpy.types.Object, parts: records.Parts) -> list[str]:
    """The labels of what the limb's handle may follow, in the order of ``parent``'s values."""
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if handle is None or PARENT not in handle:
        return []
    number(handle, PARENT, 0.0)  # a text or a list by hand: refused by name
    return labels(obj, parts.made.get(ROLE_SOCKET), choice_count(handle))


def _index(choices: list[str], parent: int | str, limb: str) -> int:
    if isinstance(parent, int) and not isinstance(parent, bool):
        if 0 <= parent < len(choices):
            return parent
    else:
        wanted = str(parent).lower()
        for index, label in enumerate(choices):
            if label.lower() == wanted or label.lower().split(" (")[0] == wanted:
                return index
        if wanted == "armature" and choices and choices[0] == ORIGIN_ARMATURE:
            return 0  # "Armature", as earlier code labelled it: scripts written then keep working
    listed = ", ".join(f"{index} {label}" for index, label in enumerate(choices))
    raise RigError(f"has no parent '{parent}' to follow", bone=limb, hint=f"Pick one of: {listed}.")


# The first Blender that saves, on a library override, a custom property named as a setting of its
# owner (``parent``, as ``PoseBone.parent``): 4.2 drops it on saving; 4.3, 4.4, 4.5, 5.0, 5.1 and 5.2 keep it.
OVERRIDE_KEEPS_PARENT = (4, 3, 0)


def switch_parent(obj: bpy.types.Object, limb, parent: int | str, *, keyframe: bool = False,
                  frame: int = 0) -> list[str]:
    """Make the limb's handle (and a pole hanging with it) follow ``parent`` (its number or label),
    keeping them where they are; returns the bones kept in place.

    ``keyframe`` keys the old choice and the controls as they were on the frame before, and
    the new choice and the controls kept in place on ``frame``, so the switch plays as a cut. Keys
    the controls have on the frames the new choice plays (after ``frame``; every one without
    ``keyframe``) are written anew under it, so they play where they did (``parents_keys``).
    """
    # The socket's constraints make the choice: without it a switch would change nothing the handle follows.
    parts = records.require(obj, limb, ROLE_HANDLE, ROLE_SOCKET)
    switches.check(obj, parts)
    choices = parent_choices(obj, parts)
    if not choices:
        raise RigError("was built without Parent Switching", bone=limb.name,
                       hint="Rebuild the limb with Parent Switching on.")
    index = _index(choices, parent, limb.name)
    handle = parts.handle
    assert handle is not None  # required above
    bones = obj.data.bones
    # The pole moves with the switch when it hangs from the socket too; under the handle it follows it.
    kept = [handle] + [name for name in (parts.pole,) if name and bones[name].parent is not None
                       and bones[name].parent.name == parts.made.get(ROLE_SOCKET)]
    pose_bone = obj.pose.bones[handle]
    if not keyframe and obj.override_library is not None and bpy.app.version < OVERRIDE_KEEPS_PARENT:
        raise RigError(f"is on the library override '{obj.name}', where Blender {bpy.app.version_string} does not "
                       "save a parent choice that is not keyed (its name is also a bone setting's)", bone=limb.name,
                       hint="Switch with Insert Keyframes on.")
    if not keyframe and existing_fcurve(obj, pose_bone.path_from_id(f'["{PARENT}"]')) is not None:
        raise RigError("has its parent choice animated, so a switch that is not keyed would not hold",
                       bone=limb.name, hint="Switch with Insert Keyframes on.")
    # Keys of the controls on the frames the new choice plays, read under the old one to be keyed under it.
    rekeying = Rekeying(obj, kept, frame if keyframe else None, limb.name)
    before = evaluated_pose(obj)
    if keyframe:
        # The frame before holds the old choice where it was: the switch happens between the two frames.
        _key_switch(obj, handle, kept, frame - 1)
    held = pose_bone[PARENT]
    pose_bone[PARENT] = index
    if keyframe:
        _key_parent(obj, pose_bone, frame)  # before the update, which plays the keys
        hold_in_other_clips(obj, parts, PARENT, held)
    obj.update_tag()
    rekeying.key()
    evaluated_pose(obj)
    for name in kept:
        obj.pose.bones[name].matrix = before[name]
    if keyframe:
        key_pose(obj, kept, frame)
    return kept


def _key_switch(obj: bpy.types.Object, handle: str, kept: list[str], frame: int) -> None:
    """Key the choice and the controls kept in place at ``frame`` as their keys play them there (what they
    hold now where not keyed), so the frames before play as they did."""
    pose_bone = obj.pose.bones[handle]
    choice = pose_bone[PARENT]
    played = keyed_values(obj, pose_bone.path_from_id(f'["{PARENT}"]'), [frame])
    if played is not None:
        pose_bone[PARENT] = round(played[0])
    _key_parent(obj, pose_bone, frame)
    pose_bone[PARENT] = choice
    for name in kept:
        bone = obj.pose.bones[name]
        paths = ("location", rotation_property(bone.rotation_mode), "scale")
        now = {path: list(getattr(bone, path)) for path in paths}
        for path in paths:
            played = played_values(obj, bone, path, frame)
            if played is not None:
                setattr(bone, path, played)
        key_pose(obj, [name], frame)
        for path, values in now.items():
            setattr(bone, path, values)


def _key_parent(obj: bpy.types.Object, pose_bone: bpy.types.PoseBone, frame: int) -> None:
    """Key the choice at ``frame``: constant, a switch and not a blend."""
    pose_bone.keyframe_insert(f'["{PARENT}"]', frame=frame, group=pose_bone.name)
    curve = existing_fcurve(obj, pose_bone.path_from_id(f'["{PARENT}"]'))
    if curve is not None:
        for point in curve.keyframe_points:
            point.interpolation = "CONSTANT"
