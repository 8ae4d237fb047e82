"""Read an armature's rest skeleton into core's plain description."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping

import bpy
from mathutils import Vector

from ..core.detect_names import rigged_deform
from ..core.errors import RigError, a_kind
from ..core.geometry import POSE_CHANNELS
from ..core.model import REST_COLUMNS, BoneInfo, Skeleton
from .animation import bone_of_path
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
                        front=(to_armature @ Vector((0.0, -1.0, 0.0))).normalized(),
                        deform_driven=deform_driven(obj, names))
    skeleton.measures[REST_COLUMNS] = columns
    return skeleton.indexed(children)


# How IK Rigger names each constraint it adds ("IK Rigger IK", "IK Rigger Follow"): an export rigged holds them on
# its DEF- bones, and is no live generated rig for it.
_OWN_CONSTRAINTS = "IK Rigger "


def deform_driven(obj: bpy.types.Object, names: list[str]) -> bool:
    """Whether the generated rig's DEF- bones among ``names`` (``obj``'s bones) follow its other bones, as
    ``Skeleton.deform_driven`` says: a constraint on one, or a driver on its transforms. A live Rigify rig's
    follow its tweak bones by Copy Transforms, though some (its pelvis, shoulders, palms) have none; an export
    keeps the bones and neither; IK Rigger's own constraints on them, once rigged, say nothing. Asked of the DEF-
    bones with their rig around them alone, up to the first with a constraint: a read or two for a live rig, one
    per DEF- bone for an export, none for any other armature."""
    deform = rigged_deform(names)
    if not deform:
        return True  # no generated rig's DEF- bone to tell apart: the skeleton's default
    pose_bones = obj.pose.bones
    if any(not constraint.name.startswith(_OWN_CONSTRAINTS) for name in deform
           for constraint in pose_bones[name].constraints):
        return True
    data = obj.animation_data
    if data is None or not data.drivers:
        return False
    own = set(deform)
    return any(bone_of_path(path := curve.data_path) in own and path.rpartition(".")[2] in POSE_CHANNELS
               for curve in data.drivers)


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
    return FollowedBones(obj).read_all()


class FollowedBones(Mapping[str, str]):
    """``followed_bones``, each bone's read when first asked: detection asks of the bones of the limbs it found
    alone (all of them only once one follows another), where reading every bone's constraints, an RNA read
    each, took a tenth of a millisecond of Auto-Rig on Rigify's metarig."""

    def __init__(self, obj: bpy.types.Object) -> None:
        self.obj = obj
        self.pose_bones = obj.pose.bones
        data = obj.animation_data
        self.driven = {curve.data_path for curve in data.drivers} if data is not None else set()
        self.read: dict[str, str | None] = {}
        self.all: dict[str, str] | None = None

    def _followed(self, pose_bone: bpy.types.PoseBone) -> str | None:
        obj, bones = self.obj, self.obj.data.bones
        followed = None
        for constraint in pose_bone.constraints:
            if (constraint.type == "COPY_TRANSFORMS" and not constraint.mute and constraint.influence == 1.0
                    and constraint.target == obj and constraint.subtarget in bones
                    and constraint.subtarget != pose_bone.name and constraint.mix_mode == "REPLACE"
                    and constraint.target_space == constraint.owner_space
                    and f"{constraint.path_from_id()}.influence" not in self.driven):
                followed = constraint.subtarget
        return followed

    def read_all(self) -> dict[str, str]:
        if self.all is None:
            self.all = {}
            for pose_bone in self.pose_bones:
                if pose_bone.constraints:  # as most bones have not
                    followed = self._followed(pose_bone)
                    if followed is not None:
                        self.all[pose_bone.name] = followed
        return self.all

    def get(self, bone: str, default: str | None = None) -> str | None:  # type: ignore[override]
        if self.all is not None:
            return self.all.get(bone, default)
        if bone not in self.read:
            pose_bone = self.pose_bones.get(bone) if isinstance(bone, str) else None  # as a dict, None is no key
            self.read[bone] = self._followed(pose_bone) if pose_bone is not None else None
        followed = self.read[bone]
        return default if followed is None else followed

    def __getitem__(self, bone: str) -> str:
        followed = self.get(bone)
        if followed is None:
            raise KeyError(bone)
        return followed

    def __contains__(self, bone: object) -> bool:
        return isinstance(bone, str) and self.get(bone) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.read_all())

    def __len__(self) -> int:
        return len(self.read_all())
