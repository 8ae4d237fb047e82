"""Drivers IK Rigger makes: each a plain average or a simple expression Blender evaluates without
Python, reading made bones' switches and bone distances, so a rig plays with
auto-run off and without IK Rigger; how to find and remove them again; and how a build logs the drivers
it replaces, to give them back on a rollback."""

from __future__ import annotations

from typing import Any

import bpy

from ..core.model import Driven
from ..parts.handle import switch
from ..parts.ik import influence
from ..parts.stretch import STRETCH
from .journal import Journal
from .records import quoted


def add_variable(driver: bpy.types.Driver, name: str, obj: bpy.types.Object, path: str) -> None:
    """Give ``driver`` a variable ``name`` reading the property at ``path`` of the object ``obj``."""
    variable = driver.variables.new()  # a Single Property variable reading an object, as Blender makes it
    variable.name = name
    target = variable.targets[0]
    target.id = obj
    target.data_path = path


def add_distance(driver: bpy.types.Driver, name: str, obj: bpy.types.Object, first: str, second: str,
                 space: Any = "WORLD_SPACE", base_space: Any = "") -> None:
    """Give ``driver`` a variable ``name``: the distance between two bones' heads of ``obj`` in ``space``
    (in "LOCAL_SPACE", between their translations in their own spaces, constraints applied), the second
    read in ``base_space`` when given."""
    variable = driver.variables.new()
    variable.name, variable.type = name, "LOC_DIFF"
    for target, bone, read in zip(variable.targets, (first, second), (space, base_space or space)):
        target.id, target.bone_target, target.transform_space = obj, bone, read


def split_index(path: str) -> tuple[str, int]:
    """A property's path without its array index ("location[1]" -> "location", 1), -1 for none."""
    if path.endswith("]") and "[" in path:
        base, _, index = path[:-1].rpartition("[")
        if index.isdigit():
            return base, int(index)
    return path, -1


def read_switch(driver: bpy.types.Driver, obj: bpy.types.Object, bone: str, key: str) -> None:
    """Give ``driver`` a variable named ``key`` reading the custom property ``key`` of ``obj``'s pose bone."""
    add_variable(driver, key, obj, f'pose.bones["{quoted(bone)}"]["{key}"]')


def drive(obj: bpy.types.Object, owner, path: str, driven: Driven, made: dict | None = None,
          full_path: str | None = None) -> None:
    """Drive ``owner``'s ``path`` by made bones' custom properties: an average, or a simple expression
    Blender evaluates without Python, so the drivers run with auto-run off and without IK Rigger.

    ``made``: for a property no driver drives yet, the drivers a build made so far, by their shape
    (``_shape``); a driver of a shape made before is a copy of that one with its own paths. Blender
    looks for a driver already there along all of the object's before adding one (a build's drivers
    times the object's), and a copy, made without that look, carries its settings and variables.
    ``full_path``: ``owner.path_from_id(path)``, when the caller has it.
    """
    if made is not None:
        shape = _shape(path, driven)
        like = made.get(shape)
        if like is not None:
            _copy(obj, like, full_path or owner.path_from_id(path), driven)
            return
        made[shape] = _driver_add(owner, path)
        _fill(obj, made[shape].driver, driven)
        return
    _fill(obj, _driver_add(owner, path).driver, driven)


def _driver_add(owner, path: str) -> bpy.types.FCurve:
    """``owner``'s driver of ``path``, one item of an array property where the path ends with its index."""
    name, index = split_index(path)
    return owner.driver_add(name, index) if index >= 0 else owner.driver_add(name)


def _shape(path: str, driven: Driven) -> tuple:
    """What two drivers share when one may be copied for the other: all but the bones they read."""
    return (path, tuple([key for key, _ in driven.variables]), driven.object_paths,
            tuple([(name, channel) for name, _, channel in driven.channels]),
            tuple([name for name, _, _ in driven.distances]), driven.distance_space, driven.distance_base_space,
            driven.expression)


def _copy(obj: bpy.types.Object, like: bpy.types.FCurve, full_path: str, driven: Driven) -> None:
    """A copy of the driver ``like`` (of ``driven``'s shape) on ``full_path``, reading ``driven``'s bones."""
    curve = obj.animation_data.drivers.from_existing(src_driver=like)
    curve.data_path, index = split_index(full_path)
    if index >= 0:
        curve.array_index = index
    variables = curve.driver.variables
    for variable, (key, bone) in zip(variables, driven.variables):
        variable.targets[0].data_path = f'pose.bones["{quoted(bone)}"]["{key}"]'
    first = len(driven.variables) + len(driven.object_paths)
    for variable, (_, bone, channel) in zip(variables[first:], driven.channels):
        variable.targets[0].data_path = f'pose.bones["{quoted(bone)}"].{channel}'
    first += len(driven.channels)
    for index, (_, one, other) in enumerate(driven.distances):
        targets = variables[first + index].targets
        targets[0].bone_target, targets[1].bone_target = one, other


def _fill(obj: bpy.types.Object, driver: bpy.types.Driver, driven: Driven) -> None:
    """Give ``driver`` the variables and expression of ``driven``, in place of any it has."""
    variables = driver.variables
    if len(variables):  # a driver made just now has none
        for variable in list(variables):
            variables.remove(variable)
    for key, bone in driven.variables:
        read_switch(driver, obj, bone, key)
    for name, path in driven.object_paths:
        add_variable(driver, name, obj, path)
    for name, bone, channel in driven.channels:
        add_variable(driver, name, obj, f'pose.bones["{quoted(bone)}"].{channel}')
    for name, first, second in driven.distances:
        add_distance(driver, name, obj, first, second, driven.distance_space, driven.distance_base_space)
    if driven.expression:
        driver.type = "SCRIPTED"
        driver.expression = driven.expression
    else:
        driver.type = "AVERAGE"


