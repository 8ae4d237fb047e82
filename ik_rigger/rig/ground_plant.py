"""Planting one foot: turned flat on the ground's slope below it and moved along up until its
sole touches, on one frame or over a timeline (see ``rig.ground``)."""

from __future__ import annotations

from collections.abc import Sequence

import bpy
from mathutils import Matrix, Vector

from ..core import ground as plan
from ..core.errors import RigError
from .ground_feet import Foot, Frame, foot_pose, foot_sole
from .ground_surface import Surface

# Only this many of a sole's lowest points are tested against the ground: the others
# are far above any surface a foot can stand on.
_SOLE_SAMPLES = 48
# Flattening a foot moves its sole's centre sideways a little; up to this many passes
# find the slope under where the centre ends up (on a faceted terrain, one facet).
_FLATTEN_PASSES = 8


def _sole_world(sole: Sequence[Vector], matrix: Matrix) -> list[Vector]:
    return [matrix @ point for point in sole]


def _no_ground(foot: Foot) -> RigError:
    return RigError("has no ground below its foot", bone=foot.limb,
                    hint="Put the ground under the character, or pick the mesh it stands on.")


def touch(foot: Foot, sole: Sequence[Vector], matrix: Matrix, surface: Surface, normal: Vector,
          lift_only: bool) -> Matrix:
    """``matrix`` moved along up until the sole's lowest point is on the surface (only up when ``lift_only``)."""
    up = surface.up
    points = sorted(_sole_world(sole, matrix), key=lambda point: point.dot(normal))[:_SOLE_SAMPLES]
    heights = []
    for point in points:
        hit = surface.below(point)
        if hit is not None:
            heights.append((point - hit[0]).dot(up))
    if not heights:
        raise _no_ground(foot)
    lift = -min(heights)
    if lift_only and lift <= 0.0:
        return matrix
    moved = matrix.copy()
    moved.translation = matrix.translation + up * lift
    return moved


def plant(foot: Foot, sole: Sequence[Vector], matrix: Matrix, surface: Surface) -> Matrix:
    """The world matrix that puts the foot now at world ``matrix`` flat on the ground below it.

    ``sole`` is the sole in the foot's frame (``foot_sole``).
    """
    location, rotation, scale = matrix.decompose()
    # A mirrored character (one axis of its object scaled negative) decomposes with every scale negative:
    # its sole's normal then points the other way from its rotation.
    normal_in_foot = foot.normal if matrix.to_3x3().determinant() > 0.0 else -foot.normal
    turn = rotation
    for _ in range(_FLATTEN_PASSES):
        current = Matrix.LocRotScale(location, turn, scale)
        points = _sole_world(sole, current)
        centre = plan.centre(points)
        hit = surface.below(centre)
        if hit is None:
            raise _no_ground(foot)
        if foot.bone is None:
            break
        forward = current.to_3x3() @ Vector((0.0, 1.0, 0.0))
        normal = surface.slope(centre, forward, plan.spread(points, centre, surface.up)) or hit[1]
        flat = plan.flat_rotation(rotation, normal_in_foot, normal)
        settled = abs(flat.dot(turn)) > 1.0 - 1e-12
        turn = flat
        if settled:
            break
    flat_pose = Matrix.LocRotScale(location, turn, scale)
    return touch(foot, sole, flat_pose, surface, turn @ normal_in_foot, lift_only=False)


def foot_targets(obj: bpy.types.Object, foot: Foot, timeline: Sequence[Frame], surface: Surface) -> list[Matrix]:
    """The foot's world target on each frame: planted and held still while it is down,
    carried over the ground (never through it) while it is up."""
    shown = [frame.world @ foot_pose(obj, foot, frame.pose) for frame in timeline]
    up = surface.up
    length = foot.length * plan.mean_scale(timeline[0].world)
    known: dict[int, plan.Correction] = {}
    for first, last in plan.contact_runs([matrix.translation for matrix in shown], up, length):
        anchor = (first + last) // 2
        planted = plant(foot, foot_sole(obj, foot, timeline[anchor].pose), shown[anchor], surface)
        for number in range(first, last + 1):
            turn = planted.to_quaternion() @ shown[number].to_quaternion().inverted()
            known[number] = (turn, planted.translation - shown[number].translation)
    corrections = plan.blended_corrections(len(timeline), known)
    targets = []
    for number, matrix in enumerate(shown):
        turn, shift = corrections[number]
        location, rotation, scale = matrix.decompose()
        moved = Matrix.LocRotScale(location + shift, turn @ rotation, scale)
        if number not in known:
            moved = touch(foot, foot_sole(obj, foot, timeline[number].pose), moved, surface, up, lift_only=True)
        targets.append(moved)
    return targets
