"""What reads a user's bones: the drivers, on any data-block, that a build turning those bones breaks.

Fix Bone Orientation (and the pre-bend of a straight chain) changes the rest of the user's bones:
a driver reading a bone's local rotation, or the rotational difference of two bones, then reads
other values (a corrective shape key driven by the shin's local X rotation reads 0 where it read
0.9). The build names each one in a warning, so nothing breaks silently.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

import bpy

from ..core.notes import warning

# The data-blocks that may carry drivers, as bpy.data names them (those a Blender lacks are skipped).
_DRIVEN = ("objects", "shape_keys", "armatures", "meshes", "materials", "node_groups", "scenes", "worlds",
           "cameras", "lights", "curves", "lattices", "textures", "particles", "grease_pencils", "collections")
_BONE_IN_PATH = re.compile(r'bones\["((?:[^"\\]|\\.)*)"\]')
_SHAPE_KEY = re.compile(r'^key_blocks\["((?:[^"\\]|\\.)*)"\]\.value$')


def _driven_blocks() -> Iterator[bpy.types.ID]:
    for attribute in _DRIVEN:
        for block in getattr(bpy.data, attribute, ()):
            data = getattr(block, "animation_data", None)
            if data is not None and data.drivers:
                yield block


def _bones_read(variable: bpy.types.DriverVariable, obj: bpy.types.Object) -> Iterator[str]:
    for target in variable.targets:
        if target.id is None or target.id not in (obj, obj.data):
            continue
        if variable.type == "SINGLE_PROP":
            yield from (match.group(1).replace('\\"', '"') for match in _BONE_IN_PATH.finditer(target.data_path))
        elif target.bone_target:
            yield target.bone_target


def _described(block: bpy.types.ID, path: str) -> str:
    shape_key = _SHAPE_KEY.match(path)
    if isinstance(block, bpy.types.Key) and shape_key:
        owner = block.user.name if block.user is not None else block.name
        return f"the shape key '{shape_key.group(1)}' of '{owner}'"
    return f"the driver of '{path}' on '{block.name}'"


def readers(obj: bpy.types.Object, bones: Collection[str]) -> list[str]:
    """Each driver (named by what it drives: a shape key, else its path and data-block) whose
    variables read one of ``bones`` of ``obj``, with the bones it reads."""
    found = []
    for block in _driven_blocks():
        for curve in block.animation_data.drivers:
            read = sorted({name for variable in curve.driver.variables for name in _bones_read(variable, obj)
                           if name in bones})
            if read:
                found.append(f"{_described(block, curve.data_path)} (reads {', '.join(repr(n) for n in read)})")
    return found


def turned_warning(obj: bpy.types.Object, bones: Collection[str]) -> str | None:
    """The warning for a build that changes the rest of ``bones``, when drivers read them."""
    found = readers(obj, bones)
    if not found:
        return None
    return warning(f"the rest of {', '.join(repr(n) for n in sorted(bones))} changed (Fix Bone Orientation or a "
                   f"pre-bend), so what reads those bones reads other values now: {'; '.join(found)}; check "
                   "them, or rig without Fix Bone Orientation (a hidden chain leaves the bones as they are)")