def drop_drivers(obj: bpy.types.Object, constraint: bpy.types.Constraint) -> None:
    """Remove every driver of a constraint's settings (its influence, soft IK's distance): Blender 4.2
    keeps a removed constraint's drivers, left invalid."""
    data = obj.animation_data
    prefix = f"{constraint.path_from_id()}."
    for curve in [curve for curve in data.drivers if curve.data_path.startswith(prefix)] if data is not None else ():
        data.drivers.remove(curve)


def drive_influence(obj: bpy.types.Object, constraint: bpy.types.Constraint, handle: str) -> None:
    """Drive the constraint's influence by the handle's ``ik_fk`` (the IK constraint: times ``ik_weight``)."""
    drive(obj, constraint, "influence", influence(handle) if constraint.type == "IK" else switch(handle))


def drives_stretch(obj: bpy.types.Object, pose_bone: bpy.types.PoseBone, handle: str | None) -> bool:
    """True when the bone's IK stretch is driven by ``handle``'s ``stretch`` (IK Rigger's driver), not
    by a driver of the user's own."""
    data = obj.animation_data
    curve = data.drivers.find(pose_bone.path_from_id("ik_stretch")) if data is not None else None
    path = f'pose.bones["{quoted(handle)}"]["{STRETCH}"]' if handle else None
    return curve is not None and any(variable.targets[0].id == obj and variable.targets[0].data_path == path
                                     for variable in curve.driver.variables)


_TARGET_KEYS = ("id", "data_path", "bone_target", "transform_type", "transform_space")


def driver_of(obj: bpy.types.Object, path: str) -> tuple | None:
    """A driver's type, expression and variables (name, type, each target's settings), to make it again;
    None if undriven."""
    data = obj.animation_data
    name, index = split_index(path)
    fcurve = data.drivers.find(name, index=max(index, 0)) if data is not None else None
    if fcurve is None:
        return None
    driver = fcurve.driver
    return (driver.type, driver.expression,
            [(variable.name, variable.type, [{key: getattr(target, key) for key in _TARGET_KEYS}
                                             for target in variable.targets]) for variable in driver.variables])


def set_driver(driver: bpy.types.Driver, kind, expression, variables) -> None:
    """Give ``driver`` the type, expression and variables ``driver_of`` read, in place of its own."""
    for variable in list(driver.variables):
        driver.variables.remove(variable)
    for name, variable_type, targets in variables:
        variable = driver.variables.new()
        variable.name, variable.type = name, variable_type
        for target, settings in zip(variable.targets, targets):
            target.id = settings["id"]
            for key, value in settings.items():
                if key != "id":
                    setattr(target, key, value)
    driver.type = kind
    driver.expression = expression


def drive_in_build(obj: bpy.types.Object, owner, key: str, driven, journal: Journal, path: str | None = None) -> None:
    """``drive`` for the build: a property no driver drove when the build began, nor one of
    the build's own since, gets a copy of a driver of the same shape the build made. ``path``:
    ``owner.path_from_id(key)``, when the caller has it (``log_driver`` returns it)."""
    if path is None:
        path = owner.path_from_id(key)
    made_paths = journal.read.setdefault("made paths", set())
    fresh = path not in driven_before(obj, journal) and path not in made_paths
    made_paths.add(path)
    drive(obj, owner, key, driven, journal.read.setdefault("drivers", {}) if fresh else None, path)


def constraint_path(owner: str, name: str, key: str) -> str:
    """The path from the armature object of the setting ``key`` of the constraint ``name`` on the pose bone
    ``owner``, as ``path_from_id`` gives it: which looks for the constraint's bone along all of them."""
    return f'pose.bones["{quoted(owner)}"].constraints["{quoted(name)}"].{key}'


def log_driver(obj: bpy.types.Object, bone: str, path: str, journal: Journal,
               pose_bone: bpy.types.PoseBone | None = None) -> str:
    """Log a pose bone property's driver (or its having none) and value, to give them back on undo;
    returns the property's path from the object. ``pose_bone``: the bone's, when the caller has it."""
    if pose_bone is None:
        pose_bone = obj.pose.bones[bone]
    # A path into one of the bone's constraints ('constraints["name"].distance') names its owner first.
    owner_path, _, key = path.rpartition(".")
    full_path = f"{pose_bone.path_from_id()}.{path}"
    before = driver_of(obj, full_path) if full_path in driven_before(obj, journal) else None
    value = pose_bone.path_resolve(path)

    def undo() -> None:
        restored = obj.pose.bones[bone]
        try:
            owner = restored.path_resolve(owner_path) if owner_path else restored
        except ValueError:  # the constraint the driver was on is gone with the rest of the build
            return
        name, index = split_index(key)
        owner.driver_remove(name, index)
        if index >= 0:
            getattr(owner, name)[index] = value
        else:
            setattr(owner, name, value)
        if before is not None:
            set_driver(_driver_add(owner, key).driver, *before)

    journal.data(undo)
    return full_path


def driven_before(obj: bpy.types.Object, journal: Journal) -> set[str]:
    """The paths the object's drivers drove when the build first asked, read once per build: Blender
    finds a driver by path along all of them, which a build of many limbs would do once per limb for
    each of the drivers it adds. A path the build logs is driven then or by the build's own driver,
    added after the build logged it (the limb that drives a bone's property logs it first)."""
    driven = journal.read.get("driven")
    if driven is None:
        data = obj.animation_data
        # An item of an array property is found by its path with its index ("location[1]") too.
        driven = journal.read["driven"] = {path for curve in data.drivers for path in (
            curve.data_path, f"{curve.data_path}[{curve.array_index}]")} if data is not None else set()
    return driven
