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

Every change is logged in a ``Journal`` (``prepared``): an operation that refuses after the upgrade gives
it back, so a refusal leaves an earlier rig exactly as it was, as Blender pushes no undo step for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import bpy

from ..core.errors import RigError
from ..parts import soft_ik
from . import drivers, modes, records
from .animation import fcurve_owners
from .journal import Journal

_OLD_BLEND = re.compile(r'^ik_rigger\.limbs\[(?:"(?P<name>(?:[^"\\]|\\.)*)"|(?P<index>\d+))\]\.ik_blend$')


def needs_upgrade(obj: bpy.types.Object) -> bool:
    """True for an armature whose limbs were rigged by an earlier IK Rigger."""
    rig = getattr(obj, "ik_rigger", None)
    return rig is not None and rig.version < records.RECORD_VERSION and len(rig.limbs) > 0


def upgrade(obj: bpy.types.Object, journal: Journal | None = None) -> list[str]:
    """Upgrade ``obj``'s rig in place (Object or Pose mode); returns what was done, for the user.
    ``journal``: logs what gives the rig back as it was."""
    if not needs_upgrade(obj):
        return []
    journal = journal or Journal(obj)
    rig = obj.ik_rigger
    before = rig.version, rig.next_uid
    journal.data(lambda: _set_rig(obj, *before))
    for index, limb in enumerate(rig.limbs):
        journal.data(_record_back(obj, index, limb))
    done = []
    if rig.version < 1:
        _upgrade_from_0_1(obj, journal)
        done.append(f"upgraded {len(rig.limbs)} limb(s) of '{obj.name}' so the rig plays without IK Rigger "
                    "installed")
    else:
        done.append(f"upgraded the records of {len(rig.limbs)} limb(s) of '{obj.name}' to this release's compact "
                    "layout, so the posed rig updates quicker")
    _compact(obj, journal)
    rig.version = records.RECORD_VERSION
    return done


def _set_rig(obj: bpy.types.Object, version: int, next_uid: int) -> None:
    obj.ik_rigger.version, obj.ik_rigger.next_uid = version, next_uid


def _record_back(obj: bpy.types.Object, index: int, limb) -> Callable[[], None]:
    """What gives the limb record at ``index`` back what the upgrade and ``records.refresh`` write: its
    names, uid, inventory (a record of version 1: its collections), the options naming a renamed bone (an
    extremity or a handle parent named by hand), its pre-bent bones' and chain states' names and the IK/FK
    blend of 0.1."""
    names = {key: getattr(limb, key) for key in ("name", "uid", "inventory", "handle", "pole", "clone", "extremity")}
    options = limb.to_options()
    states = {key: [item.name for item in getattr(limb, key)] for key in ("prebent", "chain_states")}
    listed = None if limb.inventory else records.inventory(limb)
    blend = limb.get("ik_blend")

    def undo() -> None:
        record = obj.ik_rigger.limbs[index]
        for key, value in names.items():
            if getattr(record, key) != value:  # a name set where it was unset would be stored for nothing
                setattr(record, key, value)
        record.set_options(options)  # only those that differ
        for key, listed_names in states.items():
            for item, name in zip(getattr(record, key), listed_names):
                if item.name != name:
                    item.name = name
        if listed is not None:
            for collection in (record.chain, record.made_bones, record.constraints):
                collection.clear()
            for name in listed.chain:
                record.chain.add().name = name
            for name, role in listed.made:
                item = record.made_bones.add()
                item.name, item.role = name, role
            for owner, constraint in listed.constraints:
                item = record.constraints.add()
                item.name, item.constraint = owner, constraint
        if blend is not None:
            record.id_properties_ensure()["ik_blend"] = blend

    return undo


def _mark(obj: bpy.types.Object, bone: bpy.types.Bone, uid: str, role: str, journal: Journal) -> None:
    """``records.mark``, logged: a mark of version 1 (a group) or none given back."""
    before = bone.get(records.MARK)
    before = before.to_dict() if hasattr(before, "to_dict") else before
    name = bone.name
    records.mark(bone, uid, role)

    def undo() -> None:
        restored = obj.data.bones[name]
        restored.pop(records.MARK, None)
        if before is not None:
            restored[records.MARK] = before

    journal.data(undo)


def _drive_influence(obj: bpy.types.Object, constraint: bpy.types.Constraint, handle: str, journal: Journal) -> None:
    """``drivers.drive_influence``, logged: the driver there before (0.1's, retargeted) or none given back."""
    path = constraint.path_from_id("influence")
    before, value = drivers.driver_of(obj, path), constraint.influence
    owner, _, _ = path.rpartition(".")
    drivers.drive_influence(obj, constraint, handle)

    def undo() -> None:
        restored = obj.path_resolve(owner)
        restored.driver_remove("influence")
        # The value the new driver wrote stays under a driver that cannot run (0.1's read the record).
        restored.influence = value
        if before is not None:
            drivers.set_driver(restored.driver_add("influence").driver, *before)

    journal.data(undo)


