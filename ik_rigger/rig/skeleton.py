"""Read an armature's rest skeleton into core's plain description."""

from __future__ import annotations

import bpy

from ..core.errors import RigError
from ..core.plan import BoneInfo, Skeleton


def read_skeleton(obj: bpy.types.Object) -> Skeleton:
    """The rest bones of ``obj`` in armature space.

    Reads ``Bone`` data, which Blender only syncs from edit bones on leaving Edit
    mode: callers leave Edit mode first (``modes.object_mode``).
    """
    bones = {}
    for bone in obj.data.bones:
        matrix = bone.matrix_local
        bones[bone.name] = BoneInfo(
            name=bone.name,
            parent=bone.parent.name if bone.parent else None,
            head=bone.head_local.copy(),
            tail=bone.tail_local.copy(),
            x_axis=matrix.col[0].xyz.normalized(),
            z_axis=matrix.col[2].xyz.normalized(),
            connected=bone.use_connect,
        )
    return Skeleton(bones)


def check_editable(obj: bpy.types.Object | None) -> None:
    """Refuse objects IK Rigger must not or cannot change, with what to do instead."""
    if obj is None:
        raise RigError("no active object", hint="Select an armature and make it active.")
    if obj.type != 'ARMATURE':
        raise RigError(f"the active object '{obj.name}' is a {obj.type.lower()}, not an armature",
                       hint="Select the armature of your character.")
    for owner, what in ((obj, "object"), (obj.data, "armature data")):
        if owner.library is not None:
            raise RigError(f"the {what} '{owner.name}' is linked from the library '{owner.library.filepath}' "
                           "and cannot be edited", hint="Open the library file and rig it there, or make it local.")
        if owner.override_library is not None:
            raise RigError(f"the {what} '{owner.name}' is a library override; its bones cannot be added to",
                           hint="Rig the armature in its source file, or make the override local.")
