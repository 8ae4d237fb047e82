"""Take a rigged limb back out, leaving the armature as it was before."""

from __future__ import annotations

import bpy
from mathutils import Vector

from ..core.errors import RigError
from . import modes
from .animation import forget_limb
from .build import delete_bones, strip_constraints
from .skeleton import check_editable


def remove_limb(obj: bpy.types.Object, bone: str) -> str:
    """Remove the limb that uses ``bone`` in any role; returns the limb's name.

    Object or Pose mode: constraints and colours; Edit mode: made bones deleted, pre-bent
    bones given back their rest; then the record and any emptied collection go.
    """
    check_editable(obj)
    rig = obj.ik_rigger
    limb = rig.limb_of(bone)
    if limb is None:
        raise RigError("is not part of a limb rigged by IK Rigger", bone=bone,
                       hint="Make a bone of a rigged limb active (chain, handle, pole or clone).")
    name = limb.name
    with modes.kept_mode(obj) as original:
        modes.leave_edit_mode(obj)
        strip_constraints(obj, limb)
        modes.set_mode(obj, "EDIT")
        edit_bones = obj.data.edit_bones
        delete_bones(edit_bones, set(limb.created()))
        for rest in limb.prebent:
            edit_bone = edit_bones.get(rest.name)
            if edit_bone is None:
                continue
            edit_bone.head = Vector(rest.head)
            edit_bone.tail = Vector(rest.tail)
            edit_bone.roll = rest.roll
            for child in edit_bone.children:
                if child.use_connect:
                    child.head = edit_bone.tail
        modes.set_mode(obj, modes.data_mode(original))
        index = list(rig.limbs).index(limb)
        forget_limb(obj, index)
        rig.limbs.remove(index)
        rig.active_limb_index = min(rig.active_limb_index, max(len(rig.limbs) - 1, 0))
        _remove_empty_collections(obj)
    return name


def _remove_empty_collections(obj: bpy.types.Object) -> None:
    rig = obj.ik_rigger
    armature = obj.data
    for attribute in ("controls_collection", "mechanism_collection"):
        collection = armature.collections_all.get(getattr(rig, attribute))
        if collection is not None and not collection.bones and not collection.children:
            armature.collections.remove(collection)
            setattr(rig, attribute, "")
