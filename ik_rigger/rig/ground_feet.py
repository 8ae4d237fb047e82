"""The legs to plant, read from the armature before anything changes: each leg's foot and
sole, and the hips above them (see ``rig.ground``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bpy
from mathutils import Matrix, Vector

from ..core import ground as plan
from ..core import naming
from ..core.errors import RigError
from ..parts.handle import ROLE_HANDLE
from ..parts.pole import ROLE_POLE
from ..parts.pole_line import ROLE_POLE_LINE
from . import records, solver
from .animation import keyed_values

# A vertex belongs to the sole when at least this much of its weight is the foot's and toes'.
_SOLE_WEIGHT = 0.5
# A chain this close to hanging straight down at rest (the cosine of its angle to
# down) is a leg even when its names do not say so.
_HANGING = 0.8
# A leaf of the sole bones (a toe tip with no bone below it) longer than this share of its leg ends
# nowhere a toe does: an importer's length (glTF's default bone shapes make a toe tip longer than the leg).
_LEAF_SHARE = 0.5


@dataclass
class Foot:
    """One leg to plant, read from the armature before anything changes."""

    limb: str
    parts: records.Parts
    bone: str | None  # the foot bone laid on the ground; None: the chain's end is the sole
    # The sole: points each in the axes of its bone (the foot or a toe), so a toe that
    # bends over an animation carries its part of the sole along.
    pieces: list[tuple[str, Vector]]
    normal: Vector  # the sole's normal in the foot bone's axes
    length: float  # the chain's length joint to joint (IK's own chain's, where it is hidden), armature units
    note: str = ""  # what the sole was read from, where bone tails were left out of it


@dataclass
class Frame:
    """One frame's evaluated pose and the armature's world matrix."""

    pose: dict[str, Matrix]
    world: Matrix


def _is_leg(obj: bpy.types.Object, parts: records.Parts, up: Vector) -> bool:
    """A leg by its names, else by a chain hanging along the character's up at rest."""
    names = parts.chain + ([parts.extremity] if parts.extremity else [])
    kind = naming.limb_kind(names)
    if kind is not None:
        return kind == "LEG"
    bones = obj.data.bones
    hang = bones[parts.chain[-1]].tail_local - bones[parts.chain[0]].head_local
    return hang.length > 0.0 and hang.dot(-up) >= _HANGING * hang.length


def _sole_bones(obj: bpy.types.Object, foot: str) -> list[str]:
    """The foot and the user's bones below it (the toes), not the bones IK Rigger made."""
    found = []
    pending = [obj.data.bones[foot]]
    while pending:
        bone = pending.pop()
        if records.marker(bone) is None:
            found.append(bone.name)
            pending.extend(bone.children)
    return found


def _skinned_pieces(obj: bpy.types.Object, bones: list[str], pose: dict[str, Matrix],
                    depsgraph: bpy.types.Depsgraph) -> list[tuple[str, Vector]]:
    """The vertices of the meshes this armature deforms that are mostly the sole bones',
    each in the axes of the sole bone weighing most on it."""
    pieces = []
    wanted = set(bones)
    to_bone = {name: (obj.matrix_world @ pose[name]).inverted() for name in bones}
    for mesh_object in bpy.data.objects:
        if mesh_object.type != "MESH" or not any(
                modifier.type == "ARMATURE" and modifier.object == obj and modifier.show_viewport
                for modifier in mesh_object.modifiers):
            continue
        groups = {group.index: group.name for group in mesh_object.vertex_groups if group.name in wanted}
        if not groups:
            continue
        evaluated = mesh_object.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        try:
            for vertex in mesh.vertices:
                weights = [(item.weight, groups[item.group]) for item in vertex.groups if item.group in groups]
                if sum(weight for weight, _ in weights) >= _SOLE_WEIGHT:
                    bone = max(weights)[1]
                    pieces.append((bone, to_bone[bone] @ evaluated.matrix_world @ vertex.co))
        finally:
            evaluated.to_mesh_clear()
    return pieces


def _bone_pieces(obj: bpy.types.Object, limb: str, sole: list[str],
                 length: float) -> tuple[list[tuple[str, Vector]], str]:
    """The sole from the sole bones themselves, each point in its bone's axes, and a note naming the tails
    left out. A bone's tail marks the sole only where it is a joint, or a leaf's tail no longer than
    ``_LEAF_SHARE`` of the leg: an importer's tail points along the file's joint axis, as long as it guessed
    (glTF's default bone shapes put a woman's foot's tail 20 m below her), and a bone with bones below it has
    their heads for its joints."""
    bones = obj.data.bones
    pieces = []
    left_out = []
    for name in sole:
        bone = bones[name]
        pieces.append((name, Vector((0.0, 0.0, 0.0))))
        below = [child.head_local for child in bone.children if child.name in sole]
        if below:
            if all((bone.tail_local - head).length > 1e-3 * bone.length for head in below):
                left_out.append(name)
        elif bone.length <= _LEAF_SHARE * length:
            pieces.append((name, Vector((0.0, bone.length, 0.0))))
        else:
            left_out.append(name)
    note = ""
    if left_out:
        tails = ", ".join(f"'{name}'" for name in left_out)
        note = (f"'{limb}': the tails of {tails} lie off their joints and were left out of the sole, read from "
                "the joints of the foot and toes")
    return pieces, note


