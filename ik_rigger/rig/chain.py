"""Create new chain bones in an armature, in one Edit-mode pass."""

from __future__ import annotations

import bpy
from mathutils import Vector

from ..core.chain import ChainSpec, plan_chain
from . import modes
from .checks import check_armature
from .skeleton import check_editable


def armature_point(obj: bpy.types.Object, location: Vector) -> Vector:
    """A world ``location`` in ``obj``'s armature space, refused when the object is scaled flat."""
    check_editable(obj)
    check_armature(obj)
    return obj.matrix_world.inverted() @ location


def add_chain(obj: bpy.types.Object, spec: ChainSpec) -> list[str]:
    """Add the bones ``spec`` describes to ``obj``; returns their names, parents first."""
    check_editable(obj)
    planned = plan_chain(spec, set(obj.data.bones.keys()) if obj.mode != "EDIT" else set(obj.data.edit_bones.keys()))
    with modes.kept_mode(obj), modes.mirror_off(obj):  # X-Axis Mirror would move the other side's bones
        modes.set_mode(obj, "EDIT")
        edit_bones = obj.data.edit_bones
        for new in planned:
            bone = edit_bones.new(new.name)
            bone.head = new.head
            bone.tail = new.tail
            bone.align_roll(new.z_axis)
            bone.use_deform = new.deform
            bone.color.palette = new.palette
            if new.parent is not None:
                bone.parent = edit_bones[new.parent]
                bone.use_connect = new.connected
    return [new.name for new in planned]
