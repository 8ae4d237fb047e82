"""Read an armature's rest skeleton into core's plain description."""

from __future__ import annotations

from array import array

import bpy
from mathutils import Vector

from ..core.errors import RigError, a_kind
from ..core.model import REST_COLUMNS, BoneInfo, Skeleton
from .scene_state import library_path


def read_skeleton(obj: bpy.types.Object) -> Skeleton:
    """The rest bones of ``obj`` in armature space.

    Reads ``Bone`` data, which Blender only syncs from edit bones on leaving Edit
    mode: callers leave Edit mode first (``modes.leave_edit_mode``). Reads whole
    columns at once (``foreach_get``): one RNA access per bone is the cost here.
    """
    bones = obj.data.bones
    count = len(bones)
    # Single-precision buffers, as Blender keeps the values: filled without a Python float each.
    heads = array("f", bytes(12 * count))
    tails = array("f", bytes(12 * count))
    matrices = array("f", bytes(64 * count))
    connected = [False] * count
    bones.foreach_get("head_local", heads)
    bones.foreach_get("tail_local", tails)
    bones.foreach_get("matrix_local", matrices)  # column by column
    bones.foreach_get("use_connect", connected)
    # The names from one keys() call, not an RNA read per bone.
    names = bones.keys()
    parents = [parent.name if (parent := bone.parent) is not None else None for bone in bones]
    # No Vector made for a bone until planning asks where it is (a few bones of each limb): the body's
    # measures read every bone's head and tail from the columns themselves (``core.body``).
    columns = (heads, tails, matrices)
    children: dict[str | None, list[BoneInfo]] = {}
    read = BoneInfo.read_all(names, parents, connected, columns, children)
    # The world's up and Blender's front seen from inside the armature: imported
    # Y-up characters keep Y up in armature space and turn the object instead.
    to_armature = obj.matrix_world.to_3x3().inverted_safe()
    skeleton = Skeleton(read, up=(to_armature @ Vector((0.0, 0.0, 1.0))).normalized(),
                        front=(to_armature @ Vector((0.0, -1.0, 0.0))).normalized())
    skeleton.measures[REST_COLUMNS] = columns
    return skeleton.indexed(children)


def check_editable(obj: bpy.types.Object | None) -> None:
    """Refuse objects IK Rigger must not or cannot change, with what to do instead."""
    if obj is None:
        raise RigError("no active object", hint="Select an armature and make it active.")
    if obj.type != 'ARMATURE':
        raise RigError(f"the active object '{obj.name}' is {a_kind(obj.type)}, not an armature",
                       hint="Select the armature of your character.")
    for owner, what in ((obj, "object"), (obj.data, "armature data")):
        if owner.library is not None:
            library = library_path(owner)
            raise RigError(f"the {what} '{owner.name}' is linked from the library '{library}' "
                           "and cannot be edited", hint="Open the library file and rig it there, or make it local.")
        if owner.override_library is not None:
            raise RigError(f"the {what} '{owner.name}' is a library override: building or removing a limb "
                           "changes the rest skeleton, which an override cannot",
                           hint="Rig the character in its own file (the shots that link it follow), or make the "
                           "override local. Posing, IK/FK and snapping work on the override.")


def followed_bones(obj: bpy.types.Object) -> dict[str, str]:
    """Each bone of ``obj`` another of its bones poses wholly, with that bone: the last Copy Transforms
    in its stack that is on, at full influence no driver sets, replacing its transform from the same
    space, of a bone of ``obj``. A game rig's deform bones follow its control bones so."""
    data = obj.animation_data
    driven = {curve.data_path for curve in data.drivers} if data is not None else set()
    bones = obj.data.bones
    follows = {}
    for pose_bone in obj.pose.bones:
        stack = pose_bone.constraints
        if not stack:  # as most bones are
            continue
        for constraint in stack:
            if (constraint.type == "COPY_TRANSFORMS" and not constraint.mute and constraint.influence == 1.0
                    and constraint.target == obj and constraint.subtarget in bones
                    and constraint.subtarget != pose_bone.name and constraint.mix_mode == "REPLACE"
                    and constraint.target_space == constraint.owner_space
                    and f"{constraint.path_from_id()}.influence" not in driven):
                follows[pose_bone.name] = constraint.subtarget
    return follows
