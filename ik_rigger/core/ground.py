"""Feet on the ground: the maths of planting a foot on a surface (no bpy).

A foot is planted by turning it so its sole lies flat on the surface's slope, then
sliding it along the character's up until the lowest point of its sole touches the
surface; when a leg cannot reach its foot's new place, the hips go down along up just
enough. Points and directions here are in whatever one space the caller uses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mathutils import Matrix, Quaternion, Vector

# How far a leg may reach, as a fraction of its chain's length: a knee at 99.5% of the
# reach is still bent by about 11 degrees, so it never locks straight and the IK solver
# keeps the knee turning toward its pole instead of flipping.
REACH = 0.995
# A foot is "down" on a frame when its ankle is within this fraction of the leg's length
# of its lowest over the range, and moves less than this fraction of the leg's length per
# frame: a walk's planted foot barely moves, a swinging one a tenth of the leg or more.
DOWN_HEIGHT = 0.03
DOWN_SPEED = 0.02
# Below this length a mean normal says nothing about which way is up (a closed mesh).
_TINY = 1e-6
_WORLD_UP = Vector((0.0, 0.0, 1.0))


def up_axis(mean_normal: Vector, toward_character: Vector) -> Vector:
    """The character's up: world +Z, unless the ground mostly faces along X or Y.

    ``mean_normal`` is the ground's area-weighted mean face normal (near zero for a
    closed mesh); ``toward_character`` points from the ground to the character and
    picks the sign for a ground that faces sideways (a Y-up scene).
    """
    if mean_normal.length < _TINY:
        return _WORLD_UP.copy()
    axis = max(range(3), key=lambda index: abs(mean_normal[index]))
    if axis == 2:
        return _WORLD_UP.copy()
    up = Vector((0.0, 0.0, 0.0))
    side = toward_character[axis] if abs(toward_character[axis]) > _TINY else mean_normal[axis]
    up[axis] = 1.0 if side > 0.0 else -1.0
    return up


def sole_normal(foot_rest: Matrix, up: Vector) -> Vector:
    """The foot's sole normal in the foot bone's own axes: up as the rest pose stands.

    ``foot_rest`` is the foot's rest matrix and ``up`` the character's up, both in the
    same space: at rest the character stands on level ground.
    """
    return (foot_rest.to_3x3().normalized().inverted() @ up).normalized()


def flat_rotation(rotation: Quaternion, local_normal: Vector, surface_normal: Vector) -> Quaternion:
    """``rotation`` turned the least so the sole normal ``local_normal`` lies along ``surface_normal``.

    The least turn keeps the foot's heading, so a foot pointing downhill stays pointing downhill.
    """
    now = rotation @ local_normal
    return now.rotation_difference(surface_normal) @ rotation


def hips_drop(root: Vector, end: Vector, reach: float, up: Vector) -> float | None:
    """How far the chain's root must go down along ``up`` for ``end`` to be within ``reach``.

    0 when it already is (the hips never go up); None when no drop can bring it within
    reach (the end is farther than ``reach`` sideways from the root).
    """
    offset = end - root
    if offset.length <= reach:
        return 0.0
    unit = up.normalized()
    along = offset.dot(unit)
    # |offset + d * up| = reach: d^2 + 2 d along + |offset|^2 - reach^2 = 0; the smaller root.
    discriminant = along * along - (offset.length_squared - reach * reach)
    if discriminant < 0.0:
        return None
    drop = -along - math.sqrt(discriminant)
    return drop if drop >= 0.0 else None


def contact_runs(ankles: Sequence[Vector], up: Vector, length: float) -> list[tuple[int, int]]:
    """Runs of frames (first, last index, inclusive) during which a foot is down.

    ``ankles`` is where the foot's ankle (its bone's head) is on each frame: a foot
    rolling onto its toes lifts its ankle even while its toes dig into the floor, so the
    ankle says when the foot is flat on the floor better than the sole's lowest point.
    ``length`` is the leg's length (the scale of the tolerances).
    """
    if not ankles:
        return []
    unit = up.normalized()
    heights = [ankle.dot(unit) for ankle in ankles]
    floor = min(heights)
    down = []

    def sideways(a: Vector, b: Vector) -> float:
        moved = b - a
        return (moved - unit * moved.dot(unit)).length

    for index, height in enumerate(heights):
        # The slower of the steps in and out: a foot landing still moves on the frame before.
        steps = [sideways(ankles[index - 1], ankles[index])] if index > 0 else []
        if index + 1 < len(ankles):
            steps.append(sideways(ankles[index], ankles[index + 1]))
        speed = min(steps, default=0.0)
        down.append(height <= floor + DOWN_HEIGHT * length and speed <= DOWN_SPEED * length)
    runs = []
    start: int | None = None
    for index, is_down in enumerate(down):
        if is_down and start is None:
            start = index
        elif not is_down and start is not None:
            runs.append((start, index - 1))
            start = None
    if start is not None:
        runs.append((start, len(down) - 1))
    return runs


Correction = tuple[Quaternion, Vector]  # a turn about the foot's head, then a shift


def blended_corrections(count: int, known: dict[int, Correction]) -> list[Correction]:
    """A correction for each of ``count`` frames: the known ones, blended between them elsewhere.

    Frames between two known ones take a mix of both (so a lifted foot eases from one
    planted place to the next), frames before the first or after the last the nearest.
    """
    if not known:
        return [(Quaternion(), Vector((0.0, 0.0, 0.0))) for _ in range(count)]
    indexes = sorted(known)
    result = []
    for index in range(count):
        if index in known:
            result.append(known[index])
            continue
        before = max((i for i in indexes if i < index), default=None)
        after = min((i for i in indexes if i > index), default=None)
        if before is None or after is None:
            nearest = known[after if before is None else before]  # type: ignore[index]
            result.append((nearest[0].copy(), nearest[1].copy()))
            continue
        factor = (index - before) / (after - before)
        turn = known[before][0].slerp(known[after][0], factor)
        shift = known[before][1].lerp(known[after][1], factor)
        result.append((turn, shift))
    return result


def centre(points: Sequence[Vector]) -> Vector:
    """The mean of ``points``."""
    total = Vector((0.0, 0.0, 0.0))
    for point in points:
        total += point
    return total / len(points)


def spread(points: Sequence[Vector], centre: Vector, up: Vector) -> float:
    """How far ``points`` (a sole) reach from their ``centre``, across the ground (ignoring height along ``up``)."""
    return max(((point - centre) - up * (point - centre).dot(up)).length for point in points)


def mean_scale(world: Matrix) -> float:
    """An object's scale as one number (its mean axis scale), ``world`` being its matrix; positive for a
    mirrored object too (whose matrix gives every axis's scale negative)."""
    scale = world.to_scale()
    return (abs(scale.x) + abs(scale.y) + abs(scale.z)) / 3.0


def world_length(world: Matrix, up: Vector, length: float) -> float:
    """How long ``length`` armature units along the world's ``up`` are in the world, ``world`` being
    the armature object's matrix."""
    up_armature = (world.inverted().to_3x3() @ up).normalized()
    return (world.to_3x3() @ (up_armature * length)).length
