"""Bring a rig made by an earlier IK Rigger up to the current layout, in place.

IK Rigger 0.1 kept each limb's IK/FK blend on its record
(``ik_rigger.limbs["shin.L"].ik_blend``), a property that exists only while the add-on
is registered: opened without it, every driver reading it failed and the IK sat at
influence 0. The upgrade moves the value, its keys and the drivers to the handle's
``ik_fk`` custom property and marks the made bones so they are found after renames.

IK Rigger 0.2 listed each limb's chain, made bones and constraints in collections and
marked each made bone with a group: many stored values, which Blender copies on every
update of the posed armature. The upgrade writes each list as one value and each mark as
one string. Playback is the same before and after either.
"""

from __future__ import annotations

import re

import bpy

from . import drivers, records
from .animation import fcurve_owners

_OLD_BLEND = re.compile(r'^ik_rigger\.limbs\[(?:"(?P<name>(?:[^"\\]|\\.)*)"|(?P<index>\d+))\]\.ik_blend$')


def needs_upgrade(obj: bpy.types.Object) -> bool:
    """True for an armature whose limbs were rigged by an earlier IK Rigger."""
    rig = getattr(obj, "ik_rigger", None)
    return rig is not None and rig.version < records.RECORD_VERSION and len(rig.limbs) > 0


def upgrade(obj: bpy.types.Object) -> list[str]:
    """Upgrade ``obj``'s rig in place (Object or Pose mode); returns what was done, for the user."""
    if not needs_upgrade(obj):
        return []
    rig = obj.ik_rigger
    done = []
    if rig.version < 1:
        _upgrade_from_0_1(obj)
        done.append(f"upgraded {len(rig.limbs)} limb(s) of '{obj.name}' so the rig plays without IK Rigger "
                    "installed")
    else:
        done.append(f"upgraded the records of {len(rig.limbs)} limb(s) of '{obj.name}' to this release's compact "
                    "layout, so the posed rig updates quicker")
    _compact(obj)
    rig.version = records.RECORD_VERSION
    return done


def _upgrade_from_0_1(obj: bpy.types.Object) -> None:
    """The IK/FK blend from the record to the handles' ``ik_fk``, the made bones marked."""
    rig = obj.ik_rigger
    handles = {}
    for index, limb in enumerate(rig.limbs):
        if not limb.uid:
            limb.uid = str(rig.next_uid)
            rig.next_uid += 1
        for role, name in ((records.ROLE_HANDLE, limb.handle), (records.ROLE_POLE, limb.pole),
                           (records.ROLE_CLONE, limb.clone)):
            bone = obj.data.bones.get(name) if name else None
            if bone is not None and records.marker(bone) is None:
                records.mark(bone, limb.uid, role)
        if limb.handle in obj.pose.bones:
            records.ensure_switches(obj, limb.handle, float(limb.get("ik_blend", 1.0)))
            handles[limb.name] = handles[str(index)] = limb.handle
        limb.id_properties_ensure().pop("ik_blend", None)
    _retarget(obj, handles)
    for limb in rig.limbs:
        parts = records.resolve(obj, limb)
        if parts.handle is not None:
            for _, constraint in records.constraints_of(obj, parts):
                drivers.drive_influence(obj, constraint, parts.handle)


def _compact(obj: bpy.types.Object) -> None:
    """Each limb's inventory as one value, each made bone's mark as one string (records of version 1)."""
    for limb in obj.ik_rigger.limbs:
        records.store_inventory(limb, records.inventory(limb))
    for bone in obj.data.bones:
        tag = records.marker(bone)
        if tag is not None and not isinstance(bone.get(records.MARK), str):
            records.mark(bone, *tag)


def _new_path(path: str, handles: dict[str, str]) -> str | None:
    match = _OLD_BLEND.match(path)
    if match is None:
        return None
    key = match["index"] if match["index"] is not None else match["name"].replace('\\"', '"').replace("\\\\", "\\")
    handle = handles.get(key)
    return records.ik_fk_path(handle) if handle else None


def _retarget(obj: bpy.types.Object, handles: dict[str, str]) -> None:
    """Point the old blend's keys and the drivers reading it at the handles' ``ik_fk``."""
    for owner in fcurve_owners(obj):
        for fcurve in owner.fcurves:
            path = _new_path(fcurve.data_path, handles)
            if path is not None:
                fcurve.data_path = path
    data = obj.animation_data
    for fcurve in data.drivers if data is not None else ():
        for variable in fcurve.driver.variables:
            for target in variable.targets:
                path = _new_path(target.data_path, handles)
                if path is not None:
                    variable.name = records.IK_FK
                    target.data_path = path


def prepare(obj: bpy.types.Object) -> list[str]:
    """What every operator does first (Object or Pose mode): upgrade an earlier rig and
    bring the records' names up to date after renames. Returns what the user should hear.

    A linked or overridden armature is left alone: its records come from the library.
    """
    if obj.library is not None or obj.override_library is not None:
        return []
    messages = upgrade(obj)
    records.refresh(obj)
    return messages
