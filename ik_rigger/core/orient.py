"""Point a chain's bone tails at their next joint, on request (the Build option ``fix_orientation``).

Blender's FBX and glTF importers keep the file's joint axes: a bone's tail points
wherever the file's joint axis did, not at the next joint, so the end Blender's IK
moves (the last bone's tail) is not the ankle or wrist. On request, and only then,
each chain bone's tail goes onto the next joint (the last bone's onto the
extremity's head) and its roll turns its Z axis toward the side the chain bends, so
X is the joint's hinge, as in Blender's own rigs. Heads stay, so at rest the
skinned mesh does not move; poses and keys of those bones are relative to their
rest, so they turn differently afterwards (the plan says which bones changed).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from mathutils import Vector

from . import geometry
from .joints import BENT_DEGREES
from .model import BoneInfo, Skeleton

# A tail this close to its joint (as a part of the bone's reach), with a Z axis within
# this angle of the wanted one, is already right and left alone.
_ON_JOINT = 1e-5
_ROLL_RADIANS = 1e-4
_EPSILON = 1e-9
# A chain bone (but the last) pointing this close to its next joint carries IK as it is, a gap to the
# joint or a bone reaching past it included, as a hand-made rig's do (a metarig's shoulder points 6
# degrees off its upper arm, across a gap); an importer's point anywhere.
_IN_LINE_RADIANS = math.radians(10.0)


def orientation_edits(skeleton: Skeleton, chain: Sequence[str], joints: Sequence[Vector],
                      bend: Vector | None, hinged: bool = False) -> dict[str, tuple[Vector, Vector]]:
    """The new tail and Z axis of each chain bone whose tail or roll needs fixing (heads stay).

    ``joints`` are the chain's heads followed by its end (the extremity's head, or
    the last bone's own tail); ``bend`` is the side the chain bends to, or None to
    keep each bone's roll, turned the shortest way with it. ``hinged``: each bone after the first
    whose joint is bent at rest is rolled so X lies along that joint's own hinge, as Hinge Joints
    lock it there (a leg whose knee and ankle bend in different planes, as Quaternius' T-rex's do).
    """
    edits = {}
    kept = held(skeleton, chain, joints)
    for index, name in enumerate(chain):
        bone = skeleton[name]
        head, target = joints[index], joints[index + 1]
        reach = target - head
        if reach.length < _EPSILON or name in kept:
            continue
        z_axis = geometry.perpendicular(bend, reach) if bend is not None else Vector((0.0, 0.0, 0.0))
        if bend is None or z_axis.length < 1e-3 * bend.length:
            # No bend to roll toward, or it lies along this bone: keep the bone's own roll.
            z_axis = bone.direction.rotation_difference(reach).to_matrix() @ bone.z_axis
        z_axis = geometry.perpendicular(z_axis, reach).normalized()
        if hinged:
            z_axis = _on_hinge(joints, index, z_axis)
        on_joint = _on_joint(bone.tail, head, target)
        if on_joint and bone.z_axis.angle(z_axis, 0.0) <= _ROLL_RADIANS:
            continue
        edits[name] = (target.copy(), z_axis)
    return edits


def held(skeleton: Skeleton, chain: Sequence[str], joints: Sequence[Vector]) -> list[str]:
    """The chain bones left as they are although their tail is off its joint: bones connected to
    them start at that tail (the spine above the hips at the root of a leg), and would move with it."""
    return [name for index, name in enumerate(chain)
            if not _on_joint(skeleton[name].tail, joints[index], joints[index + 1])
            and any(child.connected for child in skeleton.children(name))]


def _on_joint(tail: Vector, head: Vector, joint: Vector) -> bool:
    return (tail - joint).length <= _ON_JOINT * (joint - head).length


def applied(skeleton: Skeleton, edits: Mapping[str, tuple[Vector, Vector]]) -> Skeleton:
    """The skeleton as it will be once ``edits`` are made (Blender's X axis is Y cross Z)."""
    bones = dict(skeleton.bones)
    for name, (tail, z_axis) in edits.items():
        y_axis = (tail - bones[name].head).normalized()
        bones[name] = replace(bones[name], tail=tail, x_axis=geometry.cross(y_axis, z_axis).normalized(),
                              z_axis=z_axis)
    return skeleton.moved(bones)


def runs_joint_to_joint(skeleton: Skeleton, chain: Sequence[str], joints: Sequence[Vector]) -> bool:
    """Whether Blender's IK can run on the chain's bones themselves: each points at its next joint (a
    gap before it, or a bone reaching past it, IK carries as it is) and the last one's tail, which IK
    moves to the handle, lies on the chain's end."""
    bones = skeleton.bones
    if not _on_joint(bones[chain[-1]].tail, joints[-2], joints[-1]):
        return False
    for index in range(len(chain) - 1):  # a loop, not all() over a generator: asked for every limb
        if not _on_line(bones[chain[index]].tail, joints[index], joints[index + 1]):
            return False
    return True


def _on_line(tail: Vector, head: Vector, joint: Vector) -> bool:
    reach, direction = joint - head, tail - head
    return direction.length > _EPSILON and direction.angle(reach, math.pi) <= _IN_LINE_RADIANS


def joint_bones(skeleton: Skeleton, chain: Sequence[str], joints: Sequence[Vector],
                bend: Vector | None, hinged: bool = False) -> dict[str, BoneInfo]:
    """Each chain bone as a bone running from its joint to the next, rolled so X is the hinge (Z toward
    ``bend``; with none, the bone's own roll turned the shortest way): the geometry of a hidden chain
    that IK solves in their place. Names, parents and connections are the chain bones'. ``hinged``: each
    bone after the first whose joint is bent at rest is rolled so X lies along that joint's own hinge (a
    chain whose joints do not bend in one plane, or not toward ``bend``), as Hinge Joints lock it there."""
    bones = {}
    for index, name in enumerate(chain):
        bone = skeleton[name]
        head, tail = joints[index].copy(), joints[index + 1].copy()
        reach = tail - head
        z_axis = geometry.perpendicular(bend, reach) if bend is not None else Vector((0.0, 0.0, 0.0))
        if bend is None or z_axis.length < 1e-3 * bend.length:
            z_axis = bone.direction.rotation_difference(reach).to_matrix() @ bone.z_axis
        z_axis = geometry.perpendicular(z_axis, reach).normalized()
        if hinged:
            z_axis = _on_hinge(joints, index, z_axis)
        x_axis = geometry.cross(reach.normalized(), z_axis).normalized()
        bones[name] = replace(bone, head=head, tail=tail, x_axis=x_axis, z_axis=z_axis)
    return bones


def _on_hinge(joints: Sequence[Vector], index: int, z_axis: Vector) -> Vector:
    """The Z axis of the chain bone from ``joints[index]`` rolled so its X lies along its joint's own hinge,
    on the side of ``z_axis``; ``z_axis`` itself for the first bone or a joint straight at rest."""
    if not index:
        return z_axis
    above, reach = joints[index] - joints[index - 1], joints[index + 1] - joints[index]
    hinge = geometry.cross(above, reach)
    if hinge.length <= math.sin(math.radians(BENT_DEGREES)) * above.length * reach.length:
        return z_axis
    turned = geometry.cross(hinge.normalized(), reach.normalized()).normalized()
    return turned if turned.dot(z_axis) >= 0.0 else -turned