def _upgrade_from_0_1(obj: bpy.types.Object, journal: Journal) -> None:
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
                _mark(obj, bone, limb.uid, role, journal)
        if limb.handle in obj.pose.bones:
            added = records.ensure_switches(obj, limb.handle, float(limb.get("ik_blend", 1.0)))
            journal.data(lambda handle=limb.handle, added=added: [obj.pose.bones[handle].pop(key, None)
                                                                  for key in added])
            handles[limb.name] = handles[str(index)] = limb.handle
        limb.id_properties_ensure().pop("ik_blend", None)
    _retarget(obj, handles, journal)
    for limb in rig.limbs:
        parts = records.resolve(obj, limb)
        if parts.handle is not None:
            for _, constraint in records.constraints_of(obj, parts):
                _drive_influence(obj, constraint, parts.handle, journal)


def _compact(obj: bpy.types.Object, journal: Journal) -> None:
    """Each limb's inventory as one value, each made bone's mark as one string (records of version 1)."""
    for limb in obj.ik_rigger.limbs:
        records.store_inventory(limb, records.inventory(limb))
    for bone in obj.data.bones:
        tag = records.marker(bone)
        if tag is not None and not isinstance(bone.get(records.MARK), str):
            _mark(obj, bone, *tag, journal)


def _new_path(path: str, handles: dict[str, str]) -> str | None:
    match = _OLD_BLEND.match(path)
    if match is None:
        return None
    key = match["index"] if match["index"] is not None else match["name"].replace('\\"', '"').replace("\\\\", "\\")
    handle = handles.get(key)
    return records.ik_fk_path(handle) if handle else None


def _retarget(obj: bpy.types.Object, handles: dict[str, str], journal: Journal) -> None:
    """Point the old blend's keys and the drivers reading it at the handles' ``ik_fk``."""
    for owner in fcurve_owners(obj):
        for fcurve in owner.fcurves:
            path = _new_path(fcurve.data_path, handles)
            if path is not None:
                journal.data(lambda owner=owner, old=fcurve.data_path, new=path, index=fcurve.array_index: setattr(
                    owner.fcurves.find(new, index=index), "data_path", old))
                fcurve.data_path = path
    data = obj.animation_data
    for fcurve in data.drivers if data is not None else ():
        for number, variable in enumerate(fcurve.driver.variables):
            for target_number, target in enumerate(variable.targets):
                path = _new_path(target.data_path, handles)
                if path is not None:
                    journal.data(_driver_variable_back(obj, fcurve, number, target_number))
                    variable.name = records.IK_FK
                    target.data_path = path


def _driver_variable_back(obj: bpy.types.Object, fcurve: bpy.types.FCurve, number: int,
                          target_number: int) -> Callable[[], None]:
    """What gives a driver's variable back its name and its target's path (found by the driven path)."""
    driven, index = fcurve.data_path, fcurve.array_index
    variable = fcurve.driver.variables[number]
    name, path = variable.name, variable.targets[target_number].data_path

    def undo() -> None:
        restored = obj.animation_data.drivers.find(driven, index=index).driver.variables[number]
        restored.name = name
        restored.targets[target_number].data_path = path

    return undo


def prepare(obj: bpy.types.Object, journal: Journal | None = None) -> list[str]:
    """What every operator does first (Object or Pose mode): upgrade an earlier rig and
    bring the records' names up to date after renames. Returns what the user should hear.
    ``journal``: logs what gives the rig back as it was (``prepared``).

    A linked or overridden armature is left alone: its records come from the library.
    """
    if obj.library is not None or obj.override_library is not None:
        return []
    if journal is not None:
        for index, limb in enumerate(obj.ik_rigger.limbs):
            journal.data(_record_back(obj, index, limb))  # the names ``records.refresh`` writes after renames
    messages = upgrade(obj, journal)
    records.refresh(obj)
    for limb in obj.ik_rigger.limbs:  # after renames, which Blender leaves soft IK's drivers reading the old name
        soft_ik.follow_root(obj, records.resolve(obj, limb))
    return messages


@contextmanager
def prepared(obj: bpy.types.Object) -> Iterator[list[str]]:
    """``prepare`` for an operation that may refuse (a RigError raised in the block): the upgrade and the
    records' names given back then, so a refusal leaves the user's data exactly as it was. Yields what
    ``prepare`` says."""
    journal = Journal(obj)
    messages = prepare(obj, journal)
    try:
        yield messages
    except RigError:
        modes.leave_edit_mode(obj)  # a build given back in Edit mode: the marks are the bones', not the edit bones'
        journal.rollback()
        raise