def _joint_length(obj: bpy.types.Object, parts: records.Parts) -> float:
    """The chain's length joint to joint: IK's own hidden chain's, where the chain bones point elsewhere."""
    bones = obj.data.bones
    names = [name for name in parts.solver if name in bones] or parts.chain
    return sum(bones[name].length for name in names)


def chain_end(obj: bpy.types.Object, parts: records.Parts, pose: dict[str, Matrix]) -> Vector:
    return pose[parts.chain[-1]] @ solver.end_point(obj, parts)


def foot_pose(obj: bpy.types.Object, foot: Foot, pose: dict[str, Matrix]) -> Matrix:
    """The armature-space pose of the foot's frame: the foot bone's, or the chain end's."""
    if foot.bone is not None:
        return pose[foot.bone]
    return Matrix.Translation(chain_end(obj, foot.parts, pose))


def foot_sole(obj: bpy.types.Object, foot: Foot, pose: dict[str, Matrix]) -> list[Vector]:
    """The sole in the foot's frame (see ``foot_pose``) as ``pose`` bends the toes."""
    if foot.bone is None:
        return [Vector((0.0, 0.0, 0.0))]
    to_foot = pose[foot.bone].inverted()
    return [to_foot @ pose[bone] @ point for bone, point in foot.pieces]


def _not_in_ik(obj: bpy.types.Object, parts: records.Parts, frames: Sequence[int] | None) -> int | None:
    """The first of ``frames`` (None: the current one) on which the limb plays less than fully in IK, as its
    ``ik_fk`` keys play it there; None when it is in IK on all of them."""
    handle = obj.pose.bones[parts.handle or ""]
    played = keyed_values(obj, handle.path_from_id(f'["{records.IK_FK}"]'), frames) if frames is not None else None
    if played is None:
        return None if records.ik_fk(obj, parts) >= 1.0 - 1e-6 else bpy.context.scene.frame_current
    return next((frame for frame, value in zip(frames, played) if value < 1.0 - 1e-6), None)


def read_feet(obj: bpy.types.Object, up: Vector, depsgraph: bpy.types.Depsgraph,
              pose: dict[str, Matrix], frames: Sequence[int] | None = None) -> list[Foot]:
    """The legs to plant with their soles, from the pose now; refuses when there are none.

    ``up`` is the character's up in world space, ``pose`` the evaluated armature-space pose; each leg must
    play in IK on ``frames`` (None: the current frame), the frames planted.
    """
    world = obj.matrix_world
    up_armature = (world.inverted().to_3x3() @ up).normalized()
    # The level ground's normal in the armature's space: a normal goes there by the transpose, not the inverse,
    # which differ under an object scaled unevenly and turned.
    level = (world.to_3x3().transposed() @ up).normalized()
    feet = []
    for limb in obj.ik_rigger.limbs:
        parts = records.resolve(obj, limb)
        if len(parts.chain) < 2 or not _is_leg(obj, parts, up_armature):
            continue
        # A control the IK or the foot follows, deleted by hand, would leave the foot off the ground; the pole
        # and its line only turn the knee.
        parts = records.require(obj, limb, ROLE_HANDLE, ik=True, every=True, spared=(ROLE_POLE, ROLE_POLE_LINE))
        if parts.handle is None:
            raise RigError("has no IK handle to move", bone=limb.name, hint="Rebuild the limb.")
        in_fk = _not_in_ik(obj, parts, frames)
        if in_fk is not None:
            raise RigError(f"is not fully in IK on frame {in_fk}, and planting moves its IK handle", bone=limb.name,
                           hint="Switch the leg to IK (its IK/FK switch at 1) on the frames planted first.")
        length = _joint_length(obj, parts)
        bone = parts.extremity if parts.extremity and parts.clone else None
        if bone is None:
            feet.append(Foot(limb.name, parts, None, [], up_armature, length))
            continue
        sole = _sole_bones(obj, bone)
        pieces = _skinned_pieces(obj, sole, pose, depsgraph)
        note = ""
        if not pieces:
            pieces, note = _bone_pieces(obj, limb.name, sole, length)
        normal = plan.sole_normal(obj.data.bones[bone].matrix_local, level)
        feet.append(Foot(limb.name, parts, bone, pieces, normal, length, note))
    if not feet:
        raise RigError(f"'{obj.name}' has no rigged legs to plant", hint="Rig the legs first (Auto-Rig or Build), "
                       "then plant their feet.")
    return feet


def hips_bone(obj: bpy.types.Object, feet: Sequence[Foot]) -> str | None:
    """The bone above every leg that can move down: their nearest shared parent, or the
    first one above it that is not connected to its own parent."""
    bones = obj.data.bones

    def above(name: str) -> list[str]:
        chain = []
        bone = bones[name].parent
        while bone is not None:
            chain.append(bone.name)
            bone = bone.parent
        return chain

    shared = [name for name in above(feet[0].parts.chain[0])
              if all(name in above(foot.parts.chain[0]) for foot in feet[1:])]
    for name in shared:
        if not bones[name].use_connect:
            return name
    return None

