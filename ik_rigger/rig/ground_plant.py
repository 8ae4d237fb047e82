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


def plant(foot: Foot, sole: Sequence[Vector], pose: Matrix, world: Matrix, surface: Surface) -> Matrix:
    """The world matrix that puts the foot, at armature-space ``pose`` in an armature at ``world``, flat on
    the ground below it.

    ``sole`` is the sole in the foot's frame (``foot_sole``). The foot is turned in the armature's space,
    where it is a bone turned and moved, never sheared: under an object scaled more along one axis than
    another, a turn in world space would be one no bone can take.
    """
    location, rotation, scale = pose.decompose()
    # A foot keyed to a mirroring scale decomposes with every scale negative: its sole's normal then points
    # the other way from its rotation.
    normal_in_foot = foot.normal if pose.to_3x3().determinant() > 0.0 else -foot.normal
    # A world normal goes into the armature's space by the transpose (a normal goes out by the inverse
    # transpose), which keeps its side of the sole under an object's mirroring scale too.
    normal_in = world.to_3x3().transposed()
    turn = rotation
    for _ in range(_FLATTEN_PASSES):
        current = world @ Matrix.LocRotScale(location, turn, scale)
        points = _sole_world(sole, current)
        centre = plan.centre(points)
        hit = surface.below(centre)
        if hit is None:
            raise _no_ground(foot)
        if foot.bone is None:
            break
        forward = current.to_3x3() @ Vector((0.0, 1.0, 0.0))
        normal = surface.slope(centre, forward, plan.spread(points, centre, surface.up)) or hit[1]
        flat = plan.flat_rotation(rotation, normal_in_foot, (normal_in @ normal).normalized())
        settled = abs(flat.dot(turn)) > 1.0 - 1e-12
        turn = flat
        if settled:
            break
    flat_pose = world @ Matrix.LocRotScale(location, turn, scale)
    sole_normal = (world.to_3x3().inverted().transposed() @ (turn @ normal_in_foot)).normalized()
    return touch(foot, sole, flat_pose, surface, sole_normal, lift_only=False)


def foot_targets(obj: bpy.types.Object, foot: Foot, timeline: Sequence[Frame], surface: Surface) -> list[Matrix]:
    """The foot's world target on each frame: planted and held still while it is down,
    carried over the ground (never through it) while it is up."""
    shown = [frame.world @ foot_pose(obj, foot, frame.pose) for frame in timeline]
    up = surface.up
    length = foot.length * plan.mean_scale(timeline[0].world)
    known: dict[int, plan.Correction] = {}
    held: dict[int, Matrix] = {}  # each frame a foot is down on: where it is planted, in the world
    for first, last in plan.contact_runs([matrix.translation for matrix in shown], up, length):
        anchor = (first + last) // 2
        planted = plant(foot, foot_sole(obj, foot, timeline[anchor].pose), foot_pose(obj, foot, timeline[anchor].pose),
                        timeline[anchor].world, surface)
        for number in range(first, last + 1):
            turn = planted.to_quaternion() @ shown[number].to_quaternion().inverted()
            known[number] = (turn, planted.translation - shown[number].translation)
            held[number] = planted
    corrections = plan.blended_corrections(len(timeline), known)
    targets = []
    for number, frame in enumerate(timeline):
        if number in held:
            targets.append(held[number])
            continue
        turn, shift = corrections[number]
        # The world correction applied in the armature's space, where the foot stays a bone turned and moved:
        # the same turn under a uniform scale, the nearest turn under an uneven one.
        axes = frame.world.to_3x3()
        to_armature = axes.inverted()
        location, rotation, scale = foot_pose(obj, foot, frame.pose).decompose()
        turned = (to_armature @ turn.to_matrix() @ axes).to_quaternion()
        moved = frame.world @ Matrix.LocRotScale(location + to_armature @ shift, turned @ rotation, scale)
        targets.append(touch(foot, foot_sole(obj, foot, frame.pose), moved, surface, up, lift_only=True))
    return targets
