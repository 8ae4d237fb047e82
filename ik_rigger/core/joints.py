"""Hinge joints: the middle joints of a limb bend only about their hinge, within a natural range.

A knee or an elbow turns about one axis and never bends backwards. Blender's IK
solver takes that as per-bone IK settings: lock the two other local axes, and limit
the hinge axis to a range measured from the rest pose. This module works out which
local axis is the hinge and the range, from the rest skeleton.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

from mathutils import Vector

from .errors import RigError
from .geometry import cross

# How far a knee or elbow bends from straight at most.
NATURAL_BEND_DEGREES = 150.0
# A bone's X or Z axis must lie this close to the hinge for Blender's per-axis IK settings to hold it.
AXIS_TOLERANCE_DEGREES = 15.0
# A joint bent less than this at rest has no hinge of its own: the chain's bend gives it one.
BENT_DEGREES = 0.5


# Hinge.axis of a bone IK keeps in line with the bone above it (the second half of a split
# segment): it twists about its own Y axis, and its two bending axes are as stiff as Blender's
# IK allows (IN_LINE_STIFFNESS), not locked: a lock would drop the bend its own pose or keys give
# it, so the motion it plays and exact IK/FK snapping would be lost. Stiff, IK bends it by less
# than a degree, even toward targets out of reach.
IN_LINE = "y"
IN_LINE_STIFFNESS = 0.99


@dataclass(frozen=True)
class Hinge:
    """One middle joint's IK settings: bend about ``axis`` ('x' or 'z') between ``minimum`` and ``maximum``
    (radians, from the rest pose); the two other axes locked."""

    bone: str
    axis: str
    minimum: float
    maximum: float

    @classmethod
    def in_line(cls, bone: str) -> Hinge:
        """A bone IK keeps in line with the bone above it (see ``IN_LINE``)."""
        return cls(bone, IN_LINE, 0.0, 0.0)

    @property
    def locked(self) -> tuple[str, ...]:
        return tuple(axis for axis in "xyz" if axis != self.axis)


@dataclass(frozen=True)
class JointRest:
    """A chain bone at rest, as the hinge needs it: its direction and its X and Z axes."""

    name: str
    direction: Vector
    x_axis: Vector
    z_axis: Vector


def hinges(chain: list[JointRest], bend_direction: Vector, twists: Collection[str] = (),
           turnable: bool = False) -> list[Hinge]:
    """The hinge of every chain bone after the first (the first keeps its ball joint), but ``twists``.

    ``bend_direction`` is the side the chain bends to (limb.plan's): with the chain's
    axis it gives the hinge where a joint is straight at rest. ``twists`` are second
    halves of split segments: IK keeps them in line, and they hold no joint. ``turnable``: Fix Bone
    Orientation, off, would roll a bone refused here onto its hinge, so the refusal says so.
    """
    fallback = _straight_hinge(chain, bend_direction)
    found = []
    for parent, bone in zip(chain, chain[1:]):
        if bone.name in twists:
            continue
        up, down = parent.direction.normalized(), bone.direction.normalized()
        normal = _bent_normal(parent, bone)
        dots = _fit(bone, normal if normal is not None else fallback)
        name = max(dots, key=lambda key: abs(dots[key]))
        if abs(dots[name]) < math.cos(math.radians(AXIS_TOLERANCE_DEGREES)):
            raise RigError(
                f"neither its X nor its Z axis lies along the joint's hinge (they are "
                f"{math.degrees(math.acos(min(1.0, abs(dots['x'])))):.0f} and "
                f"{math.degrees(math.acos(min(1.0, abs(dots['z'])))):.0f} degrees off), so Blender's IK cannot "
                "hold it to one axis", bone=bone.name,
                hint=("Turn on Fix Bone Orientation (it rolls the chain's bones onto their hinges), or roll"
                      if turnable else "Roll") + " the bone so its X or Z axis lies along the knee or elbow's "
                "hinge, or turn Hinge Joints off.")
        # Turning about X takes the bone's Y toward its Z; about Z, toward its -X.
        moves_to = bone.z_axis if name == "x" else -bone.x_axis
        # Bending more folds the bone back toward the one above; a joint straight at rest has no fold yet: its
        # bone leaves the line away from the side the chain bends to (the knee goes that way).
        folds_to = -up if normal is not None else -bend_direction
        bends_more = folds_to.dot(moves_to.normalized()) > 0.0
        rest_bend = up.angle(down, 0.0)
        most = math.radians(NATURAL_BEND_DEGREES) - rest_bend
        minimum, maximum = (-rest_bend, most) if bends_more else (-most, rest_bend)
        found.append(Hinge(bone.name, name, max(minimum, -math.pi), min(maximum, math.pi)))
    return found


def _straight_hinge(chain: list[JointRest], bend_direction: Vector) -> Vector:
    """The hinge of a joint straight at rest: the chain's bend (its pre-bend's) turns it about this axis."""
    return cross(sum((bone.direction for bone in chain), Vector()).normalized(), bend_direction).normalized()


def _bent_normal(parent: JointRest, bone: JointRest) -> Vector | None:
    """The hinge of the joint between ``parent`` and ``bone`` where it is bent at rest, else None."""
    normal = cross(parent.direction.normalized(), bone.direction.normalized())
    return normal.normalized() if normal.length >= math.sin(math.radians(BENT_DEGREES)) else None


def _fit(bone: JointRest, normal: Vector) -> dict[str, float]:
    """How closely the bone's X and Z axes lie along the hinge ``normal`` (cosines)."""
    return {"x": bone.x_axis.normalized().dot(normal), "z": bone.z_axis.normalized().dot(normal)}


def off_hinge(chain: list[JointRest], bend_direction: Vector | None = None, twists: Collection[str] = ()) -> str | None:
    """The first chain bone whose joint is bent at rest and neither of whose X and Z axes lies along that
    joint's hinge, so Hinge Joints could not hold it on the bone itself (a hidden chain rolled on its
    hinges can); None when there is none. With ``bend_direction`` (the side the chain bends to), a joint
    straight at rest is asked too, its hinge the one ``hinges`` gives it: that bend's axis, whatever the
    bone's roll (a straight chain, pre-bent toward it); ``twists`` hold no joint."""
    fallback = _straight_hinge(chain, bend_direction) if bend_direction is not None else None
    for parent, bone in zip(chain, chain[1:]):
        normal = _bent_normal(parent, bone)
        if normal is None and bone.name not in twists:
            normal = fallback
        if normal is not None and max(abs(value) for value in _fit(bone, normal).values()) < math.cos(
                math.radians(AXIS_TOLERANCE_DEGREES)):
            return bone.name
    return None
